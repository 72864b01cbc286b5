//! HPACK against RFC 7541 Appendix C's examples, and the two limits the wrapper adds.

use super::*;
use crate::huffman;

pub(crate) struct Block {
    pub wire: &'static str,
    pub fields: &'static [(&'static str, &'static str)],
}

pub(crate) fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

pub(crate) fn decode_all(
    decoder: &mut Decoder,
    block: &[u8],
) -> Result<Vec<(String, String)>, HpackRefusal> {
    let mut fields = Vec::new();
    decoder.decode(block, |n, v| {
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
        fields.push((text(n), text(v)));
    })?;
    Ok(fields)
}

/// Decodes each example's blocks in order on one connection's decoder (the dynamic table carries
/// over, and in C.5/C.6 entries are evicted from a 256-byte table).
fn check_sequence(blocks: &[Block], table_size: u32) {
    let mut decoder = Decoder::new(table_size, 16_384);
    for (i, block) in blocks.iter().enumerate() {
        let got = decode_all(&mut decoder, &unhex(block.wire)).unwrap();
        let want: Vec<(String, String)> = block
            .fields
            .iter()
            .map(|&(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(got, want, "block {i}");
    }
}

#[test]
fn decodes_rfc7541_request_examples() {
    check_sequence(C_3, 4096);
    check_sequence(C_4, 4096);
}

#[test]
fn decodes_rfc7541_response_examples_with_a_256_byte_table() {
    check_sequence(C_5, 256);
    check_sequence(C_6, 256);
}

#[test]
fn encoder_output_decodes_to_the_same_fields() {
    let mut encoder = Encoder::new();
    let mut decoder = Decoder::new(4096, 16_384);
    for block in C_3.iter().chain(C_5) {
        let fields = block
            .fields
            .iter()
            .map(|&(n, v)| (n.as_bytes(), v.as_bytes()));
        let mut wire = Vec::new();
        encoder.encode(fields, &mut wire);
        let got = decode_all(&mut decoder, &wire).unwrap();
        assert_eq!(got.len(), block.fields.len());
        for ((n, v), &(wn, wv)) in got.iter().zip(block.fields) {
            assert_eq!((n.as_str(), v.as_str()), (wn, wv));
        }
    }
}

#[test]
fn a_smaller_peer_table_is_signalled_at_the_start_of_the_next_block() {
    let mut encoder = Encoder::new();
    encoder.set_peer_table_size(256);
    let mut wire = Vec::new();
    encoder.encode([(&b":status"[..], &b"200"[..])], &mut wire);
    // 256 in a 5-bit prefix after the 001 pattern: 0x3f, then 225 as 0xe1 0x01.
    assert_eq!(&wire[..3], &[0x3f, 0xe1, 0x01]);
    let mut decoder = Decoder::new(256, 16_384);
    assert_eq!(decode_all(&mut decoder, &wire).unwrap().len(), 1);
    let mut again = Vec::new();
    encoder.encode([(&b":status"[..], &b"200"[..])], &mut again);
    assert_eq!(again, [0x88], "the update is sent once");
}

#[test]
fn a_table_size_update_above_the_announced_size_is_a_compression_error() {
    let mut decoder = Decoder::new(256, 16_384);
    // Size update to 4096 (0x3f 0xe1 0x1f), then :method GET.
    let refusal = decode_all(&mut decoder, &[0x3f, 0xe1, 0x1f, 0x82]).unwrap_err();
    assert!(matches!(refusal, HpackRefusal::Compression(_)));
    assert_eq!(refusal.error(1).code(), ErrorCode::CompressionError);
    assert!(matches!(
        decode_all(&mut decoder, &[0xc0]),
        Err(HpackRefusal::Compression(_))
    ));
}

#[test]
fn a_header_list_bomb_stops_at_the_announced_size_and_the_table_stays_in_step() {
    // "x-big: xxx…" (3000 bytes) as a literal with incremental indexing, written by hand: our
    // encoder would not index a value that large.
    let mut first = b"\x40\x05x-big".to_vec();
    crate::hpack_encoder::write_integer(&mut first, 3000, 7, 0);
    first.extend(vec![b'x'; 3000]);
    // The same entry (index 62) referenced 1000 times: 1000 bytes that decode to 3 MB.
    let bomb = vec![0x80 | 62; 1000];
    let mut decoder = Decoder::new(4096, 8192);
    assert_eq!(decode_all(&mut decoder, &first).unwrap().len(), 1);
    let mut handed_out = 0;
    let refusal = decoder.decode(&bomb, |_, _| handed_out += 1).unwrap_err();
    assert_eq!(
        refusal,
        HpackRefusal::ListTooLarge {
            size: 1000 * (5 + 3000 + 32)
        }
    );
    assert_eq!(handed_out, 2, "fields past 8192 bytes are not handed out");
    assert!(matches!(refusal.error(7), Error::Stream { stream: 7, .. }));
    let next = decode_all(&mut decoder, &[0x80 | 62]).unwrap();
    assert_eq!(next[0].1.len(), 3000, "the dynamic table is still in step");
}

/// RFC 7541 C.3: requests without Huffman coding.
pub(crate) const C_3: &[Block] = &[
    Block {
        wire: "828684410f7777772e6578616d706c652e636f6d",
        fields: &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ],
    },
    Block {
        wire: "828684be58086e6f2d6361636865",
        fields: &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache"),
        ],
    },
    Block {
        wire: "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565",
        fields: &[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ],
    },
];
/// RFC 7541 C.4: requests with Huffman coding.
pub(crate) const C_4: &[Block] = &[
    Block {
        wire: "828684418cf1e3c2e5f23a6ba0ab90f4ff",
        fields: &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ],
    },
    Block {
        wire: "828684be5886a8eb10649cbf",
        fields: &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache"),
        ],
    },
    Block {
        wire: "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf",
        fields: &[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ],
    },
];
/// RFC 7541 C.5: responses without Huffman coding.
pub(crate) const C_5: &[Block] = &[
    Block {
        wire: "4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
        fields: &[
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ],
    },
    Block {
        wire: "4803333037c1c0bf",
        fields: &[
            (":status", "307"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ],
    },
    Block {
        wire: "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31",
        fields: &[
            (":status", "200"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ("location", "https://www.example.com"),
            ("content-encoding", "gzip"),
            ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"),
        ],
    },
];
/// RFC 7541 C.6: responses with Huffman coding.
pub(crate) const C_6: &[Block] = &[
    Block {
        wire: "488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
        fields: &[
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ],
    },
    Block {
        wire: "4883640effc1c0bf",
        fields: &[
            (":status", "307"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ],
    },
    Block {
        wire: "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007",
        fields: &[
            (":status", "200"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ("location", "https://www.example.com"),
            ("content-encoding", "gzip"),
            ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"),
        ],
    },
];

/// RFC 7541 C.1's integers, and the 32-bit bound on a longer run of continuation bytes.
#[test]
fn integers_decode_and_overflow_is_refused() {
    let read = |bytes: &[u8], prefix| read_integer(bytes, &mut 0, prefix);
    assert_eq!(read(&[0x0a], 5), Ok(10));
    assert_eq!(read(&[0x1f, 0x9a, 0x0a], 5), Ok(1337));
    assert_eq!(read(&[0x2a], 8), Ok(42));
    assert_eq!(
        read(&[0x1f, 0xe0, 0xff, 0xff, 0xff, 0x0f], 5),
        Ok(u32::MAX as usize)
    );
    assert_eq!(
        read(&[0x1f, 0xe1, 0xff, 0xff, 0xff, 0x0f], 5),
        Err(HpackError::IntegerOverflow)
    );
    assert_eq!(
        read(&[0x1f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], 5),
        Err(HpackError::IntegerOverflow),
        "zero-valued continuation bytes cannot run on"
    );
    assert_eq!(read(&[0x1f, 0x9a], 5), Err(HpackError::Truncated));
    let mut decoder = Decoder::new(4096, 16_384);
    assert_eq!(
        decode_all(&mut decoder, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
        Err(HpackRefusal::Compression(HpackError::IntegerOverflow))
    );
}

#[test]
fn a_size_update_above_the_limit_names_the_size_and_loses_the_context() {
    let mut decoder = Decoder::new(4096, 16_384);
    // 4097 in a 5-bit prefix: 0x3f then 4066 = 0xe2 0x1f.
    assert_eq!(
        decode_all(&mut decoder, &[0x3f, 0xe2, 0x1f, 0x82]),
        Err(HpackRefusal::Compression(HpackError::TableSizeAboveLimit(
            4097
        )))
    );
    assert_eq!(
        decode_all(&mut decoder, &[0x82]),
        Err(HpackRefusal::Compression(HpackError::ContextLost))
    );
}

#[test]
fn size_updates_are_taken_at_a_blocks_start_only() {
    let mut decoder = Decoder::new(4096, 16_384);
    // Literal with indexing "custom-key: custom-value" (C.3.3's field), then index 62.
    let insert = unhex("400a637573746f6d2d6b65790c637573746f6d2d76616c7565");
    assert_eq!(decode_all(&mut decoder, &insert).unwrap().len(), 1);
    assert_eq!(
        decode_all(&mut decoder, &[0xbe]).unwrap()[0].0,
        "custom-key"
    );
    // Two updates at the start (to 0 then back to 4096) empty the table: 62 is gone.
    assert_eq!(
        decode_all(&mut decoder, &[0x20, 0x3f, 0xe1, 0x1f, 0x82]).unwrap(),
        [(":method".to_string(), "GET".to_string())]
    );
    assert_eq!(
        decode_all(&mut decoder, &[0xbe]),
        Err(HpackRefusal::Compression(HpackError::BadIndex(62)))
    );
    let mut decoder = Decoder::new(4096, 16_384);
    assert_eq!(
        decode_all(&mut decoder, &[0x82, 0x20]),
        Err(HpackRefusal::Compression(HpackError::LateSizeUpdate))
    );
}

#[test]
fn truncated_blocks_and_bad_indexes_are_compression_errors() {
    for block in [
        &[0x82, 0x41][..],                   // literal with indexing, name 1, no value
        &[0x41, 0x85, 0xf1, 0xe3][..],       // a 5-byte Huffman value with 2 bytes left
        &[0x00, 0x01, b'a', 0x05, b'b'][..], // new name, 5-byte value with 1 byte left
        &[0x80][..],                         // index 0
        &[0xbe][..],                         // index 62 in an empty dynamic table
        &[0x41, 0x81, 0xff][..],             // Huffman value that is all padding
    ] {
        let mut decoder = Decoder::new(4096, 16_384);
        let refusal = decode_all(&mut decoder, block).unwrap_err();
        assert!(
            matches!(refusal, HpackRefusal::Compression(_)),
            "{block:02x?}: {refusal:?}"
        );
    }
}

#[test]
fn a_huffman_coded_field_past_the_list_limit_is_not_handed_out() {
    let value = "x".repeat(200);
    let mut block = vec![0x00];
    let name = b"x-ab";
    block.push(0x80 | huffman::encoded_len(name) as u8);
    huffman::encode(name, &mut block);
    block.extend([
        0x80 | 0x7f,
        (huffman::encoded_len(value.as_bytes()) - 0x7f) as u8,
    ]);
    huffman::encode(value.as_bytes(), &mut block);
    block.push(0x82);
    let mut decoder = Decoder::new(4096, 100);
    let mut handed_out = Vec::new();
    let refusal = decoder
        .decode(&block, |n, _| handed_out.push(n.to_vec()))
        .unwrap_err();
    assert_eq!(
        refusal,
        HpackRefusal::ListTooLarge {
            size: (4 + 200 + 32) + (7 + 3 + 32)
        }
    );
    assert!(handed_out.is_empty(), "{handed_out:?}");
    let mut decoder = Decoder::new(4096, 236);
    assert_eq!(
        decode_all(&mut decoder, &block[..block.len() - 1]).unwrap()[0].1,
        value
    );
}

/// Our static table is RFC 7541 Appendix A's, as loona-hpack (written from the RFC) has it.
#[test]
fn the_static_table_agrees_with_loona_hpack() {
    let mut decoder = Decoder::new(4096, 16_384);
    for index in 1..=61u8 {
        let ours = decode_all(&mut decoder, &[0x80 | index]).unwrap();
        let theirs = loona_hpack::Decoder::new().decode(&[0x80 | index]).unwrap();
        let theirs: Vec<(String, String)> = theirs
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        assert_eq!(ours, theirs, "index {index}");
    }
}
