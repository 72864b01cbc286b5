//! One backend process the lab runs behind its web servers (PHP-FPM, MariaDB): started in the
//! foreground like a server (`spawn`: its own process group and cgroup, pinned, killed with the lab),
//! ready when its Unix socket appears, its CPU time read from its cgroup (the /proc tree without one),
//! stopped as the lab stops every process group it started (`crate::group`), with a longer grace for
//! a clean exit; dropping it stops it.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use webstand_results::CpuTime;

use crate::cgroup::CpuCgroup;
use crate::group::ProcessGroup;
use crate::spawn::Spawn;

/// How long a backend may take to exit after SIGTERM (MariaDB flushes its tables).
const GRACE: Duration = Duration::from_secs(10);

/// A running backend process.
pub struct Daemon {
    name: &'static str,
    group: ProcessGroup,
    log: PathBuf,
    /// The command line it was started with, as a shell line.
    pub shown: String,
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Daemon({} pid {})", self.name, self.group.pgid())
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
            group: ProcessGroup::new(name, child, cgroup),
            log,
            shown,
        };
        let deadline = Instant::now() + limit;
        while !socket.exists() {
            if !d.group.alive() {
                let st = d.group.exit_status().map(|s| s.to_string());
                let tail = d.log_tail(8);
                let _ = d.stop();
                bail!(
                    "{name} exited ({}); its log ends:\n{tail}",
                    st.unwrap_or_default()
                );
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
        self.group.pgid()
    }

    /// The pids it has now: its cgroup, or its process tree.
    pub fn pids(&self) -> Vec<i32> {
        self.group.members(true).pids()
    }

    /// CPU time of everything it ran so far.
    pub fn cpu(&self) -> CpuTime {
        self.group.cpu()
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
        self.group.stop(GRACE)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
