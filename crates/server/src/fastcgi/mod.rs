//! FastCGI/1.0 (responder role) for URLs matching `--fastcgi PATTERN=ADDRESS` rules: PHP through
//! php-fpm, or any FastCGI application.
//!
//! A request becomes a job on its client connection. The job's backend socket is registered with
//! the connection's own loop (token `FASTCGI_BASE + slot`), so nothing blocks: connecting, writing
//! the request records and reading the answer all advance in `fastcgi_pump`, which the loop calls
//! from the connection's step after the client's output is flushed (that ordering is the
//! back-pressure: a slow client stops the reading of its backend). Connections are kept
//! (FCGI_KEEP_CONN) in each loop's bounded pool (backend.rs says why the bound counts busy ones
//! too). The request body goes out as STDIN records as the backend socket takes them: collected by
//! HTTP/1 framing when small or chunked, streamed from the client when large (body.rs says when
//! and why).
//!
//! Failures: a backend that cannot be reached is 502 at once; one silent for `fastcgi_timeout` is
//! 504; records that are not FastCGI, an oversized header block, a body beyond
//! `fastcgi_max_output` or a connection lost mid-answer are 502 (or a cut answer once its head is
//! sent), each with one line on stderr. A kept connection that turns out closed before it answered
//! anything is retried once on a new one.

mod backend;
mod body;
mod gzip;
mod jobs;
mod params;
mod record;
mod response;
mod route;

pub use backend::{parse_rule, Pool, Rule};
pub use body::STREAM_OVER;
pub use route::Asked;

use crate::conn::Conn;
use crate::handler::Ctx;
use crate::protocol::Channel;
use crate::request::{Head, Method};
use backend::Acquired;
use jobs::wake;
use mio::{Interest, Token};
use record::Record;
use response::{Done, Reply};
use std::io;
use std::sync::Arc;
use std::time::Instant;

/// Tokens at or above this belong to backend sockets: `FASTCGI_BASE + connection slot`.
pub const FASTCGI_BASE: usize = 1 << 41;
/// Output gathered for one connection before it is flushed (then the backend is read on).
const OUT_HIGH_WATER: usize = 256 << 10;
/// Bytes read from a backend at a time.
const READ_SIZE: usize = 32 << 10;
/// Local redirects followed for one request.
const MAX_REDIRECTS: u8 = 5;

/// A FastCGI request in progress for one client connection.
pub struct FcgiJob {
    rule: usize,
    backend: Option<backend::Conn>,
    connecting: bool,
    /// The backend connection came from the pool (a failure before any answer may be retried).
    kept: bool,
    retried: bool,
    /// In the loop's queue for a backend connection.
    queued: bool,
    /// The request's records, and how many bytes of them are written.
    request: Vec<u8>,
    sent: usize,
    /// Body bytes the client has still to send (body.rs streams them).
    body_left: u64,
    /// `request` was refilled with streamed body bytes: its start is gone, so no retry.
    streamed: bool,
    /// Bytes from the backend not yet decoded.
    input: Vec<u8>,
    reply: Reply,
    /// When the backend counts as silent (pushed on with each progress).
    pub deadline: Instant,
    redirects: u8,
    request_line: Vec<u8>,
    user: Option<Arc<str>>,
}

impl FcgiJob {
    /// The HTTP/2 stream it answers (None for HTTP/1).
    pub fn stream(&self) -> Option<u32> {
        self.reply.channel.stream_id()
    }
}

/// What the handler found for a FastCGI URL.
pub struct Request<'a> {
    pub head: &'a Head<'a>,
    pub body: &'a [u8],
    pub query: &'a [u8],
    pub rule: usize,
    /// The script's URL path ("/dir/index.php") and the rest ("" or "/…").
    pub script_name: String,
    pub path_info: String,
    pub user: Option<Arc<str>>,
    /// Where the answer goes.
    pub ch: Channel,
}

/// What a pump round did.
pub enum Pump {
    /// Nothing more until the backend (or the client) is ready.
    Wait,
    /// Output was produced or the job ended: flush and go on.
    Progress,
    /// The backend took all it was given and the body is still coming: read the client.
    Body,
}

impl Ctx {
    /// Starts a job on the connection; the loop's next step connects and sends it.
    pub fn start_fastcgi(&mut self, conn: &mut Conn, req: Request) {
        let head = req.head;
        let addrs = *conn.addrs.get_or_insert_with(|| {
            let zero = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
            (
                conn.transport.local_addr().unwrap_or(zero),
                conn.transport.peer_addr().unwrap_or(zero),
            )
        });
        let mut pairs = std::mem::take(&mut self.fcgi_scratch);
        pairs.clear();
        let body_len = body::declared_length(head, req.body);
        params::encode(
            &params::Inputs {
                head,
                body_len,
                query: req.query,
                script_name: &req.script_name,
                path_info: &req.path_info,
                root: &self.shared.root_path,
                addrs,
                https: conn.transport.is_tls(),
                user: req.user.as_deref(),
            },
            &mut pairs,
        );
        let mut request = Vec::with_capacity(pairs.len() + req.body.len() + 64);
        record::begin_request(&mut request, true);
        record::params(&mut request, &pairs);
        record::stdin_piece(&mut request, req.body);
        let body_left = body_len - req.body.len() as u64;
        if body_left == 0 {
            record::stdin_end(&mut request);
        }
        self.fcgi_scratch = pairs;
        let mut reply = Reply::new(head.method == Method::Head, req.ch);
        reply.gzip = self.shared.config.fastcgi_gzip && gzip::accepted(head.fields());
        conn.fcgi.push(Box::new(FcgiJob {
            rule: req.rule,
            backend: None,
            connecting: false,
            kept: false,
            retried: false,
            queued: false,
            request,
            sent: 0,
            body_left,
            streamed: false,
            input: Vec::new(),
            reply,
            deadline: self.now + self.shared.config.fastcgi_timeout,
            redirects: self.fcgi_redirects,
            request_line: head.request_line().to_vec(),
            user: req.user,
        }));
    }

    /// Gives the job a backend connection: a kept one, a new one, or a place in the queue.
    fn attach(
        &mut self,
        job: &mut FcgiJob,
        idx: usize,
        registry: &mio::Registry,
    ) -> Result<(), String> {
        let shared = self.shared.clone();
        let rule = &shared.fastcgi[job.rule];
        let max = (shared.config.fastcgi_connections / shared.threads).max(1);
        let pool = &mut self.fcgi_pools[job.rule];
        // Connections waiting in the queue go first: an HTTP/2 connection with many PHP streams
        // takes one backend connection per turn, then waits behind the others (backend.rs).
        let acquired = match pool.turn_of(idx) {
            true => pool.acquire(&rule.address, max),
            false => Ok(Acquired::Full),
        };
        let (mut conn, kept) = match acquired {
            Ok(Acquired::Kept(c)) => (c, true),
            Ok(Acquired::New(c)) => (c, false),
            Ok(Acquired::Full) => {
                pool.queue(idx);
                job.queued = true;
                return Ok(());
            }
            Err(e) => return Err(format!("cannot connect: {e}")),
        };
        if job.queued {
            job.queued = false;
            pool.forget(idx);
        }
        if let Some(next) = pool.next_waiter(max) {
            wake(&mut self.fcgi_wake, next);
        }
        // A kept connection stays registered between requests (dropping it unregisters it): it
        // only gets this slot's token, one epoll_ctl per request rather than an add and a delete.
        let token = Token(FASTCGI_BASE + idx);
        let interest = Interest::READABLE | Interest::WRITABLE;
        let watched = match kept {
            true => registry.reregister(conn.source(), token, interest),
            false => registry.register(conn.source(), token, interest),
        };
        if let Err(e) = watched {
            if let Some(waiter) = self.fcgi_pools[job.rule].release(conn, false) {
                wake(&mut self.fcgi_wake, waiter);
            }
            return Err(format!("cannot watch the connection: {e}"));
        }
        job.connecting = !kept;
        job.kept = kept;
        job.backend = Some(conn);
        job.deadline = self.now + shared.config.fastcgi_timeout;
        Ok(())
    }

    /// Gives the job's backend connection back (kept when `reusable`), waking a queued request.
    fn detach(&mut self, job: &mut FcgiJob, reusable: bool) {
        if let Some(c) = job.backend.take() {
            if let Some(waiter) = self.fcgi_pools[job.rule].release(c, reusable) {
                wake(&mut self.fcgi_wake, waiter);
            }
        }
    }

    /// Writes what the backend can take and reads what it sent.
    fn exchange(&mut self, job: &mut FcgiJob, out: &mut Vec<u8>) -> Result<Step, Trouble> {
        let Some(backend) = job.backend.as_mut() else {
            return Ok(Step::Wait);
        };
        if job.connecting {
            match backend.connected() {
                Ok(true) => job.connecting = false,
                Ok(false) => return Ok(Step::Wait),
                Err(e) => return Err(Trouble::Lost(format!("cannot connect: {e}"))),
            }
        }
        let timeout = self.shared.config.fastcgi_timeout;
        while job.sent < job.request.len() {
            match backend.write(&job.request[job.sent..]) {
                Ok(n) => {
                    job.sent += n;
                    job.deadline = self.now + timeout;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Trouble::Lost(format!("write: {e}"))),
            }
        }
        // The loop's one read buffer, zeroed once (a fresh one per call cost a 32 KiB memset).
        let mut buf = std::mem::take(&mut self.fcgi_rbuf);
        buf.resize(READ_SIZE, 0);
        let step = self.read_answer(job, out, &mut buf);
        self.fcgi_rbuf = buf;
        step
    }

    /// Reads the backend's answer and decodes it into `out` until the socket is drained, enough
    /// output is gathered, or the request ended.
    fn read_answer(
        &mut self,
        job: &mut FcgiJob,
        out: &mut Vec<u8>,
        buf: &mut [u8],
    ) -> Result<Step, Trouble> {
        loop {
            if out.len() >= OUT_HIGH_WATER {
                return Ok(Step::More);
            }
            let Some(backend) = job.backend.as_mut() else {
                return Ok(Step::Wait);
            };
            let n = match backend.read(buf) {
                Ok(0) => return Err(Trouble::Lost("closed the connection mid-answer".into())),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(match (out.is_empty(), job.wants_body()) {
                        (false, _) => Step::More,
                        (true, true) => Step::Body,
                        (true, false) => Step::Wait,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Trouble::Lost(format!("read: {e}"))),
            };
            job.deadline = self.now + self.shared.config.fastcgi_timeout;
            // Records are decoded where they were read; only a partial one is kept for later.
            let ended = if job.input.is_empty() {
                let (ended, used) = self.decode(job, &buf[..n], out)?;
                job.input.extend_from_slice(&buf[used..n]);
                ended
            } else {
                job.input.extend_from_slice(&buf[..n]);
                let mut input = std::mem::take(&mut job.input);
                let (ended, used) = self.decode(job, &input, out)?;
                input.drain(..used);
                job.input = input;
                ended
            };
            if let Some(reusable) = ended {
                return Ok(Step::Ended(reusable));
            }
        }
    }

    /// Decodes the complete records at the start of `input`: Some(reusable) once the request
    /// ended, and how many bytes the records took.
    fn decode(
        &mut self,
        job: &mut FcgiJob,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(Option<bool>, usize), Trouble> {
        let max = self.shared.config.fastcgi_max_output;
        let mut pos = 0;
        let result = loop {
            let (rec, used) = match record::next(&input[pos..]) {
                Ok(Some(r)) => r,
                Ok(None) => break None,
                Err(g) => return Err(Trouble::Garbage(g.0.to_string())),
            };
            pos += used;
            match rec {
                Record::Stdout(data) => job
                    .reply
                    .stdout(data, out, self.date.line(), max)
                    .map_err(|e| Trouble::Garbage(e.to_string()))?,
                Record::Stderr(text) => backend_log(
                    &self.shared.fastcgi[job.rule],
                    &format!("stderr: {}", String::from_utf8_lossy(text).trim_end()),
                ),
                Record::End { complete } => break Some(complete && pos == input.len()),
            }
        };
        Ok((result, pos))
    }

    /// The backend ended the request: answer, log, and free the connection for the next request.
    fn complete(
        &mut self,
        conn: &mut Conn,
        mut job: Box<FcgiJob>,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
        reusable: bool,
    ) -> Pump {
        // A backend that answered before taking the whole request has records of it unread.
        let whole = job.body_left == 0 && job.sent == job.request.len();
        self.detach(&mut job, reusable && whole);
        let date = self.date.line().to_vec();
        let (status, bytes) = match job.reply.finish(out, &date) {
            Ok(Done::Answered(status, bytes)) => (status, bytes),
            Ok(Done::Redirect(path)) => {
                return self.local_redirect(conn, out, idx, registry, job, &path)
            }
            Err(why) => {
                backend_log(&self.shared.fastcgi[job.rule], why);
                (502, response::failed(out, &date, 502, &job.reply))
            }
        };
        self.answered(conn, &job, status, bytes);
        Pump::Progress
    }

    /// Serves `path` for the request instead (a GET, as RFC 3875 §6.2.2 has it).
    fn local_redirect(
        &mut self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
        job: Box<FcgiJob>,
        path: &[u8],
    ) -> Pump {
        let r = &job.reply;
        if job.redirects >= MAX_REDIRECTS {
            backend_log(&self.shared.fastcgi[job.rule], "local redirect loop");
            let n = response::failed(out, self.date.line(), 500, r);
            self.answered(conn, &job, 500, n);
            return Pump::Progress;
        }
        // The redirect is served as a GET on the same version and channel (an HTTP/2 stream's is
        // spelled as HTTP/1.1 here, answered on its stream).
        let framing = match r.channel {
            Channel::Http1(framing) => framing,
            Channel::Http2(_) => crate::h1::Framing {
                minor: 1,
                keep: true,
            },
        };
        let mut raw = b"GET ".to_vec();
        raw.extend_from_slice(path);
        raw.extend_from_slice(if framing.minor == 0 {
            b" HTTP/1.0\r\n"
        } else {
            b" HTTP/1.1\r\n"
        });
        // HTTP/1.1 requires a Host field: without one the head is refused (400).
        raw.extend_from_slice(b"Host: localhost\r\n");
        raw.extend_from_slice(match (framing.keep, framing.minor) {
            (true, 0) => &b"Connection: keep-alive\r\n\r\n"[..],
            (true, _) => b"\r\n",
            (false, _) => b"Connection: close\r\n\r\n",
        });
        let limits = self.shared.limits;
        let Ok(Some(parsed)) = webstand_http1::request::parse_head(&raw, &limits) else {
            let n = response::failed(out, self.date.line(), 502, r);
            self.answered(conn, &job, 502, n);
            return Pump::Progress;
        };
        self.fcgi_redirects = job.redirects + 1;
        let mut head = crate::request::Head::from_http1(&parsed);
        let ch = match r.channel {
            Channel::Http1(_) => Channel::http1(framing.minor, framing.keep && !self.draining),
            stream => {
                head.version = crate::request::Version::Http2;
                stream
            }
        };
        conn.closing |= !ch.keeps_open();
        let answer = self.respond(conn, &head, ch, b"", out, idx, registry);
        self.fcgi_redirects = 0;
        if let Some((status, bytes, user)) = answer {
            self.log(conn.peer, user.as_deref(), &job.request_line, status, bytes);
        }
        Pump::Progress
    }

    /// Logs the answer and decides whether the client connection stays open.
    fn answered(&mut self, conn: &mut Conn, job: &FcgiJob, status: u16, bytes: u64) {
        let ch = job.reply.channel;
        if ch.ends_connection(status) || (self.draining && ch.stream_id().is_none()) {
            conn.closing = true;
        }
        if job.body_left > 0 && ch.stream_id().is_none() {
            // The rest of the body is still on its way: answer, then close without a reset. (An
            // HTTP/2 stream is reset with NO_ERROR once answered instead: send.rs.)
            conn.closing = true;
            conn.linger = true;
        }
        let user = job.user.clone();
        self.log(conn.peer, user.as_deref(), &job.request_line, status, bytes);
    }

    /// Ends the job with `status` (502, 504), or cuts the answer short if its head is already sent.
    fn fail(
        &mut self,
        conn: &mut Conn,
        mut job: Box<FcgiJob>,
        out: &mut Vec<u8>,
        idx: usize,
        status: u16,
        why: &str,
    ) -> Pump {
        backend_log(&self.shared.fastcgi[job.rule], why);
        self.drop_job(conn, &mut job, idx);
        if job.reply.committed() {
            // HTTP/1 cuts the answer by closing; HTTP/2 resets the stream alone.
            conn.closing |= !job.reply.channel.abort(out);
            let user = job.user.clone();
            self.log(
                conn.peer,
                user.as_deref(),
                &job.request_line,
                job.reply.status,
                0,
            );
            return Pump::Progress;
        }
        let n = response::failed(out, self.date.line(), status, &job.reply);
        self.answered(conn, &job, status, n);
        Pump::Progress
    }
}

/// Where an exchange stands.
enum Step {
    Wait,
    /// Waiting for the client's body (the backend has all it was given).
    Body,
    More,
    /// The backend ended the request; its connection can be kept.
    Ended(bool),
}

/// What went wrong with a backend.
enum Trouble {
    /// The connection failed or closed.
    Lost(String),
    /// It sent something that is not a FastCGI answer.
    Garbage(String),
}

/// One line on stderr about a backend's trouble.
fn backend_log(rule: &Rule, why: &str) {
    eprintln!("webstand serve: fastcgi backend {}: {why}", rule.address);
}
