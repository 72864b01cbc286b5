//! The way out of an HTTP/2 connection. An answer reaches the `Writer` of its stream (the `Sink`
//! a request's answer goes to, now or later from a job), which writes *staged records* into the
//! round's output: a head (status, length, field lines), body bytes, a file range (an index into
//! the connection's staged files: sendfile cannot frame HTTP/2, so file bodies are read in
//! pieces), the end of a streamed body, or its abort (a FastCGI answer cut short: RST_STREAM
//! INTERNAL_ERROR, the other streams go on). Staging lets answers be written while the
//! connection's state is busy reading (the handlers answer from inside `answer_ready`). Before the
//! connection writes, `State::frame_staged` turns them into frames: the head into HEADERS through the
//! connection's HPACK encoder (field names lower-cased, connection-specific fields dropped), the
//! body into the stream's queue, which `pump` sends as DATA frames within both flow-control
//! windows and the peer's SETTINGS_MAX_FRAME_SIZE, all streams' frames gathered into one buffer
//! (one write, and over TLS as few records as that write makes: h2o's batching).

use super::state::{FileRange, Piece, State, Stream};
use crate::answer_fields::{lower_names, pairs};
use crate::response::{digits, Head as Answer, Length, Prepared, Sink};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use webstand_h2::frame::write;

const HEAD: u8 = 1;
const DATA: u8 = 2;
const FILE: u8 = 3;
const END: u8 = 4;
const ABORT: u8 = 5;
/// Tag, stream id, payload length.
const RECORD: usize = 9;
/// Frames gathered per pump before the connection writes them.
const PUMP_BUDGET: usize = 256 << 10;
/// HTTP/2's slot among a `Prepared` head's forms.
const FORM: usize = 1;

fn record(out: &mut Vec<u8>, tag: u8, stream: u32, len: usize) {
    out.push(tag);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(&(len as u32).to_be_bytes());
}

/// A head's payload before its date line: status, length kind and value, field lines.
fn prepare(head: &Answer) -> Box<[u8]> {
    let mut out = Vec::with_capacity(11 + head.fields.len());
    prepare_into(head, &mut out);
    out.into_boxed_slice()
}

/// Appends `prepare`'s bytes to `out`.
fn prepare_into(head: &Answer, out: &mut Vec<u8>) {
    out.extend_from_slice(&head.status.to_be_bytes());
    let (kind, n) = match head.length {
        Length::None => (0u8, 0),
        Length::Known(n) => (1, n),
        Length::Streamed => (2, 0),
    };
    out.push(kind);
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(head.fields);
}

/// The sink of one stream's answer.
pub struct Writer<'a> {
    pub stream: u32,
    pub date_line: &'a [u8],
    pub bytes: &'a mut Vec<u8>,
    pub staged: &'a mut Vec<FileRange>,
}

impl Sink for Writer<'_> {
    fn head(&mut self, head: &Answer) {
        let out = &mut *self.bytes;
        let at = out.len();
        record(out, HEAD, self.stream, 0);
        prepare_into(head, out);
        out.extend_from_slice(self.date_line);
        let len = (out.len() - at - RECORD) as u32;
        out[at + 5..at + RECORD].copy_from_slice(&len.to_be_bytes());
    }

    fn prepared(&mut self, head: &Prepared) {
        let prepared = head.form(FORM, prepare);
        let len = prepared.len() + self.date_line.len();
        record(self.bytes, HEAD, self.stream, len);
        self.bytes.extend_from_slice(prepared);
        self.bytes.extend_from_slice(self.date_line);
    }

    fn body(&mut self, data: &[u8]) {
        if !data.is_empty() {
            record(self.bytes, DATA, self.stream, data.len());
            self.bytes.extend_from_slice(data);
        }
    }

    fn file(&mut self, file: &Arc<File>, start: u64, end: u64) {
        record(self.bytes, FILE, self.stream, 4);
        let index = self.staged.len() as u32;
        self.bytes.extend_from_slice(&index.to_be_bytes());
        self.staged.push((file.clone(), start, end));
    }

    fn stream(&mut self, data: &[u8]) {
        self.body(data);
    }

    fn end_stream(&mut self) {
        record(self.bytes, END, self.stream, 0);
    }

    /// The stream is reset; the connection's other streams go on.
    fn abort(&mut self) -> bool {
        record(self.bytes, ABORT, self.stream, 0);
        true
    }

    fn gathered(&self) -> usize {
        self.bytes.len()
    }
}

impl State {
    /// Turns staged records in `out` into frames (queued bodies pumped as windows allow) and
    /// leaves in `out` the bytes to write.
    pub fn frame_staged(&mut self, out: &mut Vec<u8>) {
        let mut files = std::mem::take(&mut self.staged);
        let mut pos = 0;
        while pos + RECORD <= out.len() {
            let tag = out[pos];
            let stream = u32::from_be_bytes(out[pos + 1..pos + 5].try_into().unwrap_or_default());
            let len = u32::from_be_bytes(out[pos + 5..pos + 9].try_into().unwrap_or_default());
            let payload = &out[pos + RECORD..pos + RECORD + len as usize];
            self.absorb(tag, stream, payload, &files);
            pos += RECORD + len as usize;
        }
        files.clear();
        self.staged = files;
        out.clear();
        self.pump();
        out.append(&mut self.wire);
    }

    fn absorb(&mut self, tag: u8, id: u32, payload: &[u8], files: &[FileRange]) {
        if tag == HEAD {
            return self.send_head(id, payload);
        }
        if tag == ABORT {
            if self.streams.remove(&id).is_some() {
                write::rst_stream(&mut self.wire, id, webstand_h2::ErrorCode::InternalError);
                self.reset_sent(id);
            }
            return;
        }
        let Some(s) = self.streams.get_mut(&id) else {
            return; // reset meanwhile: its answer goes nowhere
        };
        match tag {
            DATA if s.pieces.is_empty() => self.pump_stream(id, payload),
            DATA => match s.pieces.back_mut() {
                Some(Piece::Mem(buf, _)) if buf.len() < 64 << 10 => buf.extend_from_slice(payload),
                _ => s.pieces.push_back(Piece::Mem(payload.to_vec(), 0)),
            },
            FILE => {
                let i = u32::from_be_bytes(payload.try_into().unwrap_or_default()) as usize;
                if let Some((f, start, end)) = files.get(i) {
                    s.pieces.push_back(Piece::File(f.clone(), *start, *end));
                }
            }
            _ => s.finished = true,
        }
    }

    /// HEADERS for a staged head: :status, server, the fields, content-length.
    fn send_head(&mut self, id: u32, p: &[u8]) {
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        let status = u16::from_be_bytes([p[0], p[1]]);
        let n = u64::from_be_bytes(p[3..11].try_into().unwrap_or_default());
        let length = match p[2] {
            0 => Length::None,
            1 => Length::Known(n),
            _ => Length::Streamed,
        };
        let (mut status_buf, mut length_buf) = ([0u8; 20], [0u8; 20]);
        let status_digits = digits(u64::from(status), &mut status_buf);
        let mut lower = std::mem::take(&mut self.lower);
        lower_names(&p[11..], &mut lower);
        let fixed = [(&b":status"[..], status_digits), (b"server", b"webstand")];
        let length_field = match length {
            Length::Known(n) => Some((&b"content-length"[..], digits(n, &mut length_buf))),
            _ => None,
        };
        let fields = fixed
            .into_iter()
            .chain(pairs(&lower).filter(|(n, _)| *n != b"content-length"))
            .chain(length_field);
        self.block.clear();
        self.encoder.encode(fields, &mut self.block);
        self.lower = lower;
        s.remaining = match length {
            Length::Known(n) if !s.head_only => Some(n),
            Length::Streamed if !s.head_only => None,
            _ => Some(0),
        };
        let end = s.remaining == Some(0);
        write::headers(
            &mut self.wire,
            id,
            end,
            &self.block,
            self.peer.max_frame_size,
        );
        if end {
            self.stream_done(id);
        }
    }

    /// Sends queued body pieces as DATA frames while both windows and the budget allow.
    pub fn pump(&mut self) {
        let mut ids = std::mem::take(&mut self.answering);
        self.answering_ids(&mut ids);
        for &id in &ids {
            if self.wire.len() >= PUMP_BUDGET || self.send_window.available() == 0 {
                break;
            }
            self.pump_stream(id, &[]);
        }
        self.answering = ids;
    }

    /// The streams whose answers have begun (HEADERS sent), in stream order, into `ids`.
    fn answering_ids(&self, ids: &mut Vec<u32>) {
        ids.clear();
        ids.extend(
            self.streams
                .iter()
                .filter(|(_, s)| s.remaining.is_some() || s.finished || !s.pieces.is_empty())
                .map(|(&id, _)| id),
        );
        ids.sort_unstable();
    }

    /// Frames the stream's queued body, then `staged` (bytes of this round with nothing queued
    /// before them: framed in place, never copied), as DATA frames within both windows, the
    /// peer's frame size and the budget; what does not fit is queued.
    fn pump_stream(&mut self, id: u32, mut staged: &[u8]) {
        let max_frame = self.peer.max_frame_size as usize;
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        loop {
            let room = (s.send_window.available().min(self.send_window.available()) as usize)
                .min(max_frame)
                .min(PUMP_BUDGET.saturating_sub(self.wire.len()));
            if room == 0 || (s.pieces.is_empty() && staged.is_empty()) {
                break;
            }
            let n = match s.pieces.front_mut() {
                Some(piece) => {
                    let n = take_piece(piece, room, &mut self.wire, id);
                    if n == usize::MAX {
                        // The file could not be read: the promised length cannot be met.
                        write::rst_stream(
                            &mut self.wire,
                            id,
                            webstand_h2::ErrorCode::InternalError,
                        );
                        self.streams.remove(&id);
                        return;
                    }
                    if piece_done(piece) {
                        s.pieces.pop_front();
                    }
                    n
                }
                None => {
                    let n = room.min(staged.len());
                    write::data(&mut self.wire, id, false, &staged[..n]);
                    staged = &staged[n..];
                    n
                }
            };
            s.send_window.spend(n as u32);
            self.send_window.spend(n as u32);
            if let Some(r) = s.remaining.as_mut() {
                *r = r.saturating_sub(n as u64);
            }
            let drained = s.pieces.is_empty() && staged.is_empty();
            if s.remaining == Some(0) || (s.finished && drained) {
                // The END_STREAM flag on the frame just written (its flags byte).
                let frame = self.wire.len() - n - 9;
                self.wire[frame + 4] |= webstand_h2::frame::flags::END_STREAM;
                return self.stream_done(id);
            }
        }
        if !staged.is_empty() {
            s.pieces.push_back(Piece::Mem(staged.to_vec(), 0));
        } else if s.finished && s.pieces.is_empty() && s.remaining.is_none() {
            write::data(&mut self.wire, id, true, b"");
            self.stream_done(id);
        }
    }

    /// Our side of a stream has ended: the stream is closed. If the request had not ended (a 413
    /// answered while the body still came), RST_STREAM NO_ERROR tells the client to stop sending
    /// it (RFC 9113 §8.1).
    fn stream_done(&mut self, id: u32) {
        if self.streams.remove(&id).is_some_and(|s| !s.received) {
            write::rst_stream(&mut self.wire, id, webstand_h2::ErrorCode::NoError);
            self.reset_sent(id);
        }
        self.answered += 1;
    }
}

/// Writes one DATA frame of at most `room` bytes from `piece`; returns its length (usize::MAX when
/// a file read failed).
fn take_piece(piece: &mut Piece, room: usize, wire: &mut Vec<u8>, id: u32) -> usize {
    match piece {
        Piece::Mem(buf, pos) => {
            let n = (buf.len() - *pos).min(room);
            write::data(wire, id, false, &buf[*pos..*pos + n]);
            *pos += n;
            n
        }
        Piece::File(file, pos, end) => {
            let n = ((*end - *pos) as usize).min(room);
            write::data_head(wire, id, false, n);
            let at = wire.len();
            wire.resize(at + n, 0);
            match file.read_exact_at(&mut wire[at..], *pos) {
                Ok(()) => {
                    *pos += n as u64;
                    n
                }
                Err(_) => {
                    wire.truncate(at - 9);
                    usize::MAX
                }
            }
        }
    }
}

fn piece_done(piece: &Piece) -> bool {
    match piece {
        Piece::Mem(buf, pos) => *pos == buf.len(),
        Piece::File(_, pos, end) => pos == end,
    }
}

impl Stream {
    /// Body left to send and a window open for it.
    pub fn sendable(&self) -> bool {
        !self.pieces.is_empty() && self.send_window.available() > 0
    }
}
