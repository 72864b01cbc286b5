//! Basic authentication (RFC 7617) against htpasswd files, per URL prefix.
//!
//! Entries may be bcrypt (`$2y$…`, htpasswd -B) or SHA-1 (`{SHA}…`, htpasswd -s). Digests are compared
//! in constant time (subtle), and an unknown user is checked against a dummy hash of the same kind
//! and cost, so the answer time does not tell which user names exist.

use anyhow::{bail, Context, Result};
use base64::Engine;
use sha1::{Digest, Sha1};
use std::collections::HashMap;
use std::sync::Arc;
use subtle::ConstantTimeEq;

enum Hash {
    Bcrypt(String),
    Sha1([u8; 20]),
}

/// One protected URL prefix and its users.
pub struct Rule {
    /// The prefix without a trailing slash ("" protects everything).
    prefix: String,
    users: HashMap<String, Hash>,
    dummy: Hash,
    /// The ready-made `WWW-Authenticate` line of the 401 answer.
    pub challenge: Vec<u8>,
}

impl Rule {
    pub fn load(rule: &crate::config::AuthRule) -> Result<Rule> {
        let path = &rule.htpasswd;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read htpasswd file {}", path.display()))?;
        let mut users = HashMap::new();
        let mut bcrypt_cost = None;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let where_ = || format!("{} line {}", path.display(), n + 1);
            let (user, hash) = line
                .split_once(':')
                .with_context(|| format!("{}: expected user:hash", where_()))?;
            let hash = if let Some(b64) = hash.strip_prefix("{SHA}") {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .ok()
                    .and_then(|b| <[u8; 20]>::try_from(b).ok())
                    .with_context(|| format!("{}: bad {{SHA}} digest", where_()))?;
                Hash::Sha1(bytes)
            } else if hash.starts_with("$2") {
                let cost = hash.get(4..6).and_then(|c| c.parse::<u32>().ok());
                let cost = cost.with_context(|| format!("{}: bad bcrypt hash", where_()))?;
                bcrypt_cost.get_or_insert(cost);
                Hash::Bcrypt(hash.to_string())
            } else {
                bail!(
                    "{}: unsupported hash for user {user:?} (use htpasswd -B for bcrypt or -s for SHA)",
                    where_()
                );
            };
            users.insert(user.to_string(), hash);
        }
        // The dummy matches the file's strongest kind, so unknown users cost what known ones do.
        let dummy = match bcrypt_cost {
            Some(cost) => {
                Hash::Bcrypt(bcrypt::hash("webstand-dummy-password", cost).context("bcrypt")?)
            }
            None => Hash::Sha1(Sha1::digest(b"webstand-dummy-password").into()),
        };
        let realm = rule.realm.replace(['"', '\\'], "");
        Ok(Rule {
            prefix: rule.prefix.trim_end_matches('/').to_string(),
            users,
            dummy,
            challenge: format!("WWW-Authenticate: Basic realm=\"{realm}\", charset=\"UTF-8\"\r\n")
                .into_bytes(),
        })
    }

    /// Whether the rule covers a URL path ("/a/b", decoded), segment-wise: "/private" covers
    /// "/private" and "/private/x" but not "/privateer".
    pub fn covers(&self, url_path: &str) -> bool {
        match url_path.strip_prefix(self.prefix.as_str()) {
            Some(rest) => rest.is_empty() || rest.starts_with('/') || self.prefix.is_empty(),
            None => false,
        }
    }

    /// Checks an Authorization header value; returns the user name when it is right.
    pub fn check(&self, authorization: Option<&[u8]>) -> Option<String> {
        let value = authorization?.trim_ascii();
        if value.len() < 6 || !value[..6].eq_ignore_ascii_case(b"basic ") {
            return None;
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(value[6..].trim_ascii())
            .ok()?;
        let colon = decoded.iter().position(|&b| b == b':')?;
        let (user, password) = (&decoded[..colon], &decoded[colon + 1..]);
        let user = std::str::from_utf8(user).ok()?;
        let (hash, known) = match self.users.get(user) {
            Some(h) => (h, true),
            None => (&self.dummy, false),
        };
        let ok = match hash {
            Hash::Sha1(want) => Sha1::digest(password).as_slice().ct_eq(want).into(),
            Hash::Bcrypt(h) => bcrypt::verify(password, h).unwrap_or(false),
        };
        (ok && known).then(|| user.to_string())
    }
}

/// The longest rule covering a path, if any.
pub fn rule_for(rules: &[Rule], url_path: &str) -> Option<usize> {
    rules
        .iter()
        .enumerate()
        .filter(|(_, r)| r.covers(url_path))
        .max_by_key(|(_, r)| r.prefix.len())
        .map(|(i, _)| i)
}

/// Successful checks remembered per loop, so bcrypt's deliberate slowness is paid once per
/// credential rather than once per request.
#[derive(Default)]
pub struct Verified {
    /// Per rule: Authorization header value → user.
    by_rule: Vec<HashMap<Vec<u8>, Arc<str>>>,
}

impl Verified {
    /// The user for a credential, from memory when it passed before (no allocation then).
    pub fn check(
        &mut self,
        rules: &[Rule],
        rule: usize,
        authorization: Option<&[u8]>,
    ) -> Option<Arc<str>> {
        let value = authorization?;
        if self.by_rule.len() < rules.len() {
            self.by_rule.resize_with(rules.len(), HashMap::new);
        }
        let known = &mut self.by_rule[rule];
        if let Some(user) = known.get(value) {
            return Some(user.clone());
        }
        let user: Arc<str> = rules[rule].check(Some(value))?.into();
        if known.len() >= 1024 {
            known.clear();
        }
        known.insert(value.to_vec(), user.clone());
        Some(user)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AuthRule;

    fn rule(lines: &str) -> Rule {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pw");
        std::fs::write(&f, lines).unwrap();
        Rule::load(&AuthRule {
            prefix: "/private/".into(),
            htpasswd: f,
            realm: "r".into(),
        })
        .unwrap()
    }

    fn basic(user_pass: &str) -> Vec<u8> {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(user_pass)
        )
        .into_bytes()
    }

    #[test]
    fn sha_and_bcrypt_entries_verify() {
        let sha = base64::engine::general_purpose::STANDARD.encode(Sha1::digest(b"s3cret"));
        let bc = bcrypt::hash("pa:ss", 4).unwrap();
        let r = rule(&format!("# users\nann:{{SHA}}{sha}\nbob:{bc}\n"));
        assert_eq!(r.check(Some(&basic("ann:s3cret"))), Some("ann".into()));
        assert_eq!(r.check(Some(&basic("ann:wrong"))), None);
        assert_eq!(r.check(Some(&basic("bob:pa:ss"))), Some("bob".into()));
        assert_eq!(r.check(Some(&basic("bob:pa"))), None);
        assert_eq!(r.check(Some(&basic("nobody:s3cret"))), None);
        assert_eq!(r.check(Some(b"Bearer xyz")), None);
        assert_eq!(r.check(Some(b"Basic !!!")), None);
        assert_eq!(r.check(None), None);
    }

    #[test]
    fn prefixes_cover_whole_segments() {
        let r = rule("a:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=\n");
        assert!(r.covers("/private") && r.covers("/private/x/y"));
        assert!(!r.covers("/privateer") && !r.covers("/"));
    }

    #[test]
    fn unsupported_hashes_are_load_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pw");
        std::fs::write(&f, "u:$apr1$abc$def\n").unwrap();
        let e = Rule::load(&AuthRule {
            prefix: "/".into(),
            htpasswd: f,
            realm: "r".into(),
        })
        .err()
        .unwrap();
        assert!(e.to_string().contains("unsupported hash"), "{e}");
    }
}
