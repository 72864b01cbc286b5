//! Serve's connections driven by fuzzed byte streams with no socket (the server's `fuzzing`
//! entry: its HTTP/1 and HTTP/2 protocols as the loop drives them): whatever a client sends,
//! every byte the server writes back parses as responses (HTTP/1) or as frames whose header
//! blocks decode (HTTP/2), and the connection's memory stays within a bound set by its limits
//! and the input's size.

use crate::alloc::peak_during;
use crate::frames::{self, Writer};
use crate::split::pieces;
use webstand_engine::{Feed, ResponseParser};
use webstand_h2::frame::PREFACE;
use webstand_server::fuzzing::{drive, Session, Speak};
use webstand_server::Config;

/// Small limits, so that the fuzzer reaches them.
fn config() -> Config {
    Config {
        max_request_line: 256,
        max_header_bytes: 1024,
        max_headers: 16,
        max_body: 4096,
        ..Config::default()
    }
}

/// The most a connection may hold while it reads `input` bytes: its buffers within the limits,
/// and the answers to what it read (a small multiple of the input: each request a few bytes, its
/// answer a head of a few hundred).
fn bound(input: usize) -> usize {
    64 * input + (512 << 10)
}

/// HTTP/1: the first byte sets the size of the reads, the rest is what the client sends.
pub fn http1(data: &[u8]) {
    let parts = pieces(data);
    let (session, peak) = peak_during(|| drive(Speak::Http1, &config(), &parts));
    assert!(
        peak <= bound(data.len()),
        "held {peak} bytes for {}",
        data.len()
    );
    read_responses(&session);
}

/// Every byte written is a sequence of whole responses (the last may run to the close).
fn read_responses(session: &Session) {
    let mut rest: &[u8] = &session.written;
    let mut heads = session.head_requests.iter().copied();
    let mut p = ResponseParser::default();
    while !rest.is_empty() {
        // The server's own refusals (400, 408, 413, …) answer no HEAD the service saw; they
        // close the connection, so they come last.
        let head_request = heads.next().unwrap_or(false);
        p.begin(head_request);
        match p.feed(rest) {
            Ok(Feed::Done(n)) => rest = &rest[n..],
            Ok(Feed::More) => {
                assert!(p.eof(), "a response cut short: {}", show(rest));
                assert!(
                    session.closed,
                    "a response to the close, but the connection stays"
                );
                return;
            }
            Err(e) => panic!("the server wrote garbage ({e}): {}", show(rest)),
        }
    }
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned()
}

/// HTTP/2: as HTTP/1, the client's preface put first unless the input starts one itself.
pub fn http2(data: &[u8]) {
    let parts = pieces(data);
    let with_preface: Vec<&[u8]> = match parts.first() {
        Some(p) if p.starts_with(b"PRI") => parts,
        _ => std::iter::once(&PREFACE[..]).chain(parts).collect(),
    };
    let (session, peak) = peak_during(|| drive(Speak::Http2, &config(), &with_preface));
    assert!(
        peak <= bound(data.len()),
        "held {peak} bytes for {}",
        data.len()
    );
    read_frames(&session.written);
}

/// Every byte written is whole frames, SETTINGS first; every frame parses; every header block
/// decodes and opens with `:status`, on a client's (odd) stream.
fn read_frames(written: &[u8]) {
    let server = Writer {
        who: "server",
        first_field: b":status",
    };
    let odd = |stream: u32| assert!(stream % 2 == 1, "an answer on stream {stream}");
    frames::read(written, &server, odd, |_| {});
}
