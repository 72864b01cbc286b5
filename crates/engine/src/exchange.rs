//! One request/response exchange on a connection slot: connect or reuse, write the request, read and
//! frame the response, count it (or the failure) by ab's classes, and leave the slot ready for the
//! next request.

use crate::clock::{micros, StampClock};
use crate::conn::{Class, Phase};
use crate::response::Feed;
use crate::tls::count_handshake;
use crate::transport::Transport;
use crate::worker::Worker;
use crate::BodyCheck;
use mio::{Interest, Token};
use sha2::{Digest, Sha256};
use std::io::{self, ErrorKind};
use std::time::Instant;

impl Worker<'_> {
    /// Writes the slot's in-flight requests, on its open connection or a new one; `now` was just read.
    pub(crate) fn send(&mut self, slot: usize, now: Instant) {
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
        } else {
            self.connect(slot, now);
        }
    }

    /// Opens a new connection for the slot and writes its request.
    fn connect(&mut self, slot: usize, now: Instant) {
        let sh = self.sh;
        let c = &mut self.conns[slot];
        c.stream = None;
        c.served = 0;
        c.conn_start = now;
        c.phase = Phase::Connecting;
        c.to = sh.reach.addr();
        let tls = sh.tls.as_ref();
        let s =
            match Transport::connect(c.to, sh.keep_alive, sh.plan.body.is_some(), &sh.setup, tls) {
                Ok(s) => s,
                Err(e) => return self.fail(slot, Class::Connect, &e),
            };
        c.stream = Some(s);
        c.registered = false;
        c.want_write = false;
        // On loopback the handshake usually completes inside connect(): write right away, and ask
        // for writability only if that write could not finish.
        self.write(slot);
        let c = &mut self.conns[slot];
        if let Some(s) = c.stream.as_mut() {
            let interest = if c.want_write {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let r = self
                .poll
                .registry()
                .register(s.socket(), Token(slot), interest);
            if let Err(e) = r {
                return self.fail(slot, Class::Connect, &e);
            }
            c.registered = true;
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
                        self.sh.reach.connected();
                        c.phase = Phase::Sending;
                        if let (Some(Transport::Tls(t)), Some(tls)) = (&c.stream, &sh.tls) {
                            count_handshake(&mut self.r, t, c.conn_start, now, tls.sni.as_deref());
                        }
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
                                stream.socket(),
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
    pub(crate) fn on_event(&mut self, slot: usize, readable: bool, closed: bool) {
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
                    match s.read(&mut b, false) {
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        _ => c.close(),
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
            match stream.read(&mut buf, stamped) {
                Ok((0, _)) => {
                    self.eof(slot);
                    break;
                }
                Ok((n, at)) => {
                    let now = match at {
                        Some(at) => self.stamp_clock().instant(at),
                        None => None,
                    }
                    .unwrap_or_else(Instant::now);
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

    /// This pass's clock snapshot, taken when first needed (HTTP/1's responses and `--h2`'s reads).
    pub(crate) fn stamp_clock(&mut self) -> StampClock {
        *self.stamps.get_or_insert_with(StampClock::now)
    }

    /// Feeds bytes to the slot's parser; returns whether the connection is still receiving.
    fn consume(&mut self, slot: usize, data: &[u8], now: Instant) -> bool {
        let mut pos = 0;
        while pos < data.len() {
            if self.conns[slot].phase != Phase::Receiving {
                // Bytes nobody asked for: the connection cannot be trusted any more.
                self.conns[slot].close();
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
        let Some(f) = self.conns[slot].inflight.pop_front() else {
            return false;
        };
        self.outstanding -= 1;
        self.last_done = now;
        let body_len = self.conns[slot].parser.body_len;
        if self.body_ok(slot, f.req, body_len) {
            self.record(slot, f.req, f.start, now, reusable);
        } else {
            self.r.failed.length += 1;
            self.r.body_bytes += body_len;
            self.live_failed += 1;
        }
        let sh = self.sh;
        let c = &mut self.conns[slot];
        if let Some(s) = c.parser.server.take() {
            let _ = sh.server.set(s);
        }
        c.served += 1;
        if !reusable {
            self.server_closes += u64::from(sh.keep_alive);
            // Closed once the slot's next connection is opened and its request sent (the worker's
            // next pass), so the server gets that request a close() sooner.
            if let Some(done) = c.stream.take() {
                self.retired.push(done);
            }
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

    /// Whether the body that just completed for request `req` is the one expected: its digest, the
    /// first fetch's digest, or (ab's check) the first response's length.
    fn body_ok(&mut self, slot: usize, req: usize, body_len: u64) -> bool {
        let digest: Option<[u8; 32]> = self.conns[slot]
            .parser
            .hasher
            .take()
            .map(|h| h.finalize().into());
        self.body_ok_for(req, body_len, digest)
    }

    /// [`Worker::body_ok`] for a body already hashed (any protocol's).
    pub(crate) fn body_ok_for(&self, req: usize, body_len: u64, digest: Option<[u8; 32]>) -> bool {
        let sh = self.sh;
        let doc_len = *sh.doc_len[req].get_or_init(|| body_len);
        match &sh.plan.requests[req].expect {
            Some(BodyCheck::Digest { len, sha256 }) => {
                *len == body_len && digest.as_ref() == Some(sha256)
            }
            Some(BodyCheck::FirstFetch) => match digest {
                Some(d) => *sh.first_digest[req].get_or_init(|| d) == d,
                None => false,
            },
            None => sh.plan.variable_length || doc_len == body_len,
        }
    }

    /// Counts a complete, correct response: latency histograms, counters, the live totals.
    fn record(&mut self, slot: usize, req: usize, start: Instant, now: Instant, reusable: bool) {
        let c = &self.conns[slot];
        let connect_us = if c.served == 0 { c.connect_us } else { 0 };
        let total = micros(now.saturating_duration_since(start));
        let waiting = micros(
            c.first_byte
                .unwrap_or(now)
                .saturating_duration_since(c.written_at),
        );
        let status = c.parser.status;
        self.r.body_bytes += c.parser.body_len;
        self.record_times(req, start, total, connect_us, waiting, status);
        if reusable {
            self.r.keep_alive_requests += 1;
        }
    }

    /// Counts a complete, correct response's times (µs) and status: latency histograms,
    /// counters, the live totals, the sample if kept (any protocol's).
    pub(crate) fn record_times(
        &mut self,
        req: usize,
        start: Instant,
        total: u64,
        connect_us: u64,
        waiting: u64,
        status: u16,
    ) {
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
        self.r.per_request[req] += 1;
        self.live_complete += 1;
        if !(200..300).contains(&status) {
            self.r.non_2xx += 1;
            self.live_non_2xx += 1;
            *self.r.non_2xx_statuses.entry(status).or_default() += 1;
        }
        if self.sh.plan.keep_samples {
            self.r.samples.push(crate::Sample {
                start_us: micros(start.saturating_duration_since(self.sh.start)),
                connect_us,
                waiting_us: waiting,
                total_us: total,
            });
        }
    }

    /// The server closed the connection.
    fn eof(&mut self, slot: usize) {
        let c = &mut self.conns[slot];
        if c.phase != Phase::Receiving {
            self.server_closes += u64::from(c.phase == Phase::Idle);
            c.close();
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
        self.server_closes += 1;
        self.conns[slot].close();
        self.ready.push(slot);
    }

    /// One failed request of `class` (ab's classes; a failed write counts as an exception too).
    pub(crate) fn count_failure(&mut self, class: Class) {
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
    }

    /// The front request failed; the connection is closed and the slot starts over.
    pub(crate) fn fail(&mut self, slot: usize, class: Class, err: &io::Error) {
        let c = &mut self.conns[slot];
        let (connecting, to) = (c.phase == Phase::Connecting, c.to);
        c.close();
        if matches!(class, Class::Connect) && self.sh.reach.connect_failed(to, err) {
            return self.ready.push(slot); // sent again, to the target's next address
        }
        if c.inflight.pop_front().is_some() {
            self.outstanding -= 1;
            self.last_done = Instant::now();
            self.count_failure(class);
            if let Some(code) = err.raw_os_error() {
                *self.r.socket_errors.entry(code).or_default() += 1;
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
}
