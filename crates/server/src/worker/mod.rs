//! One event loop: its SO_REUSEPORT listeners, its connections (a slab indexed by mio token), the
//! jobs running for them (jobs.rs), its request handler with its file cache, its Date line and
//! access log buffer. Edge-triggered mio; each connection is registered once for both directions.
//! The hot path reads into one loop-wide buffer, hands the bytes to the connection's protocol,
//! which answers every complete request into one loop-wide output buffer, and writes it with a
//! single call, so a connection only owns memory while it holds a partial request or unsent
//! output. Data flows one way: socket → protocol → handler or job → protocol → socket.
//!
//! The `Worker` is one type with four concerns, a file each: this one is the loop itself
//! (events, accepting, closing, timeouts, draining); step.rs moves one connection forward
//! (write, read, its protocol); pump.rs moves a connection's jobs on and ends them; quic.rs is
//! the loop's QUIC socket (datagrams routed to connections, new ones admitted, QUIC's timers).
//! A QUIC connection lives in a slot like any other, its transport the QUIC connection's streams.

mod pump;
mod quic;
mod step;

use crate::accesslog;
use crate::conn::Conn;
use crate::date::DateLine;
use crate::handler::Handler;
use crate::jobs::Jobs;
use crate::quic::socket::Shared;
use crate::site::Site;
use crate::tls;
use crate::transport::Transport;
use mio::{Events, Interest, Poll, Token};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Read};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Listener `i` has token `LISTENERS + i` (a plain and a TLS one at most).
const LISTENERS: usize = usize::MAX - 8;
/// The loop's QUIC socket.
const QUIC: Token = Token(usize::MAX - 4);
pub const WAKER: Token = Token(usize::MAX - 2);

/// Size of the loop-wide read buffer; a read that fills it is followed by another.
const READ_BUF: usize = 64 << 10;
/// How long accepting pauses after running out of descriptors.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// A listening socket of one loop, and the TLS settings of the connections it accepts (none for
/// plain HTTP).
pub struct Listener {
    pub socket: mio::net::TcpListener,
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

/// The loop's QUIC socket and the settings of the connections it takes (`--listen-quic`).
pub struct QuicListener {
    pub socket: std::net::UdpSocket,
    pub settings: Arc<quinn_proto::ServerConfig>,
}

/// What one loop listens on.
#[derive(Default)]
pub struct Listeners {
    pub tcp: Vec<Listener>,
    pub quic: Option<QuicListener>,
}

/// A connection and the jobs running for it.
struct Slot {
    conn: Conn,
    jobs: Vec<usize>,
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
    /// The QUIC socket, its endpoint and what its connections share (quic.rs).
    quic: Option<Rc<Shared>>,
    /// When QUIC connections' timers are due (a slot's entry is current while it equals the
    /// connection's `armed`).
    quic_timers: BinaryHeap<Reverse<(Instant, usize)>>,
    /// Datagrams received in one call (GRO: several per buffer).
    datagrams: Vec<u8>,
}

impl Worker {
    pub fn new(poll: Poll, listeners: Listeners, site: Arc<Site>) -> io::Result<Worker> {
        let Listeners {
            tcp: mut listeners,
            quic,
        } = listeners;
        for (i, l) in listeners.iter_mut().enumerate() {
            poll.registry()
                .register(&mut l.socket, Token(LISTENERS + i), Interest::READABLE)?;
        }
        let quic = match quic {
            Some(q) => {
                let mut shared = Shared::new(q.socket, q.settings)?;
                poll.registry()
                    .register(&mut shared.socket, QUIC, Interest::READABLE)?;
                Some(Rc::new(shared))
            }
            None => None,
        };
        let c = &site.config;
        let shortest = c
            .header_timeout
            .min(c.idle_timeout)
            .min(c.io_timeout)
            .min(c.cgi_timeout)
            .min(c.fastcgi_timeout);
        let tick = (shortest / 4).clamp(Duration::from_millis(5), Duration::from_millis(250));
        let jobs = Jobs::new(poll.registry(), &site)?;
        let alt_svc = site.alt_svc.clone();
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
            date: DateLine::with_extra(alt_svc.as_deref().unwrap_or_default()),
            draining: false,
            reserve_fd: std::fs::File::open("/dev/null").ok(),
            accept_resume: None,
            tick,
            next_tick: Instant::now() + tick,
            drain_deadline: None,
            quic,
            quic_timers: BinaryHeap::new(),
            datagrams: Vec::new(),
        })
    }

    /// Runs until a stop was requested and every connection is finished (or the drain timed out).
    pub fn run(mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            let wake = self
                .next_quic_timer()
                .map_or(self.next_tick, |t| t.min(self.next_tick));
            let timeout = wake.saturating_duration_since(Instant::now());
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
                    QUIC => self.receive_datagrams(),
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
            self.quic_timers_due();
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
            // Idle connections close now; busy ones answer with Connection: close and then close,
            // and are stepped once so that a protocol that can say so at once does (GOAWAY).
            for i in 0..self.slots.len() {
                match self.slots[i].as_ref() {
                    Some(s) if s.conn.is_idle(s.jobs.len()) => self.close(i),
                    Some(_) => self.drive(i, false, false),
                    None => {}
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
        self.arm_quic(idx);
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
        let Some(source) = slot.conn.transport.source() else {
            return; // a QUIC connection: the loop's socket wakes it
        };
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

    fn slot(&mut self, idx: usize) -> &mut Slot {
        self.slots[idx].as_mut().expect("a live slot")
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
}

/// The Date line (and what follows it) a connection's answers carry: HTTPS answers over TCP add
/// the Alt-Svc line when HTTP/3 listens (`DateLine::extended`).
fn date_line<'a>(date: &'a DateLine, transport: &Transport) -> &'a [u8] {
    match transport {
        Transport::Tls(_) => date.extended(),
        _ => date.line(),
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
