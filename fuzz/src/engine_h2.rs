//! The engine's HTTP/2 response side as a state machine (`engine_h2`): one connection's session,
//! as a run opens it, fed a server's byte stream in reads of fuzzed size (the engine's `fuzzing`
//! entry). Whatever the server sends, every byte the engine writes is whole frames that parse,
//! its header blocks decode as requests; it never has more streams in flight than `-m` or the
//! server allows, never sends more than the server's windows let it, and never takes more than
//! its own windows (a stream past them does not count as complete); a response it counts complete
//! has the length the server framed; its memory stays within a bound set by the input.

use crate::alloc::peak_during;
use crate::frames::{self, Writer};
use crate::split::pieces;
use std::collections::HashMap;
use webstand_engine::fuzzing::h2::{drive, Knobs, Run};
use webstand_h2::frame::{write, Frame, Head, Kind, HEADER_LEN, PREFACE};
use webstand_h2::hpack::Encoder;
use webstand_h2::settings::{SettingId, DEFAULT_WINDOW, MIN_MAX_FRAME_SIZE};
use webstand_h2::ErrorCode;

/// The first byte says what the run asks: `-m` 1 to 4 (bits 0–1), a POST body (bit 2) of 100
/// bytes or of 70,000, past the server's initial windows (bit 3), small receive windows of
/// 2^8 - 1 (bit 4), a script keeping the responses (bit 5), 2 to 8 streams in all (bits 6–7).
fn knobs(b: u8) -> Knobs {
    Knobs {
        max_streams: 1 + u32::from(b & 3),
        window_bits: if b & 16 != 0 { 8 } else { 30 },
        connection_window_bits: if b & 16 != 0 { 8 } else { 30 },
        body: (b & 4 != 0).then_some(if b & 8 != 0 { 70_000 } else { 100 }),
        budget: 2 + 2 * usize::from(b >> 6),
        keep: b & 32 != 0,
    }
}

/// The most the connection may hold while it reads `input` bytes: the request bodies, the
/// prepared blocks, and what the server's bytes decode to (a header block may name a 4 KiB
/// table entry in one byte: up to the engine's header list limit per stream).
fn bound(input: usize) -> usize {
    64 * input + (3 << 20)
}

/// The target: the first byte the knobs, the second the size of the reads, the rest the server's.
pub fn target(data: &[u8]) {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let knobs = knobs(k);
    let reads = pieces(rest);
    let (run, peak) = peak_during(|| drive(&knobs, &reads));
    assert!(
        peak <= bound(data.len()),
        "held {peak} bytes for {}",
        data.len()
    );
    let server = Server::read(&reads.concat());
    let sent = Sent::read(&run.written);
    check(&knobs, &run, &server, &sent);
}

/// What the server's bytes say, read as the engine reads them (frame by frame, until the first
/// frame it could not take): per stream, the DATA up to its END_STREAM, and the windows granted.
#[derive(Default)]
struct Server {
    data: HashMap<u32, u64>,
    ended: HashMap<u32, bool>,
    /// The largest SETTINGS_INITIAL_WINDOW_SIZE it named (the default if none).
    initial_window: u64,
    granted: HashMap<u32, u64>,
}

impl Server {
    fn read(mut bytes: &[u8]) -> Server {
        let mut s = Server {
            initial_window: u64::from(DEFAULT_WINDOW),
            ..Server::default()
        };
        while let Some(head) = Head::peek(bytes) {
            let end = HEADER_LEN + head.len as usize;
            if head.check_len(MIN_MAX_FRAME_SIZE).is_err() || bytes.len() < end {
                break;
            }
            match Frame::parse(head, &bytes[HEADER_LEN..end]) {
                Ok(f) => s.frame(f),
                Err(webstand_h2::Error::Stream { .. }) => {}
                Err(_) => break,
            }
            bytes = &bytes[end..];
        }
        s
    }

    fn frame(&mut self, f: Frame) {
        match f {
            Frame::Data {
                stream,
                end_stream,
                data,
                ..
            } if !self.over(stream) => {
                *self.data.entry(stream).or_default() += data.len() as u64;
                self.ended.insert(stream, end_stream);
            }
            Frame::Headers {
                stream,
                end_stream: true,
                ..
            } => {
                self.ended.insert(stream, true);
            }
            Frame::Settings { ack: false, params } => {
                for p in params.chunks_exact(6) {
                    if u16::from_be_bytes([p[0], p[1]]) == SettingId::InitialWindowSize as u16 {
                        let v = u32::from_be_bytes([p[2], p[3], p[4], p[5]]);
                        self.initial_window = self.initial_window.max(u64::from(v));
                    }
                }
            }
            Frame::WindowUpdate { stream, increment } => {
                *self.granted.entry(stream).or_default() += u64::from(increment);
            }
            _ => {}
        }
    }

    fn over(&self, stream: u32) -> bool {
        self.ended.get(&stream).copied().unwrap_or(false)
    }
}

/// What the engine wrote, checked frame by frame as a server reads it.
#[derive(Default)]
struct Sent {
    /// DATA sent per stream (0: the connection's sum).
    data: HashMap<u32, u64>,
    /// WINDOW_UPDATE increments granted per stream (0: the connection).
    granted: HashMap<u32, u64>,
}

impl Sent {
    fn read(written: &[u8]) -> Sent {
        assert!(
            written.starts_with(PREFACE),
            "the engine's bytes open with the preface"
        );
        let mut sent = Sent::default();
        let engine = Writer {
            who: "engine",
            first_field: b":method",
        };
        let mut last_new = 0u32;
        let new_stream = |stream: u32| {
            assert!(
                stream % 2 == 1 && stream > last_new,
                "a request on stream {stream}"
            );
            last_new = stream;
        };
        frames::read(&written[PREFACE.len()..], &engine, new_stream, |f| {
            sent.frame(f)
        });
        sent
    }

    fn frame(&mut self, f: Frame) {
        match f {
            Frame::Data { stream, data, .. } => {
                *self.data.entry(stream).or_default() += data.len() as u64;
                *self.data.entry(0).or_default() += data.len() as u64;
            }
            Frame::WindowUpdate { stream, increment } => {
                *self.granted.entry(stream).or_default() += u64::from(increment);
            }
            _ => {}
        }
    }
}

fn get(map: &HashMap<u32, u64>, key: u32) -> u64 {
    map.get(&key).copied().unwrap_or(0)
}

fn check(knobs: &Knobs, run: &Run, server: &Server, sent: &Sent) {
    for &(in_flight, limit) in &run.in_flight {
        assert!(
            in_flight as u32 <= limit,
            "{in_flight} streams in flight, limit {limit}"
        );
        assert!(limit <= knobs.max_streams);
    }
    // What the engine sent, within the windows the server gave.
    let body = knobs.body.unwrap_or(0) as u64;
    let mut streams = 0;
    for (&id, &n) in &sent.data {
        if id == 0 {
            let window = u64::from(DEFAULT_WINDOW) + get(&server.granted, 0);
            assert!(
                n <= window,
                "{n} bytes of DATA sent, the connection's window {window}"
            );
            continue;
        }
        streams += 1;
        let window = server.initial_window + get(&server.granted, id);
        assert!(
            n <= window.min(body),
            "{n} bytes sent on stream {id}, window {window}"
        );
    }
    assert!(streams <= knobs.budget);
    // What it took, within its own windows; what it counts complete, as the server framed it.
    let connection = u64::from(run.connection_window.max(DEFAULT_WINDOW));
    let mut taken = 0;
    for e in run.ended.iter().filter(|e| e.complete) {
        let id = e.id as u32;
        assert!(
            (200..600).contains(&e.status),
            "complete with status {}",
            e.status
        );
        assert_eq!(e.body_len, get(&server.data, id), "stream {id}'s length");
        let window = u64::from(run.stream_window) + get(&sent.granted, id);
        assert!(
            e.body_len <= window,
            "stream {id} took {} past its window {window}",
            e.body_len
        );
        if knobs.keep {
            assert_eq!(e.kept_body, Some(e.body_len as usize));
        }
        taken += e.body_len;
    }
    assert!(
        taken <= connection + get(&sent.granted, 0),
        "{taken} bytes past the connection's window"
    );
}

/// A response's fields as a server's encoder writes them.
fn response(enc: &mut Encoder, status: &str, more: &[(&str, &str)]) -> Vec<u8> {
    let mut fields = vec![
        (":status", status),
        ("server", "webstand"),
        ("content-type", "text/plain"),
    ];
    fields.extend_from_slice(more);
    let mut out = Vec::new();
    enc.encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut out,
    );
    out
}

/// The server's SETTINGS alone (the first read: the engine opens its streams after it).
fn settings(params: &[(SettingId, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    write::settings(&mut out, params);
    out
}

/// Seeds: a server's answers written by our frame writer and HPACK encoder, the first read cut
/// at the end of its SETTINGS (the second byte), and what our own server answers to a client.
pub fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    let mut add = |knobs: u8, first: Vec<u8>, rest: Vec<u8>| {
        let size = u8::try_from(first.len()).expect("a short SETTINGS");
        seeds.push([vec![knobs, size], first, rest].concat());
    };
    // Two GETs at once: answered whole, one in pieces with trailers; PING, window and priority.
    let mut enc = Encoder::new();
    let mut out = Vec::new();
    write::settings_ack(&mut out);
    write::headers(
        &mut out,
        1,
        false,
        &response(&mut enc, "200", &[("content-length", "5")]),
        16_384,
    );
    write::ping(&mut out, false, *b"pingpong");
    write::headers(
        &mut out,
        3,
        false,
        &response(&mut enc, "103", &[("link", "</a.css>")]),
        16_384,
    );
    write::headers(&mut out, 3, false, &response(&mut enc, "404", &[]), 8);
    write::data(&mut out, 1, true, b"hello");
    write::data(&mut out, 3, false, b"not ");
    write::window_update(&mut out, 0, 1 << 16);
    write::data(&mut out, 3, false, b"here");
    let mut trailers = Vec::new();
    enc.encode([(&b"x-checksum"[..], &b"1"[..])], &mut trailers);
    write::headers(&mut out, 3, true, &trailers, 16_384);
    add(
        0x41,
        settings(&[
            (SettingId::MaxConcurrentStreams, 100),
            (SettingId::HeaderTableSize, 4096),
        ]),
        out,
    );
    // A POST past the initial window: the server grants more; then a GOAWAY and a reset.
    let mut out = Vec::new();
    write::settings_ack(&mut out);
    write::window_update(&mut out, 0, 100_000);
    write::window_update(&mut out, 1, 100_000);
    write::headers(
        &mut out,
        1,
        false,
        &response(&mut Encoder::new(), "201", &[]),
        16_384,
    );
    // A padded DATA frame (flag 0x8): its padding counts against the window only.
    Head::new(Kind::Data, 0x8 | 0x1, 1, 1 + 2 + 3).write(&mut out);
    out.extend_from_slice(&[3, b'o', b'k', 0, 0, 0]);
    write::rst_stream(&mut out, 3, ErrorCode::RefusedStream);
    write::goaway(&mut out, 1, ErrorCode::NoError, b"bye");
    add(
        0x0d,
        settings(&[
            (SettingId::InitialWindowSize, 1000),
            (SettingId::MaxFrameSize, 20_000),
        ]),
        out,
    );
    // Small windows of our own, a server with a table of 0 and a limit of one stream.
    let mut enc = Encoder::new();
    enc.set_peer_table_size(0);
    let mut out = Vec::new();
    write::headers(&mut out, 1, false, &response(&mut enc, "200", &[]), 16_384);
    write::data(&mut out, 1, false, &[b'x'; 200]);
    write::data(&mut out, 1, true, &[b'y'; 200]);
    add(
        0x30,
        settings(&[
            (SettingId::HeaderTableSize, 0),
            (SettingId::MaxConcurrentStreams, 1),
        ]),
        out,
    );
    // Our own server's answers to a client's requests on streams 1, 3 and 5.
    let written = crate::messages::server_h2();
    if let Some(head) = Head::peek(&written) {
        let cut = (HEADER_LEN + head.len as usize).min(written.len());
        add(0xc2, written[..cut].to_vec(), written[cut..].to_vec());
    }
    seeds
}
