//! The FastCGI/1.0 record codec, client side: the records a web server writes (BEGIN_REQUEST,
//! PARAMS, STDIN) and the ones it reads back (STDOUT, STDERR, END_REQUEST).
//!
//! Hand-rolled on purpose: the Rust FastCGI crates are either application-side (they answer
//! requests) or clients tied to an async runtime that owns the socket, and the server drives its
//! backend sockets from its own non-blocking mio loop. The format is small (an 8-byte header,
//! length-prefixed name-value pairs), so a codec over byte slices is all the loop needs: it encodes
//! into a buffer the loop writes when the socket has room, and decodes from whatever bytes arrived.

/// The only version of the protocol.
const VERSION: u8 = 1;
const BEGIN_REQUEST: u8 = 1;
const END_REQUEST: u8 = 3;
const PARAMS: u8 = 4;
const STDIN: u8 = 5;
const STDOUT: u8 = 6;
const STDERR: u8 = 7;
/// The role of a server that wants an HTTP answer.
const RESPONDER: u16 = 1;
/// BEGIN_REQUEST flag: keep the connection open after this request.
const KEEP_CONN: u8 = 1;
/// Most content bytes in one record (the length is 16 bits).
const MAX_CONTENT: usize = 0xffff;
/// The protocol status of a request that completed normally.
const REQUEST_COMPLETE: u8 = 0;

/// The one request id used: a backend connection carries one request at a time.
pub const REQUEST_ID: u16 = 1;

fn header(out: &mut Vec<u8>, kind: u8, len: usize) {
    let len = len as u16;
    out.extend_from_slice(&[VERSION, kind]);
    out.extend_from_slice(&REQUEST_ID.to_be_bytes());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&[0, 0]); // no padding, reserved
}

/// BEGIN_REQUEST for a responder, asking the backend to keep the connection when `keep_conn`.
pub fn begin_request(out: &mut Vec<u8>, keep_conn: bool) {
    header(out, BEGIN_REQUEST, 8);
    out.extend_from_slice(&RESPONDER.to_be_bytes());
    out.push(if keep_conn { KEEP_CONN } else { 0 });
    out.extend_from_slice(&[0; 5]);
}

/// The length prefix of a name or value: one byte below 128, else four with the top bit set.
fn push_len(buf: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        buf.push(len as u8);
    } else {
        buf.extend_from_slice(&((len as u32) | 0x8000_0000).to_be_bytes());
    }
}

/// Appends one name-value pair to a PARAMS stream being built.
pub fn push_param(stream: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    push_len(stream, name.len());
    push_len(stream, value.len());
    stream.extend_from_slice(name);
    stream.extend_from_slice(value);
}

/// Part of a stream (PARAMS or STDIN) as records of at most 64 KiB - 1.
fn records(out: &mut Vec<u8>, kind: u8, bytes: &[u8]) {
    for piece in bytes.chunks(MAX_CONTENT) {
        header(out, kind, piece.len());
        out.extend_from_slice(piece);
    }
}

/// A whole stream: its records, then the empty record that ends it.
fn stream(out: &mut Vec<u8>, kind: u8, bytes: &[u8]) {
    records(out, kind, bytes);
    header(out, kind, 0);
}

/// The encoded name-value pairs as PARAMS records.
pub fn params(out: &mut Vec<u8>, pairs: &[u8]) {
    stream(out, PARAMS, pairs);
}

/// A piece of a request body still arriving, as STDIN records (none for an empty piece).
pub fn stdin_piece(out: &mut Vec<u8>, piece: &[u8]) {
    records(out, STDIN, piece);
}

/// The empty STDIN record: the body is over.
pub fn stdin_end(out: &mut Vec<u8>) {
    header(out, STDIN, 0);
}

/// One record read from the backend.
#[derive(Debug, PartialEq, Eq)]
pub enum Record<'a> {
    Stdout(&'a [u8]),
    Stderr(&'a [u8]),
    /// The request is over; `complete` when the backend finished it normally.
    End {
        complete: bool,
    },
}

/// Why the backend's bytes are not FastCGI a responder's server can accept.
#[derive(Debug, PartialEq, Eq)]
pub struct Garbage(pub &'static str);

/// Decodes the record at the start of `buf`: Ok(None) while it is incomplete, else the record and
/// the bytes it took (padding included).
pub fn next(buf: &[u8]) -> Result<Option<(Record<'_>, usize)>, Garbage> {
    if buf.len() < 8 {
        return Ok(None);
    }
    if buf[0] != VERSION {
        return Err(Garbage("not a FastCGI/1.0 record"));
    }
    if u16::from_be_bytes([buf[2], buf[3]]) != REQUEST_ID {
        return Err(Garbage("a record for a request id never sent"));
    }
    let len = usize::from(u16::from_be_bytes([buf[4], buf[5]]));
    let total = 8 + len + usize::from(buf[6]);
    if buf.len() < total {
        return Ok(None);
    }
    let content = &buf[8..8 + len];
    let record = match buf[1] {
        STDOUT => Record::Stdout(content),
        STDERR => Record::Stderr(content),
        END_REQUEST if len >= 8 => Record::End {
            complete: content[4] == REQUEST_COMPLETE,
        },
        END_REQUEST => return Err(Garbage("a short END_REQUEST record")),
        _ => return Err(Garbage("a record type a responder never sends")),
    };
    Ok(Some((record, total)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_split_at_the_record_limit_and_end_empty() {
        let mut out = Vec::new();
        stdin_piece(&mut out, &vec![b'x'; 70_000]);
        stdin_end(&mut out);
        assert_eq!(&out[..8], &[1, STDIN, 0, 1, 0xff, 0xff, 0, 0]);
        let second = 8 + 0xffff;
        assert_eq!(
            &out[second..second + 8],
            &[1, STDIN, 0, 1, 0x11, 0x71, 0, 0]
        );
        let end = second + 8 + 4465;
        assert_eq!(&out[end..], &[1, STDIN, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn a_body_in_pieces_is_the_same_stream_as_a_whole_one() {
        let body = vec![b'y'; 100_000];
        let mut whole = Vec::new();
        stream(&mut whole, STDIN, &body);
        let mut pieces = Vec::new();
        stdin_piece(&mut pieces, &body[..0xffff]);
        stdin_piece(&mut pieces, &[]);
        stdin_piece(&mut pieces, &body[0xffff..]);
        stdin_end(&mut pieces);
        assert_eq!(pieces, whole);
    }

    #[test]
    fn pairs_use_one_or_four_length_bytes() {
        let mut s = Vec::new();
        push_param(&mut s, b"A", &[b'v'; 200]);
        assert_eq!(&s[..5], &[1, 0x80, 0, 0, 200]);
        assert_eq!(s[5], b'A');
        assert_eq!(s.len(), 5 + 1 + 200);
    }

    #[test]
    fn records_decode_with_padding_and_refuse_garbage() {
        let rec = [1, STDOUT, 0, 1, 0, 2, 3, 0, b'h', b'i', 0, 0, 0];
        assert_eq!(next(&rec), Ok(Some((Record::Stdout(b"hi"), 13))));
        assert_eq!(next(&rec[..12]), Ok(None));
        let end = [1, END_REQUEST, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(next(&end), Ok(Some((Record::End { complete: true }, 16))));
        assert!(next(b"HTTP/1.1 200 OK\r\n").is_err());
        assert!(next(&[1, STDOUT, 0, 2, 0, 0, 0, 0]).is_err());
        assert!(next(&[1, 99, 0, 1, 0, 0, 0, 0]).is_err());
    }
}
