//! The HTTP/2 bytes one side wrote, read back as its peer reads them and checked whole: every
//! byte is whole frames, SETTINGS first; every frame parses; no frame comes inside a header
//! block; every header block decodes and opens with the pseudo-header that side must send first
//! (`:method` from a client, `:status` from a server). Shared by the targets that drive the
//! server (`serve`) and the engine (`engine_h2`).

use webstand_h2::frame::{Frame, Head, Kind, HEADER_LEN};
use webstand_h2::hpack::Decoder;
use webstand_h2::settings::MAX_MAX_FRAME_SIZE;

/// Who wrote the bytes, as the assertions name it ("server", "engine"), and the field its header
/// blocks must open with.
pub struct Writer {
    pub who: &'static str,
    pub first_field: &'static [u8],
}

/// Reads `written` (after any preface) frame by frame as [`Writer`]'s peer would: `headers` sees
/// each HEADERS frame's stream, `other` every frame that is neither HEADERS nor CONTINUATION.
pub fn read<'a>(
    written: &'a [u8],
    writer: &Writer,
    mut headers: impl FnMut(u32),
    mut other: impl FnMut(Frame<'a>),
) {
    let who = writer.who;
    let mut rest = written;
    let mut decoder = Decoder::new(4096, u32::MAX);
    let mut block: Vec<u8> = Vec::new();
    let mut first = true;
    while !rest.is_empty() {
        let head = Head::peek(rest).expect("a whole frame head");
        assert!(head.check_len(MAX_MAX_FRAME_SIZE).is_ok());
        let len = head.len as usize;
        assert!(rest.len() >= HEADER_LEN + len, "a frame cut short");
        if first {
            assert_eq!(head.kind, Kind::Settings, "the {who}'s SETTINGS come first");
            first = false;
        }
        let frame = Frame::parse(head, &rest[HEADER_LEN..HEADER_LEN + len])
            .unwrap_or_else(|e| panic!("the {who} wrote a bad frame: {e:?}"));
        rest = &rest[HEADER_LEN + len..];
        let (fragment, end) = match frame {
            Frame::Headers {
                stream,
                end_headers,
                fragment,
                ..
            } => {
                assert!(block.is_empty(), "HEADERS inside a header block");
                headers(stream);
                (fragment, end_headers)
            }
            Frame::Continuation {
                fragment,
                end_headers,
                ..
            } => (fragment, end_headers),
            frame => {
                assert!(block.is_empty(), "a frame inside a header block");
                other(frame);
                continue;
            }
        };
        block.extend_from_slice(fragment);
        if end {
            let mut names = Vec::new();
            decoder
                .decode(&block, |n, _| names.push(n.to_vec()))
                .unwrap_or_else(|e| panic!("the {who}'s header block decodes: {e:?}"));
            assert_eq!(names.first().map(Vec::as_slice), Some(writer.first_field));
            block.clear();
        }
    }
    assert!(block.is_empty(), "a header block left open");
}
