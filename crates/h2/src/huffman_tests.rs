//! The Huffman code against RFC 7541 (its codes, its C.4 strings, loona-hpack's independent
//! decoder) and the §5.2 refusals: EOS in a string, padding not ones, padding over 7 bits.

use super::*;

#[test]
fn canonical_codes_are_the_rfcs() {
    let codes = codes();
    // Spot checks from RFC 7541 Appendix B: shortest, longest, and both ends of the byte range.
    assert_eq!(
        (codes[b'0' as usize], CODE_LENGTHS[b'0' as usize]),
        (0x0, 5)
    );
    assert_eq!(
        (codes[b'a' as usize], CODE_LENGTHS[b'a' as usize]),
        (0x3, 5)
    );
    assert_eq!(
        (codes[b' ' as usize], CODE_LENGTHS[b' ' as usize]),
        (0x14, 6)
    );
    assert_eq!((codes[0], CODE_LENGTHS[0]), (0x1ff8, 13));
    assert_eq!((codes[255], CODE_LENGTHS[255]), (0x3ffffee, 26));
    assert_eq!((codes[EOS], CODE_LENGTHS[EOS]), (0x3fffffff, 30));
}

#[test]
fn rfc_c4_strings_encode_and_decode() {
    let mut wire = Vec::new();
    encode(b"www.example.com", &mut wire);
    let want = [
        0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
    ];
    assert_eq!(wire, want);
    assert_eq!(encoded_len(b"www.example.com"), want.len());
    let mut out = Vec::new();
    decode(&wire, &mut out).unwrap();
    assert_eq!(out, b"www.example.com");
}

#[test]
fn every_symbol_round_trips_alone_and_together() {
    let all: Vec<u8> = (0..=255).collect();
    for byte in 0..=255u8 {
        let (mut wire, mut out) = (Vec::new(), Vec::new());
        encode(&[byte], &mut wire);
        decode(&wire, &mut out).unwrap();
        assert_eq!(out, [byte], "symbol {byte}");
    }
    let (mut wire, mut out) = (Vec::new(), Vec::new());
    encode(&all, &mut wire);
    decode(&wire, &mut out).unwrap();
    assert_eq!(out, all);
}

/// loona-hpack's decoder, written from the RFC's code table, reads what we encode: every byte
/// value, in a literal name and value, so our lengths and canonical codes are the RFC's.
#[test]
fn loona_hpack_decodes_what_we_encode() {
    let all: Vec<u8> = (0..=255).rev().collect();
    let mut block = vec![0x00];
    for _ in 0..2 {
        let mut coded = Vec::new();
        encode(&all, &mut coded);
        assert!(coded.len() < 0x7f + 0x80 * 0x80);
        block.extend([0x80 | 0x7f, (((coded.len() - 0x7f) % 0x80) | 0x80) as u8]);
        block.push(((coded.len() - 0x7f) / 0x80) as u8);
        block.extend(coded);
    }
    let fields = loona_hpack::Decoder::new().decode(&block).unwrap();
    assert_eq!(fields, [(all.clone(), all)]);
}

#[test]
fn an_empty_string_decodes_to_nothing() {
    let mut out = Vec::new();
    decode(&[], &mut out).unwrap();
    assert!(out.is_empty());
}

#[test]
fn padding_that_is_not_ones_is_refused() {
    // 'a' is 00011: the last three bits must be 111, here 010.
    let mut out = Vec::new();
    assert_eq!(
        decode(&[0b0001_1010], &mut out),
        Err(HuffmanError::PaddingNotOnes)
    );
}

#[test]
fn padding_longer_than_seven_bits_is_refused() {
    let mut out = Vec::new();
    // 'a' then 11 bits of ones; a lone 0xff is 8 bits of padding and no symbol.
    assert_eq!(
        decode(&[0b0001_1111, 0xff], &mut out),
        Err(HuffmanError::PaddingTooLong)
    );
    assert_eq!(decode(&[0xff], &mut out), Err(HuffmanError::PaddingTooLong));
    assert_eq!(decode(&[0b0001_1111], &mut out), Ok(()), "3 bits are fine");
}

#[test]
fn eos_inside_a_string_is_refused() {
    let mut out = Vec::new();
    // 30 ones are EOS; then two zero bits. Also EOS after a symbol ('0' is 00000).
    assert_eq!(
        decode(&[0xff, 0xff, 0xff, 0xfc], &mut out),
        Err(HuffmanError::EosInString)
    );
    assert_eq!(
        decode(&[0x07, 0xff, 0xff, 0xff, 0xf0], &mut out),
        Err(HuffmanError::EosInString)
    );
}

#[test]
fn recent_strings_decode_as_the_machine_does_and_failures_are_not_kept() {
    let mut recent = Recent::default();
    // More strings than are kept, in turn and again: every answer is the machine's.
    let words: Vec<String> = (0..12)
        .map(|i| format!("Tue, 24 Nov 2026 13:0{i}:00 GMT"))
        .collect();
    for _ in 0..3 {
        for w in &words {
            let mut coded = Vec::new();
            encode(w.as_bytes(), &mut coded);
            let mut out = b"kept: ".to_vec();
            recent.decode(&coded, &mut out).unwrap();
            assert_eq!(out, [b"kept: ", w.as_bytes()].concat());
        }
    }
    // EOS inside a string (30 ones and more) is refused every time, never answered from memory.
    for _ in 0..2 {
        let mut out = Vec::new();
        assert_eq!(
            recent.decode(&[0xff, 0xff, 0xff, 0xff], &mut out),
            Err(HuffmanError::EosInString)
        );
    }
}
