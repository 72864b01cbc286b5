//! A server the lab started: its config written into a temporary directory of its own (the worker
//! user's when the lab is root, `users`), started in the foreground pinned to CPUs as the leader of its
//! own process group and in its own cgroup (`crate::group`: its CPU time, orphans included, and its
//! stop), with fcgiwrap beside it for servers without CGI of their own, stdout and stderr captured in
//! that directory; ready once its port answers; stopped with nothing left behind.

use anyhow::{anyhow, Context};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use webstand_results::CpuTime;

use super::binary::Binary;
use super::config::{Bridge, Ctx, Launch, Pass};
use super::lab_files::{bcrypt_hash, sha_hash, AUTH_USER};
use super::Kind;
use crate::cgroup::{CpuCgroup, Members};
use crate::group::ProcessGroup;
use crate::limits::Limits;
use crate::spawn::Spawn;
use crate::tls::ciphers::Versions;
use crate::tls::LabCert;
use crate::users::{self, running_as_root};
use rustls::ClientConfig;
use std::sync::Arc;
use webstand_results::CpuSource;

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
    /// The TLS versions offered with `tls` (the kind must `restricts_tls_versions` for one alone).
    pub tls_versions: Versions,
    /// Serve HTTP/2 too: by ALPN with `tls`, by prior knowledge (h2c) on the plain port without.
    pub h2: bool,
    /// Serve HTTP/3 too, on UDP at the HTTPS port (with `tls` only).
    pub h3: bool,
    /// PHP-FPM to pass `.php` to, when the run has PHP workloads.
    pub php: Option<Pass>,
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
            tls_versions: Versions::Both,
            h2: false,
            h3: false,
            php: None,
        }
    }
}

/// A server the lab started. Dropping it stops it.
pub struct Server {
    pub binary: Binary,
    pub addr: SocketAddr,
    /// The client the lab's own requests use when the server speaks HTTPS (verifies the lab's CA).
    pub tls: Option<Arc<ClientConfig>>,
    /// The server's processes, once started: it leads the group, fcgiwrap (for a server that runs
    /// CGI through it) is added to it. Dropped, so stopped, before `workdir` is removed.
    group: Option<ProcessGroup>,
    /// Why the server has no cgroup of its own, when it has none.
    cgroup_error: Option<String>,
    /// The files written and the command lines run, as (name, text).
    configs: Vec<(String, String)>,
    workdir: tempfile::TempDir,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Server({} {} on {}, pid {})",
            self.binary.kind.name(),
            self.binary.version,
            self.addr,
            self.pid()
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
        let workdir = crate::owner::scratch_dir(kind.name()).map_err(|e| fail(e.into()))?;
        if let Some(w) = users::worker() {
            // The server's own: it opens its logs and pid file there after dropping root (lighttpd,
            // h2o), caddy keeps its state there.
            users::give(workdir.path(), w).map_err(|e| fail(e.into()))?;
        }
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
        let launch = launch(binary, &docroot, w, port, setup).map_err(fail)?;
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
            group: None,
            cgroup_error,
            configs: launch.files.clone(),
            workdir,
        };
        server
            .spawn_processes(&launch, setup.cpus.as_deref(), cgroup)
            .map_err(fail)?;
        server.wait_ready(setup.start_timeout, launch.bridge.as_ref())
    }

    /// Starts the server (leader of a new process group, in `cgroup`) and its bridge (in that
    /// group, as the worker user, on a socket the lab bound).
    fn spawn_processes(
        &mut self,
        launch: &Launch,
        cpus: Option<&[usize]>,
        cgroup: Option<CpuCgroup>,
    ) -> anyhow::Result<()> {
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
            cgroup: cgroup.as_ref(),
            user: users::worker().filter(|_| launch.as_worker),
            listener: None,
        };
        let mut shown = main.shown();
        let child = main
            .start()
            .with_context(|| format!("cannot run {}", self.binary.path.display()))?;
        let group = self
            .group
            .insert(ProcessGroup::new(self.binary.kind.name(), child, cgroup));
        if let Some(b) = &launch.bridge {
            let args = b.args();
            let listener = UnixListener::bind(&b.socket)
                .with_context(|| format!("cannot listen on {}", b.socket))?;
            users::share(Path::new(&b.socket), 0o660)?;
            let bridge = Spawn {
                program: &b.program,
                args: &args,
                env: &[],
                dir: &w,
                log: &log,
                cpus,
                group: group.pgid(),
                cgroup: group.cgroup(),
                user: users::worker(),
                listener: Some(&listener),
            };
            shown = format!(
                "{shown}\n{}  # stdin: unix:{}, bound by the lab",
                bridge.shown(),
                b.socket
            );
            let child = bridge
                .start()
                .with_context(|| format!("cannot run {}", b.program.display()))?;
            group.add(child);
        }
        self.configs
            .push(("command line".into(), format!("{shown}\n")));
        Ok(())
    }

    /// Waits until the port answers (and the bridge's socket exists), or the server dies.
    fn wait_ready(
        mut self,
        limit: Duration,
        bridge: Option<&Bridge>,
    ) -> Result<Server, (anyhow::Error, bool)> {
        let kind = self.kind();
        let addr = self.addr;
        let deadline = Instant::now() + limit;
        loop {
            if !self.alive() {
                let tail = self.log_tail(12);
                let taken = tail.contains("in use") || tail.contains("EADDRINUSE");
                let status = self
                    .group
                    .as_ref()
                    .and_then(ProcessGroup::exit_status)
                    .map(|s| s.to_string())
                    .unwrap_or_default();
                let e = anyhow!(
                    "{} did not start ({status}); its log ends:\n{tail}",
                    kind.name()
                );
                return Err((e, taken));
            }
            let bridge_ready = bridge.is_none_or(|b| Path::new(&b.socket).exists());
            if bridge_ready && TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            {
                self.note_members();
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
        self.group
            .as_ref()
            .and_then(ProcessGroup::cgroup)
            .map_or(CpuSource::ProcTree, CpuCgroup::source)
    }

    /// Why the server has no cgroup of its own, when it has none.
    pub fn cgroup_error(&self) -> Option<&str> {
        self.cgroup_error.as_deref()
    }

    /// The server's processes, for sampling their memory: its cgroup, or its process trees; with
    /// `bridge` false, less its CGI bridge (idle on a static workload, and not part of its shape).
    pub fn members(&self, bridge: bool) -> Members {
        self.group
            .as_ref()
            .expect("a started server")
            .members(bridge)
    }

    pub fn kind(&self) -> Kind {
        self.binary.kind
    }

    /// The pid of the server's main process (also its process group).
    pub fn pid(&self) -> i32 {
        self.group.as_ref().map_or(0, ProcessGroup::pgid)
    }

    /// The directory holding the server's config and logs.
    pub fn workdir(&self) -> &Path {
        self.workdir.path()
    }

    /// Whether the main process is still running (it is reaped here when it has exited).
    pub fn alive(&mut self) -> bool {
        self.group.as_mut().is_some_and(ProcessGroup::alive)
    }

    /// One line on how the server ended, when it did ("exited with signal 9; log: …").
    pub fn death_note(&mut self) -> Option<String> {
        if self.alive() {
            return None;
        }
        let status = self
            .group
            .as_ref()
            .and_then(ProcessGroup::exit_status)
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
        self.note_members();
        self.group
            .as_ref()
            .map(ProcessGroup::cpu)
            .unwrap_or_default()
    }

    /// Remembers every process of the server now, so that its stop checks each one is gone.
    pub fn note_members(&mut self) {
        if let Some(g) = self.group.as_mut() {
            g.note_members();
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
        self.group
            .as_ref()
            .map(ProcessGroup::leftovers)
            .unwrap_or_default()
    }

    /// SIGTERM, up to five seconds for a clean exit, then SIGKILL to the whole group and everything in
    /// the cgroup. Errors if any process of the server is still there afterwards.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        match self.group.as_mut() {
            Some(g) => g.stop(Duration::from_secs(5)),
            None => Ok(()),
        }
    }
}

/// The files, arguments and environment that start `binary` on `doc` at `port` as `setup` says,
/// writing the password files the templates name into `w`.
fn launch(
    binary: &Binary,
    doc: &Path,
    w: &Path,
    port: u16,
    setup: &Setup,
) -> anyhow::Result<Launch> {
    let kind = binary.kind;
    std::fs::write(w.join("htpasswd"), format!("{AUTH_USER}:{}\n", sha_hash()))?;
    std::fs::write(
        w.join("htpasswd.bcrypt"),
        format!("{AUTH_USER}:{}\n", bcrypt_hash()),
    )?;
    let wd = w.display().to_string();
    let by_fcgiwrap = kind.cgi_by_fcgiwrap() && !setup.chroot;
    let bridge = by_fcgiwrap
        .then(crate::programs::fcgiwrap)
        .flatten()
        .map(|program| Bridge {
            program,
            socket: format!("{wd}/fcgiwrap.sock"),
            workers: setup.limits.cgi_workers(),
        });
    let c = Ctx {
        program: &binary.path,
        doc,
        d: doc.display().to_string(),
        wd,
        port,
        chroot: setup.chroot,
        root: running_as_root(),
        worker: users::worker(),
        limits: setup.limits,
        bridge,
        tls: setup.tls.as_deref(),
        tls_versions: setup.tls_versions,
        h2: setup.h2,
        h3: setup.h3 && setup.tls.is_some(),
        php: setup.php.clone().filter(|_| !setup.chroot),
    };
    let mut l = kind.launch(&c);
    l.bridge = c.bridge.clone();
    Ok(l)
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
