//! Whose the lab's directories, cgroups and process groups are. Every scratch directory and cgroup
//! the lab makes is named after its owner, this process: `webstand-lab-PID-START-…`, START being the
//! process's start time from /proc/PID/stat, so a pid reused by another process is never taken for a
//! live owner. Every process group the lab starts is also written down in the scratch directory it
//! runs in (a file `.webstand-group-PGID` holding the leader's start time). This process keeps a list
//! of all three for as long as they exist; `leftovers` acts on them.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::procstat;

/// What every name the lab gives its directories and cgroups starts with.
pub const PREFIX: &str = "webstand-lab-";
/// The file in a scratch directory recording a process group started there.
pub(crate) const GROUP_FILE: &str = ".webstand-group-";

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
/// `webstand-lab-PID-START-WHAT-XXXXXX`; removed when dropped (or by `leftovers`).
pub fn scratch_dir(what: &str) -> std::io::Result<tempfile::TempDir> {
    let tmp = std::env::temp_dir();
    if let Some((barred, mode)) = crate::users::barred(&tmp) {
        let user = crate::users::worker().map_or("", |w| w.name.as_str());
        return Err(std::io::Error::other(format!(
            "{user}, which the lab's servers run as, cannot enter {} (mode {mode:o}): make it \
             searchable (chmod o+x) or set TMPDIR to a directory that is",
            barred.display()
        )));
    }
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

/// What this process has started and made so far: (process groups, cgroups, scratch directories).
pub(crate) fn made_so_far() -> (Vec<i32>, Vec<PathBuf>, Vec<PathBuf>) {
    let m = made();
    (m.groups.clone(), m.cgroups.clone(), m.dirs.clone())
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
        assert!(
            !reused.alive(),
            "a pid with another start time is another process"
        );
    }
}
