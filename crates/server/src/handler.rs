//! Answering one request: what a loop needs to answer lives in `Ctx`, owned by that loop; `respond`
//! routes a request (method check, cache lookup, path decoding, basic auth, CGI dispatch, directory
//! index and listing, redirects, errors) to its answer. Framing requests out of a connection's
//! bytes is h1.rs's; answering from a cached file is static_file.rs's.

use crate::accesslog;
use crate::auth::{self, Verified};
use crate::cgi::{self, Script};
use crate::conn::Conn;
use crate::fastcgi::{Asked, Pool};
use crate::files::{Cache, Entry};
use crate::path::{self, split_target};
use crate::protocol::Channel;
use crate::request::{Head, Method};
use crate::respond::{self, Head as Answer, Length};
use crate::{date::DateLine, pattern, Shared};
use std::process::Child;
use std::sync::Arc;
use std::time::Instant;

pub struct Ctx {
    pub shared: Arc<Shared>,
    /// The loop's clock, read once per poll round.
    pub now: Instant,
    pub date: DateLine,
    /// SIGTERM arrived: answer what is in flight with Connection: close.
    pub draining: bool,
    /// CGI programs that were stopped but not yet reaped.
    pub zombies: Vec<Child>,
    pub(crate) cache: Cache,
    pub(crate) verified: Verified,
    pub(crate) log: accesslog::Buffer,
    /// Scratch: decoded paths, chunked bodies, ranges.
    pub(crate) rel: String,
    pub(crate) body_buf: Vec<u8>,
    pub(crate) ranges: Vec<(u64, u64)>,
    /// FastCGI: each rule's backend connections, the slots to drive because a connection came
    /// back for them, the local redirects behind the request being started, and scratch for its
    /// parameters and for reading backends.
    pub(crate) fcgi_pools: Vec<Pool>,
    pub fcgi_wake: Vec<usize>,
    pub(crate) fcgi_redirects: u8,
    pub(crate) fcgi_scratch: Vec<u8>,
    pub(crate) fcgi_rbuf: Vec<u8>,
    /// The request just routed needs a CGI/FastCGI job while the connection runs all it may (an
    /// HTTP/2 stream's, `job_slot_taken`): nothing was answered, it must be routed again.
    pub waits_for_job: bool,
}

/// What an answer was, for the log: status, body bytes, authenticated user.
pub(crate) type Logged = (u16, u64, Option<Arc<str>>);

impl Ctx {
    pub fn new(shared: Arc<Shared>) -> Ctx {
        let cache = Cache::new(shared.config.cache_total_max);
        let pools = (0..shared.fastcgi.len()).map(|_| Pool::default()).collect();
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
            fcgi_pools: pools,
            fcgi_wake: Vec::new(),
            fcgi_redirects: 0,
            fcgi_scratch: Vec::new(),
            fcgi_rbuf: Vec::new(),
            waits_for_job: false,
        }
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

    /// Answers one request into `out` through `ch`, the way back to where the request came from.
    /// None: a CGI program or FastCGI job now runs and will answer later, or (`waits_for_job`) the
    /// request waits for the one that runs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn respond(
        &mut self,
        conn: &mut Conn,
        head: &Head,
        ch: Channel,
        body: &[u8],
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> Option<Logged> {
        let (raw_path, query) = split_target(head.target);
        let cgi = !self.shared.config.cgi.is_empty() && self.shared.cgi_matches(raw_path);
        let fcgi = !self.shared.fastcgi.is_empty() && self.shared.fastcgi_candidate(raw_path);
        if let Some(allow) = not_allowed(head.method, cgi).filter(|_| !fcgi) {
            let n = respond::simple(out, self.date.line(), ch, 405, allow, false);
            return Some((405, n, None));
        }
        // The hot path: a cached file, looked up by the raw path (no decoding, no system calls).
        if !cgi && !fcgi {
            if let Some(e) = self
                .cache
                .get(raw_path, &self.shared.root, self.date.secs())
            {
                return Some(self.send_entry(&e, head, ch, conn, out));
            }
        }
        let simple = |ctx: &Ctx, out: &mut Vec<u8>, status, extra: &[u8]| {
            Some(ctx.simple_answer(out, head, ch, status, extra))
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
        let user = match self.authorize(auth_rule, head) {
            Ok(user) => user,
            Err(rule) => return simple(self, out, 401, &self.shared.auth[rule].challenge.clone()),
        };
        let asked = Asked {
            head,
            body,
            query: query.unwrap_or(b""),
            user: user.clone(),
            ch,
        };
        // A decoded path can match where its raw spelling did not ("/a%2ephp"): never the source.
        if let Some(answer) = self.route_fastcgi(conn, &asked, dir_request, out) {
            return answer;
        }
        if cgi {
            return self.route_cgi(conn, &asked, out, idx, registry);
        }
        match self.resolve(&url_path, dir_request, auth_rule) {
            Ok(Resolved::File(entry)) => {
                if plain_spelling(raw_path, dir_request, &self.rel) {
                    self.cache.insert(raw_path, entry.clone());
                }
                Some(self.send_entry(&entry, head, ch, conn, out))
            }
            Ok(Resolved::Listing(dir)) => {
                let answer = self.send_listing(&dir, url_path, head, ch, out);
                answer
                    .map(|n| (200, n, user))
                    .or_else(|| simple(self, out, 500, b""))
            }
            Err(Refusal::Status(status)) => simple(self, out, status, b""),
            Err(Refusal::Redirect) => simple(self, out, 301, &location_slash(raw_path, query)),
        }
    }

    /// Runs the CGI program the decoded path (in `self.rel`) names.
    fn route_cgi(
        &mut self,
        conn: &mut Conn,
        asked: &Asked,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> Option<Logged> {
        let rel = self.rel.clone();
        let script = match self.find_script(&rel) {
            Ok(s) => s,
            Err(status) => return Some(self.simple_answer(out, asked.head, asked.ch, status, b"")),
        };
        let req = cgi::Request {
            head: asked.head,
            body: asked.body,
            query: asked.query,
            script,
            user: asked.user.clone(),
            ch: asked.ch,
        };
        let user = asked.user.clone();
        if self.job_slot_taken(conn, asked.ch) {
            return None;
        }
        self.start_cgi(conn, req, out, idx, registry)
            .map(|status| (status, 0, user))
    }

    /// An HTTP/1 connection runs one CGI program or FastCGI job at a time (it asks for the next
    /// request only once the job is done); an HTTP/2 connection up to `h2::MAX_JOBS`, one per
    /// stream. A stream that finds them all taken is marked as waiting (`waits_for_job`) and
    /// h2/ routes it again when one ends.
    pub(crate) fn job_slot_taken(&mut self, conn: &Conn, ch: Channel) -> bool {
        // By the channel: h2/ holds the connection's protocol state while it answers.
        let limit = match ch.stream_id() {
            Some(_) => crate::h2::MAX_JOBS,
            None => 1,
        };
        let taken = conn.jobs() >= limit;
        self.waits_for_job |= taken;
        taken
    }

    /// Basic auth under `rule` (when one covers the path): the user, or Err(rule) when the request's
    /// credentials do not pass.
    pub(crate) fn authorize(
        &mut self,
        rule: Option<usize>,
        head: &Head,
    ) -> Result<Option<Arc<str>>, usize> {
        let Some(rule) = rule else {
            return Ok(None);
        };
        match self
            .verified
            .check(&self.shared.auth, rule, head.authorization)
        {
            Some(user) => Ok(Some(user)),
            None => Err(rule),
        }
    }

    /// A generated answer (an error, a redirect) with `extra` header lines; for the log, no user.
    pub(crate) fn simple_answer(
        &self,
        out: &mut Vec<u8>,
        head: &Head,
        ch: Channel,
        status: u16,
        extra: &[u8],
    ) -> Logged {
        let head_only = head.method == Method::Head;
        let n = respond::simple(out, self.date.line(), ch, status, extra, head_only);
        (status, n, None)
    }

    /// A directory listing (200); None when the directory cannot be read.
    fn send_listing(
        &self,
        dir: &std::fs::File,
        url_path: String,
        head: &Head,
        mut ch: Channel,
        out: &mut Vec<u8>,
    ) -> Option<u64> {
        let dir_url = if url_path == "/" {
            url_path
        } else {
            format!("{url_path}/")
        };
        let html = crate::listing::render(dir, &dir_url, &self.shared.own_files).ok()?;
        let answer = Answer {
            status: 200,
            fields: b"Content-Type: text/html; charset=utf-8\r\n",
            length: Length::Known(html.len() as u64),
        };
        ch.write_head(out, self.date.line(), &answer);
        if head.method != Method::Head {
            ch.body(out, html.as_bytes());
        }
        Some(html.len() as u64)
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

pub(crate) fn open_error_status(e: &std::io::Error) -> u16 {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::ENAMETOOLONG) => 404,
        // EXDEV / ELOOP: the path leaves the root through a symlink or `..`; EACCES: not readable.
        Some(libc::EXDEV) | Some(libc::ELOOP) | Some(libc::EACCES) | Some(libc::EPERM) => 403,
        Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOMEM) => 503,
        _ if e.kind() == std::io::ErrorKind::NotFound => 404,
        _ => 500,
    }
}

/// The Allow line of a 405 when the method is not one this URL answers.
fn not_allowed(method: Method, cgi: bool) -> Option<&'static [u8]> {
    match method {
        Method::Get | Method::Head => None,
        Method::Post if cgi => None,
        _ if cgi => Some(b"Allow: GET, HEAD, POST\r\n"),
        _ => Some(b"Allow: GET, HEAD\r\n"),
    }
}

/// The Location line redirecting a directory named without its slash to the name with it.
fn location_slash(raw_path: &[u8], query: Option<&[u8]>) -> Vec<u8> {
    let mut loc = b"Location: ".to_vec();
    loc.extend_from_slice(raw_path);
    loc.push(b'/');
    if let Some(q) = query {
        loc.push(b'?');
        loc.extend_from_slice(q);
    }
    loc.extend_from_slice(b"\r\n");
    loc
}

/// Only the plain spelling of a path is cached: "//a", "/./a" or "/%61" would let a client fill
/// the cache with copies of one file.
fn plain_spelling(raw_path: &[u8], dir_request: bool, rel: &str) -> bool {
    let plain = raw_path
        .strip_suffix(b"/")
        .filter(|_| dir_request && raw_path.len() > 1)
        .unwrap_or(raw_path);
    plain[1..] == *rel.as_bytes()
}
