//! The threads a watch follows, read from `/proc/self/task` at each of the sampler's passes for as
//! few system calls as the kernel allows, since the sampler shares the load thread's CPU when the
//! generator is pinned (docs/BENCHMARKS.md, "The diagnosis sampler's cost"):
//! - the task directory and each followed thread's `schedstat` stay open, the file read again with
//!   `pread` at offset 0 (the kernel rebuilds the text on every read from the start): no open,
//!   fstat or close per pass, and one descriptor per load thread (limits.rs's spare files);
//! - the directory is listed at each of the first [`STARTING`] passes, when the run starts its
//!   threads; after that, only when its link count changed (procfs gives a process's task directory
//!   2 + its thread count links, so one `fstat` tells that a thread started or ended), and once
//!   every [`SLOW_EVERY`] passes in case one thread ended and another began between two (a count
//!   that held still is how a 300 ms thread went unseen while other tests' threads came and went);
//! - `stat`, whose text the kernel builds from some fifty fields, is read only for the CPU the
//!   thread last ran on: at its first pass and every [`SLOW_EVERY`] passes after, opened each time.
//!
//! A pass over one load thread is two system calls (`fstat`, one `pread`), where opening, reading
//! and closing the listing and both files took nineteen.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::time::Instant;

const TASKS: &str = "/proc/self/task";
/// Every this many passes the directory is listed again and each thread's CPU read.
pub const SLOW_EVERY: u64 = 20;
/// The first passes, a quarter of a second, each list the directory.
pub const STARTING: u64 = 5;
/// Room for `stat`'s text: 52 fields of at most 20 digits and a 16-byte name.
const TEXT: usize = 2048;

/// One reading of a thread's scheduler statistics.
#[derive(Clone, Copy)]
pub struct Sched {
    pub ran_ns: u64,
    pub waited_ns: u64,
    /// The CPU it last ran on, as of its latest `stat` reading.
    pub cpu: Option<usize>,
}

/// First and last reading of one thread.
pub struct Seen {
    pub first: (Instant, Sched),
    pub last: (Instant, Sched),
}

/// One thread started after the watch, its schedstat open.
struct Followed {
    tid: u32,
    schedstat: File,
    cpu: Option<usize>,
    seen: Option<Seen>,
}

/// The threads started since the watch began: followed while they live, kept once they end.
pub struct Tasks {
    dir: Option<File>,
    links: u64,
    /// Threads older than the watch, and the sampler itself: never followed.
    ignored: BTreeSet<u32>,
    followed: BTreeMap<u32, Followed>,
    ended: Vec<Seen>,
    passes: u64,
}

impl Tasks {
    /// Follows every thread of this process that is not in `ignored` (nor the calling thread).
    pub fn new(mut ignored: BTreeSet<u32>) -> Tasks {
        // SAFETY: gettid has no arguments and cannot fail.
        ignored.insert(unsafe { libc::gettid() } as u32);
        Tasks {
            dir: File::open(TASKS).ok(),
            links: 0,
            ignored,
            followed: BTreeMap::new(),
            ended: Vec::new(),
            passes: 0,
        }
    }

    /// Reads every followed thread at `now`, first finding the threads that started since the last pass.
    pub fn pass(&mut self, now: Instant) {
        let slow = self.passes.is_multiple_of(SLOW_EVERY);
        let starting = self.passes < STARTING;
        self.passes += 1;
        let links = self.links_now();
        if slow || starting || links != self.links {
            self.links = links;
            self.follow_new();
        }
        let mut text = [0u8; TEXT];
        let mut gone = Vec::new();
        for (tid, f) in &mut self.followed {
            if f.read(now, slow, &mut text).is_none() {
                gone.push(*tid);
            }
        }
        for tid in gone {
            let seen = self.followed.remove(&tid).and_then(|f| f.seen);
            self.ended.extend(seen);
        }
    }

    /// Every thread followed, ended or not, that was read at least once.
    pub fn into_seen(self) -> Vec<Seen> {
        let live = self.followed.into_values().filter_map(|f| f.seen);
        self.ended.into_iter().chain(live).collect()
    }

    fn links_now(&self) -> u64 {
        self.dir
            .as_ref()
            .and_then(|d| d.metadata().ok())
            .map_or(0, |m| m.nlink())
    }

    fn follow_new(&mut self) {
        for tid in task_ids() {
            if self.ignored.contains(&tid) || self.followed.contains_key(&tid) {
                continue;
            }
            if let Ok(schedstat) = File::open(format!("{TASKS}/{tid}/schedstat")) {
                let f = Followed {
                    tid,
                    schedstat,
                    cpu: None,
                    seen: None,
                };
                self.followed.insert(tid, f);
            }
        }
    }
}

impl Followed {
    /// One reading, the CPU too when `with_cpu` or at the first; None once the thread has ended
    /// (procfs answers ESRCH for a thread that is gone).
    fn read(&mut self, now: Instant, with_cpu: bool, text: &mut [u8; TEXT]) -> Option<()> {
        let n = self.schedstat.read_at(text, 0).ok()?;
        let (ran_ns, waited_ns) = schedstat(&text[..n])?;
        if with_cpu || self.seen.is_none() {
            let stat = File::open(format!("{TASKS}/{}/stat", self.tid));
            let n = stat.and_then(|f| f.read_at(text, 0)).unwrap_or(0);
            self.cpu = last_cpu(&text[..n]).or(self.cpu);
        }
        let s = Sched {
            ran_ns,
            waited_ns,
            cpu: self.cpu,
        };
        match &mut self.seen {
            Some(seen) => seen.last = (now, s),
            None => {
                self.seen = Some(Seen {
                    first: (now, s),
                    last: (now, s),
                })
            }
        }
        Some(())
    }
}

/// The ids of this process's threads.
pub fn task_ids() -> BTreeSet<u32> {
    std::fs::read_dir(TASKS)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// schedstat's "ran ns, waited ns, timeslices": the first two.
fn schedstat(text: &[u8]) -> Option<(u64, u64)> {
    let mut f = std::str::from_utf8(text).ok()?.split_ascii_whitespace();
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// stat's 39th field, the CPU the thread last ran on. Fields after the command name (which may
/// hold spaces and parentheses) start at field 3.
fn last_cpu(text: &[u8]) -> Option<usize> {
    let (_, rest) = std::str::from_utf8(text).ok()?.rsplit_once(')')?;
    rest.split_ascii_whitespace().nth(36)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_used_are_parsed_and_a_name_with_parentheses_does_not_shift_them() {
        assert_eq!(schedstat(b"2861070 984731 431\n"), Some((2861070, 984731)));
        assert_eq!(schedstat(b""), None);
        let fields: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
        let stat = format!("2712 (a) b (c) {}\n", fields.join(" "));
        assert_eq!(last_cpu(stat.as_bytes()), Some(39));
        assert_eq!(last_cpu(b"2712 (short) R 1 2\n"), None);
    }

    /// A thread started after the tasks were made is followed from a pass soon after its start
    /// (the next, unless another test's thread ended meanwhile and the link count held still) to
    /// its end; the thread that made them is not.
    #[test]
    fn a_thread_is_followed_until_it_ends() {
        let mut tasks = Tasks::new(task_ids());
        // SAFETY: gettid has no arguments and cannot fail.
        let me = unsafe { libc::gettid() } as u32;
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (tell, told) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            // SAFETY: as above.
            tell.send(unsafe { libc::gettid() } as u32).unwrap();
            wait.recv()
        });
        let tid = told.recv().unwrap();
        for _ in 0..SLOW_EVERY {
            tasks.pass(Instant::now());
        }
        assert!(
            tasks.followed.contains_key(&tid),
            "followed within one slow pass"
        );
        assert!(!tasks.followed.contains_key(&me));
        go.send(()).unwrap();
        t.join().unwrap().unwrap();
        // The kernel lets a joined thread's /proc entry go a moment after the join returns.
        let gone = (0..200).any(|_| {
            tasks.pass(Instant::now());
            std::thread::sleep(std::time::Duration::from_millis(5));
            !tasks.followed.contains_key(&tid)
        });
        assert!(gone, "no longer read once ended");
        let seen = tasks.into_seen();
        assert!(
            seen.iter().any(|s| s.first.1.cpu.is_some()),
            "its CPU was read"
        );
    }
}
