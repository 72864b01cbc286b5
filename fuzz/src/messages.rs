//! Messages our own encoders and server write, the building blocks of several targets' seeds: a
//! request's fields as an HTTP/2 client sends them, an HPACK block, a client's side of an HTTP/2
//! connection, and what our server writes back to it (the engine's HTTP/2 target starts from that).

use webstand_h2::frame::{write as h2w, PREFACE};
use webstand_h2::hpack::Encoder;
use webstand_h2::settings::SettingId;
use webstand_h2::ErrorCode;

/// A request's fields as an HTTP/2 client sends them.
pub fn h2_fields(path: &str, method: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    [
        (":method", method),
        (":scheme", "http"),
        (":authority", "localhost"),
        (":path", path),
        ("user-agent", "webstand"),
        ("accept", "*/*"),
    ]
    .iter()
    .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
    .collect()
}

pub fn encode(enc: &mut Encoder, fields: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    enc.encode(fields.iter().map(|(n, v)| (&n[..], &v[..])), &mut out);
    out
}

/// A client's side of an HTTP/2 connection: preface, SETTINGS, requests on streams 1, 3, 5
/// (one with a body), a PING, a WINDOW_UPDATE, a PRIORITY and a reset.
pub fn h2_client() -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    h2w::settings(
        &mut out,
        &[
            (SettingId::InitialWindowSize, 1 << 20),
            (SettingId::HeaderTableSize, 256),
        ],
    );
    h2w::settings_ack(&mut out);
    let mut enc = Encoder::new();
    h2w::headers(
        &mut out,
        1,
        true,
        &encode(&mut enc, &h2_fields("/", "GET")),
        16_384,
    );
    h2w::headers(
        &mut out,
        3,
        false,
        &encode(&mut enc, &h2_fields("/later", "POST")),
        16,
    );
    h2w::data(&mut out, 3, true, b"hello");
    h2w::headers(
        &mut out,
        5,
        true,
        &encode(&mut enc, &h2_fields("/stream", "GET")),
        16_384,
    );
    h2w::ping(&mut out, false, *b"12345678");
    h2w::window_update(&mut out, 0, 1 << 16);
    h2w::rst_stream(&mut out, 5, ErrorCode::Cancel);
    h2w::goaway(&mut out, 0, ErrorCode::NoError, b"bye");
    out
}

/// What our own server writes back to [`h2_client`]: a server's side of an HTTP/2 connection.
pub fn server_h2() -> Vec<u8> {
    let config = webstand_server::Config::default();
    let client = h2_client();
    webstand_server::fuzzing::drive(
        webstand_server::fuzzing::Speak::Http2,
        &config,
        &[&client[..]],
    )
    .written
}
