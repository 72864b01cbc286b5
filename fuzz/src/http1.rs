//! HTTP/1 as both roles read it: request heads (the server's parser), chunked bodies under the
//! server's strict policy and the engine's lenient one, and the engine's response reader.

use crate::alloc::peak_during;
use crate::split::{engine_read, pieces};
use webstand_http1::chunked::{decode_all, Policy};
use webstand_http1::request::{parse_head, Limits};

/// Small limits, so that the fuzzer reaches them.
pub const LIMITS: Limits = Limits {
    max_request_line: 512,
    max_header_bytes: 2048,
    max_headers: 16,
};

/// A request head: parsed without allocating; accepted heads end at their blank line within the
/// limit; refusals are 400, 414 or 431; a head accepted whole is never refused in part.
pub fn request(data: &[u8]) {
    let (r, peak) = peak_during(|| parse_head(data, &LIMITS).map(|h| h.map(|h| h.len)));
    assert_eq!(peak, 0, "parse_head allocated");
    match r {
        Ok(Some(len)) => {
            assert!(len <= data.len() && len <= LIMITS.max_header_bytes);
            assert!(data[..len].ends_with(b"\r\n\r\n"), "{len}");
            for cut in [len / 2, len - 1] {
                let part = parse_head(&data[..cut], &LIMITS).map(|h| h.map(|h| h.len));
                assert_eq!(
                    part,
                    Ok(None),
                    "a prefix of {cut} bytes of an accepted head"
                );
            }
        }
        Ok(None) => assert!(data.len() <= LIMITS.max_header_bytes),
        Err(s) => assert!([400, 414, 431].contains(&s), "status {s}"),
    }
}

const CHUNKED_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

/// A chunked request body as the server reads it (the first byte sets the most it accepts): the
/// decoded data stays within that and memory within a few times it; what it accepts, the engine
/// reads to the same data, and the data encoded again decodes to itself.
pub fn chunked_strict(data: &[u8]) {
    let Some((&max, body)) = data.split_first() else {
        return;
    };
    let max = u64::from(max) * 4 + 1;
    let mut out = Vec::new();
    let (r, peak) = peak_during(|| decode_all(body, Policy::strict(max), &mut out));
    assert!(out.len() as u64 <= max);
    assert!(peak <= 4 * max as usize + 64, "held {peak} bytes");
    match r {
        Ok(Some(n)) => {
            assert!(n <= body.len());
            let msg = [CHUNKED_HEAD, &body[..n]].concat();
            let (e, p) = engine_read(&[&msg], false);
            assert_eq!(e, Ok(Some(msg.len())), "the engine disagrees");
            assert_eq!(p.body_len, out.len() as u64);
            round_trip(&out, Policy::strict(max));
        }
        Ok(None) => assert!(out.is_empty()),
        Err(e) => assert!([400, 413].contains(&e.status())),
    }
}

/// A chunked response body as the engine reads it (lenient, unbounded): the same read whole and
/// in pieces, memory within a few times the input, and the data encoded again decodes to itself.
pub fn chunked_lenient(data: &[u8]) {
    let parts = pieces(data);
    let whole: Vec<u8> = parts.concat();
    let mut out = Vec::new();
    let (r, peak) = peak_during(|| decode_all(&whole, Policy::LENIENT, &mut out));
    assert!(peak <= 4 * whole.len() + 64, "held {peak} bytes");
    let msg: Vec<&[u8]> = std::iter::once(CHUNKED_HEAD).chain(parts).collect();
    let (e, p) = engine_read(&msg, false);
    match r {
        Ok(Some(n)) => {
            assert_eq!(e, Ok(Some(CHUNKED_HEAD.len() + n)), "whole and in pieces");
            assert_eq!(p.body_len, out.len() as u64);
            round_trip(&out, Policy::LENIENT);
        }
        Ok(None) => assert!(e.as_ref().is_ok_and(Option::is_none), "{e:?}"),
        Err(_) => assert!(e.is_err(), "pieces accepted what whole was refused"),
    }
}

/// `data` chunked (in chunks of up to 7 bytes, with an extension and a trailer) decodes to itself.
fn round_trip(data: &[u8], policy: Policy) {
    let mut enc = Vec::new();
    for chunk in data.chunks(7) {
        enc.extend_from_slice(format!("{:x};x=y\r\n", chunk.len()).as_bytes());
        enc.extend_from_slice(chunk);
        enc.extend_from_slice(b"\r\n");
    }
    enc.extend_from_slice(b"0\r\nX-T: 1\r\n\r\n");
    let mut again = Vec::new();
    assert_eq!(decode_all(&enc, policy, &mut again), Ok(Some(enc.len())));
    assert_eq!(again, data, "round trip");
}

/// A response stream as the engine reads it (the first byte: a HEAD's answer or not, and the
/// pieces): the same outcome read whole and in pieces, memory within twice the input plus the
/// head limit.
pub fn engine_response(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let head_request = flags & 0x80 != 0;
    let step = usize::from(flags & 0x7f);
    let whole: &[u8] = rest;
    let ((a, pa), peak) = peak_during(|| engine_read(&[whole], head_request));
    assert!(peak <= 2 * whole.len() + 256 * 1024, "held {peak} bytes");
    let parts: Vec<&[u8]> = match step {
        0 => vec![whole],
        n => whole.chunks(n).collect(),
    };
    let (b, pb) = engine_read(&parts, head_request);
    assert_eq!(a, b, "whole and in pieces of {step}");
    if a.is_ok() {
        assert_eq!(
            (pa.status, pa.body_len, pa.keep_alive),
            (pb.status, pb.body_len, pb.keep_alive)
        );
    }
}
