//! One HTTP/3 connection slot, the protocol's [`Connection`]: its QUIC connection on a UDP socket
//! of its own (`quic.rs`), the server's unidirectional streams (`peer.rs`) and the request streams
//! (`streams.rs`). The socket's readiness brings datagrams in, and quinn's own timers (loss
//! detection, acknowledgements, idle) are the slot's [`Connection::timer`]; after either the slot
//! takes quinn's news, reads, opens what it may and sends what quinn has.
//!
//! Requests wait for the handshake (the server's stream limit comes with it), then go as streams
//! in HTTP/2's batches (`stream.rs`'s `batch_room`) or, with `--rate`, each when it is due. A
//! connection resumed from a ticket that allows early data sends them at once as 0-RTT (with the
//! limits remembered from the ticket); if the server rejects it, they go again after the
//! handshake. With `--max-requests-per-connection` a connection opens that many streams, is
//! closed once they are answered, and the slot opens a new one. A server that refuses `h3` ends
//! the run with one line (`refused.rs`), as one that never answers does (a handshake timeout); a
//! connection closed with an error fails its requests, counts its code and is replaced.

use super::peer::Peer;
use super::prepared::{fields_frame, h3_tls, request_frame, Prepared};
use super::quic::Quic;
use super::refused;
use super::resumed;
use super::streams::{Ask, Streams};
use crate::clock::micros;
use crate::connection::{Connection, Waiting};
use crate::io::Io;
use crate::record::Class;
use crate::shared::Shared;
use crate::stream::{batch_room, charge_one, End, Tally};
use crate::transport::tls_config::TlsSetup;
use quinn_proto::{ConnectionError, Dir, EndpointConfig, Event, StreamEvent, StreamId, VarInt};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use webstand_results::plan::Plan;
use webstand_results::result::{Ended, QuicSummary, RunResult};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Free,
    Connecting,
    Open,
}

pub(crate) struct H3Conn {
    quic: Option<Quic>,
    to: SocketAddr,
    phase: Phase,
    streams: Streams,
    peer: Peer,
    conn_start: Instant,
    connect_us: u64,
    first_byte: Option<Instant>,
    last_progress: Instant,
    /// A datagram came back on this connection (a handshake timeout says whether one did).
    answered: bool,
    /// quinn's next timer.
    timer: Option<Instant>,
    /// Streams with something to read, from one pass over quinn's events.
    readable: Vec<StreamId>,
    /// Scratch for the datagrams of one transmit.
    tx: Vec<u8>,
    /// A script's delay(): the driver started the slot after one, and its request is not out yet.
    delayed_send: bool,
    /// The connection resumes a session whose ticket allows early data: its first requests go
    /// as 0-RTT, before the handshake completes.
    early: bool,
    /// The handshake verified the server's certificate: a full one, not resumed (`resumed.rs`).
    full: bool,
}

/// What a thread's HTTP/3 connections share.
pub(crate) struct H3Thread {
    /// What connections start from; why none can start (the run's TLS cannot carry QUIC).
    p: Result<Prepared, String>,
    tally: Tally,
    quic: QuicSummary,
    /// A connection of this thread has completed its handshake (so a later refusal is not "not h3").
    spoke_h3: bool,
    endpoint: Arc<EndpointConfig>,
}

impl Connection for H3Conn {
    type Thread = H3Thread;
    const MULTIPLEXED: bool = true;
    const TIMERS: bool = true;

    fn request(plan: &Plan, path: &str) -> Vec<u8> {
        request_frame(plan, path)
    }

    fn tls(setup: TlsSetup) -> TlsSetup {
        h3_tls(setup)
    }

    fn thread(sh: &Shared) -> H3Thread {
        let p = match &sh.tls {
            Some(tls) => Prepared::new(sh.plan, tls),
            None => Err("HTTP/3 runs over QUIC, which is always TLS: give an https:// URL".into()),
        };
        H3Thread {
            p,
            tally: Tally::new(sh.server.get().is_none(), sh.script_responses),
            quic: QuicSummary::default(),
            spoke_h3: false,
            endpoint: Arc::new(EndpointConfig::default()),
        }
    }

    fn new(sh: &Shared, _: &H3Thread, now: Instant) -> H3Conn {
        H3Conn {
            quic: None,
            to: sh.reach.addr(),
            phase: Phase::Free,
            streams: Streams::new(),
            peer: Peer::default(),
            conn_start: now,
            connect_us: 0,
            first_byte: None,
            last_progress: now,
            answered: false,
            timer: None,
            readable: Vec::new(),
            tx: Vec::new(),
            delayed_send: false,
            early: false,
            full: false,
        }
    }

    fn start(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize, now: Instant) {
        self.delayed_send = io.requests.delays();
        if self.phase == Phase::Free && io.requests.due(now) {
            self.connect(io, th, slot, now);
        }
        self.drive(io, th, slot, now);
    }

    fn connected(&self) -> bool {
        self.quic.is_some()
    }

    fn takes_more(&self, th: &H3Thread) -> bool {
        self.phase == Phase::Free || self.room(th) > 0
    }

    fn on_event(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize, readable: bool, _: bool) {
        if self.phase != Phase::Free && readable {
            self.receive(io, th, slot);
        }
    }

    fn check_timeout(
        &mut self,
        io: &mut Io,
        th: &mut H3Thread,
        slot: usize,
        now: Instant,
        timeout: Duration,
    ) {
        let waiting = self.phase == Phase::Connecting || !self.streams.list.is_empty();
        if !waiting || now.saturating_duration_since(self.last_progress) <= timeout {
            return;
        }
        let to = self.to;
        if self.phase == Phase::Connecting {
            let what = refused::handshake_timeout(to, timeout, self.answered);
            return self.connect_failed(io, th, slot, what, None);
        }
        self.streams.end_all(End::TimedOut, now, &mut th.tally);
        self.close(io, th, slot);
        io.record.error(None, || {
            format!("request to {to}: timed out waiting for the response")
        });
        self.settle(io, th);
    }

    fn timer(&self) -> Option<Instant> {
        self.timer
    }

    fn on_timer(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize, now: Instant) {
        if let Some(q) = self.quic.as_mut() {
            q.conn.handle_timeout(now);
        }
        self.drive(io, th, slot, now);
    }

    /// Busy while connecting or with requests at the server: QUIC's timers, not the socket
    /// alone, say when it needs the thread, so no halfway wait on its socket.
    fn waiting(&self) -> Waiting {
        match self.phase {
            Phase::Free => Waiting::Idle,
            Phase::Open if self.streams.list.is_empty() => Waiting::Idle,
            _ => Waiting::Busy,
        }
    }

    fn queue(conns: &[H3Conn], _: u64) -> usize {
        conns.iter().filter(|c| !c.streams.list.is_empty()).count()
    }

    fn finish(conns: &mut [H3Conn], mut th: H3Thread, r: &mut RunResult) {
        let client_rps = conns.iter().filter_map(|c| c.streams.span.rate()).collect();
        for c in conns.iter_mut() {
            c.release(&mut th);
        }
        let max_streams = th.p.as_ref().map_or(1, |p| p.max_streams);
        th.tally.into_result(max_streams, client_rps, r);
        r.quic = Some(th.quic);
    }
}

impl H3Conn {
    /// Streams that may be opened now: once the handshake completed, or before with 0-RTT; none
    /// after a GOAWAY or past `--max-requests-per-connection`.
    fn room(&self, th: &H3Thread) -> usize {
        let sending = self.phase == Phase::Open || (self.phase == Phase::Connecting && self.early);
        match &th.p {
            Ok(p) if sending && self.peer.goaway.is_none() => {
                let room = (p.max_streams as usize).saturating_sub(self.streams.list.len());
                let left = p
                    .per_connection
                    .map_or(u64::MAX, |n| n.saturating_sub(self.streams.opened()));
                room.min(usize::try_from(left).unwrap_or(usize::MAX))
            }
            _ => 0,
        }
    }

    /// The server confirmed the handshake (its HANDSHAKE_DONE came). Servers send their session
    /// tickets with it, after the handshake: a connection whose 0-RTT requests were all answered
    /// before then (0.5-RTT data) waits for it before it closes, so the next one can resume.
    fn confirmed(&self) -> bool {
        self.quic
            .as_ref()
            .is_some_and(|q| q.conn.stats().frame_rx.handshake_done > 0)
    }

    /// The connection has opened all the streams `--max-requests-per-connection` allows.
    fn used_up(&self, th: &H3Thread) -> bool {
        let per = th.p.as_ref().ok().and_then(|p| p.per_connection);
        per.is_some_and(|n| self.streams.opened() >= n)
    }

    fn connect(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize, now: Instant) {
        let sh = io.sh;
        if sh.reach.ended().is_some() {
            return;
        }
        let to = io.requests.addr(sh);
        self.to = to;
        let p = match &th.p {
            Ok(p) => p,
            Err(why) => {
                let why = format!("h3 to {to}: {why}");
                return self.refused(io, th, slot, why);
            }
        };
        let registry = io.poll.registry();
        let quic = match Quic::connect(to, p, &th.endpoint, &sh.setup, registry, slot, now) {
            Ok(q) => q,
            Err((what, errno)) => return self.connect_failed(io, th, slot, what, errno),
        };
        let (gso, gro) = quic.offload();
        th.quic.gso |= gso;
        th.quic.gro |= gro;
        self.early = quic.conn.has_0rtt();
        self.full = false;
        self.quic = Some(quic);
        if self.early {
            self.open_control(io, p);
        }
        self.phase = Phase::Connecting;
        self.peer = Peer::default();
        self.conn_start = now;
        self.connect_us = 0;
        self.first_byte = None;
        self.last_progress = now;
        self.answered = false;
        self.streams.begin(now);
    }

    /// Reads every datagram waiting on the socket; then drives.
    fn receive(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize) {
        let now = Instant::now();
        let Some(q) = self.quic.as_mut() else {
            return;
        };
        let verified = resumed::verified();
        let got = q.receive(&mut io.buf, &mut self.tx, now);
        self.full |= resumed::verified() != verified;
        if got.as_ref().is_ok_and(|&any| any) {
            self.answered = true;
            self.last_progress = now;
        }
        match got {
            // Before the handshake, nothing listening is the end; after it, loss recovery's.
            Err(e) if self.phase == Phase::Connecting => {
                let what = refused::socket_error(self.to, &e);
                self.connect_failed(io, th, slot, what, e.raw_os_error())
            }
            _ => self.drive(io, th, slot, now),
        }
    }

    /// Takes quinn's news (the handshake's end, readable and writable streams, the connection's
    /// end), reads the streams, opens what room allows, counts what ended, sends what quinn has,
    /// and sets the timer.
    fn drive(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize, now: Instant) {
        let Some(q) = self.quic.as_mut() else {
            return;
        };
        q.endpoint_events();
        let had_streams = !self.streams.list.is_empty();
        let (mut connected, mut lost) = (false, None);
        while let Some(event) = q.conn.poll() {
            match event {
                Event::Connected => connected = true,
                Event::ConnectionLost { reason } => lost = Some(reason),
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = q.conn.streams().accept(Dir::Uni) {
                        self.readable.push(id);
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) => self.readable.push(id),
                Event::Stream(StreamEvent::Writable { id }) => {
                    io.record.r.sent_bytes += self.streams.writable(&mut q.conn, id);
                }
                _ => {}
            }
        }
        if connected && !self.connected(io, th, slot, now) {
            return;
        }
        if let Err(e) = self.read(io, th, now) {
            return self.protocol_error(io, th, slot, e);
        }
        if let Some(reason) = lost {
            return self.lost(io, th, slot, reason);
        }
        if let Some(first) = self.peer.goaway {
            self.streams.goaway(first, now, &mut th.tally);
            if self.streams.list.is_empty() {
                self.close(io, th, slot); // refuses new requests and has none left: replaced
                return self.settle(io, th);
            }
        }
        if self.used_up(th) && self.streams.list.is_empty() && self.confirmed() {
            self.close(io, th, slot); // its requests are all answered: a new connection follows
            return self.settle(io, th);
        }
        // The streams that ended are counted first: a script's response() sees each before the
        // next request is made (and may stop the thread).
        self.settle(io, th);
        self.fill(io, th, now);
        if io.requests.delays() && had_streams && self.streams.list.is_empty() {
            io.ready.push(slot); // the next request waits for the script's delay() first
        }
        self.transmit(now);
    }

    /// Sends what quinn has, and sets the timer.
    fn transmit(&mut self, now: Instant) {
        if let Some(q) = self.quic.as_mut() {
            self.timer = q.transmit(&mut self.tx, now);
        }
    }

    /// Reads the streams quinn said were readable.
    fn read(
        &mut self,
        io: &mut Io,
        th: &mut H3Thread,
        now: Instant,
    ) -> Result<(), webstand_h3::Error> {
        let Some(q) = self.quic.as_mut() else {
            return Ok(());
        };
        let mut ids = std::mem::take(&mut self.readable);
        let mut result = Ok(());
        for id in ids.drain(..) {
            let read = match id.dir() {
                Dir::Uni => self.peer.read(&mut q.conn, id),
                Dir::Bi => self.streams.read(&mut q.conn, id, now, &mut th.tally),
            };
            match read {
                Ok(0) => {}
                Ok(n) => {
                    io.record.received(n as usize);
                    self.last_progress = now;
                    if self.first_byte.is_none() {
                        let ttfb = micros(now.saturating_duration_since(self.conn_start));
                        th.tally.sum.first_byte.saturating_record(ttfb.max(1));
                        self.first_byte = Some(now);
                    }
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        ids.clear();
        self.readable = ids;
        result
    }

    /// Opens streams while the connection has room: requests to send again first, then (closed
    /// loop) new ones from the budget in batches, or (open loop) the sends due.
    fn fill(&mut self, io: &mut Io, th: &mut H3Thread, now: Instant) {
        let mut free = self.room(th);
        let (Ok(p), Some(q)) = (&th.p, self.quic.as_mut()) else {
            return;
        };
        if !io.requests.open_loop() {
            free = batch_room(free, self.streams.list.len(), p.max_streams as usize);
        }
        if io.requests.delays() {
            // A script's delay() comes before each request: one stream at a time, each started
            // by the driver once its delay is over.
            let owed = self.delayed_send && self.streams.list.is_empty();
            free = free.min(usize::from(owed));
        }
        let sh = io.sh;
        while free > 0 {
            let Some(send) = io.requests.next_stream(sh, now, fields_frame) else {
                break;
            };
            if self.streams.list.is_empty() {
                self.last_progress = Instant::now(); // the timeout counts from this stream's start
            }
            let (req, start) = (send.req, send.start);
            let ask = Ask {
                req,
                start,
                frame: send.block,
                body: send.body,
                check: sh.plan.requests[req].expect.is_some(),
                connect_us: self.connect_us,
                keep: th.tally.keep,
                own: send.own,
            };
            let sent = match self.streams.open(&mut q.conn, ask) {
                Ok(sent) => sent,
                Err(ask) => {
                    // The server's stream limit: sent when it grants more.
                    let own = ask.own;
                    io.requests.again(req, start, own);
                    break;
                }
            };
            io.record.r.sent_bytes += sent;
            th.tally.sum.started += 1;
            self.delayed_send = false;
            free -= 1;
        }
    }

    /// The handshake completed: the connection is up, unless the server chose another protocol.
    /// Our control stream opens with our SETTINGS.
    fn connected(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize, now: Instant) -> bool {
        let (Some(q), Ok(p)) = (self.quic.as_mut(), &th.p) else {
            return false;
        };
        let alpn = q
            .conn
            .crypto_session()
            .handshake_data()
            .and_then(|d| {
                d.downcast::<quinn_proto::crypto::rustls::HandshakeData>()
                    .ok()
            })
            .and_then(|d| d.protocol);
        if alpn.as_deref() != Some(&b"h3"[..]) {
            let why = refused::alpn(self.to, alpn.as_deref());
            self.refused(io, th, slot, why);
            return false;
        }
        let rejected = self.early && !q.conn.accepted_0rtt();
        if rejected {
            // quinn forgot the streams 0-RTT carried (the control stream too): their requests
            // go again, on new streams.
            th.tally.sum.started -= self.streams.list.len() as u64;
            self.streams.zero_rtt_rejected(now, &mut th.tally);
        }
        if !self.early || rejected {
            self.open_control(io, p);
        }
        self.phase = Phase::Open;
        self.connect_us = micros(now - self.conn_start);
        self.last_progress = now;
        io.record.r.connections += 1;
        io.sh.reach.connected();
        th.tally
            .sum
            .connect
            .saturating_record(self.connect_us.max(1));
        th.quic.handshakes += 1;
        th.quic.resumed += u64::from(!self.full);
        th.quic.zero_rtt_accepted += u64::from(self.early && !rejected);
        th.quic.zero_rtt_rejected += u64::from(rejected);
        th.spoke_h3 = true;
        true
    }

    /// Opens our control stream with our SETTINGS (at the handshake's end, or with 0-RTT at the
    /// connection's start).
    fn open_control(&mut self, io: &mut Io, p: &Prepared) {
        let Some(q) = self.quic.as_mut() else {
            return;
        };
        if let Some(id) = q.conn.streams().open(Dir::Uni) {
            let n = q.conn.send_stream(id).write(&p.control).unwrap_or(0);
            io.record.r.sent_bytes += n as u64;
        }
    }

    /// The server does not speak HTTP/3: the run ends at once with this reason (no figures, one
    /// line, a non-zero exit); the connection's request fails as a connect that failed would.
    fn refused(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize, why: String) {
        io.record.r.first_error = Some(why);
        io.sh.reach.refuse_protocol(Ended::NoHttp3);
        if self.streams.list.is_empty() {
            charge_one(io, &mut th.tally.sum, Class::Connect);
        }
        let failed = End::Failed(Class::Connect, "not HTTP/3");
        self.streams.end_all(failed, Instant::now(), &mut th.tally);
        self.close(io, th, slot);
        self.settle(io, th);
    }

    /// A connection could not be made: as with HTTP/1, a request fails for it (Connect).
    fn connect_failed(
        &mut self,
        io: &mut Io,
        th: &mut H3Thread,
        slot: usize,
        what: String,
        errno: Option<i32>,
    ) {
        let to = self.to;
        self.close(io, th, slot);
        let err = match errno {
            Some(code) => std::io::Error::from_raw_os_error(code),
            None => std::io::Error::other(what.clone()),
        };
        if io.sh.reach.connect_failed(to, &err) {
            return; // tried again, at the target's next address
        }
        if self.streams.list.is_empty() {
            charge_one(io, &mut th.tally.sum, Class::Connect);
        }
        let failed = End::Failed(Class::Connect, "connect failed");
        self.streams.end_all(failed, Instant::now(), &mut th.tally);
        io.record.error(errno, || what);
        self.settle(io, th);
    }

    /// The connection ended (the server closed it, it timed out, or the handshake failed).
    fn lost(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize, e: ConnectionError) {
        if let Some(code) = refused::error_code(&e) {
            *th.quic.errors.entry(code).or_default() += 1;
        }
        let to = self.to;
        if self.phase == Phase::Connecting {
            if let Some(why) = refused::not_h3(to, &e).filter(|_| !th.spoke_h3) {
                return self.refused(io, th, slot, why);
            }
            return self.connect_failed(io, th, slot, refused::describe(to, &e), None);
        }
        let had = !self.streams.list.is_empty();
        let lost = End::Failed(Class::Receive, "connection lost");
        self.streams.end_all(lost, Instant::now(), &mut th.tally);
        self.close(io, th, slot);
        if had {
            io.record.error(None, || refused::describe(to, &e));
        }
        self.settle(io, th);
    }

    /// The server broke HTTP/3 on the connection: it is closed with the error's code, every
    /// request on it fails (Exceptions), and it is replaced.
    fn protocol_error(
        &mut self,
        io: &mut Io,
        th: &mut H3Thread,
        slot: usize,
        e: webstand_h3::Error,
    ) {
        let now = Instant::now();
        let code = e.code();
        if let Some(q) = self.quic.as_mut() {
            let code = VarInt::from_u64(code.to_u64()).unwrap_or(VarInt::MAX);
            q.conn
                .close(now, code, bytes::Bytes::from_static(e.reason().as_bytes()));
        }
        *th.quic.errors.entry(code.to_string()).or_default() += 1;
        let what = format!(
            "request to {}: HTTP/3 protocol error by the server: {e}",
            self.to
        );
        let failed = End::Failed(Class::Exceptions, "HTTP/3 protocol error");
        self.streams.end_all(failed, now, &mut th.tally);
        self.close(io, th, slot);
        io.record.error(None, || what);
        self.settle(io, th);
    }

    /// Closes the connection (H3_NO_ERROR unless it is closed already, the close sent at once),
    /// adds its statistics to the thread's, and frees the slot.
    fn release(&mut self, th: &mut H3Thread) {
        if let Some(q) = self.quic.take() {
            q.close(&mut self.tx, &mut th.quic);
        }
        self.streams.span.closed(self.phase != Phase::Free);
        self.phase = Phase::Free;
        self.timer = None;
        self.readable.clear();
    }

    /// [`H3Conn::release`], and the slot asks to be started again (a new connection if work
    /// remains).
    fn close(&mut self, io: &mut Io, th: &mut H3Thread, slot: usize) {
        self.release(th);
        io.ready.push(slot);
    }

    /// Counts every stream that ended since the last call, and the Server value if one came.
    fn settle(&mut self, io: &mut Io, th: &mut H3Thread) {
        if let Some(s) = th.tally.server.take() {
            let _ = io.sh.server.set(s);
            th.tally.want_server = false;
        }
        let mut ended = std::mem::take(&mut th.tally.ended);
        for e in ended.drain(..) {
            e.count(io, &mut th.tally.sum);
        }
        th.tally.ended = ended;
    }
}
