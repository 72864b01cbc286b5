//! Running one case: open its connections, play its steps on all of them in lockstep while reading
//! what comes back, wait for the answers, and meanwhile (`expect.available_at`) see whether a fresh
//! request on a new connection is still answered. Everything is bounded by the case's deadline.

use crate::cases::{Case, Step};
use crate::conn::{connect, ms, Conn};
use crate::result::{Crowd, End, Fresh, Seen};
use crate::template::{LeakTarget, Vars};
use mio::{Events, Interest, Poll, Token};
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use webstand_engine::{Feed, ResponseParser};

/// Where and how to probe; the same for every case of a run.
pub struct Ctx<'a> {
    pub addr: SocketAddr,
    pub host: &'a str,
    pub path: &'a str,
    /// Every leak target, whose markers are looked for in every answer.
    pub leaks: &'a [LeakTarget],
    /// Quiet time after a complete answer before a still-open connection counts as done.
    pub settle: Duration,
    /// How long a fresh request may take.
    pub fresh_within: Duration,
    pub stop: &'a AtomicBool,
}

/// What running a case produced, before judging.
pub struct Ran {
    pub seen: Vec<Seen>,
    pub crowd: Crowd,
    pub during: Option<Fresh>,
    pub elapsed: Duration,
}

/// The bytes of each step, expanded for this run.
enum Planned {
    Send(Vec<u8>),
    Drip(Vec<u8>, Duration, usize),
    Pause(Duration),
}

/// Expands a case's steps; an error names what cannot be sent.
fn plan(case: &Case, vars: &Vars, leaks: &[LeakTarget]) -> Result<Vec<Planned>, String> {
    let mut out = Vec::new();
    for step in &case.steps {
        let (bytes, planned): (Option<Vec<u8>>, _) = match step {
            Step::Send(t) => {
                let b = t.expand(vars)?;
                (Some(b.clone()), Planned::Send(b))
            }
            Step::Drip { text, every, bytes } => {
                let b = text.expand(vars)?;
                (Some(b.clone()), Planned::Drip(b, *every, *bytes))
            }
            Step::Pause(d) => (None, Planned::Pause(*d)),
        };
        if let Some(b) = bytes {
            // A marker in the request could come back in an echo and look like a leak.
            for m in leaks.iter().flat_map(|l| &l.markers) {
                if memchr::memmem::find(&b, m).is_some() {
                    return Err(format!(
                        "its request contains the leak marker {:?}",
                        String::from_utf8_lossy(m)
                    ));
                }
            }
        }
        out.push(planned);
    }
    Ok(out)
}

/// Runs `case` (with `leak` for a traversal run) until done or `deadline`.
pub fn run(
    case: &Case,
    leak: Option<&LeakTarget>,
    ctx: &Ctx,
    deadline: Instant,
) -> Result<Ran, String> {
    let vars = Vars {
        host: ctx.host,
        path: ctx.path,
        leak,
    };
    let steps = plan(case, &vars, ctx.leaks)?;
    let start = Instant::now();
    let (mut conns, refused, mut crowd) = open(case, ctx, deadline);
    let poll = Poll::new().map_err(|e| format!("cannot create a poller: {e}"))?;
    for (i, c) in conns.iter_mut().enumerate() {
        if let Some(s) = c.stream() {
            poll.registry()
                .register(s, Token(i), Interest::READABLE | Interest::WRITABLE)
                .map_err(|e| format!("cannot watch a socket: {e}"))?;
        }
    }
    let mut pump = Pump {
        poll,
        events: Events::with_capacity(1024),
        conns: &mut conns,
        read: case.read,
        start,
        ctx,
    };
    let during = std::thread::scope(|scope| {
        let fresh = case.expect.available_at.map(|at| {
            scope.spawn(move || {
                sleep_until(start + at, deadline, ctx.stop);
                let mut f = fresh_request(ctx, deadline);
                f.at_ms = ms(at);
                f
            })
        });
        pump.play(&steps, deadline);
        pump.await_answers(deadline);
        fresh.map(|h| {
            h.join()
                .unwrap_or_else(|_| Fresh::failed(0, "the check panicked"))
        })
    });
    for c in conns.iter_mut() {
        c.finish(start);
    }
    let seen: Vec<Seen> = conns.into_iter().map(|c| c.seen).chain(refused).collect();
    crowd.ended_by_server = seen
        .iter()
        .filter(|s| matches!(s.end, End::Closed | End::Reset))
        .count();
    crowd.last_end_ms = seen
        .iter()
        .filter(|s| matches!(s.end, End::Closed | End::Reset))
        .map(|s| s.end_ms)
        .max();
    crowd.responses = seen.iter().map(|s| s.responses).sum();
    Ok(Ran {
        seen,
        crowd,
        during,
        elapsed: start.elapsed(),
    })
}

/// Opens the case's connections; those that could not connect are returned as `Refused`.
fn open(case: &Case, ctx: &Ctx, deadline: Instant) -> (Vec<Conn>, Vec<Seen>, Crowd) {
    let mut conns = Vec::with_capacity(case.connections);
    let mut refused = Vec::new();
    let mut crowd = Crowd {
        requested: case.connections,
        ..Crowd::default()
    };
    for _ in 0..case.connections {
        let left = deadline.saturating_duration_since(Instant::now());
        let opened = connect(ctx.addr, left.min(Duration::from_secs(2)), case.recv_buffer)
            .and_then(Conn::new);
        match opened {
            Ok(c) => {
                crowd.opened += 1;
                conns.push(c);
            }
            Err(_) => refused.push(Seen {
                end: End::Refused,
                ..Seen::default()
            }),
        }
        if ctx.stop.load(Ordering::Relaxed) || Instant::now() >= deadline {
            break;
        }
    }
    (conns, refused, crowd)
}

struct Pump<'a, 'c> {
    poll: Poll,
    events: Events,
    conns: &'a mut Vec<Conn>,
    read: bool,
    start: Instant,
    ctx: &'a Ctx<'c>,
}

impl Pump<'_, '_> {
    fn live(&self) -> bool {
        !self.ctx.stop.load(Ordering::Relaxed) && self.conns.iter().any(|c| !c.ended())
    }

    /// Plays the steps on every connection.
    fn play(&mut self, steps: &[Planned], deadline: Instant) {
        for step in steps {
            match step {
                Planned::Send(bytes) => {
                    for c in self.conns.iter_mut() {
                        c.send(bytes, self.start);
                    }
                    self.pump(Instant::now(), deadline);
                }
                Planned::Drip(bytes, every, n) => {
                    for piece in bytes.chunks(*n) {
                        for c in self.conns.iter_mut() {
                            c.send(piece, self.start);
                        }
                        self.pump(Instant::now() + *every, deadline);
                        if !self.live() || Instant::now() >= deadline {
                            return;
                        }
                    }
                }
                Planned::Pause(d) => self.pump(Instant::now() + *d, deadline),
            }
            if !self.live() || Instant::now() >= deadline {
                return;
            }
        }
    }

    /// Waits until every connection has ended or settled (a complete answer, then quiet), or the
    /// deadline.
    fn await_answers(&mut self, deadline: Instant) {
        loop {
            let now = Instant::now();
            let settled = self.conns.iter().all(|c| {
                c.ended()
                    || (self.read
                        && c.seen.responses > 0
                        && !c.mid_response()
                        && c.last_rx
                            .is_some_and(|t| now.duration_since(t) >= self.ctx.settle))
            });
            if settled || !self.live() || now >= deadline {
                return;
            }
            self.pump((now + Duration::from_millis(50)).min(deadline), deadline);
        }
    }

    /// Moves bytes both ways until `until` (never past `deadline`).
    fn pump(&mut self, until: Instant, deadline: Instant) {
        let until = until.min(deadline);
        loop {
            let now = Instant::now();
            if now >= until || !self.live() {
                return;
            }
            if self.poll.poll(&mut self.events, Some(until - now)).is_err() {
                return;
            }
            for ev in self.events.iter() {
                let Some(c) = self.conns.get_mut(ev.token().0) else {
                    continue;
                };
                if ev.is_writable() {
                    c.flush(self.start);
                }
                let hup = ev.is_read_closed() || ev.is_error();
                if ev.is_readable() || hup {
                    c.receive(self.read, hup, self.ctx.leaks, self.start);
                }
            }
        }
    }
}

fn sleep_until(t: Instant, deadline: Instant, stop: &AtomicBool) {
    let t = t.min(deadline);
    while Instant::now() < t && !stop.load(Ordering::Relaxed) {
        std::thread::sleep((t - Instant::now()).min(Duration::from_millis(50)));
    }
}

impl Fresh {
    fn failed(at_ms: u64, why: &str) -> Fresh {
        Fresh {
            at_ms,
            status: None,
            answered_ms: None,
            error: Some(why.to_string()),
        }
    }
}

/// A plain GET of the URL's path on a new connection, answered within `ctx.fresh_within`?
pub fn fresh_request(ctx: &Ctx, deadline: Instant) -> Fresh {
    let (f, _) = fetch(ctx, deadline);
    f
}

/// [`fresh_request`], also returning the bytes received (the baseline looks at them).
pub fn fetch(ctx: &Ctx, deadline: Instant) -> (Fresh, Vec<u8>) {
    let start = Instant::now();
    let until = (start + ctx.fresh_within).min(deadline.max(start + Duration::from_millis(100)));
    let mut got = Vec::new();
    let fail = |why: String| Fresh::failed(0, &why);
    let mut s = match connect(ctx.addr, until - start, None) {
        Ok(s) => s,
        Err(e) => return (fail(format!("connect: {e}")), got),
    };
    let req = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: webstand-probe\r\nConnection: close\r\n\r\n",
        ctx.path, ctx.host
    );
    let _ = s.set_write_timeout(Some(
        until
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1)),
    ));
    if let Err(e) = s.write_all(req.as_bytes()) {
        return (fail(format!("send: {e}")), got);
    }
    let mut parser = ResponseParser::default();
    parser.begin(false);
    let mut buf = [0u8; 16 << 10];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (
                fail(format!(
                    "no answer within {}",
                    crate::result::millis(ms(ctx.fresh_within))
                )),
                got,
            );
        }
        let _ = s.set_read_timeout(Some(left));
        let n = match s.read(&mut buf) {
            Ok(0) if parser.eof() => 0,
            Ok(0) => return (fail("closed without a complete answer".into()), got),
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(e) => return (fail(format!("read: {e}")), got),
        };
        got.extend_from_slice(&buf[..n]);
        let done = n == 0
            || match parser.feed(&buf[..n]) {
                Ok(Feed::Done(_)) => true,
                Ok(Feed::More) => false,
                Err(e) => return (fail(format!("malformed answer: {e}")), got),
            };
        if done {
            let f = Fresh {
                at_ms: 0,
                status: Some(parser.status),
                answered_ms: Some(ms(start.elapsed())),
                error: None,
            };
            return (f, got);
        }
    }
}
