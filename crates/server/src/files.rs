//! Files under the document root: opening them without ever leaving the root (openat2 with
//! RESOLVE_BENEATH, so `..` and symlinks pointing outside fail in the kernel), and the per-loop
//! cache of resolved files with their ready-made response headers (small files keep their bytes,
//! large ones keep an open descriptor for sendfile). Entries are re-checked at most once a second.

use crate::protocol::Prepared;
use crate::respond::{Head, Length};
use crate::{date, mime};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

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

/// A resolved regular file and its response headers.
pub struct Entry {
    /// The file's path relative to the root (for re-checks and CGI).
    pub rel: String,
    /// The 200 answer's head, ready in each protocol's bytes but for Date and Connection.
    pub head_200: Prepared,
    /// Content-Type, Last-Modified and ETag lines, for 206 and 304 answers.
    pub fields: Box<[u8]>,
    pub content_type: std::borrow::Cow<'static, str>,
    pub etag: Box<[u8]>,
    pub last_modified: [u8; date::HTTP_DATE_LEN],
    pub mtime: i64,
    pub size: u64,
    /// The bytes of a small file.
    pub body: Option<Arc<[u8]>>,
    /// An open descriptor for a large file (sendfile).
    pub file: Option<Arc<File>>,
    identity: Identity,
    checked_at: AtomicI64,
    /// Index of the basic-auth rule covering the URL, if any.
    pub auth: Option<usize>,
    /// Index of the throttle rule covering the URL, if any.
    pub throttle: Option<usize>,
}

impl Entry {
    /// Reads a regular file's metadata (and bytes, when small) into an entry.
    pub fn load(
        rel: String,
        file: File,
        meta: &std::fs::Metadata,
        small_max: u64,
        now: i64,
    ) -> io::Result<Entry> {
        let size = meta.len();
        let mtime = meta.mtime();
        let content_type = mime::for_name(&rel);
        let last_modified = date::format(mtime);
        let etag = format!("\"{:x}-{:x}\"", mtime, size)
            .into_bytes()
            .into_boxed_slice();
        let mut fields = Vec::with_capacity(160);
        fields.extend_from_slice(b"Content-Type: ");
        fields.extend_from_slice(content_type.as_bytes());
        fields.extend_from_slice(b"\r\nLast-Modified: ");
        fields.extend_from_slice(&last_modified);
        fields.extend_from_slice(b"\r\nETag: ");
        fields.extend_from_slice(&etag);
        fields.extend_from_slice(b"\r\n");
        let fields_200 = [b"Accept-Ranges: bytes\r\n", &fields[..]].concat();
        let head_200 = Prepared::new(&Head {
            status: 200,
            fields: &fields_200,
            length: Length::Known(size),
        });
        let (body, file) = if size <= small_max {
            let mut bytes = Vec::with_capacity(size as usize);
            (&file).take(size).read_to_end(&mut bytes)?;
            if bytes.len() as u64 != size {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "file changed while read",
                ));
            }
            (Some(Arc::from(bytes)), None)
        } else {
            (None, Some(Arc::new(file)))
        };
        Ok(Entry {
            rel,
            head_200,
            fields: fields.into_boxed_slice(),
            content_type,
            etag,
            last_modified,
            mtime,
            size,
            body,
            file,
            identity: identity(meta),
            checked_at: AtomicI64::new(now),
            auth: None,
            throttle: None,
        })
    }
}

/// What says a file is still the one cached: device, inode, size and modification time.
pub type Identity = (u64, u64, u64, i64, i64);

fn identity(meta: &std::fs::Metadata) -> Identity {
    (
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
    )
}

/// One event loop's cache: raw URL path → entry. No locks: each loop owns its own.
pub struct Cache {
    map: HashMap<Box<[u8]>, Arc<Entry>>,
    bytes: u64,
    max_bytes: u64,
    /// Entries holding an open descriptor (large files).
    open_files: usize,
}

/// Entries one loop keeps at most.
const MAX_ENTRIES: usize = 8192;
/// Large-file entries (each an open descriptor) one loop keeps at most.
const MAX_OPEN_FILES: usize = 1024;

impl Cache {
    pub fn new(max_bytes: u64) -> Cache {
        Cache {
            map: HashMap::new(),
            bytes: 0,
            max_bytes,
            open_files: 0,
        }
    }

    /// The entry for a URL path if it is still valid; re-checks the file when the entry is older than
    /// a second (and drops it when the file changed or vanished).
    pub fn get(&mut self, key: &[u8], root: &Docroot, now: i64) -> Option<Arc<Entry>> {
        let e = self.map.get(key)?;
        if e.checked_at.load(Ordering::Relaxed) != now {
            if !matches!(root.identity_now(&e.rel), Ok(id) if id == e.identity) {
                self.remove(key);
                return None;
            }
            e.checked_at.store(now, Ordering::Relaxed);
        }
        Some(e.clone())
    }

    pub fn insert(&mut self, key: &[u8], entry: Arc<Entry>) {
        self.remove(key);
        let size = entry.body.as_ref().map_or(0, |b| b.len() as u64);
        let file = usize::from(entry.file.is_some());
        if self.bytes + size > self.max_bytes
            || self.map.len() >= MAX_ENTRIES
            || self.open_files + file > MAX_OPEN_FILES
        {
            // Simple and bounded: start over rather than track recency on the hot path.
            self.map.clear();
            self.bytes = 0;
            self.open_files = 0;
        }
        self.bytes += size;
        self.open_files += file;
        self.map.insert(key.into(), entry);
    }

    fn remove(&mut self, key: &[u8]) {
        if let Some(e) = self.map.remove(key) {
            self.bytes -= e.body.as_ref().map_or(0, |b| b.len() as u64);
            self.open_files -= usize::from(e.file.is_some());
        }
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

    #[test]
    fn entries_carry_headers_and_go_stale_when_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.html"), "hello").unwrap();
        let root = Docroot::open(dir.path()).unwrap();
        let f = root.open_beneath("a.html").unwrap();
        let meta = f.metadata().unwrap();
        let e = Entry::load("a.html".into(), f, &meta, 1024, 100).unwrap();
        let mut out = Vec::new();
        let ch = crate::protocol::Channel::http1(1, true);
        ch.write_prepared(&mut out, b"Date: x\r\n", &e.head_200);
        let head = String::from_utf8(out).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.ends_with("Date: x\r\n\r\n"));
        assert!(head.contains("Content-Length: 5\r\n"));
        assert!(head.contains("Content-Type: text/html; charset=utf-8\r\n"));
        assert_eq!(&*e.body.clone().unwrap(), b"hello");
        let mut cache = Cache::new(1 << 20);
        cache.insert(b"/a.html", Arc::new(e));
        assert!(cache.get(b"/a.html", &root, 100).is_some());
        assert!(cache.get(b"/a.html", &root, 101).is_some());
        std::fs::write(dir.path().join("a.html"), "changed!").unwrap();
        assert!(cache.get(b"/a.html", &root, 102).is_none());
        // The name swapped for a symlink to a file outside the root: another identity, dropped.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("a.html"), "changed!").unwrap();
        let f = root.open_beneath("a.html").unwrap();
        let meta = f.metadata().unwrap();
        cache.insert(
            b"/a.html",
            Arc::new(Entry::load("a.html".into(), f, &meta, 1024, 103).unwrap()),
        );
        std::fs::remove_file(dir.path().join("a.html")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("a.html"), dir.path().join("a.html"))
            .unwrap();
        assert!(cache.get(b"/a.html", &root, 104).is_none());
        assert!(root.open_beneath("a.html").is_err());
    }
}
