//! Reading an HTTP/2 connection's input: the client preface, then whole frames, each checked by
//! `webstand-h2` and acted on here — streams opened by HEADERS (and CONTINUATION), request bodies
//! by DATA within our windows and `--max-body`, SETTINGS and PING answered, windows grown by WINDOW_UPDATE,
//! streams closed by RST_STREAM — with the limits of defence.rs. A connection error writes GOAWAY
//! and stops reading; a stream error writes RST_STREAM and the connection goes on.

use super::defence::{BLOCK_MAX, CONTINUATIONS_MAX, MAX_STREAMS};
use super::request;
use super::state::{State, Stream};
use crate::service::STREAM_OVER;
use std::collections::VecDeque;
use std::time::Instant;
use webstand_h2::frame::{write, Head, HEADER_LEN};
use webstand_h2::settings::{Sender, DEFAULT_WINDOW, MIN_MAX_FRAME_SIZE};
use webstand_h2::{block, Error, ErrorCode, Frame, Window, PREFACE};

/// Our SETTINGS_MAX_FRAME_SIZE (the initial one: we do not announce another).
const MAX_FRAME: u32 = MIN_MAX_FRAME_SIZE;
/// Streams we reset whose late frames are still recognised (a few round trips' worth).
const RESET_REMEMBERED: usize = 32;

impl State {
    /// Parses every whole frame in the input; a partial one waits for more bytes.
    pub fn read(&mut self, new: &[u8], now: Instant) {
        if self.goaway && self.streams.is_empty() {
            return;
        }
        self.inbuf.extend_from_slice(new);
        let mut pos = 0;
        if !self.preface_seen {
            let n = self.inbuf.len().min(PREFACE.len());
            if self.inbuf[..n] != PREFACE[..n] {
                return self.fail(ErrorCode::ProtocolError, "no client preface");
            }
            if n < PREFACE.len() {
                return;
            }
            self.preface_seen = true;
            pos = PREFACE.len();
        }
        let inbuf = std::mem::take(&mut self.inbuf);
        while let Some(head) = Head::peek(&inbuf[pos..]) {
            if let Err(e) = head.check_len(MAX_FRAME) {
                return self.error(e);
            }
            let end = pos + HEADER_LEN + head.len as usize;
            if end > inbuf.len() {
                break;
            }
            let result = self.frame(head, &inbuf[pos + HEADER_LEN..end], now);
            pos = end;
            if let Err(e) = result {
                self.error(e);
                if self.goaway && matches!(e, Error::Connection { .. }) {
                    return;
                }
            }
        }
        self.inbuf = inbuf;
        self.inbuf.drain(..pos);
    }

    fn error(&mut self, e: Error) {
        match e {
            Error::Connection { code, reason } => self.fail(code, reason),
            Error::Stream { stream, code, .. } => self.reset(stream, code),
        }
    }

    /// A stream error: RST_STREAM, and the stream is forgotten.
    fn reset(&mut self, id: u32, code: ErrorCode) {
        write::rst_stream(&mut self.wire, id, code);
        self.streams.remove(&id);
        self.reset_sent(id);
    }

    /// We sent RST_STREAM on `id`: what the peer sent before it saw that is ignored (§5.4.2),
    /// for the last `RESET_REMEMBERED` such streams.
    pub(super) fn reset_sent(&mut self, id: u32) {
        if self.reset_lately.len() == RESET_REMEMBERED {
            self.reset_lately.pop_front();
        }
        self.reset_lately.push_back(id);
    }

    fn frame(&mut self, head: Head, payload: &[u8], now: Instant) -> Result<(), Error> {
        if let Some((pending, _)) = &self.pending {
            pending.check(&head)?;
        }
        let calm = |why| Error::connection(ErrorCode::EnhanceYourCalm, why);
        match Frame::parse(head, payload)? {
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                fragment,
                ..
            } => self.headers(stream, end_stream, end_headers, fragment),
            Frame::Continuation {
                end_headers,
                fragment,
                ..
            } => self.continuation(end_headers, fragment),
            Frame::Data {
                stream,
                end_stream,
                data,
                flow_len,
            } => {
                if data.is_empty() && !end_stream && !self.counters.control_frame(now) {
                    return Err(calm("empty DATA flood"));
                }
                self.data(stream, end_stream, data, flow_len)
            }
            Frame::RstStream { stream, .. } => {
                if stream > self.last_stream {
                    return Err(Error::connection(
                        ErrorCode::ProtocolError,
                        "RST_STREAM on an idle stream",
                    ));
                }
                let open = self.streams.remove(&stream).is_some();
                self.turns.forget(stream);
                if open && !self.counters.reset(self.answered) {
                    return Err(calm("rapid reset"));
                }
                self.control(now)
            }
            Frame::Settings { ack, params } => {
                self.control(now)?;
                if !ack {
                    self.settings(params)?;
                }
                Ok(())
            }
            Frame::Ping { ack, data } => {
                self.control(now)?;
                if !ack {
                    write::ping(&mut self.wire, true, data);
                }
                Ok(())
            }
            Frame::WindowUpdate { stream, increment } => {
                self.control(now)?;
                self.progress = now;
                self.window_update(stream, increment)
            }
            Frame::Priority { .. } => self.control(now),
            Frame::GoAway { .. } => {
                self.goaway = true;
                Ok(())
            }
            Frame::PushPromise { .. } => Err(Error::connection(
                ErrorCode::ProtocolError,
                "PUSH_PROMISE from a client",
            )),
            Frame::Unknown { .. } => Ok(()),
        }
    }

    fn control(&mut self, now: Instant) -> Result<(), Error> {
        if self.counters.control_frame(now) {
            return Ok(());
        }
        Err(Error::connection(
            ErrorCode::EnhanceYourCalm,
            "control frame flood",
        ))
    }

    fn headers(
        &mut self,
        id: u32,
        end_stream: bool,
        end_headers: bool,
        fragment: &[u8],
    ) -> Result<(), Error> {
        if id.is_multiple_of(2) {
            return Err(Error::connection(
                ErrorCode::ProtocolError,
                "HEADERS on an even stream",
            ));
        }
        if id <= self.last_stream {
            // Trailers of a stream still receiving its body (or of one we reset, whose block
            // must still be decoded for HPACK's sake); anything else reuses a closed id.
            let receiving = self.streams.get(&id).is_some_and(|s| !s.received);
            if !(receiving || self.reset_lately.contains(&id)) || !end_stream {
                return Err(Error::connection(
                    ErrorCode::StreamClosed,
                    "HEADERS on a closed stream",
                ));
            }
        }
        let buffer = std::mem::take(&mut self.block_in);
        let pending = block::Pending::new_in(buffer, id, end_stream, fragment, BLOCK_MAX)?;
        self.pending = Some((pending, 0));
        if end_headers {
            return self.block_done();
        }
        Ok(())
    }

    fn continuation(&mut self, end_headers: bool, fragment: &[u8]) -> Result<(), Error> {
        let Some((pending, count)) = self.pending.as_mut() else {
            return Err(Error::connection(
                ErrorCode::ProtocolError,
                "CONTINUATION without HEADERS",
            ));
        };
        *count += 1;
        if *count > CONTINUATIONS_MAX {
            return Err(Error::connection(
                ErrorCode::EnhanceYourCalm,
                "CONTINUATION flood",
            ));
        }
        pending.push(fragment)?;
        if end_headers {
            return self.block_done();
        }
        Ok(())
    }

    /// A whole header block: a new stream's request, or a stream's trailers (decoded, ignored).
    fn block_done(&mut self) -> Result<(), Error> {
        let Some((pending, _)) = self.pending.take() else {
            return Ok(());
        };
        let (id, end_stream) = (pending.stream, pending.end_stream);
        let mut text = self.turns.text_buffer();
        let decoded = request::decode(
            &mut self.decoder,
            &mut self.collect,
            pending.block(),
            &mut text,
        )
        .map_err(|refusal| refusal.error(id));
        self.block_in = pending.into_buffer();
        if id <= self.last_stream {
            // Trailers: decoded for HPACK's context; their fields are not used.
            self.turns.keep_text_buffer(text);
            let _ = decoded?;
            let Some(s) = self.streams.get_mut(&id) else {
                return Ok(());
            };
            s.received = true;
            return match s.over_limit {
                false => self.request_complete(id),
                true => Ok(()),
            };
        }
        self.last_stream = id;
        let meta = match decoded? {
            Ok(meta) => meta,
            Err(_) => {
                return Err(Error::stream(
                    id,
                    ErrorCode::ProtocolError,
                    "malformed request",
                ))
            }
        };
        if self.goaway {
            return Ok(());
        }
        if self.streams.len() as u32 >= MAX_STREAMS {
            return Err(Error::stream(
                id,
                ErrorCode::RefusedStream,
                "too many streams",
            ));
        }
        // A declared length past the limit is refused before any of the body comes (HTTP/1's 413).
        let over_limit = !end_stream && meta.content_length > Some(self.max_body);
        // A large declared body may be streamed to FastCGI: the head is all its job needs to start
        // (answer_ready decides, and collects the body instead when the request goes elsewhere).
        let streaming = !end_stream && !over_limit && meta.content_length > Some(STREAM_OVER);
        self.streams.insert(
            id,
            Stream {
                text,
                body: Vec::new(),
                streaming,
                taken: 0,
                over_limit,
                throttle: None,
                received: end_stream,
                content_length: meta.content_length,
                head_only: meta.head_only,
                recv_window: Window::new(DEFAULT_WINDOW),
                send_window: Window::new(self.peer.initial_window_size),
                remaining: None,
                finished: false,
                pieces: VecDeque::new(),
            },
        );
        if over_limit || streaming {
            self.turns.ready.push_back(id);
        } else if end_stream {
            self.request_complete(id)?;
        }
        Ok(())
    }

    /// The request's END_STREAM arrived: its body must match content-length (§8.1.1). A streamed
    /// body's stream is already answered, handed to its job, or in line for one.
    fn request_complete(&mut self, id: u32) -> Result<(), Error> {
        let Some(s) = self.streams.get(&id) else {
            return Ok(());
        };
        if s.content_length
            .is_some_and(|n| n != s.taken + s.body.len() as u64)
        {
            return Err(Error::stream(
                id,
                ErrorCode::ProtocolError,
                "body length differs from content-length",
            ));
        }
        if !s.streaming {
            self.turns.ready.push_back(id);
        }
        Ok(())
    }

    /// Request body bytes: collected within content-length and `--max-body`; the stream's window
    /// is granted again as they are taken (a streamed body's once its job takes them: mod.rs's
    /// `feed_bodies`). Past the limit the stream is answered 413 (in order with the others) and the
    /// rest of its body only counted.
    fn data(&mut self, id: u32, end_stream: bool, data: &[u8], flow_len: u32) -> Result<(), Error> {
        self.recv_window.receive(flow_len).map_err(|e| e.on(0))?;
        if let Some(inc) = self.recv_window.refill(DEFAULT_WINDOW) {
            write::window_update(&mut self.wire, 0, inc);
        }
        if id > self.last_stream {
            return Err(Error::connection(
                ErrorCode::ProtocolError,
                "DATA on an idle stream",
            ));
        }
        if self.reset_lately.contains(&id) {
            return Ok(()); // sent before the peer saw our RST_STREAM
        }
        let max_body = self.max_body;
        let Some(s) = self.streams.get_mut(&id).filter(|s| !s.received) else {
            return Err(Error::stream(
                id,
                ErrorCode::StreamClosed,
                "DATA on a closed stream",
            ));
        };
        s.recv_window.receive(flow_len).map_err(|e| e.on(id))?;
        s.received = end_stream;
        if s.over_limit {
            return Ok(());
        }
        let total = s.taken + s.body.len() as u64 + data.len() as u64;
        if s.content_length.is_some_and(|n| total > n) {
            return Err(Error::stream(
                id,
                ErrorCode::ProtocolError,
                "body longer than content-length",
            ));
        }
        if total > max_body {
            (s.over_limit, s.body) = (true, Vec::new());
            self.turns.ready.push_back(id);
            return Ok(());
        }
        s.body.extend_from_slice(data);
        if end_stream {
            return self.request_complete(id);
        }
        if !s.streaming {
            self.grant(id);
        }
        Ok(())
    }

    /// Gives stream `id` back the window its taken body used (WINDOW_UPDATE once it is half
    /// spent). A collected body is taken as it arrives; a streamed one only as its job takes it,
    /// so the window is less what `body` still holds: the client never has more than one window
    /// of it held here or on its way.
    pub(super) fn grant(&mut self, id: u32) {
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        let held = match s.streaming {
            true => s.body.len().min(DEFAULT_WINDOW as usize) as u32,
            false => 0,
        };
        if let Some(inc) = s.recv_window.refill(DEFAULT_WINDOW - held) {
            write::window_update(&mut self.wire, id, inc);
        }
    }

    fn settings(&mut self, params: &[u8]) -> Result<(), Error> {
        let old = self.peer.initial_window_size;
        self.peer
            .apply(params, Sender::Client)
            .map_err(|r| r.error())?;
        let new = self.peer.initial_window_size;
        if new != old {
            for (&id, s) in self.streams.iter_mut() {
                s.send_window.resize(old, new).map_err(|e| e.on(id))?;
            }
        }
        self.encoder
            .set_peer_table_size(self.peer.header_table_size);
        write::settings_ack(&mut self.wire);
        Ok(())
    }

    fn window_update(&mut self, id: u32, increment: u32) -> Result<(), Error> {
        if id == 0 {
            return self.send_window.grow(increment).map_err(|e| e.on(0));
        }
        match self.streams.get_mut(&id) {
            Some(s) => s.send_window.grow(increment).map_err(|e| e.on(id)),
            None if id > self.last_stream => Err(Error::connection(
                ErrorCode::ProtocolError,
                "WINDOW_UPDATE on an idle stream",
            )),
            None => Ok(()),
        }
    }
}
