//! The engine's HTTP/3 layer above QUIC as a state machine (`engine_h3`): a connection's request
//! streams and the server's unidirectional streams (control, QPACK encoder and decoder, others)
//! fed as byte streams, in an order and in pieces the input chooses, with resets and FINs (the
//! engine's `fuzzing` entry; quinn-proto stays out). Whatever the server sends, a response the
//! engine counts complete ended on a frame boundary with a final status and has the length its
//! DATA frames framed; every request ends at most once; memory stays within a bound set by the
//! input.

use crate::alloc::peak_during;
use std::collections::HashMap;
use webstand_engine::fuzzing::h3::{drive, request_id, Event};
use webstand_h3::frame::{kind, read_head, write};
use webstand_h3::{qpack_encoder, varint};

/// The events an input makes: after its first byte (bits 0–1: 1 to 4 requests open; bit 2: a
/// script keeps the responses), records of a byte `h` then, for bytes on a stream, a length
/// byte and that many bytes. `h & 3`: 0 a request stream's bytes, 1 a unidirectional stream's,
/// 2 a reset of a request; `(h >> 2) & 3` the stream; `h & 0x10` its FIN after the bytes;
/// `h >> 5` a reset's code (from H3_NO_ERROR on).
fn events(mut data: &[u8]) -> Vec<Event<'_>> {
    let mut out = Vec::new();
    while let Some((&h, rest)) = data.split_first() {
        let n = u64::from((h >> 2) & 3);
        let fin = h & 0x10 != 0;
        if h & 3 == 2 {
            let code = 0x100 + u64::from(h >> 5);
            out.push(Event::Reset { n, code });
            data = rest;
            continue;
        }
        let Some((&len, rest)) = rest.split_first() else {
            break;
        };
        let (bytes, rest) = rest.split_at(usize::from(len).min(rest.len()));
        out.push(match h & 3 {
            0 => Event::Request { n, bytes, fin },
            _ => Event::Uni { n, bytes, fin },
        });
        data = rest;
    }
    out
}

/// The most the connection may hold while it reads `input` bytes: per request its held frame
/// bytes and the decoded head (a field section may not exceed the engine's limit).
fn bound(input: usize) -> usize {
    64 * input + (2 << 20)
}

pub fn target(data: &[u8]) {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let (requests, keep) = (1 + u64::from(k & 3), k & 4 != 0);
    let events = events(rest);
    let (run, peak) = peak_during(|| drive(requests, keep, &events));
    assert!(
        peak <= bound(data.len()),
        "held {peak} bytes for {}",
        data.len()
    );
    // Each request's bytes up to its FIN, as the server framed them.
    let mut sent: HashMap<u64, (Vec<u8>, bool)> = HashMap::new();
    for e in &events {
        if let Event::Request { n, bytes, fin } = *e {
            let (held, ended) = sent.entry(request_id(n)).or_default();
            if !*ended {
                held.extend_from_slice(bytes);
                *ended = fin;
            }
        }
    }
    let mut seen = Vec::new();
    for e in &run.ended {
        assert!(!seen.contains(&e.id), "stream {} ended twice", e.id);
        seen.push(e.id);
        if !e.complete {
            continue;
        }
        assert!(
            (200..600).contains(&e.status),
            "complete with status {}",
            e.status
        );
        let (bytes, fin) = sent
            .get(&e.id)
            .expect("a complete response came on its stream");
        assert!(fin, "complete before its FIN");
        assert_eq!(e.body_len, data_framed(bytes), "stream {}'s length", e.id);
        if keep {
            assert_eq!(e.kept_body, Some(e.body_len as usize));
        }
    }
    assert!(seen.len() as u64 <= requests);
}

/// The DATA payload `bytes` frame, which must be whole frames.
fn data_framed(mut bytes: &[u8]) -> u64 {
    let mut sum = 0;
    while !bytes.is_empty() {
        let head = read_head(bytes).expect("a complete response ends on a frame boundary");
        let end = head.size + usize::try_from(head.len).unwrap_or(usize::MAX);
        assert!(
            end <= bytes.len(),
            "a complete response ends on a frame boundary"
        );
        if head.kind == kind::DATA {
            sum += head.len;
        }
        bytes = &bytes[end..];
    }
    sum
}

/// A record of the input: `h`, then the length and `bytes` unless it is a reset.
fn record(out: &mut Vec<u8>, h: u8, bytes: &[u8]) {
    out.push(h);
    if h & 3 != 2 {
        out.push(u8::try_from(bytes.len()).expect("a short record"));
        out.extend_from_slice(bytes);
    }
}

fn section(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    qpack_encoder::encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut block,
    );
    let mut frame = Vec::new();
    write::headers(&mut frame, &block);
    frame
}

/// Seeds: the server's streams as our HTTP/3 frame writer and QPACK encoder write them.
pub fn seeds() -> Vec<Vec<u8>> {
    let mut control = Vec::new();
    varint::write(&mut control, 0x00);
    write::settings(
        &mut control,
        &[(0x01, 0), (0x06, 16_384), (0x07, 0), (0x21, 1)],
    );
    let mut head = section(&[
        (":status", "200"),
        ("server", "webstand"),
        ("content-type", "text/plain"),
    ]);
    write::data_head(&mut head, 5);
    head.extend_from_slice(b"hello");
    let interim = section(&[(":status", "103"), ("link", "</a.css>")]);
    let trailers = section(&[("x-checksum", "1")]);
    let mut reserved = Vec::new();
    write::head(&mut reserved, 0x21, 2);
    reserved.extend_from_slice(b"..");
    let mut goaway = Vec::new();
    write::goaway(&mut goaway, request_id(1));

    let mut a = vec![0x01]; // two requests
    record(&mut a, 0x01, &control);
    record(&mut a, 0x05, &[0x02, 0x20]); // the QPACK encoder stream: capacity 0
    record(&mut a, 0x09, &[0x03]); // the QPACK decoder stream
    record(&mut a, 0x00, &interim);
    record(&mut a, 0x00, &head[..7]);
    record(
        &mut a,
        0x00,
        &[&head[7..], &reserved[..], &trailers[..]].concat(),
    );
    record(&mut a, 0x04, &head);
    record(&mut a, 0x10, &[]);
    record(&mut a, 0x14, &[]);

    let mut b = vec![0x06]; // three requests, kept for a script
    record(&mut b, 0x00, &head);
    record(&mut b, 0x01, &control);
    record(&mut b, 0x01, &goaway);
    record(&mut b, 0x2a, &[]); // request 2 reset (H3_GENERAL_PROTOCOL_ERROR), after the GOAWAY
    record(&mut b, 0x10, &[]);
    record(&mut b, 0x1d, &[0x21, 1, 2, 3]); // an unknown stream type, then its FIN
    vec![a, b]
}
