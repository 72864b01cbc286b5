//! The encoder against RFC 7541 Appendix C's encoder output, byte for byte, and against two
//! independent decoders (ours, loona-hpack's; python3-h2's hpack in tests/serve_h2_hpack.rs through
//! the server), with the choices it makes beyond the examples: what it does not index, Huffman
//! unless it is longer, table-size updates.

use super::*;
use crate::hpack::tests::{decode_all, unhex, Block, C_3, C_4, C_5, C_6};
use crate::hpack::Decoder;

fn fields(block: &Block) -> impl Iterator<Item = (&'static [u8], &'static [u8])> {
    block
        .fields
        .iter()
        .map(|&(n, v)| (n.as_bytes(), v.as_bytes()))
}

/// Encodes an example's blocks in order on one context and checks each against the RFC's bytes
/// (after the size update a 256-byte table opens the first block with), then decodes them with
/// loona-hpack's decoder.
fn check_sequence(blocks: &[Block], table_size: u32, huffman: bool) {
    let mut encoder = Encoder::new();
    encoder.set_huffman(huffman);
    encoder.set_peer_table_size(table_size);
    let mut theirs = loona_hpack::Decoder::new();
    for (i, block) in blocks.iter().enumerate() {
        let mut wire = Vec::new();
        encoder.encode(fields(block), &mut wire);
        let mut rfc = unhex(block.wire);
        if i == 0 && table_size != ENCODER_TABLE_CAP {
            let mut update = Vec::new();
            write_integer(&mut update, table_size as usize, 5, 0x20);
            assert!(
                wire.starts_with(&update),
                "block 0 opens with the size update"
            );
            rfc.splice(0..0, update);
        }
        assert_eq!(wire, rfc, "block {i}");
        let decoded = theirs.decode(&wire).unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> = fields(block)
            .map(|(n, v)| (n.to_vec(), v.to_vec()))
            .collect();
        assert_eq!(decoded, want, "loona-hpack reads block {i}");
    }
}

#[test]
fn encodes_rfc7541_request_examples_byte_for_byte() {
    check_sequence(C_3, 4096, false);
    check_sequence(C_4, 4096, true);
}

#[test]
fn encodes_rfc7541_response_examples_byte_for_byte() {
    check_sequence(C_5, 256, false);
    check_sequence(C_6, 256, true);
}

fn response<'a>(date: &'a str, length: &'a str) -> [(&'a [u8], &'a [u8]); 8] {
    [
        (b":status", b"200"),
        (b"server", b"webstand"),
        (b"date", date.as_bytes()),
        (b"content-type", b"text/html"),
        (b"last-modified", b"Tue, 24 Nov 2026 10:00:00 GMT"),
        (b"etag", b"\"6762f0a0-800\""),
        (b"accept-ranges", b"bytes"),
        (b"content-length", length.as_bytes()),
    ]
}

/// A server's answers for one file: the first block carries everything, the next ones are an
/// index per field and content-length's literal; a new date costs one new entry.
#[test]
fn repeated_responses_shrink_to_indexes() {
    let mut encoder = Encoder::new();
    let mut decoder = Decoder::new(4096, 16_384);
    let date = "Tue, 24 Nov 2026 12:00:00 GMT";
    let (mut first, mut again) = (Vec::new(), Vec::new());
    encoder.encode(response(date, "2048"), &mut first);
    encoder.encode(response(date, "2048"), &mut again);
    // :status 200 is static (0x88); content-length is literal without indexing, name index 28
    // (0x0f 0x0d), "2048" Huffman-coded in 3 bytes.
    assert_eq!(again.len(), 7 + 2 + 1 + 3, "{again:02x?}");
    assert_eq!(again[0], 0x88);
    for block in [&first, &again] {
        let got = decode_all(&mut decoder, block).unwrap();
        let want = response(date, "2048").map(|(n, v)| {
            let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
            (text(n), text(v))
        });
        assert_eq!(got, want);
    }
    let mut next_second = Vec::new();
    encoder.encode(
        response("Tue, 24 Nov 2026 12:00:01 GMT", "2049"),
        &mut next_second,
    );
    assert!(next_second.len() < 40, "{}", next_second.len());
    let got = decode_all(&mut decoder, &next_second).unwrap();
    assert_eq!(got[2].1, "Tue, 24 Nov 2026 12:00:01 GMT");
    assert_eq!(got[7].1, "2049");
}

#[test]
fn literals_are_huffman_coded_unless_that_is_longer() {
    let mut encoder = Encoder::new();
    let mut wire = Vec::new();
    // '~' and '{' have long codes: raw is shorter.
    encoder.encode([(&b"x-odd"[..], &b"~{~{"[..])], &mut wire);
    assert_eq!(&wire[wire.len() - 5..], b"\x04~{~{");
    let mut decoder = Decoder::new(4096, 16_384);
    assert_eq!(decode_all(&mut decoder, &wire).unwrap()[0].1, "~{~{");
}

#[test]
fn credentials_and_per_message_values_stay_out_of_the_table() {
    let mut encoder = Encoder::new();
    let big = "v".repeat(2100);
    let cases: [(&[u8], &[u8], u8); 4] = [
        (b"authorization", b"Basic dTpw", 0x10),
        (b"cookie", b"id=1", 0x10),
        (b"content-length", b"12", 0x00),
        (b"x-big", big.as_bytes(), 0x00),
    ];
    for (name, value, pattern) in cases {
        let mut wire = Vec::new();
        encoder.encode([(name, value)], &mut wire);
        assert_eq!(wire[0] & 0xf0, pattern, "{}", String::from_utf8_lossy(name));
        let mut again = Vec::new();
        encoder.encode([(name, value)], &mut again);
        assert_eq!(again, wire, "not indexed: sent the same way again");
    }
}

#[test]
fn table_size_changes_open_the_next_block_smallest_first() {
    let mut encoder = Encoder::new();
    let mut decoder = Decoder::new(4096, 16_384);
    let field = [(&b"server"[..], &b"webstand"[..])];
    let mut wire = Vec::new();
    encoder.encode(field, &mut wire);
    assert_eq!(decode_all(&mut decoder, &wire).unwrap().len(), 1);
    // The peer shrinks to 0 (the entry is gone), then allows 4096 again before our next block.
    encoder.set_peer_table_size(0);
    encoder.set_peer_table_size(8192);
    wire.clear();
    encoder.encode(field, &mut wire);
    // 0x20: size 0; 0x3f 0xe1 0x1f: size 4096 (the cap); then a literal again, not index 62.
    assert_eq!(&wire[..4], &[0x20, 0x3f, 0xe1, 0x1f]);
    assert_eq!(
        wire[4],
        0x40 | 54,
        "server by its static name, indexed again"
    );
    assert_eq!(decode_all(&mut decoder, &wire).unwrap().len(), 1);
    wire.clear();
    encoder.encode(field, &mut wire);
    assert_eq!(
        wire,
        [0x80 | 62],
        "no update the second time; the entry is back"
    );
}

/// RFC 7541 C.1's integers.
#[test]
fn integers_encode_as_the_rfc_shows() {
    let mut out = Vec::new();
    write_integer(&mut out, 10, 5, 0);
    write_integer(&mut out, 1337, 5, 0);
    write_integer(&mut out, 42, 8, 0);
    assert_eq!(out, [0x0a, 0x1f, 0x9a, 0x0a, 0x2a]);
}
