//! Reading an HTTP/3 connection (RFC 9114 §6, §7): the records the QUIC connection hands over
//! become request streams' frames and the peer's control and QPACK streams' content. A request
//! stream is HEADERS (decoded by QPACK, checked by `field_list`), DATA (its body, within
//! `--max-body`), optional trailers (decoded, then dropped), and unknown frames skipped; its end
//! makes it ready to answer. The peer's control stream must open with SETTINGS; its encoder stream
//! may only set a table capacity of 0 and its decoder stream only cancel streams (qpack.rs of
//! `webstand-h3` says why). Errors reach as RFC 9114 says: a bad frame sequence, a critical
//! stream closed or a QPACK failure close the connection; a malformed request resets its stream.

use super::state::{State, Stream, Uni, MAX_CONTROL_FRAME, MAX_HEADERS_FRAME};
use crate::quic::records::{self, Kind};
use crate::request::Version;
use std::time::Instant;
use webstand_h3::frame::{self, kind, Frame, Place, Sender};
use webstand_h3::qpack::{self, QpackRefusal};
use webstand_h3::stream::{id, UniKind};
use webstand_h3::{varint, Error, ErrorCode};

impl State {
    /// Takes the records of a read.
    pub(super) fn read(&mut self, new: &[u8], now: Instant) {
        self.progress = now;
        // Records come whole in each read; a part kept from before (never seen yet) goes first.
        let mut held = std::mem::take(&mut self.inbuf);
        let bytes = match held.is_empty() {
            true => new,
            false => {
                held.extend_from_slice(new);
                &held[..]
            }
        };
        let mut at = 0;
        while let Some((record, used)) = records::next(&bytes[at..]) {
            at += used;
            if self.failed {
                break;
            }
            let sid = record.stream;
            let result = match (record.kind, id::is_request(sid)) {
                (Kind::Data, true) => self.request_bytes(sid, record.payload),
                (Kind::Fin, true) => self.request_end(sid),
                (Kind::Reset | Kind::Stop, true) => {
                    // The client gave up on the request (or on its answer).
                    self.streams.remove(&sid);
                    Ok(())
                }
                (Kind::Data, false) if id::client_initiated(sid) => {
                    self.uni_bytes(sid, record.payload)
                }
                (Kind::Fin | Kind::Reset, false) if self.is_critical(sid) => Err(
                    Error::connection(ErrorCode::ClosedCriticalStream, "a critical stream closed"),
                ),
                _ => Ok(()),
            };
            match result {
                Err(Error::Connection { code, .. }) => self.fail(code),
                Err(Error::Stream { code, .. }) => self.refuse_stream(sid, code),
                Ok(()) => {}
            }
        }
        let rest = bytes[at..].to_vec();
        self.inbuf = rest;
    }

    fn is_critical(&self, sid: u64) -> bool {
        [self.peer_control, self.peer_encoder, self.peer_decoder].contains(&Some(sid))
    }

    /// Bytes on a request stream: a new stream is taken unless GOAWAY said otherwise.
    fn request_bytes(&mut self, sid: u64, bytes: &[u8]) -> Result<(), Error> {
        if !self.streams.contains_key(&sid) {
            if sid < self.next_request {
                return Ok(()); // a stream answered or refused already: the rest is dropped
            }
            if self.goaway {
                self.next_request = self.next_request.max(sid + 4);
                return Err(Error::stream(ErrorCode::RequestRejected, "after GOAWAY"));
            }
            self.next_request = sid + 4;
            let s = Stream {
                text: self.turns.text_buffer(),
                ..Stream::default()
            };
            self.streams.insert(sid, s);
        }
        self.request_frames(sid, bytes)
    }

    /// Takes the whole frames of a request stream's new bytes (after what it kept of the last),
    /// keeping a frame that is not whole yet.
    fn request_frames(&mut self, sid: u64, new: &[u8]) -> Result<(), Error> {
        let State {
            streams,
            decoder,
            collect,
            max_body,
            turns,
            wire,
            ..
        } = self;
        let ready = &mut turns.ready;
        let Some(s) = streams.get_mut(&sid) else {
            return Ok(());
        };
        // The kept bytes are taken out so that they can go into the stream's other fields.
        let mut kept = std::mem::take(&mut s.buf);
        if kept.is_empty() {
            let at = frames_of(s, new, decoder, collect, *max_body, sid, ready, wire)?;
            s.buf.extend_from_slice(&new[at..]);
        } else {
            kept.extend_from_slice(new);
            let at = frames_of(s, &kept, decoder, collect, *max_body, sid, ready, wire)?;
            kept.drain(..at);
            s.buf = kept;
        }
        Ok(())
    }

    /// The client ended a request stream: the request is whole (or incomplete, a stream error).
    fn request_end(&mut self, sid: u64) -> Result<(), Error> {
        let Some(s) = self.streams.get_mut(&sid) else {
            return Ok(());
        };
        if !s.buf.is_empty() || s.data_left > 0 || s.skip_left > 0 {
            return Err(Error::connection(
                ErrorCode::FrameError,
                "a truncated frame",
            ));
        }
        if !s.head_seen {
            return Err(Error::stream(ErrorCode::RequestIncomplete, "no HEADERS"));
        }
        let refused = s.over_limit || s.too_large;
        if !refused && s.content_length.is_some_and(|n| n != s.body.len() as u64) {
            return Err(Error::stream(ErrorCode::MessageError, "content-length"));
        }
        s.received = true;
        if !s.dispatched && !refused {
            s.dispatched = true;
            self.turns.ready.push_back(sid);
        }
        Ok(())
    }

    /// Bytes on one of the peer's unidirectional streams.
    fn uni_bytes(&mut self, sid: u64, bytes: &[u8]) -> Result<(), Error> {
        let uni = self.unis.entry(sid).or_insert(Uni {
            kind: None,
            buf: Vec::new(),
            settings_seen: false,
        });
        if matches!(uni.kind, Some(UniKind::Other(_))) {
            return Ok(());
        }
        uni.buf.extend_from_slice(bytes);
        if uni.kind.is_none() {
            let Some((value, n)) = varint::read(&uni.buf) else {
                return Ok(());
            };
            uni.buf.drain(..n);
            let kind = UniKind::from_u64(value);
            uni.kind = Some(kind);
            let slot = match kind {
                UniKind::Control => &mut self.peer_control,
                UniKind::QpackEncoder => &mut self.peer_encoder,
                UniKind::QpackDecoder => &mut self.peer_decoder,
                UniKind::Push => {
                    return Err(Error::connection(
                        ErrorCode::StreamCreationError,
                        "a push stream from a client",
                    ))
                }
                UniKind::Other(_) => {
                    uni.buf = Vec::new();
                    let code = ErrorCode::StreamCreationError.to_u64();
                    records::push_code(&mut self.wire, Kind::Stop, sid, code);
                    return Ok(());
                }
            };
            if slot.replace(sid).is_some() {
                return Err(Error::connection(
                    ErrorCode::StreamCreationError,
                    "a second control or QPACK stream",
                ));
            }
        }
        let Some(uni) = self.unis.get_mut(&sid) else {
            return Ok(());
        };
        let used = match uni.kind {
            Some(UniKind::Control) => control_frames(uni, &mut self.peer, &mut self.peer_goaway)?,
            Some(UniKind::QpackEncoder) => qpack::read_encoder_stream(&uni.buf)?,
            Some(UniKind::QpackDecoder) => qpack::read_decoder_stream(&uni.buf)?,
            _ => uni.buf.len(),
        };
        uni.buf.drain(..used);
        Ok(())
    }
}

/// Takes the whole frames in `buf`, a request stream's bytes; returns the bytes taken.
#[allow(clippy::too_many_arguments)]
fn frames_of(
    s: &mut Stream,
    buf: &[u8],
    decoder: &mut qpack::Decoder,
    collect: &mut crate::field_list::Collect,
    max_body: u64,
    sid: u64,
    ready: &mut std::collections::VecDeque<u64>,
    wire: &mut Vec<u8>,
) -> Result<usize, Error> {
    let mut at = 0;
    loop {
        let rest = buf.len() - at;
        if s.data_left > 0 || s.skip_left > 0 {
            let n = (s.data_left.max(s.skip_left)).min(rest as u64) as usize;
            if n == 0 {
                break;
            }
            if s.data_left > 0 {
                s.data_left -= n as u64;
                take_body(s, &buf[at..at + n], max_body, sid, ready, wire);
            } else {
                s.skip_left -= n as u64;
            }
            at += n;
            continue;
        }
        let Some(head) = frame::read_head(&buf[at..]) else {
            break;
        };
        frame::check(head.kind, Place::Request, Sender::Client)?;
        match head.kind {
            kind::DATA if !s.head_seen || s.trailers_seen => {
                return Err(Error::connection(
                    ErrorCode::FrameUnexpected,
                    "DATA outside a message's body",
                ))
            }
            kind::DATA => {
                at += head.size;
                s.data_left = head.len;
            }
            kind::HEADERS => {
                if head.len > MAX_HEADERS_FRAME {
                    return Err(Error::stream(
                        ErrorCode::ExcessiveLoad,
                        "a field section too large",
                    ));
                }
                let end = at + head.size + head.len as usize;
                if buf.len() < end {
                    break;
                }
                fields(
                    s,
                    &buf[at + head.size..end],
                    decoder,
                    collect,
                    max_body,
                    sid,
                    ready,
                    wire,
                )?;
                at = end;
            }
            _ => {
                at += head.size;
                s.skip_left = head.len;
            }
        }
    }
    Ok(at)
}

/// A request stream's HEADERS: the request's head, or its trailers (checked, then dropped).
#[allow(clippy::too_many_arguments)]
fn fields(
    s: &mut Stream,
    section: &[u8],
    decoder: &mut qpack::Decoder,
    collect: &mut crate::field_list::Collect,
    max_body: u64,
    sid: u64,
    ready: &mut std::collections::VecDeque<u64>,
    wire: &mut Vec<u8>,
) -> Result<(), Error> {
    if s.head_seen {
        s.trailers_seen = true;
        return match decoder.decode(section, |_, _| {}) {
            Err(refusal @ QpackRefusal::Decompression(_)) => Err(refusal.error()),
            _ => Ok(()),
        };
    }
    s.head_seen = true;
    collect.clear();
    let decoded = decoder.decode(section, |name, value| {
        if collect.malformed.is_none() {
            if let Err(why) = collect.field(name, value) {
                collect.malformed = Some(why);
            }
        }
    });
    match decoded {
        Err(QpackRefusal::SectionTooLarge { .. }) => {
            s.too_large = true;
            refuse_early(s, sid, ready, wire);
            return Ok(());
        }
        Err(refusal) => return Err(refusal.error()),
        Ok(()) => {}
    }
    if collect.malformed.is_some() {
        return Err(Error::stream(
            ErrorCode::MessageError,
            "a malformed request",
        ));
    }
    let meta = collect
        .finish(&mut s.text, Version::Http3)
        .map_err(|_| Error::stream(ErrorCode::MessageError, "a malformed request"))?;
    s.head_only = meta.head_only;
    s.content_length = meta.content_length;
    if meta.content_length.is_some_and(|n| n > max_body) {
        s.over_limit = true;
        refuse_early(s, sid, ready, wire);
    }
    Ok(())
}

/// Body bytes of a request stream, within `--max-body` (past it: answered 413 at once).
fn take_body(
    s: &mut Stream,
    bytes: &[u8],
    max_body: u64,
    sid: u64,
    ready: &mut std::collections::VecDeque<u64>,
    wire: &mut Vec<u8>,
) {
    if s.over_limit || s.too_large {
        return;
    }
    if (s.body.len() + bytes.len()) as u64 > max_body {
        s.over_limit = true;
        s.body = Vec::new();
        refuse_early(s, sid, ready, wire);
        return;
    }
    s.body.extend_from_slice(bytes);
}

/// A request answered before its body is in (413, 431): queued now, and the client asked to stop
/// sending the rest with H3_NO_ERROR (RFC 9114 §4.1.1).
fn refuse_early(
    s: &mut Stream,
    sid: u64,
    ready: &mut std::collections::VecDeque<u64>,
    wire: &mut Vec<u8>,
) {
    if !s.dispatched {
        s.dispatched = true;
        ready.push_back(sid);
    }
    if !s.received {
        records::push_code(wire, Kind::Stop, sid, ErrorCode::NoError.to_u64());
    }
}

/// The frames of the peer's control stream: SETTINGS first and once, then GOAWAY (the client is
/// done: `goaway`), MAX_PUSH_ID and CANCEL_PUSH (which ask nothing of a server that never pushes)
/// and unknown frames. Returns the bytes taken.
fn control_frames(
    uni: &mut Uni,
    peer: &mut Option<webstand_h3::Settings>,
    goaway: &mut bool,
) -> Result<usize, Error> {
    let mut at = 0;
    while let Some(head) = frame::read_head(&uni.buf[at..]) {
        frame::check(head.kind, Place::Control, Sender::Client)?;
        if head.len > MAX_CONTROL_FRAME {
            return Err(Error::connection(
                ErrorCode::ExcessiveLoad,
                "a control frame too large",
            ));
        }
        let end = at + head.size + head.len as usize;
        if uni.buf.len() < end {
            break;
        }
        let parsed = frame::parse(&head, &uni.buf[at + head.size..end])?;
        match parsed {
            Frame::Settings(s) if !uni.settings_seen => {
                uni.settings_seen = true;
                *peer = Some(s);
            }
            Frame::Settings(_) => {
                return Err(Error::connection(
                    ErrorCode::FrameUnexpected,
                    "a second SETTINGS",
                ))
            }
            _ if !uni.settings_seen => {
                return Err(Error::connection(
                    ErrorCode::MissingSettings,
                    "the control stream did not open with SETTINGS",
                ))
            }
            Frame::GoAway(_) => *goaway = true,
            _ => {}
        }
        at = end;
    }
    Ok(at)
}
