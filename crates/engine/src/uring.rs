//! PROTOTYPE (issue 18, session 9): the plain HTTP/1 keep-alive closed loop on io_uring, behind
//! `WEBSTAND_IO=uring`, to measure whether batching the send and receive system calls into one
//! `io_uring_enter` per pass cuts the generator's CPU per request. Not for merging as it stands.

use crate::conn::{Class, Phase};
use crate::run::{Share, Shared};
use crate::transport::Transport;
use crate::worker::Worker;
use crate::RunResult;
use io_uring::{opcode, squeue, types, IoUring};
use std::io::{self, ErrorKind};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const BUF: usize = 16 * 1024;

/// Builds an entry on a slot's socket: a registered (fixed) file when asked, else the fd.
macro_rules! on_fd {
    ($l:expr, $slot:expr, |$f:ident| $e:expr) => {
        if $l.fixed {
            let $f = types::Fixed($slot as u32);
            $e
        } else {
            let $f = types::Fd(fd_of(&$l.w.conns[$slot]));
            $e
        }
    };
}
const SEND: u64 = 0;
const RECV: u64 = 1;

/// Whether the prototype runs this plan: asked for, plain keep-alive HTTP/1, closed loop, no
/// pipelining.
pub(crate) fn wanted(sh: &Shared) -> bool {
    std::env::var("WEBSTAND_IO").is_ok_and(|v| v == "uring")
        && sh.tls.is_none()
        && sh.keep_alive
        && sh.pipeline == 1
        && matches!(sh.plan.shape, crate::Shape::Closed { .. })
}

struct Loop<'a> {
    ring: IoUring,
    bufs: Vec<Box<[u8]>>,
    /// Multishot: the provided buffers (group 0), `POOL_BUF` bytes each, and which slots have a
    /// multishot receive armed.
    multi: bool,
    /// Sockets registered with the ring (no file lookup per operation).
    fixed: bool,
    /// Spin before blocking (entering without waiting), as epoll's `--spin`.
    spin: Duration,
    pool: Vec<u8>,
    armed: Vec<bool>,
    w: Worker<'a>,
    /// Operations submitted whose completion has not been seen.
    pending: usize,
    cqes: Vec<(u64, i32, u32)>,
}

const POOL_BUF: usize = 4096;

pub(crate) fn run(sh: &Shared, index: usize, share: Share) -> anyhow::Result<(RunResult, Instant)> {
    let w = Worker::new(sh, index, share)?;
    let n = w.conns.len();
    let entries = (2 * n + 8).next_power_of_two() as u32;
    let mut b = IoUring::builder();
    let env = |k: &str| std::env::var(k).is_ok_and(|v| v == "1");
    if env("WEBSTAND_URING_DEFER") {
        b.setup_single_issuer().setup_defer_taskrun();
    }
    if env("WEBSTAND_URING_COOP") {
        b.setup_coop_taskrun().setup_taskrun_flag();
    }
    let ring = b.setup_cqsize(entries * 2).build(entries)?;
    let fixed = env("WEBSTAND_URING_FIXED");
    if fixed {
        ring.submitter().register_files_sparse(n as u32)?;
        ring.submitter().register_ring_fd()?;
    }
    let spin = std::env::var("WEBSTAND_URING_SPIN")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::ZERO, Duration::from_micros);
    let mut l = Loop {
        ring,
        bufs: (0..n).map(|_| vec![0u8; BUF].into_boxed_slice()).collect(),
        multi: env("WEBSTAND_URING_MULTI"),
        fixed,
        spin,
        pool: vec![0u8; POOL_BUF * (2 * n).max(64)],
        armed: vec![false; n],
        w,
        pending: 0,
        cqes: Vec::with_capacity(entries as usize * 2),
    };
    if l.multi {
        let nbufs = (l.pool.len() / POOL_BUF) as u16;
        let e = opcode::ProvideBuffers::new(l.pool.as_mut_ptr(), POOL_BUF as i32, nbufs, 0, 0)
            .build()
            .user_data(u64::MAX);
        l.push(e);
    }
    let cpu0 = crate::clock::thread_cpu();
    l.w.ready.extend(0..n);
    let end = l.run_loop()?;
    let Loop {
        ring, bufs, pool, w, ..
    } = l;
    let out = w.finish(cpu0, end);
    drop(ring); // cancels what is still in flight before the buffers go
    drop(bufs);
    drop(pool);
    Ok(out)
}

impl Loop<'_> {
    fn run_loop(&mut self) -> anyhow::Result<Instant> {
        let poll_first = std::env::var("WEBSTAND_URING_POLLFIRST").map_or(true, |v| v != "0");
        loop {
            let now = Instant::now();
            self.start_ready(now, poll_first);
            self.w.retired.clear();
            self.w.flush_live();
            if let Some(end) = self.w.finished(now) {
                return Ok(end);
            }
            if !self.spin.is_zero() && self.w.outstanding > 0 {
                self.spin_wait();
            }
            let ts = types::Timespec::from(Duration::from_millis(50));
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(e.into()),
            }
            self.cqes.clear();
            for c in self.ring.completion() {
                self.cqes.push((c.user_data(), c.result(), c.flags()));
            }
            self.pending -= self.cqes.len();
            let now = Instant::now();
            for i in 0..self.cqes.len() {
                let (ud, res, flags) = self.cqes[i];
                if ud == u64::MAX {
                    continue;
                }
                if self.multi {
                    self.on_multi(ud, res, flags, now);
                } else {
                    self.on_cqe(ud, res, now);
                }
            }
            if self.multi {
                self.rearm();
            }
        }
    }

    /// Enters without waiting (submitting, running deferred task work) until a completion shows
    /// or the spin runs out.
    fn spin_wait(&mut self) {
        let t0 = Instant::now();
        loop {
            let n = self.ring.submission().len() as u32;
            // SAFETY: no argument; GETEVENTS with min_complete 0 does not wait.
            let _ = unsafe {
                self.ring
                    .submitter()
                    .enter::<libc::sigset_t>(n, 0, 1 /* IORING_ENTER_GETEVENTS */, None)
            };
            if !self.ring.completion().is_empty() || t0.elapsed() >= self.spin {
                return;
            }
        }
    }

    fn on_cqe(&mut self, ud: u64, res: i32, now: Instant) {
        let slot = (ud >> 1) as usize;
        if ud & 1 == SEND {
            if res < 0 {
                let e = io::Error::from_raw_os_error(-res);
                self.w.fail(slot, Class::Write, &e);
            } else {
                self.w.r.sent_bytes += res as u64;
            }
            return;
        }
        if self.w.conns[slot].phase != Phase::Receiving {
            return;
        }
        if res <= 0 {
            let e = if res == 0 {
                io::Error::new(ErrorKind::UnexpectedEof, "closed")
            } else {
                io::Error::from_raw_os_error(-res)
            };
            return self.w.fail(slot, Class::Receive, &e);
        }
        let n = res as usize;
        self.w.r.total_bytes += n as u64;
        self.w.live_bytes += n as u64;
        let c = &mut self.w.conns[slot];
        c.last_progress = now;
        if c.first_byte.is_none() {
            c.first_byte = Some(now);
        }
        let buf = std::mem::take(&mut self.bufs[slot]);
        let open = self.w.consume(slot, &buf[..n], now);
        self.bufs[slot] = buf;
        if open && self.w.conns[slot].phase == Phase::Receiving {
            self.push_recv(slot, false);
        }
    }

    /// Multishot: a receive's completion names the provided buffer it filled, which goes back to the
    /// group once read.
    fn on_multi(&mut self, ud: u64, res: i32, flags: u32, now: Instant) {
        let slot = (ud >> 1) as usize;
        if ud & 1 == SEND {
            // Only failures post (CQE_SKIP_SUCCESS).
            let e = io::Error::from_raw_os_error(-res);
            return self.w.fail(slot, Class::Write, &e);
        }
        if !io_uring::cqueue::more(flags) {
            self.armed[slot] = false;
        }
        if res == -libc::ENOBUFS {
            return;
        }
        let receiving = self.w.conns[slot].phase == Phase::Receiving;
        if res <= 0 {
            if receiving {
                let e = if res == 0 {
                    io::Error::new(ErrorKind::UnexpectedEof, "closed")
                } else {
                    io::Error::from_raw_os_error(-res)
                };
                self.w.fail(slot, Class::Receive, &e);
            } else {
                self.w.conns[slot].close();
            }
            return;
        }
        let Some(bid) = io_uring::cqueue::buffer_select(flags) else {
            return;
        };
        let n = res as usize;
        let at = bid as usize * POOL_BUF;
        self.w.r.total_bytes += n as u64;
        self.w.live_bytes += n as u64;
        let c = &mut self.w.conns[slot];
        c.last_progress = now;
        if c.first_byte.is_none() {
            c.first_byte = Some(now);
        }
        let pool = std::mem::take(&mut self.pool);
        self.w.consume(slot, &pool[at..at + n], now);
        self.pool = pool;
        let ptr = self.pool[at..].as_mut_ptr();
        let e = opcode::ProvideBuffers::new(ptr, POOL_BUF as i32, 1, 0, bid)
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS)
            .user_data(u64::MAX);
        self.push(e);
    }

    /// Multishot: arms a receive on every open connection that has none.
    fn rearm(&mut self) {
        for slot in 0..self.armed.len() {
            if !self.armed[slot] && self.w.conns[slot].stream.is_some() {
                self.armed[slot] = true;
                let e = on_fd!(self, slot, |f| opcode::RecvMulti::new(f, 0).build())
                    .user_data((slot as u64) << 1 | RECV);
                self.push(e);
            }
        }
    }

    fn start_ready(&mut self, now: Instant, poll_first: bool) {
        let mut ready = std::mem::take(&mut self.w.ready);
        for slot in ready.drain(..) {
            if self.w.conns[slot].stream.is_none() && !self.connect(slot, now) {
                continue;
            }
            if self.w.conns[slot].inflight.is_empty() {
                if self.w.take_budget(1) == 0 {
                    continue;
                }
                let req = self.w.pick();
                self.w.conns[slot]
                    .inflight
                    .push_back(crate::conn::InFlight { req, start: now });
            }
            self.w.prepare(slot, now);
            let c = &mut self.w.conns[slot];
            c.phase = Phase::Receiving;
            c.written_at = now;
            let req = c.inflight[0].req;
            let bytes = &self.w.sh.reqs[req];
            let (p, len) = (bytes.as_ptr(), bytes.len() as u32);
            let mut send = on_fd!(self, slot, |f| opcode::Send::new(f, p, len).build())
                .user_data((slot as u64) << 1 | SEND);
            if self.multi {
                self.w.r.sent_bytes += bytes.len() as u64;
                send = send.flags(squeue::Flags::SKIP_SUCCESS);
                self.push(send);
                if !self.armed[slot] {
                    self.rearm();
                }
            } else {
                self.push(send);
                self.push_recv(slot, poll_first);
            }
        }
        // Slots a failure pushed back while this pass ran wait for the next.
        std::mem::swap(&mut self.w.ready, &mut ready);
        self.w.ready.extend(ready.drain(..));
    }

    fn push_recv(&mut self, slot: usize, poll_first: bool) {
        let (p, len) = (self.bufs[slot].as_mut_ptr(), self.bufs[slot].len() as u32);
        let ioprio = if poll_first {
            1 // IORING_RECVSEND_POLL_FIRST (the crate does not export it)
        } else {
            0
        };
        let recv = on_fd!(self, slot, |f| opcode::Recv::new(f, p, len)
            .ioprio(ioprio)
            .build())
            .user_data((slot as u64) << 1 | RECV);
        self.push(recv);
    }

    fn push(&mut self, e: squeue::Entry) {
        // SAFETY: the buffers an entry names (the shared request bytes, this slot's receive buffer)
        // outlive the ring, which is dropped first.
        while unsafe { self.ring.submission().push(&e) }.is_err() {
            let _ = self.ring.submit();
        }
        self.pending += 1;
    }

    /// Opens the slot's connection, blocking until it is up (prototype).
    fn connect(&mut self, slot: usize, now: Instant) -> bool {
        let sh = self.w.sh;
        let to = sh.reach.addr();
        let c = &mut self.w.conns[slot];
        c.to = to;
        c.conn_start = now;
        c.served = 0;
        let s = Transport::connect(to, true, false, &sh.setup, None).and_then(|mut s| {
            let fd = s.socket().as_raw_fd();
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut p, 1, 5000) };
            match s.socket().take_error()? {
                Some(e) => Err(e),
                None => Ok(s),
            }
        });
        match s {
            Ok(s) => {
                if self.fixed {
                    let fd = match &s {
                        Transport::Plain(t) => t.as_raw_fd(),
                        Transport::Tls(_) => -1,
                    };
                    if let Err(e) = self.ring.submitter().register_files_update(slot as u32, &[fd]) {
                        self.w.conns[slot].phase = Phase::Connecting;
                        self.w.fail(slot, Class::Connect, &e);
                        return false;
                    }
                }
                let c = &mut self.w.conns[slot];
                c.stream = Some(s);
                c.connect_us = crate::clock::micros(now.elapsed());
                c.phase = Phase::Idle;
                self.w.r.connections += 1;
                sh.reach.connected();
                true
            }
            Err(e) => {
                self.w.conns[slot].phase = Phase::Connecting;
                self.w.fail(slot, Class::Connect, &e);
                false
            }
        }
    }
}

fn fd_of(c: &crate::conn::Conn) -> i32 {
    match &c.stream {
        Some(Transport::Plain(s)) => s.as_raw_fd(),
        _ => -1,
    }
}
