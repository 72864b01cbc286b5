use super::*;

#[test]
fn a_head_is_read_once_whole() {
    let mut out = Vec::new();
    write::data_head(&mut out, 300);
    assert_eq!(out, [0x00, 0x41, 0x2c]);
    assert_eq!(read_head(&out[..2]), None);
    let head = read_head(&out).unwrap();
    assert_eq!((head.kind, head.len, head.size), (kind::DATA, 300, 3));
}

#[test]
fn integer_frames_round_trip_and_refuse_extra_bytes() {
    let mut out = Vec::new();
    write::goaway(&mut out, 400);
    let head = read_head(&out).unwrap();
    assert_eq!(parse(&head, &out[head.size..]), Ok(Frame::GoAway(400)));
    let mut long = out.clone();
    long.push(0);
    long[1] += 1;
    let head = read_head(&long).unwrap();
    let error = parse(&head, &long[head.size..]).unwrap_err();
    assert_eq!(error.code(), ErrorCode::FrameError);
    let empty = Head {
        kind: kind::MAX_PUSH_ID,
        len: 0,
        size: 2,
    };
    assert!(parse(&empty, b"").is_err());
}

#[test]
fn frames_are_checked_against_their_stream() {
    use Place::*;
    use Sender::*;
    assert!(check(kind::HEADERS, Request, Client).is_ok());
    assert!(check(kind::DATA, Control, Client).is_err());
    assert!(check(kind::SETTINGS, Request, Client).is_err());
    assert!(check(kind::GOAWAY, Control, Server).is_ok());
    assert!(check(kind::MAX_PUSH_ID, Control, Client).is_ok());
    assert!(check(kind::MAX_PUSH_ID, Control, Server).is_err());
    assert!(check(kind::PUSH_PROMISE, Request, Client).is_err());
    assert!(check(kind::PUSH_PROMISE, Request, Server).is_ok());
    // HTTP/2's PRIORITY, PING, WINDOW_UPDATE and CONTINUATION.
    for reserved in [0x2, 0x6, 0x8, 0x9] {
        let error = check(reserved, Request, Client).unwrap_err();
        assert_eq!(error.code(), ErrorCode::FrameUnexpected);
    }
    // Reserved types for greasing (0x1f * N + 0x21) and unknown ones pass, to be skipped.
    assert!(check(0x21, Request, Client).is_ok());
    assert!(check(0x1f * 7 + 0x21, Control, Server).is_ok());
    let head = Head {
        kind: 0x21,
        len: 3,
        size: 2,
    };
    assert_eq!(parse(&head, b"abc"), Ok(Frame::Unknown(0x21)));
}

#[test]
fn settings_frames_are_written_as_read() {
    let mut out = Vec::new();
    write::settings(&mut out, &[(0x6, 16384), (0x1, 0)]);
    let head = read_head(&out).unwrap();
    let Ok(Frame::Settings(s)) = parse(&head, &out[head.size..]) else {
        panic!("not SETTINGS");
    };
    assert_eq!(s.max_field_section_size, Some(16384));
    assert_eq!(s.qpack_max_table_capacity, 0);
}
