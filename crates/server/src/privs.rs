//! Dropping privileges after the listeners are bound: chroot(2) into a directory, then switch to
//! an unprivileged user and its group (supplementary groups cleared). Done once, before any
//! request is read.

use anyhow::{bail, Context, Result};
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// A user's ids, looked up before chroot (the passwd database may not exist inside it).
pub struct Ids {
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
}

pub fn lookup_user(name: &str) -> Result<Ids> {
    let c = CString::new(name).context("user name contains NUL")?;
    // SAFETY: libc::passwd is integers and raw pointers, for which all-zero bytes (null) are valid.
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 << 10];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: all pointers are valid for the call; `result` points into `pwd` when found.
    let rc = unsafe {
        libc::getpwnam_r(
            c.as_ptr(),
            &mut pwd,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        )
    };
    if rc != 0 || result.is_null() {
        bail!("--user {name}: no such user");
    }
    Ok(Ids {
        uid: pwd.pw_uid,
        gid: pwd.pw_gid,
    })
}

/// The document root as seen from inside `chroot_dir` ("/srv/www" under "/srv" → "/www").
pub fn path_inside(chroot_dir: &Path, root: &Path) -> Result<PathBuf> {
    let jail = chroot_dir
        .canonicalize()
        .with_context(|| format!("--chroot {}", chroot_dir.display()))?;
    let root = root.canonicalize()?;
    let rest = root.strip_prefix(&jail).map_err(|_| {
        anyhow::anyhow!(
            "the document root {} is not inside --chroot {}",
            root.display(),
            jail.display()
        )
    })?;
    Ok(Path::new("/").join(rest))
}

/// chroot (if asked), then setgroups/setgid/setuid (if asked). Needs root for either.
pub fn drop(chroot_dir: Option<&Path>, user: Option<&Ids>) -> Result<()> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if (chroot_dir.is_some() || user.is_some()) && unsafe { libc::geteuid() } != 0 {
        bail!("--chroot and --user need the server to start as root");
    }
    if let Some(dir) = chroot_dir {
        let c =
            CString::new(dir.as_os_str().as_encoded_bytes()).context("chroot path contains NUL")?;
        // SAFETY: plain syscalls with a valid C string.
        unsafe {
            if libc::chdir(c.as_ptr()) != 0
                || libc::chroot(c.as_ptr()) != 0
                || libc::chdir(c"/".as_ptr()) != 0
            {
                bail!(
                    "chroot {}: {}",
                    dir.display(),
                    std::io::Error::last_os_error()
                );
            }
        }
    }
    if let Some(ids) = user {
        // SAFETY: plain syscalls; order matters (groups and gid while still root, uid last).
        unsafe {
            if libc::setgroups(1, &ids.gid) != 0
                || libc::setgid(ids.gid) != 0
                || libc::setuid(ids.uid) != 0
            {
                bail!("cannot switch user: {}", std::io::Error::last_os_error());
            }
            if ids.uid != 0 && libc::setuid(0) == 0 {
                bail!("privileges could be regained after switching user");
            }
        }
    }
    Ok(())
}
