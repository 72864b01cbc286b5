//! Request bodies on their way to a FastCGI backend: which ones are streamed from the client as
//! they arrive, and which ones HTTP/1 framing collects first.
//!
//! A body declared by Content-Length over `service::STREAM_OVER` bytes is streamed: the job starts once
//! the request head is in, the bytes that came with it go out as STDIN records, and the client is
//! read again only when the backend has taken everything written so far (`wants_body`), so a
//! connection holds at most one read (64 KiB) of body however large the body is; `--max-body`
//! still refuses a larger declared length with 413 before anything is sent. Over HTTP/2 the same
//! bodies stream, each on its own stream: the body's DATA waits in the stream until the job has
//! written all it had, and the stream's window is granted again only as the job takes it
//! (h2/mod.rs's `feed_bodies`: 128 KiB held per stream at most). Which requests stream is the
//! site's to say (site.rs's `streams_body`): a large body to a URL FastCGI may serve.
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

use super::record;
use crate::request::{Head, RequestBody};

/// The body's length as CONTENT_LENGTH says it: the declared one when it is streamed.
pub fn declared_length(head: &Head, arrived: &[u8]) -> u64 {
    match head.body {
        RequestBody::Length(n) => n,
        _ => arrived.len() as u64,
    }
}

/// The part of a request body the client has still to send, taken into STDIN records as it comes.
pub struct Upload {
    /// Body bytes the client has still to send.
    left: u64,
    /// The request's records were refilled with streamed body bytes: their start is gone, so
    /// the request cannot be sent again.
    streamed: bool,
}

impl Upload {
    pub fn new(left: u64) -> Upload {
        Upload {
            left,
            streamed: false,
        }
    }

    /// The client still owes body bytes.
    pub fn owed(&self) -> bool {
        self.left > 0
    }

    pub fn streamed(&self) -> bool {
        self.streamed
    }

    /// Takes the body's next bytes from what the client sent into the request's records (`sent`
    /// of them already written: written ones are dropped first); returns how many were body (the
    /// rest is the client's next request).
    pub fn take(&mut self, request: &mut Vec<u8>, sent: &mut usize, bytes: &[u8]) -> usize {
        let n = bytes.len().min(self.left.try_into().unwrap_or(usize::MAX));
        if *sent == request.len() {
            request.clear();
            *sent = 0;
        }
        self.streamed = true;
        record::stdin_piece(request, &bytes[..n]);
        self.left -= n as u64;
        if self.left == 0 {
            record::stdin_end(request);
        }
        n
    }
}
