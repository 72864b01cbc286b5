//! HTTP/2 for the load generator (`protocol::Protocol::Http2`, `bench --h2`): what is built once per
//! run (each request's header block, the bytes that open a connection, ALPN `h2`) before the load
//! threads start. A connection's frames and streams are `h2_conn.rs`'s; the event loop that
//! multiplexes streams over connections is `h2_worker.rs`'s. The wire syntax is `webstand-h2`'s,
//! shared with the server.
//!
//! Header blocks are encoded once per URL and sent as they are on every connection: the encoder
//! works with a dynamic table of size 0 (announced at the start of each connection's first block),
//! so a block never depends on what the connection sent before, and a request costs a copy, not an
//! HPACK encoding.

use crate::target::Scheme;
use crate::tls_config::TlsSetup;
use crate::{H2Plan, Plan};
use std::sync::Arc;
use webstand_h2::frame::{write, PREFACE};
use webstand_h2::hpack::Encoder;
use webstand_h2::settings::{SettingId, DEFAULT_WINDOW, MIN_MAX_FRAME_SIZE};

/// HPACK's "dynamic table size update" to 0 (RFC 7541 §6.3): the first byte of a connection's
/// first header block, so the server's decoder agrees that the table is empty.
pub(crate) const TABLE_SIZE_ZERO: u8 = 0x20;

/// The last client stream identifier (2^31 - 1): a connection that reaches it is replaced.
pub(crate) const LAST_STREAM_ID: u32 = 0x7fff_ffff;

/// Largest header block accepted from a server (HEADERS and CONTINUATIONs joined).
pub(crate) const MAX_HEADER_BLOCK: usize = 256 * 1024;
/// Our SETTINGS_MAX_HEADER_LIST_SIZE: a decoded response head larger than this fails its stream.
pub(crate) const MAX_HEADER_LIST: u32 = 256 * 1024;

/// The reason a connection ends when the server's first frame is not SETTINGS (RFC 9113 §3.4):
/// a server that does not speak HTTP/2 here (typically an HTTP/1 answer to the preface).
pub(crate) const NOT_H2: &str =
    "the server does not speak HTTP/2 here (its first bytes are not a SETTINGS frame)";

/// A connection error of the server's making (PROTOCOL_ERROR).
pub(crate) fn protocol(reason: &'static str) -> webstand_h2::Error {
    webstand_h2::Error::connection(webstand_h2::ErrorCode::ProtocolError, reason)
}

/// What every HTTP/2 connection of a run starts from.
pub(crate) struct Prepared {
    /// The preface, our SETTINGS and the connection window's WINDOW_UPDATE, sent on connect.
    pub opening: Vec<u8>,
    pub max_streams: u32,
    /// Our receive windows: each stream's and the connection's.
    pub stream_window: u32,
    pub connection_window: u32,
}

fn window(bits: u8) -> u32 {
    ((1u64 << bits.clamp(1, 31)) - 1) as u32
}

impl Prepared {
    pub(crate) fn new(h2: &H2Plan) -> Prepared {
        let stream_window = window(h2.window_bits);
        let connection_window = window(h2.connection_window_bits);
        let mut opening = PREFACE.to_vec();
        write::settings(
            &mut opening,
            &[
                (SettingId::EnablePush, 0),
                (SettingId::InitialWindowSize, stream_window),
                (SettingId::MaxFrameSize, MIN_MAX_FRAME_SIZE),
                (SettingId::MaxHeaderListSize, MAX_HEADER_LIST),
            ],
        );
        if connection_window > DEFAULT_WINDOW {
            write::window_update(&mut opening, 0, connection_window - DEFAULT_WINDOW);
        }
        Prepared {
            opening,
            max_streams: h2.max_streams.max(1),
            stream_window,
            connection_window,
        }
    }
}

/// The request's header fields (RFC 9113 §8.3.1: pseudo-headers first, names lower case, no
/// connection-specific fields), the same ones HTTP/1's request carries.
fn request_fields(plan: &Plan, path: &str) -> Vec<(String, String)> {
    let user_has = |name: &str| {
        plan.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let t = &plan.target;
    let scheme = if plan.tls.is_some() {
        Scheme::Https
    } else {
        Scheme::Http
    };
    let authority = plan
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| match t.port == scheme.default_port() {
            true => t.host.clone(),
            false => format!("{}:{}", t.host, t.port),
        });
    let mut fields = vec![
        (":method".to_string(), plan.method.clone()),
        (":scheme".to_string(), scheme.name().to_string()),
        (":authority".to_string(), authority),
        (":path".to_string(), path.to_string()),
    ];
    let mut add = |name: &str, value: String| {
        if !user_has(name) {
            fields.push((name.to_string(), value));
        }
    };
    add(
        "user-agent",
        concat!("webstand/", env!("CARGO_PKG_VERSION")).to_string(),
    );
    add("accept", "*/*".to_string());
    if let Some((body, ctype)) = &plan.body {
        add("content-type", ctype.clone());
        add("content-length", body.len().to_string());
    }
    const CONNECTION_SPECIFIC: [&str; 6] = [
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "upgrade",
    ];
    for (n, v) in &plan.headers {
        let name = n.to_ascii_lowercase();
        if !CONNECTION_SPECIFIC.contains(&name.as_str()) {
            fields.push((name, v.clone()));
        }
    }
    fields
}

/// One request's header block, encoded without the dynamic table.
pub(crate) fn request_block(plan: &Plan, path: &str) -> Vec<u8> {
    let mut encoder = Encoder::new();
    encoder.set_peer_table_size(0);
    let mut block = Vec::new();
    let fields = request_fields(plan, path);
    encoder.encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut block,
    );
    // The encoder opened the block with the size update; connections send it once, themselves.
    debug_assert_eq!(block.first(), Some(&TABLE_SIZE_ZERO));
    block.remove(0);
    block
}

/// The run's TLS set up to offer `h2` alone by ALPN: a server that does not choose it does not
/// speak HTTP/2 over TLS, and the connection says so rather than falling back.
pub(crate) fn alpn_h2(mut setup: TlsSetup) -> TlsSetup {
    Arc::make_mut(&mut setup.config).alpn_protocols = vec![b"h2".to_vec()];
    setup
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_h2::hpack::Decoder;

    #[test]
    fn a_request_block_decodes_to_the_request_and_leaves_the_table_empty() {
        let t = crate::Target {
            host: "example.test".into(),
            port: 8443,
            addrs: vec![],
        };
        let mut plan = Plan::new(t, "/a?b=1");
        plan.tls = Some(Default::default());
        plan.headers = vec![
            ("Connection".into(), "close".into()),
            ("X-Mine".into(), "1".into()),
        ];
        let block = request_block(&plan, "/a?b=1");
        let mut decoder = Decoder::new(4096, 65_536);
        let mut wire = vec![TABLE_SIZE_ZERO];
        wire.extend_from_slice(&block);
        for round in 0..2 {
            let mut fields = Vec::new();
            let bytes = if round == 0 { &wire[..] } else { &block[..] };
            decoder
                .decode(bytes, |n, v| fields.push((n.to_vec(), v.to_vec())))
                .unwrap();
            let text: Vec<(&str, &str)> = fields
                .iter()
                .map(|(n, v)| {
                    (
                        std::str::from_utf8(n).unwrap(),
                        std::str::from_utf8(v).unwrap(),
                    )
                })
                .collect();
            assert_eq!(
                &text[..4],
                &[
                    (":method", "GET"),
                    (":scheme", "https"),
                    (":authority", "example.test:8443"),
                    (":path", "/a?b=1"),
                ]
            );
            assert!(text.contains(&("x-mine", "1")));
            assert!(!text.iter().any(|(n, _)| *n == "connection"));
        }
    }
}
