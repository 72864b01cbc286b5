//! A process group the lab started (a server with the bridge beside it, PHP-FPM, MariaDB), and the one
//! way the lab stops one: SIGTERM to its processes, a grace period for a clean exit, then SIGKILL to
//! the whole group and to everything in its cgroup until nothing of it is left. Also what it is made
//! of now (its cgroup, or its process trees without one) and the CPU time it used.

use anyhow::{bail, Result};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};
use webstand_results::CpuTime;

use crate::cgroup::{CpuCgroup, Members, MembersFrom};
use crate::procstat;

/// How long SIGKILL may take to leave nothing behind. A killed process still tears down its
/// memory before it is gone: apache with mod_php at a large level is ~700 processes, which a
/// loaded 2-core machine took more than 3 s to finish off. The loop ends as soon as none is left,
/// so the bound costs nothing when they go at once.
const KILL_LIMIT: Duration = Duration::from_secs(10);

/// A leader (`Spawn` with group 0) and the processes started into its group after it.
#[derive(Debug)]
pub struct ProcessGroup {
    /// What it is, for messages ("nginx", "php-fpm").
    name: String,
    leader: Option<Child>,
    pgid: i32,
    /// Started into the group after the leader (a server's CGI bridge), each waited for on stop.
    others: Vec<Child>,
    /// Its own cgroup; None when none could be made.
    cgroup: Option<CpuCgroup>,
    /// Every pid seen in it, so that stopping can check each one is gone.
    seen: Vec<i32>,
    /// What the leader exited with, once it has.
    exit: Option<ExitStatus>,
}

impl ProcessGroup {
    /// The group `leader` leads (its pid is the group's id), in `cgroup` when it has one.
    pub fn new(name: &str, leader: Child, cgroup: Option<CpuCgroup>) -> ProcessGroup {
        let pgid = leader.id() as i32;
        ProcessGroup {
            name: name.to_string(),
            leader: Some(leader),
            pgid,
            others: Vec::new(),
            cgroup,
            seen: vec![pgid],
            exit: None,
        }
    }

    /// A process started into the group after its leader.
    pub fn add(&mut self, child: Child) {
        self.seen.push(child.id() as i32);
        self.others.push(child);
    }

    /// The leader's pid, which is the group's id.
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    pub fn cgroup(&self) -> Option<&CpuCgroup> {
        self.cgroup.as_ref()
    }

    /// The pid of the first process added after the leader (a server's bridge).
    pub fn first_other(&self) -> Option<i32> {
        self.others.first().map(|c| c.id() as i32)
    }

    /// Whether the leader is still running (reaped here when it has exited).
    pub fn alive(&mut self) -> bool {
        if self.exit.is_some() {
            return false;
        }
        match self.leader.as_mut().map(Child::try_wait) {
            Some(Ok(Some(status))) => {
                self.exit = Some(status);
                false
            }
            Some(Ok(None)) => true,
            _ => false,
        }
    }

    /// What the leader exited with, once it has.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.exit
    }

    /// Its processes: its cgroup, or the trees of its leader and the others; with `others` false,
    /// less the trees of the processes added after the leader.
    pub fn members(&self, others: bool) -> Members {
        let from = match &self.cgroup {
            Some(c) => MembersFrom::Cgroup(c.dir().to_path_buf()),
            None => MembersFrom::Trees(self.roots()),
        };
        let without = self.first_other().filter(|_| !others);
        Members { from, without }
    }

    fn roots(&self) -> Vec<i32> {
        let others = self.others.iter().map(|c| c.id() as i32);
        std::iter::once(self.pgid).chain(others).collect()
    }

    /// Remembers every pid in it now (a stop checks each one is gone).
    pub fn note_members(&mut self) {
        for pid in self.members(true).pids() {
            if !self.seen.contains(&pid) {
                self.seen.push(pid);
            }
        }
    }

    /// CPU time of everything it started so far: from its cgroup, or without one the sum over its
    /// live process trees (reaped children included, unreaped and orphaned ones missed).
    pub fn cpu(&self) -> CpuTime {
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

    /// Its processes still present: its process group, anything in its cgroup, and any pid ever seen
    /// in it that still has its group. Empty after a successful [`ProcessGroup::stop`].
    pub fn leftovers(&self) -> Vec<i32> {
        let mut left: Vec<i32> = procstat::group_members(self.pgid)
            .iter()
            .filter(|s| s.state != 'Z')
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

    /// SIGTERM to the leader and the others, up to `grace` for the leader to exit, then SIGKILL to
    /// the whole group and everything in its cgroup until none of it is left. Errors if any process
    /// of it is still there afterwards. Stopping a stopped group does nothing.
    pub fn stop(&mut self, grace: Duration) -> Result<()> {
        let Some(mut leader) = self.leader.take() else {
            return Ok(());
        };
        self.note_members();
        // SAFETY: kill(2) of processes the lab started (the leader, then those it added).
        unsafe { libc::kill(self.pgid, libc::SIGTERM) };
        for c in &self.others {
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(st)) = leader.try_wait() {
                self.exit.get_or_insert(st);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Whatever is left (workers, CGI programs, orphans, a leader that ignored SIGTERM).
        let deadline = Instant::now() + KILL_LIMIT;
        loop {
            let left = self.leftovers();
            let leader_done = matches!(leader.try_wait(), Ok(Some(_)));
            let others_done = self
                .others
                .iter_mut()
                .all(|c| matches!(c.try_wait(), Ok(Some(_))));
            if left.is_empty() && leader_done && others_done {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "{} left processes behind after SIGKILL: {left:?}",
                    self.name
                );
            }
            // SAFETY: as above; every pid is the group's (its process group, or its cgroup).
            unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
            for p in left {
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Ok(Some(st)) = leader.try_wait() {
            self.exit.get_or_insert(st);
        }
        crate::owner::forget_group(self.pgid);
        Ok(())
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let _ = self.stop(Duration::from_secs(5));
    }
}
