//! Who what the lab starts runs as. Run as root, the lab gives root to nothing that does not need it:
//! the servers drop to the worker user (www-data where it exists, else nobody) once they have bound
//! their port, as each does on its own; what runs a request's code (PHP-FPM's pool, fcgiwrap and its
//! CGI programs, php-cli) runs as that user too; MariaDB as its own (`mysql`). The sockets and
//! directories between them belong to root and the worker's group (0660, 0750): the servers that
//! need them reach them, other local users do not. Run as another user, everything is that user's
//! already, and these modes are its own (0600, 0700).

use nix::unistd::{self, Gid, Group, Uid, User};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A user and its primary group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    /// The primary group's name.
    pub group: String,
}

/// Whether the lab runs as root.
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The servers' unprivileged worker when the lab runs as root (None otherwise: nothing to drop).
pub fn worker() -> Option<&'static Account> {
    static WORKER: OnceLock<Option<Account>> = OnceLock::new();
    WORKER
        .get_or_init(|| {
            running_as_root()
                .then(|| lookup("www-data").or_else(|| lookup("nobody")))
                .flatten()
        })
        .as_ref()
}

/// The user MariaDB runs as when the lab runs as root: its own (`mysql`, which Debian's package
/// makes), else the worker.
pub fn database() -> Option<Account> {
    running_as_root()
        .then(|| lookup("mysql").or_else(|| worker().cloned()))
        .flatten()
}

/// The user `name` and its primary group, from the passwd and group databases.
pub fn lookup(name: &str) -> Option<Account> {
    let user = User::from_name(name).ok().flatten()?;
    let group = Group::from_gid(user.gid)
        .ok()
        .flatten()
        .map_or_else(|| user.gid.to_string(), |g| g.name);
    Some(Account {
        name: user.name,
        uid: user.uid.as_raw(),
        gid: user.gid.as_raw(),
        group,
    })
}

/// Makes `path` reachable by the worker's group only: root-owned with the worker's group and `mode`
/// (0750 for a directory, 0640 for a file, 0660 for a socket) as root; the lab user's alone (the
/// group bits cleared) otherwise.
pub fn share(path: &Path, mode: u32) -> io::Result<()> {
    let mode = match worker() {
        Some(w) => {
            chown(path, 0, w.gid)?;
            mode
        }
        None => mode & 0o700,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Gives the directory `dir` to `account` (and the worker's group, 0750): where a process that runs
/// as that user writes.
pub fn give(dir: &Path, account: &Account) -> io::Result<()> {
    let gid = worker().map_or(account.gid, |w| w.gid);
    chown(dir, account.uid, gid)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o750))
}

/// As root, the first directory from `/` down to `dir` that the worker user cannot enter, with its
/// mode: the servers, once they dropped root, could not reach anything under it.
pub fn barred(dir: &Path) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    let w = worker()?;
    let mut ancestors: Vec<&Path> = dir.ancestors().collect();
    ancestors.reverse();
    ancestors.into_iter().find_map(|d| {
        let m = std::fs::metadata(d).ok()?;
        let mode = m.mode() & 0o7777;
        let enters = (m.uid() == w.uid && mode & 0o100 != 0)
            || (m.gid() == w.gid && mode & 0o010 != 0)
            || mode & 0o001 != 0;
        (!enters).then(|| (d.to_path_buf(), mode))
    })
}

fn chown(path: &Path, uid: libc::uid_t, gid: libc::gid_t) -> io::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
}

/// For `Command::pre_exec`, after everything that needs root: become `account` (its group alone as
/// the supplementary groups). Only setgroups, setgid and setuid: async-signal-safe.
pub fn become_user(account: &Account) -> io::Result<()> {
    let gid = Gid::from_raw(account.gid);
    // Groups and gid while still root, uid last.
    unistd::setgroups(&[gid])?;
    unistd::setgid(gid)?;
    unistd::setuid(Uid::from_raw(account.uid))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_has_uid_zero_and_a_missing_user_is_none() {
        let root = lookup("root").expect("root is in every passwd");
        assert_eq!((root.uid, root.gid, root.group.as_str()), (0, 0, "root"));
        assert_eq!(lookup("no-such-user-webstand"), None);
        assert_eq!(worker().is_some(), running_as_root());
        if let Some(w) = worker() {
            assert_ne!(w.uid, 0, "{w:?}");
        }
    }

    /// As root, a directory of root's that others may not enter bars the worker, and so does
    /// everything under it; once searchable it does not. Without root nothing is barred.
    #[test]
    fn a_private_directory_bars_the_worker() {
        let top = tempfile::tempdir().unwrap();
        let inner = top.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        std::fs::set_permissions(top.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let barred_at = barred(&inner).map(|(d, mode)| (d, mode & 0o777));
        if worker().is_none() {
            assert_eq!(barred_at, None);
            return;
        }
        assert_eq!(barred_at, Some((top.path().to_path_buf(), 0o700)));
        std::fs::set_permissions(top.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(barred(&inner), None);
    }
}
