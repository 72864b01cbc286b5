//! One HTTP/2 connection slot, the protocol's [`Connection`]: its socket (the transports HTTP/1
//! uses, plain or TLS) and its [`Session`], carrying up to `-m` streams. It connects when there is
//! work, waits for the server's SETTINGS before its first stream (so the server's limit is known),
//! opens streams from the thread's requests, moves the session's frames to the socket and feeds it
//! what it reads, and counts every stream that ended.
//!
//! Closed loop: a connection keeps up to `-m` streams (or the server's lower limit) in flight, new
//! ones opened in batches as half of them end (`h2/stream.rs`'s `batch_room`). As h2load does, the
//! streams that a read ended are replaced at once, and everything the read queued (their HEADERS,
//! a SETTINGS ack, WINDOW_UPDATEs) leaves in one write, before the next connection is read. Open
//! loop (`--rate`): each send is due at its intended time and waits for a free stream if none is;
//! its latency counts from the intended time all the same.

use super::prepared::{alpn_h2, fields_block, request_block, Prepared, NOT_H2};
use super::refused;
use super::session::Session;
use crate::clock::micros;
use crate::connection::{Connection, Waiting};
use crate::io::Io;
use crate::record::Class;
use crate::shared::Shared;
use crate::stream::{batch_room, charge_one, End, Tally};
use crate::transport::tls::count_handshake;
use crate::transport::tls_config::TlsSetup;
use crate::transport::Transport;
use mio::{Interest, Token};
use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use webstand_h2::Error;
use webstand_results::plan::Plan;
use webstand_results::result::{Ended, RunResult};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Free,
    Connecting,
    Open,
}

pub(crate) struct H2Conn {
    transport: Option<Transport>,
    to: SocketAddr,
    phase: Phase,
    registered: bool,
    want_write: bool,
    /// How much of the session's output is written.
    written: usize,
    conn_start: Instant,
    connect_us: u64,
    first_byte: Option<Instant>,
    last_progress: Instant,
    session: Session,
}

/// What a thread's HTTP/2 connections share.
pub(crate) struct H2Thread {
    p: Prepared,
    tally: Tally,
    /// A connection of this thread has spoken HTTP/2 (so a later close is not "not h2").
    spoke_h2: bool,
}

impl Connection for H2Conn {
    type Thread = H2Thread;
    const MULTIPLEXED: bool = true;

    fn request(plan: &Plan, path: &str) -> Vec<u8> {
        request_block(plan, path)
    }

    fn tls(setup: TlsSetup) -> TlsSetup {
        alpn_h2(setup)
    }

    fn thread(sh: &Shared) -> H2Thread {
        H2Thread {
            p: Prepared::new(sh.plan),
            tally: Tally::new(sh.server.get().is_none(), sh.script_responses),
            spoke_h2: false,
        }
    }

    fn new(sh: &Shared, _: &H2Thread, now: Instant) -> H2Conn {
        H2Conn {
            transport: None,
            to: sh.reach.addr(),
            phase: Phase::Free,
            registered: false,
            want_write: false,
            written: 0,
            conn_start: now,
            connect_us: 0,
            first_byte: None,
            last_progress: now,
            session: Session::new(),
        }
    }

    fn start(&mut self, io: &mut Io, th: &mut H2Thread, slot: usize, now: Instant) {
        if self.phase == Phase::Free && io.requests.due(now) {
            self.connect(io, th, slot, now);
        }
        self.fill(io, th, now);
        if !self.session.output().is_empty() {
            self.flush(io, th, slot);
        }
        self.settle(io, th);
    }

    fn connected(&self) -> bool {
        self.transport.is_some()
    }

    fn takes_more(&self, th: &H2Thread) -> bool {
        self.phase == Phase::Free || self.room(&th.p) > 0
    }

    fn on_event(
        &mut self,
        io: &mut Io,
        th: &mut H2Thread,
        slot: usize,
        readable: bool,
        closed: bool,
    ) {
        if self.phase == Phase::Free {
            return;
        }
        if self.phase == Phase::Connecting || self.want_write {
            self.want_write = false;
            self.flush(io, th, slot);
        }
        if readable && self.phase == Phase::Open {
            self.read(io, th, slot, closed);
        }
        self.settle(io, th);
    }

    fn check_timeout(
        &mut self,
        io: &mut Io,
        th: &mut H2Thread,
        slot: usize,
        now: Instant,
        timeout: Duration,
    ) {
        let waiting = self.phase == Phase::Connecting
            || !self.session.streams().is_empty()
            || (self.phase == Phase::Open && !self.session.settled());
        if !waiting || now.saturating_duration_since(self.last_progress) <= timeout {
            return;
        }
        if self.phase == Phase::Connecting {
            let e = io::Error::new(ErrorKind::TimedOut, "connect timed out");
            self.drop_conn(io, th, slot, Class::Connect, &e);
        } else {
            let to = self.to;
            if self.session.streams().is_empty() {
                // No SETTINGS from the server: one request fails for the connection.
                charge_one(io, &mut th.tally.sum, Class::Exceptions);
                th.tally.sum.timeout += 1;
            }
            self.session.end_all(End::TimedOut, now, &mut th.tally);
            self.close(io, slot);
            let what = format!("request to {to}: timed out waiting for the response");
            io.record.error(None, || what);
        }
        self.settle(io, th);
    }

    /// Its oldest stream's send (its oldest batch's) on an open connection with streams at the
    /// server; busy if it is connecting, not yet settled, or has something to write (frames, or a
    /// request body held by a window).
    fn waiting(&self) -> Waiting {
        match self.phase {
            Phase::Free => return Waiting::Idle,
            Phase::Connecting => return Waiting::Busy,
            Phase::Open => {}
        }
        let writing = self.want_write || !self.session.output().is_empty();
        let streams = self.session.streams();
        if writing || !self.session.settled() || streams.iter().any(|s| s.body_sent.is_some()) {
            return Waiting::Busy;
        }
        let oldest = streams.iter().map(|s| s.sent_at).min();
        match (oldest, self.transport.as_ref()) {
            (Some(sent), Some(t)) => Waiting::On(sent, t.raw_fd()),
            _ => Waiting::Idle,
        }
    }

    fn queue(conns: &[H2Conn], _: u64) -> usize {
        conns
            .iter()
            .filter(|c| !c.session.streams().is_empty())
            .count()
    }

    fn finish(conns: &mut [H2Conn], th: H2Thread, r: &mut RunResult) {
        let limits = conns
            .iter()
            .filter(|c| c.session.settled())
            .map(|c| c.session.limit(&th.p));
        let max_streams = limits.min().unwrap_or(th.p.max_streams);
        let client_rps = conns.iter().filter_map(|c| c.session.rate()).collect();
        th.tally.into_result(max_streams, client_rps, r);
        for c in conns {
            c.release();
        }
    }
}

impl H2Conn {
    /// Streams that may be opened now.
    fn room(&self, p: &Prepared) -> usize {
        match self.phase {
            Phase::Open => self.session.capacity(p),
            _ => 0,
        }
    }

    /// Drops the socket; the slot is free for a new connection.
    fn release(&mut self) {
        self.session.closed(self.phase != Phase::Free);
        self.transport = None;
        self.phase = Phase::Free;
        self.registered = false;
        self.want_write = false;
    }

    /// [`H2Conn::release`], and the slot asks to be started again (a new connection if work
    /// remains).
    fn close(&mut self, io: &mut Io, slot: usize) {
        self.release();
        io.ready.push(slot);
    }

    /// Opens streams while the connection has room: requests to send again first, then (closed
    /// loop) new ones from the budget in batches ([`batch_room`]), or (open loop) the sends due.
    fn fill(&mut self, io: &mut Io, th: &mut H2Thread, now: Instant) {
        let mut free = self.room(&th.p);
        if !io.requests.open_loop() {
            let streams = self.session.streams().len();
            free = batch_room(free, streams, self.session.limit(&th.p) as usize);
        }
        if io.requests.delays() {
            // A script's delay() comes before each request: one stream at a time, each started
            // by the driver once its delay is over.
            free = free.min(usize::from(self.session.streams().is_empty()));
        }
        let sh = io.sh;
        while free > 0 {
            let Some(send) = io.requests.next_stream(sh, now, fields_block) else {
                break;
            };
            if self.session.streams().is_empty() {
                self.last_progress = Instant::now(); // the timeout counts from this stream's start
            }
            let check = sh.plan.requests[send.req].expect.is_some();
            self.session.open(&th.p, send, check, th.tally.keep);
            th.tally.sum.started += 1;
            free -= 1;
        }
    }

    fn connect(&mut self, io: &mut Io, th: &mut H2Thread, slot: usize, now: Instant) {
        let sh = io.sh;
        if sh.reach.ended().is_some() {
            return; // the run ends at this pass: a new connection would meet the same answer
        }
        let to = io.requests.addr(sh);
        let body = sh.plan.body.is_some() || sh.plan.script.is_some();
        let t = match Transport::connect(to, true, body, &sh.setup, sh.tls.as_ref()) {
            Ok(t) => t,
            Err(e) => return self.connect_failed(io, th, slot, to, &e),
        };
        self.transport = Some(t);
        self.to = to;
        self.phase = Phase::Connecting;
        self.registered = false;
        self.want_write = false;
        self.written = 0;
        self.conn_start = now;
        self.connect_us = 0;
        self.first_byte = None;
        self.last_progress = now;
        self.session.begin(&th.p, now);
        let Some(t) = self.transport.as_mut() else {
            return;
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        match io
            .poll
            .registry()
            .register(t.socket(), Token(slot), interest)
        {
            Ok(()) => self.registered = true,
            Err(e) => self.connect_failed(io, th, slot, to, &e),
        }
    }

    /// A connection could not be made: as with HTTP/1, a request fails for it (Connect).
    fn connect_failed(
        &mut self,
        io: &mut Io,
        th: &mut H2Thread,
        slot: usize,
        to: SocketAddr,
        err: &io::Error,
    ) {
        if let Some(why) = refused::alpn_failure(to, &err.to_string()) {
            return self.refused(io, th, slot, why);
        }
        self.close(io, slot);
        if io.sh.reach.connect_failed(to, err) {
            return; // tried again, at the target's next address
        }
        if self.session.streams().is_empty() {
            charge_one(io, &mut th.tally.sum, Class::Connect);
        }
        let failed = End::Failed(Class::Connect, "connect failed");
        self.session.end_all(failed, Instant::now(), &mut th.tally);
        io.record
            .error(err.raw_os_error(), || format!("connect to {to}: {err}"));
    }

    /// Writes what the session has queued, as far as the socket takes it.
    fn flush(&mut self, io: &mut Io, th: &mut H2Thread, slot: usize) {
        loop {
            let Some(t) = self.transport.as_mut() else {
                return;
            };
            let out = self.session.output();
            if self.written == out.len() {
                self.session.written();
                self.written = 0;
                return;
            }
            match t.write(&out[self.written..]) {
                Ok(n) => {
                    self.written += n;
                    io.record.r.sent_bytes += n as u64;
                    if self.phase == Phase::Connecting
                        && !self.connected(io, th, slot, Instant::now())
                    {
                        return;
                    }
                }
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::NotConnected =>
                {
                    self.want_write = true;
                    return;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let class = match self.phase {
                        Phase::Connecting => Class::Connect,
                        _ => Class::Write,
                    };
                    return self.drop_conn(io, th, slot, class, &e);
                }
            }
        }
    }

    /// The first write went through: TCP (and TLS) are up. False when the server turned out not
    /// to speak HTTP/2 by ALPN.
    fn connected(&mut self, io: &mut Io, th: &mut H2Thread, slot: usize, now: Instant) -> bool {
        let sh = io.sh;
        self.phase = Phase::Open;
        self.connect_us = micros(now - self.conn_start);
        self.session.connected(self.connect_us);
        self.last_progress = now;
        io.record.r.connections += 1;
        sh.reach.connected();
        th.tally
            .sum
            .connect
            .saturating_record(self.connect_us.max(1));
        if let (Some(Transport::Tls(t)), Some(tls)) = (&self.transport, &sh.tls) {
            count_handshake(
                &mut io.record.r,
                t,
                self.conn_start,
                now,
                tls.sni.as_deref(),
            );
            if t.alpn() != Some(&b"h2"[..]) {
                let why = refused::alpn(self.to, t.alpn());
                self.refused(io, th, slot, why);
                return false;
            }
        }
        true
    }

    /// The server does not speak HTTP/2: the run ends at once with this reason, as for a target
    /// that cannot be reached (no figures, one line, a non-zero exit); the connection's request
    /// fails as a connect that failed would (Connect), so a sweep's level shows it.
    fn refused(&mut self, io: &mut Io, th: &mut H2Thread, slot: usize, why: String) {
        io.record.r.first_error = Some(why);
        io.sh.reach.refuse_protocol(Ended::NoHttp2);
        if self.session.streams().is_empty() {
            charge_one(io, &mut th.tally.sum, Class::Connect);
        }
        let failed = End::Failed(Class::Connect, "not HTTP/2");
        self.session.end_all(failed, Instant::now(), &mut th.tally);
        self.close(io, slot);
    }

    fn read(&mut self, io: &mut Io, th: &mut H2Thread, slot: usize, closed: bool) {
        let had_streams = !self.session.streams().is_empty();
        let mut buf = std::mem::take(&mut io.buf);
        while let Some(t) = self.transport.as_mut() {
            match t.read(&mut buf, true) {
                Ok((0, _)) => {
                    self.eof(io, th, slot);
                    break;
                }
                Ok((n, at)) => {
                    // Streams end when their last bytes arrived (the kernel's stamp), not when this
                    // pass got to them: a thread that waited halfway down its queue (`halfway.rs`)
                    // or took many connections in one pass adds no latency of its own.
                    let now = io.clock.arrival(at);
                    io.record.received(n);
                    if self.first_byte.is_none() {
                        let ttfb = micros(now.saturating_duration_since(self.conn_start));
                        th.tally.sum.first_byte.saturating_record(ttfb.max(1));
                        self.first_byte = Some(now);
                    }
                    self.last_progress = now;
                    let body = io.sh.plan.body.as_ref().map(|(b, _)| &b[..]);
                    if let Err(e) = self.session.feed(&buf[..n], now, body, &mut th.tally) {
                        self.conn_error(io, th, slot, e);
                        break;
                    }
                    th.spoke_h2 |= self.session.settled();
                    if n < buf.len() && !closed {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.drop_conn(io, th, slot, Class::Receive, &e);
                    break;
                }
            }
        }
        io.buf = buf;
        // The streams that ended are counted first: a script's response() sees each before the
        // next request is made (and may stop the thread).
        self.settle(io, th);
        // As h2load does: the streams that ended are replaced at once, and everything the read
        // queued leaves in one write, before the next connection is read. A script's delay()
        // is the driver's: the slot asks to be started (its first request waited before the
        // connection was made).
        if self.phase == Phase::Open && (!io.requests.delays() || self.session.fresh()) {
            self.fill(io, th, Instant::now());
        } else if self.phase == Phase::Open && had_streams && self.session.streams().is_empty() {
            io.ready.push(slot);
        }
        if !self.session.output().is_empty() {
            self.flush(io, th, slot);
        }
        if self.phase == Phase::Open && self.session.spent() {
            self.close(io, slot); // refused new streams and has none left: replaced
        }
    }

    /// The server broke the protocol: its GOAWAY (queued by `feed`) goes out if it can, every
    /// stream on the connection fails (Exceptions), and the connection is replaced.
    fn conn_error(&mut self, io: &mut Io, th: &mut H2Thread, slot: usize, e: Error) {
        if e.reason() == NOT_H2 && !self.session.settled() && !th.spoke_h2 {
            let why = refused::preface_answer(self.to, self.session.unread());
            return self.refused(io, th, slot, why);
        }
        let what = format!(
            "request to {}: HTTP/2 protocol error by the server: {e}",
            self.to
        );
        self.flush(io, th, slot);
        let failed = End::Failed(Class::Exceptions, "HTTP/2 protocol error");
        self.session.end_all(failed, Instant::now(), &mut th.tally);
        self.close(io, slot);
        io.record.error(None, || what);
    }

    /// The server closed the connection.
    fn eof(&mut self, io: &mut Io, th: &mut H2Thread, slot: usize) {
        if !self.session.settled() && !th.spoke_h2 {
            let why = refused::closed_without_settings(self.to, io.sh.tls.is_some());
            return self.refused(io, th, slot, why);
        }
        let e = io::Error::new(
            ErrorKind::UnexpectedEof,
            "the server closed the connection before the response ended",
        );
        self.drop_conn(io, th, slot, Class::Receive, &e);
    }

    /// The connection failed: its streams fail with `class`, the slot reconnects.
    fn drop_conn(
        &mut self,
        io: &mut Io,
        th: &mut H2Thread,
        slot: usize,
        class: Class,
        err: &io::Error,
    ) {
        if matches!(class, Class::Connect) {
            let to = self.to;
            return self.connect_failed(io, th, slot, to, err);
        }
        let had = !self.session.streams().is_empty();
        let lost = End::Failed(class, "connection lost");
        self.session.end_all(lost, Instant::now(), &mut th.tally);
        if had {
            let to = self.to;
            io.record
                .error(err.raw_os_error(), || format!("request to {to}: {err}"));
        }
        self.close(io, slot);
    }

    /// Counts every stream that ended since the last call, and the Server value if one came.
    fn settle(&mut self, io: &mut Io, th: &mut H2Thread) {
        if let Some(s) = th.tally.server.take() {
            let _ = io.sh.server.set(s);
            th.tally.want_server = false;
        }
        // The list is handed back empty, not dropped: its capacity serves every later call.
        let mut ended = std::mem::take(&mut th.tally.ended);
        for e in ended.drain(..) {
            e.count(io, &mut th.tally.sum);
        }
        th.tally.ended = ended;
    }
}
