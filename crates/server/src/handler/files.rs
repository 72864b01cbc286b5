//! The per-loop cache of resolved files with their ready-made response heads (small files keep
//! their bytes, large ones keep an open descriptor for sendfile). Entries are re-checked at most
//! once a second against the file's identity now (docroot.rs).

use crate::docroot::{identity, Docroot, Identity};
use crate::response::{Head, Length, Prepared};
use crate::{date, mime};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// A resolved regular file and its response headers.
pub struct Entry {
    /// The file's path relative to the root (for re-checks and CGI).
    pub rel: String,
    /// The 200 answer's head, kept ready in each protocol's bytes.
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
    fn entries_carry_headers_and_go_stale_when_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.html"), "hello").unwrap();
        let root = Docroot::open(dir.path()).unwrap();
        let f = root.open_beneath("a.html").unwrap();
        let meta = f.metadata().unwrap();
        let e = Entry::load("a.html".into(), f, &meta, 1024, 100).unwrap();
        let head = e.head_200.head();
        assert_eq!((head.status, head.length), (200, Length::Known(5)));
        let fields = String::from_utf8(head.fields.to_vec()).unwrap();
        assert!(fields.contains("Content-Type: text/html; charset=utf-8\r\n"));
        assert!(fields.starts_with("Accept-Ranges: bytes\r\n"));
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
