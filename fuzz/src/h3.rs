//! HTTP/3 frames (crates/h3) and QPACK: frame heads and payloads parsed, checked for both sides
//! on both kinds of stream, and written again by our writer; field sections decoded within the
//! announced limit and encoded back by our encoder; the peer's encoder and decoder streams read.

use crate::alloc::peak_during;
use webstand_h3::frame::{check, kind, parse, read_head, write, Frame, Place, Sender};
use webstand_h3::qpack::{read_decoder_stream, read_encoder_stream, Decoder, QpackRefusal};
use webstand_h3::{qpack_encoder, settings::id, varint};

/// A sequence of frames: each head and payload read, checked and (when it parses) written again
/// by our writer to the same frame.
pub fn frames(data: &[u8]) {
    let mut rest = data;
    while let Some(head) = read_head(rest) {
        for place in [Place::Control, Place::Request] {
            for sender in [Sender::Client, Sender::Server] {
                let _ = check(head.kind, place, sender);
            }
        }
        let Some(len) = usize::try_from(head.len).ok().filter(|&n| n <= rest.len()) else {
            return;
        };
        let Some(payload) = rest.get(head.size..head.size + len) else {
            return;
        };
        rest = &rest[head.size + len..];
        if head.kind == kind::DATA {
            continue;
        }
        let Ok(frame) = parse(&head, payload) else {
            continue;
        };
        let mut again = Vec::new();
        match &frame {
            Frame::Headers(block) => write::headers(&mut again, block),
            Frame::GoAway(id) => write::goaway(&mut again, *id),
            Frame::MaxPushId(id) => write::single(&mut again, kind::MAX_PUSH_ID, *id),
            Frame::CancelPush(id) => write::single(&mut again, kind::CANCEL_PUSH, *id),
            Frame::Settings(s) => {
                let mut values = vec![(id::QPACK_MAX_TABLE_CAPACITY, s.qpack_max_table_capacity)];
                values.extend(
                    s.max_field_section_size
                        .map(|v| (id::MAX_FIELD_SECTION_SIZE, v)),
                );
                values.push((id::QPACK_BLOCKED_STREAMS, s.qpack_blocked_streams));
                write::settings(&mut again, &values);
            }
            _ => continue,
        }
        let h = read_head(&again).expect("our frame's head");
        assert_eq!(h.kind, head.kind);
        let reparsed = parse(&h, &again[h.size..]).expect("our frame parses");
        assert_eq!(reparsed, frame, "round trip");
        let (value, n) = varint::read(&again).expect("a varint");
        assert_eq!((value, n), (head.kind, varint::size(head.kind)));
    }
}

/// The first byte picks the announced section limit; the rest is one field section, then (for
/// coverage of the stream readers) the same bytes as the peer's encoder and decoder streams.
pub fn qpack(data: &[u8]) {
    let Some((&limit, section)) = data.split_first() else {
        return;
    };
    let max = 64 * (u64::from(limit) + 1);
    let mut decoder = Decoder::new(max);
    let mut fields: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut size = 0;
    let (r, peak) = peak_during(|| {
        decoder.decode(section, |n, v| {
            size += n.len() + v.len() + 32;
            fields.push((n.to_vec(), v.to_vec()));
        })
    });
    assert!(size as u64 <= max, "handed out {size} bytes");
    // 64 KiB: the Huffman state machine built on first use, and the scratch buffers.
    assert!(
        peak <= 2 * size + 4 * section.len() + (64 << 10),
        "held {peak}"
    );
    match r {
        Ok(()) => {
            let mut encoded = Vec::new();
            qpack_encoder::encode(
                fields.iter().map(|(n, v)| (n.as_slice(), v.as_slice())),
                &mut encoded,
            );
            let mut back = Vec::new();
            Decoder::new(u64::MAX)
                .decode(&encoded, |n, v| back.push((n.to_vec(), v.to_vec())))
                .expect("our section decodes");
            assert_eq!(back, fields, "round trip");
        }
        Err(QpackRefusal::SectionTooLarge { size }) => assert!(size as u64 > max),
        Err(_) => {}
    }
    if let Ok(n) = read_encoder_stream(section) {
        assert!(n <= section.len());
    }
    if let Ok(n) = read_decoder_stream(section) {
        assert!(n <= section.len());
    }
}
