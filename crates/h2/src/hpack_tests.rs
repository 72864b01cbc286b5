//! HPACK against RFC 7541 Appendix C's examples, and the two limits the wrapper adds.

use super::*;

struct Block {
    wire: &'static str,
    fields: &'static [(&'static str, &'static str)],
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn decode_all(decoder: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackRefusal> {
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
    let mut encoder = Encoder::new();
    let big = vec![b'x'; 3000];
    let mut first = Vec::new();
    encoder.encode([(&b"x-big"[..], &big[..])], &mut first);
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
const C_3: &[Block] = &[
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
const C_4: &[Block] = &[
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
const C_5: &[Block] = &[
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
const C_6: &[Block] = &[
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
