//! One event loop: its SO_REUSEPORT listeners, its connections (a slab indexed by mio token), the
//! jobs running for them (jobs.rs), its request handler with its file cache, its Date line and
//! access log buffer. Edge-triggered mio; each connection is registered once for both directions.
//! The hot path reads into one loop-wide buffer, hands the bytes to the connection's protocol,
//! which answers every complete request into one loop-wide output buffer, and writes it with a
//! single call, so a connection only owns memory while it holds a partial request or unsent
//! output. Data flows one way: socket → protocol → handler or job → protocol → socket.

use crate::accesslog;
use crate::conn::{Conn, Written};
use crate::date::DateLine;
use crate::dispatch::Dispatch;
use crate::h1::Http1;
use crate::handler::Handler;
use crate::job::Progress;
use crate::jobs::{Jobs, Owner};
use crate::output::Out;
use crate::protocol::Protocol;
use crate::request::{self, Version};
use crate::service::{Asked, Moment, Served, Service};
use crate::site::Site;
use crate::transport::Transport;
use crate::{h2, tls};
use mio::{Events, Interest, Poll, Token};
use std::io::{self, Read};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Listener `i` has token `LISTENERS + i` (a plain and a TLS one at most).
const LISTENERS: usize = usize::MAX - 8;
pub const WAKER: Token = Token(usize::MAX - 2);

/// Size of the loop-wide read buffer; a read that fills it is followed by another.
const READ_BUF: usize = 64 << 10;
/// How long a lingering close waits for the peer's FIN after an error answer.
const LINGER: Duration = Duration::from_secs(2);
/// How long accepting pauses after running out of descriptors.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// A listening socket of one loop, and the TLS settings of the connections it accepts (none for
/// plain HTTP).
pub struct Listener {
    pub socket: mio::net::TcpListener,
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

/// The protocol a connection speaks, from its first bytes: HTTP/2 when TLS negotiated `h2`, or
/// when a plain connection opens with the HTTP/2 preface and `--h2c` allows it; else HTTP/1.
fn choose(transport: &Transport, first: &[u8], site: &Site, now: Instant) -> Box<dyn Protocol> {
    let config = &site.config;
    let n = first.len().min(webstand_h2::PREFACE.len());
    let h2 = match transport.is_tls() {
        true => transport.alpn_h2(),
        false => config.h2c && n >= 3 && first[..n] == webstand_h2::PREFACE[..n],
    };
    match h2 {
        true => Box::new(h2::State::new(now, config.max_body)),
        false => Box::new(Http1::new(config)),
    }
}

/// A connection and the jobs running for it.
struct Slot {
    conn: Conn,
    jobs: Vec<usize>,
}

/// What a step of the connection's jobs came to.
#[derive(Clone, Copy)]
enum Pump {
    /// Nothing more until a source (or the client) is ready.
    Wait,
    /// Output was produced or a job ended: flush and go on.
    Progress,
    /// A job has all it was given and the body is still coming: read the client.
    Body,
}

pub struct Worker {
    poll: Poll,
    /// This loop's listeners (empty once draining).
    listeners: Vec<Listener>,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    live: usize,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    site: Arc<Site>,
    handler: Handler,
    jobs: Jobs,
    log: accesslog::Buffer,
    /// The loop's clock, read once per poll round, and its Date line.
    now: Instant,
    date: DateLine,
    /// A stop was asked: answer what is in flight with Connection: close.
    draining: bool,
    /// A descriptor held in reserve: closed to accept-and-refuse one connection when out of fds.
    reserve_fd: Option<std::fs::File>,
    accept_resume: Option<Instant>,
    tick: Duration,
    next_tick: Instant,
    drain_deadline: Option<Instant>,
}

impl Worker {
    pub fn new(poll: Poll, mut listeners: Vec<Listener>, site: Arc<Site>) -> io::Result<Worker> {
        for (i, l) in listeners.iter_mut().enumerate() {
            poll.registry()
                .register(&mut l.socket, Token(LISTENERS + i), Interest::READABLE)?;
        }
        let c = &site.config;
        let shortest = c
            .header_timeout
            .min(c.idle_timeout)
            .min(c.io_timeout)
            .min(c.cgi_timeout)
            .min(c.fastcgi_timeout);
        let tick = (shortest / 4).clamp(Duration::from_millis(5), Duration::from_millis(250));
        let jobs = Jobs::new(poll.registry(), &site)?;
        Ok(Worker {
            poll,
            listeners,
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            rbuf: vec![0; READ_BUF],
            wbuf: Vec::with_capacity(READ_BUF),
            handler: Handler::new(site.clone()),
            site,
            jobs,
            log: accesslog::Buffer::default(),
            now: Instant::now(),
            date: DateLine::new(),
            draining: false,
            reserve_fd: std::fs::File::open("/dev/null").ok(),
            accept_resume: None,
            tick,
            next_tick: Instant::now() + tick,
            drain_deadline: None,
        })
    }

    /// Runs until a stop was requested and every connection is finished (or the drain timed out).
    pub fn run(mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = self.next_tick.saturating_duration_since(Instant::now());
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            self.now = Instant::now();
            self.date.refresh();
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {}
                    Token(t) if t >= LISTENERS => self.accept_all(t - LISTENERS),
                    token => match Jobs::of_token(token) {
                        // A job's source is ready: its connection moves it on.
                        Some(job) => {
                            if let Some(conn) = self.jobs.get(job).map(|r| r.owner.conn) {
                                self.drive(conn, false, false);
                            }
                        }
                        None => {
                            let readable = ev.is_readable() || ev.is_read_closed() || ev.is_error();
                            self.drive(token.0, readable, ev.is_read_closed());
                        }
                    },
                }
            }
            if self.now >= self.next_tick {
                self.next_tick = self.now + self.tick;
                self.on_tick();
            }
            if self.site.stopping.load(Ordering::Relaxed) && self.drain_step() {
                self.flush_log();
                return Ok(());
            }
        }
    }

    fn flush_log(&mut self) {
        if let Some(sink) = &self.site.log {
            self.log.flush(sink);
        }
    }

    /// Stop accepting and close what is idle; returns true once nothing is left.
    fn drain_step(&mut self) -> bool {
        if !self.draining {
            for mut l in std::mem::take(&mut self.listeners) {
                let _ = self.poll.registry().deregister(&mut l.socket);
            }
            self.draining = true;
            self.drain_deadline = Some(self.now + self.site.config.drain_timeout);
            // Idle connections close now; busy ones answer with Connection: close and then close.
            for i in 0..self.slots.len() {
                if self.slots[i]
                    .as_ref()
                    .is_some_and(|s| s.conn.is_idle(s.jobs.len()))
                {
                    self.close(i);
                }
            }
        }
        self.live == 0 || self.drain_deadline.is_some_and(|d| self.now >= d)
    }

    fn accept_all(&mut self, which: usize) {
        if self.accept_resume.is_some() {
            return;
        }
        loop {
            let Some(listener) = self.listeners.get(which) else {
                return;
            };
            match listener.socket.accept() {
                Ok((sock, peer)) => {
                    if self.live >= self.site.config.max_connections {
                        refuse(&sock, listener.tls.is_some());
                        continue;
                    }
                    let transport = match &listener.tls {
                        None => Transport::Tcp(sock),
                        Some(config) => match tls::TlsStream::new(sock, config) {
                            Ok(t) => Transport::Tls(Box::new(t)),
                            Err(_) => continue,
                        },
                    };
                    let conn = Conn::new(transport, peer.ip(), self.now, &self.site.config);
                    let idx = self.insert(conn);
                    // With TCP_DEFER_ACCEPT the request is usually already here: read it now and
                    // skip a trip through epoll (a one-request connection is never registered).
                    self.drive(idx, true, false);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if is_out_of_fds(&e) => {
                    self.out_of_fds(which);
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
                Err(_) => {
                    // Unknown accept trouble: back off rather than spin.
                    self.accept_resume = Some(self.now + ACCEPT_BACKOFF);
                    return;
                }
            }
        }
    }

    /// Out of descriptors: answer one waiting client 503 using the reserve descriptor, then pause
    /// accepting for a moment. Never exits.
    fn out_of_fds(&mut self, which: usize) {
        if let Some(reserve) = self.reserve_fd.take() {
            drop(reserve);
            if let Some(l) = self.listeners.get(which) {
                if let Ok((sock, _)) = l.socket.accept() {
                    refuse(&sock, l.tls.is_some());
                }
            }
            self.reserve_fd = std::fs::File::open("/dev/null").ok();
        }
        self.accept_resume = Some(self.now + ACCEPT_BACKOFF);
    }

    fn insert(&mut self, conn: Conn) -> usize {
        self.live += 1;
        let slot = Some(Slot {
            conn,
            jobs: Vec::new(),
        });
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        }
    }

    fn close(&mut self, idx: usize) {
        let Some(mut slot) = self.slots[idx].take() else {
            return;
        };
        slot.conn.farewell();
        // Its jobs end: the programs are killed, the backend connections closed.
        for id in slot.jobs {
            if let Some(r) = self.jobs.get_mut(id) {
                r.job.cancel();
            }
            self.jobs.end(id);
        }
        if let Some(rule) = slot.conn.outbox.throttle {
            self.site.throttles[rule].release(slot.conn.outbox.unsent());
        }
        self.free.push(idx);
        self.live -= 1;
        // Dropping the socket closes it, which also removes it from epoll.
    }

    /// Moves a connection forward after an event (or a timer, a job's source, an accept).
    fn drive(&mut self, idx: usize, readable: bool, hup: bool) {
        if !self.slots.get(idx).is_some_and(Option::is_some) {
            return;
        }
        match self.step(idx, readable, hup) {
            Ok(true) => self.register(idx),
            Ok(false) | Err(_) => self.close(idx),
        }
        while let Some(owner) = self.jobs.woken() {
            // A FastCGI backend connection came back for this connection's waiting request.
            self.drive(owner, false, false);
        }
    }

    /// Registers a connection that lives past its first step (once, for both directions).
    fn register(&mut self, idx: usize) {
        let Some(slot) = self.slots[idx].as_mut() else {
            return;
        };
        if slot.conn.registered {
            return;
        }
        slot.conn.registered = true;
        let source = slot.conn.transport.source();
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self
            .poll
            .registry()
            .register(source, Token(idx), interest)
            .is_err()
        {
            self.close(idx);
        }
    }

    /// Advances one connection: write what is queued, move its jobs on, then read and answer
    /// requests until the socket has nothing more, output blocks, or the connection is to close.
    /// Ok(false) = close it now.
    fn step(&mut self, idx: usize, readable: bool, hup: bool) -> io::Result<bool> {
        let io_timeout = self.site.config.io_timeout;
        {
            let conn = &mut self.slot(idx).conn;
            conn.hup |= hup;
            // Input that arrived while the connection was busy is still owed a read.
            conn.unread |= readable;
        }
        loop {
            let now = self.now;
            let conn = &mut self.slots[idx].as_mut().expect("a live slot").conn;
            if conn.has_output() || !self.wbuf.is_empty() {
                match conn.flush(&mut self.wbuf, &self.site.throttles, now)? {
                    Written::Done => {}
                    Written::Blocked => {
                        conn.deadline = now + io_timeout;
                        return Ok(true);
                    }
                    Written::Throttled(until) => {
                        conn.throttled_until = Some(until);
                        conn.deadline = now + io_timeout;
                        return Ok(true);
                    }
                }
            }
            if conn.lingering {
                return swallow_input(conn, &mut self.rbuf);
            }
            // HTTP/1 waits for a job's answer; HTTP/2 reads and answers its other streams meanwhile.
            let multiplexed = conn.protocol.as_ref().is_some_and(|p| p.multiplexed());
            let body_wanted = match self.slot(idx).jobs.is_empty() {
                true => false,
                false => match self.pump_jobs(idx) {
                    Pump::Progress => continue,
                    // An HTTP/2 stream's body already here goes to its job.
                    Pump::Body if multiplexed && self.pass_bodies(idx) => continue,
                    Pump::Wait | Pump::Body if multiplexed => false,
                    Pump::Wait => return Ok(true),
                    // Read the client on: its bytes are the job's request body.
                    Pump::Body => true,
                },
            };
            let draining = self.draining;
            let slot = self.slots[idx].as_mut().expect("a live slot");
            let conn = &mut slot.conn;
            if !body_wanted && (conn.outbox.closing || (draining && conn.is_idle(slot.jobs.len())))
            {
                if !conn.outbox.linger {
                    return Ok(false);
                }
                conn.transport.shutdown_write();
                conn.lingering = true;
                conn.deadline = now + LINGER;
                continue;
            }
            if !body_wanted && self.with_protocol(idx, |p, at, out, svc| p.resume(at, out, svc)) {
                continue;
            }
            let conn = &mut self.slots[idx].as_mut().expect("a live slot").conn;
            if !conn.unread {
                conn.set_wait_deadline(now, &self.site.config);
                return Ok(true);
            }
            let n = match conn.transport.read(&mut self.rbuf) {
                Ok(0) => return Ok(false),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    conn.unread = false;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            // A short read drained the socket; edge-triggered epoll reports the next arrival.
            // After a hang-up no further edge comes, so read on to the end.
            conn.unread = conn.transport.may_have_more(n, self.rbuf.len()) || conn.hup;
            if conn.protocol.is_none() {
                conn.protocol = Some(choose(&conn.transport, &self.rbuf[..n], &self.site, now));
            }
            let input = std::mem::take(&mut self.rbuf);
            self.with_protocol(idx, |p, at, out, svc| p.receive(&input[..n], at, out, svc));
            self.rbuf = input;
        }
    }

    fn slot(&mut self, idx: usize) -> &mut Slot {
        self.slots[idx].as_mut().expect("a live slot")
    }

    /// Calls `f` with the connection's protocol and what it works with: the round's clock, the
    /// output, and the server as its `Service`. False when no protocol was chosen yet.
    fn with_protocol<T: Default>(
        &mut self,
        idx: usize,
        f: impl FnOnce(&mut dyn Protocol, &Moment, &mut Out, &mut Dispatch) -> T,
    ) -> T {
        self.with_dispatch(idx, None, |protocol, at, out, svc| match protocol {
            Some(p) => f(p, at, out, svc),
            None => T::default(),
        })
    }

    /// Calls `f` with the connection's protocol (if chosen), the round's clock, the output and a
    /// `Dispatch` for the connection (serving a local redirect when `redirect` is given).
    fn with_dispatch<'r, T>(
        &'r mut self,
        idx: usize,
        redirect: Option<(&'r [u8], u8)>,
        f: impl FnOnce(Option<&mut (dyn Protocol + 'static)>, &Moment, &mut Out, &mut Dispatch) -> T,
    ) -> T {
        let Worker {
            slots,
            wbuf,
            site,
            handler,
            jobs,
            log,
            now,
            date,
            draining,
            ..
        } = self;
        let slot = slots[idx].as_mut().expect("a live slot");
        let conn = &mut slot.conn;
        let at = Moment {
            now: *now,
            date_line: date.line(),
            draining: *draining,
        };
        let mut out = Out {
            bytes: wbuf,
            outbox: &mut conn.outbox,
        };
        let mut svc = Dispatch {
            site,
            handler,
            jobs,
            conn: idx,
            mine: &mut slot.jobs,
            peer: conn.peer,
            transport: &conn.transport,
            client: &mut conn.client,
            log,
            now: *now,
            secs: date.secs(),
            redirect,
        };
        let protocol = conn.protocol.as_deref_mut();
        f(protocol, &at, &mut out, &mut svc)
    }

    /// Moves the connection's jobs on (each writing into its request's sink); ends those that
    /// ended.
    fn pump_jobs(&mut self, idx: usize) -> Pump {
        let mut overall = Pump::Wait;
        let mut i = 0;
        while i < self.slot(idx).jobs.len() {
            let id = self.slot(idx).jobs[i];
            let progress = self.advance_job(idx, id, false);
            let ended = progress.ended();
            let this = match progress {
                Progress::Wait => Pump::Wait,
                Progress::Body => Pump::Body,
                _ => Pump::Progress,
            };
            overall = match (overall, this) {
                (Pump::Progress, _) | (_, Pump::Progress) => Pump::Progress,
                (Pump::Body, _) | (_, Pump::Body) => Pump::Body,
                _ => Pump::Wait,
            };
            if ended {
                self.job_ended(idx, id, progress);
            } else {
                i += 1;
            }
        }
        overall
    }

    /// Moves job `id` of connection `idx` on (or, `expired`, ends it at its deadline) through the
    /// sink of the request it answers.
    fn advance_job(&mut self, idx: usize, id: usize, expired: bool) -> Progress {
        let now = self.now;
        let Worker {
            slots,
            wbuf,
            jobs,
            date,
            draining,
            ..
        } = self;
        let Some(running) = jobs.get_mut(id) else {
            return Progress::Done {
                status: 0,
                bytes: 0,
            };
        };
        let conn = &mut slots[idx].as_mut().expect("a live slot").conn;
        let Some(protocol) = conn.protocol.as_deref_mut() else {
            return Progress::Wait;
        };
        let at = Moment {
            now,
            date_line: date.line(),
            draining: *draining,
        };
        let mut out = Out {
            bytes: wbuf,
            outbox: &mut conn.outbox,
        };
        let mut progress = Progress::Wait;
        protocol.answer(running.owner.stream, &at, &mut out, &mut |sink| {
            progress = match expired {
                true => running.job.expire(now, sink),
                false => running.job.advance(now, sink),
            };
        });
        progress
    }

    /// Job `id` of connection `idx` ended: its answer is logged and the protocol told, or (a local
    /// redirect) the path it names is served for the request instead.
    fn job_ended(&mut self, idx: usize, id: usize, progress: Progress) {
        let body_owed = self.jobs.get(id).is_some_and(|r| r.job.body_owed());
        let Some(owner) = self.jobs.end(id) else {
            return;
        };
        self.slot(idx).jobs.retain(|&j| j != id);
        match progress {
            Progress::Redirect(path) => self.serve_redirect(idx, &owner, &path),
            Progress::Done { status, bytes } => {
                self.with_dispatch(idx, None, |protocol, at, out, svc| {
                    let user = owner.user.as_deref();
                    svc.log_line(&owner.request_line, status, bytes, user);
                    if let Some(p) = protocol {
                        p.answered(owner.stream, status, body_owed, at, out);
                    }
                });
            }
            _ => {}
        }
    }

    /// Serves `path` for the request a job answered with a local redirect (a GET in the
    /// request's version, answered on its stream; RFC 3875 §6.2.2).
    fn serve_redirect(&mut self, idx: usize, owner: &Owner, path: &[u8]) {
        let mut raw = b"GET ".to_vec();
        raw.extend_from_slice(path);
        raw.extend_from_slice(match owner.version {
            Version::Http1(0) => b" HTTP/1.0\r\n",
            _ => b" HTTP/1.1\r\n",
        });
        // HTTP/1.1 requires a Host field: without one the head is refused (400).
        raw.extend_from_slice(b"Host: localhost\r\n\r\n");
        let limits = self.site.config.limits();
        let parsed = webstand_http1::request::parse_head(&raw, &limits);
        let redirect = Some((&owner.request_line[..], owner.redirects + 1));
        self.with_dispatch(idx, redirect, |protocol, at, out, svc| {
            let Some(p) = protocol else {
                return;
            };
            let mut served = None;
            p.answer(owner.stream, at, out, &mut |sink| {
                let Ok(Some(parsed)) = &parsed else {
                    let n = crate::response::simple(sink, 502, b"", false);
                    svc.log_line(&owner.request_line, 502, n, None);
                    served = Some(502);
                    return;
                };
                let mut head = request::Head::from_http1(parsed);
                head.version = owner.version;
                let asked = Asked {
                    head: &head,
                    body: b"",
                    stream: owner.stream,
                    max_jobs: usize::MAX,
                };
                if let Served::Answered { status, .. } = svc.serve(&asked, sink) {
                    served = Some(status);
                }
            });
            if let Some(status) = served {
                p.answered(owner.stream, status, false, at, out);
            }
        });
    }

    /// Hands HTTP/2 request bodies already received to the jobs that now take them.
    fn pass_bodies(&mut self, idx: usize) -> bool {
        self.with_protocol(idx, |p, _, _, svc| p.pass_bodies(svc))
    }

    /// Timeouts, the accept backoff, collecting ended jobs, and flushing the access log.
    fn on_tick(&mut self) {
        let now = self.now;
        if self.accept_resume.is_some_and(|t| now >= t) {
            self.accept_resume = None;
            for which in 0..self.listeners.len() {
                self.accept_all(which);
            }
        }
        for i in 0..self.slots.len() {
            let Some(slot) = self.slots[i].as_mut() else {
                continue;
            };
            if !slot.jobs.is_empty() && !slot.conn.has_output() {
                // A job's deadline bounds the wait for its answer; the client is not the one late
                // (while it takes output, its own I/O timeout applies, below).
                self.expire_jobs(i);
                continue;
            }
            let c = &mut slot.conn;
            if c.throttled_until.is_some_and(|t| now >= t) {
                c.throttled_until = None;
                self.drive(i, false, false);
                continue;
            }
            if now < c.deadline {
                continue;
            }
            if c.awaiting_request_bytes(slot.jobs.len()) && !c.lingering {
                // A request started but never finished within the header timeout (slowloris).
                self.with_protocol(i, |p, at, out, svc| p.timeout(at, out, svc));
                self.drive(i, false, false);
            } else {
                self.close(i);
            }
        }
        while let Some(owner) = self.jobs.woken() {
            self.drive(owner, false, false);
        }
        self.jobs.reap();
        self.flush_log();
    }

    /// Ends the connection's jobs that are past their deadline (504, 408, or a cut answer).
    fn expire_jobs(&mut self, idx: usize) {
        let mut late = self.slot(idx).jobs.clone();
        let (jobs, now) = (&self.jobs, self.now);
        late.retain(|&id| jobs.get(id).is_some_and(|r| now >= r.job.deadline()));
        if late.is_empty() {
            return;
        }
        for id in late {
            let progress = self.advance_job(idx, id, true);
            self.job_ended(idx, id, progress);
        }
        self.drive(idx, false, false);
    }
}

/// Error answer sent and write side shut: swallow input until the peer closes.
fn swallow_input(conn: &mut Conn, rbuf: &mut [u8]) -> io::Result<bool> {
    loop {
        match conn.transport.read(rbuf) {
            Ok(0) => return Ok(false),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn is_out_of_fds(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOBUFS) | Some(libc::ENOMEM)
    )
}

/// Best-effort 503 on a connection that cannot be served, then close it. The request (already here
/// with TCP_DEFER_ACCEPT) is read first: closing with unread input would send a reset that can
/// overtake the answer. A TLS client could not read a plaintext answer: it only sees the close.
fn refuse(sock: &mio::net::TcpStream, tls: bool) {
    use std::io::Write;
    if tls {
        return;
    }
    let mut discard = [0u8; 4096];
    let _ = (&*sock).read(&mut discard);
    let _ = (&*sock).write(
        b"HTTP/1.1 503 Service Unavailable\r\nServer: webstand\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
}
