//! One HTTP/2 connection's protocol state, without its socket: bytes read are cut into frames
//! (`webstand-h2`), each frame is acted on as RFC 9113 says a client must (SETTINGS acknowledged,
//! PING answered, flow-control windows kept both ways with WINDOW_UPDATE as data is consumed,
//! GOAWAY honoured, CONTINUATION joined, push refused), and each stream that ends is handed out as
//! an [`Ended`] with how it ended. The slot (`h2/conn.rs`) moves [`Session::output`] to the
//! transport and feeds what it reads; the session is kept across the slot's connections
//! ([`Session::begin`]) for the slot's span (h2load's per-client figures).
//!
//! A server's mistake never hangs a stream and never passes for a success: a stream error resets
//! that stream and fails it (Exceptions), a connection error fails every stream on the connection.

use super::prepared::{protocol, Blocks, Prepared};
use super::prepared::{LAST_STREAM_ID, MAX_HEADER_BLOCK, MAX_HEADER_LIST, NOT_H2};
use crate::record::Class;
use crate::requests::StreamSend;
use crate::stream::{ClientSpan, End, Ended, ResponseHead, Status, Stream, Tally};
use sha2::{Digest, Sha256};
use std::time::Instant;
use webstand_h2::block::Pending;
use webstand_h2::frame::{write, Frame, Head, Kind, HEADER_LEN};
use webstand_h2::hpack::{Decoder, HpackRefusal};
use webstand_h2::settings::{Sender, Settings, DEFAULT_WINDOW, MIN_MAX_FRAME_SIZE};
use webstand_h2::{Error, ErrorCode, Window};

pub(crate) struct Session {
    /// Frames to write.
    out: Vec<u8>,
    /// A partial frame carried between reads; after an error before SETTINGS, all the server sent.
    inbuf: Vec<u8>,
    streams: Vec<Stream>,
    next_id: u32,
    peer: Settings,
    /// The server's first SETTINGS frame arrived: its limits are known.
    settled: bool,
    send_window: Window,
    recv_window: Window,
    decoder: Decoder,
    blocks: Blocks,
    pending: Option<Pending>,
    /// A GOAWAY's last stream: no new streams, the connection ends when its streams have.
    goaway: Option<u32>,
    /// Our receive windows' sizes: the connection's and each stream's.
    targets: (u32, u32),
    /// The connection's set-up time, which its first stream carries (as ab's first request).
    connect_us: u64,
    /// The slot's span across its connections (h2load's per-client req/s).
    span: ClientSpan,
}

impl Session {
    pub(crate) fn new() -> Session {
        Session {
            out: Vec::new(),
            inbuf: Vec::new(),
            streams: Vec::new(),
            next_id: 1,
            peer: Settings::default(),
            settled: false,
            send_window: Window::new(0),
            recv_window: Window::new(0),
            decoder: Decoder::new(4096, MAX_HEADER_LIST),
            blocks: Blocks::Fresh,
            pending: None,
            goaway: None,
            targets: (0, 0),
            connect_us: 0,
            span: ClientSpan::default(),
        }
    }

    /// Fresh protocol state for the slot's new connection at `now`, with the preface queued.
    pub(crate) fn begin(&mut self, p: &Prepared, now: Instant) {
        let streams = std::mem::take(&mut self.streams);
        let span = self.span;
        *self = Session::new();
        self.streams = streams; // empty: a connection is only replaced once its streams ended
        self.span = span.started(now);
        self.out.extend_from_slice(&p.opening);
        self.send_window = Window::new(DEFAULT_WINDOW);
        // A connection window below the initial 65,535 cannot be announced: it is kept by sending
        // no WINDOW_UPDATE until the window is below half of it.
        self.recv_window = Window::new(p.connection_window.max(DEFAULT_WINDOW));
        self.targets = (p.connection_window, p.stream_window);
    }

    /// The connection is up after `connect_us` (TCP, and TLS if any).
    pub(crate) fn connected(&mut self, connect_us: u64) {
        self.connect_us = connect_us;
    }

    /// The slot's connection closed (`open`: it had one).
    pub(crate) fn closed(&mut self, open: bool) {
        self.span.closed(open);
    }

    /// The streams in flight.
    pub(crate) fn streams(&self) -> &[Stream] {
        &self.streams
    }

    /// Whether the connection has opened no stream yet.
    pub(crate) fn fresh(&self) -> bool {
        self.next_id == 1
    }

    /// Whether the server's first SETTINGS arrived.
    pub(crate) fn settled(&self) -> bool {
        self.settled
    }

    /// What the server sent that is not a whole frame yet (after an error before SETTINGS: all of
    /// it).
    pub(crate) fn unread(&self) -> &[u8] {
        &self.inbuf
    }

    /// The frames to write.
    pub(crate) fn output(&self) -> &[u8] {
        &self.out
    }

    /// Every frame of [`Session::output`] is written.
    pub(crate) fn written(&mut self) {
        self.out.clear();
    }

    /// h2load's per-client "req/s" of the slot, if it had any time.
    pub(crate) fn rate(&self) -> Option<f64> {
        self.span.rate()
    }

    /// Streams the server lets us have open at once: -m, or its lower limit.
    pub(crate) fn limit(&self, p: &Prepared) -> u32 {
        p.max_streams
            .min(self.peer.max_concurrent_streams.unwrap_or(u32::MAX))
    }

    /// How many more streams may be opened now (on an open connection).
    pub(crate) fn capacity(&self, p: &Prepared) -> usize {
        let usable = self.settled && self.goaway.is_none() && self.next_id < LAST_STREAM_ID;
        match usable {
            true => (self.limit(p) as usize).saturating_sub(self.streams.len()),
            false => 0,
        }
    }

    /// Whether the connection is done with: refused new streams and has none left.
    pub(crate) fn spent(&self) -> bool {
        (self.goaway.is_some() || self.next_id >= LAST_STREAM_ID) && self.streams.is_empty()
    }

    /// Opens a stream for `send`: its HEADERS (and body, as far as the windows allow; the plan's
    /// or its own). `send.block`: the request's block encoded without the dynamic table. `keep`:
    /// the stream keeps its response for a script.
    pub(crate) fn open(&mut self, p: &Prepared, send: StreamSend, check: bool, keep: bool) {
        let StreamSend {
            req,
            start,
            block: standalone,
            body,
            own,
        } = send;
        let id = self.next_id;
        self.next_id += 2;
        let max = self.peer.max_frame_size;
        let block = self
            .blocks
            .next(p, req, standalone, self.peer.header_table_size);
        write::headers(&mut self.out, id, body.is_none(), &block, max);
        self.streams.push(Stream {
            id,
            req,
            start,
            sent_at: start,
            first_byte: None,
            status: 0,
            body_len: 0,
            hasher: check.then(Sha256::new),
            connect_us: if id == 1 { self.connect_us } else { 0 },
            recv: Window::new(p.stream_window),
            send: Window::new(self.peer.initial_window_size),
            body_sent: body.map(|_| 0),
            own,
            kept: keep.then(Box::default),
        });
        if body.is_some() {
            // A stream with its own body sends it; the plan's is for the others.
            let own = self.streams.last().is_some_and(|s| s.own.is_some());
            self.send_bodies(body.filter(|_| !own));
        }
    }

    /// Sends request body bytes as DATA while both windows allow.
    /// `body`: the plan's, for the streams without their own.
    fn send_bodies(&mut self, body: Option<&[u8]>) {
        let max = self.peer.max_frame_size;
        for s in &mut self.streams {
            let Some(sent) = s.body_sent else { continue };
            let own = s.own.as_ref().map(|e| e.body.as_deref());
            let Some(body) = own.unwrap_or(body) else {
                continue;
            };
            let mut sent = sent;
            loop {
                let room = self
                    .send_window
                    .available()
                    .min(s.send.available())
                    .min(max);
                let n = (body.len() - sent).min(room as usize);
                let last = sent + n == body.len();
                if n == 0 && !last {
                    break;
                }
                write::data(&mut self.out, s.id, last, &body[sent..sent + n]);
                self.send_window.spend(n as u32);
                s.send.spend(n as u32);
                sent += n;
                if last {
                    break;
                }
            }
            s.body_sent = (sent < body.len()).then_some(sent);
        }
    }

    /// Feeds bytes read from the connection. An error is the connection's: the slot fails every
    /// stream with it, and the GOAWAY for it is already in the output.
    pub(crate) fn feed(
        &mut self,
        data: &[u8],
        now: Instant,
        body: Option<&[u8]>,
        t: &mut Tally,
    ) -> Result<(), Error> {
        // Bytes an error left unused stay: before SETTINGS, the answer that names what it speaks.
        let result = if self.inbuf.is_empty() {
            let used = self.frames(data, now, body, t);
            self.inbuf
                .extend_from_slice(&data[*used.as_ref().unwrap_or(&0)..]);
            used.map(|_| ())
        } else {
            let mut buf = std::mem::take(&mut self.inbuf);
            buf.extend_from_slice(data);
            let used = self.frames(&buf, now, body, t);
            buf.drain(..*used.as_ref().unwrap_or(&0));
            self.inbuf = buf;
            used.map(|_| ())
        };
        if let Err(e) = &result {
            write::goaway(&mut self.out, 0, e.code(), e.reason().as_bytes());
        }
        result
    }

    /// Acts on every whole frame in `data`; returns the bytes used.
    fn frames(
        &mut self,
        data: &[u8],
        now: Instant,
        body: Option<&[u8]>,
        t: &mut Tally,
    ) -> Result<usize, Error> {
        let mut pos = 0;
        while let Some(head) = Head::peek(&data[pos..]) {
            if !self.settled && head.kind != Kind::Settings {
                return Err(Error::connection(ErrorCode::ProtocolError, NOT_H2));
            }
            head.check_len(MIN_MAX_FRAME_SIZE)?;
            let end = pos + HEADER_LEN + head.len as usize;
            if end > data.len() {
                break;
            }
            if let Some(pending) = &self.pending {
                pending.check(&head)?;
            }
            let payload = &data[pos + HEADER_LEN..end];
            match Frame::parse(head, payload) {
                Ok(frame) => self.frame(frame, now, body, t)?,
                Err(Error::Stream {
                    stream,
                    code,
                    reason,
                }) => self.reset(stream, code, reason, now, t),
                Err(e) => return Err(e),
            }
            pos = end;
        }
        Ok(pos)
    }

    fn frame(
        &mut self,
        frame: Frame,
        now: Instant,
        body: Option<&[u8]>,
        t: &mut Tally,
    ) -> Result<(), Error> {
        match frame {
            Frame::Data {
                stream,
                end_stream,
                data,
                flow_len,
            } => self.on_data(stream, end_stream, data, flow_len, now, t)?,
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                fragment,
                ..
            } => {
                t.sum.header_bytes += fragment.len() as u64;
                self.known(stream)?;
                match end_headers {
                    true => self.on_block(stream, end_stream, fragment, now, t)?,
                    false => {
                        let p = Pending::new(stream, end_stream, fragment, MAX_HEADER_BLOCK)?;
                        self.pending = Some(p);
                    }
                }
            }
            Frame::Continuation {
                end_headers,
                fragment,
                ..
            } => {
                t.sum.header_bytes += fragment.len() as u64;
                let pending = self
                    .pending
                    .as_mut()
                    .ok_or_else(|| protocol("CONTINUATION without HEADERS"))?;
                pending.push(fragment)?;
                if end_headers {
                    let p = self.pending.take().expect("checked above");
                    self.on_block(p.stream, p.end_stream, p.block(), now, t)?;
                }
            }
            Frame::Settings { ack: false, params } => self.on_settings(params, body)?,
            Frame::Settings { ack: true, .. } | Frame::Priority { .. } | Frame::Unknown { .. } => {}
            Frame::Ping { ack: false, data } => write::ping(&mut self.out, true, data),
            Frame::Ping { ack: true, .. } => {}
            Frame::GoAway { last_stream, .. } => self.on_goaway(last_stream, now, t),
            Frame::WindowUpdate { stream, increment } => {
                self.on_window_update(stream, increment, now, body, t)?
            }
            Frame::RstStream { stream, code } => {
                t.sum.resets += 1;
                let what = match code {
                    ErrorCode::RefusedStream => "the server refused the stream (REFUSED_STREAM)",
                    _ => "the server reset the stream (RST_STREAM)",
                };
                self.end(stream, End::Failed(Class::Receive, what), now, t);
            }
            Frame::PushPromise { .. } => {
                return Err(protocol("PUSH_PROMISE although push is disabled"))
            }
        }
        Ok(())
    }

    /// A stream the server names must be one we opened (§5.1.1: servers open even streams only by
    /// push, which we disabled).
    fn known(&self, stream: u32) -> Result<(), Error> {
        if stream.is_multiple_of(2) || stream >= self.next_id {
            return Err(protocol("a frame on a stream the client never opened"));
        }
        Ok(())
    }

    fn index(&self, stream: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == stream)
    }

    fn on_settings(&mut self, params: &[u8], body: Option<&[u8]>) -> Result<(), Error> {
        let old = self.peer.initial_window_size;
        self.peer
            .apply(params, Sender::Server)
            .map_err(|r| r.error())?;
        let new = self.peer.initial_window_size;
        for s in &mut self.streams {
            s.send.resize(old, new).map_err(|e| e.on(0))?;
        }
        self.blocks.table_size(self.peer.header_table_size);
        write::settings_ack(&mut self.out);
        self.settled = true;
        self.send_bodies(body);
        Ok(())
    }

    fn on_goaway(&mut self, last_stream: u32, now: Instant, t: &mut Tally) {
        t.sum.goaways += 1;
        self.goaway = Some(self.goaway.map_or(last_stream, |l| l.min(last_stream)));
        let mut i = 0;
        while i < self.streams.len() {
            if self.streams[i].id > last_stream {
                let stream = self.streams.swap_remove(i);
                t.ended.push(Ended {
                    stream,
                    end: End::Retry,
                    at: now,
                });
            } else {
                i += 1;
            }
        }
    }

    fn on_window_update(
        &mut self,
        stream: u32,
        increment: u32,
        now: Instant,
        body: Option<&[u8]>,
        t: &mut Tally,
    ) -> Result<(), Error> {
        if stream == 0 {
            self.send_window.grow(increment).map_err(|e| e.on(0))?;
        } else if let Some(i) = self.index(stream) {
            if self.streams[i].send.grow(increment).is_err() {
                self.reset(
                    stream,
                    ErrorCode::FlowControlError,
                    "stream window above 2^31-1",
                    now,
                    t,
                );
            }
        }
        self.send_bodies(body);
        Ok(())
    }

    fn on_data(
        &mut self,
        stream: u32,
        end_stream: bool,
        data: &[u8],
        flow_len: u32,
        now: Instant,
        t: &mut Tally,
    ) -> Result<(), Error> {
        self.known(stream)?;
        self.recv_window.receive(flow_len).map_err(|e| e.on(0))?;
        t.data_bytes += data.len() as u64;
        if let Some(inc) = self.recv_window.refill(self.targets.0) {
            write::window_update(&mut self.out, 0, inc);
        }
        let Some(i) = self.index(stream) else {
            return Ok(()); // a stream we already ended: counted against the connection only
        };
        let s = &mut self.streams[i];
        if s.status == 0 {
            self.reset(
                stream,
                ErrorCode::ProtocolError,
                "DATA before the response head",
                now,
                t,
            );
            return Ok(());
        }
        if s.recv.receive(flow_len).is_err() {
            self.reset(
                stream,
                ErrorCode::FlowControlError,
                "DATA beyond the stream's window",
                now,
                t,
            );
            return Ok(());
        }
        s.body_len += data.len() as u64;
        if let Some(h) = s.hasher.as_mut() {
            h.update(data);
        }
        s.keep_body(data);
        if end_stream {
            self.end(stream, End::Complete, now, t);
        } else if let Some(inc) = s.recv.refill(self.targets.1) {
            write::window_update(&mut self.out, stream, inc);
        }
        Ok(())
    }

    /// A response head (or trailers) for `stream`, whole.
    fn on_block(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        now: Instant,
        t: &mut Tally,
    ) -> Result<(), Error> {
        let mut head = ResponseHead::default();
        let want_server = t.want_server && t.server.is_none();
        let kept = self.index(stream).filter(|_| t.keep);
        let mut kept = kept.map(|i| &mut self.streams[i]);
        let decoded = self.decoder.decode(block, |name, value| {
            head.field(name, value, want_server);
            if let Some(s) = kept.as_mut() {
                s.keep_field(name, value);
            }
        });
        t.sum.header_decoded_bytes += head.decoded;
        match decoded {
            Err(HpackRefusal::Compression(_)) => {
                return Err(Error::connection(
                    ErrorCode::CompressionError,
                    "undecodable header block",
                ))
            }
            Err(HpackRefusal::ListTooLarge { .. }) => {
                self.reset(
                    stream,
                    ErrorCode::ProtocolError,
                    "response head above SETTINGS_MAX_HEADER_LIST_SIZE",
                    now,
                    t,
                );
                return Ok(());
            }
            Ok(()) => {}
        }
        if head.server.is_some() {
            t.server = head.server.take();
        }
        let Some(i) = self.index(stream) else {
            return Ok(()); // an ended stream's head: decoded only to keep HPACK in step
        };
        let s = &mut self.streams[i];
        if s.first_byte.is_none() {
            s.first_byte = Some(now);
        }
        if s.status != 0 {
            // Trailers: they must end the stream (§8.1).
            match end_stream {
                true => self.end(stream, End::Complete, now, t),
                false => self.reset(
                    stream,
                    ErrorCode::ProtocolError,
                    "trailers without END_STREAM",
                    now,
                    t,
                ),
            }
            return Ok(());
        }
        match s.take_status(&head, end_stream, t) {
            Status::Interim => Ok(()),
            Status::Final => {
                if end_stream {
                    self.end(stream, End::Complete, now, t);
                }
                Ok(())
            }
            Status::Malformed => {
                self.reset(
                    stream,
                    ErrorCode::ProtocolError,
                    "malformed response head (:status)",
                    now,
                    t,
                );
                Ok(())
            }
        }
    }

    /// Ends `stream` as `end` (if it is still ours) and hands it to the worker.
    fn end(&mut self, stream: u32, end: End, now: Instant, t: &mut Tally) {
        if let Some(i) = self.index(stream) {
            let stream = self.streams.swap_remove(i);
            self.span.ended(now, end == End::Complete);
            t.ended.push(Ended {
                stream,
                end,
                at: now,
            });
        }
    }

    /// Our stream error on `stream`: RST_STREAM to the server, the request failed (Exceptions).
    fn reset(
        &mut self,
        stream: u32,
        code: ErrorCode,
        reason: &'static str,
        now: Instant,
        t: &mut Tally,
    ) {
        write::rst_stream(&mut self.out, stream, code);
        self.end(stream, End::Failed(Class::Exceptions, reason), now, t);
    }

    /// The connection is gone or unusable: every stream on it ends as `end`.
    pub(crate) fn end_all(&mut self, end: End, now: Instant, t: &mut Tally) {
        for stream in self.streams.drain(..) {
            t.ended.push(Ended {
                stream,
                end,
                at: now,
            });
        }
    }
}
