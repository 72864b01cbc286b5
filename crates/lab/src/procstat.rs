//! CPU time and resident memory of a process tree, read from /proc: what a server costs per request.
//!
//! A server is a process and everything it spawned (nginx's workers, apache's children and CGI
//! programs, mini_httpd's fork per request). The tree is found by walking parent links in
//! `/proc/*/stat` from the root; each live process is counted once. A child that already exited and was
//! reaped by a parent that waited for it is counted through the parent's `cutime`/`cstime`; a child
//! nobody waits for (a parent ignoring SIGCHLD, like apache's mod_cgid daemon) or one orphaned out of
//! the tree (like mini_httpd's CGI relay) is lost. That is why the lab counts a server's CPU time with
//! a cgroup (`cgroup`) and uses this sum only where it cannot make one.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use webstand_results::CpuTime;

/// The fields of `/proc/PID/stat` the lab needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    /// State letter (R, S, Z …).
    pub state: char,
    /// Clock ticks: own user and system time, and that of reaped children.
    pub utime: u64,
    pub stime: u64,
    pub cutime: u64,
    pub cstime: u64,
    /// When the process started, in clock ticks since boot: with the pid, names one process for good
    /// (a pid is reused, the pair never is).
    pub start: u64,
}

/// Parses one `/proc/PID/stat` line. The command name sits in parentheses and may itself hold spaces
/// or parentheses, so the fields are counted from the last `)`.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    let rest: Vec<&str> = line.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    let field = |n: usize| rest.get(n - 3).and_then(|s| s.parse::<i64>().ok());
    Some(Stat {
        pid,
        state: rest.first()?.chars().next()?,
        ppid: field(4)? as i32,
        pgrp: field(5)? as i32,
        utime: field(14)?.max(0) as u64,
        stime: field(15)?.max(0) as u64,
        cutime: field(16)?.max(0) as u64,
        cstime: field(17)?.max(0) as u64,
        start: field(22)?.max(0) as u64,
    })
}

/// One process's stat, or None when it is gone.
pub fn stat(pid: i32) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process on the machine (those that vanish while listing are skipped).
pub fn all_processes() -> Vec<Stat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .collect()
}

/// `root` and all its live descendants, each once, root first.
pub fn tree(root: i32) -> Vec<Stat> {
    let all = all_processes();
    let mut children: HashMap<i32, Vec<&Stat>> = HashMap::new();
    for s in &all {
        children.entry(s.ppid).or_default().push(s);
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let Some(first) = all.iter().find(|s| s.pid == root) else {
        return out;
    };
    let mut todo = vec![first];
    while let Some(s) = todo.pop() {
        if !seen.insert(s.pid) {
            continue;
        }
        out.push(*s);
        if let Some(kids) = children.get(&s.pid) {
            todo.extend(kids.iter().copied());
        }
    }
    out
}

/// Live processes whose process group is `pgrp` (what a server's group kill must leave empty).
pub fn group_members(pgrp: i32) -> Vec<Stat> {
    all_processes()
        .into_iter()
        .filter(|s| s.pgrp == pgrp && s.state != 'Z')
        .collect()
}

fn ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

fn ticks(t: u64) -> Duration {
    Duration::from_nanos(t.saturating_mul(1_000_000_000) / ticks_per_sec())
}

/// User and system CPU time used so far by `root`'s tree, reaped children included.
/// Take it before and after a run; the difference is what the run cost.
pub fn tree_cpu(root: i32) -> CpuTime {
    let (mut user, mut sys) = (0u64, 0u64);
    for s in tree(root) {
        user += s.utime + s.cutime;
        sys += s.stime + s.cstime;
    }
    CpuTime {
        user: ticks(user),
        sys: ticks(sys),
    }
}

/// `after − before`, clamped at zero (a process of the tree that exited unreaped takes its time away).
pub fn cpu_delta(before: CpuTime, after: CpuTime) -> CpuTime {
    CpuTime {
        user: after.user.saturating_sub(before.user),
        sys: after.sys.saturating_sub(before.sys),
    }
}

/// A numeric field of `/proc/PID/status`: a `kB` one (VmRSS, VmHWM …) in KiB, or a count (Threads).
pub fn status_kib(pid: i32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(field)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// Resident memory of these processes right now: the sum of VmRSS (shared pages count once per
/// process, as `ps` shows them), and the largest single VmHWM (a process's own peak).
pub fn rss_kib(pids: &[i32]) -> (u64, u64) {
    let sum = pids.iter().filter_map(|&p| status_kib(p, "VmRSS")).sum();
    let hwm = pids
        .iter()
        .filter_map(|&p| status_kib(p, "VmHWM"))
        .max()
        .unwrap_or(0);
    (sum, hwm)
}

/// How many of these processes are alive and how many threads they have (a server's model, as seen).
pub fn shape(pids: &[i32]) -> (usize, usize) {
    let threads: Vec<usize> = pids
        .iter()
        .filter_map(|&p| status_kib(p, "Threads").map(|t| t as usize))
        .collect();
    (threads.len(), threads.iter().sum())
}

/// A function listing a server's processes (its cgroup, or its process trees).
pub type Lister = Box<dyn Fn() -> Vec<i32> + Send + Sync>;

/// Samples the resident memory of a set of processes in the background and keeps the peak. The peak
/// reported is the larger of the highest sampled sum of VmRSS and the highest single VmHWM: both are
/// moments the processes really reached, so neither overstates it.
pub struct RssSampler {
    list: std::sync::Arc<Lister>,
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl RssSampler {
    pub fn start(list: Lister, every: Duration) -> RssSampler {
        let list = Arc::new(list);
        let peak = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s, l) = (peak.clone(), stop.clone(), list.clone());
        let handle = std::thread::Builder::new()
            .name("rss-sampler".into())
            .spawn(move || {
                // It shares the generator's CPU: the processes are listed only every fourth sample
                // (a tree means a scan of the whole of /proc), their status files read in between.
                let mut pids: Vec<i32> = Vec::new();
                let mut n = 0u32;
                while !s.load(Ordering::Relaxed) {
                    if n.is_multiple_of(4) {
                        pids = l();
                    }
                    n += 1;
                    let sum: u64 = pids
                        .iter()
                        .filter_map(|&pid| status_kib(pid, "VmRSS"))
                        .sum();
                    let hwm = pids
                        .iter()
                        .filter_map(|&pid| status_kib(pid, "VmHWM"))
                        .max()
                        .unwrap_or(0);
                    p.fetch_max(sum.max(hwm), Ordering::Relaxed);
                    std::thread::park_timeout(every);
                }
            })
            .ok();
        RssSampler {
            list,
            peak,
            stop,
            handle,
        }
    }

    /// The peak so far, in KiB.
    pub fn peak_kib(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Stops sampling (at once, not after the current pause) and returns the peak in KiB, with one
    /// last sample.
    pub fn finish(mut self) -> u64 {
        self.halt();
        let (sum, hwm) = rss_kib(&(self.list)());
        self.peak.fetch_max(sum.max(hwm), Ordering::Relaxed);
        self.peak_kib()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn parses_a_stat_line_whose_name_has_spaces_and_parens() {
        let line =
            "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 12 3 20 0 1 0 8123 0 0";
        let s = parse_stat(line).unwrap();
        assert_eq!((s.pid, s.ppid, s.pgrp, s.state), (4242, 1, 4242, 'S'));
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (250, 75, 12, 3));
        assert_eq!(s.start, 8123);
        assert!(parse_stat("garbage").is_none());
    }

    /// A shell that keeps two busy children: the tree has all three, each once, and its CPU time
    /// grows while they spin, then includes the reaped children after they exit.
    #[test]
    fn counts_a_real_process_tree_and_its_reaped_children() {
        // Each child spins, then waits for a line (or EOF) on the test's pipe (fd 3: a background
        // job's stdin is /dev/null), so all three live until the test has looked, however slowly a
        // loaded machine starts them.
        let spin = "(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; read x <&3)";
        let script = format!("exec 3<&0; {spin} & {spin} & exec 3<&-; wait; exec sleep 5");
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let root = child.id() as i32;
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let procs = loop {
            let procs = tree(root);
            if procs.len() >= 3 || std::time::Instant::now() > deadline {
                break procs;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let pids: HashSet<i32> = procs.iter().map(|s| s.pid).collect();
        assert_eq!(pids.len(), procs.len(), "a process counted twice");
        assert!(
            procs.len() >= 3,
            "expected the shell and two busy children, saw {procs:?}"
        );
        assert_eq!(procs[0].pid, root);
        // EOF on the pipe: both children end once they have spun.
        drop(child.stdin.take());

        let lister: Lister = Box::new(move || tree(root).iter().map(|s| s.pid).collect());
        let sampler = RssSampler::start(lister, Duration::from_millis(20));
        // Wait for the busy children to finish and be reaped (the tree shrinks to the shell, now `sleep`).
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while tree(root).len() > 1 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let cpu = tree_cpu(root);
        let own = stat(root).unwrap();
        assert!(
            cpu.total() >= ticks(own.utime + own.stime) + Duration::from_millis(50),
            "the reaped children's time is missing: tree {cpu:?}, shell alone {own:?}"
        );
        assert!(cpu_delta(CpuTime::default(), cpu).total() == cpu.total());
        let peak = sampler.finish();
        assert!(
            peak > 100,
            "a shell's resident memory is more than 100 KiB, sampled {peak}"
        );
        assert!(status_kib(root, "VmRSS").unwrap() > 0);
        assert_eq!(shape(&[root]), (1, 1), "the shell is now a lone `sleep`");

        child.kill().unwrap();
        child.wait().unwrap();
        assert!(tree(root).is_empty());
        assert!(stat(root).is_none());
    }
}
