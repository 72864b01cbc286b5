//! Frames against RFC 9113's layouts and checks.

use super::*;
use crate::settings::SettingId;

fn parse(bytes: &[u8]) -> Result<Frame<'_>, Error> {
    let head = Head::peek(bytes).expect("a whole header");
    Frame::parse(head, &bytes[HEADER_LEN..HEADER_LEN + head.len as usize])
}

fn code(bytes: &[u8]) -> ErrorCode {
    parse(bytes).unwrap_err().code()
}

#[test]
fn the_preface_and_a_frame_header_are_as_the_rfc_lays_them_out() {
    assert_eq!(PREFACE.len(), 24);
    assert!(PREFACE.starts_with(b"PRI * HTTP/2.0"));
    let head = Head::new(Kind::Headers, flags::END_HEADERS, 0x7fff_ffff, 0x01_0203);
    let mut out = Vec::new();
    head.write(&mut out);
    assert_eq!(out, [0x01, 0x02, 0x03, 0x01, 0x04, 0x7f, 0xff, 0xff, 0xff]);
    assert_eq!(Head::peek(&out), Some(head));
    // The reserved bit of the stream identifier is ignored on receipt (§4.1).
    out[5] = 0xff;
    assert_eq!(Head::peek(&out).unwrap().stream, 0x7fff_ffff);
    assert_eq!(Head::peek(&out[..8]), None);
    assert_eq!(
        head.check_len(16_384).unwrap_err().code(),
        ErrorCode::FrameSizeError
    );
}

#[test]
fn every_writer_produces_a_frame_that_parses_back() {
    let mut out = Vec::new();
    write::data(&mut out, 1, true, b"hello");
    let data = Frame::Data {
        stream: 1,
        end_stream: true,
        data: b"hello",
        flow_len: 5,
    };
    assert_eq!(parse(&out), Ok(data));
    let written = |w: &dyn Fn(&mut Vec<u8>)| {
        let mut o = Vec::new();
        w(&mut o);
        o
    };
    let cases: Vec<(Vec<u8>, Frame)> = vec![
        (
            written(&write::settings_ack),
            Frame::Settings {
                ack: true,
                params: &[],
            },
        ),
        (
            written(&|o| write::ping(o, true, [7; 8])),
            Frame::Ping {
                ack: true,
                data: [7; 8],
            },
        ),
        (
            written(&|o| write::goaway(o, 5, ErrorCode::EnhanceYourCalm, b"bye")),
            Frame::GoAway {
                last_stream: 5,
                code: ErrorCode::EnhanceYourCalm,
                debug: b"bye",
            },
        ),
        (
            written(&|o| write::rst_stream(o, 3, ErrorCode::Cancel)),
            Frame::RstStream {
                stream: 3,
                code: ErrorCode::Cancel,
            },
        ),
        (
            written(&|o| write::window_update(o, 0, 1 << 30)),
            Frame::WindowUpdate {
                stream: 0,
                increment: 1 << 30,
            },
        ),
    ];
    for (bytes, frame) in cases {
        assert_eq!(parse(&bytes), Ok(frame));
    }
    let p = Priority {
        exclusive: true,
        depends_on: 3,
        weight: 200,
    };
    let mut o = Vec::new();
    write::priority(&mut o, 5, p);
    assert_eq!(
        parse(&o),
        Ok(Frame::Priority {
            stream: 5,
            priority: p
        })
    );
    let mut o = Vec::new();
    write::settings(&mut o, &[(SettingId::EnablePush, 0)]);
    assert_eq!(o, [0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0]);
}

#[test]
fn a_long_header_block_is_split_into_continuations() {
    let block: Vec<u8> = (0..40u8).collect();
    let mut out = Vec::new();
    write::headers(&mut out, 9, true, &block, 16);
    let mut rest = &out[..];
    let mut joined = Vec::new();
    let mut kinds = Vec::new();
    while let Some(head) = Head::peek(rest) {
        let end = HEADER_LEN + head.len as usize;
        match parse(&rest[..end]).unwrap() {
            Frame::Headers {
                stream: 9,
                end_stream: true,
                end_headers,
                fragment,
                ..
            } => {
                kinds.push(("HEADERS", end_headers));
                joined.extend_from_slice(fragment);
            }
            Frame::Continuation {
                stream: 9,
                end_headers,
                fragment,
            } => {
                kinds.push(("CONTINUATION", end_headers));
                joined.extend_from_slice(fragment);
            }
            other => panic!("unexpected {other:?}"),
        }
        rest = &rest[end..];
    }
    assert_eq!(joined, block);
    assert_eq!(
        kinds,
        [
            ("HEADERS", false),
            ("CONTINUATION", false),
            ("CONTINUATION", true)
        ]
    );
    let mut one = Vec::new();
    write::headers(&mut one, 1, false, b"abc", 16);
    assert!(matches!(
        parse(&one),
        Ok(Frame::Headers {
            end_headers: true,
            end_stream: false,
            ..
        })
    ));
}

#[test]
fn padding_and_priority_are_stripped_from_headers_and_data() {
    // HEADERS, PADDED|PRIORITY|END_HEADERS, stream 3: pad 2, dependency 1 weight 15, block "ab".
    let frame = [
        0, 0, 10, 1, 0x2c, 0, 0, 0, 3, 2, 0, 0, 0, 1, 15, b'a', b'b', 0, 0,
    ];
    let Frame::Headers {
        fragment, priority, ..
    } = parse(&frame).unwrap()
    else {
        panic!()
    };
    assert_eq!(fragment, b"ab");
    assert_eq!(
        priority,
        Some(Priority {
            exclusive: false,
            depends_on: 1,
            weight: 15
        })
    );
    // DATA, PADDED, stream 1: pad 3, "xy": flow control counts all 6 bytes.
    let data = [0, 0, 6, 0, 0x8, 0, 0, 0, 1, 3, b'x', b'y', 0, 0, 0];
    let want = Frame::Data {
        stream: 1,
        end_stream: false,
        data: b"xy",
        flow_len: 6,
    };
    assert_eq!(parse(&data), Ok(want));
}

#[test]
fn malformed_frames_are_the_errors_rfc_9113_names() {
    use ErrorCode::*;
    // Padding as long as the payload (§6.1).
    assert_eq!(code(&[0, 0, 2, 0, 0x8, 0, 0, 0, 1, 2, 0]), ProtocolError);
    // DATA, HEADERS, RST_STREAM, CONTINUATION on stream 0.
    assert_eq!(code(&[0, 0, 0, 0, 0, 0, 0, 0, 0]), ProtocolError);
    assert_eq!(code(&[0, 0, 0, 1, 4, 0, 0, 0, 0]), ProtocolError);
    assert_eq!(
        code(&[0, 0, 4, 3, 0, 0, 0, 0, 0, 0, 0, 0, 8]),
        ProtocolError
    );
    assert_eq!(code(&[0, 0, 0, 9, 4, 0, 0, 0, 0]), ProtocolError);
    // SETTINGS, PING, GOAWAY on a stream.
    assert_eq!(code(&[0, 0, 0, 4, 0, 0, 0, 0, 1]), ProtocolError);
    assert_eq!(
        code(&[0, 0, 8, 6, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
        ProtocolError
    );
    assert_eq!(
        code(&[0, 0, 8, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
        ProtocolError
    );
    // Wrong fixed lengths.
    assert_eq!(
        code(&[0, 0, 7, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        FrameSizeError
    );
    assert_eq!(code(&[0, 0, 3, 3, 0, 0, 0, 0, 1, 0, 0, 0]), FrameSizeError);
    assert_eq!(
        code(&[0, 0, 5, 4, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]),
        FrameSizeError
    );
    assert_eq!(
        code(&[0, 0, 6, 4, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]),
        FrameSizeError
    );
    assert_eq!(
        code(&[0, 0, 4, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        FrameSizeError
    );
    assert_eq!(code(&[0, 0, 3, 8, 0, 0, 0, 0, 0, 0, 0, 1]), FrameSizeError);
    // A PRIORITY frame of the wrong length is an error of its stream only (§6.3).
    let err = parse(&[0, 0, 4, 2, 0, 0, 0, 0, 3, 0, 0, 0, 1]).unwrap_err();
    assert!(matches!(
        err,
        Error::Stream {
            stream: 3,
            code: FrameSizeError,
            ..
        }
    ));
    // A zero increment: stream error on a stream, connection error on stream 0 (§6.9).
    let err = parse(&[0, 0, 4, 8, 0, 0, 0, 0, 5, 0, 0, 0, 0]).unwrap_err();
    assert!(matches!(
        err,
        Error::Stream {
            stream: 5,
            code: ProtocolError,
            ..
        }
    ));
    let err = parse(&[0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
    assert!(matches!(
        err,
        Error::Connection {
            code: ProtocolError,
            ..
        }
    ));
    // A stream that depends on itself.
    let err = parse(&[0, 0, 5, 2, 0, 0, 0, 0, 3, 0, 0, 0, 3, 16]).unwrap_err();
    assert!(matches!(
        err,
        Error::Stream {
            stream: 3,
            code: ProtocolError,
            ..
        }
    ));
}

#[test]
fn unknown_frame_types_are_kept_for_the_caller_to_ignore() {
    assert_eq!(
        parse(&[0, 0, 1, 0xfa, 0xff, 0, 0, 0, 0, 9]),
        Ok(Frame::Unknown { kind: 0xfa })
    );
    assert_eq!(Kind::from_u8(0xfa), Kind::Unknown(0xfa));
    for n in 0..10 {
        assert_eq!(Kind::from_u8(n).to_u8(), n);
    }
}

#[test]
fn push_promise_parses_its_promised_stream() {
    let frame = [0, 0, 6, 5, 0x4, 0, 0, 0, 1, 0, 0, 0, 2, 0x82, 0x84];
    let want = Frame::PushPromise {
        stream: 1,
        promised: 2,
        end_headers: true,
        fragment: &[0x82, 0x84],
    };
    assert_eq!(parse(&frame), Ok(want));
}
