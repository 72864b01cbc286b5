//! The document root, held open as a directory descriptor (valid after chroot too): opening files
//! beneath it without ever leaving it (openat2 with RESOLVE_BENEATH, so `..` and symlinks pointing
//! outside fail in the kernel), their metadata for finding scripts, and a file's identity now (one
//! fstatat call) for the file cache's re-checks.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The document root, held open as a directory descriptor (valid after chroot too).
pub struct Docroot {
    dir: OwnedFd,
    /// The root's canonical path, for the fallback check where openat2 is missing.
    canonical: PathBuf,
}

impl Docroot {
    pub fn open(path: &Path) -> io::Result<Docroot> {
        let canonical = path.canonicalize()?;
        let dir = File::open(&canonical)?;
        Ok(Docroot {
            dir: dir.into(),
            canonical,
        })
    }

    /// Opens `rel` ("" = the root) for reading, refusing anything that resolves outside the root.
    pub fn open_beneath(&self, rel: &str) -> io::Result<File> {
        self.open_beneath_with(rel, libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY)
    }

    /// The identity of what `rel` names now, in one fstatat call: the cache's once-a-second
    /// re-check. This resolves without RESOLVE_BENEATH, which is safe because the answer is only
    /// compared with the identity of a file that was opened beneath the root: a path that now leads
    /// anywhere else gives another identity, and the entry is dropped and resolved afresh.
    pub fn identity_now(&self, rel: &str) -> io::Result<Identity> {
        with_c_path(rel, |c_rel| {
            // SAFETY: libc::stat is plain integers, for which all-zero bytes are a valid value.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: valid directory fd, NUL-terminated path, and a stat buffer to fill.
            if unsafe { libc::fstatat(self.dir.as_raw_fd(), c_rel, &mut st, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok((
                st.st_dev,
                st.st_ino,
                st.st_size as u64,
                st.st_mtime,
                st.st_mtime_nsec,
            ))
        })
    }

    /// The metadata of `rel` resolved beneath the root through an O_PATH descriptor (no real open of
    /// the file), for finding CGI programs.
    pub fn metadata_beneath(&self, rel: &str) -> io::Result<std::fs::Metadata> {
        self.open_beneath_with(rel, libc::O_PATH)?.metadata()
    }

    fn open_beneath_with(&self, rel: &str, flags: libc::c_int) -> io::Result<File> {
        let fd = with_c_path(rel, |c_rel| {
            // SAFETY: libc::open_how is plain integers, for which all-zero bytes are a valid value.
            let mut how: libc::open_how = unsafe { std::mem::zeroed() };
            how.flags = (flags | libc::O_CLOEXEC) as u64;
            how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
            // SAFETY: valid fd, NUL-terminated path, and a correctly sized open_how.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_openat2,
                    self.dir.as_raw_fd(),
                    c_rel,
                    &how as *const libc::open_how,
                    std::mem::size_of::<libc::open_how>(),
                )
            };
            Ok(fd)
        })?;
        if fd >= 0 {
            // SAFETY: the kernel just gave us this descriptor.
            return Ok(unsafe { File::from_raw_fd(fd as i32) });
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ENOSYS) {
            return Err(err);
        }
        // Kernels before 5.6: resolve in user space and check the result stays under the root.
        let full = self.canonical.join(rel).canonicalize()?;
        if !full.starts_with(&self.canonical) {
            return Err(io::Error::from_raw_os_error(libc::EXDEV));
        }
        File::open(full)
    }

    pub fn canonical(&self) -> &Path {
        &self.canonical
    }
}

/// Calls `f` with `rel` ("" = ".") as a C string, copied on the stack when short: the cache's
/// re-checks allocate nothing.
fn with_c_path<T>(
    rel: &str,
    f: impl FnOnce(*const libc::c_char) -> io::Result<T>,
) -> io::Result<T> {
    let rel = if rel.is_empty() { "." } else { rel };
    if rel.as_bytes().contains(&0) {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    let mut stack = [0u8; 512];
    let heap;
    let c_rel: &[u8] = if rel.len() < stack.len() {
        stack[..rel.len()].copy_from_slice(rel.as_bytes());
        &stack[..=rel.len()]
    } else {
        heap = [rel.as_bytes(), &[0]].concat();
        &heap
    };
    f(c_rel.as_ptr().cast())
}

/// What says a file is still the one cached: device, inode, size and modification time.
pub type Identity = (u64, u64, u64, i64, i64);

pub fn identity(meta: &std::fs::Metadata) -> Identity {
    (
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
    )
}

/// The status answering a failure to open what a request names beneath the root.
pub fn open_error_status(e: &io::Error) -> u16 {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::ENAMETOOLONG) => 404,
        // EXDEV / ELOOP: the path leaves the root through a symlink or `..`; EACCES: not readable.
        Some(libc::EXDEV) | Some(libc::ELOOP) | Some(libc::EACCES) | Some(libc::EPERM) => 403,
        Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOMEM) => 503,
        _ if e.kind() == io::ErrorKind::NotFound => 404,
        _ => 500,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_beneath_refuses_escapes() {
        let top = tempfile::tempdir().unwrap();
        let root = top.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(top.path().join("secret"), "s").unwrap();
        std::fs::write(root.join("sub/ok.txt"), "ok").unwrap();
        std::os::unix::fs::symlink("../secret", root.join("out")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("abs")).unwrap();
        std::os::unix::fs::symlink("sub/ok.txt", root.join("in")).unwrap();
        let d = Docroot::open(&root).unwrap();
        assert!(d.open_beneath("sub/ok.txt").is_ok());
        assert!(d.open_beneath("in").is_ok());
        assert!(d.open_beneath("out").is_err());
        assert!(d.open_beneath("abs").is_err());
        assert!(d.open_beneath("../secret").is_err());
        assert!(d.open_beneath("").unwrap().metadata().unwrap().is_dir());
    }
}
