//! What the lab knows about one kind of server, behind the one interface each kind's file implements
//! ([`ServerKind`]): its name and package, how to find its binary and ask its version, its
//! concurrency model, the config that starts it (plain, TLS, HTTP/2, HTTP/3, PHP, CGI), what it supports here
//! and why not, and the notes its rows carry, as data. The registry of kinds is [`super::Kind::ALL`].

use std::path::{Path, PathBuf};

use super::config::{Ctx, Launch};
use crate::h2::{Mode, NO_H2};
use crate::h3::NO_H3;
use crate::programs::find_program;
use crate::tls::ciphers::Versions;
use webstand_results::{H2Note, Note, TlsNote};

/// How a kind runs the CGI workload's programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cgi {
    /// Itself (mod_cgi, mod_cgid, a fork per request).
    Own,
    /// Through fcgiwrap, a FastCGI-to-CGI bridge the lab starts beside it (nginx and caddy have no
    /// CGI; h2o's own bridge forks a Perl worker per request).
    Fcgiwrap,
    /// Not at all, with why.
    No(&'static str),
}

/// How a kind runs the php and wordpress workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Php {
    /// Passed to the lab's PHP-FPM pool.
    Fpm,
    /// Inside its own processes (`inside` says which), PHP-FPM idle.
    InProcess { inside: &'static str },
    /// Not at all, with why.
    No(&'static str),
}

/// What the lab configures in a kind: thttpd's feature columns, each checked over a socket
/// (`crate::checks::features`) when configured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Configures {
    pub basic_auth: bool,
    pub chroot: bool,
    pub throttling: bool,
}

/// One kind of server. A new kind is a file implementing this and its line in [`super::Kind::ALL`].
pub trait ServerKind: Sync {
    /// The name used on the command line and in tables.
    fn name(&self) -> &'static str;

    /// Other names accepted on the command line.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The Debian package holding the binary.
    fn package(&self) -> &'static str;

    /// Program names to look for, in order.
    fn binaries(&self) -> &'static [&'static str];

    /// Where its binary is here: the first of [`ServerKind::binaries`] found. `webstand` is the
    /// binary the lab was given to run as the builtin server.
    fn program(&self, webstand: Option<&Path>) -> Option<PathBuf> {
        let _ = webstand;
        self.binaries().iter().find_map(|b| find_program(b))
    }

    /// Why [`ServerKind::program`] found nothing: one line saying what to install.
    fn not_found(&self) -> String {
        format!(
            "{}: not installed (apt-get install {}, or scripts/install-deps.sh)",
            self.name(),
            self.package()
        )
    }

    /// The argument that makes the binary print its version.
    fn version_flag(&self) -> &'static str {
        "-v"
    }

    /// The concurrency model, as thttpd's table names them, with what the lab configured.
    fn model(&self) -> &'static str;

    /// Whether it keeps connections open between requests.
    fn keeps_alive(&self) -> bool {
        true
    }

    /// How it runs CGI programs.
    fn cgi(&self) -> Cgi;

    /// What the lab configures in it.
    fn configures(&self) -> Configures {
        Configures::default()
    }

    /// The config files, command line and environment that start it as `c` says.
    fn launch(&self, c: &Ctx) -> Launch;

    /// Whether its build at `program` can serve HTTPS with the lab's certificate here; Err: one
    /// line beginning "no TLS" saying why, and what to install when that would help.
    fn tls(&self, program: &Path) -> Result<(), String> {
        let _ = program;
        Err(format!(
            "{}: the lab configures no TLS for {}",
            webstand_results::comparison::NO_TLS,
            self.name()
        ))
    }

    /// Whether its config can offer TLS version `alone` without the other (`lab up --tls-version`);
    /// Err: why not.
    fn tls_version_alone(&self, alone: Versions) -> Result<(), String> {
        let _ = alone;
        Ok(())
    }

    /// Where its TLS differs from the settings every server gets.
    fn tls_notes(&self) -> Vec<TlsNote> {
        Vec::new()
    }

    /// Whether it speaks HTTP/2 in the lab at all, known without its binary; Err: one line
    /// beginning "no h2".
    fn h2(&self) -> Result<(), String> {
        Err(format!("{NO_H2}: {} speaks HTTP/1.1 only", self.name()))
    }

    /// Whether its build at `program` speaks HTTP/2 in `mode` here. A kind configured for HTTP/2
    /// that does not negotiate it is found by the h2 check instead.
    fn h2_here(&self, program: &Path, mode: Mode) -> Result<(), String> {
        let _ = (program, mode);
        self.h2()
    }

    /// Where its HTTP/2 in `mode` differs from the settings every server gets.
    fn h2_notes(&self, mode: Mode) -> Vec<H2Note> {
        let _ = mode;
        Vec::new()
    }

    /// Whether its build at `program` speaks HTTP/3 over QUIC in the lab (on the lab's certificate,
    /// UDP at the port of its HTTPS listener); Err: one line beginning "no h3" saying why.
    fn h3(&self, program: &Path) -> Result<(), String> {
        let _ = program;
        Err(format!("{NO_H3}: {} has no HTTP/3", self.name()))
    }

    /// How it runs PHP pages.
    fn php(&self) -> Php {
        Php::No("the lab passes no PHP to it")
    }

    /// How it serves static files where that differs from the other rows.
    fn file_notes(&self) -> Vec<Note> {
        Vec::new()
    }
}
