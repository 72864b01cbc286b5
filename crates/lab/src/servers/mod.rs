//! The known servers. Each kind has one file here holding everything particular to it, behind one
//! small interface ([`Profile`]): its config template and command line, how to find its binary and
//! ask its version, its concurrency model and what the lab configures in it. What every kind shares
//! sits beside them:
//!
//! - `config`: what a start writes (files, arguments, environment, the fcgiwrap bridge) with the
//!   shared limits (`crate::limits`; docs/LAB-CONFIGS.md says why each setting);
//! - `binary`: finding a binary and its version;
//! - `lab_files`: the lab's own files in the docroot (the protected page, the throttled file);
//! - `process`: starting a server pinned, in its own process group and cgroup and temporary
//!   directory, waiting for its port, stopping it with nothing left behind;
//! - `features`: checking over a socket that basic auth, chroot and throttling work;
//! - `fetch`: the one-request HTTP client those checks use; `affinity`: CPU pinning.
//!
//! A new server kind is a new file with its `PROFILE` and `launch`, a `Kind` variant, and its line in
//! [`Kind::profile`].

mod affinity;
pub mod apache;
mod binary;
pub mod builtin;
mod caddy;
pub(crate) mod config;
mod features;
mod fetch;
mod h2o;
mod lab_files;
mod lighttpd;
mod mini_httpd;
mod nginx;
mod process;

use anyhow::bail;

pub(crate) use crate::users::running_as_root;
pub use affinity::{allowed_cpus, pin_current};
pub use binary::{find_program, locate, version_in, Binary};
pub use features::{
    check_basic_auth, check_chroot, check_features, check_throttling, configures, Features, Support,
};
pub use fetch::{fetch, fetch_over, Fetched};
pub(crate) use lab_files::{bcrypt_hash, sha_hash};
pub use lab_files::{
    write_lab_files, AUTH_PASSWORD, AUTH_USER, CHROOT_PATH, PRIVATE_PATH, THROTTLED_BYTES,
    THROTTLED_PATH, THROTTLE_KIB_PER_SEC,
};
pub use process::{Server, Setup};

/// A server the lab knows how to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Builtin,
    /// `webstand serve` without its in-memory file cache.
    BuiltinNoCache,
    Nginx,
    Lighttpd,
    Apache,
    /// apache2 with the prefork MPM and mod_php (seed 004's Apache).
    ApacheModPhp,
    H2o,
    Caddy,
    MiniHttpd,
}

/// Everything the lab knows about one kind of server; each kind's file defines its own.
pub(crate) struct Profile {
    /// The name used on the command line and in tables.
    pub name: &'static str,
    /// Other names accepted on the command line.
    pub aliases: &'static [&'static str],
    /// The Debian package holding the binary.
    pub package: &'static str,
    /// Program names to look for, in order.
    pub binaries: &'static [&'static str],
    /// The argument that makes the binary print its version.
    pub version_flag: &'static str,
    /// The concurrency model, as thttpd's table names them, with what the lab configured.
    pub model: &'static str,
    /// Whether it keeps connections open between requests.
    pub keeps_alive: bool,
    /// Whether it runs CGI programs through fcgiwrap rather than itself.
    pub cgi_by_fcgiwrap: bool,
    /// What the lab configures: (basic auth, chroot, throttling).
    pub configures: (bool, bool, bool),
    /// The config files, command line and environment that start it.
    pub launch: fn(&config::Ctx) -> config::Launch,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::Builtin,
        Kind::BuiltinNoCache,
        Kind::Nginx,
        Kind::Lighttpd,
        Kind::Apache,
        Kind::ApacheModPhp,
        Kind::H2o,
        Kind::Caddy,
        Kind::MiniHttpd,
    ];

    pub(crate) fn profile(self) -> &'static Profile {
        match self {
            Kind::Builtin => &builtin::PROFILE,
            Kind::BuiltinNoCache => &builtin::PROFILE_NOCACHE,
            Kind::Nginx => &nginx::PROFILE,
            Kind::Lighttpd => &lighttpd::PROFILE,
            Kind::Apache => &apache::PROFILE,
            Kind::ApacheModPhp => &apache::PROFILE_MOD_PHP,
            Kind::H2o => &h2o::PROFILE,
            Kind::Caddy => &caddy::PROFILE,
            Kind::MiniHttpd => &mini_httpd::PROFILE,
        }
    }

    /// The name used on the command line and in tables.
    pub fn name(self) -> &'static str {
        self.profile().name
    }

    /// "builtin, nginx, …": for error messages and --help.
    pub fn known_names() -> String {
        Kind::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn parse(s: &str) -> anyhow::Result<Kind> {
        let s = s.trim();
        let lower = s.to_ascii_lowercase();
        match Kind::ALL.into_iter().find(|k| {
            let p = k.profile();
            p.name == lower || p.aliases.contains(&lower.as_str())
        }) {
            Some(k) => Ok(k),
            None => bail!("unknown server '{s}' (known: {})", Kind::known_names()),
        }
    }

    /// A comma-separated list, in the order given, without repeats.
    pub fn parse_list(s: &str) -> anyhow::Result<Vec<Kind>> {
        let mut out = Vec::new();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let k = Kind::parse(part)?;
            if !out.contains(&k) {
                out.push(k);
            }
        }
        if out.is_empty() {
            bail!("no servers given (known: {})", Kind::known_names());
        }
        Ok(out)
    }

    /// The Debian package holding the binary.
    pub fn package(self) -> &'static str {
        self.profile().package
    }

    /// The concurrency model, as thttpd's table names them, with what the lab configured.
    pub fn model(self) -> &'static str {
        self.profile().model
    }

    /// Whether the server keeps connections open between requests (mini_httpd answers each request on
    /// its own connection, as HTTP/1.0, so the generator does not ask it to).
    pub fn keeps_alive(self) -> bool {
        self.profile().keeps_alive
    }

    /// Whether the server runs CGI programs through fcgiwrap (a FastCGI-to-CGI bridge) rather than
    /// itself: nginx and caddy have no CGI, and h2o's own bridge forks a Perl worker per request.
    pub fn cgi_by_fcgiwrap(self) -> bool {
        self.profile().cgi_by_fcgiwrap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_ones_list_the_known() {
        assert_eq!(
            Kind::parse_list("builtin, nginx,apache2,mini-httpd,nginx").unwrap(),
            vec![Kind::Builtin, Kind::Nginx, Kind::Apache, Kind::MiniHttpd]
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
}
