//! A server's processes and their CPU time, counted by a cgroup of its own: the server joins it between
//! fork and exec, so everything it ever starts is in it (workers, CGI programs, a bridge's children,
//! and orphans nobody waits for, whose time never reaches a parent's `cutime`), and the kernel charges
//! their CPU to it as they run. cgroup v1's `cpuacct` controller where it is mounted, else cgroup v2's
//! `cpu.stat`; without either (no cgroup file system, or not allowed to write it) the caller falls
//! back to summing the live process trees from /proc (`procstat`), and says so.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use webstand_results::{CpuSource, CpuTime};

use crate::owner::{self, Owner};
use crate::procstat;

/// A server's processes: everything in its cgroup, or without one its live process trees; less the
/// tree of `without` (a CGI bridge, which has no part in a static workload's memory or shape).
#[derive(Clone, Debug)]
pub struct Members {
    pub from: MembersFrom,
    pub without: Option<i32>,
}

#[derive(Clone, Debug)]
pub enum MembersFrom {
    Cgroup(PathBuf),
    Trees(Vec<i32>),
}

impl Members {
    /// The pids now, each once.
    pub fn pids(&self) -> Vec<i32> {
        let tree = |root: i32| procstat::tree(root).into_iter().map(|s| s.pid);
        let mut pids: Vec<i32> = match &self.from {
            MembersFrom::Cgroup(dir) => pids_in(dir),
            MembersFrom::Trees(roots) => roots.iter().flat_map(|&r| tree(r)).collect(),
        };
        if let Some(root) = self.without {
            let skip: Vec<i32> = tree(root).collect();
            pids.retain(|p| !skip.contains(p));
        }
        pids.sort_unstable();
        pids.dedup();
        pids
    }
}

/// A cgroup made for one server; removed when dropped (after killing anything still in it).
#[derive(Debug)]
pub struct CpuCgroup {
    dir: PathBuf,
    source: CpuSource,
    /// `cgroup.procs`, open for writing: a child writes "0" to it to join (see [`CpuCgroup::join`]).
    procs: File,
}

static MADE: AtomicUsize = AtomicUsize::new(0);

impl CpuCgroup {
    /// A new cgroup named after `label`, v1 cpuacct first, then v2. The error says why neither works.
    pub fn create(label: &str) -> Result<CpuCgroup, String> {
        let v1 = CpuCgroup::create_as(CpuSource::CgroupV1, label);
        v1.or_else(|e1| {
            CpuCgroup::create_as(CpuSource::CgroupV2, label).map_err(|e2| format!("{e1}; {e2}"))
        })
    }

    /// A new cgroup of the given kind (`CgroupV1` or `CgroupV2`) under this process's own, named
    /// after this process (`owner`: whose it is, if the lab is killed before it removes it).
    pub fn create_as(source: CpuSource, label: &str) -> Result<CpuCgroup, String> {
        let parent = own_cgroup_dir(source)?;
        let name = format!(
            "{}{label}-{}",
            Owner::me().prefix(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let procs = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("cgroup.procs"));
        match procs {
            Ok(procs) => {
                owner::record_cgroup(&dir);
                Ok(CpuCgroup { dir, source, procs })
            }
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(format!("cannot write {}/cgroup.procs: {e}", dir.display()))
            }
        }
    }

    pub fn source(&self) -> CpuSource {
        self.source
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// For `Command::pre_exec`: moves the calling process into the cgroup. Only `write(2)` on a
    /// descriptor opened before the fork, so it is async-signal-safe.
    pub fn join(&self) -> impl Fn() -> io::Result<()> + Send + Sync + 'static {
        let fd = self.procs.as_raw_fd();
        move || {
            // SAFETY: `fd` stays open in the child until exec (the parent holds the File while it
            // spawns); writing "0" to cgroup.procs moves the writer itself.
            let n = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
            if n == 1 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        }
    }

    /// CPU time charged to the cgroup so far: every process that ever ran in it. The total is the
    /// scheduler's exact runtime (`cpuacct.usage`, `usage_usec`); the user/system split is the tick-sampled
    /// one scaled to it (on this project's VM `cpuacct.usage_user` + `usage_sys` measured 28 ms against
    /// 310 ms of `cpuacct.usage` for a process busy 0.3 s, so they are never summed).
    pub fn cpu(&self) -> io::Result<CpuTime> {
        let read = |f: &str| std::fs::read_to_string(self.dir.join(f));
        let bad = |f: &str| io::Error::other(format!("{f}: unexpected contents"));
        let (total_ns, user, sys) = match self.source {
            CpuSource::CgroupV2 => {
                let text = read("cpu.stat")?;
                let f = |k: &str| field(&text, k).ok_or_else(|| bad("cpu.stat"));
                (f("usage_usec")? * 1000, f("user_usec")?, f("system_usec")?)
            }
            _ => {
                let usage = read("cpuacct.usage")?;
                let total = usage.trim().parse().map_err(|_| bad("cpuacct.usage"))?;
                let stat = read("cpuacct.stat")?;
                let f = |k: &str| field(&stat, k).ok_or_else(|| bad("cpuacct.stat"));
                (total, f("user")?, f("system")?)
            }
        };
        let user_ns = if user + sys == 0 {
            total_ns
        } else {
            (total_ns as u128 * user as u128 / (user + sys) as u128) as u64
        };
        Ok(CpuTime {
            user: Duration::from_nanos(user_ns),
            sys: Duration::from_nanos(total_ns - user_ns),
        })
    }

    /// The live processes in the cgroup now.
    pub fn pids(&self) -> Vec<i32> {
        pids_in(&self.dir)
    }

    /// SIGKILLs everything in the cgroup until it is empty (up to `limit`); the pids still there.
    pub fn kill_all(&self, limit: Duration) -> Vec<i32> {
        kill_all_in(&self.dir, limit).1
    }
}

impl Drop for CpuCgroup {
    fn drop(&mut self) {
        empty_and_remove(&self.dir);
        owner::forget_cgroup(&self.dir);
    }
}

/// SIGKILLs everything in the cgroup at `dir` until it is empty (up to `limit`): how many processes
/// were killed, and the pids still there.
fn kill_all_in(dir: &Path, limit: Duration) -> (usize, Vec<i32>) {
    let deadline = Instant::now() + limit;
    let mut killed = Vec::new();
    loop {
        let left: Vec<i32> = pids_in(dir)
            .into_iter()
            .filter(|&p| procstat::stat(p).is_some_and(|s| s.state != 'Z'))
            .collect();
        if left.is_empty() || Instant::now() > deadline {
            return (killed.len(), left);
        }
        for p in &left {
            // SAFETY: plain kill(2) of a process in a cgroup the lab made for what it started.
            unsafe { libc::kill(*p, libc::SIGKILL) };
            if !killed.contains(p) {
                killed.push(*p);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kills everything in the cgroup at `dir` and removes it; how many processes were killed.
pub(crate) fn empty_and_remove(dir: &Path) -> usize {
    let (killed, _) = kill_all_in(dir, Duration::from_secs(2));
    // A process just killed leaves the cgroup when it is reaped: retry for a moment.
    let deadline = Instant::now() + Duration::from_secs(2);
    while std::fs::remove_dir(dir).is_err() && dir.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    killed
}

/// Every cgroup a lab made beside this process's own (v1 cpuacct and v2), and whose it is.
pub fn ours_everywhere() -> Vec<(Owner, PathBuf)> {
    let mut out = Vec::new();
    for source in [CpuSource::CgroupV1, CpuSource::CgroupV2] {
        let Ok(entries) = own_cgroup_dir(source)
            .and_then(|d| std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display())))
        else {
            continue;
        };
        for e in entries.flatten() {
            if let Some(owner) = e.file_name().to_str().and_then(Owner::of) {
                out.push((owner, e.path()));
            }
        }
    }
    out
}

/// The numeric value after `key ` on a line of a `key value` file.
fn field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        if k != key {
            return None;
        }
        v.trim().parse().ok()
    })
}

fn pids_in(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// This process's cgroup directory in the hierarchy `source` names: the mount point (from
/// /proc/self/mountinfo) joined with the path /proc/self/cgroup gives, relative to the mount's root.
fn own_cgroup_dir(source: CpuSource) -> Result<PathBuf, String> {
    let what = match source {
        CpuSource::CgroupV1 => "cgroup v1 with cpuacct",
        _ => "cgroup v2",
    };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let (root, mount) = mountinfo
        .lines()
        .find_map(|l| cgroup_mount(l, source))
        .ok_or_else(|| format!("no {what} mounted"))?;
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let path = own
        .lines()
        .find_map(|l| own_path(l, source))
        .ok_or_else(|| format!("this process is in no {what} hierarchy"))?;
    let rel = path
        .strip_prefix(&root)
        .unwrap_or(&path)
        .trim_start_matches('/');
    Ok(Path::new(&mount).join(rel))
}

/// (mount root, mount point) of a mountinfo line when it is the hierarchy `source` names.
fn cgroup_mount(line: &str, source: CpuSource) -> Option<(String, String)> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split_whitespace().collect();
    let r: Vec<&str> = right.split_whitespace().collect();
    let (fstype, options) = (*r.first()?, *r.get(2)?);
    let wanted = match source {
        CpuSource::CgroupV1 => fstype == "cgroup" && options.split(',').any(|o| o == "cpuacct"),
        _ => fstype == "cgroup2",
    };
    if !wanted {
        return None;
    }
    Some((l.get(3)?.to_string(), l.get(4)?.to_string()))
}

/// This process's path in a /proc/self/cgroup line of the hierarchy `source` names.
fn own_path(line: &str, source: CpuSource) -> Option<String> {
    let mut parts = line.splitn(3, ':');
    let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
    let wanted = match source {
        CpuSource::CgroupV1 => controllers.split(',').any(|c| c == "cpuacct"),
        _ => id == "0" && controllers.is_empty(),
    };
    wanted.then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    #[test]
    fn mount_and_membership_lines_parse() {
        let v1 = "35 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:10 - cgroup cgroup rw,cpu,cpuacct";
        let v2 = "30 25 0:26 /lab /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
        let other = "40 25 0:33 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory";
        assert_eq!(
            cgroup_mount(v1, CpuSource::CgroupV1),
            Some(("/".into(), "/sys/fs/cgroup/cpu,cpuacct".into()))
        );
        assert_eq!(cgroup_mount(v1, CpuSource::CgroupV2), None);
        assert_eq!(cgroup_mount(other, CpuSource::CgroupV1), None);
        assert_eq!(
            cgroup_mount(v2, CpuSource::CgroupV2),
            Some(("/lab".into(), "/sys/fs/cgroup".into()))
        );
        assert_eq!(
            own_path("3:cpu,cpuacct:/a/b", CpuSource::CgroupV1).as_deref(),
            Some("/a/b")
        );
        assert_eq!(own_path("4:memory:/x", CpuSource::CgroupV1), None);
        assert_eq!(
            own_path("0::/u", CpuSource::CgroupV2).as_deref(),
            Some("/u")
        );
        assert_eq!(field("usage_usec 10\nuser_usec 7\n", "user_usec"), Some(7));
    }

    /// A shell in the cgroup starts a child that burns CPU and exits, orphaned and never waited for:
    /// its time is still charged to the cgroup, and nothing is left once the cgroup is dropped.
    fn counts_an_orphan(source: CpuSource) {
        let group = CpuCgroup::create_as(source, "test").unwrap_or_else(|e| {
            panic!("the lab needs a writable cgroup ({source:?}) on this machine: {e}")
        });
        let before = group.cpu().unwrap();
        let mut cmd = Command::new("perl");
        // The child forks a grandchild that spins for 300 ms of its own CPU time, then exits at once:
        // the grandchild is an orphan nobody waits for.
        cmd.args([
            "-e",
            "if (fork() == 0) { 1 while (times())[0] + (times())[1] < 0.3; exit 0 } exit 0",
        ])
        .stdout(Stdio::null());
        let join = group.join();
        // SAFETY: the hook only calls write(2).
        unsafe { cmd.pre_exec(join) };
        cmd.status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !group.pids().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(group.pids().is_empty(), "the orphan never finished");
        let used = group.cpu().unwrap().total() - before.total();
        assert!(
            used >= Duration::from_millis(290),
            "{source:?}: the orphan's 300 ms are missing: {used:?}"
        );
        let dir = group.dir().to_path_buf();
        drop(group);
        assert!(!dir.exists(), "{} left behind", dir.display());
    }

    #[test]
    fn a_v1_cpuacct_cgroup_counts_an_orphan() {
        counts_an_orphan(CpuSource::CgroupV1);
    }

    #[test]
    fn a_v2_cgroup_counts_an_orphan() {
        counts_an_orphan(CpuSource::CgroupV2);
    }
}
