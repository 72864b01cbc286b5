//! What a server kind's config is written from (`Ctx`: the docroot, the port, the shared limits, the
//! protocols, PHP-FPM's socket, the CGI bridge) and what it hands back to start it (`Launch`: files,
//! command line, environment). Each kind spells the shared limits (`crate::limits`) in its own terms
//! in its own file (`ServerKind::launch`); docs/LAB-CONFIGS.md explains every choice and the upstream
//! documentation it follows.

use std::path::{Path, PathBuf};

use crate::limits::Limits;
use crate::tls::ciphers::Versions;
use crate::tls::LabCert;
use crate::users::Account;

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
pub fn mime_types() -> impl Iterator<Item = (&'static str, &'static str)> {
    FIXTURE_EXTENSIONS.iter().map(|&e| {
        let t = mime_guess::from_ext(e)
            .first_raw()
            .unwrap_or("application/octet-stream");
        (e, t)
    })
}

/// PHP-FPM, as a server's config passes `.php` to it. Every server that can gets the same:
/// `index.php` before `index.html` as the directory index, `*.php` that exist as files to FastCGI on
/// PHP-FPM's Unix socket with SCRIPT_FILENAME under the docroot and the request's Host (port
/// included) as HTTP_HOST, and gzip for `text/html` to clients that accept it (the seed's
/// "compression was enabled"); each kind's file spells it.
#[derive(Clone, Debug)]
pub struct Pass {
    /// PHP-FPM's socket (absolute path).
    pub socket: String,
    /// PHP-FPM's workers: the most connections worth opening to it.
    pub children: usize,
}

/// What every config template needs.
pub struct Ctx<'a> {
    /// The server's binary (lighttpd loads the modules installed beside it).
    pub program: &'a Path,
    pub doc: &'a Path,
    /// The docroot and the server's own directory, as text.
    pub d: String,
    pub wd: String,
    pub port: u16,
    pub chroot: bool,
    /// Running as root: servers that switch users are told which one.
    pub root: bool,
    /// The user the server's workers run as when it starts as root (None: the lab's own user).
    pub worker: Option<&'static Account>,
    pub limits: Limits,
    /// fcgiwrap's socket, for servers that run CGI through it (None: fcgiwrap is not installed, or
    /// the server is started chrooted, without CGI).
    pub bridge: Option<Bridge>,
    /// The lab's certificate when the server listens for HTTPS (instead of HTTP) on `port`.
    pub tls: Option<&'a LabCert>,
    /// The TLS versions it offers with `tls`.
    pub tls_versions: Versions,
    /// HTTP/2 on `port` too: by ALPN with `tls`, by prior knowledge (h2c) without
    /// (`crate::h2`: the settings every server gets).
    pub h2: bool,
    /// HTTP/3 over QUIC too, on UDP at `port` with `tls` (`crate::h3`).
    pub h3: bool,
    /// PHP-FPM's socket, when the run has PHP workloads.
    pub php: Option<Pass>,
}

impl Ctx<'_> {
    /// Open files the server may use: the shared limit, or the hard limit an unprivileged server
    /// cannot raise.
    pub fn files(&self) -> usize {
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

/// Names of the executable files in `doc/cgi-bin`.
pub fn cgi_programs(doc: &Path) -> Vec<String> {
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
