//! What every HTTP/3 connection of a run starts from, built once: each request's HEADERS frame
//! (its QPACK field section encoded with the static table and literals, no dynamic table, so one
//! section serves every connection), our control stream's opening (its type and SETTINGS), and
//! quinn-proto's client configuration: the run's rustls configuration (`tls_config.rs`, on the
//! engine's aws-lc-rs provider) with ALPN `h3` and early data, and the transport's windows and
//! limits.

use super::resumed::Witness;
use crate::h2::prepared::request_fields;
use crate::transport::tls_config::TlsSetup;
use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{ClientConfig, IdleTimeout, TransportConfig, VarInt};
use std::sync::Arc;
use std::time::Duration;
use webstand_h3::frame::write;
use webstand_h3::settings::id;
use webstand_h3::{qpack_encoder, stream};
use webstand_results::plan::{H2Plan, Plan};

/// The largest response field section we take (names + values + 32 per field), announced as
/// SETTINGS_MAX_FIELD_SECTION_SIZE: HTTP/2's header list limit.
pub(crate) const MAX_FIELD_SECTION: u64 = crate::h2::prepared::MAX_HEADER_LIST as u64;

/// Unidirectional streams the server may open: its control and QPACK streams, and room for the
/// reserved ones a server may open to test that unknown types are ignored.
const PEER_UNI_STREAMS: u32 = 8;

pub(crate) struct Prepared {
    /// Our control stream's bytes: its type, then SETTINGS.
    pub control: Vec<u8>,
    pub max_streams: u32,
    pub client: ClientConfig,
    /// The name the server's certificate is checked against (and SNI, when sent).
    pub server_name: String,
    /// `--max-requests-per-connection`: streams a connection opens before a new one replaces it.
    pub per_connection: Option<u64>,
}

impl Prepared {
    /// `None` when the run's TLS cannot carry QUIC (no TLS 1.3 AES-128-GCM suite offered).
    pub(crate) fn new(plan: &Plan, tls: &TlsSetup) -> Result<Prepared, String> {
        let h3 = plan.h3.unwrap_or_default();
        let mut control = Vec::new();
        webstand_h3::varint::write(&mut control, stream::CONTROL);
        write::settings(
            &mut control,
            &[(id::MAX_FIELD_SECTION_SIZE, MAX_FIELD_SECTION)],
        );
        let crypto = QuicClientConfig::try_from(tls.config.clone())
            .map_err(|e| format!("QUIC needs TLS 1.3's TLS_AES_128_GCM_SHA256 offered: {e}"))?;
        let mut client = ClientConfig::new(Arc::new(crypto));
        client.transport_config(Arc::new(transport(&h3, plan.timeout)));
        Ok(Prepared {
            control,
            max_streams: h3.max_streams.max(1),
            client,
            server_name: tls.name.to_str().into_owned(),
            per_connection: plan.max_conn_requests,
        })
    }
}

/// The transport's settings: `-m` request streams (the server opens none), the receive windows
/// of `--window-bits` and `-W`, and an idle timeout past the request timeout (`-s`), so the
/// connection outlives what the slot's own timeout fails first.
fn transport(h3: &H2Plan, timeout: Duration) -> TransportConfig {
    let window = |bits: u8| VarInt::from_u32(((1u64 << bits.clamp(1, 30)) - 1) as u32);
    let mut t = TransportConfig::default();
    t.max_concurrent_bidi_streams(0u8.into())
        .max_concurrent_uni_streams(PEER_UNI_STREAMS.into())
        .stream_receive_window(window(h3.window_bits))
        .receive_window(window(h3.connection_window_bits));
    let idle = (timeout + Duration::from_secs(1)).min(Duration::from_secs(3600));
    t.max_idle_timeout(IdleTimeout::try_from(idle).ok());
    t
}

/// One request's HEADERS frame: its fields as HTTP/2 sends them, in one QPACK section.
pub(crate) fn request_frame(plan: &Plan, path: &str) -> Vec<u8> {
    fields_frame(&request_fields(plan, path))
}

/// A HEADERS frame of `fields` in one QPACK section (a script's requests').
pub(crate) fn fields_frame(fields: &[(String, String)]) -> Vec<u8> {
    let mut section = Vec::new();
    qpack_encoder::encode(
        fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut section,
    );
    let mut frame = Vec::with_capacity(section.len() + 4);
    write::headers(&mut frame, &section);
    frame
}

/// The run's TLS set up for QUIC: `h3` alone offered by ALPN (a server without it refuses the
/// handshake, `h3/refused.rs` names that, never a fallback); early data (0-RTT) on a resumed
/// connection, when `--tls-resume` keeps sessions and the server's ticket allows it; and the
/// certificate verifier witnessed, so that a connection knows whether it was resumed
/// (`resumed.rs`).
pub(crate) fn h3_tls(mut setup: TlsSetup) -> TlsSetup {
    let config = Arc::make_mut(&mut setup.config);
    config.alpn_protocols = vec![b"h3".to_vec()];
    config.enable_early_data = true;
    let witness = Witness(setup.verifier.clone());
    config
        .dangerous()
        .set_certificate_verifier(Arc::new(witness));
    setup
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_h3::frame::{kind, parse, read_head, Frame};
    use webstand_h3::qpack::Decoder;

    #[test]
    fn a_request_frame_decodes_to_the_request_fields() {
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
        let frame = request_frame(&plan, "/a?b=1");
        let head = read_head(&frame).unwrap();
        assert_eq!(head.kind, kind::HEADERS);
        assert_eq!(head.size + head.len as usize, frame.len());
        let Ok(Frame::Headers(section)) = parse(&head, &frame[head.size..]) else {
            panic!("not a HEADERS frame");
        };
        let mut fields = Vec::new();
        Decoder::new(MAX_FIELD_SECTION)
            .decode(section, |n, v| {
                fields.push((
                    String::from_utf8(n.to_vec()).unwrap(),
                    String::from_utf8(v.to_vec()).unwrap(),
                ))
            })
            .unwrap();
        let text: Vec<(&str, &str)> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
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
