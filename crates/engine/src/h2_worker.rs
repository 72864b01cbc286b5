//! One HTTP/2 load thread: its connections (`h2_conn.rs`), each carrying up to `-m` streams, over
//! the transports HTTP/1 uses (plain or TLS), in one mio event loop. The bookkeeping every load
//! thread shares (budget, the pick of the next URL, the open-loop pacer, the result, the live
//! counters, CPU time) is a [`Worker`]'s, with no HTTP/1 slots: this file only multiplexes.
//!
//! Closed loop: every connection keeps up to `-m` streams (or the server's lower limit) in flight,
//! new ones opened in batches as half of them end (`h2_stream::batch_room`); once every stream is
//! at the server the loop blocks in the poller (it spins first only with `--spin MICROS`,
//! `spin.rs`), or under `--spin auto` with a deep enough queue of connections, on the one whose
//! oldest batch was sent halfway down it (`halfway.rs`). Open loop (`--rate`): each send is due at its intended time and
//! waits for a free stream if none is; its latency counts from the intended time all the same.
//! Connections wait for the server's SETTINGS before their first stream, so its limit is known.

use crate::clock::{micros, thread_cpu};
use crate::conn::Class;
use crate::h2::{Prepared, NOT_H2};
use crate::h2_conn::{H2Conn, Phase};
use crate::h2_refused;
use crate::h2_stream::{batch_room, End, Ended, Stream, Tally};
use crate::pacer::LATE;
use crate::run::{Share, Shared};
use crate::transport::Transport;
use crate::worker::{TimeoutSweep, Worker};
use crate::{H2Summary, RunResult};
use mio::{Events, Interest, Token};
use std::collections::VecDeque;
use std::io::{self, ErrorKind};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};
use webstand_h2::Error;

pub(crate) struct H2Worker<'a> {
    w: Worker<'a>,
    p: Prepared,
    conns: Vec<H2Conn>,
    tally: Tally,
    /// Requests waiting for a stream: paced sends that found none free, and GOAWAY's leftovers.
    queue: VecDeque<(usize, Instant)>,
    /// A connection of this thread has spoken HTTP/2 (so a later close is not "not h2").
    spoke_h2: bool,
}

impl<'a> H2Worker<'a> {
    pub(crate) fn new(
        sh: &'a Shared<'a>,
        index: usize,
        share: Share,
    ) -> anyhow::Result<H2Worker<'a>> {
        let clients = share.clients;
        let w = Worker::new(
            sh,
            index,
            Share {
                clients: 0,
                ..share
            },
        )?;
        let mut w = w;
        // Every HTTP/2 connection is kept alive, whatever -k says (`halfway.rs`).
        w.halfway = crate::halfway::min_queue(sh.tls.is_some(), true, true, sh.plan.spin);
        w.nap = None; // the nap was measured for HTTP/1 only (`halfway.rs`)
        let now = sh.start;
        Ok(H2Worker {
            p: Prepared::new(sh.plan),
            conns: (0..clients)
                .map(|_| H2Conn::new(now, sh.reach.addr()))
                .collect(),
            tally: Tally {
                ended: Vec::new(),
                sum: H2Summary::new(0),
                data_bytes: 0,
                want_server: sh.server.get().is_none(),
                server: None,
            },
            queue: VecDeque::new(),
            spoke_h2: false,
            w,
        })
    }

    pub(crate) fn run(mut self) -> anyhow::Result<(RunResult, Instant)> {
        let cpu0 = thread_cpu();
        let mut events = Events::with_capacity(1024);
        let mut sweep = TimeoutSweep::new(self.w.sh.plan.timeout);
        let end = loop {
            let now = Instant::now();
            if sweep.due(now) {
                self.check_timeouts(now, sweep.timeout);
            }
            let pace_wait = self.pace(now);
            self.connect_and_send(now);
            self.settle();
            self.w.flush_live();
            if let Some(end) = self.w.finished(now) {
                break end;
            }
            let queue = self.conns.iter().filter(|c| !c.streams.is_empty()).count();
            let waited = if self.w.may_wait_halfway(queue) {
                let conns = &self.conns;
                let list = |_: &Worker, waiting: &mut _| receiving(conns, waiting);
                self.w.wait_halfway(&mut events, now, sweep.next, list)?
            } else {
                self.w
                    .wait_for_events(&mut events, now, sweep.next, pace_wait)?
            };
            if !waited {
                continue;
            }
            self.w.stamps = None;
            for ev in events.iter() {
                let closed = ev.is_read_closed() || ev.is_error();
                self.on_event(ev.token().0, ev.is_readable() || closed, closed);
            }
            self.settle();
        };
        let sum = std::mem::replace(&mut self.tally.sum, H2Summary::new(0));
        let limits = self
            .conns
            .iter()
            .filter(|c| c.settled)
            .map(|c| c.limit(&self.p));
        let max_streams = limits.min().unwrap_or(self.p.max_streams);
        let client_rps = self.conns.iter().filter_map(|c| c.span.rate()).collect();
        self.w.r.h2 = Some(H2Summary {
            max_streams,
            client_rps,
            ..sum
        });
        self.w.r.body_bytes = self.tally.data_bytes;
        for c in &mut self.conns {
            c.close();
        }
        Ok(self.w.finish(cpu0, end))
    }

    /// Open loop: takes every send that is due into the queue; returns how long until the next.
    fn pace(&mut self, now: Instant) -> Option<Duration> {
        let mut pacer = self.w.pacer.take()?;
        while pacer.due(now) && self.w.take_budget(1) == 1 {
            let req = self.w.pick();
            self.queue.push_back((req, pacer.next()));
            pacer.advance(&mut self.w.rng);
        }
        let wait = (self.w.budget != Some(0)).then(|| pacer.next().saturating_duration_since(now));
        self.w.pacer = Some(pacer);
        wait
    }

    /// Opens connections where work remains, then fills free streams and writes.
    fn connect_and_send(&mut self, now: Instant) {
        let closed_loop = self.w.pacer.is_none();
        for i in 0..self.conns.len() {
            if self.conns[i].spent() {
                self.conns[i].close();
            }
            let work = !self.queue.is_empty() || (closed_loop && self.w.budget != Some(0));
            if self.conns[i].phase == Phase::Free && work {
                self.connect(i, now);
            }
            self.fill(i, now);
            if !self.conns[i].out.is_empty() {
                self.flush(i);
            }
        }
    }

    /// Opens streams on connection `i` while it has room: queued sends first, then (closed loop)
    /// new requests from the budget, in batches ([`batch_room`]).
    fn fill(&mut self, i: usize, now: Instant) {
        let closed_loop = self.w.pacer.is_none();
        let c = &self.conns[i];
        let mut free = c.capacity(&self.p);
        if closed_loop {
            free = batch_room(free, c.streams.len(), c.limit(&self.p) as usize);
        }
        while free > 0 {
            let next = match self.queue.pop_front() {
                Some(queued) => Some(queued),
                None if closed_loop && self.w.take_budget(1) == 1 => Some((self.w.pick(), now)),
                None => None,
            };
            let Some((req, start)) = next else { break };
            if now.saturating_duration_since(start) > LATE && !closed_loop {
                self.w.r.late_sends += 1;
            }
            let sh = self.w.sh;
            let body = sh.plan.body.as_ref().map(|(b, _)| &b[..]);
            let check = sh.plan.requests[req].expect.is_some();
            self.conns[i].open(&self.p, req, &sh.reqs[req], start, body, check);
            self.tally.sum.started += 1;
            free -= 1;
        }
    }

    fn connect(&mut self, i: usize, now: Instant) {
        let sh = self.w.sh;
        if sh.reach.ended().is_some() {
            return; // the run ends at this pass: a new connection would meet the same answer
        }
        let to = sh.reach.addr();
        let body = sh.plan.body.is_some();
        let t = match Transport::connect(to, true, body, &sh.setup, sh.tls.as_ref()) {
            Ok(t) => t,
            Err(e) => return self.connect_failed(i, to, &e),
        };
        self.conns[i].begin(&self.p, t, to, now);
        let c = &mut self.conns[i];
        let Some(t) = c.transport.as_mut() else {
            return;
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        match self
            .w
            .poll
            .registry()
            .register(t.socket(), Token(i), interest)
        {
            Ok(()) => c.registered = true,
            Err(e) => self.connect_failed(i, to, &e),
        }
    }

    /// A connection could not be made: as with HTTP/1, a request fails for it (Connect).
    fn connect_failed(&mut self, i: usize, to: std::net::SocketAddr, err: &io::Error) {
        if let Some(why) = h2_refused::alpn_failure(to, &err.to_string()) {
            return self.refused(i, why);
        }
        self.conns[i].close();
        if self.w.sh.reach.connect_failed(to, err) {
            return; // tried again, at the target's next address
        }
        let now = Instant::now();
        if self.conns[i].streams.is_empty() {
            self.charge_one(Class::Connect);
        }
        let failed = End::Failed(Class::Connect, "connect failed");
        self.conns[i].end_all(failed, now, &mut self.tally);
        self.note_error(format!("connect to {to}: {err}"), err.raw_os_error());
    }

    /// A connection failed before any stream was on it: as an HTTP/1 request would have, one
    /// request fails for it, so a server that never answers ends the run rather than looping.
    fn charge_one(&mut self, class: Class) {
        if self.w.take_budget(1) == 1 {
            self.w.outstanding -= 1;
            self.w.last_done = Instant::now();
            self.w.count_failure(class);
            self.tally.sum.done += 1;
            self.tally.sum.errored += 1;
        }
    }

    fn note_error(&mut self, what: String, errno: Option<i32>) {
        if let Some(code) = errno {
            *self.w.r.socket_errors.entry(code).or_default() += 1;
        }
        self.w.r.first_error.get_or_insert(what);
    }

    /// Writes what connection `i` has queued, as far as the socket takes it.
    fn flush(&mut self, i: usize) {
        loop {
            let c = &mut self.conns[i];
            let Some(t) = c.transport.as_mut() else {
                return;
            };
            if c.written == c.out.len() {
                c.out.clear();
                c.written = 0;
                return;
            }
            match t.write(&c.out[c.written..]) {
                Ok(n) => {
                    c.written += n;
                    self.w.r.sent_bytes += n as u64;
                    if c.phase == Phase::Connecting && !self.connected(i, Instant::now()) {
                        return;
                    }
                }
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::NotConnected =>
                {
                    c.want_write = true;
                    return;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let class = match c.phase {
                        Phase::Connecting => Class::Connect,
                        _ => Class::Write,
                    };
                    return self.drop_conn(i, class, &e);
                }
            }
        }
    }

    /// The first write went through: TCP (and TLS) are up. False when the server turned out not
    /// to speak HTTP/2 by ALPN.
    fn connected(&mut self, i: usize, now: Instant) -> bool {
        let sh = self.w.sh;
        let c = &mut self.conns[i];
        c.phase = Phase::Open;
        c.connect_us = micros(now - c.conn_start);
        c.last_progress = now;
        self.w.r.connections += 1;
        sh.reach.connected();
        self.tally
            .sum
            .connect
            .saturating_record(c.connect_us.max(1));
        if let (Some(Transport::Tls(t)), Some(tls)) = (&c.transport, &sh.tls) {
            crate::transport::tls::count_handshake(
                &mut self.w.r,
                t,
                c.conn_start,
                now,
                tls.sni.as_deref(),
            );
            if t.alpn() != Some(&b"h2"[..]) {
                let why = h2_refused::alpn(c.to, t.alpn());
                self.refused(i, why);
                return false;
            }
        }
        true
    }

    /// The server does not speak HTTP/2: the run ends at once with this reason, as for a target
    /// that cannot be reached (no figures, one line, a non-zero exit); the connection's request
    /// fails as a connect that failed would (Connect), so a sweep's level shows it.
    fn refused(&mut self, i: usize, why: String) {
        self.w.r.first_error = Some(why);
        self.w.sh.reach.refuse_protocol();
        if self.conns[i].streams.is_empty() {
            self.charge_one(Class::Connect);
        }
        let now = Instant::now();
        self.conns[i].end_all(
            End::Failed(Class::Connect, "not HTTP/2"),
            now,
            &mut self.tally,
        );
        self.conns[i].close();
    }

    fn on_event(&mut self, i: usize, readable: bool, closed: bool) {
        let Some(c) = self.conns.get(i) else { return };
        if c.phase == Phase::Free {
            return;
        }
        if c.phase == Phase::Connecting || c.want_write {
            self.conns[i].want_write = false;
            self.flush(i);
        }
        if readable && self.conns[i].phase == Phase::Open {
            self.read(i, closed);
        }
    }

    fn read(&mut self, i: usize, closed: bool) {
        let mut buf = std::mem::take(&mut self.w.buf);
        while let Some(t) = self.conns[i].transport.as_mut() {
            match t.read(&mut buf, true) {
                Ok((0, _)) => {
                    self.eof(i);
                    break;
                }
                Ok((n, at)) => {
                    // Streams end when their last bytes arrived (the kernel's stamp), not when this
                    // pass got to them: a thread that waited halfway down its queue (`halfway.rs`)
                    // or took many connections in one pass adds no latency of its own.
                    let at = at.and_then(|at| self.w.stamp_clock().instant(at));
                    let now = at.unwrap_or_else(Instant::now);
                    self.w.r.total_bytes += n as u64;
                    self.w.live_bytes += n as u64;
                    let c = &mut self.conns[i];
                    if c.first_byte.is_none() {
                        let ttfb = micros(now.saturating_duration_since(c.conn_start));
                        self.tally.sum.first_byte.saturating_record(ttfb.max(1));
                    }
                    let body = self.w.sh.plan.body.as_ref().map(|(b, _)| &b[..]);
                    if let Err(e) = c.feed(&buf[..n], now, body, &mut self.tally) {
                        self.conn_error(i, e);
                        break;
                    }
                    self.spoke_h2 |= c.settled;
                    if n < buf.len() && !closed {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.drop_conn(i, Class::Receive, &e);
                    break;
                }
            }
        }
        self.w.buf = buf;
        // As h2load does: the streams that ended are replaced at once, and everything the read
        // queued (their HEADERS, a SETTINGS ack, WINDOW_UPDATEs) leaves in one write, before the
        // next connection is read, so the server is not left waiting for a whole poll's worth.
        if self.conns[i].phase == Phase::Open {
            self.fill(i, Instant::now());
        }
        if !self.conns[i].out.is_empty() {
            self.flush(i);
        }
    }

    /// The server broke the protocol: its GOAWAY (queued by `feed`) goes out if it can, every
    /// stream on the connection fails (Exceptions), and the connection is replaced.
    fn conn_error(&mut self, i: usize, e: Error) {
        let c = &self.conns[i];
        if e.reason() == NOT_H2 && !c.settled && !self.spoke_h2 {
            return self.refused(i, h2_refused::preface_answer(c.to, &c.inbuf));
        }
        let what = format!(
            "request to {}: HTTP/2 protocol error by the server: {e}",
            c.to
        );
        self.flush(i);
        let now = Instant::now();
        self.conns[i].end_all(
            End::Failed(Class::Exceptions, "HTTP/2 protocol error"),
            now,
            &mut self.tally,
        );
        self.conns[i].close();
        self.note_error(what, None);
    }

    /// The server closed the connection.
    fn eof(&mut self, i: usize) {
        let c = &self.conns[i];
        if !c.settled && !self.spoke_h2 {
            let tls = self.w.sh.tls.is_some();
            return self.refused(i, h2_refused::closed_without_settings(c.to, tls));
        }
        let e = io::Error::new(
            ErrorKind::UnexpectedEof,
            "the server closed the connection before the response ended",
        );
        self.drop_conn(i, Class::Receive, &e);
    }

    /// The connection failed: its streams fail with `class`, the slot reconnects.
    fn drop_conn(&mut self, i: usize, class: Class, err: &io::Error) {
        if matches!(class, Class::Connect) {
            let to = self.conns[i].to;
            return self.connect_failed(i, to, err);
        }
        let now = Instant::now();
        let had = !self.conns[i].streams.is_empty();
        self.conns[i].end_all(End::Failed(class, "connection lost"), now, &mut self.tally);
        if had {
            let to = self.conns[i].to;
            self.note_error(format!("request to {to}: {err}"), err.raw_os_error());
        }
        self.conns[i].close();
    }

    fn check_timeouts(&mut self, now: Instant, timeout: Duration) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let waiting = c.phase == Phase::Connecting
                || !c.streams.is_empty()
                || (c.phase == Phase::Open && !c.settled);
            if !waiting || now.saturating_duration_since(c.last_progress) <= timeout {
                continue;
            }
            if c.phase == Phase::Connecting {
                let e = io::Error::new(ErrorKind::TimedOut, "connect timed out");
                self.drop_conn(i, Class::Connect, &e);
            } else {
                let to = c.to;
                if c.streams.is_empty() {
                    // No SETTINGS from the server: one request fails for the connection.
                    self.charge_one(Class::Exceptions);
                    self.tally.sum.timeout += 1;
                }
                self.conns[i].end_all(End::TimedOut, now, &mut self.tally);
                self.conns[i].close();
                self.note_error(
                    format!("request to {to}: timed out waiting for the response"),
                    None,
                );
            }
        }
    }

    /// Counts every stream that ended since the last call.
    fn settle(&mut self) {
        if let Some(s) = self.tally.server.take() {
            let _ = self.w.sh.server.set(s);
            self.tally.want_server = false;
        }
        // The list is handed back empty, not dropped: its capacity serves every later pass.
        let mut ended = std::mem::take(&mut self.tally.ended);
        for e in ended.drain(..) {
            self.count(e);
        }
        self.tally.ended = ended;
    }

    fn count(&mut self, e: Ended) {
        let mut s = e.stream;
        if e.end == End::Retry {
            self.queue.push_front((s.req, s.start));
            return;
        }
        self.w.outstanding -= 1;
        self.w.last_done = e.at;
        let sum = &mut self.tally.sum;
        sum.done += 1;
        let class = match e.end {
            End::Complete => {
                sum.succeeded += u64::from((200..400).contains(&s.status));
                let digest = s.hasher.take().map(|h| sha2::Digest::finalize(h).into());
                if self.w.body_ok_for(s.req, s.body_len, digest) {
                    return self.record(&s, e.at);
                }
                self.w.r.failed.length += 1;
                self.w.live_failed += 1;
                return;
            }
            End::Failed(class, why) => {
                sum.errored += 1;
                self.w.r.first_error.get_or_insert_with(|| why.to_string());
                class
            }
            End::TimedOut => {
                sum.errored += 1;
                sum.timeout += 1;
                Class::Exceptions
            }
            End::Retry => unreachable!("handled above"),
        };
        self.w.count_failure(class);
    }

    /// A complete stream: latency histograms and counters, as HTTP/1's complete request.
    fn record(&mut self, s: &Stream, at: Instant) {
        let total = micros(at.saturating_duration_since(s.start));
        let waiting = micros(
            s.first_byte
                .unwrap_or(at)
                .saturating_duration_since(s.sent_at),
        );
        self.w
            .record_times(s.req, s.start, total, s.connect_us, waiting, s.status);
        self.w.r.keep_alive_requests += 1;
    }
}

/// The list `halfway.rs` picks from: `(sent, fd)` of every open connection with streams at the
/// server, sent being its oldest stream's send (its oldest batch's); false if one is connecting,
/// not yet settled, or has something to write (frames, or a request body held by a window).
fn receiving(conns: &[H2Conn], waiting: &mut Vec<(Instant, RawFd)>) -> bool {
    for c in conns {
        match c.phase {
            Phase::Free => continue,
            Phase::Connecting => return false,
            Phase::Open => {}
        }
        let writing = c.want_write || !c.out.is_empty();
        if writing || !c.settled || c.streams.iter().any(|s| s.body_sent.is_some()) {
            return false;
        }
        let oldest = c.streams.iter().map(|s| s.sent_at).min();
        if let (Some(sent), Some(t)) = (oldest, c.transport.as_ref()) {
            waiting.push((sent, t.raw_fd()));
        }
    }
    true
}
