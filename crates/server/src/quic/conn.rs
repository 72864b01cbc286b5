//! One QUIC connection as the loop's byte stream (`Transport::Quic`): quinn-proto's connection
//! state machine, fed the datagrams the loop routes to it (`event`), woken by its own timers
//! (`timeout`, `on_timeout`: loss detection, acknowledgements, idle), sending its datagrams
//! through the loop's shared socket (`transmit`). Above it the protocol (h3/) reads and writes
//! records (records.rs): `read` turns the streams' new bytes, ends, resets and STOP_SENDINGs into
//! records; `write` takes records and queues each stream's bytes, which `flush` hands to quinn as
//! its flow control and send buffer allow. Queued bytes are bounded (`HELD_MAX`): past it `write`
//! says WouldBlock, and the loop keeps the rest in the connection's outbox until the peer's
//! acknowledgements make room, as for a full TCP socket.
//!
//! Its graceful end (`finish`, as the loop lingers on a closing connection) waits until the peer
//! has acknowledged every answer the connection finished, then closes (CONNECTION_CLOSE with
//! H3_NO_ERROR) and waits out the closing period (three PTOs, in which quinn answers the peer's
//! late packets with the close again, and sends a close that pacing held back) before `read`
//! says the connection is over. Closing at once would drop answers still in quinn's send buffer
//! and could leave the close itself unsent: a client that has nothing more to send then waits
//! for its idle timeout (oha's 30 s after a timed run).
//!
//! Dropped, it closes the connection (CONNECTION_CLOSE with H3_NO_ERROR unless a code was given,
//! sent at once) and tells the endpoint the connection is gone, so no state outlives the slot;
//! packets still in flight from the peer then get a stateless reset.

use super::records::{self, Kind};
use super::socket::Shared;
use quinn_proto::{
    ConnectionError, ConnectionEvent, ConnectionHandle, Dir, EndpointEvent, Event, ReadError,
    StreamEvent, StreamId, VarInt, WriteError,
};
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Instant;

/// Bytes queued for the streams before `write` pushes back.
const HELD_MAX: usize = 512 << 10;
/// H3_NO_ERROR: a close that is not an error.
const NO_ERROR: u32 = 0x100;
/// Emptied stream queues kept for the next streams (no allocation per request for them).
const SPARE_QUEUES: usize = 32;

/// What one stream still has to send.
#[derive(Default)]
struct Outgoing {
    bytes: VecDeque<u8>,
    fin: bool,
}

pub struct QuicConn {
    conn: quinn_proto::Connection,
    handle: ConnectionHandle,
    shared: Rc<Shared>,
    /// Streams that may have bytes (or an end) to read.
    readable: VecDeque<StreamId>,
    /// Records made from events (a peer's STOP_SENDING) waiting for the next read.
    notes: Vec<u8>,
    /// The tail of the last `write` that is not a whole record yet.
    partial: Vec<u8>,
    outgoing: HashMap<u64, Outgoing>,
    held: usize,
    /// Server-initiated unidirectional streams opened so far.
    uni_opened: u64,
    /// Streams we finished whose bytes the peer has not all acknowledged yet.
    unacked: HashSet<StreamId>,
    /// The loop is ending the connection gracefully (`finish`).
    finishing: bool,
    /// The connection is over (closed by either side, or timed out).
    lost: bool,
    /// Its handshake has completed.
    connected: bool,
    /// The endpoint was told the connection drained.
    released: bool,
    /// When the loop's timer for this connection is set.
    pub armed: Option<Instant>,
    /// Scratch for one transmit's datagrams, and for the IDs `flush` goes through.
    tx: Vec<u8>,
    ids: Vec<u64>,
    spare: Vec<VecDeque<u8>>,
}

impl QuicConn {
    pub fn new(
        conn: quinn_proto::Connection,
        handle: ConnectionHandle,
        shared: Rc<Shared>,
    ) -> QuicConn {
        shared.handshaking.set(shared.handshaking.get() + 1);
        QuicConn {
            conn,
            handle,
            shared,
            readable: VecDeque::new(),
            notes: Vec::new(),
            partial: Vec::new(),
            outgoing: HashMap::new(),
            held: 0,
            uni_opened: 0,
            unacked: HashSet::new(),
            finishing: false,
            lost: false,
            connected: false,
            released: false,
            armed: None,
            tx: Vec::new(),
            ids: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// A datagram's worth of news the endpoint routed here.
    pub fn event(&mut self, event: ConnectionEvent) {
        self.conn.handle_event(event);
    }

    /// When quinn's next timer is due.
    pub fn timeout(&mut self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    /// Fires quinn's timers that are due (at the clock read now, as `transmit` does).
    pub fn on_timeout(&mut self) {
        self.conn.handle_timeout(Instant::now());
    }

    /// Hands the endpoint what the connection has for it, and sends what is due.
    ///
    /// The clock is read here, never taken from the caller: quinn's pacer keeps the time it
    /// last sent and refills its tokens from the time since, so a loop round's older clock
    /// (earlier than what quinn already saw) refills nothing and sets a pacing timer already in
    /// the past, which fires, sends nothing at that same older time, and is set again: the loop
    /// spun on it and no longer polled its socket, for every connection.
    pub fn transmit(&mut self) {
        let now = Instant::now();
        while let Some(event) = self.conn.poll_endpoint_events() {
            if event.is_drained() {
                self.released = true;
            }
            let reply = self
                .shared
                .endpoint
                .borrow_mut()
                .handle_event(self.handle, event);
            if let Some(reply) = reply {
                self.conn.handle_event(reply);
            }
        }
        let max = self.shared.max_datagrams();
        loop {
            self.tx.clear();
            let Some(t) = self.conn.poll_transmit(now, max, &mut self.tx) else {
                break;
            };
            self.shared.send(&t, &self.tx);
        }
    }

    pub fn handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    pub fn peer_addr(&self) -> SocketAddr {
        self.conn.remote_address()
    }

    pub fn local_addr(&self) -> SocketAddr {
        match self.conn.local_ip() {
            Some(ip) => SocketAddr::new(ip, self.shared.local.port()),
            None => self.shared.local,
        }
    }

    /// Takes quinn's events: new and readable streams, STOP_SENDING, the end of the connection.
    fn take_events(&mut self) {
        while let Some(event) = self.conn.poll() {
            match event {
                Event::Stream(StreamEvent::Opened { dir }) => {
                    while let Some(id) = self.conn.streams().accept(dir) {
                        self.readable.push_back(id);
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) if !self.readable.contains(&id) => {
                    self.readable.push_back(id);
                }
                Event::Stream(StreamEvent::Finished { id }) => {
                    self.unacked.remove(&id);
                }
                Event::Stream(StreamEvent::Stopped { id, error_code }) => {
                    self.unacked.remove(&id);
                    if let Some(gone) = self.outgoing.remove(&u64::from(id)) {
                        self.held -= gone.bytes.len();
                    }
                    records::push_code(&mut self.notes, Kind::Stop, id.into(), error_code.into());
                }
                Event::Connected => self.handshake_over(),
                Event::ConnectionLost { reason } => {
                    self.lost = true;
                    self.handshake_over();
                    if !matches!(reason, ConnectionError::LocallyClosed) {
                        self.readable.clear();
                    }
                }
                _ => {}
            }
        }
    }

    fn handshake_over(&mut self) {
        if !self.connected {
            self.connected = true;
            let n = self.shared.handshaking.get();
            self.shared.handshaking.set(n.saturating_sub(1));
        }
    }

    /// Records of what the peer sent, into `buf`; Ok(0) once the connection is over (after
    /// `finish`: once its closing period is), WouldBlock when nothing is waiting.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.take_events();
        if self.finishing && self.held == 0 && self.unacked.is_empty() {
            self.close(u64::from(NO_ERROR));
        }
        let mut n = 0;
        if !self.notes.is_empty() && self.notes.len() <= buf.len() {
            buf[..self.notes.len()].copy_from_slice(&self.notes);
            n = self.notes.len();
            self.notes.clear();
        }
        while let Some(&id) = self.readable.front() {
            if buf.len() - n <= records::HEAD {
                break;
            }
            let mut stream = self.conn.recv_stream(id);
            let Ok(mut chunks) = stream.read(true) else {
                self.readable.pop_front();
                continue;
            };
            let done = loop {
                let room = buf.len() - n;
                if room <= records::HEAD {
                    break false;
                }
                match chunks.next(room - records::HEAD) {
                    Ok(Some(chunk)) => n += put(&mut buf[n..], Kind::Data, id, &chunk.bytes),
                    Ok(None) => {
                        n += put(&mut buf[n..], Kind::Fin, id, b"");
                        break true;
                    }
                    Err(ReadError::Blocked) => break true,
                    Err(ReadError::Reset(code)) => {
                        let code = u64::from(code).to_be_bytes();
                        n += put(&mut buf[n..], Kind::Reset, id, &code);
                        break true;
                    }
                }
            };
            // Flow-control credit for what was read goes out with the next transmit.
            let _ = chunks.finalize();
            if !done {
                break;
            }
            self.readable.pop_front();
        }
        match n {
            0 if self.conn.is_drained() || (self.lost && !self.finishing) => Ok(0),
            0 => Err(io::ErrorKind::WouldBlock.into()),
            n => Ok(n),
        }
    }

    /// More may be read at once: a stream is left half-read, or a note waits.
    pub fn may_have_more(&self) -> bool {
        !self.readable.is_empty() || !self.notes.is_empty()
    }

    /// Takes records to send; WouldBlock while `HELD_MAX` bytes are queued.
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.held >= HELD_MAX {
            self.flush()?;
            if self.held >= HELD_MAX {
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
        // Records come whole in each write but for a queued rest's; a part kept goes first.
        let mut kept = std::mem::take(&mut self.partial);
        let bytes = match kept.is_empty() {
            true => buf,
            false => {
                kept.extend_from_slice(buf);
                &kept[..]
            }
        };
        let mut at = 0;
        while let Some((record, used)) = records::next(&bytes[at..]) {
            at += used;
            let id = record.stream;
            match record.kind {
                Kind::Data => {
                    let spare = &mut self.spare;
                    let out = self
                        .outgoing
                        .entry(id)
                        .or_insert_with(|| spare_queue(spare));
                    out.bytes.extend(record.payload);
                    self.held += record.payload.len();
                }
                Kind::Fin => {
                    let spare = &mut self.spare;
                    self.outgoing
                        .entry(id)
                        .or_insert_with(|| spare_queue(spare))
                        .fin = true
                }
                Kind::Reset => {
                    if let Some(gone) = self.outgoing.remove(&id) {
                        self.held -= gone.bytes.len();
                    }
                    let code = code_of(record.code());
                    let _ = self
                        .conn
                        .send_stream(StreamId::from(varint(id)))
                        .reset(code);
                }
                Kind::Stop => {
                    let code = code_of(record.code());
                    let _ = self.conn.recv_stream(StreamId::from(varint(id))).stop(code);
                    self.readable.retain(|s| u64::from(*s) != id);
                }
                Kind::Close => self.close(record.code()),
            }
        }
        self.partial = bytes[at..].to_vec();
        self.flush()?;
        Ok(buf.len())
    }

    /// Hands queued bytes to quinn's streams and sends what is due; Ok(false) while some stream
    /// cannot take all of its bytes yet.
    pub fn flush(&mut self) -> io::Result<bool> {
        let mut blocked = false;
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(self.outgoing.keys());
        for &id in &ids {
            if !self.open_up_to(id) {
                blocked = true;
                continue;
            }
            let Some(out) = self.outgoing.get_mut(&id) else {
                continue;
            };
            let mut stream = self.conn.send_stream(StreamId::from(varint(id)));
            while !out.bytes.is_empty() {
                let (front, _) = out.bytes.as_slices();
                match stream.write(front) {
                    Ok(n) => {
                        out.bytes.drain(..n);
                        self.held -= n;
                    }
                    Err(WriteError::Blocked) => break,
                    Err(_) => {
                        // Stopped by the peer or closed: what is left goes nowhere.
                        self.held -= out.bytes.len();
                        out.bytes.clear();
                        out.fin = false;
                    }
                }
            }
            if out.bytes.is_empty() {
                if out.fin && stream.finish().is_ok() {
                    self.unacked.insert(StreamId::from(varint(id)));
                }
                if let Some(done) = self.outgoing.remove(&id) {
                    if self.spare.len() < SPARE_QUEUES {
                        self.spare.push(done.bytes);
                    }
                }
            } else {
                blocked = true;
            }
        }
        self.ids = ids;
        self.transmit();
        Ok(!blocked)
    }

    /// Opens our unidirectional streams up to `id` (they open in order), true once it is open.
    fn open_up_to(&mut self, id: u64) -> bool {
        if id & 3 != 3 {
            return true; // a client's stream, or none of ours to open
        }
        while self.uni_opened <= id >> 2 {
            if self.conn.streams().open(Dir::Uni).is_none() {
                return false;
            }
            self.uni_opened += 1;
        }
        true
    }

    /// Bytes wait for room on a stream.
    pub fn pending(&self) -> bool {
        self.held > 0
    }

    /// Ends the connection once the peer has acknowledged every answer, then lets its closing
    /// period run (`read` says when it is over).
    pub fn finish(&mut self) {
        self.finishing = true;
    }

    /// Closes the connection with an HTTP/3 code (sent at once).
    pub fn close(&mut self, code: u64) {
        if !self.lost {
            self.lost = true;
            let now = Instant::now();
            self.conn.close(now, code_of(code), bytes::Bytes::new());
            self.transmit();
        }
    }
}

impl Drop for QuicConn {
    fn drop(&mut self) {
        self.close(u64::from(NO_ERROR));
        self.handshake_over();
        self.shared.routes.borrow_mut().remove(&self.handle);
        if !self.released {
            let mut endpoint = self.shared.endpoint.borrow_mut();
            endpoint.handle_event(self.handle, EndpointEvent::drained());
        }
    }
}

/// Writes a record into `buf` (which has room for it); its length.
fn put(buf: &mut [u8], kind: Kind, id: StreamId, payload: &[u8]) -> usize {
    let mut head = [0u8; records::HEAD];
    head[0] = kind as u8;
    head[1..9].copy_from_slice(&u64::from(id).to_be_bytes());
    head[9..13].copy_from_slice(&(payload.len() as u32).to_be_bytes());
    buf[..records::HEAD].copy_from_slice(&head);
    buf[records::HEAD..records::HEAD + payload.len()].copy_from_slice(payload);
    records::HEAD + payload.len()
}

/// A stream's queue, from the spare ones when there is one.
fn spare_queue(spare: &mut Vec<VecDeque<u8>>) -> Outgoing {
    Outgoing {
        bytes: spare.pop().unwrap_or_default(),
        fin: false,
    }
}

fn varint(value: u64) -> VarInt {
    VarInt::from_u64(value).unwrap_or(VarInt::MAX)
}

fn code_of(code: u64) -> VarInt {
    varint(code)
}
