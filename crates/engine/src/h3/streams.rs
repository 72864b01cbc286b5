//! One HTTP/3 connection's request streams over its QUIC connection (RFC 9114 §4.1): each request
//! opened as a bidirectional stream (its prepared HEADERS frame, the body as one DATA frame, then
//! FIN; what flow control does not take yet is kept and sent as the stream becomes writable), each
//! response read as its frames come (`response.rs`) and decoded with QPACK, and each stream that
//! ended handed out as an [`Ended`]: whole at its FIN after a final status, failed when the server
//! reset it or broke the protocol on it (the stream is then stopped and reset with the code).
//! The connection's slot (`h3/conn.rs`) says when to read and when to open.

use super::prepared::MAX_FIELD_SECTION;
use super::response::{Frames, Part};
use crate::record::Class;
use crate::script_mux::Encoded;
use crate::stream::{ClientSpan, End, Ended, ResponseHead, Status, Stream, Tally};
use quinn_proto::{Connection, Dir, ReadError, StreamId, VarInt};
use sha2::{Digest, Sha256};
use std::time::Instant;
use webstand_h2::Window;
use webstand_h3::frame::write;
use webstand_h3::qpack::Decoder;
use webstand_h3::{Error, ErrorCode};

/// One request in flight.
pub(crate) struct Request {
    pub id: StreamId,
    pub s: Stream,
    frames: Frames,
    /// Request bytes QUIC has not taken yet (its flow control), then the FIN.
    unsent: Vec<u8>,
    fin: bool,
    /// The response's trailers came: no frame but an unknown one may follow (RFC 9114 §4.1).
    trailers: bool,
}

pub(crate) struct Streams {
    pub list: Vec<Request>,
    decoder: Decoder,
    /// Streams opened on the current connection.
    opened: u64,
    /// The slot's span across its connections (h2load's per-client req/s).
    pub span: ClientSpan,
}

/// What a read of a request stream brought.
pub(crate) enum Got<'a> {
    Bytes(&'a [u8]),
    /// The stream's FIN.
    Fin,
    /// The server reset the stream with this code.
    Reset(VarInt),
}

/// What a request carries besides its prepared HEADERS frame.
pub(crate) struct Ask<'a> {
    pub req: usize,
    pub start: Instant,
    pub frame: &'a [u8],
    pub body: Option<&'a [u8]>,
    pub check: bool,
    /// The connection's set-up time, carried by its first request.
    pub connect_us: u64,
    /// The stream keeps its response for a script's `response()`.
    pub keep: bool,
    /// A script's request, kept to send again should the server not take it.
    pub own: Option<Encoded>,
}

impl Streams {
    pub(crate) fn new() -> Streams {
        Streams {
            list: Vec::new(),
            decoder: Decoder::new(MAX_FIELD_SECTION),
            opened: 0,
            span: ClientSpan::default(),
        }
    }

    /// A new connection of the slot at `now`.
    pub(crate) fn begin(&mut self, now: Instant) {
        self.opened = 0;
        self.span = self.span.started(now);
    }

    /// Streams opened on the current connection.
    pub(crate) fn opened(&self) -> u64 {
        self.opened
    }

    /// The server rejected 0-RTT: QUIC forgot the streams it carried (their ids start again), so
    /// every request on them is sent again, as the first of the connection's streams.
    pub(crate) fn zero_rtt_rejected(&mut self, now: Instant, t: &mut Tally) {
        self.opened = 0;
        self.end_all(End::Retry, now, t);
    }

    /// Opens a stream for `ask` if QUIC lets one more be opened: the bytes written, or the ask
    /// back when none may be opened now.
    pub(crate) fn open<'a>(&mut self, conn: &mut Connection, ask: Ask<'a>) -> Result<u64, Ask<'a>> {
        let Some(id) = conn.streams().open(Dir::Bi) else {
            return Err(ask);
        };
        let mut r = self.request(id, &ask);
        r.s.own = ask.own;
        let taken = conn.send_stream(id).write(ask.frame).unwrap_or(0);
        r.unsent.extend_from_slice(&ask.frame[taken..]);
        if let Some(body) = ask.body {
            write::data_head(&mut r.unsent, body.len());
            r.unsent.extend_from_slice(body);
        }
        let sent = taken as u64 + send_rest(conn, &mut r);
        self.list.push(r);
        Ok(sent)
    }

    /// The request on QUIC stream `id` for `ask`, nothing of it sent yet.
    pub(crate) fn request(&mut self, id: StreamId, ask: &Ask) -> Request {
        let r = Request {
            id,
            s: Stream {
                id: 0,
                req: ask.req,
                start: ask.start,
                sent_at: ask.start,
                first_byte: None,
                status: 0,
                body_len: 0,
                hasher: ask.check.then(Sha256::new),
                connect_us: if self.opened == 0 { ask.connect_us } else { 0 },
                recv: Window::new(0),
                send: Window::new(0),
                body_sent: None,
                own: None,
                kept: ask.keep.then(Box::default),
            },
            frames: Frames::default(),
            unsent: Vec::new(),
            fin: false,
            trailers: false,
        };
        self.opened += 1;
        r
    }

    /// Stream `id` may take more of its request: the bytes it took.
    pub(crate) fn writable(&mut self, conn: &mut Connection, id: StreamId) -> u64 {
        match self.list.iter_mut().find(|r| r.id == id) {
            Some(r) => send_rest(conn, r),
            None => 0,
        }
    }

    /// Reads what stream `id` has at `now`; returns the bytes read. An error is the connection's
    /// (the slot closes it with its code); a stream's own error ends that stream.
    pub(crate) fn read(
        &mut self,
        conn: &mut Connection,
        id: StreamId,
        now: Instant,
        t: &mut Tally,
    ) -> Result<u64, Error> {
        let Some(i) = self.list.iter().position(|r| r.id == id) else {
            return Ok(0); // a stream already ended (a read after its reset): nothing to count
        };
        let mut stream = conn.recv_stream(id);
        let Ok(mut chunks) = stream.read(true) else {
            return Ok(0);
        };
        let (mut read, mut step) = (0u64, Ok(None));
        loop {
            step = match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    read += chunk.bytes.len() as u64;
                    self.got(i, Got::Bytes(&chunk.bytes), now, t)
                }
                Ok(None) => self.got(i, Got::Fin, now, t),
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(code)) => self.got(i, Got::Reset(code), now, t),
            };
            if !matches!(step, Ok(None)) {
                break;
            }
        }
        let _ = chunks.finalize();
        if let Some(code) = self.conclude(i, step, now, t)? {
            let _ = conn.recv_stream(id).stop(code);
            let _ = conn.send_stream(id).reset(code);
        }
        Ok(read)
    }

    /// What request `i`'s stream brought at `now`: Ok(Some(end)) when it ended, an error when
    /// the server broke the protocol on it (the stream's or the connection's).
    pub(crate) fn got(
        &mut self,
        i: usize,
        got: Got,
        now: Instant,
        t: &mut Tally,
    ) -> Result<Option<End>, Error> {
        let r = &mut self.list[i];
        match got {
            Got::Bytes(bytes) => {
                if r.s.first_byte.is_none() {
                    r.s.first_byte = Some(now);
                }
                feed(r, bytes, &mut self.decoder, t).map(|()| None)
            }
            Got::Fin => Ok(Some(match r.frames.whole() && r.s.status != 0 {
                true => End::Complete,
                false => End::Failed(Class::Receive, "the response stream ended early"),
            })),
            Got::Reset(code) => {
                t.sum.resets += 1;
                Ok(Some(End::Failed(Class::Receive, reset_what(code))))
            }
        }
    }

    /// Ends request `i` as [`Streams::got`] said: a stream error ends it failed and gives the
    /// code to stop and reset its stream with; a connection error is passed on.
    pub(crate) fn conclude(
        &mut self,
        i: usize,
        step: Result<Option<End>, Error>,
        now: Instant,
        t: &mut Tally,
    ) -> Result<Option<VarInt>, Error> {
        let (end, code) = match step {
            Ok(end) => (end, None),
            Err(Error::Stream { code, reason }) => {
                let code = VarInt::from_u64(code.to_u64()).unwrap_or(VarInt::MAX);
                (Some(End::Failed(Class::Exceptions, reason)), Some(code))
            }
            Err(e) => return Err(e),
        };
        if let Some(end) = end {
            self.end(i, end, now, t);
        }
        Ok(code)
    }

    /// Ends request `i` as `end` and hands it to the slot.
    fn end(&mut self, i: usize, end: End, now: Instant, t: &mut Tally) {
        let r = self.list.swap_remove(i);
        self.span.ended(now, end == End::Complete);
        t.ended.push(Ended {
            stream: r.s,
            end,
            at: now,
        });
    }

    /// Ends every request as `end` (the connection is gone).
    pub(crate) fn end_all(&mut self, end: End, now: Instant, t: &mut Tally) {
        while !self.list.is_empty() {
            self.end(self.list.len() - 1, end, now, t);
        }
    }

    /// The server's GOAWAY names `first`: requests on streams from it on were not processed and
    /// are sent again.
    pub(crate) fn goaway(&mut self, first: u64, now: Instant, t: &mut Tally) {
        let mut i = 0;
        while i < self.list.len() {
            match u64::from(self.list[i].id) >= first {
                true => self.end(i, End::Retry, now, t),
                false => i += 1,
            }
        }
    }
}

/// Hands QUIC what of `r`'s request it takes, then the FIN once all is taken; the bytes taken.
fn send_rest(conn: &mut Connection, r: &mut Request) -> u64 {
    let mut taken = 0;
    if !r.unsent.is_empty() {
        // Blocked waits for the stream's Writable event; Stopped means the server is done with
        // the request, and its reset of the response side ends the stream.
        if let Ok(n) = conn.send_stream(r.id).write(&r.unsent) {
            r.unsent.drain(..n);
            taken = n as u64;
        }
    }
    if r.unsent.is_empty() && !r.fin {
        let _ = conn.send_stream(r.id).finish();
        r.fin = true;
    }
    taken
}

/// A chunk of `r`'s response: the head decoded, body bytes counted and hashed. A frame out of the
/// response's order (DATA before the head; DATA or HEADERS after the trailers) breaks the
/// connection: RFC 9114 §4.1 makes an invalid sequence a connection error, H3_FRAME_UNEXPECTED.
fn feed(r: &mut Request, bytes: &[u8], decoder: &mut Decoder, t: &mut Tally) -> Result<(), Error> {
    let Request {
        s,
        frames,
        trailers,
        ..
    } = r;
    frames.feed(bytes, MAX_FIELD_SECTION, &mut |part| match part {
        Part::Headers(_) if *trailers => Err(Error::connection(
            ErrorCode::FrameUnexpected,
            "HEADERS after the response's trailers",
        )),
        Part::Headers(section) => {
            let after_head = s.status != 0;
            head(s, section, decoder, t)?;
            *trailers = after_head;
            Ok(())
        }
        Part::Data(data) => {
            if s.status == 0 {
                return Err(Error::connection(
                    ErrorCode::FrameUnexpected,
                    "DATA before the response head",
                ));
            }
            if *trailers {
                return Err(Error::connection(
                    ErrorCode::FrameUnexpected,
                    "DATA after the response's trailers",
                ));
            }
            s.body_len += data.len() as u64;
            t.data_bytes += data.len() as u64;
            if let Some(h) = s.hasher.as_mut() {
                h.update(data);
            }
            s.keep_body(data);
            Ok(())
        }
    })
}

/// A field section of `s`'s response: an interim head (1xx) is passed over, the final one sets
/// the status, one after it is trailers (the stream's FIN ends the response).
fn head(s: &mut Stream, section: &[u8], decoder: &mut Decoder, t: &mut Tally) -> Result<(), Error> {
    t.sum.header_bytes += section.len() as u64;
    let mut head = ResponseHead::default();
    let want_server = t.want_server && t.server.is_none();
    let decoded = decoder.decode(section, |n, v| {
        head.field(n, v, want_server);
        s.keep_field(n, v);
    });
    t.sum.header_decoded_bytes += head.decoded;
    decoded.map_err(|e| e.error())?;
    if head.server.is_some() {
        t.server = head.server.take();
    }
    if s.status != 0 {
        return Ok(());
    }
    match s.take_status(&head, false, t) {
        Status::Interim | Status::Final => Ok(()),
        Status::Malformed => Err(Error::stream(
            ErrorCode::MessageError,
            "malformed response head (:status)",
        )),
    }
}

/// The line for a stream the server reset with `code`.
fn reset_what(code: VarInt) -> &'static str {
    match ErrorCode::from_u64(code.into_inner()) {
        ErrorCode::RequestRejected => "the server rejected the request (H3_REQUEST_REJECTED)",
        ErrorCode::RequestCancelled => "the server cancelled the request (H3_REQUEST_CANCELLED)",
        _ => "the server reset the stream",
    }
}
