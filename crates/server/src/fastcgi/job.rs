//! One FastCGI request in progress, as a job the loop drives: it gets a backend connection from its
//! loop's pools (or waits its turn), connects, writes the request's records as the socket takes
//! them, reads the answer's records and turns its STDOUT into the HTTP answer (response.rs),
//! through the sink of the request it serves. Failures end it with 502 (504 when the backend is
//! silent past `fastcgi_timeout`), or cut an answer whose head is already sent; a kept connection
//! that turns out closed before it answered anything is retried once on a new one.

use super::backends::{Attached, Backends};
use super::body::{self, Upload};
use super::record::{self, Record};
use super::response::{self, Done, Reply};
use super::{backend, gzip, params};
use crate::job::{Job, Progress, Start};
use crate::request::Method;
use crate::response::Sink;
use mio::Token;
use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Instant;

/// Output gathered for one connection before it is flushed (then the backend is read on).
const OUT_HIGH_WATER: usize = 256 << 10;
/// Bytes read from a backend at a time.
const READ_SIZE: usize = 32 << 10;
/// Local redirects followed for one request.
const MAX_REDIRECTS: u8 = 5;

/// The script a request goes to.
pub struct Script<'a> {
    /// The `--fastcgi` rule, the script's URL path and the rest ("" or "/…").
    pub rule: usize,
    pub name: &'a str,
    pub path_info: &'a str,
    /// Local redirects already followed to get here.
    pub redirects: u8,
}

/// A FastCGI request in progress for one client request.
pub struct FcgiJob {
    backends: Rc<RefCell<Backends>>,
    rule: usize,
    /// The client connection it answers (its place in the pools' queues).
    owner: usize,
    token: Token,
    backend: Option<backend::Conn>,
    connecting: bool,
    /// The backend connection came from the pool (a failure before any answer may be retried).
    kept: bool,
    retried: bool,
    /// In the pool's queue for a backend connection.
    queued: bool,
    /// The request's records, and how many bytes of them are written.
    request: Vec<u8>,
    sent: usize,
    /// What the client has still to send of the body (body.rs streams it).
    upload: Upload,
    /// Bytes from the backend not yet decoded.
    input: Vec<u8>,
    reply: Reply,
    /// When the backend counts as silent (pushed on with each progress).
    deadline: Instant,
    redirects: u8,
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

impl FcgiJob {
    /// A job for the request; the loop's next step gives it a backend connection and sends it.
    pub fn start(
        backends: &Rc<RefCell<Backends>>,
        req: &Start,
        script: &Script,
        now: Instant,
        owner: usize,
        token: Token,
    ) -> FcgiJob {
        let head = req.head;
        let mut b = backends.borrow_mut();
        let settings = b.settings;
        let mut pairs = std::mem::take(&mut b.scratch);
        pairs.clear();
        let body_len = body::declared_length(head, req.body);
        params::encode(
            &params::Inputs {
                head,
                body_len,
                query: req.query,
                script_name: script.name,
                path_info: script.path_info,
                root: req.root,
                addrs: req.client.addrs(),
                https: req.client.tls,
                user: req.user,
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
        b.scratch = pairs;
        let gzip = settings.gzip && gzip::accepted(head.fields());
        FcgiJob {
            backends: backends.clone(),
            rule: script.rule,
            owner,
            token,
            backend: None,
            connecting: false,
            kept: false,
            retried: false,
            queued: false,
            request,
            sent: 0,
            upload: Upload::new(body_left),
            input: Vec::new(),
            reply: Reply::new(head.method == Method::Head, gzip),
            deadline: now + settings.timeout,
            redirects: script.redirects,
        }
    }

    /// Gives the job a backend connection, or a place in the queue.
    fn attach(&mut self, now: Instant) -> Result<(), String> {
        let mut b = self.backends.borrow_mut();
        match b.attach(self.rule, self.owner, self.token, self.queued)? {
            Attached::Queued => self.queued = true,
            Attached::Conn(conn, kept) => {
                self.queued = false;
                self.connecting = !kept;
                self.kept = kept;
                self.backend = Some(conn);
                self.deadline = now + b.settings.timeout;
            }
        }
        Ok(())
    }

    /// Gives the backend connection back (kept when `reusable`).
    fn detach(&mut self, reusable: bool) {
        if let Some(c) = self.backend.take() {
            self.backends.borrow_mut().release(self.rule, c, reusable);
        }
    }

    /// Frees what the job holds: its backend connection, closed, and its place in the queue.
    fn drop_backend(&mut self) {
        self.detach(false);
        if std::mem::take(&mut self.queued) {
            self.backends
                .borrow_mut()
                .leave_queue(self.rule, self.owner);
        }
    }

    /// Writes what the backend can take and reads what it sent.
    fn exchange(&mut self, now: Instant, sink: &mut dyn Sink) -> Result<Step, Trouble> {
        let Some(backend) = self.backend.as_mut() else {
            return Ok(Step::Wait);
        };
        if self.connecting {
            match backend.connected() {
                Ok(true) => self.connecting = false,
                Ok(false) => return Ok(Step::Wait),
                Err(e) => return Err(Trouble::Lost(format!("cannot connect: {e}"))),
            }
        }
        let timeout = self.backends.borrow().settings.timeout;
        while self.sent < self.request.len() {
            match backend.write(&self.request[self.sent..]) {
                Ok(n) => {
                    self.sent += n;
                    self.deadline = now + timeout;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Trouble::Lost(format!("write: {e}"))),
            }
        }
        // The loop's one read buffer, zeroed once (a fresh one per call cost a 32 KiB memset).
        let mut buf = std::mem::take(&mut self.backends.borrow_mut().rbuf);
        buf.resize(READ_SIZE, 0);
        let step = self.read_answer(now, sink, &mut buf);
        self.backends.borrow_mut().rbuf = buf;
        step
    }

    /// Reads the backend's answer and decodes it into the sink until the socket is drained,
    /// enough output is gathered, or the request ended.
    fn read_answer(
        &mut self,
        now: Instant,
        sink: &mut dyn Sink,
        buf: &mut [u8],
    ) -> Result<Step, Trouble> {
        let settings = self.backends.borrow().settings;
        loop {
            if sink.gathered() >= OUT_HIGH_WATER {
                return Ok(Step::More);
            }
            let Some(backend) = self.backend.as_mut() else {
                return Ok(Step::Wait);
            };
            let n = match backend.read(buf) {
                Ok(0) => return Err(Trouble::Lost("closed the connection mid-answer".into())),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(match (sink.gathered() > 0, self.wants_body()) {
                        (true, _) => Step::More,
                        (false, true) => Step::Body,
                        (false, false) => Step::Wait,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Trouble::Lost(format!("read: {e}"))),
            };
            self.deadline = now + settings.timeout;
            // Records are decoded where they were read; only a partial one is kept for later.
            let ended = if self.input.is_empty() {
                let (ended, used) = self.decode(&buf[..n], sink, settings.max_output)?;
                self.input.extend_from_slice(&buf[used..n]);
                ended
            } else {
                self.input.extend_from_slice(&buf[..n]);
                let mut input = std::mem::take(&mut self.input);
                let (ended, used) = self.decode(&input, sink, settings.max_output)?;
                input.drain(..used);
                self.input = input;
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
        input: &[u8],
        sink: &mut dyn Sink,
        max: u64,
    ) -> Result<(Option<bool>, usize), Trouble> {
        let mut pos = 0;
        let result = loop {
            let (rec, used) = match record::next(&input[pos..]) {
                Ok(Some(r)) => r,
                Ok(None) => break None,
                Err(g) => return Err(Trouble::Garbage(g.0.to_string())),
            };
            pos += used;
            match rec {
                Record::Stdout(data) => self
                    .reply
                    .stdout(data, sink, max)
                    .map_err(|e| Trouble::Garbage(e.to_string()))?,
                Record::Stderr(text) => self.backends.borrow().log(
                    self.rule,
                    &format!("stderr: {}", String::from_utf8_lossy(text).trim_end()),
                ),
                Record::End { complete } => break Some(complete && pos == input.len()),
            }
        };
        Ok((result, pos))
    }

    /// The backend ended the request: answer, and free the connection for the next request.
    fn complete(&mut self, sink: &mut dyn Sink, reusable: bool) -> Progress {
        // A backend that answered before taking the whole request has records of it unread.
        let whole = !self.upload.owed() && self.sent == self.request.len();
        self.detach(reusable && whole);
        match self.reply.finish(sink) {
            Ok(Done::Answered(status, bytes)) => Progress::Done { status, bytes },
            Ok(Done::Redirect(_)) if self.redirects >= MAX_REDIRECTS => {
                self.backends.borrow().log(self.rule, "local redirect loop");
                let bytes = response::failed(sink, 500, &self.reply);
                Progress::Done { status: 500, bytes }
            }
            Ok(Done::Redirect(path)) => Progress::Redirect(path),
            Err(why) => {
                self.backends.borrow().log(self.rule, why);
                let bytes = response::failed(sink, 502, &self.reply);
                Progress::Done { status: 502, bytes }
            }
        }
    }

    /// Ends the job with `status` (502, 504, 408), or cuts the answer short if its head is
    /// already sent.
    fn fail(&mut self, sink: &mut dyn Sink, status: u16, why: &str) -> Progress {
        self.backends.borrow().log(self.rule, why);
        self.drop_backend();
        if self.reply.committed() {
            // HTTP/1 cuts the answer by closing; HTTP/2 resets the stream alone.
            sink.abort();
            let status = self.reply.status;
            return Progress::Done { status, bytes: 0 };
        }
        let bytes = response::failed(sink, status, &self.reply);
        Progress::Done { status, bytes }
    }
}

impl Job for FcgiJob {
    /// Connects, writes the request, reads and answers.
    fn advance(&mut self, now: Instant, sink: &mut dyn Sink) -> Progress {
        if self.backend.is_none() {
            if let Err(why) = self.attach(now) {
                return self.fail(sink, 502, &why);
            }
            if self.backend.is_none() {
                return Progress::Wait;
            }
        }
        match self.exchange(now, sink) {
            Ok(Step::Wait) => Progress::Wait,
            Ok(Step::Body) => {
                self.deadline = now + self.backends.borrow().settings.io_timeout;
                Progress::Body
            }
            Ok(Step::More) => Progress::More,
            Ok(Step::Ended(reusable)) => self.complete(sink, reusable),
            Err(Trouble::Lost(_))
                if self.kept
                    && !self.reply.started()
                    && !self.retried
                    && !self.upload.streamed() =>
            {
                // A kept connection the backend had closed: once more on a new one (the trouble
                // is logged only if the retry fails too).
                self.retried = true;
                self.detach(false);
                self.sent = 0;
                self.input.clear();
                Progress::More
            }
            Err(Trouble::Lost(why) | Trouble::Garbage(why)) => self.fail(sink, 502, &why),
        }
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The backend stayed silent past `fastcgi_timeout`: 504; or the client sent no more of the
    /// body being streamed for `io_timeout`: 408.
    fn expire(&mut self, _: Instant, sink: &mut dyn Sink) -> Progress {
        let settings = self.backends.borrow().settings;
        let (status, why) = match self.wants_body() {
            true => (
                408,
                format!(
                    "the client sent no more of its body within {}s",
                    settings.io_timeout.as_secs_f64()
                ),
            ),
            false => (
                504,
                format!("no answer within {}s", settings.timeout.as_secs_f64()),
            ),
        };
        self.fail(sink, status, &why)
    }

    /// The backend connection is closed, not kept: the backend may still be writing an answer
    /// for it (php-fpm ends the request when it writes to the closed connection).
    fn cancel(&mut self) {
        self.drop_backend();
    }

    fn take_body(&mut self, now: Instant, bytes: &[u8]) -> usize {
        if !self.upload.owed() || bytes.is_empty() {
            return 0;
        }
        let used = self.upload.take(&mut self.request, &mut self.sent, bytes);
        self.deadline = now + self.backends.borrow().settings.timeout;
        used
    }

    fn body_owed(&self) -> bool {
        self.upload.owed()
    }

    /// The backend has taken all it was given and the client owes more of the body.
    fn wants_body(&self) -> bool {
        self.upload.owed() && self.sent == self.request.len()
    }
}

impl Drop for FcgiJob {
    /// A job dropped before it ended gives its backend connection and its place in the queue up.
    fn drop(&mut self) {
        self.drop_backend();
    }
}
