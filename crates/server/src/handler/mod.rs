//! Turning a request into its answer, whatever protocol brought it: the method check, the cache
//! lookup, path decoding, basic auth, directory index and listing, redirects and errors are
//! answered here into the request's `Sink` (static files by static_file.rs, listings by
//! listing.rs); a request for a CGI program or a FastCGI script is routed (scripts.rs) and handed
//! back to the caller, which starts the job that answers it later. A `Handler` is one loop's: it
//! owns that loop's file cache and remembered credentials. It knows nothing of framing, sockets or
//! jobs.

mod files;
mod listing;
mod scripts;
mod static_file;

pub use scripts::{CgiScript, FastCgiScript};

use crate::auth::{self, Verified};
use crate::docroot::open_error_status;
use crate::path::{self, split_target};
use crate::pattern;
use crate::request::{Head, Method};
use crate::response::{self, Head as Answer, Length, Sink};
use crate::site::Site;
use files::{Cache, Entry};
use std::sync::Arc;

/// What became of a request.
pub enum Routed {
    /// Answered into the sink.
    Answered(Answered),
    /// It names a CGI program: a job runs it.
    Cgi(CgiScript),
    /// It names a FastCGI script: a job asks the backend.
    FastCgi(FastCgiScript),
}

/// An answer as the log and the connection's pacing want it.
pub struct Answered {
    pub status: u16,
    /// Body bytes.
    pub bytes: u64,
    /// The user basic auth let in.
    pub user: Option<Arc<str>>,
    /// The throttle rule the body is paced by.
    pub throttle: Option<usize>,
}

impl Answered {
    fn new(status: u16, bytes: u64, user: Option<Arc<str>>) -> Answered {
        Answered {
            status,
            bytes,
            user,
            throttle: None,
        }
    }
}

/// One loop's request handler.
pub struct Handler {
    site: Arc<Site>,
    cache: Cache,
    verified: Verified,
    /// Scratch: the decoded path, the ranges asked for.
    rel: String,
    ranges: Vec<(u64, u64)>,
}

impl Handler {
    pub fn new(site: Arc<Site>) -> Handler {
        Handler {
            cache: Cache::new(site.config.cache_total_max),
            site,
            verified: Verified::default(),
            rel: String::new(),
            ranges: Vec::new(),
        }
    }

    /// Answers one request into `sink`, or routes it to a script. `now` is the Unix second
    /// (the cache's re-checks and new entries go by it).
    pub fn route(&mut self, head: &Head, now: i64, sink: &mut dyn Sink) -> Routed {
        let (raw_path, query) = split_target(head.target);
        let cgi = !self.site.config.cgi.is_empty() && self.site.cgi_matches(raw_path);
        let fcgi = !self.site.fastcgi.is_empty() && self.site.fastcgi_candidate(raw_path);
        if let Some(allow) = not_allowed(head.method, cgi).filter(|_| !fcgi) {
            let n = response::simple(sink, 405, allow, false);
            return Routed::Answered(Answered::new(405, n, None));
        }
        // The hot path: a cached file, looked up by the raw path (no decoding, no system calls).
        if !cgi && !fcgi {
            if let Some(e) = self.cache.get(raw_path, &self.site.root, now) {
                return Routed::Answered(self.send_entry(&e, head, sink));
            }
        }
        // Off the hot path: the site is held apart from the handler's own state.
        let site = self.site.clone();
        let simple = |sink: &mut dyn Sink, status, extra: &[u8]| {
            Routed::Answered(simple_answer(sink, head, status, extra))
        };
        let dir_request = match path::decode(raw_path, &mut self.rel) {
            Ok(d) => d,
            Err(_) => return simple(sink, 400, b""),
        };
        if path::is_hidden(&self.rel) {
            return simple(sink, 404, b"");
        }
        let url_path = format!("/{}", self.rel);
        let auth_rule = auth::rule_for(&site.auth, &url_path);
        let user = match self.authorize(auth_rule, head) {
            Ok(user) => user,
            Err(rule) => return simple(sink, 401, &site.auth[rule].challenge),
        };
        // A decoded path can match where its raw spelling did not ("/a%2ephp"): never the source.
        if !site.fastcgi.is_empty() {
            match scripts::fastcgi_script(&site, &self.rel, dir_request) {
                Ok(None) => {}
                Ok(Some(script)) => return Routed::FastCgi(script.with_user(user)),
                Err(status) => return simple(sink, status, b""),
            }
        }
        if cgi {
            return match scripts::cgi_script(&site, &self.rel) {
                Ok(script) => Routed::Cgi(script.with_user(user)),
                Err(status) => simple(sink, status, b""),
            };
        }
        match self.resolve(&url_path, dir_request, auth_rule, now) {
            Ok(Resolved::File(entry)) => {
                if plain_spelling(raw_path, dir_request, &self.rel) {
                    self.cache.insert(raw_path, entry.clone());
                }
                Routed::Answered(self.send_entry(&entry, head, sink))
            }
            Ok(Resolved::Listing(dir)) => match self.send_listing(&dir, url_path, head, sink) {
                Some(n) => Routed::Answered(Answered::new(200, n, user)),
                None => simple(sink, 500, b""),
            },
            Err(Refusal::Status(status)) => simple(sink, status, b""),
            Err(Refusal::Redirect) => simple(sink, 301, &location_slash(raw_path, query)),
        }
    }

    /// Basic auth under `rule` (when one covers the path): the user, or Err(rule) when the request's
    /// credentials do not pass.
    fn authorize(&mut self, rule: Option<usize>, head: &Head) -> Result<Option<Arc<str>>, usize> {
        let Some(rule) = rule else {
            return Ok(None);
        };
        match self
            .verified
            .check(&self.site.auth, rule, head.authorization)
        {
            Some(user) => Ok(Some(user)),
            None => Err(rule),
        }
    }

    /// A directory listing (200); None when the directory cannot be read.
    fn send_listing(
        &self,
        dir: &std::fs::File,
        url_path: String,
        head: &Head,
        sink: &mut dyn Sink,
    ) -> Option<u64> {
        let dir_url = if url_path == "/" {
            url_path
        } else {
            format!("{url_path}/")
        };
        let html = listing::render(dir, &dir_url, &self.site.own_files).ok()?;
        sink.head(&Answer {
            status: 200,
            fields: b"Content-Type: text/html; charset=utf-8\r\n",
            length: Length::Known(html.len() as u64),
        });
        if head.method != Method::Head {
            sink.body(html.as_bytes());
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
        now: i64,
    ) -> Result<Resolved, Refusal> {
        let site = &self.site;
        let root = &site.root;
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
                site.config.index.clone()
            } else {
                format!("{rel}/{}", site.config.index)
            };
            match root
                .open_beneath(&index)
                .and_then(|f| f.metadata().map(|m| (f, m)))
            {
                Ok((f, m)) if m.is_file() => (rel, file, meta) = (index, f, m),
                _ if site.config.listing => return Ok(Resolved::Listing(file)),
                _ => return Err(Refusal::Status(403)),
            }
        }
        if !meta.is_file() {
            return Err(Refusal::Status(403));
        }
        if site.own_files.contains(&meta) {
            // The server's own config, password or log file: as if it were not there.
            return Err(Refusal::Status(404));
        }
        if dir_request && rel == self.rel {
            // "/file.html/": a file named as a directory.
            return Err(Refusal::Status(404));
        }
        let mut entry = Entry::load(rel, file, &meta, site.config.cache_file_max, now)
            .map_err(|e| Refusal::Status(open_error_status(&e)))?;
        entry.auth = auth;
        entry.throttle = site
            .throttles
            .iter()
            .position(|t| pattern::matches(&t.pattern, url_path.as_bytes()));
        Ok(Resolved::File(Arc::new(entry)))
    }
}

/// A generated answer (an error, a redirect) with `extra` header lines; for the log, no user.
pub fn simple_answer(sink: &mut dyn Sink, head: &Head, status: u16, extra: &[u8]) -> Answered {
    let head_only = head.method == Method::Head;
    let n = response::simple(sink, status, extra, head_only);
    Answered::new(status, n, None)
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
