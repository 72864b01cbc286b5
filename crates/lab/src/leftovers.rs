//! What the lab leaves when it cannot end in order, and what a killed webstand left (`owner` says
//! whose each directory, cgroup and process group is):
//! - [`stop_everything`]: when this process must end at once (a second signal, a stop that takes too
//!   long, a panic), SIGKILL every group and cgroup it started and remove its directories.
//! - [`clean_up_after_the_dead`]: at the start of a lab command, what a webstand killed outright
//!   (SIGKILL) left behind: the cgroups and directories of owners no longer alive. Their processes
//!   are killed, they are removed, and one line on stderr says so. A live webstand's are never
//!   touched: two lab commands may run at once.

use std::path::{Path, PathBuf};

use crate::cgroup;
use crate::owner::{self, Owner, GROUP_FILE};
use crate::procstat;

/// SIGKILLs every process group and everything in every cgroup this process started, removes the
/// cgroups and its scratch directories. Returns how many processes were killed.
pub fn stop_everything() -> usize {
    let (groups, cgroups, dirs) = owner::made_so_far();
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
            let start: u64 = std::fs::read_to_string(e.path())
                .ok()?
                .trim()
                .parse()
                .ok()?;
            let reused = procstat::stat(pgid).is_some_and(|s| s.start != start);
            (pgid > 1 && !reused).then_some(pgid)
        })
        .collect()
}
