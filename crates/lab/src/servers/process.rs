//! A server the lab started: its config written into a temporary directory of its own (the worker
//! user's when the lab is root, `users`), started in the foreground pinned to CPUs as the leader of its
//! own process group and in its own cgroup (`cgroup`: its CPU time, orphans included), with fcgiwrap
//! beside it for servers without CGI of their own, stdout and stderr captured in that directory;
//! ready once its port answers; stopped with nothing left behind.

use anyhow::{anyhow, bail, Context};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};
use webstand_engine::CpuTime;

use super::config::{self, Launch};
use super::{running_as_root, Binary, Kind};
use crate::cgroup::{CpuCgroup, CpuSource, Members, MembersFrom};
use crate::limits::Limits;
use crate::procstat;
use crate::spawn::Spawn;
use crate::tls::LabCert;
use crate::users;
use rustls::ClientConfig;
use std::sync::Arc;

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
    /// Serve HTTP/2 too: by ALPN with `tls`, by prior knowledge (h2c) on the plain port without.
    pub h2: bool,
    /// PHP-FPM to pass `.php` to, when the run has PHP workloads.
    pub php: Option<crate::php::pass::Pass>,
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
            h2: false,
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
        let launch = config::launch(
            binary,
            &docroot,
            w,
            (port, setup.chroot),
            setup.limits,
            config::Protocols {
                tls: cert,
                h2: setup.h2,
            },
            setup.php.as_ref(),
        )
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

    /// Starts the server (leader of a new process group) and its bridge (in that group, as the
    /// worker user, on a socket the lab bound).
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
            user: users::worker().filter(|_| launch.as_worker),
            listener: None,
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
                group: self.pgid,
                cgroup: self.cgroup.as_ref(),
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
        bridge: Option<&config::Bridge>,
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

    pub(super) fn note_tree(&mut self) {
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
        crate::owner::forget_group(self.pgid);
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
