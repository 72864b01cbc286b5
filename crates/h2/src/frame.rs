//! Frames (RFC 9113 §4 and §6): the 9-byte header, each type's payload parsed with the checks the
//! RFC puts on it (which stream it may name, fixed lengths, padding), and writers for each type.
//!
//! Parsing borrows from the caller's buffer: a DATA payload or a header-block fragment is a slice
//! of it, never a copy. Unknown frame types parse as [`Frame::Unknown`] so the caller can ignore
//! them, as §4.1 requires.

use crate::error::{Error, ErrorCode};
use crate::settings::SettingId;

/// What a client sends first on every connection (§3.4), before its SETTINGS frame.
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Bytes in a frame header.
pub const HEADER_LEN: usize = 9;

/// Flag bits (§6): one name per meaning, several share a bit on different frame types.
pub mod flags {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// Frame types (§6, in numeric order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    Headers,
    Priority,
    RstStream,
    Settings,
    PushPromise,
    Ping,
    GoAway,
    WindowUpdate,
    Continuation,
    Unknown(u8),
}

const KINDS: [Kind; 10] = [
    Kind::Data,
    Kind::Headers,
    Kind::Priority,
    Kind::RstStream,
    Kind::Settings,
    Kind::PushPromise,
    Kind::Ping,
    Kind::GoAway,
    Kind::WindowUpdate,
    Kind::Continuation,
];

impl Kind {
    pub fn from_u8(value: u8) -> Kind {
        KINDS
            .get(value as usize)
            .copied()
            .unwrap_or(Kind::Unknown(value))
    }

    pub fn to_u8(self) -> u8 {
        match self {
            Kind::Unknown(value) => value,
            known => KINDS.iter().position(|&k| k == known).unwrap_or(0) as u8,
        }
    }
}

/// A frame header (§4.1): payload length, type, flags and stream identifier (reserved bit dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub len: u32,
    pub kind: Kind,
    pub flags: u8,
    pub stream: u32,
}

impl Head {
    pub fn new(kind: Kind, flags: u8, stream: u32, len: usize) -> Head {
        Head {
            len: len as u32,
            kind,
            flags,
            stream,
        }
    }

    pub fn parse(bytes: &[u8; HEADER_LEN]) -> Head {
        Head {
            len: u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]),
            kind: Kind::from_u8(bytes[3]),
            flags: bytes[4],
            stream: stream_id(&bytes[5..9]),
        }
    }

    /// The header of the frame at the start of `buf`, once all 9 bytes are there.
    pub fn peek(buf: &[u8]) -> Option<Head> {
        let bytes: &[u8; HEADER_LEN] = buf.get(..HEADER_LEN)?.try_into().ok()?;
        Some(Head::parse(bytes))
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.len.to_be_bytes()[1..]);
        out.push(self.kind.to_u8());
        out.push(self.flags);
        out.extend_from_slice(&(self.stream & 0x7fff_ffff).to_be_bytes());
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// §4.2: a frame longer than the SETTINGS_MAX_FRAME_SIZE we announced is a FRAME_SIZE_ERROR of
    /// the connection (we cannot tell a header block's end from a truncated one).
    pub fn check_len(&self, max_frame_size: u32) -> Result<(), Error> {
        if self.len > max_frame_size {
            return Err(Error::connection(
                ErrorCode::FrameSizeError,
                "frame longer than SETTINGS_MAX_FRAME_SIZE",
            ));
        }
        Ok(())
    }
}

fn stream_id(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) & 0x7fff_ffff
}

/// A stream's dependency as carried by HEADERS (with PRIORITY) and PRIORITY frames. RFC 9113
/// deprecates the scheme; it is parsed (to find the header block after it) and otherwise ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    pub exclusive: bool,
    pub depends_on: u32,
    pub weight: u8,
}

/// One parsed frame; slices borrow the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// `flow_len` is the whole payload, padding included: what flow control counts (§6.1).
    Data {
        stream: u32,
        end_stream: bool,
        data: &'a [u8],
        flow_len: u32,
    },
    Headers {
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        priority: Option<Priority>,
        fragment: &'a [u8],
    },
    Priority {
        stream: u32,
        priority: Priority,
    },
    RstStream {
        stream: u32,
        code: ErrorCode,
    },
    /// `params` is a whole number of 6-byte parameters; [`crate::Settings::apply`] reads them.
    Settings {
        ack: bool,
        params: &'a [u8],
    },
    PushPromise {
        stream: u32,
        promised: u32,
        end_headers: bool,
        fragment: &'a [u8],
    },
    Ping {
        ack: bool,
        data: [u8; 8],
    },
    GoAway {
        last_stream: u32,
        code: ErrorCode,
        debug: &'a [u8],
    },
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
    Continuation {
        stream: u32,
        end_headers: bool,
        fragment: &'a [u8],
    },
    /// A type this crate does not know: ignored by both roles (§4.1, §5.5).
    Unknown {
        kind: u8,
    },
}

fn protocol(reason: &'static str) -> Error {
    Error::connection(ErrorCode::ProtocolError, reason)
}

fn frame_size(reason: &'static str) -> Error {
    Error::connection(ErrorCode::FrameSizeError, reason)
}

fn on_stream(head: &Head, kind: &'static str) -> Result<u32, Error> {
    match head.stream {
        0 => Err(protocol(kind)),
        stream => Ok(stream),
    }
}

fn on_connection(head: &Head, reason: &'static str) -> Result<(), Error> {
    match head.stream {
        0 => Ok(()),
        _ => Err(protocol(reason)),
    }
}

/// Strips the Pad Length byte and the padding of a PADDED frame (§6.1, §6.2).
fn unpad<'a>(head: &Head, payload: &'a [u8]) -> Result<&'a [u8], Error> {
    if !head.has(flags::PADDED) {
        return Ok(payload);
    }
    let (&pad, rest) = payload
        .split_first()
        .ok_or_else(|| frame_size("padded frame without a Pad Length"))?;
    let keep = rest
        .len()
        .checked_sub(pad as usize)
        .ok_or_else(|| protocol("padding longer than the frame"))?;
    Ok(&rest[..keep])
}

fn priority_at(bytes: &[u8], stream: u32) -> Result<Priority, Error> {
    let raw = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let priority = Priority {
        exclusive: raw & 0x8000_0000 != 0,
        depends_on: raw & 0x7fff_ffff,
        weight: bytes[4],
    };
    if priority.depends_on == stream {
        return Err(Error::stream(
            stream,
            ErrorCode::ProtocolError,
            "stream depends on itself",
        ));
    }
    Ok(priority)
}

fn u32_at(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

impl<'a> Frame<'a> {
    /// Parses the payload of a frame whose header is `head`; `payload` is exactly `head.len` bytes.
    pub fn parse(head: Head, payload: &'a [u8]) -> Result<Frame<'a>, Error> {
        debug_assert_eq!(payload.len(), head.len as usize);
        match head.kind {
            Kind::Data => Ok(Frame::Data {
                stream: on_stream(&head, "DATA on stream 0")?,
                end_stream: head.has(flags::END_STREAM),
                data: unpad(&head, payload)?,
                flow_len: head.len,
            }),
            Kind::Headers => parse_headers(head, payload),
            Kind::Priority => {
                let stream = on_stream(&head, "PRIORITY on stream 0")?;
                if payload.len() != 5 {
                    let reason = "PRIORITY frame not 5 bytes long";
                    return Err(Error::stream(stream, ErrorCode::FrameSizeError, reason));
                }
                let priority = priority_at(payload, stream)?;
                Ok(Frame::Priority { stream, priority })
            }
            Kind::RstStream => {
                let stream = on_stream(&head, "RST_STREAM on stream 0")?;
                if payload.len() != 4 {
                    return Err(frame_size("RST_STREAM frame not 4 bytes long"));
                }
                let code = ErrorCode::from_u32(u32_at(payload));
                Ok(Frame::RstStream { stream, code })
            }
            Kind::Settings => parse_settings(head, payload),
            Kind::PushPromise => parse_push_promise(head, payload),
            Kind::Ping => {
                on_connection(&head, "PING on a stream")?;
                let data: [u8; 8] = payload
                    .try_into()
                    .map_err(|_| frame_size("PING frame not 8 bytes long"))?;
                let ack = head.has(flags::ACK);
                Ok(Frame::Ping { ack, data })
            }
            Kind::GoAway => {
                on_connection(&head, "GOAWAY on a stream")?;
                if payload.len() < 8 {
                    return Err(frame_size("GOAWAY frame shorter than 8 bytes"));
                }
                Ok(Frame::GoAway {
                    last_stream: u32_at(payload) & 0x7fff_ffff,
                    code: ErrorCode::from_u32(u32_at(&payload[4..])),
                    debug: &payload[8..],
                })
            }
            Kind::WindowUpdate => parse_window_update(head, payload),
            Kind::Continuation => Ok(Frame::Continuation {
                stream: on_stream(&head, "CONTINUATION on stream 0")?,
                end_headers: head.has(flags::END_HEADERS),
                fragment: payload,
            }),
            Kind::Unknown(kind) => Ok(Frame::Unknown { kind }),
        }
    }
}

fn parse_headers(head: Head, payload: &[u8]) -> Result<Frame<'_>, Error> {
    let stream = on_stream(&head, "HEADERS on stream 0")?;
    let mut fragment = unpad(&head, payload)?;
    let mut priority = None;
    if head.has(flags::PRIORITY) {
        if fragment.len() < 5 {
            return Err(frame_size("HEADERS with PRIORITY shorter than 5 bytes"));
        }
        priority = Some(priority_at(fragment, stream)?);
        fragment = &fragment[5..];
    }
    Ok(Frame::Headers {
        stream,
        end_stream: head.has(flags::END_STREAM),
        end_headers: head.has(flags::END_HEADERS),
        priority,
        fragment,
    })
}

fn parse_settings(head: Head, payload: &[u8]) -> Result<Frame<'_>, Error> {
    on_connection(&head, "SETTINGS on a stream")?;
    let ack = head.has(flags::ACK);
    if ack && !payload.is_empty() {
        return Err(frame_size("SETTINGS ACK with a payload"));
    }
    if !payload.len().is_multiple_of(6) {
        return Err(frame_size("SETTINGS length not a multiple of 6"));
    }
    Ok(Frame::Settings {
        ack,
        params: payload,
    })
}

fn parse_push_promise(head: Head, payload: &[u8]) -> Result<Frame<'_>, Error> {
    let stream = on_stream(&head, "PUSH_PROMISE on stream 0")?;
    let rest = unpad(&head, payload)?;
    if rest.len() < 4 {
        return Err(frame_size("PUSH_PROMISE shorter than 4 bytes"));
    }
    Ok(Frame::PushPromise {
        stream,
        promised: u32_at(rest) & 0x7fff_ffff,
        end_headers: head.has(flags::END_HEADERS),
        fragment: &rest[4..],
    })
}

fn parse_window_update(head: Head, payload: &[u8]) -> Result<Frame<'_>, Error> {
    if payload.len() != 4 {
        return Err(frame_size("WINDOW_UPDATE frame not 4 bytes long"));
    }
    let increment = u32_at(payload) & 0x7fff_ffff;
    if increment == 0 {
        let reason = "WINDOW_UPDATE with an increment of 0";
        return Err(match head.stream {
            0 => protocol(reason),
            stream => Error::stream(stream, ErrorCode::ProtocolError, reason),
        });
    }
    Ok(Frame::WindowUpdate {
        stream: head.stream,
        increment,
    })
}

/// Writers: each appends one whole frame (header and payload) to `out`.
pub mod write {
    use super::*;

    /// A DATA frame's header alone, for callers that send the payload from elsewhere (a file).
    pub fn data_head(out: &mut Vec<u8>, stream: u32, end_stream: bool, len: usize) {
        let flags = if end_stream { flags::END_STREAM } else { 0 };
        Head::new(Kind::Data, flags, stream, len).write(out);
    }

    pub fn data(out: &mut Vec<u8>, stream: u32, end_stream: bool, data: &[u8]) {
        data_head(out, stream, end_stream, data.len());
        out.extend_from_slice(data);
    }

    /// A header block as one HEADERS frame, followed by CONTINUATION frames when it is longer than
    /// the peer's SETTINGS_MAX_FRAME_SIZE.
    pub fn headers(out: &mut Vec<u8>, stream: u32, end_stream: bool, block: &[u8], max: u32) {
        let max = (max as usize).max(1);
        let mut chunks = block.chunks(max);
        let first = chunks.next().unwrap_or(&[]);
        let only = block.len() <= max;
        let mut flags = if end_stream { flags::END_STREAM } else { 0 };
        if only {
            flags |= flags::END_HEADERS;
        }
        Head::new(Kind::Headers, flags, stream, first.len()).write(out);
        out.extend_from_slice(first);
        let mut rest = chunks.peekable();
        while let Some(chunk) = rest.next() {
            let flags = if rest.peek().is_none() {
                flags::END_HEADERS
            } else {
                0
            };
            Head::new(Kind::Continuation, flags, stream, chunk.len()).write(out);
            out.extend_from_slice(chunk);
        }
    }

    pub fn settings(out: &mut Vec<u8>, params: &[(SettingId, u32)]) {
        Head::new(Kind::Settings, 0, 0, params.len() * 6).write(out);
        for &(id, value) in params {
            out.extend_from_slice(&(id as u16).to_be_bytes());
            out.extend_from_slice(&value.to_be_bytes());
        }
    }

    pub fn settings_ack(out: &mut Vec<u8>) {
        Head::new(Kind::Settings, flags::ACK, 0, 0).write(out);
    }

    pub fn ping(out: &mut Vec<u8>, ack: bool, data: [u8; 8]) {
        let flags = if ack { flags::ACK } else { 0 };
        Head::new(Kind::Ping, flags, 0, 8).write(out);
        out.extend_from_slice(&data);
    }

    pub fn goaway(out: &mut Vec<u8>, last_stream: u32, code: ErrorCode, debug: &[u8]) {
        Head::new(Kind::GoAway, 0, 0, 8 + debug.len()).write(out);
        out.extend_from_slice(&(last_stream & 0x7fff_ffff).to_be_bytes());
        out.extend_from_slice(&code.to_u32().to_be_bytes());
        out.extend_from_slice(debug);
    }

    pub fn rst_stream(out: &mut Vec<u8>, stream: u32, code: ErrorCode) {
        Head::new(Kind::RstStream, 0, stream, 4).write(out);
        out.extend_from_slice(&code.to_u32().to_be_bytes());
    }

    pub fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
        Head::new(Kind::WindowUpdate, 0, stream, 4).write(out);
        out.extend_from_slice(&(increment & 0x7fff_ffff).to_be_bytes());
    }

    pub fn priority(out: &mut Vec<u8>, stream: u32, priority: Priority) {
        Head::new(Kind::Priority, 0, stream, 5).write(out);
        let exclusive = if priority.exclusive { 0x8000_0000 } else { 0 };
        out.extend_from_slice(&(priority.depends_on | exclusive).to_be_bytes());
        out.push(priority.weight);
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
