//! What one HPACK header block costs to decode and encode, in ns per block: our decoder against
//! `loona-hpack` 0.4's (the one it replaced), on the blocks a benchmark exchanges. Requests are
//! h2load's and curl's (Huffman-coded, a fresh connection's first block that fills the dynamic
//! table, then a later one that indexes it); the response is nginx's for a 2 KiB file (Huffman-
//! coded literals without indexing). Run: `cargo run --release -p webstand-h2 --example hpack_cost`.

use std::hint::black_box;
use std::time::Instant;
use webstand_h2::hpack::{Decoder, Encoder};
use webstand_h2::huffman;

/// A literal field whose name is the table's `name_index`, with a Huffman-coded value.
/// `pattern` and `prefix_bits` select the representation (0x40/6: with indexing, 0x00/4: without).
fn literal(block: &mut Vec<u8>, pattern: u8, prefix_bits: u8, name_index: usize, value: &str) {
    let at = block.len();
    loona_hpack::encoder::encode_integer_into(name_index, prefix_bits, 0, block).unwrap();
    block[at] |= pattern;
    let at = block.len();
    let length = huffman::encoded_len(value.as_bytes());
    loona_hpack::encoder::encode_integer_into(length, 7, 0x80, block).unwrap();
    block[at] |= 0x80;
    huffman::encode(value.as_bytes(), block);
}

const REQUEST: [(&str, &str); 6] = [
    (":method", "GET"),
    (":scheme", "https"),
    (":path", "/2k.html"),
    (":authority", "127.0.0.1:8443"),
    ("user-agent", "h2load nghttp2/1.52.0"),
    ("accept", "*/*"),
];

const RESPONSE: [(&str, &str); 8] = [
    (":status", "200"),
    ("server", "nginx/1.22.1"),
    ("date", "Tue, 24 Nov 2026 10:30:00 GMT"),
    ("content-type", "text/html"),
    ("content-length", "2048"),
    ("last-modified", "Mon, 23 Nov 2026 09:12:44 GMT"),
    ("etag", "\"6740a2f1-800\""),
    ("accept-ranges", "bytes"),
];

/// The three blocks: a first request (indexing :path, :authority, user-agent and accept), a later
/// request (all six fields indexed), and a response.
fn blocks() -> [Vec<u8>; 3] {
    let mut first = vec![0x82, 0x87];
    for (index, value) in [(4, "/2k.html"), (1, "127.0.0.1:8443")] {
        literal(&mut first, 0x40, 6, index, value);
    }
    literal(&mut first, 0x40, 6, 58, REQUEST[4].1);
    literal(&mut first, 0x40, 6, 19, REQUEST[5].1);
    let later = vec![0x82, 0x87, 0xc1, 0xc0, 0xbf, 0xbe];
    let mut response = vec![0x88];
    for (index, (_, value)) in [54, 33, 31, 28, 44, 34, 18].into_iter().zip(&RESPONSE[1..]) {
        literal(&mut response, 0x00, 4, index, value);
    }
    [first, later, response]
}

/// The median over five rounds of `rounds` calls, in ns per call.
fn ns_per_call(rounds: u32, mut call: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..rounds {
                call();
            }
            start.elapsed().as_nanos() as f64 / f64::from(rounds)
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[2]
}

fn ours(decoder: &mut Decoder, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut fields = Vec::new();
    decoder
        .decode(block, |n, v| fields.push((n.to_vec(), v.to_vec())))
        .unwrap();
    fields
}

fn main() {
    let [first, later, response] = blocks();
    // Both decoders read the same fields, and they are the ones meant.
    let (mut mine, mut theirs) = (Decoder::new(4096, 65_536), loona_hpack::Decoder::new());
    for (block, want) in [
        (&first, &REQUEST[..]),
        (&later, &REQUEST),
        (&response, &RESPONSE),
    ] {
        let got = ours(&mut mine, block);
        assert_eq!(got, theirs.decode(block).unwrap());
        let want: Vec<_> = want
            .iter()
            .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect();
        assert_eq!(got, want);
    }
    println!("block             bytes  ours ns  loona-hpack ns  ratio");
    let row = |name: &str, bytes: usize, ours: f64, loona: f64| {
        println!(
            "{name:<17} {bytes:>5} {ours:>8.0} {loona:>15.0} {:>6.1}",
            loona / ours
        );
    };
    let a = ns_per_call(100_000, || {
        let mut decoder = Decoder::new(4096, 65_536);
        decoder
            .decode(black_box(&first), |n, v| {
                black_box((n, v));
            })
            .unwrap();
    });
    let b = ns_per_call(5_000, || {
        let mut decoder = loona_hpack::Decoder::new();
        decoder
            .decode_with_cb(black_box(&first), |n, v| {
                black_box((n, v));
            })
            .unwrap();
    });
    row("request, first", first.len(), a, b);
    let (mut mine, mut theirs) = (Decoder::new(4096, 65_536), loona_hpack::Decoder::new());
    ours(&mut mine, &first);
    theirs.decode(&first).unwrap();
    let a = ns_per_call(200_000, || {
        mine.decode(black_box(&later), |n, v| {
            black_box((n, v));
        })
        .unwrap();
    });
    let b = ns_per_call(200_000, || {
        theirs
            .decode_with_cb(black_box(&later), |n, v| {
                black_box((n, v));
            })
            .unwrap();
    });
    row("request, later", later.len(), a, b);
    let a = ns_per_call(100_000, || {
        mine.decode(black_box(&response), |n, v| {
            black_box((n, v));
        })
        .unwrap();
    });
    let b = ns_per_call(5_000, || {
        theirs
            .decode_with_cb(black_box(&response), |n, v| {
                black_box((n, v));
            })
            .unwrap();
    });
    row("response", response.len(), a, b);
    encoding();
}

/// Our encoder against loona-hpack's (the one it replaced: no Huffman coding, every literal
/// indexed), on a connection's steady state: the same block over and over.
fn encoding() {
    let mut ours = Encoder::new();
    let mut theirs = loona_hpack::Encoder::new();
    let mut out = Vec::with_capacity(512);
    println!("encode            bytes  ours ns  loona-hpack ns (bytes)");
    for (name, fields) in [("request", &REQUEST[..]), ("response", &RESPONSE)] {
        let fields: Vec<(&[u8], &[u8])> = fields
            .iter()
            .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
            .collect();
        let a = ns_per_call(200_000, || {
            out.clear();
            ours.encode(black_box(fields.iter().copied()), &mut out);
        });
        let our_bytes = out.len();
        let b = ns_per_call(200_000, || {
            out.clear();
            let _ = theirs.encode_into(black_box(fields.iter().copied()), &mut out);
        });
        println!(
            "{name:<17} {our_bytes:>5} {a:>8.0} {b:>15.0} ({})",
            out.len()
        );
    }
}
