//! The way out of an HTTP/3 connection. An answer reaches the `Writer` of its request stream (the
//! `Sink` a request's answer goes to, now or later from a job), which stages records in the
//! round's output: a head (status, length, field lines), body bytes, a file range, the end of a
//! streamed body, or its abort. Staging lets answers be written while the connection's state is
//! busy reading (the handlers answer from inside `answer_ready`), as HTTP/2's send.rs does.
//! Before the connection writes, `State::frame_staged` turns them into the QUIC connection's
//! records: the head into a HEADERS frame (QPACK, static table: `webstand-h3`'s encoder; names
//! lower-cased, connection-specific fields dropped), bodies into DATA frames, and each stream's
//! end into its FIN once its promised length is sent. File ranges are read in pieces by `pump`,
//! which the protocol calls only once the connection's earlier output is written, so a large
//! file costs a connection one piece of memory at a time, not its whole length.

use super::state::{Piece, State};
use crate::answer_fields::{lower_names, pairs};
use crate::quic::records::{self, Kind};
use crate::response::{digits, Head as Answer, Length, Prepared, Sink};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use webstand_h3::frame::{kind, write};
use webstand_h3::{qpack_encoder, varint, ErrorCode};

const HEAD: u8 = 1;
const DATA: u8 = 2;
const FILE: u8 = 3;
const END: u8 = 4;
const ABORT: u8 = 5;
/// Tag, stream ID, payload length.
const STAGED: usize = 13;
/// File bytes read per DATA frame, and per pump of a connection.
const PIECE: usize = 16 << 10;
const PUMP_BUDGET: usize = 256 << 10;

fn stage(out: &mut Vec<u8>, tag: u8, stream: u64, len: usize) {
    out.push(tag);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(&(len as u32).to_be_bytes());
}

/// The sink of one request stream's answer.
pub struct Writer<'a> {
    /// The QUIC stream ID.
    pub stream: u64,
    pub date_line: &'a [u8],
    pub bytes: &'a mut Vec<u8>,
    pub staged: &'a mut Vec<(Arc<File>, u64, u64)>,
}

impl Sink for Writer<'_> {
    /// Staged as: status, length kind and value, then the field lines and the Date line.
    fn head(&mut self, head: &Answer) {
        let (kind, n) = match head.length {
            Length::None => (0u8, 0),
            Length::Known(n) => (1, n),
            Length::Streamed => (2, 0),
        };
        let len = 11 + head.fields.len() + self.date_line.len();
        stage(self.bytes, HEAD, self.stream, len);
        self.bytes.extend_from_slice(&head.status.to_be_bytes());
        self.bytes.push(kind);
        self.bytes.extend_from_slice(&n.to_be_bytes());
        self.bytes.extend_from_slice(head.fields);
        self.bytes.extend_from_slice(self.date_line);
    }

    fn prepared(&mut self, head: &Prepared) {
        self.head(&head.head());
    }

    fn body(&mut self, data: &[u8]) {
        if !data.is_empty() {
            stage(self.bytes, DATA, self.stream, data.len());
            self.bytes.extend_from_slice(data);
        }
    }

    fn file(&mut self, file: &Arc<File>, start: u64, end: u64) {
        stage(self.bytes, FILE, self.stream, 4);
        let index = self.staged.len() as u32;
        self.bytes.extend_from_slice(&index.to_be_bytes());
        self.staged.push((file.clone(), start, end));
    }

    fn stream(&mut self, data: &[u8]) {
        self.body(data);
    }

    fn end_stream(&mut self) {
        stage(self.bytes, END, self.stream, 0);
    }

    /// The stream is reset; the connection's other streams go on.
    fn abort(&mut self) -> bool {
        stage(self.bytes, ABORT, self.stream, 0);
        true
    }

    fn gathered(&self) -> usize {
        self.bytes.len()
    }
}

impl State {
    /// Turns staged records in `out` into the connection's records and leaves in `out` the bytes
    /// to write (control stream records first).
    pub fn frame_staged(&mut self, out: &mut Vec<u8>) {
        let files = std::mem::take(&mut self.staged);
        let mut pos = 0;
        while pos + STAGED <= out.len() {
            let tag = out[pos];
            let stream = u64::from_be_bytes(out[pos + 1..pos + 9].try_into().unwrap_or_default());
            let len = u32::from_be_bytes(out[pos + 9..pos + 13].try_into().unwrap_or_default());
            let payload = &out[pos + STAGED..pos + STAGED + len as usize];
            self.absorb(tag, stream, payload, &files);
            pos += STAGED + len as usize;
        }
        let mut files = files;
        files.clear();
        self.staged = files;
        out.clear();
        out.append(&mut self.wire);
    }

    fn absorb(&mut self, tag: u8, id: u64, payload: &[u8], files: &[(Arc<File>, u64, u64)]) {
        if tag == HEAD {
            return self.send_head(id, payload);
        }
        if tag == ABORT {
            if self.streams.remove(&id).is_some() {
                let code = ErrorCode::InternalError.to_u64();
                records::push_code(&mut self.wire, Kind::Reset, id, code);
            }
            return;
        }
        let Some(s) = self.streams.get_mut(&id) else {
            return; // reset meanwhile: its answer goes nowhere
        };
        match tag {
            DATA if s.pieces.is_empty() => {
                data_frame(&mut self.wire, id, payload);
                if let Some(r) = s.remaining.as_mut() {
                    *r = r.saturating_sub(payload.len() as u64);
                }
            }
            DATA => s.pieces.push_back(Piece::Mem(payload.to_vec(), 0)),
            FILE => {
                let i = u32::from_be_bytes(payload.try_into().unwrap_or_default()) as usize;
                if let Some((f, start, end)) = files.get(i) {
                    s.pieces.push_back(Piece::File(f.clone(), *start, *end));
                }
            }
            _ => s.finished = true,
        }
        self.end_if_sent(id);
    }

    /// HEADERS for a staged head: :status, server, the fields, content-length.
    fn send_head(&mut self, id: u64, p: &[u8]) {
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
        qpack_encoder::encode(fields, &mut self.block);
        self.lower = lower;
        s.remaining = match length {
            Length::Known(n) if !s.head_only => Some(n),
            Length::Streamed if !s.head_only => None,
            _ => Some(0),
        };
        let len = self.block.len();
        let frame = varint::size(kind::HEADERS) + varint::size(len as u64) + len;
        records::push_head(&mut self.wire, Kind::Data, id, frame);
        write::headers(&mut self.wire, &self.block);
        self.end_if_sent(id);
    }

    /// A stream whose answer is all sent gets its FIN and is done.
    fn end_if_sent(&mut self, id: u64) {
        let Some(s) = self.streams.get(&id) else {
            return;
        };
        let drained = s.pieces.is_empty();
        let sent = s.remaining == Some(0) || (s.finished && s.remaining.is_none());
        if drained && sent {
            records::push(&mut self.wire, Kind::Fin, id, b"");
            self.streams.remove(&id);
        }
    }

    /// Sends queued body pieces as DATA frames, up to `PUMP_BUDGET` bytes (the connection writes
    /// them before the next pump). True when something was sent.
    pub fn pump(&mut self) -> bool {
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(
            self.streams
                .iter()
                .filter(|(_, s)| !s.pieces.is_empty())
                .map(|(&id, _)| id),
        );
        let start = self.wire.len();
        for &id in &ids {
            while self.wire.len() - start < PUMP_BUDGET {
                let Some(s) = self.streams.get_mut(&id) else {
                    break;
                };
                let Some(piece) = s.pieces.front_mut() else {
                    break;
                };
                let n = match take_piece(piece, &mut self.wire, id) {
                    Some(n) => n,
                    None => {
                        // The file could not be read: the promised length cannot be met.
                        self.streams.remove(&id);
                        let code = ErrorCode::InternalError.to_u64();
                        records::push_code(&mut self.wire, Kind::Reset, id, code);
                        break;
                    }
                };
                if piece_done(piece) {
                    s.pieces.pop_front();
                }
                if let Some(r) = s.remaining.as_mut() {
                    *r = r.saturating_sub(n as u64);
                }
                self.end_if_sent(id);
            }
        }
        self.ids = ids;
        self.wire.len() > start
    }

    /// Body left to send.
    pub(super) fn has_pieces(&self) -> bool {
        self.streams.values().any(|s| !s.pieces.is_empty())
    }
}

/// The head of a record carrying a DATA frame of `len` bytes, and the frame's head; the bytes
/// these took.
fn data_head(wire: &mut Vec<u8>, id: u64, len: usize) -> usize {
    let frame_head = varint::size(kind::DATA) + varint::size(len as u64);
    records::push_head(wire, Kind::Data, id, frame_head + len);
    write::data_head(wire, len);
    records::HEAD + frame_head
}

/// A DATA frame around `payload`, as one record of the stream.
fn data_frame(wire: &mut Vec<u8>, id: u64, payload: &[u8]) {
    data_head(wire, id, payload.len());
    wire.extend_from_slice(payload);
}

/// Writes one DATA frame of at most `PIECE` bytes from `piece`; its length (None when a file read
/// failed).
fn take_piece(piece: &mut Piece, wire: &mut Vec<u8>, id: u64) -> Option<usize> {
    match piece {
        Piece::Mem(buf, pos) => {
            let n = (buf.len() - *pos).min(PIECE);
            data_frame(wire, id, &buf[*pos..*pos + n]);
            *pos += n;
            Some(n)
        }
        Piece::File(file, pos, end) => {
            let n = ((*end - *pos) as usize).min(PIECE);
            let heads = data_head(wire, id, n);
            let at = wire.len();
            wire.resize(at + n, 0);
            match file.read_exact_at(&mut wire[at..], *pos) {
                Ok(()) => {
                    *pos += n as u64;
                    Some(n)
                }
                Err(_) => {
                    wire.truncate(at - heads);
                    None
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
