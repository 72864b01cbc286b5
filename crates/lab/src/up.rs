//! `webstand lab up`: one lab server started on the lab's own config, as a comparison starts its
//! rows (the same launch: the shared limits, pinned as the lab pins, in its own cgroup, its children
//! unprivileged when the lab is root), on loopback only, with PHP-FPM behind it when asked, kept
//! running until a signal; then everything it started is stopped and its scratch removed. For
//! benchmark scripts and tests that need a real server configured exactly as the lab configures it.

use anyhow::{bail, Context, Result};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::affinity::allowed_cpus;
use crate::compare::running::prepare_docroot;
use crate::h2::Mode;
use crate::limits::Limits;
use crate::php::{Backends, Setup as PhpSetup};
use crate::servers::binary::locate;
use crate::servers::config::Pass;
use crate::servers::lab_files::make_world_readable;
use crate::servers::process::{Server, Setup};
use crate::servers::Kind;
use crate::tls::cert::{KeyType, LabCert};
use crate::tls::ciphers::Versions;

/// What `lab up` starts.
#[derive(Clone, Debug)]
pub struct UpOptions {
    pub kind: Kind,
    /// HTTPS only, with a certificate the lab generates (its CA printed for clients).
    pub tls: bool,
    /// The TLS versions offered with `tls`: both, or one alone.
    pub tls_versions: Versions,
    /// HTTP/2 beside HTTP/1.1: by ALPN with `tls`, by prior knowledge (h2c) without.
    pub h2: bool,
    /// HTTP/3 over QUIC too, on UDP at the HTTPS port (needs `tls`).
    pub h3: bool,
    /// PHP-FPM behind it, `.php` passed to it.
    pub php: bool,
    /// The port to listen on (loopback); None: a free one.
    pub port: Option<u16>,
    /// What to serve; None: the lab's own docroot (the fixtures and the lab's files), made afresh.
    pub docroot: Option<PathBuf>,
    /// CPUs to pin the server (and PHP-FPM) to; None: the comparison's server CPU when allowed.
    pub cpus: Option<Vec<usize>>,
    /// The `webstand` binary, for the builtin kinds.
    pub webstand: Option<PathBuf>,
}

/// The CPU a comparison pins its servers to by default.
const SERVER_CPU: usize = 0;

/// A lab server that is up, with what it needs; dropping it stops everything and removes the
/// scratch (fields drop in order: the server before PHP-FPM, both before the directories).
pub struct Up {
    pub server: Server,
    pub backends: Option<Backends>,
    pub cert: Option<Arc<LabCert>>,
    pub docroot: PathBuf,
    pub cpus: Option<Vec<usize>>,
    /// The docroot the lab made, when it made one.
    _scratch: Option<tempfile::TempDir>,
}

impl Up {
    /// Starts the server as `opts` says. Bad input (a kind without TLS or HTTP/2 here, a port in
    /// use, a docroot that is not a directory) is an error of one line.
    pub fn start(opts: &UpOptions) -> Result<Up> {
        let kind = opts.kind;
        let binary = locate(kind, opts.webstand.as_deref()).map_err(anyhow::Error::msg)?;
        if opts.tls {
            kind.tls(&binary.path).map_err(anyhow::Error::msg)?;
        }
        if opts.tls_versions != Versions::Both {
            if !opts.tls {
                bail!("a TLS version needs --tls");
            }
            kind.tls_version_alone(opts.tls_versions)
                .map_err(anyhow::Error::msg)?;
        }
        if opts.h2 {
            kind.h2_here(&binary.path, Mode::of(opts.tls))
                .map_err(anyhow::Error::msg)?;
        }
        if opts.h3 {
            if !opts.tls {
                bail!("--h3 needs --tls: QUIC is always TLS 1.3");
            }
            kind.h3(&binary.path).map_err(anyhow::Error::msg)?;
        }
        if opts.php {
            if let Some(why) = crate::disclosure::php_unavailable(kind) {
                bail!("{}: {why}", kind.name());
            }
        }
        if let Some(p) = opts.port {
            TcpListener::bind(("127.0.0.1", p))
                .with_context(|| format!("port {p} on 127.0.0.1 is in use"))?;
        }
        let cpus = server_cpus(opts.cpus.as_deref())?;
        let (docroot, scratch) = docroot(opts.docroot.as_deref())?;
        let cert = opts
            .tls
            .then(|| LabCert::generate(KeyType::default()))
            .transpose()?
            .map(Arc::new);
        let limits = Limits::default();
        let backends = if opts.php {
            let setup = PhpSetup {
                fpm: crate::php::fpm::PROGRAM.into(),
                children: crate::php::DEFAULT_CHILDREN,
                backlog: limits.backlog(),
                cpus: cpus.clone(),
                wordpress: false,
            };
            Some(Backends::start(&docroot, &setup)?)
        } else {
            None
        };
        let mut setup = Setup::new(&docroot);
        setup.limits = limits;
        setup.cpus = cpus.clone();
        setup.port = opts.port;
        setup.tls = cert.clone();
        setup.tls_versions = opts.tls_versions;
        setup.h2 = opts.h2;
        setup.h3 = opts.h3;
        setup.php = backends.as_ref().map(|b| Pass {
            socket: b.socket().display().to_string(),
            children: crate::php::DEFAULT_CHILDREN,
        });
        let server = Server::start(&binary, &setup)?;
        if let Some(p) = opts.port.filter(|&p| p != server.addr.port()) {
            bail!(
                "port {p} on 127.0.0.1 was taken while {} started",
                kind.name()
            );
        }
        // A UDP port has no "open" to wait for: ready once it answers.
        if let Some(c) = cert.as_ref().filter(|_| opts.h3) {
            crate::checks::h3::ready(server.addr, &c.ca_file())
                .map_err(|e| anyhow::anyhow!("{} did not answer HTTP/3: {e}", kind.name()))?;
        }
        Ok(Up {
            server,
            backends,
            cert,
            docroot,
            cpus,
            _scratch: scratch,
        })
    }

    /// What a script reads on stdout, one `key=value` a line, `ready=1` last: the server, its
    /// version, its URL (with h2 and h3, the same URL speaks HTTP/2 and HTTP/3), the CA to trust with `tls`, its pid
    /// and PHP-FPM's, the docroot, the CPUs it is pinned to.
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        let s = &self.server;
        let scheme = if s.tls.is_some() { "https" } else { "http" };
        let mut out = vec![
            ("server", s.kind().name().to_string()),
            ("version", s.binary.version.clone()),
            ("url", format!("{scheme}://{}/", s.addr)),
            ("port", s.addr.port().to_string()),
            ("pid", s.pid().to_string()),
        ];
        if let Some(c) = &self.cert {
            out.push(("ca", c.ca_file().display().to_string()));
        }
        if let Some(b) = &self.backends {
            out.push(("php_fpm_pid", b.fpm.daemon.pid().to_string()));
        }
        out.push(("docroot", self.docroot.display().to_string()));
        let cpus = self.cpus.as_ref().map_or("none".to_string(), |c| {
            c.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
        });
        out.push(("cpus", cpus));
        out.push(("ready", "1".into()));
        out
    }

    /// Runs until a signal (SIGINT, SIGTERM, SIGHUP: `crate::interrupt`) or until the server dies;
    /// Err with how it died in the second case.
    pub fn wait(&mut self) -> Result<()> {
        crate::interrupt::install();
        while !crate::interrupt::interrupted() {
            if let Some(dead) = self.server.death_note() {
                bail!("{} {dead}", self.server.kind().name());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Stops the server, then PHP-FPM; removes the certificate's and the docroot's directories.
    pub fn stop(mut self) -> Result<()> {
        let server = self.server.stop();
        let php = self.backends.as_mut().map_or(Ok(()), Backends::stop);
        server.and(php)
    }
}

/// The CPUs to pin to: those asked for, each allowed; by default the comparison's server CPU when
/// this process may use it and another one (the lab pins the generator apart), else none.
fn server_cpus(asked: Option<&[usize]>) -> Result<Option<Vec<usize>>> {
    let allowed = allowed_cpus();
    match asked {
        Some(cpus) => {
            if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
                bail!("CPU {c} is not one this process may use ({allowed:?})");
            }
            Ok(Some(cpus.to_vec()))
        }
        None => Ok((allowed.len() >= 2 && allowed.contains(&SERVER_CPU)).then(|| vec![SERVER_CPU])),
    }
}

/// `dir` as given (made readable for the servers' worker user when the lab is root and it lies under
/// the temporary directory), or the lab's own docroot in a scratch directory.
fn docroot(dir: Option<&Path>) -> Result<(PathBuf, Option<tempfile::TempDir>)> {
    if let Some(d) = dir {
        if !d.is_dir() {
            bail!("docroot {} is not a directory", d.display());
        }
        let d = d.canonicalize()?;
        if crate::users::running_as_root() {
            make_world_readable(&d);
        }
        return Ok((d, None));
    }
    let scratch = crate::compare::running::scratch_dir()?;
    prepare_docroot(scratch.path(), 1 << 20)?;
    Ok((scratch.path().to_path_buf(), Some(scratch)))
}
