//! Finding a server kind's binary on this machine and the version it reports.

use std::path::{Path, PathBuf};

use super::ask::output_of;
use super::Kind;

/// A server's binary and version, found on this machine.
#[derive(Clone, Debug)]
pub struct Binary {
    pub kind: Kind,
    pub path: PathBuf,
    /// The version the binary reports ("1.22.1"), or "?" when it prints none.
    pub version: String,
}

/// Finds `kind`'s binary (`ServerKind::program`) and its version. `builtin` is the `webstand` binary
/// to run as the builtin server. The error is one line saying how to install the server.
pub fn locate(kind: Kind, builtin: Option<&Path>) -> Result<Binary, String> {
    let Some(path) = kind.program(builtin) else {
        return Err(kind.not_found());
    };
    let text = output_of(&path, &[kind.version_flag()]);
    Ok(Binary {
        kind,
        path,
        version: version_in(&text).unwrap_or_else(|| "?".into()),
    })
}

/// The first dotted number in a version banner ("nginx version: nginx/1.22.1" → "1.22.1").
pub fn version_in(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit()
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'v')
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            let v = text[start..i].trim_end_matches('.');
            if v.contains('.') {
                return Some(v.to_string());
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::find_program;

    #[test]
    fn versions_come_out_of_banners() {
        assert_eq!(
            version_in("nginx version: nginx/1.22.1\n").as_deref(),
            Some("1.22.1")
        );
        assert_eq!(
            version_in("Server version: Apache/2.4.71 (Debian)\nServer built: 2026").as_deref(),
            Some("2.4.71")
        );
        assert_eq!(
            version_in("lighttpd/1.4.69 (ssl) - a light and fast webserver").as_deref(),
            Some("1.4.69")
        );
        assert_eq!(
            version_in("h2o version 2.2.5\nOpenSSL: OpenSSL 3.0.19").as_deref(),
            Some("2.2.5")
        );
        assert_eq!(version_in("v2.6.2 h1:abc=").as_deref(), Some("2.6.2"));
        assert_eq!(
            version_in("mini_httpd/1.30 26Oct2018").as_deref(),
            Some("1.30")
        );
        assert_eq!(version_in("webstand 0.1.0").as_deref(), Some("0.1.0"));
        assert_eq!(version_in("no digits here"), None);
    }

    #[test]
    fn a_missing_binary_says_how_to_install() {
        let builtin = Kind::parse("builtin").unwrap();
        let e = locate(builtin, Some(Path::new("/nonexistent/webstand"))).unwrap_err();
        assert!(e.contains("builtin"), "{e}");
        if find_program("caddy").is_none() {
            assert!(locate(Kind::parse("caddy").unwrap(), None)
                .unwrap_err()
                .contains("apt-get install caddy"));
        }
    }
}
