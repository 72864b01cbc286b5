//! QUIC for the server (RFC 9000, 9001), quinn-proto's sans-IO state machine driven by the loop:
//! the settings every connection shares (`settings`), a loop's socket and endpoint (socket.rs),
//! one connection as the loop's byte stream (conn.rs), and the records that byte stream is made
//! of (records.rs). HTTP/3 above it is h3/'s.
//!
//! Why quinn-proto: it is sans-IO (the loop owns the socket, the timers and the wake-ups, as it
//! does for TCP), speaks TLS through rustls with the provider the whole binary uses (aws-lc-rs), and
//! builds with cargo and gcc alone. quiche and tquic need BoringSSL (cmake, Go), s2n-quic its own
//! aws-lc build, neqo needs NSS; ngtcp2 is C. quinn-proto enforces RFC 9000's
//! anti-amplification limit itself (an unvalidated address gets at most 3x the bytes it sent),
//! answers Retry when asked (`worker/quic.rs` asks under load or always with `quic_retry`),
//! and sends stateless resets for packets of connections it does not know.
//!
//! Limits: `MAX_STREAMS` requests at once per connection (more is the peer's STREAM_LIMIT_ERROR),
//! the peer's unidirectional streams (control, QPACK encoder and decoder, and a few spare), the
//! idle timeout (`idle_timeout`), the handshake bounded by the header timeout as TLS's is
//! (conn.rs of the loop), and no connection migration: a loop's socket shares its port with the
//! other loops' by SO_REUSEPORT, so a client's new address could reach another loop, which does
//! not know the connection.

pub mod conn;
pub mod records;
pub mod socket;

use crate::config::Config;
use anyhow::{anyhow, Result};
use quinn_proto::crypto::rustls::QuicServerConfig;
use quinn_proto::{IdleTimeout, ServerConfig, TransportConfig, VarInt};
use std::sync::Arc;

/// Request streams a client may have open at once.
pub const MAX_STREAMS: u32 = 100;
/// Unidirectional streams a client may open: its control and two QPACK streams, and room for
/// the reserved ones clients open to test that unknown types are ignored.
const MAX_UNI_STREAMS: u32 = 8;
/// Bytes a client may send on one stream before we read them (a request body is read as it
/// comes, so this is the window of one upload).
const STREAM_WINDOW: u32 = 256 << 10;
/// Bytes a client may send on all streams of a connection before we read them.
const CONNECTION_WINDOW: u32 = 2 << 20;
/// Bytes sent and not yet acknowledged, on all streams of a connection.
const SEND_WINDOW: u64 = 4 << 20;

/// The settings of every QUIC connection: TLS 1.3 over rustls with ALPN `h3` (`tls` is
/// tls.rs's), the transport's limits and windows, and the idle timeout.
pub fn settings(tls: rustls::ServerConfig, config: &Config) -> Result<Arc<ServerConfig>> {
    let crypto = QuicServerConfig::try_from(tls).map_err(|e| anyhow!("QUIC TLS settings: {e}"))?;
    let mut transport = TransportConfig::default();
    let idle = VarInt::from_u64(config.idle_timeout.as_millis() as u64)
        .map_err(|_| anyhow!("idle_timeout is too long for QUIC"))?;
    transport
        .max_concurrent_bidi_streams(MAX_STREAMS.into())
        .max_concurrent_uni_streams(MAX_UNI_STREAMS.into())
        .stream_receive_window(STREAM_WINDOW.into())
        .receive_window(CONNECTION_WINDOW.into())
        .send_window(SEND_WINDOW)
        .max_idle_timeout(Some(IdleTimeout::from(idle)));
    let mut server = ServerConfig::with_crypto(Arc::new(crypto));
    server
        .transport_config(Arc::new(transport))
        .migration(false);
    Ok(Arc::new(server))
}
