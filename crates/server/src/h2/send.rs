//! The way out of an HTTP/2 connection: its answers' staged records (staged.rs) turned into
//! frames before the connection writes. `State::frame_staged` turns the head into HEADERS through
//! the connection's HPACK encoder (field names lower-cased, connection-specific fields dropped),
//! an abort into RST_STREAM INTERNAL_ERROR, and the body and file ranges (read in pieces: sendfile
//! cannot frame HTTP/2) into the stream's queue, which `pump` sends as DATA frames within both
//! flow-control windows and the peer's SETTINGS_MAX_FRAME_SIZE, all streams' frames gathered into
//! one buffer (one write, and over TLS as few records as that write makes: h2o's batching).

use super::state::{Piece, State, Stream};
use crate::answer_fields::lower_names;
use crate::response::Length;
use crate::staged::{self, Record, StagedHead};
use std::os::unix::fs::FileExt;
use webstand_h2::frame::write;

/// Frames gathered per pump before the connection writes them.
const PUMP_BUDGET: usize = 256 << 10;

impl State {
    /// Turns staged records in `out` into frames (queued bodies pumped as windows allow) and
    /// leaves in `out` the bytes to write.
    pub fn frame_staged(&mut self, out: &mut Vec<u8>) {
        let mut files = std::mem::take(&mut self.staged);
        // Stream IDs were staged as HTTP/2 gave them: 31 bits.
        staged::read(out, &files, |id, record| self.absorb(id as u32, record));
        files.clear();
        self.staged = files;
        out.clear();
        self.pump();
        out.append(&mut self.wire);
    }

    fn absorb(&mut self, id: u32, record: Record) {
        let record = match record {
            Record::Head(head) => return self.send_head(id, &head),
            Record::Abort => {
                if self.streams.remove(&id).is_some() {
                    write::rst_stream(&mut self.wire, id, webstand_h2::ErrorCode::InternalError);
                    self.reset_sent(id);
                }
                return;
            }
            record => record,
        };
        let Some(s) = self.streams.get_mut(&id) else {
            return; // reset meanwhile: its answer goes nowhere
        };
        match record {
            Record::Data(payload) if s.pieces.is_empty() => self.pump_stream(id, payload),
            Record::Data(payload) => match s.pieces.back_mut() {
                Some(Piece::Mem(buf, _)) if buf.len() < 64 << 10 => buf.extend_from_slice(payload),
                _ => s.pieces.push_back(Piece::Mem(payload.to_vec(), 0)),
            },
            Record::File((f, start, end)) => {
                s.pieces.push_back(Piece::File(f.clone(), *start, *end))
            }
            _ => s.finished = true,
        }
    }

    /// HEADERS for a staged head: :status, server, the fields, content-length.
    fn send_head(&mut self, id: u32, head: &StagedHead) {
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        let mut lower = std::mem::take(&mut self.lower);
        lower_names(head.fields, &mut lower);
        let mut bufs = ([0u8; 20], [0u8; 20]);
        self.block.clear();
        self.encoder
            .encode(head.block_fields(&lower, &mut bufs), &mut self.block);
        self.lower = lower;
        let length = head.length;
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
