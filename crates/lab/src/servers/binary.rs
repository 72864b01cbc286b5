//! Finding a server's binary on this machine (PATH, then the sbin directories a non-root PATH lacks)
//! and the version it reports.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::Kind;

/// A server's binary and version, found on this machine.
#[derive(Clone, Debug)]
pub struct Binary {
    pub kind: Kind,
    pub path: PathBuf,
    /// The version the binary reports ("1.22.1"), or "?" when it prints none.
    pub version: String,
}

/// Finds `kind`'s binary (PATH, then the sbin directories a non-root PATH lacks) and its version.
/// `builtin` is the `webstand` binary to run as the builtin server. The error is one line saying how
/// to install the server.
pub fn locate(kind: Kind, builtin: Option<&Path>) -> Result<Binary, String> {
    let path = match kind {
        Kind::Builtin | Kind::BuiltinNoCache => {
            builtin.map(Path::to_path_buf).filter(|p| p.is_file())
        }
        // apache-modphp needs mod_php's module as well as apache2.
        Kind::ApacheModPhp if !Path::new(super::apache::MOD_PHP).is_file() => None,
        _ => kind.profile().binaries.iter().find_map(|b| find_program(b)),
    };
    let Some(path) = path else {
        return Err(match kind {
            Kind::Builtin | Kind::BuiltinNoCache => {
                format!("{}: the webstand binary was not found", kind.name())
            }
            _ => format!(
                "{}: not installed (apt-get install {}, or scripts/install-deps.sh)",
                kind.name(),
                kind.package()
            ),
        });
    };
    let out = Command::new(&path)
        .arg(kind.profile().version_flag)
        .stdin(Stdio::null())
        .output();
    let text = out
        .map(|o| {
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        })
        .unwrap_or_default();
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

/// Finds a program the way the lab runs one: on PATH, then in the sbin directories a non-root PATH
/// lacks (nginx, apache2 and mini_httpd live in /usr/sbin).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/local/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::Kind;

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
        let e = locate(Kind::Builtin, Some(Path::new("/nonexistent/webstand"))).unwrap_err();
        assert!(e.contains("builtin"), "{e}");
        if find_program("caddy").is_none() {
            assert!(locate(Kind::Caddy, None)
                .unwrap_err()
                .contains("apt-get install caddy"));
        }
    }
}
