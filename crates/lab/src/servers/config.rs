//! What the lab writes to start each server: its config files, command line and environment, with
//! the shared limits (`crate::limits`) spelled in each server's own terms by the server's own file
//! (`Profile::launch`). docs/LAB-CONFIGS.md explains every choice and the upstream documentation it
//! follows.

use std::path::{Path, PathBuf};

use crate::limits::Limits;
use crate::php::pass::Pass;
use crate::servers::{bcrypt_hash, running_as_root, sha_hash, Binary, AUTH_USER};
use crate::tls::LabCert;
use crate::users::{self, Account};

/// What a start needs to write and run.
#[derive(Clone, Debug, Default)]
pub struct Launch {
    /// Files written into the server's directory before it starts: (name, text).
    pub files: Vec<(String, String)>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// A FastCGI-to-CGI bridge to start beside the server, for servers without CGI of their own.
    pub bridge: Option<Bridge>,
    /// Started as the worker user (`users::worker`, when the lab is root): for a server that cannot
    /// drop root itself (caddy). The others are told the user in their config.
    pub as_worker: bool,
}

/// fcgiwrap on a Unix socket in the server's directory. The lab binds the socket (0660, the
/// workers' group) and hands it over as fcgiwrap's stdin, FastCGI's listening descriptor, so
/// fcgiwrap and its CGI programs run as the worker user from the start.
#[derive(Clone, Debug)]
pub struct Bridge {
    pub program: PathBuf,
    pub socket: String,
    /// Processes prefork'd (each runs one CGI program at a time).
    pub workers: usize,
}

impl Bridge {
    pub fn args(&self) -> Vec<String> {
        vec!["-c".into(), self.workers.to_string()]
    }
}

/// The extensions of the fixtures, for servers configured without a system-wide types file.
const FIXTURE_EXTENSIONS: &[&str] = &["html", "txt", "css", "js", "gif", "jpg", "png", "bin"];

/// (extension, type) for each fixture extension, the types from mime_guess: the project's one MIME
/// table, the one `webstand serve` answers with too.
pub(super) fn mime_types() -> impl Iterator<Item = (&'static str, &'static str)> {
    FIXTURE_EXTENSIONS.iter().map(|&e| {
        let t = mime_guess::from_ext(e)
            .first_raw()
            .unwrap_or("application/octet-stream");
        (e, t)
    })
}

/// What every config template needs.
pub(crate) struct Ctx<'a> {
    /// The server's binary (lighttpd loads the modules installed beside it).
    pub(super) program: &'a Path,
    pub(super) doc: &'a Path,
    /// The docroot and the server's own directory, as text.
    pub(super) d: String,
    pub(super) wd: String,
    pub(super) port: u16,
    pub(super) chroot: bool,
    /// Running as root: servers that switch users are told which one.
    pub(super) root: bool,
    /// The user the server's workers run as when it starts as root (None: the lab's own user).
    pub(super) worker: Option<&'static Account>,
    pub(super) limits: Limits,
    /// fcgiwrap's socket, for servers that run CGI through it (None: fcgiwrap is not installed, or
    /// the server is started chrooted, without CGI).
    pub(super) bridge: Option<Bridge>,
    /// The lab's certificate when the server listens for HTTPS (instead of HTTP) on `port`.
    pub(super) tls: Option<&'a LabCert>,
    /// HTTP/2 on `port` too: by ALPN with `tls`, by prior knowledge (h2c) without
    /// (`crate::h2`: the settings every server gets).
    pub(super) h2: bool,
    /// PHP-FPM's socket, when the run has PHP workloads (`crate::php::pass` spells each server's
    /// lines).
    pub(super) php: Option<Pass>,
}

impl Ctx<'_> {
    /// Open files the server may use: the shared limit, or the hard limit an unprivileged server
    /// cannot raise.
    pub(super) fn files(&self) -> usize {
        let want = self.limits.files();
        if self.root {
            return want;
        }
        let hard = rlimit::Resource::NOFILE
            .get()
            .map_or(u64::MAX, |(_, hard)| hard);
        want.min(usize::try_from(hard).unwrap_or(usize::MAX))
    }
}

/// How a server's one port speaks: HTTPS with the lab's certificate (`tls`) or plain HTTP, and
/// HTTP/2 beside HTTP/1.1 when `h2` (by ALPN over TLS, by prior knowledge on a plain port).
#[derive(Clone, Copy, Debug, Default)]
pub struct Protocols<'a> {
    pub tls: Option<&'a LabCert>,
    pub h2: bool,
}

/// The files, arguments and environment that start `binary` on `doc` at `port` speaking
/// `protocols`, writing the password files the templates name into `w`; with `php`, `.php` goes to
/// PHP-FPM.
pub fn launch(
    binary: &Binary,
    doc: &Path,
    w: &Path,
    (port, chroot): (u16, bool),
    limits: Limits,
    protocols: Protocols,
    php: Option<&Pass>,
) -> anyhow::Result<Launch> {
    let kind = binary.kind;
    std::fs::write(w.join("htpasswd"), format!("{AUTH_USER}:{}\n", sha_hash()))?;
    std::fs::write(
        w.join("htpasswd.bcrypt"),
        format!("{AUTH_USER}:{}\n", bcrypt_hash()),
    )?;
    let wd = w.display().to_string();
    let bridge = (kind.cgi_by_fcgiwrap() && !chroot)
        .then(fcgiwrap)
        .flatten()
        .map(|program| Bridge {
            program,
            socket: format!("{wd}/fcgiwrap.sock"),
            workers: limits.cgi_workers(),
        });
    let c = Ctx {
        program: &binary.path,
        doc,
        d: doc.display().to_string(),
        wd,
        port,
        chroot,
        root: running_as_root(),
        worker: users::worker(),
        limits,
        bridge,
        tls: protocols.tls,
        h2: protocols.h2,
        php: php.filter(|_| !chroot).cloned(),
    };
    let mut l = (kind.profile().launch)(&c);
    l.bridge = c.bridge.clone();
    Ok(l)
}

/// fcgiwrap's binary, when installed.
pub fn fcgiwrap() -> Option<PathBuf> {
    super::find_program("fcgiwrap")
}

/// Names of the executable files in `doc/cgi-bin`.
pub(super) fn cgi_programs(doc: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let Ok(rd) = std::fs::read_dir(doc.join("cgi-bin")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .flatten()
        .filter(|e| {
            e.metadata()
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .collect();
    names.sort();
    names
}
