//! What HTTP/2 builds once per run, before the load threads start: each request's header blocks,
//! the bytes that open a connection, ALPN `h2`. The wire syntax is `webstand-h2`'s, shared with
//! the server.
//!
//! Header blocks are encoded once per URL, before the run, in two forms, so a request costs a copy,
//! not an HPACK encoding. Indexed: a connection's first block adds the request's repeated fields
//! (`:authority`, `user-agent`, `accept`, the user's headers) to HPACK's dynamic table, and every
//! later block names them by index, leaving `:path` a Huffman literal (h2load's blocks: a repeat
//! request of /2k.html is 13 bytes, was 52; the server decodes no literal but the path).
//! Standalone: the dynamic table at size 0 (announced at the start of the block), each block
//! independent of what the connection sent before, for a server whose table is below the 4,096
//! bytes the indexed blocks were encoded against, or that shrinks it during the connection.

use crate::target::{authority, scheme_of};
use crate::transport::tls_config::TlsSetup;
use std::borrow::Cow;
use std::sync::Arc;
use webstand_h2::frame::{write, PREFACE};
use webstand_h2::hpack::{field_size, Encoder};
use webstand_h2::hpack_encoder::ENCODER_TABLE_CAP;
use webstand_h2::settings::{SettingId, DEFAULT_WINDOW, MIN_MAX_FRAME_SIZE};
use webstand_results::plan::Plan;

/// HPACK's "dynamic table size update" to 0 (RFC 7541 §6.3): the first byte of a standalone
/// connection's first header block, so the server's decoder agrees that the table is empty.
const TABLE_SIZE_ZERO: u8 = 0x20;

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
    /// Each request's indexed blocks; `None` when they cannot be shared between requests.
    pub indexed: Option<Indexed>,
}

/// Each request's header block in its indexed forms (see the file's doc), by request index.
pub(crate) struct Indexed {
    /// A connection's first block: the repeated fields as literals with incremental indexing.
    pub first: Vec<Vec<u8>>,
    /// Every later block: the repeated fields by their dynamic-table index.
    pub steady: Vec<Vec<u8>>,
}

/// The dynamic table size the indexed blocks assume the server's decoder allows (RFC 7541's
/// initial SETTINGS_HEADER_TABLE_SIZE, our encoder's cap).
const INDEXED_TABLE_SIZE: u32 = ENCODER_TABLE_CAP;

fn window(bits: u8) -> u32 {
    ((1u64 << bits.clamp(1, 31)) - 1) as u32
}

impl Prepared {
    pub(crate) fn new(plan: &Plan) -> Prepared {
        let h2 = plan.h2.unwrap_or_default();
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
            // A script's requests are its own, each block standalone (`script_mux.rs`).
            indexed: indexed_blocks(plan).filter(|_| plan.script.is_none()),
        }
    }
}

/// How a connection's request header blocks use HPACK's dynamic table.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Blocks {
    /// No block sent yet.
    Fresh,
    /// The first block indexed the repeated fields; later ones name them by index.
    Indexed,
    /// The table at size 0, each block on its own; `announce`: the next block opens with the
    /// size update that says so.
    Standalone { announce: bool },
}

impl Blocks {
    /// Request `req`'s block in this connection's form, chosen at its first block by the server's
    /// table size `table`; a standalone block that must say the table is empty opens with
    /// the size update to 0 (a copy, once per connection at most).
    pub(crate) fn next<'a>(
        &mut self,
        p: &'a Prepared,
        req: usize,
        standalone: &'a [u8],
        table: u32,
    ) -> Cow<'a, [u8]> {
        match (*self, &p.indexed) {
            (Blocks::Fresh, Some(ix)) if table >= INDEXED_TABLE_SIZE => {
                *self = Blocks::Indexed;
                Cow::Borrowed(&ix.first[req])
            }
            (Blocks::Indexed, Some(ix)) => Cow::Borrowed(&ix.steady[req]),
            (Blocks::Standalone { announce: false }, _) => Cow::Borrowed(standalone),
            _ => {
                *self = Blocks::Standalone { announce: false };
                let mut first = Vec::with_capacity(standalone.len() + 1);
                first.push(TABLE_SIZE_ZERO);
                first.extend_from_slice(standalone);
                Cow::Owned(first)
            }
        }
    }

    /// The server's SETTINGS_HEADER_TABLE_SIZE is now `table`: below what our indices assume,
    /// the next block empties the table (RFC 7541 §4.2) and later ones do without it.
    pub(crate) fn table_size(&mut self, table: u32) {
        if *self == Blocks::Indexed && table < INDEXED_TABLE_SIZE {
            *self = Blocks::Standalone { announce: true };
        }
    }
}

fn encode(encoder: &mut Encoder, fields: &[(String, String)]) -> Vec<u8> {
    let mut block = Vec::new();
    encoder.encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut block,
    );
    block
}

/// Every request's indexed blocks. A connection's first request may be any of them, so the
/// fields its first block indexes must be every request's: the request fields differ only in
/// `:path`, which is never indexed, and each request's steady block is checked to be the same
/// bytes after the first request's block as after its own. The repeated fields must fit the table
/// together: else the first block evicts some, every later one adds them again, and no block
/// would stay the same (such runs go standalone).
fn indexed_blocks(plan: &Plan) -> Option<Indexed> {
    let fields: Vec<_> = plan
        .requests
        .iter()
        .map(|r| request_fields(plan, &r.path))
        .collect();
    let repeated: usize = (fields.first()?.iter())
        .filter(|(n, _)| n != ":path")
        .map(|(n, v)| field_size(n.as_bytes(), v.as_bytes()))
        .sum();
    if repeated > INDEXED_TABLE_SIZE as usize {
        return None;
    }
    let mut indexed = Indexed {
        first: Vec::with_capacity(fields.len()),
        steady: Vec::with_capacity(fields.len()),
    };
    for f in &fields {
        let mut own = Encoder::new();
        indexed.first.push(encode(&mut own, f));
        let steady = encode(&mut own, f);
        let mut after_first = Encoder::new();
        encode(&mut after_first, fields.first()?);
        if encode(&mut after_first, f) != steady {
            return None;
        }
        indexed.steady.push(steady);
    }
    Some(indexed)
}

/// HTTP/1's fields that HTTP/2 and HTTP/3 do not carry (RFC 9113 §8.2.2; `host` becomes
/// `:authority`).
pub(crate) const CONNECTION_SPECIFIC: [&str; 6] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// The request's header fields (RFC 9113 §8.3.1: pseudo-headers first, names lower case, no
/// connection-specific fields), the same ones HTTP/1's request carries; HTTP/3's are these too
/// (RFC 9114 §4.3.1).
pub(crate) fn request_fields(plan: &Plan, path: &str) -> Vec<(String, String)> {
    let host = plan
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("host"));
    let authority = host.map_or_else(|| authority(plan), |(_, v)| v.clone());
    let mut fields = vec![
        (":method".to_string(), plan.method.clone()),
        (":scheme".to_string(), scheme_of(plan).name().to_string()),
        (":authority".to_string(), authority),
        (":path".to_string(), path.to_string()),
    ];
    let mut add = |name: &str, value: String| {
        if !plan.has_header(name) {
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
    fields_block(&request_fields(plan, path))
}

/// A header block of `fields` encoded without the dynamic table (a script's requests').
pub(crate) fn fields_block(fields: &[(String, String)]) -> Vec<u8> {
    let mut encoder = Encoder::new();
    encoder.set_peer_table_size(0);
    let mut block = Vec::new();
    encoder.encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut block,
    );
    // The encoder opened the block with the size update; connections send it once, themselves.
    debug_assert_eq!(block.first(), Some(&TABLE_SIZE_ZERO));
    block.remove(0);
    block
}

/// The run's TLS set up to offer `h2` by ALPN, and `http/1.1` after it (as h2load does) so that
/// a server without HTTP/2 names what it speaks rather than refusing the handshake (nginx) or
/// choosing a protocol not offered (Apache): a connection that does not get h2 says so and ends
/// the run (`h2/refused.rs`), never falling back.
pub(crate) fn alpn_h2(mut setup: TlsSetup) -> TlsSetup {
    Arc::make_mut(&mut setup.config).alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    setup
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_h2::hpack::Decoder;

    #[test]
    fn a_request_block_decodes_to_the_request_and_leaves_the_table_empty() {
        let t = webstand_results::plan::Target {
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

    #[test]
    fn fields_that_do_not_fit_the_table_together_are_sent_standalone() {
        let t = webstand_results::plan::Target {
            host: "example.test".into(),
            port: 80,
            addrs: vec![],
        };
        let mut plan = Plan::new(t, "/");
        let ix = indexed_blocks(&plan).expect("the usual fields are indexed");
        assert!(ix.steady[0].len() * 2 < ix.first[0].len());
        // Three fields of 1,500 bytes each fit the 4,096-byte table one at a time but not together:
        // each block would evict what the next one names, so no steady block exists.
        plan.headers = (0..3)
            .map(|i| (format!("x-big-{i}"), "v".repeat(1500)))
            .collect();
        assert!(indexed_blocks(&plan).is_none());
    }
}
