use super::*;
use crate::qpack_encoder;

fn decode_all(section: &[u8]) -> Result<Vec<(String, String)>, QpackRefusal> {
    let mut decoder = Decoder::new(16 << 10);
    let mut fields = Vec::new();
    decoder.decode(section, |n, v| {
        fields.push((
            String::from_utf8_lossy(n).into_owned(),
            String::from_utf8_lossy(v).into_owned(),
        ))
    })?;
    Ok(fields)
}

fn pair(n: &str, v: &str) -> (String, String) {
    (n.to_string(), v.to_string())
}

/// RFC 9204 Appendix B.1: a literal with a name reference to the static table, no table used.
#[test]
fn the_rfc_literal_with_a_static_name_decodes() {
    let section = [
        0x00, 0x00, 0x51, 0x0b, 0x2f, 0x69, 0x6e, 0x64, 0x65, 0x78, 0x2e, 0x68, 0x74, 0x6d, 0x6c,
    ];
    assert_eq!(
        decode_all(&section).unwrap(),
        [pair(":path", "/index.html")]
    );
}

/// RFC 9204 Appendix B.2-B.4 use the dynamic table: with none given, their sections are refused
/// (a Required Insert Count other than 0, a relative and a post-base reference), and B.2's
/// encoder stream (capacity 220, then inserts) is an encoder stream error.
#[test]
fn the_rfc_dynamic_table_examples_are_refused_without_a_table() {
    // B.2: Required Insert Count 2 (encoded 3), Base 0 then 0x81 0x10 0x11.
    let b2 = [0x03, 0x81, 0x10, 0x11];
    assert_eq!(
        decode_all(&b2),
        Err(QpackRefusal::Decompression(
            QpackError::RequiredInsertCount(3)
        ))
    );
    // A relative dynamic reference (1, T=0) and a post-base one (0001) after a zero prefix.
    for section in [
        &[0x00, 0x00, 0x80][..],
        &[0x00, 0x00, 0x10][..],
        &[0x00, 0x00, 0x01][..],
    ] {
        assert_eq!(
            decode_all(section),
            Err(QpackRefusal::Decompression(QpackError::DynamicReference))
        );
    }
    let b2_encoder = [0x3f, 0xbd, 0x01, 0xc0, 0x0f, 0x77, 0x77, 0x77];
    let error = read_encoder_stream(&b2_encoder).unwrap_err();
    assert_eq!(error.code(), ErrorCode::QpackEncoderStreamError);
}

#[test]
fn references_past_the_static_table_are_refused() {
    // Indexed static 99 (6-bit prefix: 63 then 36).
    let section = [0x00, 0x00, 0xff, 36];
    assert_eq!(
        decode_all(&section),
        Err(QpackRefusal::Decompression(QpackError::BadStaticIndex(99)))
    );
    let refusal = decode_all(&section).unwrap_err();
    assert_eq!(refusal.error().code(), ErrorCode::QpackDecompressionFailed);
    for cut in [
        &[0x00][..],
        &[0x00, 0x00, 0x51, 0x0b, 0x2f][..],
        &[0x00, 0x00, 0x27][..],
    ] {
        assert_eq!(
            decode_all(cut),
            Err(QpackRefusal::Decompression(QpackError::Truncated))
        );
    }
}

#[test]
fn what_we_encode_decodes_to_the_same_fields() {
    let fields: [(&[u8], &[u8]); 6] = [
        (b":status", b"200"),
        (b":status", b"416"),
        (b"server", b"webstand"),
        (b"x-custom-name", b"a value that is long enough to be coded"),
        (b"authorization", b"Basic dXNlcjpwYXNz"),
        (b"content-length", b"2048"),
    ];
    let mut section = Vec::new();
    qpack_encoder::encode(fields, &mut section);
    // :status 200 is static entry 25, indexed (11 + 25).
    assert_eq!(&section[..3], &[0x00, 0x00, 0xc0 | 25]);
    let expected: Vec<_> = fields
        .iter()
        .map(|(n, v)| {
            (
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            )
        })
        .collect();
    assert_eq!(decode_all(&section).unwrap(), expected);
    // The credential was a never-indexed literal naming static entry 84 (4-bit prefix: 15 + 69).
    let at = section.windows(2).position(|w| w == [0x7f, 69]);
    assert!(at.is_some(), "authorization sent with the N bit");
}

#[test]
fn a_section_past_the_limit_is_refused_whole() {
    let long = vec![b'a'; 200];
    let fields: [(&[u8], &[u8]); 2] = [(b"x-a", &long), (b"x-b", b"b")];
    let mut section = Vec::new();
    qpack_encoder::encode(fields, &mut section);
    let mut decoder = Decoder::new(100);
    let mut handed = 0;
    let result = decoder.decode(&section, |_, _| handed += 1);
    assert_eq!(result, Err(QpackRefusal::SectionTooLarge { size: 271 }));
    assert_eq!(handed, 0);
    assert_eq!(result.unwrap_err().error().code(), ErrorCode::ExcessiveLoad);
}

#[test]
fn the_peer_instruction_streams_take_only_what_fits_no_table() {
    // Set Dynamic Table Capacity 0, then half of a second one (a 5-bit prefix run).
    assert_eq!(read_encoder_stream(&[0x20, 0x20]), Ok(2));
    assert_eq!(read_encoder_stream(&[0x20, 0x3f]), Ok(1));
    assert!(read_encoder_stream(&[0x21]).is_err());
    // Stream Cancellation of stream 4, then of stream 8.
    assert_eq!(read_decoder_stream(&[0x44, 0x48]), Ok(2));
    // A Section Acknowledgment, an Insert Count Increment.
    for bad in [[0x84], [0x01]] {
        let error = read_decoder_stream(&bad).unwrap_err();
        assert_eq!(error.code(), ErrorCode::QpackDecoderStreamError);
    }
}
