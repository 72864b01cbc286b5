//! Whose the lab's leftovers are. Every scratch directory and cgroup the lab makes is named after its
//! owner, this process: `webstand-lab-PID-START-…`, START being the process's start time from
//! /proc/PID/stat, so a pid reused by another process is never taken for a live owner. Every process
//! group the lab starts is also written down in the scratch directory it runs in (a file
//! `.webstand-group-PGID` holding the leader's start time). Two duties follow from that:
//! - [`stop_everything`]: when the lab cannot end in order (a second signal, a stop that takes too
//!   long, a panic), SIGKILL every group and cgroup this process started and remove its directories.
//! - [`clean_up_after_the_dead`]: at the start of a lab command, what a webstand killed outright
//!   (SIGKILL) left behind: the cgroups and directories of owners no longer alive. Their processes
//!   are killed, they are removed, and one line on stderr says so. A live webstand's are never
//!   touched: two lab commands may run at once.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use crate::cgroup;
use crate::procstat;

/// What every name the lab gives its directories and cgroups starts with.
pub const PREFIX: &str = "webstand-lab-";
/// The file in a scratch directory recording a process group started there.
const GROUP_FILE: &str = ".webstand-group-";

/// A process for good: its pid and start time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub pid: i32,
    pub start: u64,
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        static ME: OnceLock<Owner> = OnceLock::new();
        *ME.get_or_init(|| {
            let pid = std::process::id() as i32;
            let start = procstat::stat(pid).map_or(0, |s| s.start);
            Owner { pid, start }
        })
    }

    /// Whether the process is still the one that made the name (same pid, same start time).
    pub fn alive(self) -> bool {
        procstat::stat(self.pid).is_some_and(|s| s.start == self.start && s.state != 'Z')
    }

    /// The start of the names this owner gives: `webstand-lab-PID-START-`.
    pub fn prefix(self) -> String {
        format!("{PREFIX}{}-{}-", self.pid, self.start)
    }

    /// The owner a name made by [`Owner::prefix`] records, if it is one.
    pub fn of(name: &str) -> Option<Owner> {
        let mut parts = name.strip_prefix(PREFIX)?.splitn(3, '-');
        let pid = parts.next()?.parse().ok()?;
        let start = parts.next()?.parse().ok()?;
        parts.next()?;
        Some(Owner { pid, start })
    }
}

/// What this process started and made, for [`stop_everything`].
#[derive(Default)]
struct Made {
    groups: Vec<i32>,
    cgroups: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

fn made() -> MutexGuard<'static, Made> {
    static MADE: Mutex<Made> = Mutex::new(Made {
        groups: Vec::new(),
        cgroups: Vec::new(),
        dirs: Vec::new(),
    });
    MADE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A scratch directory of this process's under the temporary directory (`TMPDIR`), named after it:
/// `webstand-lab-PID-START-WHAT-XXXXXX`; removed when dropped, or by [`stop_everything`].
pub fn scratch_dir(what: &str) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix(&format!("{}{what}-", Owner::me().prefix()))
        .tempdir()?;
    made().dirs.push(dir.path().to_path_buf());
    Ok(dir)
}

/// Records a process group this process started (its leader `pgid`, which runs in `dir`), until
/// [`forget_group`].
pub fn record_group(pgid: i32, dir: &Path) {
    let start = procstat::stat(pgid).map_or(0, |s| s.start);
    // Without the file only a SIGKILL of the lab loses track of the group (the cgroup still has it).
    let _ = std::fs::write(dir.join(format!("{GROUP_FILE}{pgid}")), start.to_string());
    made().groups.push(pgid);
}

/// The group `pgid` has been stopped.
pub fn forget_group(pgid: i32) {
    made().groups.retain(|&g| g != pgid);
}

/// Records a cgroup this process made, until [`forget_cgroup`].
pub(crate) fn record_cgroup(dir: &Path) {
    made().cgroups.push(dir.to_path_buf());
}

pub(crate) fn forget_cgroup(dir: &Path) {
    made().cgroups.retain(|d| d != dir);
}

/// SIGKILLs every process group and everything in every cgroup this process started, removes the
/// cgroups and its scratch directories. Returns how many processes were killed.
pub fn stop_everything() -> usize {
    let (groups, cgroups, dirs) = {
        let m = made();
        (m.groups.clone(), m.cgroups.clone(), m.dirs.clone())
    };
    let mut killed = 0;
    for g in groups {
        killed += kill_group(g);
    }
    for c in &cgroups {
        killed += cgroup::empty_and_remove(c);
    }
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    killed
}

/// SIGKILLs the live members of process group `pgid`; how many there were.
fn kill_group(pgid: i32) -> usize {
    let members = procstat::group_members(pgid);
    if !members.is_empty() {
        // SAFETY: kill(2) of a process group the lab started (or, after a killed lab, one its
        // scratch directory records and whose leader is not another process: see `recorded_groups`).
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
    members.len()
}

/// Finds what webstands that are no longer alive left (cgroups, and scratch directories under the
/// temporary directory), kills their processes, removes them, and says so in one line on stderr.
pub fn clean_up_after_the_dead() {
    let mut owners: Vec<i32> = Vec::new();
    let (mut killed, mut cgroups, mut dirs) = (0, 0, 0);
    let mut dead = |owner: Owner| {
        let gone = !owner.alive();
        if gone && !owners.contains(&owner.pid) {
            owners.push(owner.pid);
        }
        gone
    };
    for (owner, dir) in cgroup::ours_everywhere() {
        if dead(owner) {
            killed += cgroup::empty_and_remove(&dir);
            cgroups += 1;
        }
    }
    for (owner, dir) in scratch_dirs() {
        if dead(owner) {
            for pgid in recorded_groups(&dir) {
                killed += kill_group(pgid);
            }
            if std::fs::remove_dir_all(&dir).is_ok() {
                dirs += 1;
            }
        }
    }
    if owners.is_empty() {
        return;
    }
    // Processes just killed leave their cgroups when reaped by init: a moment later nothing is left.
    std::thread::sleep(Duration::from_millis(if killed > 0 { 50 } else { 0 }));
    let pids: Vec<String> = owners.iter().map(i32::to_string).collect();
    eprintln!(
        "webstand: cleaned up after a webstand that was killed (pid {}): {killed} processes stopped, \
         {cgroups} cgroups and {dirs} directories removed",
        pids.join(", ")
    );
}

/// The scratch directories under the temporary directory and whose they are.
fn scratch_dirs() -> Vec<(Owner, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let owner = Owner::of(e.file_name().to_str()?)?;
            e.file_type().ok()?.is_dir().then(|| (owner, e.path()))
        })
        .collect()
}

/// The process groups a dead owner's directory records, those that are still its: a group whose
/// leader's pid now names a process with another start time was reused, so its own group is gone
/// (a pid is not handed out while a group of that id has members).
fn recorded_groups(dir: &Path) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let pgid: i32 = name.to_str()?.strip_prefix(GROUP_FILE)?.parse().ok()?;
            let start: u64 = std::fs::read_to_string(e.path()).ok()?.trim().parse().ok()?;
            let reused = procstat::stat(pgid).is_some_and(|s| s.start != start);
            (pgid > 1 && !reused).then_some(pgid)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_records_its_owner() {
        let me = Owner::me();
        assert!(me.alive());
        let name = format!("{}nginx-Ab12Cd", me.prefix());
        assert_eq!(Owner::of(&name), Some(me));
        assert_eq!(Owner::of("webstand-lab-nginx-Ab12Cd"), None);
        assert_eq!(Owner::of("webstand-lab-12-34"), None);
        let reused = Owner {
            pid: me.pid,
            start: me.start + 1,
        };
        assert!(!reused.alive(), "a pid with another start time is another process");
    }
}
