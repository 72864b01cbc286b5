//! HTTP/2 frames and HPACK for both roles: frames parsed and written back, settings applied as
//! either side, header blocks decoded under the server's limits and the engine's, and every
//! decoded list encoded again by our encoder and decoded back.

use crate::alloc::peak_during;
use webstand_h2::frame::{write, Frame, Head, HEADER_LEN};
use webstand_h2::hpack::{Decoder, Encoder, HpackRefusal};
use webstand_h2::settings::{Sender, Settings, MAX_MAX_FRAME_SIZE};

/// The server's SETTINGS_MAX_HEADER_LIST_SIZE and the engine's (server/h2/defence.rs,
/// engine/h2/prepared.rs).
const SERVER_LIST: u32 = 16 << 10;
const CLIENT_LIST: u32 = 256 << 10;

/// What a decoder holds whatever it reads: its tables (4 KiB of entries and their bookkeeping)
/// and the Huffman state machine built on first use (about 21 KiB).
const HPACK_FIXED: usize = 64 << 10;

/// A sequence of frames: each one parses or is refused, and one that parses is written again by
/// our writer and parses to the same frame; SETTINGS apply (or are refused whole) for both roles.
pub fn frames(data: &[u8]) {
    let mut rest = data;
    while let Some(head) = Head::peek(rest) {
        let len = head.len as usize;
        if head.check_len(MAX_MAX_FRAME_SIZE).is_err() || rest.len() < HEADER_LEN + len {
            return;
        }
        let payload = &rest[HEADER_LEN..HEADER_LEN + len];
        rest = &rest[HEADER_LEN + len..];
        let Ok(frame) = Frame::parse(head, payload) else {
            continue;
        };
        if let Some(again) = rewrite(&frame) {
            let head = Head::peek(&again).expect("a whole frame head");
            let reparsed = Frame::parse(head, &again[HEADER_LEN..]).expect("our frame parses");
            assert_eq!(same_content(reparsed), same_content(frame), "round trip");
        }
        if let Frame::Settings { params, .. } = frame {
            for sender in [Sender::Client, Sender::Server] {
                let mut settings = Settings::default();
                let before = settings;
                if settings.apply(params, sender).is_err() {
                    assert!(settings == before, "a refused SETTINGS changed something");
                }
            }
        }
    }
}

/// The frame written by our writer, for the kinds it writes as they were read.
fn rewrite(frame: &Frame) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match *frame {
        Frame::Data {
            stream,
            end_stream,
            data,
            ..
        } => write::data(&mut out, stream, end_stream, data),
        Frame::Priority { stream, priority } => write::priority(&mut out, stream, priority),
        Frame::RstStream { stream, code } => write::rst_stream(&mut out, stream, code),
        Frame::Ping { ack, data } => write::ping(&mut out, ack, data),
        Frame::GoAway {
            last_stream,
            code,
            debug,
        } => write::goaway(&mut out, last_stream, code, debug),
        Frame::WindowUpdate { stream, increment } => {
            write::window_update(&mut out, stream, increment)
        }
        _ => return None,
    }
    Some(out)
}

/// A frame with what our writer does not keep (DATA's padding) set aside.
fn same_content(frame: Frame) -> Frame {
    match frame {
        Frame::Data {
            stream,
            end_stream,
            data,
            ..
        } => Frame::Data {
            stream,
            end_stream,
            data,
            flow_len: 0,
        },
        other => other,
    }
}

/// Header blocks as the server decodes a client's (its limits): see `hpack`.
pub fn hpack_server(data: &[u8]) {
    hpack(data, SERVER_LIST);
}

/// Header blocks as the engine decodes a server's (its limits): see `hpack`.
pub fn hpack_client(data: &[u8]) {
    hpack(data, CLIENT_LIST);
}

/// Blocks (each a length byte and its bytes) decoded in turn on one connection's context: memory
/// stays within the table and the list limit; the fields handed out stay within the limit; and
/// each block's list, encoded by our encoder and decoded by a peer context, comes back the same.
fn hpack(data: &[u8], max_list: u32) {
    let mut decoder = Decoder::new(4096, max_list);
    let (mut encoder, mut peer) = (Encoder::new(), Decoder::new(4096, u32::MAX));
    let mut rest = data;
    while let Some((&n, tail)) = rest.split_first() {
        let n = usize::from(n).min(tail.len());
        let (block, tail) = tail.split_at(n);
        rest = tail;
        let mut fields: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut size = 0;
        let (r, peak) = peak_during(|| {
            decoder.decode(block, |name, value| {
                size += webstand_h2::hpack::field_size(name, value);
                fields.push((name.to_vec(), value.to_vec()));
            })
        });
        assert!(
            size <= max_list as usize,
            "handed out {size} bytes of fields"
        );
        assert!(
            peak <= 2 * size + 4 * block.len() + HPACK_FIXED,
            "decoding {} bytes held {peak}",
            block.len()
        );
        match r {
            Err(HpackRefusal::Compression(_)) => return,
            Err(HpackRefusal::ListTooLarge { size }) => assert!(size > max_list as usize),
            Ok(()) => {}
        }
        let mut encoded = Vec::new();
        encoder.encode(
            fields.iter().map(|(n, v)| (n.as_slice(), v.as_slice())),
            &mut encoded,
        );
        let mut back = Vec::new();
        peer.decode(&encoded, |n, v| back.push((n.to_vec(), v.to_vec())))
            .expect("our encoding decodes");
        assert_eq!(back, fields, "round trip");
    }
}
