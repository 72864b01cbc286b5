//! Property-based tests (proptest) of the parsers where a property needs structure a byte fuzzer
//! cannot see: request heads built from fields and parsed back (crates/http1/src/request.rs),
//! chunked bodies built from chunks that the server's strict decoder and the engine's response
//! parser both read to the same data, Range headers against an oracle that marks every byte asked
//! for (the server's range.rs), request paths decoded, encoded and decoded again (path.rs), and
//! responses built from fields that the engine parses back (crates/engine/src/h1/response.rs).
//! Bytes from the other side at large are fuzzed by coverage instead (fuzz/, docs/FUZZING.md);
//! a counting allocator still bounds what each call here holds. `CASES` costs seconds.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use webstand_engine::{Feed, ResponseParser};
use webstand_http1::chunked::{decode_all, ChunkError, Policy};
use webstand_http1::framing::RequestBody as Body;
use webstand_http1::request::{parse_head, Limits};
use webstand_server::range::{plan, Plan};

/// The server's reading of a chunked request body: the status it answers a malformed one with.
fn decode_chunked(buf: &[u8], max: u64, out: &mut Vec<u8>) -> Result<Option<usize>, u16> {
    decode_all(buf, Policy::strict(max), out).map_err(ChunkError::status)
}

// The fuzz targets' counting allocator, the one copy: this binary installs it as its own.
#[path = "../fuzz/src/alloc.rs"]
mod alloc;
use alloc::peak_during;

/// Cases per property: a few seconds in all (the coverage-guided targets do the volume).
const CASES: [(&str, u32); 5] = [
    ("server_head_round_trip", 4_000),
    ("chunked_agreement", 4_000),
    ("range_plan", 10_000),
    ("path_decode", 10_000),
    ("response_round_trip", 4_000),
];

fn runner(name: &str) -> TestRunner {
    let cases = CASES.iter().find(|(n, _)| *n == name).map(|c| c.1).unwrap();
    TestRunner::new(Config {
        cases,
        // Found failures become named regression tests, not files beside the sources.
        failure_persistence: None,
        ..Config::default()
    })
}

/// Bytes from an alphabet that HTTP parsers care about, with any byte now and then.
fn http_bytes(alphabet: &'static [u8], max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![6 => prop::sample::select(alphabet), 1 => any::<u8>()],
        0..max,
    )
}

/// `valid` with a few random edits (replace, insert or delete one byte each).
fn mutated(valid: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let edits = prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 0..4);
    edits.prop_map(move |edits| {
        let mut v = valid.clone();
        for (at, kind, byte) in edits {
            if v.is_empty() {
                v.push(byte);
                continue;
            }
            let i = at.index(v.len());
            match kind {
                0 => v[i] = byte,
                1 => v.insert(i, byte),
                _ => {
                    v.remove(i);
                }
            }
        }
        v
    })
}

const LIMITS: Limits = Limits {
    max_request_line: 512,
    max_header_bytes: 2048,
    max_headers: 16,
};

/// A field name, a field value, both plain.
fn token(min: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&b"abcxyzABC019-_"[..]), min..12)
        .prop_map(|v| String::from_utf8(v).unwrap())
}

#[derive(Debug, Clone)]
struct BuiltRequest {
    method: &'static str,
    target: String,
    minor: u8,
    extra: Vec<(String, String)>,
    length: Option<u64>,
    close: bool,
}

impl BuiltRequest {
    fn bytes(&self) -> Vec<u8> {
        let mut s = format!(
            "{} {} HTTP/1.{}\r\nHost: h\r\n",
            self.method, self.target, self.minor
        );
        for (n, v) in &self.extra {
            s += &format!("X-{n}: {v}\r\n");
        }
        if let Some(n) = self.length {
            s += &format!("Content-Length: {n}\r\n");
        }
        if self.close {
            s += "Connection: close\r\n";
        }
        s += "\r\n";
        s.into_bytes()
    }
}

fn built_request() -> impl Strategy<Value = BuiltRequest> {
    (
        prop::sample::select(&["GET", "HEAD", "POST", "OPTIONS"][..]),
        token(0).prop_map(|p| format!("/{p}")),
        0u8..2,
        prop::collection::vec((token(1), token(0)), 0..8),
        prop::option::of(0u64..1_000_000),
        any::<bool>(),
    )
        .prop_map(
            |(method, target, minor, extra, length, close)| BuiltRequest {
                method,
                target,
                minor,
                extra,
                length,
                close,
            },
        )
}

#[test]
fn server_head_round_trip() {
    let input = (built_request(), any::<prop::sample::Index>());
    runner("server_head_round_trip")
        .run(&input, |(req, cut)| {
            let bytes = req.bytes();
            let h = parse_head(&bytes, &LIMITS).map_err(|s| TestCaseError::fail(format!("{s}")))?;
            let h = h.ok_or_else(|| TestCaseError::fail("incomplete"))?;
            prop_assert_eq!(h.method_name, req.method);
            prop_assert_eq!(h.target, req.target.as_bytes());
            prop_assert_eq!(h.minor, req.minor);
            prop_assert_eq!(h.keep_alive, req.minor == 1 && !req.close);
            prop_assert_eq!(h.len, bytes.len());
            let body = match req.length {
                None | Some(0) => Body::None,
                Some(n) => Body::Length(n),
            };
            prop_assert_eq!(h.body, body);
            // A valid head arriving in pieces is never refused before its end.
            let prefix = &bytes[..cut.index(bytes.len())];
            prop_assert!(
                matches!(parse_head(prefix, &LIMITS), Ok(None)),
                "prefix {:?}",
                prefix
            );
            Ok(())
        })
        .unwrap();
}

/// A chunked body: chunks (with extensions) and trailers, encoded.
fn chunked() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    let chunk = (
        prop::collection::vec(any::<u8>(), 1..40),
        prop::option::of(token(1)),
        any::<bool>(),
    );
    (
        prop::collection::vec(chunk, 0..6),
        prop::collection::vec((token(1), token(0)), 0..3),
        prop::option::of(token(1)),
    )
        .prop_map(|(chunks, trailers, last_ext)| {
            let (mut data, mut enc) = (Vec::new(), Vec::new());
            for (bytes, ext, upper) in chunks {
                let size = if upper {
                    format!("{:X}", bytes.len())
                } else {
                    format!("{:x}", bytes.len())
                };
                enc.extend_from_slice(size.as_bytes());
                if let Some(e) = ext {
                    enc.extend_from_slice(format!(";{e}=\"v\"").as_bytes());
                }
                enc.extend_from_slice(b"\r\n");
                enc.extend_from_slice(&bytes);
                enc.extend_from_slice(b"\r\n");
                data.extend_from_slice(&bytes);
            }
            enc.push(b'0');
            if let Some(e) = last_ext {
                enc.extend_from_slice(format!(";{e}").as_bytes());
            }
            enc.extend_from_slice(b"\r\n");
            for (n, v) in trailers {
                enc.extend_from_slice(format!("X-{n}: {v}\r\n").as_bytes());
            }
            enc.extend_from_slice(b"\r\n");
            (data, enc)
        })
}

const CHUNKED_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

/// Feeds a response to the engine's parser in the given pieces: Ok(Some(consumed)) when complete.
fn engine_parse(
    msg: &[u8],
    cuts: &[usize],
    head_request: bool,
) -> (Result<Option<usize>, String>, ResponseParser) {
    let mut p = ResponseParser::default();
    p.begin(head_request);
    let mut points: Vec<usize> = cuts.iter().map(|&c| c.min(msg.len())).collect();
    points.push(msg.len());
    points.sort_unstable();
    let mut pos = 0;
    for end in points {
        if end < pos {
            continue;
        }
        match p.feed(&msg[pos..end]) {
            Ok(Feed::Done(n)) => return (Ok(Some(pos + n)), p),
            Ok(Feed::More) => pos = end,
            Err(e) => return (Err(e.to_string()), p),
        }
    }
    (Ok(None), p)
}

#[test]
fn chunked_agreement() {
    let input = (chunked(), prop::collection::vec(0usize..400, 0..4));
    runner("chunked_agreement")
        .run(&input, |((data, enc), cuts)| {
            let mut out = Vec::new();
            prop_assert_eq!(decode_chunked(&enc, 1 << 20, &mut out), Ok(Some(enc.len())));
            prop_assert_eq!(&out, &data);
            let msg = [CHUNKED_HEAD, &enc, b"HTTP/1.1 200"].concat();
            let (r, p) = engine_parse(&msg, &cuts, false);
            prop_assert_eq!(r, Ok(Some(CHUNKED_HEAD.len() + enc.len())));
            prop_assert_eq!(p.body_len, data.len() as u64);
            Ok(())
        })
        .unwrap();
}

#[derive(Debug, Clone)]
enum Spec {
    Span(u64, u64),
    From(u64),
    Suffix(u64),
    Junk(String),
}

fn number() -> impl Strategy<Value = u64> {
    prop_oneof![8 => 0u64..320, 1 => any::<u64>().prop_map(|n| n % 10_000_000_000_000_000_000)]
}

fn spec() -> impl Strategy<Value = Spec> {
    prop_oneof![
        6 => (number(), number()).prop_map(|(a, b)| Spec::Span(a, b)),
        2 => number().prop_map(Spec::From),
        2 => number().prop_map(Spec::Suffix),
        1 => token(0).prop_map(Spec::Junk),
    ]
}

/// What RFC 9110 §14 and the server's documented choices make of `specs` for a file of `size`
/// bytes, computed the slow way: a bitmap of the bytes asked for.
fn range_oracle(specs: &[Spec], size: u64, max_ranges: usize) -> (Plan, Vec<(u64, u64)>) {
    let mut asked = vec![false; size as usize];
    for s in specs {
        let (first, last) = match *s {
            Spec::Span(a, b) if a <= b => (a, b.min(size.saturating_sub(1))),
            Spec::From(a) => (a, size.saturating_sub(1)),
            Spec::Suffix(n) if n > 0 => (size - n.min(size), size.saturating_sub(1)),
            Spec::Suffix(_) => continue,
            _ => return (Plan::Whole, vec![]),
        };
        for b in first..=last.min(size.saturating_sub(1)) {
            if first < size {
                asked[b as usize] = true;
            }
        }
    }
    if specs.is_empty() {
        return (Plan::Whole, vec![]);
    }
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for (i, &on) in asked.iter().enumerate() {
        match runs.last_mut() {
            Some(r) if on && r.1 + 1 == i as u64 => r.1 = i as u64,
            _ if on => runs.push((i as u64, i as u64)),
            _ => {}
        }
    }
    match runs.len() {
        0 => (Plan::Unsatisfiable, vec![]),
        n if n > max_ranges => (Plan::Whole, vec![]),
        _ => (Plan::Parts, runs),
    }
}

#[test]
fn range_plan() {
    let input = prop_oneof![
        4 => (prop::collection::vec(spec(), 0..12), 0u64..300, 1usize..8).prop_map(|(s, size, max)| (Some(s), Vec::new(), size, max)),
        1 => (http_bytes(b"bytes=0123456789-, ", 80), 0u64..300, 1usize..8).prop_map(|(b, size, max)| (None, b, size, max)),
    ];
    runner("range_plan")
        .run(&input, |(specs, raw, size, max_ranges)| {
            let header = match &specs {
                Some(specs) => {
                    let parts: Vec<String> = specs
                        .iter()
                        .map(|s| match s {
                            Spec::Span(a, b) => format!("{a}-{b}"),
                            Spec::From(a) => format!("{a}-"),
                            Spec::Suffix(n) => format!("-{n}"),
                            Spec::Junk(j) => format!("{j}x"),
                        })
                        .collect();
                    format!("bytes={}", parts.join(", ")).into_bytes()
                }
                None => raw,
            };
            let mut out = Vec::new();
            let (p, peak) = peak_during(|| plan(&header, size, max_ranges, &mut out));
            prop_assert!(peak <= 16 * 1000 * 2, "planning held {} bytes", peak);
            if p == Plan::Parts {
                prop_assert!(!out.is_empty() && out.len() <= max_ranges);
                for w in out.windows(2) {
                    prop_assert!(w[0].1 + 1 < w[1].0, "not merged: {:?}", out);
                }
                prop_assert!(out.iter().all(|&(a, b)| a <= b && b < size));
            }
            if let Some(specs) = specs {
                let (want, ranges) = range_oracle(&specs, size, max_ranges);
                prop_assert_eq!(
                    (&p, &out),
                    (&want, &ranges),
                    "header {}",
                    String::from_utf8_lossy(&header)
                );
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn path_decode() {
    let input = prop_oneof![
        http_bytes(b"/./.%2e2E5cC0fFaA\\%00zx", 60),
        mutated(b"/a/b%20c/../d%2e%2e/%c3%a9/x".to_vec()),
    ];
    runner("path_decode")
        .run(&input, |raw| {
            let mut out = String::new();
            let (r, peak) = peak_during(|| webstand_server::path::decode(&raw, &mut out));
            prop_assert!(
                peak <= 4 * raw.len() + 64,
                "decoding {} bytes held {}",
                raw.len(),
                peak
            );
            if r.is_ok() {
                prop_assert!(!out.starts_with('/') && !out.ends_with('/'));
                for seg in out.split('/') {
                    prop_assert!(
                        !matches!(seg, "" | "." | "..") || out.is_empty(),
                        "segment {:?} in {:?}",
                        seg,
                        out
                    );
                }
                prop_assert!(!out
                    .bytes()
                    .any(|b| b < 0x20 || b == 0x7f || b == b'\\' || b == b'%'));
                // Encoding the result and decoding it again gives it back.
                let mut enc = String::from("/");
                webstand_server::path::encode(&out, &mut enc);
                let mut again = String::new();
                prop_assert!(webstand_server::path::decode(enc.as_bytes(), &mut again).is_ok());
                prop_assert_eq!(&again, &out);
            }
            Ok(())
        })
        .unwrap();
}

#[derive(Debug, Clone, Copy)]
enum Framing {
    Length,
    Chunked,
    Close,
}

#[test]
fn response_round_trip() {
    let input = (
        prop_oneof![200u16..600, Just(204), Just(304)],
        0u8..2,
        prop::sample::select(&[None, Some("close"), Some("keep-alive")][..]),
        prop::sample::select(&[Framing::Length, Framing::Chunked, Framing::Close][..]),
        prop::collection::vec(any::<u8>(), 0..100),
        prop::collection::vec((token(1), token(0)), 0..6),
        (any::<bool>(), prop::collection::vec(0usize..300, 0..3)),
    );
    runner("response_round_trip")
        .run(
            &input,
            |(status, minor, connection, framing, body, extra, (head_request, cuts))| {
                let mut head = format!("HTTP/1.{minor} {status} Whatever\r\n");
                for (n, v) in &extra {
                    head += &format!("X-{n}: {v}\r\n");
                }
                if let Some(c) = connection {
                    head += &format!("Connection: {c}\r\n");
                }
                let no_body = head_request || status == 204 || status == 304;
                let mut msg = match framing {
                    Framing::Length => {
                        format!("{head}Content-Length: {}\r\n\r\n", body.len()).into_bytes()
                    }
                    Framing::Chunked => {
                        format!("{head}Transfer-Encoding: chunked\r\n\r\n").into_bytes()
                    }
                    Framing::Close => format!("{head}\r\n").into_bytes(),
                };
                if !no_body {
                    match framing {
                        Framing::Chunked if !body.is_empty() => {
                            msg.extend_from_slice(format!("{:x}\r\n", body.len()).as_bytes());
                            msg.extend_from_slice(&body);
                            msg.extend_from_slice(b"\r\n0\r\n\r\n");
                        }
                        Framing::Chunked => msg.extend_from_slice(b"0\r\n\r\n"),
                        _ => msg.extend_from_slice(&body),
                    }
                }
                let (r, mut p) = engine_parse(&msg, &cuts, head_request);
                let until_close = matches!(framing, Framing::Close) && !no_body;
                if until_close {
                    prop_assert_eq!(r, Ok(None));
                    prop_assert!(p.eof());
                    prop_assert!(!p.keep_alive);
                } else {
                    prop_assert_eq!(r, Ok(Some(msg.len())));
                    let keep = match connection {
                        Some("close") => false,
                        Some(_) => true,
                        None => minor == 1,
                    };
                    prop_assert_eq!(p.keep_alive, keep);
                }
                prop_assert_eq!(p.status, status);
                prop_assert_eq!(p.body_len, if no_body { 0 } else { body.len() as u64 });
                Ok(())
            },
        )
        .unwrap();
}
