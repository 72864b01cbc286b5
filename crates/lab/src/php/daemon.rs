//! One backend process the lab runs behind its web servers (PHP-FPM, MariaDB): started in the
//! foreground like a server (`spawn`: its own process group and cgroup, pinned, killed with the lab),
//! ready when its Unix socket appears, its CPU time read from its cgroup (the /proc tree without one),
//! stopped with SIGTERM, then SIGKILL to its group and its cgroup; dropping it stops it.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};
use webstand_engine::CpuTime;

use crate::cgroup::CpuCgroup;
use crate::procstat;
use crate::servers::find_program;
use crate::spawn::Spawn;

/// A program a backend needs (a name looked up as the lab finds servers, or a path), or the one line
/// saying how to install it.
pub fn require(program: &str, package: &str) -> Result<PathBuf> {
    let found = if program.contains('/') {
        Some(PathBuf::from(program)).filter(|p| p.is_file())
    } else {
        find_program(program)
    };
    found.ok_or_else(|| {
        anyhow!("{program}: not installed (apt-get install {package}, or scripts/install-deps.sh)")
    })
}

/// A running backend process.
pub struct Daemon {
    name: &'static str,
    child: Option<Child>,
    pgid: i32,
    cgroup: Option<CpuCgroup>,
    log: PathBuf,
    /// The command line it was started with, as a shell line.
    pub shown: String,
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Daemon({} pid {})", self.name, self.pgid)
    }
}

impl Daemon {
    /// Starts `program` with `args` in `dir` (its output appended to `dir/<name>.out`), and waits up
    /// to `limit` for `socket` to appear. A process that exits first, or a socket that never comes,
    /// is an error with the end of its log.
    pub fn start(
        name: &'static str,
        program: &Path,
        args: &[String],
        dir: &Path,
        cpus: Option<&[usize]>,
        socket: &Path,
        limit: Duration,
    ) -> Result<Daemon> {
        let log = dir.join(format!("{name}.out"));
        let cgroup = CpuCgroup::create(name).ok();
        let spawn = Spawn {
            program,
            args,
            env: &[],
            dir,
            log: &log,
            cpus,
            group: 0,
            cgroup: cgroup.as_ref(),
            // Each drops root itself after its start (PHP-FPM's pool, mariadbd's --user).
            user: None,
            listener: None,
        };
        let shown = spawn.shown();
        let child = spawn
            .start()
            .with_context(|| format!("cannot run {}", program.display()))?;
        let mut d = Daemon {
            name,
            pgid: child.id() as i32,
            child: Some(child),
            cgroup,
            log,
            shown,
        };
        let deadline = Instant::now() + limit;
        while !socket.exists() {
            if let Some(Ok(Some(st))) = d.child.as_mut().map(Child::try_wait) {
                d.child = None;
                bail!("{name} exited ({st}); its log ends:\n{}", d.log_tail(8));
            }
            if Instant::now() > deadline {
                let tail = d.log_tail(8);
                let _ = d.stop();
                bail!(
                    "{name} did not open {} within {limit:?}; its log ends:\n{tail}",
                    socket.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(d)
    }

    pub fn pid(&self) -> i32 {
        self.pgid
    }

    /// The pids it has now: its cgroup, or its process tree.
    pub fn pids(&self) -> Vec<i32> {
        match &self.cgroup {
            Some(c) => c.pids(),
            None => procstat::tree(self.pgid).iter().map(|s| s.pid).collect(),
        }
    }

    /// CPU time of everything it ran so far.
    pub fn cpu(&self) -> CpuTime {
        if let Some(Ok(t)) = self.cgroup.as_ref().map(CpuCgroup::cpu) {
            return t;
        }
        procstat::tree_cpu(self.pgid)
    }

    /// The last `lines` lines of its output and log files in its directory.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read(&self.log)
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
        let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// SIGTERM, up to ten seconds for a clean exit (MariaDB flushes its tables), then SIGKILL to its
    /// group and its cgroup. Errors when a process of it is still there afterwards.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.pgid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let mut left: Vec<i32> = procstat::group_members(self.pgid)
                .iter()
                .filter(|s| s.state != 'Z')
                .map(|s| s.pid)
                .collect();
            if let Some(c) = &self.cgroup {
                left.extend(c.kill_all(Duration::from_millis(200)));
            }
            let done = matches!(child.try_wait(), Ok(Some(_)));
            if left.is_empty() && done {
                crate::owner::forget_group(self.pgid);
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "{} left processes behind after SIGKILL: {left:?}",
                    self.name
                );
            }
            // SAFETY: the group is the daemon's own (it leads it).
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
