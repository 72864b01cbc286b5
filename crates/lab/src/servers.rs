//! The known servers: where each one's binary is, its version, a config serving a docroot on a free
//! loopback port with equivalent settings, starting it pinned to CPUs in the foreground, stopping it
//! with nothing left behind, and checking the features the lab configured (basic auth, chroot,
//! throttling).
//!
//! The configs themselves are in `configs` (equal limits from `limits`, docs/LAB-CONFIGS.md says why).
//! Each server runs in its own process group and its own cgroup (`cgroup`: its CPU time, orphans
//! included), in its own temporary directory holding its config, pid file and error log, with its
//! stdout and stderr captured there too; servers without CGI of their own get fcgiwrap beside them.

use anyhow::{anyhow, bail, Context};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use webstand_engine::CpuTime;

use crate::cgroup::{CpuCgroup, CpuSource, Members, MembersFrom};
use crate::configs::{self, Launch};
use crate::limits::Limits;
use crate::procstat;
use crate::spawn::Spawn;
use crate::tls::{self, LabCert};
use rustls::ClientConfig;
use std::sync::Arc;

/// A server the lab knows how to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Builtin,
    /// `webstand serve` without its in-memory file cache.
    BuiltinNoCache,
    Nginx,
    Lighttpd,
    Apache,
    H2o,
    Caddy,
    MiniHttpd,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Builtin,
        Kind::BuiltinNoCache,
        Kind::Nginx,
        Kind::Lighttpd,
        Kind::Apache,
        Kind::H2o,
        Kind::Caddy,
        Kind::MiniHttpd,
    ];

    /// The name used on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Builtin => "builtin",
            Kind::BuiltinNoCache => "builtin-nocache",
            Kind::Nginx => "nginx",
            Kind::Lighttpd => "lighttpd",
            Kind::Apache => "apache",
            Kind::H2o => "h2o",
            Kind::Caddy => "caddy",
            Kind::MiniHttpd => "mini_httpd",
        }
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
        let k = match s.to_ascii_lowercase().as_str() {
            "builtin" | "webstand" => Kind::Builtin,
            "builtin-nocache" => Kind::BuiltinNoCache,
            "nginx" => Kind::Nginx,
            "lighttpd" => Kind::Lighttpd,
            "apache" | "apache2" | "httpd" => Kind::Apache,
            "h2o" => Kind::H2o,
            "caddy" => Kind::Caddy,
            "mini_httpd" | "mini-httpd" | "minihttpd" => Kind::MiniHttpd,
            _ => bail!("unknown server '{s}' (known: {})", Kind::known_names()),
        };
        Ok(k)
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
        match self {
            Kind::Builtin | Kind::BuiltinNoCache => "webstand",
            Kind::Nginx => "nginx-light",
            Kind::Lighttpd => "lighttpd",
            Kind::Apache => "apache2",
            Kind::H2o => "h2o",
            Kind::Caddy => "caddy",
            Kind::MiniHttpd => "mini-httpd",
        }
    }

    fn binaries(self) -> &'static [&'static str] {
        match self {
            Kind::Builtin | Kind::BuiltinNoCache => &["webstand"],
            Kind::Nginx => &["nginx"],
            Kind::Lighttpd => &["lighttpd"],
            Kind::Apache => &["apache2", "httpd"],
            Kind::H2o => &["h2o"],
            Kind::Caddy => &["caddy"],
            Kind::MiniHttpd => &["mini_httpd"],
        }
    }

    fn version_flag(self) -> &'static str {
        match self {
            Kind::Caddy => "version",
            Kind::MiniHttpd => "-V",
            Kind::Builtin | Kind::BuiltinNoCache => "--version",
            _ => "-v",
        }
    }

    /// The concurrency model, as thttpd's table names them, with what the lab configured.
    pub fn model(self) -> &'static str {
        match self {
            Kind::Builtin => "epoll, 1 thread",
            Kind::BuiltinNoCache => "epoll, 1 thread, no file cache",
            Kind::Nginx => "epoll, master + 1 worker",
            Kind::Lighttpd => "epoll, 1 process",
            Kind::Apache => "event MPM, 1 child × threads",
            Kind::H2o => "epoll, 1 thread",
            Kind::Caddy => "goroutines, GOMAXPROCS=1",
            Kind::MiniHttpd => "fork per connection",
        }
    }

    /// Whether the server keeps connections open between requests (mini_httpd answers each request on
    /// its own connection, as HTTP/1.0, so the generator does not ask it to).
    pub fn keeps_alive(self) -> bool {
        self != Kind::MiniHttpd
    }

    /// Whether the server runs CGI programs through fcgiwrap (a FastCGI-to-CGI bridge) rather than
    /// itself: nginx and caddy have no CGI, and h2o's own bridge forks a Perl worker per request.
    pub fn cgi_by_fcgiwrap(self) -> bool {
        matches!(self, Kind::Nginx | Kind::Caddy | Kind::H2o)
    }
}

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
        _ => kind.binaries().iter().find_map(|b| find_program(b)),
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
        .arg(kind.version_flag())
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

/// Basic-auth credentials of the lab's protected path.
pub const AUTH_USER: &str = "lab";
pub const AUTH_PASSWORD: &str = "stand-by";
/// Paths the lab adds to a docroot to check features; none of the workloads requests them.
pub const PRIVATE_PATH: &str = "/lab/private/secret.html";
pub const THROTTLED_PATH: &str = "/lab/throttled/blob.bin";
pub const CHROOT_PATH: &str = "/lab/chroot.txt";
/// Size of the throttled file and the limit set on it: about two seconds at the limit.
pub const THROTTLED_BYTES: usize = 96 * 1024;
pub const THROTTLE_KIB_PER_SEC: u64 = 48;

fn lab_file_bytes(path: &str) -> Vec<u8> {
    match path {
        THROTTLED_PATH => (0..THROTTLED_BYTES)
            .map(|i| b'a' + (i % 26) as u8)
            .collect(),
        _ => format!("webstand lab file {path}\n").into_bytes(),
    }
}

/// Writes the lab's own files into `docroot` (the protected page, the throttled file, the chroot
/// marker, mini_httpd's per-directory password file) and makes the docroot readable by the
/// unprivileged users servers switch to when started as root.
pub fn write_lab_files(docroot: &Path) -> anyhow::Result<()> {
    for p in [PRIVATE_PATH, THROTTLED_PATH, CHROOT_PATH] {
        let file = docroot.join(&p[1..]);
        std::fs::create_dir_all(file.parent().unwrap())
            .with_context(|| format!("cannot write to docroot {}", docroot.display()))?;
        std::fs::write(&file, lab_file_bytes(p))
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    // mini_httpd reads a .htpasswd beside the files it protects, with crypt(3) hashes.
    let htpasswd = docroot.join("lab/private/.htpasswd");
    std::fs::write(&htpasswd, format!("{AUTH_USER}:{}\n", bcrypt_hash()))
        .with_context(|| format!("cannot write {}", htpasswd.display()))?;
    if running_as_root() {
        make_world_readable(docroot);
    }
    Ok(())
}

/// Servers started as root drop to `nobody`/`www-data`: they must be able to reach and read the
/// docroot (a temporary directory is 0700 by default). Failures are left to show up as 403s.
fn make_world_readable(docroot: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut dir = Some(docroot);
    while let Some(d) = dir {
        if let Ok(m) = std::fs::metadata(d) {
            let mode = m.permissions().mode();
            if mode & 0o005 != 0o005
                && d.starts_with(std::env::temp_dir())
                && d != std::env::temp_dir()
            {
                let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode | 0o055));
            }
        }
        dir = d.parent();
    }
    walk(docroot, &mut |p, is_dir| {
        if let Ok(m) = std::fs::metadata(p) {
            let mode = m.permissions().mode();
            let want = if is_dir || mode & 0o100 != 0 {
                mode | 0o055
            } else {
                mode | 0o044
            };
            if want != mode {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(want));
            }
        }
    });
}

fn walk(dir: &Path, f: &mut dyn FnMut(&Path, bool)) {
    f(dir, true);
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, f),
            Ok(_) => f(&p, false),
            Err(_) => {}
        }
    }
}

pub(crate) fn bcrypt_hash() -> String {
    // Cost 5: the check is made a handful of times, never under load.
    bcrypt::hash(AUTH_PASSWORD, 5).expect("bcrypt of a fixed password")
}

pub(crate) fn sha_hash() -> String {
    use base64::Engine;
    use sha1::Digest;
    format!(
        "{{SHA}}{}",
        base64::engine::general_purpose::STANDARD
            .encode(sha1::Sha1::digest(AUTH_PASSWORD.as_bytes()))
    )
}

pub(crate) fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// How to start a server.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The docroot every server serves (absolute; `write_lab_files` already run on it).
    pub docroot: PathBuf,
    /// CPUs to pin the server to (None: no pinning).
    pub cpus: Option<Vec<usize>>,
    /// Start chrooted into the docroot (for checking the chroot feature; needs root).
    pub chroot: bool,
    /// How long to wait for the port to open.
    pub start_timeout: Duration,
    /// Port to try first (None: a free one). When it is taken, another free one is used.
    pub port: Option<u16>,
    /// The limits every server's config is derived from (the run's largest levels).
    pub limits: Limits,
    /// Serve HTTPS (only) with the lab's certificate.
    pub tls: Option<Arc<LabCert>>,
}

impl Setup {
    pub fn new(docroot: &Path) -> Setup {
        Setup {
            docroot: docroot.to_path_buf(),
            cpus: None,
            chroot: false,
            start_timeout: Duration::from_secs(15),
            port: None,
            limits: Limits::default(),
            tls: None,
        }
    }
}

/// A server the lab started. Dropping it stops it.
pub struct Server {
    pub binary: Binary,
    pub addr: SocketAddr,
    /// The client the lab's own requests use when the server speaks HTTPS (verifies the lab's CA).
    pub tls: Option<Arc<ClientConfig>>,
    child: Option<Child>,
    pgid: i32,
    /// fcgiwrap, for a server that runs CGI through it (in the server's group and cgroup).
    bridge: Option<Child>,
    /// The server's own cgroup; None when none could be made (`cgroup_error` says why).
    cgroup: Option<CpuCgroup>,
    cgroup_error: Option<String>,
    /// The files written and the command lines run, as (name, text).
    configs: Vec<(String, String)>,
    /// Every pid seen in the server's tree, so stopping can check each one is gone.
    seen: Vec<i32>,
    workdir: tempfile::TempDir,
    /// What the server exited with, once it has.
    exit: Option<std::process::ExitStatus>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Server({} {} on {}, pid {})",
            self.binary.kind.name(),
            self.binary.version,
            self.addr,
            self.pgid
        )
    }
}

impl Server {
    /// Writes the config, starts the server pinned, waits for its port. A port taken in between is
    /// retried on another one; any other failure returns the tail of the server's log.
    pub fn start(binary: &Binary, setup: &Setup) -> anyhow::Result<Server> {
        let mut last = None;
        for attempt in 0..3 {
            let port = if attempt == 0 { setup.port } else { None };
            match Server::start_once(binary, setup, port) {
                Ok(s) => return Ok(s),
                Err((e, port_taken)) => {
                    if !port_taken {
                        return Err(e);
                    }
                    last = Some(e);
                }
            }
        }
        Err(last
            .unwrap()
            .context("the port was taken three times in a row"))
    }

    fn start_once(
        binary: &Binary,
        setup: &Setup,
        port: Option<u16>,
    ) -> Result<Server, (anyhow::Error, bool)> {
        let fail = |e: anyhow::Error| (e, false);
        let kind = binary.kind;
        let workdir = tempfile::Builder::new()
            .prefix(&format!("webstand-lab-{}-", kind.name()))
            .tempdir()
            .map_err(|e| fail(e.into()))?;
        let port = free_port(port).map_err(|e| fail(e.into()))?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let docroot = setup
            .docroot
            .canonicalize()
            .with_context(|| format!("docroot {}", setup.docroot.display()))
            .map_err(fail)?;
        if setup.chroot && !running_as_root() {
            return Err(fail(anyhow!("chroot needs root")));
        }
        let w = workdir.path();
        let cert = setup.tls.as_deref();
        let launch = configs::launch(binary, &docroot, w, port, setup.chroot, setup.limits, cert)
            .map_err(fail)?;
        let tls = cert.map(|c| c.client(None)).transpose().map_err(fail)?;
        for (name, text) in &launch.files {
            std::fs::write(w.join(name), text).map_err(|e| fail(e.into()))?;
        }
        let (cgroup, cgroup_error) = match CpuCgroup::create(kind.name()) {
            Ok(c) => (Some(c), None),
            Err(e) => (None, Some(e)),
        };
        let mut server = Server {
            binary: binary.clone(),
            addr,
            tls,
            child: None,
            pgid: 0,
            bridge: None,
            cgroup,
            cgroup_error,
            configs: launch.files.clone(),
            seen: Vec::new(),
            workdir,
            exit: None,
        };
        server
            .spawn_processes(&launch, setup.cpus.as_deref())
            .map_err(fail)?;
        server.wait_ready(setup.start_timeout, launch.bridge.as_ref())
    }

    /// Starts the server (leader of a new process group) and its bridge (in that group).
    fn spawn_processes(&mut self, launch: &Launch, cpus: Option<&[usize]>) -> anyhow::Result<()> {
        let w = self.workdir.path().to_path_buf();
        let log = w.join("server.log");
        let main = Spawn {
            program: &self.binary.path,
            args: &launch.args,
            env: &launch.env,
            dir: &w,
            log: &log,
            cpus,
            group: 0,
            cgroup: self.cgroup.as_ref(),
        };
        let mut shown = main.shown();
        let child = main
            .start()
            .with_context(|| format!("cannot run {}", self.binary.path.display()))?;
        self.pgid = child.id() as i32;
        self.seen.push(self.pgid);
        self.child = Some(child);
        if let Some(b) = &launch.bridge {
            let args = b.args();
            let bridge = Spawn {
                program: &b.program,
                args: &args,
                env: &[],
                dir: &w,
                log: &log,
                cpus,
                group: self.pgid,
                cgroup: self.cgroup.as_ref(),
            };
            shown = format!("{shown}\n{}", bridge.shown());
            let child = bridge
                .start()
                .with_context(|| format!("cannot run {}", b.program.display()))?;
            self.bridge = Some(child);
        }
        self.configs
            .push(("command line".into(), format!("{shown}\n")));
        Ok(())
    }

    /// Waits until the port answers (and the bridge's socket exists), or the server dies.
    fn wait_ready(
        mut self,
        limit: Duration,
        bridge: Option<&configs::Bridge>,
    ) -> Result<Server, (anyhow::Error, bool)> {
        let kind = self.kind();
        let addr = self.addr;
        let deadline = Instant::now() + limit;
        loop {
            if !self.alive() {
                let tail = self.log_tail(12);
                let taken = tail.contains("in use") || tail.contains("EADDRINUSE");
                let status = self.exit.map(|s| s.to_string()).unwrap_or_default();
                let e = anyhow!(
                    "{} did not start ({status}); its log ends:\n{tail}",
                    kind.name()
                );
                return Err((e, taken));
            }
            let bridge_ready = bridge.is_none_or(|b| Path::new(&b.socket).exists());
            if bridge_ready && TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            {
                self.note_tree();
                return Ok(self);
            }
            if Instant::now() > deadline {
                let tail = self.log_tail(12);
                let _ = self.stop();
                let e = anyhow!(
                    "{} did not open {addr} within {limit:?}; its log ends:\n{tail}",
                    kind.name()
                );
                return Err((e, false));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// The config files the lab wrote for this server and the command lines it ran, as
    /// (name, text): what `webstand show N --configs` prints.
    pub fn configs(&self) -> &[(String, String)] {
        &self.configs
    }

    /// Where the server's CPU time comes from.
    pub fn cpu_source(&self) -> CpuSource {
        self.cgroup
            .as_ref()
            .map_or(CpuSource::ProcTree, CpuCgroup::source)
    }

    /// Why the server has no cgroup of its own, when it has none.
    pub fn cgroup_error(&self) -> Option<&str> {
        self.cgroup_error.as_deref()
    }

    /// The server's processes, for sampling their memory: its cgroup, or its process trees; with
    /// `bridge` false, less its CGI bridge (idle on a static workload, and not part of its shape).
    pub fn members(&self, bridge: bool) -> Members {
        let from = match &self.cgroup {
            Some(c) => MembersFrom::Cgroup(c.dir().to_path_buf()),
            None => MembersFrom::Trees(self.roots()),
        };
        let without = self
            .bridge
            .as_ref()
            .filter(|_| !bridge)
            .map(|b| b.id() as i32);
        Members { from, without }
    }

    fn roots(&self) -> Vec<i32> {
        let bridge = self.bridge.as_ref().map(|b| b.id() as i32);
        std::iter::once(self.pgid).chain(bridge).collect()
    }

    pub fn kind(&self) -> Kind {
        self.binary.kind
    }

    /// The pid of the server's main process (also its process group).
    pub fn pid(&self) -> i32 {
        self.pgid
    }

    /// The directory holding the server's config and logs.
    pub fn workdir(&self) -> &Path {
        self.workdir.path()
    }

    /// Whether the main process is still running (it is reaped here when it has exited).
    pub fn alive(&mut self) -> bool {
        if self.exit.is_some() {
            return false;
        }
        match self.child.as_mut().map(|c| c.try_wait()) {
            Some(Ok(Some(status))) => {
                self.exit = Some(status);
                false
            }
            Some(Ok(None)) => true,
            _ => false,
        }
    }

    /// One line on how the server ended, when it did ("exited with signal 9; log: …").
    pub fn death_note(&mut self) -> Option<String> {
        if self.alive() {
            return None;
        }
        let status = self
            .exit
            .map(|s| s.to_string())
            .unwrap_or_else(|| "gone".into());
        let tail = self.log_tail(3).replace('\n', " | ");
        Some(format!(
            "died ({status}){}",
            if tail.is_empty() {
                String::new()
            } else {
                format!("; log: {tail}")
            }
        ))
    }

    /// CPU time of everything the server started so far: from its cgroup, or without one the sum over
    /// its live process trees (reaped children included, unreaped and orphaned ones missed).
    pub fn cpu(&mut self) -> CpuTime {
        self.note_tree();
        if let Some(Ok(t)) = self.cgroup.as_ref().map(CpuCgroup::cpu) {
            return t;
        }
        self.roots()
            .into_iter()
            .map(procstat::tree_cpu)
            .fold(CpuTime::default(), |a, b| CpuTime {
                user: a.user + b.user,
                sys: a.sys + b.sys,
            })
    }

    fn note_tree(&mut self) {
        for pid in self.members(true).pids() {
            if !self.seen.contains(&pid) {
                self.seen.push(pid);
            }
        }
    }

    /// The last `lines` lines of the server's error log and captured output.
    pub fn log_tail(&self, lines: usize) -> String {
        let mut text = String::new();
        for name in ["error.log", "server.log"] {
            if let Ok(t) = std::fs::read(self.workdir.path().join(name)) {
                text.push_str(&String::from_utf8_lossy(&t));
            }
        }
        let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Processes of this server still present: its process group, anything in its cgroup, and any pid
    /// ever seen in its tree that still has the server's group. Empty after a successful `stop`.
    pub fn leftovers(&self) -> Vec<i32> {
        let mut left: Vec<i32> = procstat::group_members(self.pgid)
            .iter()
            .map(|s| s.pid)
            .collect();
        let in_cgroup = self
            .cgroup
            .as_ref()
            .map(CpuCgroup::pids)
            .unwrap_or_default();
        for p in self.seen.iter().chain(&in_cgroup) {
            if let Some(s) = procstat::stat(*p) {
                let ours = s.pgrp == self.pgid || in_cgroup.contains(p);
                if ours && s.state != 'Z' && !left.contains(p) {
                    left.push(*p);
                }
            }
        }
        left
    }

    /// SIGTERM, up to five seconds for a clean exit, then SIGKILL to the whole group and everything in
    /// the cgroup. Errors if any process of the server is still there afterwards.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        self.note_tree();
        // SAFETY: signalling our own children (the server, then its bridge).
        unsafe { libc::kill(self.pgid, libc::SIGTERM) };
        if let Some(b) = &self.bridge {
            unsafe { libc::kill(b.id() as i32, libc::SIGTERM) };
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(st)) = child.try_wait() {
                self.exit.get_or_insert(st);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Whatever is left (workers, CGI programs, orphans, a main process that ignored SIGTERM).
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let left = self.leftovers();
            let main_done = matches!(child.try_wait(), Ok(Some(_)));
            let bridge_done = self
                .bridge
                .as_mut()
                .is_none_or(|b| matches!(b.try_wait(), Ok(Some(_))));
            if left.is_empty() && main_done && bridge_done {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "{} left processes behind after SIGKILL: {left:?}",
                    self.binary.kind.name()
                );
            }
            // SAFETY: as above; every pid is the server's (its group, or its cgroup).
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
            for p in left {
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Ok(Some(st)) = child.try_wait() {
            self.exit.get_or_insert(st);
        }
        Ok(())
    }
}

/// `wanted` when nobody listens on it, else a free port. A port someone listens on would fool the
/// readiness wait (it connects), so a taken one is never handed to a server.
fn free_port(wanted: Option<u16>) -> std::io::Result<u16> {
    match wanted.filter(|&p| TcpListener::bind(("127.0.0.1", p)).is_ok()) {
        Some(p) => Ok(p),
        None => Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port()),
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// Pins the calling process (or thread) to `cpus`; CPUs that do not exist are ignored.
pub fn pin_current(cpus: &[usize]) -> bool {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET stays within its bounds for ids below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c, &mut set);
            }
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// The CPUs this process may run on (its affinity mask).
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// What came back for one request.
#[derive(Clone, Debug)]
pub struct Fetched {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
    pub elapsed: Duration,
}

/// One HTTP/1.0 GET over a fresh connection, read to the close (no chunking to undo). With `auth`,
/// sends Basic credentials. Bounded by `limit`.
pub fn fetch(
    addr: SocketAddr,
    path: &str,
    auth: Option<(&str, &str)>,
    limit: Duration,
) -> anyhow::Result<Fetched> {
    fetch_over(addr, None, path, auth, limit)
}

/// `fetch` over HTTPS with `tls`'s client (plain HTTP without one).
pub fn fetch_over(
    addr: SocketAddr,
    tls: Option<&Arc<ClientConfig>>,
    path: &str,
    auth: Option<(&str, &str)>,
    limit: Duration,
) -> anyhow::Result<Fetched> {
    use base64::Engine;
    let started = Instant::now();
    let mut s = tls::Stream::connect(addr, tls, limit)?;
    let mut req = format!(
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nUser-Agent: webstand-lab\r\n",
        addr.port()
    );
    if let Some((u, p)) = auth {
        req.push_str(&format!(
            "Authorization: Basic {}\r\n",
            base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
        ));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    s.flush()?;
    let raw = s
        .read_to_close(limit.saturating_sub(started.elapsed()))
        .with_context(|| format!("GET {path}"))?;
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| anyhow!("GET {path}: no header end in {} bytes", raw.len()))?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| anyhow!("GET {path}: bad status line"))?;
    Ok(Fetched {
        status,
        head,
        body: raw[end + 4..].to_vec(),
        elapsed: started.elapsed(),
    })
}

/// Whether a feature is there, as the lab found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// The server has no such feature (or the lab does not configure it).
    No,
    /// Configured and checked over a socket (or in /proc).
    Verified,
    /// Configured but not checked, with why.
    Unverified(String),
    /// Configured, and the check failed: what was seen.
    Failed(String),
}

impl Support {
    /// The table cell: "yes", "no", "yes?" (configured, unchecked), "FAILED".
    pub fn cell(&self) -> &'static str {
        match self {
            Support::No => "no",
            Support::Verified => "yes",
            Support::Unverified(_) => "yes?",
            Support::Failed(_) => "FAILED",
        }
    }
    pub fn note(&self) -> Option<&str> {
        match self {
            Support::Unverified(n) | Support::Failed(n) => Some(n),
            _ => None,
        }
    }
}

/// thttpd's feature columns for one server.
#[derive(Clone, Debug)]
pub struct Features {
    pub basic_auth: Support,
    pub chroot: Support,
    pub throttling: Support,
}

/// What the lab configures for each server (the others are `No`).
pub fn configures(kind: Kind) -> (bool, bool, bool) {
    match kind {
        Kind::Builtin | Kind::BuiltinNoCache => (true, true, true),
        Kind::Nginx => (true, false, true),
        Kind::Lighttpd => (true, true, true),
        Kind::Apache => (true, true, true),
        Kind::H2o => (true, false, true),
        Kind::Caddy => (true, false, false),
        Kind::MiniHttpd => (true, true, false),
    }
}

/// Basic auth: the protected page is refused without credentials (401), refused with a wrong
/// password, and served byte for byte with the right ones.
pub fn check_basic_auth(addr: SocketAddr, tls: Option<&Arc<ClientConfig>>) -> Support {
    let limit = Duration::from_secs(5);
    let want = lab_file_bytes(PRIVATE_PATH);
    let get = |auth| fetch_over(addr, tls, PRIVATE_PATH, auth, limit);
    let none = get(None);
    let wrong = get(Some((AUTH_USER, "wrong")));
    let right = get(Some((AUTH_USER, AUTH_PASSWORD)));
    match (none, wrong, right) {
        (Ok(n), Ok(w), Ok(r))
            if n.status == 401 && w.status == 401 && r.status == 200 && r.body == want =>
        {
            Support::Verified
        }
        (Ok(n), Ok(w), Ok(r)) => Support::Failed(format!(
            "statuses without/wrong/right credentials: {}/{}/{}",
            n.status, w.status, r.status
        )),
        (n, w, r) => Support::Failed(format!(
            "request failed: {:?}",
            n.err().or(w.err()).or(r.err()).map(|e| e.to_string())
        )),
    }
}

/// Throttling: the throttled file arrives whole and takes at least half the time its limit allows
/// (an unthrottled fetch over loopback takes milliseconds).
pub fn check_throttling(addr: SocketAddr, tls: Option<&Arc<ClientConfig>>) -> Support {
    let nominal = THROTTLED_BYTES as f64 / (THROTTLE_KIB_PER_SEC as f64 * 1024.0);
    match fetch_over(
        addr,
        tls,
        THROTTLED_PATH,
        None,
        Duration::from_secs_f64(nominal * 4.0 + 5.0),
    ) {
        Ok(f)
            if f.status == 200
                && f.body.len() == THROTTLED_BYTES
                && f.elapsed.as_secs_f64() >= nominal * 0.5 =>
        {
            Support::Verified
        }
        Ok(f) => Support::Failed(format!(
            "status {}, {} bytes in {:.2}s (limit allows {nominal:.1}s)",
            f.status,
            f.body.len(),
            f.elapsed.as_secs_f64()
        )),
        Err(e) => Support::Failed(e.to_string()),
    }
}

/// Chroot: a server started with `setup.chroot` has a process whose root (/proc/PID/root) is the
/// docroot, and still serves the marker file.
pub fn check_chroot(server: &mut Server, docroot: &Path) -> Support {
    let want = docroot
        .canonicalize()
        .unwrap_or_else(|_| docroot.to_path_buf());
    // A server may open its port before the process that serves chroots (apache's child): look for
    // a few seconds.
    let deadline = Instant::now() + Duration::from_secs(5);
    let rooted = loop {
        server.note_tree();
        let rooted = procstat::tree(server.pid()).iter().any(|s| {
            std::fs::read_link(format!("/proc/{}/root", s.pid))
                .map(|r| r == want)
                .unwrap_or(false)
        });
        if rooted || Instant::now() > deadline {
            break rooted;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if !rooted {
        return Support::Failed("no server process has the docroot as its root".into());
    }
    let tls = server.tls.as_ref();
    match fetch_over(server.addr, tls, CHROOT_PATH, None, Duration::from_secs(5)) {
        Ok(f) if f.status == 200 && f.body == lab_file_bytes(CHROOT_PATH) => Support::Verified,
        Ok(f) => Support::Failed(format!("chrooted, but {CHROOT_PATH} answered {}", f.status)),
        Err(e) => Support::Failed(e.to_string()),
    }
}

/// A small directory to chroot a server into: the marker file, and the one library a threaded server
/// loads lazily after chroot (glibc's pthread_exit needs libgcc_s).
fn chroot_jail() -> anyhow::Result<tempfile::TempDir> {
    let jail = tempfile::Builder::new()
        .prefix("webstand-lab-chroot-")
        .tempdir()?;
    let marker = jail.path().join(&CHROOT_PATH[1..]);
    std::fs::create_dir_all(marker.parent().unwrap())?;
    std::fs::write(&marker, lab_file_bytes(CHROOT_PATH))?;
    for lib in [
        "/lib/x86_64-linux-gnu/libgcc_s.so.1",
        "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1",
        "/lib64/libgcc_s.so.1",
        "/lib/aarch64-linux-gnu/libgcc_s.so.1",
    ] {
        if Path::new(lib).is_file() {
            let to = jail.path().join(&lib[1..]);
            std::fs::create_dir_all(to.parent().unwrap())?;
            std::fs::copy(lib, &to)?;
        }
    }
    make_world_readable(jail.path());
    Ok(jail)
}

/// Checks auth and throttling on a running server (started without chroot), and chroot by starting a
/// second instance chrooted into the docroot. Takes a few seconds (the throttled fetch).
pub fn check_features(server: &mut Server, setup: &Setup) -> Features {
    let (auth, chroot, throttle) = configures(server.kind());
    let basic_auth = if auth {
        check_basic_auth(server.addr, server.tls.as_ref())
    } else {
        Support::No
    };
    let throttling = if throttle {
        check_throttling(server.addr, server.tls.as_ref())
    } else {
        Support::No
    };
    let chroot = if !chroot {
        Support::No
    } else if !running_as_root() {
        Support::Unverified("chroot needs root".into())
    } else {
        match chroot_jail() {
            Err(e) => Support::Failed(format!("cannot make a chroot directory: {e:#}")),
            Ok(jail) => {
                let mut s2 = setup.clone();
                s2.chroot = true;
                s2.docroot = jail.path().to_path_buf();
                // Chroot is checked over plain HTTP: TLS is the TLS column's.
                s2.tls = None;
                match Server::start(&server.binary, &s2) {
                    Ok(mut chrooted) => {
                        let r = match check_chroot(&mut chrooted, jail.path()) {
                            Support::Failed(why) => Support::Failed(format!(
                                "{why}; log: {}",
                                chrooted.log_tail(2).replace('\n', " | ")
                            )),
                            ok => ok,
                        };
                        let _ = chrooted.stop();
                        r
                    }
                    Err(e) => Support::Failed(format!("{e:#}").replace('\n', " | ")),
                }
            }
        }
    };
    Features {
        basic_auth,
        chroot,
        throttling,
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
