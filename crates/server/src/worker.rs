//! One event loop: its SO_REUSEPORT listener, its connections (a slab indexed by mio token), its
//! file cache and Date line. Edge-triggered mio; each connection is registered once for both
//! directions. The hot path reads into one loop-wide buffer, answers every complete pipelined
//! request into one loop-wide output buffer and writes it with a single call, so a connection
//! only owns memory while it holds a partial request or unsent output.

use crate::conn::{Conn, Output};
use crate::fastcgi::{Pump, FASTCGI_BASE};
use crate::handler::Ctx;
use crate::transport::Transport;
use crate::{tls, Listener, Shared};
use mio::{Events, Interest, Poll, Token};
use std::io::{self, Read};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Listener `i` has token `LISTENERS + i` (a plain and a TLS one at most).
const LISTENERS: usize = usize::MAX - 8;
pub const WAKER: Token = Token(usize::MAX - 2);
/// Tokens at or above this belong to CGI pipes: `CGI_BASE + connection index`.
pub const CGI_BASE: usize = 1 << 40;

/// Size of the loop-wide read buffer; a read that fills it is followed by another.
const READ_BUF: usize = 64 << 10;
/// How long a lingering close waits for the peer's FIN after an error answer.
const LINGER: Duration = Duration::from_secs(2);
/// How long accepting pauses after running out of descriptors.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

pub struct Worker {
    poll: Poll,
    /// This loop's listeners (empty once draining).
    listeners: Vec<Listener>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    live: usize,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    ctx: Ctx,
    /// A descriptor held in reserve: closed to accept-and-refuse one connection when out of fds.
    reserve_fd: Option<std::fs::File>,
    accept_resume: Option<Instant>,
    tick: Duration,
    next_tick: Instant,
    drain_deadline: Option<Instant>,
}

impl Worker {
    pub fn new(
        poll: Poll,
        mut listeners: Vec<Listener>,
        shared: Arc<Shared>,
    ) -> io::Result<Worker> {
        for (i, l) in listeners.iter_mut().enumerate() {
            poll.registry()
                .register(&mut l.socket, Token(LISTENERS + i), Interest::READABLE)?;
        }
        let c = &shared.config;
        let shortest = c
            .header_timeout
            .min(c.idle_timeout)
            .min(c.io_timeout)
            .min(c.cgi_timeout)
            .min(c.fastcgi_timeout);
        let tick = (shortest / 4).clamp(Duration::from_millis(5), Duration::from_millis(250));
        Ok(Worker {
            poll,
            listeners,
            conns: Vec::new(),
            free: Vec::new(),
            live: 0,
            rbuf: vec![0; READ_BUF],
            wbuf: Vec::with_capacity(READ_BUF),
            ctx: Ctx::new(shared),
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
            self.ctx.now = Instant::now();
            self.ctx.date.refresh();
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {}
                    Token(t) if t >= LISTENERS => self.accept_all(t - LISTENERS),
                    Token(t) if t >= FASTCGI_BASE => self.drive(t - FASTCGI_BASE, false, false),
                    Token(t) if t >= CGI_BASE => self.cgi_event(t - CGI_BASE),
                    Token(i) => {
                        let readable = ev.is_readable() || ev.is_read_closed() || ev.is_error();
                        self.drive(i, readable, ev.is_read_closed());
                    }
                }
            }
            if self.ctx.now >= self.next_tick {
                self.next_tick = self.ctx.now + self.tick;
                self.on_tick();
            }
            if self.ctx.shared.stopping.load(Ordering::Relaxed) && self.drain_step() {
                self.ctx.flush_log();
                return Ok(());
            }
        }
    }

    /// Stop accepting and close what is idle; returns true once nothing is left.
    fn drain_step(&mut self) -> bool {
        if !self.ctx.draining {
            for mut l in std::mem::take(&mut self.listeners) {
                let _ = self.poll.registry().deregister(&mut l.socket);
            }
            self.ctx.draining = true;
            self.drain_deadline = Some(self.ctx.now + self.ctx.shared.config.drain_timeout);
            // Idle connections close now; busy ones answer with Connection: close and then close.
            for i in 0..self.conns.len() {
                if self.conns[i].as_ref().is_some_and(|c| c.is_idle()) {
                    self.close(i);
                }
            }
        }
        self.live == 0 || self.drain_deadline.is_some_and(|d| self.ctx.now >= d)
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
                    if self.live >= self.ctx.shared.config.max_connections {
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
                    let config = &self.ctx.shared.config;
                    let conn = Conn::new(transport, peer.ip(), self.ctx.now, config);
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
                    self.accept_resume = Some(self.ctx.now + ACCEPT_BACKOFF);
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
        self.accept_resume = Some(self.ctx.now + ACCEPT_BACKOFF);
    }

    fn insert(&mut self, conn: Conn) -> usize {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.conns[i] = Some(conn);
                i
            }
            None => {
                self.conns.push(Some(conn));
                self.conns.len() - 1
            }
        }
    }

    fn close(&mut self, idx: usize) {
        if let Some(mut c) = self.conns[idx].take() {
            c.farewell();
            self.ctx.end_cgi(&mut c, None, self.poll.registry());
            self.ctx.end_fastcgi(&mut c, idx, None);
            if let Some(rule) = c.throttle {
                self.ctx.throttle_release(rule, c.unsent());
            }
            self.free.push(idx);
            self.live -= 1;
            // Dropping the socket closes it, which also removes it from epoll.
        }
    }

    /// Moves a connection forward after an event (or a timer, or an accept).
    fn drive(&mut self, idx: usize, readable: bool, hup: bool) {
        let Some(conn) = self.conns.get_mut(idx).and_then(|c| c.as_mut()) else {
            return;
        };
        let round = Round {
            ctx: &mut self.ctx,
            rbuf: &mut self.rbuf,
            wbuf: &mut self.wbuf,
            idx,
            registry: self.poll.registry(),
        };
        let keep = step(round, conn, readable, hup);
        match keep {
            Ok(true) => {
                if !conn.registered {
                    conn.registered = true;
                    if self
                        .poll
                        .registry()
                        .register(
                            conn.transport.source(),
                            Token(idx),
                            Interest::READABLE | Interest::WRITABLE,
                        )
                        .is_err()
                    {
                        self.close(idx);
                    }
                }
            }
            Ok(false) | Err(_) => self.close(idx),
        }
        self.wake_fastcgi_waiters();
    }

    /// Drives the requests a FastCGI connection came back for (they wait in the pool's queue).
    fn wake_fastcgi_waiters(&mut self) {
        while let Some(waiter) = self.ctx.fcgi_wake.pop() {
            self.drive(waiter, false, false);
        }
    }

    fn cgi_event(&mut self, idx: usize) {
        let Some(conn) = self.conns.get_mut(idx).and_then(|c| c.as_mut()) else {
            return;
        };
        if self
            .ctx
            .cgi_progress(conn, &mut self.wbuf, self.poll.registry())
        {
            // The program finished: its answer is in wbuf; write it and carry on with the connection.
            self.drive(idx, false, false);
        }
    }

    /// Timeouts, the accept backoff, and flushing the access log.
    fn on_tick(&mut self) {
        let now = self.ctx.now;
        if self.accept_resume.is_some_and(|t| now >= t) {
            self.accept_resume = None;
            for which in 0..self.listeners.len() {
                self.accept_all(which);
            }
        }
        for i in 0..self.conns.len() {
            let Some(c) = self.conns[i].as_mut() else {
                continue;
            };
            if c.cgi.iter().any(|j| now >= j.deadline) {
                self.ctx
                    .cgi_timed_out(c, &mut self.wbuf, self.poll.registry());
                self.drive(i, false, false);
                continue;
            }
            // HTTP/1 waits for the program's answer, bounded by the CGI timeout: the header and
            // idle timeouts are the client's, and it is not the one late (an answer it is slow to
            // take still meets the I/O timeout, below).
            if !c.cgi.is_empty() && !c.protocol.multiplexed() && !c.has_output() {
                continue;
            }
            if !c.fcgi.is_empty() {
                // While the client takes the output, its own I/O timeout applies (below).
                if !c.has_output() {
                    if c.fcgi.iter().any(|j| now >= j.deadline) {
                        self.ctx.fastcgi_timed_out(c, &mut self.wbuf, i);
                        self.drive(i, false, false);
                    }
                    continue;
                }
            }
            if c.throttled_until.is_some_and(|t| now >= t) {
                c.throttled_until = None;
                self.drive(i, false, false);
                continue;
            }
            if now < c.deadline {
                continue;
            }
            if c.awaiting_request_bytes() && !c.lingering {
                // A request started but never finished within the header timeout (slowloris).
                self.ctx.timeout_input(c, &mut self.wbuf);
                self.drive(i, false, false);
            } else {
                self.close(i);
            }
        }
        self.wake_fastcgi_waiters();
        self.ctx.reap();
        self.ctx.flush_log();
    }
}

/// What a connection's step borrows from its loop besides the connection itself.
struct Round<'a> {
    ctx: &'a mut Ctx,
    /// The loop-wide read buffer.
    rbuf: &'a mut [u8],
    /// The loop-wide output buffer (this round's answers).
    wbuf: &'a mut Vec<u8>,
    /// The connection's slot (a CGI pipe's token derives from it).
    idx: usize,
    registry: &'a mio::Registry,
}

/// Advances one connection: write what is queued, then read and answer requests until the socket
/// has nothing more, output blocks, or the connection is to close. Ok(false) = close it now.
fn step(r: Round, conn: &mut Conn, readable: bool, hup: bool) -> io::Result<bool> {
    let Round {
        ctx,
        rbuf,
        wbuf,
        idx,
        registry,
    } = r;
    conn.hup |= hup;
    // Input that arrived while the connection was busy is still owed a read.
    conn.unread |= readable;
    loop {
        if conn.has_output() || !wbuf.is_empty() {
            match conn.flush(wbuf, ctx)? {
                Output::Done => {}
                Output::Blocked => {
                    conn.deadline = ctx.now + ctx.shared.config.io_timeout;
                    return Ok(true);
                }
                Output::Throttled(until) => {
                    conn.throttled_until = Some(until);
                    conn.deadline = ctx.now + ctx.shared.config.io_timeout;
                    return Ok(true);
                }
            }
        }
        if conn.lingering {
            return swallow_input(conn, rbuf);
        }
        // HTTP/1 waits for a job's answer; HTTP/2 reads and answers its other streams meanwhile.
        let multiplexed = conn.protocol.multiplexed();
        if !conn.cgi.is_empty() && !multiplexed {
            return Ok(true);
        }
        let body_wanted = match !conn.fcgi.is_empty() {
            true => match ctx.fastcgi_pump(conn, wbuf, idx, registry) {
                Pump::Progress => continue,
                // An HTTP/2 stream's body already here goes to its job (h2/mod.rs's feed_bodies).
                Pump::Body if multiplexed && ctx.feed_h2_bodies(conn) => continue,
                Pump::Wait | Pump::Body if multiplexed => false,
                Pump::Wait => return Ok(true),
                // Read the client on: its bytes are the job's request body (fastcgi/body.rs).
                Pump::Body => true,
            },
            false => false,
        };
        if !body_wanted && (conn.closing || (ctx.draining && conn.is_idle())) {
            if !conn.linger {
                return Ok(false);
            }
            conn.transport.shutdown_write();
            conn.lingering = true;
            conn.deadline = ctx.now + LINGER;
            continue;
        }
        if !body_wanted && ctx.resume_input(conn, wbuf, idx, registry) {
            continue;
        }
        if !conn.unread {
            conn.set_wait_deadline(ctx.now, &ctx.shared.config);
            return Ok(true);
        }
        let n = match conn.transport.read(rbuf) {
            Ok(0) => return Ok(false),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                conn.unread = false;
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        // A short read drained the socket; edge-triggered epoll reports the next arrival. After a
        // hang-up no further edge comes, so read on to the end.
        conn.unread = conn.transport.may_have_more(n, rbuf.len()) || conn.hup;
        ctx.serve_input(conn, &rbuf[..n], wbuf, idx, registry);
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
