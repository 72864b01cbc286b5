//! The byte stream a QUIC connection carries for the loop (transport.rs): QUIC multiplexes
//! streams, and a connection's protocol above it (h3/) reads and writes them as *records*, each
//! naming its stream, so the loop moves a QUIC connection's bytes as it moves any connection's
//! (read into its buffer, answered into its output, written with one call). A record is a kind,
//! the QUIC stream ID, the payload's length and the payload. In from the connection: a stream's
//! data, its end, the peer's reset or STOP_SENDING (with the code). Out to it: bytes for a stream,
//! its end, a reset or STOP_SENDING of ours, and a close of the whole connection (with its code).

/// The fixed part of a record: kind, stream ID, payload length.
pub const HEAD: usize = 1 + 8 + 4;

/// Record kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// In: bytes the peer sent on the stream. Out: bytes to send on it.
    Data = 1,
    /// In: the peer ended the stream. Out: end our side of it.
    Fin = 2,
    /// In: the peer reset its side (payload: the code). Out: reset ours with the code.
    Reset = 3,
    /// In: the peer asked us to stop sending. Out: ask it to stop (payload: the code).
    Stop = 4,
    /// Out: close the connection with the code (the stream ID is unused).
    Close = 5,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        [Kind::Data, Kind::Fin, Kind::Reset, Kind::Stop, Kind::Close]
            .into_iter()
            .find(|k| *k as u8 == b)
    }
}

/// Appends a record.
pub fn push(out: &mut Vec<u8>, kind: Kind, stream: u64, payload: &[u8]) {
    push_head(out, kind, stream, payload.len());
    out.extend_from_slice(payload);
}

/// Appends a record's head; its `len` payload bytes follow.
pub fn push_head(out: &mut Vec<u8>, kind: Kind, stream: u64, len: usize) {
    out.push(kind as u8);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(&(len as u32).to_be_bytes());
}

/// Appends a record carrying an error code.
pub fn push_code(out: &mut Vec<u8>, kind: Kind, stream: u64, code: u64) {
    push(out, kind, stream, &code.to_be_bytes());
}

/// One record read back.
pub struct Record<'a> {
    pub kind: Kind,
    pub stream: u64,
    pub payload: &'a [u8],
}

impl Record<'_> {
    /// The code a Reset, Stop or Close record carries.
    pub fn code(&self) -> u64 {
        self.payload
            .try_into()
            .map(u64::from_be_bytes)
            .unwrap_or_default()
    }
}

/// The record at the start of `bytes`, and the bytes it takes; None until it is whole (or for
/// bytes that are no record, which only a bug could write).
pub fn next(bytes: &[u8]) -> Option<(Record<'_>, usize)> {
    let head = bytes.get(..HEAD)?;
    let kind = Kind::from_u8(head[0])?;
    let stream = u64::from_be_bytes(head[1..9].try_into().ok()?);
    let len = u32::from_be_bytes(head[9..13].try_into().ok()?) as usize;
    let payload = bytes.get(HEAD..HEAD + len)?;
    Some((
        Record {
            kind,
            stream,
            payload,
        },
        HEAD + len,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_as_written() {
        let mut out = Vec::new();
        push(&mut out, Kind::Data, 4, b"abc");
        push_code(&mut out, Kind::Reset, 8, 0x10c);
        let (r, n) = next(&out).unwrap();
        assert_eq!((r.kind, r.stream, r.payload), (Kind::Data, 4, &b"abc"[..]));
        let (r, m) = next(&out[n..]).unwrap();
        assert_eq!((r.kind, r.stream, r.code()), (Kind::Reset, 8, 0x10c));
        assert_eq!(n + m, out.len());
        assert!(next(&out[..n - 1]).is_none());
    }
}
