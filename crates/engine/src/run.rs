//! The event loops that carry out a plan: one mio loop per thread, each owning its connections outright.
//!
//! Hot path discipline: request bytes are built once; each thread reads into one reusable buffer; the
//! response scanner parses only header blocks and counts body bytes in place; counters and histograms
//! are per thread and merged at the end; the shared `Live` counters are updated once per event batch.
//! Nothing is allocated, locked or sent over a channel per request. The clock is read twice per request
//! (when it starts and when bytes arrive), not once per batch: a batch can take tens of microseconds,
//! which would show in sub-millisecond latencies, and a read costs a few tens of nanoseconds.

use crate::reach::Reach;
use crate::response::{Feed, ResponseParser};
use crate::target::request_bytes;
use crate::{BodyCheck, Pick, Plan, RunResult, Shape};
use anyhow::bail;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Counters a run publishes while it goes, for progress displays and for stopping it early.
/// Threads add to them once per event batch, never per request.
#[derive(Debug, Default)]
pub struct Live {
    pub complete: AtomicU64,
    pub failed: AtomicU64,
    pub bytes: AtomicU64,
    /// Set by anyone (Ctrl-C handler) to end the run; the result then covers what completed.
    pub stop: AtomicBool,
}

/// A send later than its intended time by more than this counts as late (open loop); poll wakes
/// with millisecond resolution, so anything closer is timer noise.
pub const LATE: Duration = Duration::from_millis(2);
/// The longest a thread sleeps in poll, so a stop request is noticed promptly.
const MAX_POLL: Duration = Duration::from_millis(50);
const READ_BUF: usize = 64 * 1024;
/// Keep-alive, closed loop: after a poll that found fewer than `BATCH_MIN` ready sockets while at
/// least `BATCH_MIN_OUTSTANDING` requests are in flight, the thread sleeps `BATCH_WAIT` (plus the
/// kernel's timer slack) before polling again, so one wake-up collects several responses instead of
/// one. Each response's arrival time comes from the kernel (`SO_TIMESTAMPNS`), so the chosen wait is
/// never counted as latency.
const BATCH_MIN: usize = 4;
const BATCH_MIN_OUTSTANDING: u64 = 8;
const BATCH_WAIT: Duration = Duration::from_micros(50);

/// Carries out `plan` and returns what it measured. Errors only for a plan that cannot start
/// (no target address, bad options); failures during the run are counted in the result.
pub fn run(plan: &Plan, live: Arc<Live>) -> anyhow::Result<RunResult> {
    if plan.stop.requests.is_none() && plan.stop.duration.is_none() {
        bail!("the plan has no stop condition (set a request count or a duration)");
    }
    if plan.requests.is_empty() {
        bail!("the plan has no requests");
    }
    let clients = plan.shape.clients();
    if clients == 0 {
        bail!("concurrency must be at least 1");
    }
    if let Pick::Weighted { weights, .. } = &plan.pick {
        if weights.len() != plan.requests.len() || weights.iter().all(|&w| w == 0) {
            bail!("weights must match the requests, one each, not all zero");
        }
    }
    if let Shape::Open { rate, .. } = plan.shape {
        if !(rate >= 0.001 && rate.is_finite()) {
            bail!("the request rate must be a number of requests per second of at least 0.001");
        }
    }
    if plan.target.addrs.is_empty() {
        bail!("the target has no address");
    }
    raise_fd_limit(clients as u64 + 64);
    let threads = match plan.threads {
        0 => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        n => n,
    }
    .min(clients)
    .max(1);

    let shared = Shared {
        plan,
        reach: Reach::new(&plan.target.addrs),
        reqs: plan
            .requests
            .iter()
            .map(|r| request_bytes(plan, &r.path))
            .collect(),
        head_request: plan.method.eq_ignore_ascii_case("HEAD"),
        keep_alive: plan.keep_alive || plan.pipeline > 1,
        pipeline: plan.pipeline.max(1),
        doc_len: plan.requests.iter().map(|_| OnceLock::new()).collect(),
        first_digest: plan.requests.iter().map(|_| OnceLock::new()).collect(),
        server: OnceLock::new(),
        live: &live,
        start: Instant::now(),
        deadline: None,
    };
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let start = Instant::now();
    let shared = Shared {
        start,
        deadline: plan.stop.duration.map(|d| start + d),
        ..shared
    };

    let outs: Vec<anyhow::Result<(RunResult, Instant)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let share = Share::of(i, threads, clients, plan);
                let shared = &shared;
                s.spawn(move || Worker::new(shared, i, share)?.run())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a load thread panicked")))
            })
            .collect()
    });

    let mut result = RunResult {
        started_unix,
        per_request: vec![0; plan.requests.len()],
        ..Default::default()
    };
    let mut end = start;
    for out in outs {
        let (r, t) = out?;
        merge(&mut result, &r);
        end = end.max(t);
    }
    result.elapsed = end - start;
    result.interrupted = live.stop.load(Ordering::Relaxed);
    result.ended = shared.reach.ended();
    result.document_length = shared.doc_len.iter().find_map(|l| l.get().copied());
    result.server_software = shared.server.get().cloned();
    Ok(result)
}

/// Raises the soft open-files limit toward `wanted` (up to the hard limit): a default soft limit of
/// 1024 would otherwise turn high concurrency into connect failures.
pub fn raise_fd_limit(wanted: u64) {
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && (lim.rlim_cur as u64) < wanted {
            lim.rlim_cur = (wanted as libc::rlim_t).min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

fn merge(into: &mut RunResult, r: &RunResult) {
    into.complete += r.complete;
    into.failed.add(&r.failed);
    into.write_errors += r.write_errors;
    into.non_2xx += r.non_2xx;
    into.keep_alive_requests += r.keep_alive_requests;
    into.connections += r.connections;
    into.total_bytes += r.total_bytes;
    into.body_bytes += r.body_bytes;
    into.sent_bytes += r.sent_bytes;
    into.latency_sum_us += r.latency_sum_us;
    into.histograms.merge(&r.histograms);
    into.late_sends += r.late_sends;
    into.cpu.user += r.cpu.user;
    into.cpu.sys += r.cpu.sys;
    for (a, b) in into.per_request.iter_mut().zip(&r.per_request) {
        *a += b;
    }
    if into.first_error.is_none() {
        into.first_error = r.first_error.clone();
    }
}

/// CPU time of the calling thread: the load threads measure themselves, so a server running in the
/// same process (the lab can start one in-process) or a progress display is not charged to the generator.
fn thread_cpu() -> crate::CpuTime {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let d = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    crate::CpuTime {
        user: d(ru.ru_utime),
        sys: d(ru.ru_stime),
    }
}

/// What every thread reads: the plan and the per-request expectations set by the first responses.
struct Shared<'a> {
    plan: &'a Plan,
    /// Which address to connect to, and whether the target was lost (no probe connection).
    reach: Reach<'a>,
    reqs: Vec<Vec<u8>>,
    head_request: bool,
    keep_alive: bool,
    pipeline: usize,
    /// Body length of the first complete response per request (ab's Document Length baseline).
    doc_len: Vec<OnceLock<u64>>,
    /// Digest of the first complete response per request, for `BodyCheck::FirstFetch`.
    first_digest: Vec<OnceLock<[u8; 32]>>,
    server: OnceLock<String>,
    live: &'a Live,
    start: Instant,
    deadline: Option<Instant>,
}

/// A thread's part of the load.
struct Share {
    clients: usize,
    requests: Option<u64>,
    rate: f64,
}

impl Share {
    /// Thread `i`'s clients, and its requests and rate in proportion to them, so threads finish together.
    fn of(i: usize, threads: usize, clients: usize, plan: &Plan) -> Share {
        let (t, c) = (threads as u64, clients as u64);
        let first_client = |i: u64| i * (c / t) + i.min(c % t);
        let (lo, hi) = (first_client(i as u64), first_client(i as u64 + 1));
        let my_clients = (hi - lo) as usize;
        let rate = match plan.shape {
            Shape::Open { rate, .. } => rate * my_clients as f64 / clients as f64,
            Shape::Closed { .. } => 0.0,
        };
        let portion = |n: u64| {
            ((n as u128 * hi as u128) / c as u128 - (n as u128 * lo as u128) / c as u128) as u64
        };
        Share {
            clients: my_clients,
            requests: plan.stop.requests.map(portion),
            rate,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// No socket.
    Free,
    Connecting,
    Sending,
    Receiving,
    /// An open keep-alive connection with nothing to do.
    Idle,
}

#[derive(Clone, Copy)]
struct InFlight {
    req: usize,
    /// Send time (closed loop) or intended send time (open loop).
    start: Instant,
}

struct Conn {
    stream: Option<TcpStream>,
    /// Where the current (or last) connection went.
    to: SocketAddr,
    /// Whether `stream` is registered with the poller, and for writability too.
    registered: bool,
    want_write: bool,
    phase: Phase,
    /// Responses completed on the current socket.
    served: u64,
    inflight: VecDeque<InFlight>,
    /// Bytes to write when not a single shared request (pipelining, retries).
    out: Vec<u8>,
    /// Write straight from the shared request bytes of this request.
    out_req: Option<usize>,
    written: usize,
    conn_start: Instant,
    connect_us: u64,
    written_at: Instant,
    first_byte: Option<Instant>,
    last_progress: Instant,
    parser: ResponseParser,
}

#[derive(Clone, Copy)]
enum Class {
    Connect,
    Receive,
    Exceptions,
    Write,
}

/// Open-loop pacing: the next intended send time of this thread.
struct Pacer {
    next: Instant,
    interval: f64,
    jitter: bool,
}

struct Worker<'a> {
    sh: &'a Shared<'a>,
    poll: Poll,
    conns: Vec<Conn>,
    buf: Vec<u8>,
    r: RunResult,
    /// Requests this thread may still start (None: until the deadline).
    budget: Option<u64>,
    /// Requests started and not yet finished (retries do not count twice).
    outstanding: u64,
    /// Slots that need their next request started (deferred so failures never recurse).
    ready: Vec<usize>,
    ready_batch: Vec<usize>,
    /// Open loop: slots with nothing to do.
    idle: Vec<usize>,
    pacer: Option<Pacer>,
    rng: SmallRng,
    weighted: Option<WeightedIndex<u32>>,
    last_done: Instant,
    /// Requests on reused connections (connect time 0), recorded at the end.
    zero_connects: u64,
    // Deltas not yet added to the shared Live counters.
    live_complete: u64,
    live_failed: u64,
    live_bytes: u64,
}

impl<'a> Worker<'a> {
    fn new(sh: &'a Shared<'a>, index: usize, share: Share) -> anyhow::Result<Worker<'a>> {
        let now = sh.start;
        let per_conn = sh.pipeline;
        let conns = (0..share.clients)
            .map(|_| Conn {
                stream: None,
                to: sh.reach.addr(),
                registered: false,
                want_write: false,
                phase: Phase::Free,
                served: 0,
                inflight: VecDeque::with_capacity(per_conn),
                out: Vec::new(),
                out_req: None,
                written: 0,
                conn_start: now,
                connect_us: 0,
                written_at: now,
                first_byte: None,
                last_progress: now,
                parser: ResponseParser::default(),
            })
            .collect();
        let seed = match &sh.plan.pick {
            Pick::Single => 0,
            Pick::Uniform { seed } | Pick::Weighted { seed, .. } => *seed,
        };
        let weighted = match &sh.plan.pick {
            Pick::Weighted { weights, .. } => Some(WeightedIndex::new(weights.iter().copied())?),
            _ => None,
        };
        let pacer = match sh.plan.shape {
            Shape::Open { jitter, .. } if share.rate > 0.0 => Some(Pacer {
                next: now,
                interval: 1.0 / share.rate,
                jitter,
            }),
            _ => None,
        };
        Ok(Worker {
            sh,
            poll: Poll::new()?,
            conns,
            buf: vec![0; READ_BUF],
            r: RunResult {
                per_request: vec![0; sh.reqs.len()],
                ..Default::default()
            },
            budget: share.requests,
            outstanding: 0,
            ready: Vec::with_capacity(share.clients),
            ready_batch: Vec::with_capacity(share.clients),
            idle: Vec::with_capacity(share.clients),
            pacer,
            rng: SmallRng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            weighted,
            last_done: now,
            zero_connects: 0,
            live_complete: 0,
            live_failed: 0,
            live_bytes: 0,
        })
    }

    fn run(mut self) -> anyhow::Result<(RunResult, Instant)> {
        let cpu0 = thread_cpu();
        let mut events = Events::with_capacity(1024);
        if self.pacer.is_some() {
            self.idle.extend((0..self.conns.len()).rev());
        } else {
            self.ready.extend(0..self.conns.len());
        }
        let timeout = self.sh.plan.timeout.max(Duration::from_millis(1));
        let check_every = (timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(100));
        let mut next_check = Instant::now() + check_every;
        let batching = self.sh.keep_alive && self.pacer.is_none();
        let mut last_events = usize::MAX;
        let end;
        loop {
            self.start_ready();
            let now = Instant::now();
            let pace_wait = self.pace(now);
            self.flush_live();
            if self.sh.live.stop.load(Ordering::Relaxed) || self.sh.reach.ended().is_some() {
                end = now;
                break;
            }
            if self.sh.deadline.is_some_and(|d| now >= d) {
                end = self.sh.deadline.unwrap_or(now);
                break;
            }
            if self.budget == Some(0) && self.outstanding == 0 {
                end = self.last_done;
                break;
            }
            let mut wait = MAX_POLL.min(next_check.saturating_duration_since(now));
            if let Some(d) = self.sh.deadline {
                wait = wait.min(d.saturating_duration_since(now));
            }
            if let Some(p) = pace_wait {
                wait = wait.min(p);
            }
            if !self.ready.is_empty() {
                wait = Duration::ZERO;
            } else if batching
                && last_events < BATCH_MIN
                && self.outstanding >= BATCH_MIN_OUTSTANDING
            {
                std::thread::sleep(BATCH_WAIT);
            }
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return Err(e.into());
            }
            last_events = 0;
            for ev in events.iter() {
                last_events += 1;
                let slot = ev.token().0;
                let closed = ev.is_read_closed() || ev.is_error();
                self.on_event(slot, ev.is_readable() || closed, closed);
            }
            let now = Instant::now();
            if now >= next_check {
                self.check_timeouts(now, timeout);
                next_check = now + check_every;
            }
        }
        self.flush_live();
        self.r
            .histograms
            .connect
            .saturating_record_n(0, self.zero_connects);
        let cpu = thread_cpu();
        self.r.cpu = crate::CpuTime {
            user: cpu.user.saturating_sub(cpu0.user),
            sys: cpu.sys.saturating_sub(cpu0.sys),
        };
        // Whatever is still in flight is abandoned: the result covers what finished.
        for c in &mut self.conns {
            c.stream = None;
        }
        Ok((self.r, end))
    }

    fn flush_live(&mut self) {
        let l = self.sh.live;
        if self.live_complete > 0 {
            l.complete
                .fetch_add(std::mem::take(&mut self.live_complete), Ordering::Relaxed);
        }
        if self.live_failed > 0 {
            l.failed
                .fetch_add(std::mem::take(&mut self.live_failed), Ordering::Relaxed);
        }
        if self.live_bytes > 0 {
            l.bytes
                .fetch_add(std::mem::take(&mut self.live_bytes), Ordering::Relaxed);
        }
    }

    /// Takes up to `n` requests from the budget; returns how many were granted.
    fn take_budget(&mut self, n: u64) -> u64 {
        let n = match &mut self.budget {
            None => n,
            Some(left) => {
                let k = n.min(*left);
                *left -= k;
                k
            }
        };
        self.outstanding += n;
        n
    }

    fn pick(&mut self) -> usize {
        match &self.sh.plan.pick {
            Pick::Single => 0,
            Pick::Uniform { .. } => self.rng.gen_range(0..self.sh.reqs.len()),
            Pick::Weighted { .. } => self
                .weighted
                .as_ref()
                .map_or(0, |w| w.sample(&mut self.rng)),
        }
    }

    /// Starts the next request(s) on every slot that finished (closed loop) or parks it (open loop).
    fn start_ready(&mut self) {
        // Only the slots ready now: one that fails at once (refused) waits for the next round.
        let mut batch = std::mem::replace(&mut self.ready, std::mem::take(&mut self.ready_batch));
        for slot in batch.drain(..) {
            if !self.conns[slot].inflight.is_empty() {
                self.send(slot, Instant::now()); // retry what a closed keep-alive connection left unanswered
            } else if self.pacer.is_some() {
                self.idle.push(slot);
            } else {
                let n = self.take_budget(self.sh.pipeline as u64);
                if n > 0 {
                    let now = Instant::now();
                    for _ in 0..n {
                        let req = self.pick();
                        self.conns[slot]
                            .inflight
                            .push_back(InFlight { req, start: now });
                    }
                    self.send(slot, now);
                }
            }
        }
        self.ready_batch = batch;
    }

    /// Open loop: issues every send that is due on an idle slot; returns how long until the next one.
    fn pace(&mut self, now: Instant) -> Option<Duration> {
        let pacer = self.pacer.as_ref()?;
        let mut next = pacer.next;
        while next <= now && !self.idle.is_empty() && self.budget != Some(0) {
            let slot = self.idle.pop().unwrap_or(0);
            if self.take_budget(1) == 0 {
                break;
            }
            let req = self.pick();
            if now.saturating_duration_since(next) > LATE {
                self.r.late_sends += 1;
            }
            self.conns[slot]
                .inflight
                .push_back(InFlight { req, start: next });
            self.send(slot, Instant::now());
            let p = self.pacer.as_ref().expect("pacer");
            let step = if p.jitter {
                // Poisson arrivals: exponential gaps with the same mean.
                let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
                -u.ln() * p.interval
            } else {
                p.interval
            };
            next += Duration::from_secs_f64(step);
        }
        if let Some(p) = self.pacer.as_mut() {
            p.next = next;
        }
        if self.idle.is_empty() || self.budget == Some(0) {
            None // waiting for a connection to free up (or for the last responses)
        } else {
            Some(next.saturating_duration_since(now))
        }
    }

    /// Writes the slot's in-flight requests, on its open connection or a new one; `now` was just read.
    fn send(&mut self, slot: usize, now: Instant) {
        let sh = self.sh;
        let c = &mut self.conns[slot];
        let first = c.inflight.front().map_or(0, |f| f.req);
        if c.inflight.len() == 1 {
            c.out_req = Some(first);
        } else {
            c.out_req = None;
            c.out.clear();
            for f in &c.inflight {
                c.out.extend_from_slice(&sh.reqs[f.req]);
            }
        }
        c.written = 0;
        c.first_byte = None;
        c.parser.begin(sh.head_request);
        c.parser.capture_server = sh.server.get().is_none();
        c.parser.hasher = sh.plan.requests[first]
            .expect
            .as_ref()
            .map(|_| Sha256::new());
        c.last_progress = now;
        if c.phase == Phase::Idle && c.stream.is_some() {
            c.phase = Phase::Sending;
            self.write(slot);
            return;
        }
        c.stream = None;
        c.served = 0;
        c.conn_start = now;
        c.phase = Phase::Connecting;
        c.to = sh.reach.addr();
        match TcpStream::connect(c.to) {
            Ok(s) => {
                // Nagle never holds back the first segment of a connection, so a connection that
                // carries one request saves the setsockopt.
                if sh.keep_alive {
                    let _ = s.set_nodelay(true);
                    if sh.plan.body.is_none() {
                        simple_congestion_control(&s);
                    }
                    kernel_arrival_times(&s);
                }
                let c = &mut self.conns[slot];
                c.stream = Some(s);
                c.registered = false;
                c.want_write = false;
                // On loopback the handshake usually completes inside connect(): write right away, and
                // ask for writability only if that write could not finish.
                self.write(slot);
                let c = &mut self.conns[slot];
                if let Some(s) = c.stream.as_mut() {
                    let interest = if c.want_write {
                        Interest::READABLE | Interest::WRITABLE
                    } else {
                        Interest::READABLE
                    };
                    if let Err(e) = self.poll.registry().register(s, Token(slot), interest) {
                        self.fail(slot, Class::Connect, &e);
                        return;
                    }
                    c.registered = true;
                }
            }
            Err(e) => self.fail(slot, Class::Connect, &e),
        }
    }

    fn write(&mut self, slot: usize) {
        let sh = self.sh;
        loop {
            let c = &mut self.conns[slot];
            let bytes: &[u8] = match c.out_req {
                Some(r) => &sh.reqs[r],
                None => &c.out,
            };
            let Some(stream) = c.stream.as_mut() else {
                return;
            };
            match stream.write(&bytes[c.written..]) {
                Ok(n) => {
                    // A request on an open connection is written right after send() read the clock.
                    let now = if c.phase == Phase::Sending && c.written == 0 {
                        c.last_progress
                    } else {
                        Instant::now()
                    };
                    if c.phase == Phase::Connecting {
                        c.connect_us = micros(now - c.conn_start);
                        self.r.connections += 1;
                        sh.reach.connected();
                        c.phase = Phase::Sending;
                    }
                    c.written += n;
                    c.last_progress = now;
                    self.r.sent_bytes += n as u64;
                    if c.written == bytes.len() {
                        c.phase = Phase::Receiving;
                        c.written_at = now;
                        return;
                    }
                }
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::NotConnected =>
                {
                    if !c.want_write {
                        c.want_write = true;
                        if c.registered {
                            let r = self.poll.registry().reregister(
                                stream,
                                Token(slot),
                                Interest::READABLE | Interest::WRITABLE,
                            );
                            if let Err(e) = r {
                                return self.fail(slot, Class::Write, &e);
                            }
                        }
                    }
                    return;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let class = match c.phase {
                        Phase::Connecting => Class::Connect,
                        _ if c.served > 0 && c.written == 0 => return self.retry(slot),
                        _ => Class::Write,
                    };
                    return self.fail(slot, class, &e);
                }
            }
        }
    }

    /// `closed`: the event also reported the peer's FIN (or an error), so reading must go on to see it.
    fn on_event(&mut self, slot: usize, readable: bool, closed: bool) {
        let Some(c) = self.conns.get(slot) else {
            return;
        };
        match c.phase {
            Phase::Free => {}
            Phase::Connecting | Phase::Sending => {
                self.write(slot);
                if readable && self.conns[slot].phase == Phase::Receiving {
                    self.read(slot, closed);
                }
            }
            Phase::Receiving if readable => self.read(slot, closed),
            Phase::Receiving => {}
            Phase::Idle if readable => {
                // An idle keep-alive connection closed by the server (or sending junk): drop it.
                let mut b = [0u8; 64];
                let c = &mut self.conns[slot];
                if let Some(s) = c.stream.as_mut() {
                    match s.read(&mut b) {
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        _ => {
                            c.stream = None;
                            c.phase = Phase::Free;
                        }
                    }
                }
            }
            Phase::Idle => {}
        }
    }

    fn read(&mut self, slot: usize, closed: bool) {
        let mut buf = std::mem::take(&mut self.buf);
        let stamped = self.sh.keep_alive;
        while let Some(stream) = self.conns[slot].stream.as_mut() {
            let got = if stamped {
                recv_stamped(stream, &mut buf)
            } else {
                stream.read(&mut buf).map(|n| (n, None))
            };
            match got {
                Ok((0, _)) => {
                    self.eof(slot);
                    break;
                }
                Ok((n, arrived)) => {
                    let now = arrived.unwrap_or_else(Instant::now);
                    self.r.total_bytes += n as u64;
                    self.live_bytes += n as u64;
                    let c = &mut self.conns[slot];
                    c.last_progress = now;
                    if c.first_byte.is_none() {
                        c.first_byte = Some(now);
                    }
                    if !self.consume(slot, &buf[..n], now) {
                        break;
                    }
                    if n < buf.len() && !closed {
                        // Drained: epoll reports later data (or a later FIN) as a new edge, which saves
                        // a read that would only say WouldBlock. A FIN already reported needs that read.
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    if self.conns[slot].served > 0 && !self.conns[slot].parser.started() {
                        self.retry(slot);
                    } else {
                        self.fail(slot, Class::Receive, &e);
                    }
                    break;
                }
            }
        }
        self.buf = buf;
    }

    /// Feeds bytes to the slot's parser; returns whether the connection is still receiving.
    fn consume(&mut self, slot: usize, data: &[u8], now: Instant) -> bool {
        let mut pos = 0;
        while pos < data.len() {
            if self.conns[slot].phase != Phase::Receiving {
                // Bytes nobody asked for: the connection cannot be trusted any more.
                self.conns[slot].stream = None;
                self.conns[slot].phase = Phase::Free;
                return false;
            }
            match self.conns[slot].parser.feed(&data[pos..]) {
                Ok(Feed::More) => return true,
                Ok(Feed::Done(n)) => {
                    pos += n;
                    let reusable = self.sh.keep_alive && self.conns[slot].parser.keep_alive;
                    if !self.complete(slot, now, reusable) {
                        return false;
                    }
                }
                Err(msg) => {
                    self.fail(
                        slot,
                        Class::Exceptions,
                        &io::Error::new(ErrorKind::InvalidData, msg),
                    );
                    return false;
                }
            }
        }
        true
    }

    /// The front request's response is complete. Returns whether the connection stays open.
    fn complete(&mut self, slot: usize, now: Instant, reusable: bool) -> bool {
        let sh = self.sh;
        let c = &mut self.conns[slot];
        let Some(f) = c.inflight.pop_front() else {
            return false;
        };
        self.outstanding -= 1;
        self.last_done = now;
        let body_len = c.parser.body_len;
        let digest: Option<[u8; 32]> = c.parser.hasher.take().map(|h| h.finalize().into());
        let doc_len = *sh.doc_len[f.req].get_or_init(|| body_len);
        let length_ok = match &sh.plan.requests[f.req].expect {
            Some(BodyCheck::Digest { len, sha256 }) => {
                *len == body_len && digest.as_ref() == Some(sha256)
            }
            Some(BodyCheck::FirstFetch) => match digest {
                Some(d) => *sh.first_digest[f.req].get_or_init(|| d) == d,
                None => false,
            },
            None => sh.plan.variable_length || doc_len == body_len,
        };
        if length_ok {
            let connect_us = if c.served == 0 { c.connect_us } else { 0 };
            let total = micros(now.saturating_duration_since(f.start));
            let waiting = micros(
                c.first_byte
                    .unwrap_or(now)
                    .saturating_duration_since(c.written_at),
            );
            let h = &mut self.r.histograms;
            h.total.saturating_record(total);
            if connect_us == 0 {
                self.zero_connects += 1; // added to the histogram in one go at the end
            } else {
                h.connect.saturating_record(connect_us);
            }
            h.waiting.saturating_record(waiting);
            h.processing
                .saturating_record(total.saturating_sub(connect_us));
            self.r.latency_sum_us += total as u128;
            self.r.complete += 1;
            self.r.body_bytes += body_len;
            self.r.per_request[f.req] += 1;
            self.live_complete += 1;
            if !(200..300).contains(&c.parser.status) {
                self.r.non_2xx += 1;
            }
            if reusable {
                self.r.keep_alive_requests += 1;
            }
        } else {
            self.r.failed.length += 1;
            self.r.body_bytes += body_len;
            self.live_failed += 1;
        }
        if let Some(s) = c.parser.server.take() {
            let _ = sh.server.set(s);
        }
        c.served += 1;
        if !reusable {
            c.stream = None;
            c.phase = Phase::Free;
            self.ready.push(slot);
            return false;
        }
        if c.inflight.is_empty() {
            c.phase = Phase::Idle;
            self.ready.push(slot);
        } else {
            // The next pipelined response follows on the same connection.
            c.parser.begin(sh.head_request);
            c.parser.hasher = sh.plan.requests[c.inflight[0].req]
                .expect
                .as_ref()
                .map(|_| Sha256::new());
            c.first_byte = Some(now);
        }
        true
    }

    /// The server closed the connection.
    fn eof(&mut self, slot: usize) {
        let c = &mut self.conns[slot];
        if c.phase != Phase::Receiving {
            c.stream = None;
            c.phase = Phase::Free;
            return;
        }
        if c.parser.eof() {
            self.complete(slot, Instant::now(), false);
        } else if c.served > 0 && !c.parser.started() {
            self.retry(slot);
        } else {
            let e = io::Error::new(
                ErrorKind::UnexpectedEof,
                "the server closed the connection before a complete response",
            );
            self.fail(slot, Class::Receive, &e);
        }
    }

    /// A reused keep-alive connection was closed before answering: resend on a new connection.
    fn retry(&mut self, slot: usize) {
        let c = &mut self.conns[slot];
        c.stream = None;
        c.phase = Phase::Free;
        self.ready.push(slot);
    }

    /// The front request failed; the connection is closed and the slot starts over.
    fn fail(&mut self, slot: usize, class: Class, err: &io::Error) {
        let c = &mut self.conns[slot];
        c.stream = None;
        let (connecting, to) = (c.phase == Phase::Connecting, c.to);
        c.phase = Phase::Free;
        if matches!(class, Class::Connect) && self.sh.reach.connect_failed(to, err) {
            return self.ready.push(slot); // sent again, to the target's next address
        }
        if c.inflight.pop_front().is_some() {
            self.outstanding -= 1;
            self.last_done = Instant::now();
            self.live_failed += 1;
            let f = &mut self.r.failed;
            match class {
                Class::Connect => f.connect += 1,
                Class::Receive => f.receive += 1,
                Class::Exceptions => f.exceptions += 1,
                Class::Write => {
                    f.exceptions += 1;
                    self.r.write_errors += 1;
                }
            }
            if self.r.first_error.is_none() {
                let what = if connecting {
                    "connect to"
                } else {
                    "request to"
                };
                self.r.first_error = Some(format!("{what} {to}: {err}"));
            }
        }
        self.ready.push(slot);
    }

    fn check_timeouts(&mut self, now: Instant, timeout: Duration) {
        for slot in 0..self.conns.len() {
            let c = &self.conns[slot];
            let busy = matches!(
                c.phase,
                Phase::Connecting | Phase::Sending | Phase::Receiving
            );
            if busy && now.saturating_duration_since(c.last_progress) > timeout {
                let (class, msg) = match c.phase {
                    Phase::Connecting => (Class::Connect, "connect timed out"),
                    _ => (Class::Exceptions, "timed out waiting for the response"),
                };
                self.fail(slot, class, &io::Error::new(ErrorKind::TimedOut, msg));
            }
        }
    }
}

/// Reno instead of the system default (often BBR, which paces from a timer without an fq qdisc): a
/// generator's sends are requests of a few hundred bytes, for which congestion control is only cost
/// (about 1 % of the generator's CPU per keep-alive request here). Not used for request bodies.
fn simple_congestion_control(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    const RENO: &[u8] = b"reno";
    // SAFETY: setsockopt with a valid fd and a byte string of the given length; failure is harmless.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            RENO.as_ptr().cast(),
            RENO.len() as libc::socklen_t,
        );
    }
}

/// Asks the kernel to stamp each received segment with its arrival time (read by `recv_stamped`).
fn kernel_arrival_times(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: setsockopt with a valid fd and an int option; failure only means no stamps.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// One `recvmsg`: the byte count and, when the kernel stamped the data, the moment the last segment
/// read arrived, as an `Instant` (the stamp is wall-clock time, converted by its age now).
fn recv_stamped(s: &TcpStream, buf: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
    use std::os::fd::AsRawFd;
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; zeroed is a valid empty header, filled in below with live buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: the header points at `buf` and `control`, both alive and of the lengths given.
    let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: walking the control messages the kernel wrote into `control`, with libc's macros.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                stamp = Some(std::ptr::read_unaligned(
                    libc::CMSG_DATA(c) as *const libc::timespec
                ));
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let arrived = stamp.and_then(|ts| {
        let now = Instant::now();
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        let at = Duration::new(
            u64::try_from(ts.tv_sec).ok()?,
            u32::try_from(ts.tv_nsec).ok()?,
        );
        // A stamp from the future or older than a second is not trusted (clock steps).
        let age = wall
            .checked_sub(at)
            .filter(|a| *a < Duration::from_secs(1))?;
        now.checked_sub(age)
    });
    Ok((n as usize, arrived))
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};

    /// A tiny keep-alive server: answers every request with a 5-byte body until the client closes.
    fn hello_server(max_conns: usize) -> (SocketAddr, std::thread::JoinHandle<()>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let h = std::thread::spawn(move || {
            for s in l.incoming().take(max_conns) {
                let s = s.unwrap();
                std::thread::spawn(move || {
                    let mut w = s.try_clone().unwrap();
                    let mut r = BufReader::new(s);
                    let mut line = String::new();
                    loop {
                        let mut close = false;
                        loop {
                            line.clear();
                            if r.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            close |= line.eq_ignore_ascii_case("connection: close\r\n");
                            if line == "\r\n" {
                                break;
                            }
                        }
                        let _ = w.write_all(
                            b"HTTP/1.1 200 OK\r\nServer: t\r\nContent-Length: 5\r\n\r\nhello",
                        );
                        if close {
                            return;
                        }
                    }
                });
            }
        });
        (addr, h)
    }

    fn plan(addr: SocketAddr, n: u64, c: usize, keep_alive: bool) -> Plan {
        let t = crate::Target {
            host: "127.0.0.1".into(),
            port: addr.port(),
            addrs: vec![addr],
        };
        let mut p = Plan::new(t, "/");
        p.stop.requests = Some(n);
        p.stop.duration = Some(Duration::from_secs(20));
        p.shape = Shape::Closed { clients: c };
        p.threads = 2;
        p.keep_alive = keep_alive;
        p.timeout = Duration::from_secs(5);
        p
    }

    #[test]
    fn closed_loop_new_connection_per_request() {
        let (addr, _h) = hello_server(200);
        let r = run(&plan(addr, 200, 4, false), Arc::default()).unwrap();
        assert_eq!((r.complete, r.failed.total(), r.connections), (200, 0, 200));
        assert_eq!(
            (r.body_bytes, r.document_length, r.keep_alive_requests),
            (1000, Some(5), 0)
        );
        assert_eq!(r.total_bytes, 200 * 54);
        assert_eq!(r.histograms.total.len(), 200);
        assert_eq!(r.server_software.as_deref(), Some("t"));
        assert_eq!(r.per_request, vec![200]);
    }

    #[test]
    fn weighted_pick_follows_the_weights() {
        let (addr, _h) = hello_server(4);
        let mut p = plan(addr, 4000, 4, true);
        p.requests = ["/a", "/b"]
            .iter()
            .map(|s| crate::RequestSpec {
                path: s.to_string(),
                expect: None,
            })
            .collect();
        p.pick = Pick::Weighted {
            weights: vec![1, 3],
            seed: 7,
        };
        let r = run(&p, Arc::default()).unwrap();
        assert_eq!(r.complete, 4000);
        let share_b = r.per_request[1] as f64 / 4000.0;
        assert!(
            (0.70..0.80).contains(&share_b),
            "weight 3 of 4 gave {share_b}"
        );
    }

    #[test]
    fn kernel_stamps_arrival_between_send_and_read() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        kernel_arrival_times(&s);
        let (mut server, _) = listener.accept().unwrap();
        let before = Instant::now();
        server.write_all(b"hello").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let mut buf = [0u8; 16];
        let (n, arrived) = recv_stamped(&s, &mut buf).unwrap();
        let read_at = Instant::now();
        let arrived = arrived.expect("the kernel stamps loopback data");
        assert_eq!(&buf[..n], b"hello");
        assert!(
            arrived >= before - Duration::from_millis(1),
            "stamped before it was sent"
        );
        assert!(
            read_at - arrived >= Duration::from_millis(15),
            "the stamp is the arrival, not the read"
        );
    }

    #[test]
    fn stop_flag_ends_a_run_with_interrupted_set() {
        let (addr, _h) = hello_server(4);
        let mut p = plan(addr, u64::MAX, 2, true);
        p.stop.duration = Some(Duration::from_secs(30));
        let live = Arc::new(Live::default());
        let l2 = live.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            l2.stop.store(true, Ordering::SeqCst);
        });
        let t = Instant::now();
        let r = run(&p, live.clone()).unwrap();
        assert!(r.interrupted && r.complete > 0 && t.elapsed() < Duration::from_secs(5));
        assert_eq!(
            live.complete.load(Ordering::SeqCst),
            r.complete,
            "live counters are flushed at the end"
        );
    }

    #[test]
    fn closed_loop_keep_alive_and_pipelined() {
        let (addr, _h) = hello_server(8);
        let r = run(&plan(addr, 500, 4, true), Arc::default()).unwrap();
        assert_eq!(
            (
                r.complete,
                r.failed.total(),
                r.connections,
                r.keep_alive_requests
            ),
            (500, 0, 4, 500)
        );
        assert!(
            r.cpu.total() > Duration::ZERO && r.cpu.total() < r.elapsed * 2,
            "the load threads' own CPU: {:?}",
            r.cpu
        );
        let (addr, _h) = hello_server(8);
        let mut p = plan(addr, 500, 2, true);
        p.pipeline = 8;
        let r = run(&p, Arc::default()).unwrap();
        assert_eq!((r.complete, r.failed.total(), r.connections), (500, 0, 2));
    }
}

#[cfg(test)]
mod share_tests {
    use super::*;

    #[test]
    fn shares_add_up_and_follow_clients() {
        let t = crate::Target {
            host: "h".into(),
            port: 1,
            addrs: vec![],
        };
        let mut p = Plan::new(t, "/");
        for (n, c, threads) in [
            (1000u64, 3usize, 2usize),
            (7, 7, 3),
            (10, 1, 1),
            (100_000, 32, 2),
            (5, 5, 5),
        ] {
            p.stop.requests = Some(n);
            p.shape = Shape::Closed { clients: c };
            let shares: Vec<Share> = (0..threads).map(|i| Share::of(i, threads, c, &p)).collect();
            assert_eq!(shares.iter().map(|s| s.clients).sum::<usize>(), c);
            assert_eq!(shares.iter().map(|s| s.requests.unwrap()).sum::<u64>(), n);
            assert!(shares
                .iter()
                .all(|s| s.requests.unwrap() >= s.clients as u64));
        }
    }
}
