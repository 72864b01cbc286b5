//! HTTP/3 frames (RFC 9114 §7): a frame is a type and a length, both variable-length integers,
//! then the payload. Read here: a frame's head (`read_head`), whether its type may appear on the
//! stream it came on (`check`: §7.2's table, HTTP/2's reserved types refused as §7.2.8 says), and
//! the payload of every type but DATA, whose bytes the caller takes as they come (`parse`).
//! Unknown and reserved types (0x1f * N + 0x21 among them) are `Frame::Unknown`, to be skipped
//! (§9). Written here: each frame the roles send (`write`).

use crate::error::{Error, ErrorCode};
use crate::settings::Settings;
use crate::varint;

/// Frame types (§7.2, §11.2.1).
pub mod kind {
    pub const DATA: u64 = 0x0;
    pub const HEADERS: u64 = 0x1;
    pub const CANCEL_PUSH: u64 = 0x3;
    pub const SETTINGS: u64 = 0x4;
    pub const PUSH_PROMISE: u64 = 0x5;
    pub const GOAWAY: u64 = 0x7;
    pub const MAX_PUSH_ID: u64 = 0xd;
}

/// A frame's type and payload length, and the bytes they took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub kind: u64,
    pub len: u64,
    pub size: usize,
}

/// Reads a frame head at the start of `bytes`; None until all of it is there.
pub fn read_head(bytes: &[u8]) -> Option<Head> {
    let (kind, a) = varint::read(bytes)?;
    let (len, b) = varint::read(&bytes[a..])?;
    Some(Head {
        kind,
        len,
        size: a + b,
    })
}

/// The stream a frame arrived on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The peer's control stream.
    Control,
    /// A request stream (a client's bidirectional stream).
    Request,
}

/// Which side sent the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sender {
    Client,
    Server,
}

/// Whether a frame of type `kind` may come on `place` from `sender` (§7.2's table): Err with
/// H3_FRAME_UNEXPECTED, a connection error, when not. HTTP/2's types that HTTP/3 reserves
/// (PRIORITY, PING, WINDOW_UPDATE, CONTINUATION) are unexpected anywhere (§7.2.8).
pub fn check(kind: u64, place: Place, sender: Sender) -> Result<(), Error> {
    let allowed = match kind {
        0x2 | 0x6 | 0x8 | 0x9 => false,
        kind::DATA | kind::HEADERS => place == Place::Request,
        kind::PUSH_PROMISE => place == Place::Request && sender == Sender::Server,
        kind::SETTINGS | kind::GOAWAY | kind::MAX_PUSH_ID | kind::CANCEL_PUSH => {
            place == Place::Control && !(kind == kind::MAX_PUSH_ID && sender == Sender::Server)
        }
        _ => true,
    };
    match allowed {
        true => Ok(()),
        false => Err(Error::connection(
            ErrorCode::FrameUnexpected,
            "a frame type this stream may not carry",
        )),
    }
}

/// A frame other than DATA, parsed from its whole payload.
#[derive(Debug, PartialEq)]
pub enum Frame<'a> {
    /// A field section (QPACK-encoded).
    Headers(&'a [u8]),
    Settings(Settings),
    /// The first stream (or, from a client, push) ID the sender will not process.
    GoAway(u64),
    MaxPushId(u64),
    CancelPush(u64),
    PushPromise {
        push_id: u64,
        block: &'a [u8],
    },
    /// An unknown or reserved type: skipped.
    Unknown(u64),
}

/// Parses the payload of a frame whose head is `head` (DATA excepted: its bytes are the
/// caller's). Errors are H3_FRAME_ERROR (a payload that does not match its type's layout) or
/// H3_SETTINGS_ERROR (settings.rs), both connection errors.
pub fn parse<'a>(head: &Head, payload: &'a [u8]) -> Result<Frame<'a>, Error> {
    let bad = Error::connection(ErrorCode::FrameError, "a frame's payload does not parse");
    let single = || match varint::read(payload) {
        Some((value, n)) if n == payload.len() => Ok(value),
        _ => Err(bad),
    };
    Ok(match head.kind {
        kind::HEADERS => Frame::Headers(payload),
        kind::SETTINGS => Frame::Settings(Settings::parse(payload)?),
        kind::GOAWAY => Frame::GoAway(single()?),
        kind::MAX_PUSH_ID => Frame::MaxPushId(single()?),
        kind::CANCEL_PUSH => Frame::CancelPush(single()?),
        kind::PUSH_PROMISE => {
            let (push_id, n) = varint::read(payload).ok_or(bad)?;
            Frame::PushPromise {
                push_id,
                block: &payload[n..],
            }
        }
        other => Frame::Unknown(other),
    })
}

/// Writing frames.
pub mod write {
    use super::kind;
    use crate::varint;

    /// A frame's head.
    pub fn head(out: &mut Vec<u8>, kind: u64, len: usize) {
        varint::write(out, kind);
        varint::write(out, len as u64);
    }

    /// The head of a DATA frame of `len` bytes (its payload follows).
    pub fn data_head(out: &mut Vec<u8>, len: usize) {
        head(out, kind::DATA, len);
    }

    /// A HEADERS frame around an encoded field section.
    pub fn headers(out: &mut Vec<u8>, block: &[u8]) {
        head(out, kind::HEADERS, block.len());
        out.extend_from_slice(block);
    }

    /// A SETTINGS frame with these identifiers and values.
    pub fn settings(out: &mut Vec<u8>, values: &[(u64, u64)]) {
        let len: usize = values
            .iter()
            .map(|&(id, v)| varint::size(id) + varint::size(v))
            .sum();
        head(out, kind::SETTINGS, len);
        for &(id, value) in values {
            varint::write(out, id);
            varint::write(out, value);
        }
    }

    /// GOAWAY, MAX_PUSH_ID or CANCEL_PUSH: a frame whose payload is one integer.
    pub fn single(out: &mut Vec<u8>, kind: u64, value: u64) {
        head(out, kind, varint::size(value));
        varint::write(out, value);
    }

    pub fn goaway(out: &mut Vec<u8>, id: u64) {
        single(out, kind::GOAWAY, id);
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
