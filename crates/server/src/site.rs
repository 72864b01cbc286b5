//! What the server serves and how, as every event loop reads it and none writes it on the hot path:
//! the configuration, the document root held open, the rules loaded at start-up (basic auth,
//! throttles, FastCGI backends), the access log's file, the server's own files, and the flag that
//! tells the loops to stop. Built once by `run` before the privileges are dropped.

use crate::config::{Config, FastCgiRule};
use crate::docroot::Docroot;
use crate::own_files::OwnFiles;
use crate::path::split_target;
use crate::request::{Head, RequestBody};
use crate::service::STREAM_OVER;
use crate::{accesslog, auth, pattern, throttle};
use std::sync::atomic::AtomicBool;

pub struct Site {
    pub config: Config,
    pub root: Docroot,
    /// The root's path as the process sees it after chroot (CGI programs run from it).
    pub root_path: std::path::PathBuf,
    pub auth: Vec<auth::Rule>,
    pub throttles: Vec<throttle::Rule>,
    pub log: Option<accesslog::Sink>,
    /// Files the server uses itself: never served, listed or run.
    pub own_files: OwnFiles,
    /// The multipart/byteranges boundary of this process.
    pub boundary: String,
    pub stopping: AtomicBool,
    /// The `--fastcgi` rules, in order.
    pub fastcgi: Vec<FastCgiRule>,
    /// Event loops running (each opens its share of `fastcgi_connections`).
    pub threads: usize,
    /// The Alt-Svc line TLS answers carry when HTTP/3 listens (`Alt-Svc: h3=":PORT"…`).
    pub alt_svc: Option<Vec<u8>>,
}

impl Site {
    /// Whether a URL path names a CGI program: thttpd matches the pattern against the program's
    /// path, which is the URL path or a prefix of it ending before a '/' (the rest is PATH_INFO).
    pub fn cgi_matches(&self, raw_path: &[u8]) -> bool {
        pattern::script_paths(raw_path)
            .any(|script| self.config.cgi.iter().any(|p| pattern::matches(p, script)))
    }

    /// The first `--fastcgi` rule matching a decoded URL path ("/dir/x.php").
    pub fn fastcgi_rule(&self, path: &str) -> Option<usize> {
        self.fastcgi
            .iter()
            .position(|r| pattern::matches_script(&r.pattern, path.as_bytes()))
    }

    /// Whether a raw URL path may lead to a FastCGI script: the path or a prefix of it ending
    /// before a '/' matches a rule (PATH_INFO follows), or it names a directory whose index file
    /// does.
    pub fn fastcgi_candidate(&self, raw_path: &[u8]) -> bool {
        if raw_path.ends_with(b"/") {
            let mut index = raw_path.to_vec();
            index.extend_from_slice(self.config.index.as_bytes());
            if self
                .fastcgi
                .iter()
                .any(|r| pattern::matches_script(&r.pattern, &index))
            {
                return true;
            }
        }
        pattern::script_paths(raw_path).any(|script| {
            self.fastcgi
                .iter()
                .any(|r| pattern::matches_script(&r.pattern, script))
        })
    }

    /// Whether a request whose body is not all here yet starts now with its body streamed: a
    /// large Content-Length body to a URL that FastCGI may serve (and CGI may not).
    pub fn streams_body(&self, head: &Head) -> bool {
        let RequestBody::Length(n) = head.body else {
            return false;
        };
        let (raw_path, _) = split_target(head.target);
        n > STREAM_OVER
            && self.fastcgi_candidate(raw_path)
            && (self.config.cgi.is_empty() || !self.cgi_matches(raw_path))
    }
}
