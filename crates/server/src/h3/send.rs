//! The way out of an HTTP/3 connection: its answers' staged records (staged.rs) turned into the
//! QUIC connection's records before the connection writes. `State::frame_staged` turns the head into a HEADERS frame (QPACK, static table: `webstand-h3`'s encoder; names
//! lower-cased, connection-specific fields dropped), bodies into DATA frames, and each stream's
//! end into its FIN once its promised length is sent. File ranges are read in pieces by `pump`,
//! which the protocol calls only once the connection's earlier output is written, so a large
//! file costs a connection one piece of memory at a time, not its whole length.

use super::state::{Piece, State};
use crate::answer_fields::lower_names;
use crate::quic::records::{self, Kind};
use crate::response::Length;
use crate::staged::{self, Record, StagedHead};
use std::os::unix::fs::FileExt;
use webstand_h3::frame::{kind, write};
use webstand_h3::{qpack_encoder, varint, ErrorCode};

/// File bytes read per DATA frame, and per pump of a connection.
const PIECE: usize = 16 << 10;
const PUMP_BUDGET: usize = 256 << 10;

impl State {
    /// Turns staged records in `out` into the connection's records and leaves in `out` the bytes
    /// to write (control stream records first).
    pub fn frame_staged(&mut self, out: &mut Vec<u8>) {
        let mut files = std::mem::take(&mut self.staged);
        staged::read(out, &files, |id, record| self.absorb(id, record));
        files.clear();
        self.staged = files;
        out.clear();
        out.append(&mut self.wire);
    }

    fn absorb(&mut self, id: u64, record: Record) {
        let record = match record {
            Record::Head(head) => return self.send_head(id, &head),
            Record::Abort => {
                if self.streams.remove(&id).is_some() {
                    let code = ErrorCode::InternalError.to_u64();
                    records::push_code(&mut self.wire, Kind::Reset, id, code);
                }
                return;
            }
            record => record,
        };
        let Some(s) = self.streams.get_mut(&id) else {
            return; // reset meanwhile: its answer goes nowhere
        };
        match record {
            Record::Data(payload) if s.pieces.is_empty() => {
                data_frame(&mut self.wire, id, payload);
                if let Some(r) = s.remaining.as_mut() {
                    *r = r.saturating_sub(payload.len() as u64);
                }
            }
            Record::Data(payload) => s.pieces.push_back(Piece::Mem(payload.to_vec(), 0)),
            Record::File((f, start, end)) => {
                s.pieces.push_back(Piece::File(f.clone(), *start, *end))
            }
            _ => s.finished = true,
        }
        self.end_if_sent(id);
    }

    /// HEADERS for a staged head: :status, server, the fields, content-length.
    fn send_head(&mut self, id: u64, head: &StagedHead) {
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        let mut lower = std::mem::take(&mut self.lower);
        lower_names(head.fields, &mut lower);
        let mut bufs = ([0u8; 20], [0u8; 20]);
        self.block.clear();
        qpack_encoder::encode(head.block_fields(&lower, &mut bufs), &mut self.block);
        self.lower = lower;
        let length = head.length;
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
