//! One HTTP/1 connection slot, the protocol's [`Connection`]: it connects (or reuses its open
//! keep-alive connection), writes its requests (several when pipelined), frames each response
//! with its reader (`h1/response.rs`), records it or the failure by ab's classes, and puts itself
//! on the ready list for its next request. A reused connection that the server closed before
//! answering is retried on a new one, not counted as a failure.
//!
//! A new connection's request is written right after `connect` (on loopback the handshake usually
//! completes inside it), and the slot asks for writability only when that write could not finish:
//! no registration change per request. A read shorter than the buffer ends the socket's read loop
//! (edge-triggered polling reports later data as a new edge), so a keep-alive request costs one
//! send and one receive.

use crate::connection::{Connection, Waiting};
use crate::h1::inflight::{InFlight, InFlights};
use crate::h1::request::request_bytes;
use crate::h1::response::{Feed, ResponseParser};
use crate::io::Io;
use crate::record::{Class, Response};
use crate::shared::Shared;
use crate::transport::tls::count_handshake;
use crate::transport::Transport;
use mio::{Interest, Token};
use sha2::{Digest, Sha256};
use std::io::{self as stdio, ErrorKind};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use webstand_results::plan::Plan;
use webstand_results::result::RunResult;

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

pub(crate) struct H1Conn {
    stream: Option<Transport>,
    /// Where the current (or last) connection went.
    to: SocketAddr,
    /// Whether `stream` is registered with the poller, and for writability too.
    registered: bool,
    want_write: bool,
    phase: Phase,
    /// Responses completed on the current socket.
    served: u64,
    inflight: InFlights,
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

impl Connection for H1Conn {
    type Thread = ();
    const MULTIPLEXED: bool = false;

    fn request(plan: &Plan, path: &str) -> Vec<u8> {
        request_bytes(plan, path)
    }

    fn thread(_: &Shared) {}

    fn new(sh: &Shared, _: &(), now: Instant) -> H1Conn {
        let mut parser = ResponseParser::default();
        parser.verbosity = sh.plan.verbosity;
        if sh.script_responses {
            parser.kept = Some(Default::default());
        }
        H1Conn {
            stream: None,
            to: sh.reach.addr(),
            registered: false,
            want_write: false,
            phase: Phase::Free,
            served: 0,
            inflight: InFlights::with_room(sh.pipeline),
            out: Vec::new(),
            out_req: None,
            written: 0,
            conn_start: now,
            connect_us: 0,
            written_at: now,
            first_byte: None,
            last_progress: now,
            parser,
        }
    }

    fn start(&mut self, io: &mut Io, _: &mut (), slot: usize, now: Instant) {
        if !self.inflight.is_empty() {
            // Retry what a closed keep-alive connection left unanswered (the same bytes).
            return self.send(io, slot, Instant::now(), false);
        }
        if io.requests.open_loop() {
            let Some((req, start)) = io.requests.next(now) else {
                return;
            };
            self.inflight.push_back(InFlight { req, start });
            return self.send(io, slot, Instant::now(), true);
        }
        let n = io.requests.take(io.sh.pipeline as u64);
        if n > 0 {
            let now = Instant::now();
            for _ in 0..n {
                let req = io.requests.pick();
                self.inflight.push_back(InFlight { req, start: now });
            }
            self.send(io, slot, now, true);
        }
    }

    fn connected(&self) -> bool {
        self.stream.is_some()
    }

    fn takes_more(&self, _: &()) -> bool {
        self.inflight.is_empty() && matches!(self.phase, Phase::Free | Phase::Idle)
    }

    fn on_event(&mut self, io: &mut Io, _: &mut (), slot: usize, readable: bool, closed: bool) {
        match self.phase {
            Phase::Free => {}
            Phase::Connecting | Phase::Sending => {
                self.write(io, slot);
                if readable && self.phase == Phase::Receiving {
                    self.read(io, slot, closed);
                }
            }
            Phase::Receiving if readable => self.read(io, slot, closed),
            Phase::Receiving => {}
            Phase::Idle if readable => {
                // An idle keep-alive connection closed by the server (or sending junk): drop it.
                let mut b = [0u8; 64];
                if let Some(s) = self.stream.as_mut() {
                    match s.read(&mut b, false) {
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        _ => self.close(),
                    }
                }
            }
            Phase::Idle => {}
        }
    }

    fn check_timeout(
        &mut self,
        io: &mut Io,
        _: &mut (),
        slot: usize,
        now: Instant,
        timeout: Duration,
    ) {
        if self.busy() && now.saturating_duration_since(self.last_progress) > timeout {
            let (class, msg) = match self.phase {
                Phase::Connecting => (Class::Connect, "connect timed out"),
                _ => (Class::Exceptions, "timed out waiting for the response"),
            };
            self.fail(
                io,
                slot,
                class,
                &stdio::Error::new(ErrorKind::TimedOut, msg),
            );
        }
    }

    fn waiting(&self) -> Waiting {
        match (self.phase, self.stream.as_ref()) {
            (Phase::Receiving, Some(s)) => Waiting::On(self.written_at, s.raw_fd()),
            (Phase::Connecting | Phase::Sending, _) => Waiting::Busy,
            _ => Waiting::Idle,
        }
    }

    fn queue(_: &[H1Conn], outstanding: u64) -> usize {
        outstanding as usize
    }

    fn finish(_: &mut [H1Conn], _: (), _: &mut RunResult) {}
}

impl H1Conn {
    /// Drops the socket (closing it) and frees the slot.
    fn close(&mut self) {
        self.stream = None;
        self.phase = Phase::Free;
    }

    /// Whether the slot waits on the network (and so can time out).
    fn busy(&self) -> bool {
        matches!(
            self.phase,
            Phase::Connecting | Phase::Sending | Phase::Receiving
        )
    }

    /// Writes the slot's in-flight requests, on its open connection or a new one; `now` was just read.
    /// `fresh`: new requests (a script's `request()` builds their bytes), not ones sent again.
    fn send(&mut self, io: &mut Io, slot: usize, now: Instant, fresh: bool) {
        let sh = io.sh;
        let first = self.inflight.front().map_or(0, |f| f.req);
        if io.requests.scripted() {
            // One call's bytes carry the slot's requests (a script's pipelined requests).
            self.out_req = None;
            if fresh {
                self.out.clear();
                if !io.requests.build(&mut self.out) {
                    self.inflight.clear();
                    return;
                }
            }
        } else if self.inflight.len() == 1 {
            self.out_req = Some(first);
        } else {
            self.out_req = None;
            self.out.clear();
            for f in self.inflight.iter() {
                self.out.extend_from_slice(io.requests.bytes(sh, f.req));
            }
        }
        self.written = 0;
        self.first_byte = None;
        self.parser.begin(sh.head_request);
        self.parser.capture_server = sh.server.get().is_none();
        hash_for(&mut self.parser.hasher, sh, first);
        self.last_progress = now;
        if self.phase == Phase::Idle && self.stream.is_some() {
            self.phase = Phase::Sending;
            self.write(io, slot);
        } else {
            self.connect(io, slot, now);
        }
    }

    /// Opens a new connection for the slot and writes its request.
    fn connect(&mut self, io: &mut Io, slot: usize, now: Instant) {
        let sh = io.sh;
        self.stream = None;
        self.served = 0;
        self.conn_start = now;
        self.phase = Phase::Connecting;
        self.to = io.requests.addr(sh);
        let tls = sh.tls.as_ref();
        let body = sh.plan.body.is_some();
        let s = match Transport::connect(self.to, sh.keep_alive, body, &sh.setup, tls) {
            Ok(s) => s,
            Err(e) => return self.fail(io, slot, Class::Connect, &e),
        };
        self.stream = Some(s);
        self.registered = false;
        self.want_write = false;
        // On loopback the handshake usually completes inside connect(): write right away, and ask
        // for writability only if that write could not finish.
        self.write(io, slot);
        if let Some(s) = self.stream.as_mut() {
            let interest = if self.want_write {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let r = io
                .poll
                .registry()
                .register(s.socket(), Token(slot), interest);
            if let Err(e) = r {
                return self.fail(io, slot, Class::Connect, &e);
            }
            self.registered = true;
        }
    }

    fn write(&mut self, io: &mut Io, slot: usize) {
        let sh = io.sh;
        loop {
            let bytes: &[u8] = match self.out_req {
                Some(r) => io.requests.bytes(sh, r),
                None => &self.out,
            };
            let Some(stream) = self.stream.as_mut() else {
                return;
            };
            match stream.write(&bytes[self.written..]) {
                Ok(n) => {
                    // A request on an open connection is written right after send() read the clock.
                    let now = if self.phase == Phase::Sending && self.written == 0 {
                        self.last_progress
                    } else {
                        Instant::now()
                    };
                    if self.phase == Phase::Connecting {
                        self.connect_us = crate::clock::micros(now - self.conn_start);
                        io.record.r.connections += 1;
                        sh.reach.connected();
                        self.phase = Phase::Sending;
                        if let (Some(Transport::Tls(t)), Some(tls)) = (&self.stream, &sh.tls) {
                            let sni = tls.sni.as_deref();
                            count_handshake(&mut io.record.r, t, self.conn_start, now, sni);
                        }
                    }
                    self.written += n;
                    self.last_progress = now;
                    io.record.r.sent_bytes += n as u64;
                    if self.written == bytes.len() {
                        self.phase = Phase::Receiving;
                        self.written_at = now;
                        return;
                    }
                }
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::NotConnected =>
                {
                    if !self.want_write {
                        self.want_write = true;
                        if self.registered {
                            let r = io.poll.registry().reregister(
                                stream.socket(),
                                Token(slot),
                                Interest::READABLE | Interest::WRITABLE,
                            );
                            if let Err(e) = r {
                                return self.fail(io, slot, Class::Write, &e);
                            }
                        }
                    }
                    return;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let class = match self.phase {
                        Phase::Connecting => Class::Connect,
                        _ if self.served > 0 && self.written == 0 => return self.retry(io, slot),
                        _ => Class::Write,
                    };
                    return self.fail(io, slot, class, &e);
                }
            }
        }
    }

    /// `closed`: the event also reported the peer's FIN (or an error), so reading must go on to see it.
    fn read(&mut self, io: &mut Io, slot: usize, closed: bool) {
        let mut buf = std::mem::take(&mut io.buf);
        let stamped = io.sh.keep_alive;
        while let Some(stream) = self.stream.as_mut() {
            match stream.read(&mut buf, stamped) {
                Ok((0, _)) => {
                    self.eof(io, slot);
                    break;
                }
                Ok((n, at)) => {
                    let now = io.clock.arrival(at);
                    io.record.received(n);
                    self.last_progress = now;
                    if self.first_byte.is_none() {
                        self.first_byte = Some(now);
                    }
                    if !self.consume(io, slot, &buf[..n], now) {
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
                    if self.served > 0 && !self.parser.started() {
                        self.retry(io, slot);
                    } else {
                        self.fail(io, slot, Class::Receive, &e);
                    }
                    break;
                }
            }
        }
        io.buf = buf;
    }

    /// Feeds bytes to the slot's parser; returns whether the connection is still receiving.
    fn consume(&mut self, io: &mut Io, slot: usize, data: &[u8], now: Instant) -> bool {
        let mut pos = 0;
        while pos < data.len() {
            if self.phase != Phase::Receiving {
                // Bytes nobody asked for: the connection cannot be trusted any more.
                self.close();
                return false;
            }
            match self.parser.feed(&data[pos..]) {
                Ok(Feed::More) => return true,
                Ok(Feed::Done(n)) => {
                    pos += n;
                    let reusable = io.sh.keep_alive && self.parser.keep_alive;
                    if !self.complete(io, slot, now, reusable) {
                        return false;
                    }
                }
                Err(msg) => {
                    let e = stdio::Error::new(ErrorKind::InvalidData, msg);
                    self.fail(io, slot, Class::Exceptions, &e);
                    return false;
                }
            }
        }
        true
    }

    /// The front request's response is complete. Returns whether the connection stays open.
    fn complete(&mut self, io: &mut Io, slot: usize, now: Instant, reusable: bool) -> bool {
        let Some(f) = self.inflight.pop_front() else {
            return false;
        };
        let sh = io.sh;
        io.requests.done(now);
        let body_len = self.parser.body_len;
        io.record.r.body_bytes += body_len;
        let response = Response {
            req: f.req,
            start: f.start,
            end: now,
            connect_us: if self.served == 0 { self.connect_us } else { 0 },
            written: self.written_at,
            first_byte: self.first_byte,
            status: self.parser.status,
            body_len,
            digest: self
                .parser
                .hasher
                .as_mut()
                .map(|h| h.finalize_reset().into()),
        };
        let counted = match (io.requests.response_reader(), self.parser.kept.as_ref()) {
            (Some(script), Some(kept)) => {
                let (head, body) = (&kept.head[..], &kept.body[..]);
                io.record
                    .scripted_response(sh, &response, script, head, body)
            }
            _ => Ok(io.record.response(sh, &response)),
        };
        let counted = counted.unwrap_or_else(|e| {
            io.requests.script_failed(e);
            false
        });
        if counted && reusable {
            io.record.r.keep_alive_requests += 1;
        }
        if let Some(s) = self.parser.server.take() {
            let _ = sh.server.set(s);
        }
        self.served += 1;
        if !reusable {
            io.record.server_closes += u64::from(sh.keep_alive);
            // Closed once the slot's next connection is opened and its request sent (the driver's
            // next pass), so the server gets that request a close() sooner.
            if let Some(done) = self.stream.take() {
                io.retired.push(done);
            }
            self.phase = Phase::Free;
            io.ready.push(slot);
            return false;
        }
        if self.inflight.is_empty() {
            self.phase = Phase::Idle;
            io.ready.push(slot);
        } else {
            // The next pipelined response follows on the same connection.
            self.parser.begin(sh.head_request);
            let next = self.inflight.front().map_or(0, |f| f.req);
            hash_for(&mut self.parser.hasher, sh, next);
            self.first_byte = Some(now);
        }
        true
    }

    /// The server closed the connection.
    fn eof(&mut self, io: &mut Io, slot: usize) {
        if self.phase != Phase::Receiving {
            io.record.server_closes += u64::from(self.phase == Phase::Idle);
            self.close();
            return;
        }
        if self.parser.eof() {
            self.complete(io, slot, Instant::now(), false);
        } else if self.served > 0 && !self.parser.started() {
            self.retry(io, slot);
        } else {
            let e = stdio::Error::new(
                ErrorKind::UnexpectedEof,
                "the server closed the connection before a complete response",
            );
            self.fail(io, slot, Class::Receive, &e);
        }
    }

    /// A reused keep-alive connection was closed before answering: resend on a new connection.
    fn retry(&mut self, io: &mut Io, slot: usize) {
        io.record.server_closes += 1;
        self.close();
        io.ready.push(slot);
    }

    /// The front request failed; the connection is closed and the slot starts over.
    fn fail(&mut self, io: &mut Io, slot: usize, class: Class, err: &stdio::Error) {
        let (connecting, to) = (self.phase == Phase::Connecting, self.to);
        self.close();
        if matches!(class, Class::Connect) && io.sh.reach.connect_failed(to, err) {
            return io.ready.push(slot); // sent again, to the target's next address
        }
        if self.inflight.pop_front().is_some() {
            io.requests.done(Instant::now());
            io.record.failure(class);
            let what = if connecting {
                "connect to"
            } else {
                "request to"
            };
            io.record
                .error(err.raw_os_error(), || format!("{what} {to}: {err}"));
        }
        io.ready.push(slot);
    }
}

/// Sets `hasher` for request `req`: a fresh one when its body is checked (the connection's own,
/// reset, so checking allocates nothing per request), else none.
fn hash_for(hasher: &mut Option<Box<Sha256>>, sh: &Shared, req: usize) {
    match (sh.plan.requests[req].expect.is_some(), hasher.as_mut()) {
        (true, Some(h)) => h.reset(),
        (true, None) => *hasher = Some(Box::default()),
        (false, _) => *hasher = None,
    }
}
