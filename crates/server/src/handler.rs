//! Answering requests: splitting a connection's input into pipelined requests (with their bodies),
//! and the static-file path: cache lookup, basic auth, throttling, conditional GET, ranges,
//! directory index and listing, redirects, errors, CGI dispatch. Everything a loop needs to answer
//! lives in `Ctx`, owned by that loop.

use crate::accesslog;
use crate::auth::{self, Verified};
use crate::cgi::{self, Script};
use crate::conn::Conn;
use crate::files::{Cache, Entry};
use crate::http::{decode_chunked, parse_head, request_line_of, Body, Head, Method};
use crate::path::{self, split_target};
use crate::range::{self, Plan};
use crate::respond::{self, connection_line, push_num, status_line};
use crate::{date::DateLine, pattern, Shared};
use std::process::Child;
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
    /// CGI programs that were stopped but not yet reaped.
    pub zombies: Vec<Child>,
    cache: Cache,
    verified: Verified,
    log: accesslog::Buffer,
    /// Scratch: decoded paths, chunked bodies, ranges.
    rel: String,
    body_buf: Vec<u8>,
    ranges: Vec<(u64, u64)>,
}

/// What an answer was, for the log: status, body bytes, authenticated user.
type Logged = (u16, u64, Option<Arc<str>>);

impl Ctx {
    pub fn new(shared: Arc<Shared>) -> Ctx {
        let cache = Cache::new(shared.config.cache_total_max);
        Ctx {
            shared,
            now: Instant::now(),
            date: DateLine::new(),
            draining: false,
            zombies: Vec::new(),
            cache,
            verified: Verified::default(),
            log: accesslog::Buffer::default(),
            rel: String::new(),
            body_buf: Vec::new(),
            ranges: Vec::new(),
        }
    }

    /// Adds freshly read bytes to the connection's input and answers every complete request.
    pub fn serve_bytes(
        &mut self,
        conn: &mut Conn,
        new: &[u8],
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) {
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
    fn serve(
        &mut self,
        conn: &mut Conn,
        data: &[u8],
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> usize {
        let limits = self.shared.limits;
        let max_body = self.shared.config.max_body;
        let mut pos = 0;
        while pos < data.len() {
            if conn.closing {
                return data.len();
            }
            if conn.has_output()
                || conn.cgi.is_some()
                || conn.throttle.is_some()
                || out.len() >= OUT_HIGH_WATER
            {
                conn.stalled = true;
                break;
            }
            let head = match parse_head(&data[pos..], &limits) {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(status) => {
                    self.refuse(conn, out, status, 1, request_line_of(&data[pos..]));
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
                Body::Chunked => {
                    match decode_chunked(&data[body_start..], max_body, &mut decoded) {
                        Ok(Some(k)) => Ok(body_start + k),
                        Ok(None) => {
                            self.body_pending(conn, &head, out);
                            self.body_buf = decoded;
                            break;
                        }
                        Err(status) => Err(status),
                    }
                }
            };
            let end = match end {
                Ok(e) => e,
                Err(status) => {
                    self.refuse(conn, out, status, head.minor, head.request_line());
                    self.body_buf = decoded;
                    return data.len();
                }
            };
            conn.continue_sent = false;
            conn.awaiting_body = false;
            let body: &[u8] = match head.body {
                Body::Chunked => &decoded,
                _ => &data[body_start..end],
            };
            if let Some((status, bytes, user)) = self.respond(conn, &head, body, out, idx, registry)
            {
                self.log(
                    conn.peer,
                    user.as_deref(),
                    head.request_line(),
                    status,
                    bytes,
                );
            }
            self.body_buf = decoded;
            pos = end;
        }
        pos
    }

    /// A request whose body is still arriving: send "100 Continue" once if the client waits for it.
    fn body_pending(&mut self, conn: &mut Conn, head: &Head, out: &mut Vec<u8>) {
        conn.awaiting_body = true;
        if head.expect_continue && head.minor == 1 && !conn.continue_sent {
            conn.continue_sent = true;
            out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
    }

    /// Answers `status` and closes the connection: its input can no longer be framed.
    fn refuse(
        &mut self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        status: u16,
        minor: u8,
        request_line: &[u8],
    ) {
        let bytes = respond::simple(out, self.date.line(), status, minor, false, b"", false);
        conn.closing = true;
        conn.linger = true;
        self.log(conn.peer, None, request_line, status, bytes);
    }

    /// The header timeout expired on a partial request: 408, then close.
    pub fn timeout_answer(&mut self, conn: &mut Conn, out: &mut Vec<u8>) {
        let inbuf = std::mem::take(&mut conn.inbuf);
        self.refuse(conn, out, 408, 1, request_line_of(&inbuf));
    }

    pub fn log(
        &mut self,
        peer: std::net::IpAddr,
        user: Option<&str>,
        request_line: &[u8],
        status: u16,
        bytes: u64,
    ) {
        if let Some(sink) = &self.shared.log {
            self.log.line(
                sink,
                self.date.secs(),
                peer,
                user,
                request_line,
                status,
                bytes,
            );
        }
    }

    pub fn flush_log(&mut self) {
        if let Some(sink) = &self.shared.log {
            self.log.flush(sink);
        }
    }

    /// Answers one request into `out`. None: a CGI program now runs and will answer later.
    fn respond(
        &mut self,
        conn: &mut Conn,
        head: &Head,
        body: &[u8],
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> Option<Logged> {
        let keep = head.keep_alive && !self.draining;
        if !keep {
            conn.closing = true;
        }
        let head_only = head.method == Method::Head;
        let (raw_path, query) = split_target(head.target);
        let cgi = !self.shared.config.cgi.is_empty() && self.shared.cgi_matches(raw_path);
        if !(matches!(head.method, Method::Get | Method::Head)
            || (cgi && head.method == Method::Post))
        {
            let allow: &[u8] = if cgi {
                b"Allow: GET, HEAD, POST\r\n"
            } else {
                b"Allow: GET, HEAD\r\n"
            };
            return Some((
                405,
                respond::simple(out, self.date.line(), 405, head.minor, keep, allow, false),
                None,
            ));
        }
        // The hot path: a cached file, looked up by the raw path (no decoding, no system calls).
        if !cgi {
            if let Some(e) = self
                .cache
                .get(raw_path, &self.shared.root, self.date.secs())
            {
                return Some(self.send_entry(&e, head, keep, conn, out));
            }
        }
        let simple = |ctx: &Ctx, out: &mut Vec<u8>, status: u16, extra: &[u8]| -> Option<Logged> {
            Some((
                status,
                respond::simple(
                    out,
                    ctx.date.line(),
                    status,
                    head.minor,
                    keep,
                    extra,
                    head_only,
                ),
                None,
            ))
        };
        let dir_request = match path::decode(raw_path, &mut self.rel) {
            Ok(d) => d,
            Err(_) => return simple(self, out, 400, b""),
        };
        if path::is_hidden(&self.rel) {
            return simple(self, out, 404, b"");
        }
        let url_path = format!("/{}", self.rel);
        let auth_rule = auth::rule_for(&self.shared.auth, &url_path);
        let mut user = None;
        if let Some(rule) = auth_rule {
            match self
                .verified
                .check(&self.shared.auth, rule, head.authorization)
            {
                Some(u) => user = Some(u),
                None => return simple(self, out, 401, &self.shared.auth[rule].challenge.clone()),
            }
        }
        if cgi {
            let rel = self.rel.clone();
            let script = match self.find_script(&rel) {
                Ok(s) => s,
                Err(status) => return simple(self, out, status, b""),
            };
            let req = cgi::Request {
                head,
                body,
                query: query.unwrap_or(b""),
                script,
                user: user.clone(),
                keep,
            };
            return self
                .start_cgi(conn, req, out, idx, registry)
                .map(|status| (status, 0, user));
        }
        match self.resolve(&url_path, dir_request, auth_rule) {
            Ok(Resolved::File(entry)) => {
                // Only the plain spelling of a path is cached: "//a", "/./a" or "/%61" would let a
                // client fill the cache with copies of one file.
                let plain = raw_path
                    .strip_suffix(b"/")
                    .filter(|_| dir_request && raw_path.len() > 1)
                    .unwrap_or(raw_path);
                if plain[1..] == *self.rel.as_bytes() {
                    self.cache.insert(raw_path, entry.clone());
                }
                Some(self.send_entry(&entry, head, keep, conn, out))
            }
            Ok(Resolved::Listing(dir)) => {
                let dir_url = if url_path == "/" {
                    url_path
                } else {
                    format!("{url_path}/")
                };
                let html = match crate::listing::render(&dir, &dir_url, &self.shared.own_files) {
                    Ok(h) => h,
                    Err(_) => return simple(self, out, 500, b""),
                };
                status_line(out, 200);
                out.extend_from_slice(self.date.line());
                out.extend_from_slice(
                    b"Content-Type: text/html; charset=utf-8\r\nContent-Length: ",
                );
                push_num(out, html.len() as u64);
                out.extend_from_slice(b"\r\n");
                connection_line(out, head.minor, keep);
                out.extend_from_slice(b"\r\n");
                if !head_only {
                    out.extend_from_slice(html.as_bytes());
                }
                Some((200, html.len() as u64, user))
            }
            Err(Refusal::Status(status)) => simple(self, out, status, b""),
            Err(Refusal::Redirect) => {
                let mut loc = b"Location: ".to_vec();
                loc.extend_from_slice(raw_path);
                loc.push(b'/');
                if let Some(q) = query {
                    loc.push(b'?');
                    loc.extend_from_slice(q);
                }
                loc.extend_from_slice(b"\r\n");
                simple(self, out, 301, &loc)
            }
        }
    }

    /// Finds the file for the decoded path in `self.rel`; for a directory without index file and
    /// with listings on, the open directory instead.
    fn resolve(
        &self,
        url_path: &str,
        dir_request: bool,
        auth: Option<usize>,
    ) -> Result<Resolved, Refusal> {
        let shared = &self.shared;
        let root = &shared.root;
        let file = root
            .open_beneath(&self.rel)
            .map_err(|e| Refusal::Status(open_error_status(&e)))?;
        let mut meta = file.metadata().map_err(|_| Refusal::Status(500))?;
        let (mut rel, mut file) = (self.rel.clone(), file);
        if meta.is_dir() {
            if !dir_request {
                return Err(Refusal::Redirect);
            }
            let index = if rel.is_empty() {
                shared.config.index.clone()
            } else {
                format!("{rel}/{}", shared.config.index)
            };
            match root
                .open_beneath(&index)
                .and_then(|f| f.metadata().map(|m| (f, m)))
            {
                Ok((f, m)) if m.is_file() => (rel, file, meta) = (index, f, m),
                _ if shared.config.listing => return Ok(Resolved::Listing(file)),
                _ => return Err(Refusal::Status(403)),
            }
        }
        if !meta.is_file() {
            return Err(Refusal::Status(403));
        }
        if shared.own_files.contains(&meta) {
            // The server's own config, password or log file: as if it were not there.
            return Err(Refusal::Status(404));
        }
        if dir_request && rel == self.rel {
            // "/file.html/": a file named as a directory.
            return Err(Refusal::Status(404));
        }
        let mut entry = Entry::load(
            rel,
            file,
            &meta,
            shared.config.cache_file_max,
            self.date.secs(),
        )
        .map_err(|e| Refusal::Status(open_error_status(&e)))?;
        entry.auth = auth;
        entry.throttle = shared
            .throttles
            .iter()
            .position(|t| pattern::matches(&t.pattern, url_path.as_bytes()));
        Ok(Resolved::File(Arc::new(entry)))
    }

    /// Splits "cgi-bin/prog/extra/info" into the program (the first regular file along the path)
    /// and its PATH_INFO.
    fn find_script<'a>(&self, rel: &'a str) -> Result<Script<'a>, u16> {
        use std::os::unix::fs::PermissionsExt;
        let mut end = 0;
        while end < rel.len() {
            end = rel[end + 1..].find('/').map_or(rel.len(), |i| end + 1 + i);
            let candidate = &rel[..end];
            let meta = self
                .shared
                .root
                .metadata_beneath(candidate)
                .map_err(|e| open_error_status(&e))?;
            if meta.is_file() {
                if self.shared.own_files.contains(&meta) {
                    return Err(404);
                }
                if meta.permissions().mode() & 0o111 == 0 {
                    return Err(403);
                }
                return Ok(Script {
                    rel: candidate,
                    path_info: &rel[end..],
                });
            }
            if !meta.is_dir() {
                return Err(403);
            }
        }
        Err(404)
    }

    /// Answers from a cache entry: auth, then 304 when the client's copy is current, else the whole
    /// file (200) or the requested ranges (206 / 416), paced when a throttle rule covers it.
    fn send_entry(
        &mut self,
        e: &Entry,
        head: &Head,
        keep: bool,
        conn: &mut Conn,
        out: &mut Vec<u8>,
    ) -> Logged {
        let Ctx {
            shared,
            date,
            verified,
            ranges,
            ..
        } = self;
        let mut user = None;
        if let Some(rule) = e.auth {
            match verified.check(&shared.auth, rule, head.authorization) {
                Some(u) => user = Some(u),
                None => {
                    let challenge = &shared.auth[rule].challenge;
                    let n = respond::simple(
                        out,
                        date.line(),
                        401,
                        head.minor,
                        keep,
                        challenge,
                        head.method == Method::Head,
                    );
                    return (401, n, None);
                }
            }
        }
        if not_modified(e, head) {
            status_line(out, 304);
            out.extend_from_slice(date.line());
            out.extend_from_slice(&e.fields);
            connection_line(out, head.minor, keep);
            out.extend_from_slice(b"\r\n");
            return (304, 0, user);
        }
        let get = head.method == Method::Get;
        let plan = match head.range {
            Some(r) if get && if_range_holds(e, head.if_range) => {
                range::plan(r, e.size, shared.config.max_ranges, ranges)
            }
            _ => Plan::Whole,
        };
        if plan == Plan::Unsatisfiable {
            let mut extra = b"Content-Range: bytes */".to_vec();
            push_num(&mut extra, e.size);
            extra.extend_from_slice(b"\r\n");
            return (
                416,
                respond::simple(out, date.line(), 416, head.minor, keep, &extra, false),
                user,
            );
        }
        let body_len = match plan {
            Plan::Parts if ranges.len() == 1 => ranges[0].1 - ranges[0].0 + 1,
            Plan::Parts => multipart_len(e, ranges, &shared.boundary),
            _ => e.size,
        };
        if let (Some(rule), true) = (e.throttle, get) {
            if !shared.throttles[rule].admit(body_len) {
                let n = respond::simple(
                    out,
                    date.line(),
                    503,
                    head.minor,
                    keep,
                    b"Retry-After: 5\r\n",
                    false,
                );
                return (503, n, user);
            }
            conn.throttle = Some(rule);
        }
        match plan {
            Plan::Parts => {
                status_line(out, 206);
                out.extend_from_slice(date.line());
                out.extend_from_slice(b"Accept-Ranges: bytes\r\nLast-Modified: ");
                out.extend_from_slice(&e.last_modified);
                out.extend_from_slice(b"\r\nETag: ");
                out.extend_from_slice(&e.etag);
                if ranges.len() == 1 {
                    out.extend_from_slice(b"\r\nContent-Type: ");
                    out.extend_from_slice(e.content_type.as_bytes());
                    out.extend_from_slice(b"\r\n");
                    content_range(out, ranges[0], e.size);
                } else {
                    out.extend_from_slice(b"\r\nContent-Type: multipart/byteranges; boundary=");
                    out.extend_from_slice(shared.boundary.as_bytes());
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"Content-Length: ");
                push_num(out, body_len);
                out.extend_from_slice(b"\r\n");
                connection_line(out, head.minor, keep);
                out.extend_from_slice(b"\r\n");
                if ranges.len() == 1 {
                    body_part(e, conn, out, ranges[0]);
                } else {
                    for &r in ranges.iter() {
                        part_head(out, e, r, &shared.boundary);
                        body_part(e, conn, out, r);
                    }
                    part_end(out, &shared.boundary);
                }
                (206, body_len, user)
            }
            _ => {
                out.extend_from_slice(&e.head_200);
                out.extend_from_slice(date.line());
                connection_line(out, head.minor, keep);
                out.extend_from_slice(b"\r\n");
                if !get {
                    return (200, 0, user);
                }
                body_part(e, conn, out, (0, e.size.saturating_sub(1)));
                (200, e.size, user)
            }
        }
    }

    pub fn throttle_budget(&mut self, rule: usize) -> Result<usize, Instant> {
        self.shared.throttles[rule].budget(self.now)
    }
    pub fn throttle_spend(&mut self, rule: usize, bytes: u64) {
        self.shared.throttles[rule].spend(bytes);
    }
    /// Bytes promised under a rule that will not be sent after all.
    pub fn throttle_release(&mut self, rule: usize, bytes: u64) {
        self.shared.throttles[rule].release(bytes);
    }
}

/// What a path resolved to.
enum Resolved {
    File(Arc<Entry>),
    Listing(std::fs::File),
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
        Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOMEM) => 503,
        _ if e.kind() == std::io::ErrorKind::NotFound => 404,
        _ => 500,
    }
}

/// The inclusive range `r` of the entry's bytes: copied when cached, else queued for sendfile.
fn body_part(e: &Entry, conn: &mut Conn, out: &mut Vec<u8>, r: (u64, u64)) {
    if e.size == 0 {
        return;
    }
    match (&e.body, &e.file) {
        (Some(bytes), _) => out.extend_from_slice(&bytes[r.0 as usize..=r.1 as usize]),
        (None, Some(file)) => conn.push_file(out, file.clone(), r.0, r.1 + 1),
        (None, None) => {}
    }
}

fn content_range(out: &mut Vec<u8>, r: (u64, u64), size: u64) {
    out.extend_from_slice(b"Content-Range: bytes ");
    push_num(out, r.0);
    out.push(b'-');
    push_num(out, r.1);
    out.push(b'/');
    push_num(out, size);
    out.extend_from_slice(b"\r\n");
}

fn part_head(out: &mut Vec<u8>, e: &Entry, r: (u64, u64), boundary: &str) {
    out.extend_from_slice(b"\r\n--");
    out.extend_from_slice(boundary.as_bytes());
    out.extend_from_slice(b"\r\nContent-Type: ");
    out.extend_from_slice(e.content_type.as_bytes());
    out.extend_from_slice(b"\r\n");
    content_range(out, r, e.size);
    out.extend_from_slice(b"\r\n");
}

fn part_end(out: &mut Vec<u8>, boundary: &str) {
    out.extend_from_slice(b"\r\n--");
    out.extend_from_slice(boundary.as_bytes());
    out.extend_from_slice(b"--\r\n");
}

/// Length of a multipart/byteranges body, computed by writing the part heads once to scratch.
fn multipart_len(e: &Entry, ranges: &[(u64, u64)], boundary: &str) -> u64 {
    let mut scratch = Vec::new();
    let mut data = 0;
    for &r in ranges {
        part_head(&mut scratch, e, r, boundary);
        data += r.1 - r.0 + 1;
    }
    part_end(&mut scratch, boundary);
    scratch.len() as u64 + data
}

/// If-Range: the ranges apply only while the client's validator still matches (strong ETag or the
/// exact Last-Modified date).
fn if_range_holds(e: &Entry, if_range: Option<&[u8]>) -> bool {
    match if_range.map(crate::http::trim) {
        None => true,
        Some(v) if v.starts_with(b"\"") => v == &*e.etag,
        Some(v) => v == &e.last_modified[..],
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
    list.split(|&b| b == b',')
        .map(crate::http::trim)
        .any(|t| t == b"*" || t.strip_prefix(b"W/").unwrap_or(t) == etag)
}

#[cfg(test)]
mod tests {
    use super::etag_list_matches;

    #[test]
    fn etag_lists_compare_weakly() {
        assert!(etag_list_matches(b"\"a-1\"", b"\"a-1\""));
        assert!(etag_list_matches(b"\"x\", W/\"a-1\"", b"\"a-1\""));
        assert!(etag_list_matches(b"*", b"\"a-1\""));
        assert!(!etag_list_matches(b"\"a-2\"", b"\"a-1\""));
    }
}
