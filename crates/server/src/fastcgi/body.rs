//! Request bodies on their way to a FastCGI backend: which ones are streamed from the client as
//! they arrive, and which ones HTTP/1 framing collects first.
//!
//! A body declared by Content-Length over `STREAM_OVER` bytes is streamed: the job starts once
//! the request head is in, the bytes that came with it go out as STDIN records, and the client is
//! read again only when the backend has taken everything written so far (`wants_body`), so a
//! connection holds at most one read (64 KiB) of body however large the body is; `--max-body`
//! still refuses a larger declared length with 413 before anything is sent. Over HTTP/2 the same
//! bodies stream, each on its own stream: the body's DATA waits in the stream until the job has
//! written all it had, and the stream's window is granted again only as the job takes it
//! (h2/mod.rs's `feed_bodies`: 128 KiB held per stream at most).
//!
//! The trade-off, and why this side of it: a streamed body holds a backend connection (a php-fpm
//! worker) for as long as the client takes to send it, where collecting it first would hold only
//! memory (nginx's `fastcgi_request_buffering on` spools it to disk). Bodies up to `STREAM_OVER`
//! — forms, API calls, most requests that have a body — are still collected first, so a slow
//! client with a small body never pins a worker; only the large ones are streamed, because
//! collecting them would cost up to `--max-body` of memory per connection and this server keeps
//! no temporary files. A client that stops sending mid-body loses the worker after `--io-timeout`
//! (408, the connection closed).
//!
//! Chunked bodies are collected whole (decoded, under `--max-body`) and sent with their length:
//! PHP reads exactly CONTENT_LENGTH bytes of STDIN and nothing without one, so a body of unknown
//! length cannot be passed on before it ends (nginx buffers chunked bodies for FastCGI as well).

use super::{record, FcgiJob};
use crate::handler::Ctx;
use crate::path::split_target;
use crate::request::Head;
use crate::request::RequestBody;

/// Bodies declared larger than this are streamed to the backend rather than collected first.
pub const STREAM_OVER: u64 = 64 << 10;

/// The body's length as CONTENT_LENGTH says it: the declared one when it is streamed.
pub fn declared_length(head: &Head, arrived: &[u8]) -> u64 {
    match head.body {
        RequestBody::Length(n) => n,
        _ => arrived.len() as u64,
    }
}

impl FcgiJob {
    /// The backend has taken all it was given and the client owes more of the body.
    pub fn wants_body(&self) -> bool {
        self.body_left > 0 && self.sent == self.request.len()
    }

    /// Takes the body's next bytes from what the client sent; returns how many were body (the
    /// rest is the client's next request).
    fn take_body(&mut self, bytes: &[u8]) -> usize {
        let n = bytes
            .len()
            .min(self.body_left.try_into().unwrap_or(usize::MAX));
        if self.sent == self.request.len() {
            self.request.clear();
            self.sent = 0;
        }
        self.streamed = true;
        record::stdin_piece(&mut self.request, &bytes[..n]);
        self.body_left -= n as u64;
        if self.body_left == 0 {
            record::stdin_end(&mut self.request);
        }
        n
    }
}

impl Ctx {
    /// Whether a request whose body is not all here yet starts now with its body streamed: a
    /// large Content-Length body to a URL that FastCGI may serve (and CGI may not).
    pub fn streams_body(&self, head: &Head) -> bool {
        let RequestBody::Length(n) = head.body else {
            return false;
        };
        let (raw_path, _) = split_target(head.target);
        n > STREAM_OVER
            && self.shared.fastcgi_candidate(raw_path)
            && (self.shared.config.cgi.is_empty() || !self.shared.cgi_matches(raw_path))
    }

    /// Passes client bytes to the connection's job if it waits for its body: Some(how many were
    /// body), None when no job wants them.
    pub fn feed_fastcgi_body(&mut self, job: Option<&mut FcgiJob>, bytes: &[u8]) -> Option<usize> {
        let job = job.filter(|j| j.body_left > 0 && !bytes.is_empty())?;
        let used = job.take_body(bytes);
        job.deadline = self.now + self.shared.config.fastcgi_timeout;
        Some(used)
    }
}
