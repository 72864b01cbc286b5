//! The known servers, one file per kind holding everything particular to it behind one interface
//! (`kind::ServerKind`): its config for plain HTTP, TLS, HTTP/2, PHP and CGI, its command line, how to
//! find its binary and ask its version, what it supports here and why not, its concurrency model and
//! the notes its rows carry. [`Kind`] is a handle on one, and [`Kind::ALL`] the registry. What every
//! kind shares sits beside them:
//!
//! - `config`: what a kind's config is written from and what starts it, with the shared limits
//!   (`crate::limits`; docs/LAB-CONFIGS.md says why each setting);
//! - `binary`: finding a kind's binary and its version;
//! - `lab_files`: the lab's own files in the docroot (the protected page, the throttled file);
//! - `process`: starting a server pinned, in its own process group and cgroup and directory,
//!   waiting for its port, stopping it with nothing left behind (`crate::group`).
//!
//! Whether what a kind is configured for works is checked over the wire by `crate::checks`.
//!
//! A new server kind is a new file implementing `ServerKind` and its line in [`Kind::ALL`].

mod apache;
pub mod ask;
pub mod binary;
pub mod builtin;
mod caddy;
pub mod config;
mod h2o;
pub mod kind;
pub mod lab_files;
mod lighttpd;
mod mini_httpd;
mod nginx;
pub mod process;

use anyhow::bail;
use std::hash::{Hash, Hasher};

pub use crate::affinity::{allowed_cpus, pin_current};
pub use crate::checks::features::{
    check_basic_auth, check_chroot, check_features, check_throttling,
};
pub use crate::client::{fetch, fetch_over, Fetched};
pub use crate::programs::find_program;
pub use binary::{locate, version_in, Binary};
pub use kind::{Cgi, Configures, Php, ServerKind};
pub use lab_files::{
    write_lab_files, AUTH_PASSWORD, AUTH_USER, CHROOT_PATH, PRIVATE_PATH, THROTTLED_BYTES,
    THROTTLED_PATH, THROTTLE_KIB_PER_SEC,
};
pub use lighttpd::modules as lighttpd_modules;
pub use process::{Server, Setup};

/// A server the lab knows how to run: a handle on its kind's [`ServerKind`], compared by name.
#[derive(Clone, Copy)]
pub struct Kind(&'static dyn ServerKind);

impl Kind {
    /// The registry: every kind the lab runs, in the order `compare` lists them. One line per kind.
    pub const ALL: &'static [Kind] = &[
        Kind(&builtin::Builtin { cached: true }),
        Kind(&builtin::Builtin { cached: false }),
        Kind(&nginx::Nginx),
        Kind(&lighttpd::Lighttpd),
        Kind(&apache::Apache { mod_php: false }),
        Kind(&apache::Apache { mod_php: true }),
        Kind(&h2o::H2o),
        Kind(&caddy::Caddy),
        Kind(&mini_httpd::MiniHttpd),
    ];

    /// A handle on `kind`: what a registry lists.
    pub const fn new(kind: &'static dyn ServerKind) -> Kind {
        Kind(kind)
    }

    /// "builtin, nginx, …": for error messages and --help.
    pub fn known_names() -> String {
        names(Kind::ALL)
    }

    /// The kind named `s` (or one of its aliases) in the registry.
    pub fn parse(s: &str) -> anyhow::Result<Kind> {
        Kind::parse_in(Kind::ALL, s)
    }

    /// The kind named `s` among `known`.
    pub fn parse_in(known: &[Kind], s: &str) -> anyhow::Result<Kind> {
        let s = s.trim();
        let lower = s.to_ascii_lowercase();
        match known
            .iter()
            .find(|k| k.name() == lower || k.aliases().contains(&lower.as_str()))
        {
            Some(&k) => Ok(k),
            None => bail!("unknown server '{s}' (known: {})", names(known)),
        }
    }

    /// A comma-separated list of the registry's kinds, in the order given, without repeats.
    pub fn parse_list(s: &str) -> anyhow::Result<Vec<Kind>> {
        Kind::parse_list_in(Kind::ALL, s)
    }

    /// A comma-separated list of kinds among `known`, in the order given, without repeats.
    pub fn parse_list_in(known: &[Kind], s: &str) -> anyhow::Result<Vec<Kind>> {
        let mut out = Vec::new();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let k = Kind::parse_in(known, part)?;
            if !out.contains(&k) {
                out.push(k);
            }
        }
        if out.is_empty() {
            bail!("no servers given (known: {})", names(known));
        }
        Ok(out)
    }

    /// Whether the server runs CGI programs through fcgiwrap rather than itself.
    pub fn cgi_by_fcgiwrap(self) -> bool {
        self.cgi() == Cgi::Fcgiwrap
    }
}

fn names(known: &[Kind]) -> String {
    known
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl std::ops::Deref for Kind {
    type Target = dyn ServerKind;
    fn deref(&self) -> &(dyn ServerKind + 'static) {
        self.0
    }
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Kind {}

impl Hash for Kind {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_ones_list_the_known() {
        let k = |name| Kind::parse(name).unwrap();
        assert_eq!(
            Kind::parse_list("builtin, nginx,apache2,mini-httpd,nginx").unwrap(),
            vec![k("builtin"), k("nginx"), k("apache"), k("mini_httpd")]
        );
        let e = Kind::parse_list("nginx,iis").unwrap_err().to_string();
        assert!(
            e.contains("unknown server 'iis'")
                && e.contains("lighttpd")
                && e.contains("mini_httpd"),
            "{e}"
        );
        assert!(Kind::parse_list(" , ").is_err());
    }

    #[test]
    fn every_kind_has_a_name_of_its_own() {
        for (i, a) in Kind::ALL.iter().enumerate() {
            for b in &Kind::ALL[i + 1..] {
                assert_ne!(a.name(), b.name());
                assert!(!b.aliases().contains(&a.name()), "{a:?} {b:?}");
            }
        }
    }
}
