//! The deterministic benchmark docroot and its manifest.
//!
//! [`write`] lays out, under one directory: `2k.html` (Tenon's file); `small/000.html` … `small/999.html`
//! (thttpd's 1000 × 1 KiB load); the files of both WebStone lists (sizes from the 2.0.1 list's `#size`,
//! else `fileNk.html` = N × 1024 bytes; `file5k.html` is in both lists and takes 2.0.1's 5125); large
//! files under `large/` (1 MiB by default); `cgi-bin/hello` (a POSIX sh CGI program); and
//! `manifest.json` listing every file's URL path, size and SHA-256.
//!
//! The bytes are the same on every machine: each file's content comes from a generator seeded by its
//! path (SplitMix64, written out here because library RNGs do not promise stable output across
//! versions), and nothing depends on time, locale or order of writing.

use crate::webstone;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use webstand_results::BodyCheck;

/// The manifest's file name, written in the docroot beside the files.
pub const MANIFEST: &str = "manifest.json";
/// Tenon's 2 KiB file.
pub const TENON_FILE: &str = "/2k.html";
/// The CGI program's URL path.
pub const CGI_HELLO: &str = "/cgi-bin/hello";

/// What to write besides the fixed set.
#[derive(Clone, Debug)]
pub struct Options {
    /// Sizes of the files under `large/`, in bytes (each named by its size, e.g. `large/1M.bin`).
    pub large_sizes: Vec<u64>,
    /// How many 1 KiB files under `small/` (thttpd's load: 1000).
    pub small_files: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            large_sizes: vec![1 << 20],
            small_files: 1000,
        }
    }
}

/// One file of the docroot as the manifest records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// URL path, starting with `/`.
    pub path: String,
    pub size: u64,
    /// Lowercase hex SHA-256 of the file's bytes.
    pub sha256: String,
    /// A CGI program: its response body is its output, not these bytes, so it is never checksummed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cgi: bool,
}

/// The docroot's inventory, written as `manifest.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Which generator wrote the bytes; a change of content changes this.
    pub generator: String,
    pub files: Vec<Entry>,
}

const GENERATOR: &str = "webstand fixtures 1";

impl Manifest {
    /// Reads a manifest: `path` is the manifest file or the docroot holding it.
    pub fn load(path: &Path) -> Result<Manifest> {
        let file = if path.is_dir() {
            path.join(MANIFEST)
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read manifest {}", file.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not a webstand fixtures manifest", file.display()))
    }

    pub fn get(&self, url_path: &str) -> Option<&Entry> {
        self.files.iter().find(|e| e.path == url_path)
    }

    /// The expected body for a URL path (its query string ignored), when the manifest knows it.
    pub fn body_check(&self, url_path: &str) -> Option<BodyCheck> {
        let path = url_path.split('?').next().unwrap_or(url_path);
        let e = self.get(path).filter(|e| !e.cgi)?;
        Some(BodyCheck::Digest {
            len: e.size,
            sha256: parse_hex32(&e.sha256)?,
        })
    }

    /// URL paths of the small-file load (`/small/…`), in order.
    pub fn small_paths(&self) -> Vec<String> {
        self.files
            .iter()
            .filter(|e| e.path.starts_with("/small/"))
            .map(|e| e.path.clone())
            .collect()
    }
}

/// Writes the docroot into `dir` (created if missing; existing files of the same names are replaced)
/// and returns its manifest, also written to `dir/manifest.json`.
pub fn write(dir: &Path, opts: &Options) -> Result<Manifest> {
    if opts.large_sizes.contains(&0) {
        bail!("a large file size must be at least 1 byte");
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut files = Vec::new();
    for (path, size, kind) in layout(opts) {
        let bytes = match kind {
            Kind::Html => html(&path, size),
            Kind::Binary => binary(&path, size),
        };
        files.push(put(dir, &path, &bytes, false)?);
    }
    files.push(put(dir, CGI_HELLO, HELLO_CGI.as_bytes(), true)?);
    let manifest = Manifest {
        generator: GENERATOR.to_string(),
        files,
    };
    let json = serde_json::to_string_pretty(&manifest)? + "\n";
    std::fs::write(dir.join(MANIFEST), json)
        .with_context(|| format!("cannot write {}", dir.join(MANIFEST).display()))?;
    Ok(manifest)
}

/// The CGI program: a minimal "hello world", as in thttpd's CGI test.
const HELLO_CGI: &str =
    "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\nHello, world!\\n'\n";

#[derive(Clone, Copy)]
enum Kind {
    Html,
    Binary,
}

/// Every generated file: URL path, size, kind.
fn layout(opts: &Options) -> Vec<(String, u64, Kind)> {
    let mut out = vec![(TENON_FILE.to_string(), 2048, Kind::Html)];
    for i in 0..opts.small_files {
        out.push((format!("/small/{i:03}.html"), 1024, Kind::Html));
    }
    // Both WebStone lists; a size given by a list wins over the one its name implies.
    let lists = [
        webstone::preset("webstone2").unwrap(),
        webstone::preset("webstone1").unwrap(),
    ];
    for f in lists.iter().flat_map(|l| &l.files) {
        if out.iter().any(|(p, _, _)| *p == f.path) {
            continue;
        }
        let size = f
            .size
            .or_else(|| size_from_name(&f.path))
            .expect("every shipped WebStone file has a size");
        out.push((f.path.clone(), size, Kind::Html));
    }
    for &size in &opts.large_sizes {
        out.push((
            format!("/large/{}.bin", size_label(size)),
            size,
            Kind::Binary,
        ));
    }
    out
}

/// `/file12k.html` → 12 × 1024 bytes.
fn size_from_name(path: &str) -> Option<u64> {
    let kib = path.strip_prefix("/file")?.strip_suffix("k.html")?;
    Some(kib.parse::<u64>().ok()? * 1024)
}

/// A file name for a size: `1M`, `64K`, or the byte count when it is not a whole number of KiB.
pub fn size_label(size: u64) -> String {
    match size {
        s if s % (1 << 30) == 0 => format!("{}G", s >> 30),
        s if s % (1 << 20) == 0 => format!("{}M", s >> 20),
        s if s % 1024 == 0 => format!("{}K", s >> 10),
        s => s.to_string(),
    }
}

/// Parses `1048576`, `512K`, `1M`, `2G` (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => {
            bail!("bad size {text:?}: expected a number of bytes with an optional K, M or G suffix")
        }
    };
    let n: u64 = digits.parse().map_err(|_| {
        anyhow::anyhow!(
            "bad size {text:?}: expected a number of bytes with an optional K, M or G suffix"
        )
    })?;
    n.checked_mul(1 << shift)
        .filter(|&s| s > 0)
        .with_context(|| format!("bad size {text:?}: must be between 1 byte and 2^64"))
}

fn put(dir: &Path, url_path: &str, bytes: &[u8], executable: bool) -> Result<Entry> {
    let file: PathBuf = dir.join(url_path.trim_start_matches('/'));
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(&file, bytes).with_context(|| format!("cannot write {}", file.display()))?;
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", file.display()))?;
    }
    Ok(Entry {
        path: url_path.to_string(),
        size: bytes.len() as u64,
        sha256: hex(&Sha256::digest(bytes)),
        cgi: executable,
    })
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and fixed forever, so the bytes never change.
struct SplitMix64(u64);

impl SplitMix64 {
    /// Seeded by the FNV-1a hash of the file's URL path.
    fn for_path(path: &str) -> SplitMix64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in path.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        SplitMix64(h)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

const WORDS: [&str; 16] = [
    "server", "client", "request", "response", "socket", "latency", "stone", "surf", "page",
    "byte", "load", "queue", "kernel", "thread", "cache", "web",
];

/// An HTML page of exactly `size` bytes: a title naming the file, then lines of words.
fn html(path: &str, size: u64) -> Vec<u8> {
    let size = size as usize;
    let mut rng = SplitMix64::for_path(path);
    let head = format!("<html><head><title>webstand fixture {path}</title></head>\n<body>\n");
    let tail = "</body></html>\n";
    let mut out = Vec::with_capacity(size + 80);
    if size >= head.len() + tail.len() + 8 {
        out.extend_from_slice(head.as_bytes());
    }
    let body_end = if out.is_empty() {
        size
    } else {
        size - tail.len()
    };
    while out.len() < body_end {
        out.extend_from_slice(b"<p>");
        for _ in 0..10 {
            let w = rng.next();
            out.extend_from_slice(WORDS[(w & 15) as usize].as_bytes());
            out.extend_from_slice(if w & 0x300 == 0 { b", " } else { b" " });
        }
        out.extend_from_slice(b"</p>\n");
    }
    out.truncate(body_end);
    if let Some(last) = out.last_mut() {
        *last = b'\n';
    }
    if body_end < size {
        out.extend_from_slice(tail.as_bytes());
    }
    debug_assert_eq!(out.len(), size);
    out
}

/// `size` pseudo-random bytes.
fn binary(path: &str, size: u64) -> Vec<u8> {
    let mut rng = SplitMix64::for_path(path);
    let mut out = Vec::with_capacity(size as usize + 8);
    while (out.len() as u64) < size {
        out.extend_from_slice(&rng.next().to_le_bytes());
    }
    out.truncate(size as usize);
    out
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_hex32(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_exact_and_content_fixed() {
        for size in [1, 7, 40, 100, 500, 1024, 2048, 5125, 51250] {
            assert_eq!(html("/x.html", size).len() as u64, size);
        }
        assert_eq!(binary("/b", 13).len(), 13);
        // Pinned digest: if this changes, every machine's fixtures changed (bump GENERATOR too).
        assert_eq!(
            hex(&Sha256::digest(html(TENON_FILE, 2048)))[..16],
            *"8867b4503cb7df3f",
            "2k.html bytes changed"
        );
    }

    #[test]
    fn layout_has_every_seed_file_once() {
        let l = layout(&Options::default());
        let find = |p: &str| l.iter().find(|(q, _, _)| q == p).map(|(_, s, _)| *s);
        assert_eq!(find("/2k.html"), Some(2048));
        assert_eq!(find("/small/999.html"), Some(1024));
        assert_eq!(find("/file1k.html"), Some(1024));
        assert_eq!(find("/file200k.html"), Some(200 * 1024));
        assert_eq!(find("/file5k.html"), Some(5125));
        assert_eq!(find("/file5m.html"), Some(5_248_000));
        assert_eq!(find("/large/1M.bin"), Some(1 << 20));
        let mut paths: Vec<_> = l.iter().map(|(p, _, _)| p).collect();
        let n = paths.len();
        paths.dedup();
        assert_eq!(paths.len(), n);
        assert_eq!(n, 1 + 1000 + 5 + 17 + 1);
    }

    #[test]
    fn sizes_parse_and_label() {
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("64k").unwrap(), 65536);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert!(parse_size("0").is_err());
        assert!(parse_size("1X").is_err());
        assert!(parse_size("").is_err());
        assert_eq!(size_label(1 << 20), "1M");
        assert_eq!(size_label(1000), "1000");
    }

    #[test]
    fn write_twice_gives_the_same_bytes_and_a_matching_manifest() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let opts = Options {
            large_sizes: vec![3000],
            small_files: 5,
        };
        let ma = write(a.path(), &opts).unwrap();
        let mb = write(b.path(), &opts).unwrap();
        assert_eq!(ma, mb);
        assert_eq!(Manifest::load(a.path()).unwrap(), ma);
        for e in &ma.files {
            let bytes = std::fs::read(a.path().join(&e.path[1..])).unwrap();
            assert_eq!(bytes.len() as u64, e.size);
            assert_eq!(hex(&Sha256::digest(&bytes)), e.sha256);
        }
        assert!(ma.body_check("/cgi-bin/hello").is_none());
        match ma.body_check("/2k.html?x=1").unwrap() {
            BodyCheck::Digest { len, .. } => assert_eq!(len, 2048),
            other => panic!("{other:?}"),
        }
        assert_eq!(ma.small_paths().len(), 5);
    }
}
