//! Answering requests: splitting a connection's input into pipelined requests (with their bodies),
//! and the static-file path: cache lookup, conditional GET, ranges, directory index and listing,
//! redirects, errors. Everything a loop needs to answer lives in `Ctx`, owned by that loop.

use crate::conn::Conn;
use crate::files::{Cache, Entry};
use crate::http::{decode_chunked, parse_head, Body, Head, Method};
use crate::path::{self, split_target};
use crate::respond::{self, connection_line, status_line};
use crate::{date::DateLine, Shared};
use std::sync::Arc;
use std::time::Instant;

/// Answers gathered for one connection before they are written out (pipelining flood guard).
const OUT_HIGH_WATER: usize = 256 << 10;

pub struct Ctx {
    pub shared: Arc<Shared>,
    /// The loop's clock, read once per poll round.
    pub now: Instant,
    pub date: DateLine,
    /// SIGTERM arrived: answer what is in flight with Connection: close.
    pub draining: bool,
    cache: Cache,
    /// Scratch for decoded paths.
    rel: String,
    /// Scratch for a decoded chunked body.
    body_buf: Vec<u8>,
}

impl Ctx {
    pub fn new(shared: Arc<Shared>) -> Ctx {
        let cache = Cache::new(shared.config.cache_total_max);
        Ctx {
            shared,
            now: Instant::now(),
            date: DateLine::new(),
            draining: false,
            cache,
            rel: String::new(),
            body_buf: Vec::new(),
        }
    }

    /// Adds freshly read bytes to the connection's input and answers every complete request.
    pub fn serve_bytes(&mut self, conn: &mut Conn, new: &[u8], out: &mut Vec<u8>, idx: usize, registry: &mio::Registry) {
        let mut inbuf = std::mem::take(&mut conn.inbuf);
        let data: &[u8] = if inbuf.is_empty() {
            new
        } else {
            inbuf.extend_from_slice(new);
            &inbuf
        };
        let total = data.len();
        let used = self.serve(conn, data, out, idx, registry);
        let rest = total - used;
        if rest == 0 {
            inbuf.clear();
        } else if inbuf.is_empty() {
            inbuf.extend_from_slice(&new[used..]);
        } else {
            inbuf.drain(..used);
        }
        if used > 0 || conn.head_started.is_none() {
            conn.head_started = (rest > 0).then_some(self.now);
        }
        conn.inbuf = inbuf;
    }

    /// Answers the complete requests at the start of `data`; returns how many bytes they took.
    fn serve(&mut self, conn: &mut Conn, data: &[u8], out: &mut Vec<u8>, idx: usize, registry: &mio::Registry) -> usize {
        let limits = self.shared.limits;
        let max_body = self.shared.config.max_body;
        let mut pos = 0;
        while pos < data.len() {
            if conn.closing {
                return data.len();
            }
            if conn.has_output() || conn.cgi.is_some() || out.len() >= OUT_HIGH_WATER {
                conn.stalled = true;
                break;
            }
            let head = match parse_head(&data[pos..], &limits) {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(status) => {
                    self.refuse(conn, out, status, 1);
                    return data.len();
                }
            };
            let body_start = pos + head.len;
            let mut decoded = std::mem::take(&mut self.body_buf);
            decoded.clear();
            let end = match head.body {
                Body::None => Ok(body_start),
                Body::Length(n) if n > max_body => Err(413),
                Body::Length(n) if ((data.len() - body_start) as u64) < n => {
                    self.body_pending(conn, &head, out);
                    self.body_buf = decoded;
                    break;
                }
                Body::Length(n) => Ok(body_start + n as usize),
                Body::Chunked => match decode_chunked(&data[body_start..], max_body, &mut decoded) {
                    Ok(Some(k)) => Ok(body_start + k),
                    Ok(None) => {
                        self.body_pending(conn, &head, out);
                        self.body_buf = decoded;
                        break;
                    }
                    Err(status) => Err(status),
                },
            };
            let end = match end {
                Ok(e) => e,
                Err(status) => {
                    self.refuse(conn, out, status, head.minor);
                    self.body_buf = decoded;
                    return data.len();
                }
            };
            conn.continue_sent = false;
            let body: &[u8] = match head.body {
                Body::Chunked => &decoded,
                _ => &data[body_start..end],
            };
            self.respond(conn, &head, body, out, idx, registry);
            self.body_buf = decoded;
            pos = end;
        }
        pos
    }

    /// A request whose body is still arriving: send "100 Continue" once if the client waits for it.
    fn body_pending(&mut self, conn: &mut Conn, head: &Head, out: &mut Vec<u8>) {
        if head.expect_continue && head.minor == 1 && !conn.continue_sent {
            conn.continue_sent = true;
            out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
    }

    /// Answers `status` and closes the connection: its input can no longer be framed.
    fn refuse(&mut self, conn: &mut Conn, out: &mut Vec<u8>, status: u16, minor: u8) {
        respond::simple(out, self.date.line(), status, minor, false, b"", false);
        conn.closing = true;
        conn.linger = true;
    }

    /// The header timeout expired on a partial request: 408, then close.
    pub fn timeout_answer(&mut self, conn: &mut Conn, out: &mut Vec<u8>) {
        conn.inbuf.clear();
        self.refuse(conn, out, 408, 1);
    }

    fn respond(&mut self, conn: &mut Conn, head: &Head, body: &[u8], out: &mut Vec<u8>, idx: usize, registry: &mio::Registry) {
        let keep = head.keep_alive && !self.draining;
        if !keep {
            conn.closing = true;
        }
        let (raw_path, query) = split_target(head.target);
        match head.method {
            Method::Get | Method::Head => {}
            Method::Post if self.shared.cgi_matches(raw_path) => {}
            _ => {
                let allow: &[u8] =
                    if self.shared.cgi_matches(raw_path) { b"Allow: GET, HEAD, POST\r\n" } else { b"Allow: GET, HEAD\r\n" };
                respond::simple(out, self.date.line(), 405, head.minor, keep, allow, false);
                return;
            }
        }
        // The hot path: a cached file, looked up by the raw path (no decoding, no syscalls).
        if let Some(e) = self.cache.get(raw_path, &self.shared.root, self.date.secs()) {
            send_entry(e, head, keep, conn, out, &self.date);
            return;
        }
        let _ = (body, query, idx, registry);
        let dir_request = match path::decode(raw_path, &mut self.rel) {
            Ok(d) => d,
            Err(_) => {
                respond::simple(out, self.date.line(), 400, head.minor, keep, b"", head.method == Method::Head);
                return;
            }
        };
        if path::is_hidden(&self.rel) {
            respond::simple(out, self.date.line(), 404, head.minor, keep, b"", head.method == Method::Head);
            return;
        }
        match self.resolve(raw_path, dir_request) {
            Ok(()) => {
                let e = self.cache.get(raw_path, &self.shared.root, self.date.secs()).expect("just cached");
                send_entry(e, head, keep, conn, out, &self.date);
            }
            Err(Refusal::Status(status)) => {
                respond::simple(out, self.date.line(), status, head.minor, keep, b"", head.method == Method::Head);
            }
            Err(Refusal::Redirect) => {
                let mut loc = b"Location: ".to_vec();
                loc.extend_from_slice(raw_path);
                loc.push(b'/');
                if let Some(q) = query {
                    loc.push(b'?');
                    loc.extend_from_slice(q);
                }
                loc.extend_from_slice(b"\r\n");
                respond::simple(out, self.date.line(), 301, head.minor, keep, &loc, head.method == Method::Head);
            }
        }
    }

    /// Finds the file for the decoded path in `self.rel` and caches it under `key`.
    fn resolve(&mut self, key: &[u8], dir_request: bool) -> Result<(), Refusal> {
        let root = &self.shared.root;
        let file = root.open_beneath(&self.rel).map_err(|e| Refusal::Status(open_error_status(&e)))?;
        let mut meta = file.metadata().map_err(|_| Refusal::Status(500))?;
        let (mut rel, mut file) = (self.rel.clone(), file);
        if meta.is_dir() {
            if !dir_request {
                return Err(Refusal::Redirect);
            }
            let index = if rel.is_empty() {
                self.shared.config.index.clone()
            } else {
                format!("{rel}/{}", self.shared.config.index)
            };
            match root.open_beneath(&index).and_then(|f| f.metadata().map(|m| (f, m))) {
                Ok((f, m)) if m.is_file() => {
                    (rel, file, meta) = (index, f, m);
                }
                _ => return Err(Refusal::Status(403)),
            }
        }
        if !meta.is_file() {
            return Err(Refusal::Status(403));
        }
        let entry = Entry::load(rel, file, &meta, self.shared.config.cache_file_max, self.date.secs())
            .map_err(|e| Refusal::Status(open_error_status(&e)))?;
        self.cache.insert(key, entry);
        Ok(())
    }

    // Hooks for throttling (pacing shared by the connections of a rule); no rules yet.
    pub fn throttle_budget(&mut self, _rule: usize) -> Result<usize, Instant> {
        Ok(usize::MAX)
    }
    pub fn throttle_spend(&mut self, _rule: usize, _bytes: u64) {}
    pub fn throttle_release(&mut self, _rule: usize) {}

    pub fn flush_log(&mut self) {}
}

/// Why a path got no file.
enum Refusal {
    Status(u16),
    /// A directory named without its trailing slash.
    Redirect,
}

fn open_error_status(e: &std::io::Error) -> u16 {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::ENAMETOOLONG) => 404,
        // EXDEV / ELOOP: the path leaves the root through a symlink or `..`; EACCES: not readable.
        Some(libc::EXDEV) | Some(libc::ELOOP) | Some(libc::EACCES) | Some(libc::EPERM) => 403,
        _ if e.kind() == std::io::ErrorKind::NotFound => 404,
        _ => 500,
    }
}

/// Answers from a cache entry: 304 when the client's copy is current, else 200 (ranges come later).
fn send_entry(e: &Entry, head: &Head, keep: bool, conn: &mut Conn, out: &mut Vec<u8>, date: &DateLine) {
    if not_modified(e, head) {
        status_line(out, 304);
        out.extend_from_slice(date.line());
        out.extend_from_slice(&e.fields);
        connection_line(out, head.minor, keep);
        out.extend_from_slice(b"\r\n");
        return;
    }
    out.extend_from_slice(&e.head_200);
    out.extend_from_slice(date.line());
    connection_line(out, head.minor, keep);
    out.extend_from_slice(b"\r\n");
    if head.method == Method::Head {
        return;
    }
    match (&e.body, &e.file) {
        (Some(bytes), _) => out.extend_from_slice(bytes),
        (None, Some(file)) => conn.push_file(out, file.clone(), 0, e.size),
        (None, None) => {}
    }
}

/// RFC 9110 §13.1: If-None-Match wins over If-Modified-Since.
fn not_modified(e: &Entry, head: &Head) -> bool {
    if let Some(inm) = head.if_none_match {
        return etag_list_matches(inm, &e.etag);
    }
    match head.if_modified_since {
        Some(ims) if ims == &e.last_modified[..] => true,
        Some(ims) => crate::date::parse(ims).is_some_and(|t| e.mtime <= t),
        None => false,
    }
}

/// Weak comparison of an entity tag against a list such as `"a", W/"b"` or `*`.
pub fn etag_list_matches(list: &[u8], etag: &[u8]) -> bool {
    let etag = etag.strip_prefix(b"W/").unwrap_or(etag);
    list.split(|&b| b == b',').map(crate::http::trim).any(|t| t == b"*" || t.strip_prefix(b"W/").unwrap_or(t) == etag)
}
