//! What the end of a QUIC connection says, in one line: a server that does not speak HTTP/3 (it
//! refused ALPN `h3`, or answered with a version negotiation), a handshake that failed (the
//! certificate, TLS) or got no answer (nothing on the UDP port, or silence), and a connection closed
//! with an error code; and that code's name, by which the run counts the connections that ended on
//! an error.

use quinn_proto::{ConnectionError, TransportErrorCode};
use std::net::SocketAddr;
use std::time::Duration;

/// TLS's no_application_protocol alert (RFC 8446 §6.2) as QUIC carries it (RFC 9001 §4.8).
const NO_APPLICATION_PROTOCOL: u8 = 120;

/// The server does not speak HTTP/3, as `e` (before the handshake completed) says: the run ends
/// with this line. None for any other failure.
pub(crate) fn not_h3(to: SocketAddr, e: &ConnectionError) -> Option<String> {
    let what = match e {
        ConnectionError::ConnectionClosed(c)
            if c.error_code == TransportErrorCode::crypto(NO_APPLICATION_PROTOCOL) =>
        {
            "it refused ALPN h3 with no_application_protocol"
        }
        ConnectionError::VersionMismatch => "it answered with a version negotiation: no QUIC v1",
        _ => return None,
    };
    Some(format!(
        "h3 to {to}: the server does not speak HTTP/3 ({what})"
    ))
}

/// ALPN chose `chose` although only `h3` was offered.
pub(crate) fn alpn(to: SocketAddr, chose: Option<&[u8]>) -> String {
    let chose = match chose {
        Some(p) => format!("it chose {}", String::from_utf8_lossy(p)),
        None => "it chose none".to_string(),
    };
    format!("h3 to {to}: the server does not speak HTTP/3 (ALPN: offered h3, {chose})")
}

/// Nothing came back within `timeout` to the handshake (`answered`: some datagram did).
pub(crate) fn handshake_timeout(to: SocketAddr, timeout: Duration, answered: bool) -> String {
    let what = match answered {
        false => "no QUIC answer over UDP",
        true => "the QUIC handshake did not complete",
    };
    format!("h3 to {to}: {what} within {} s", timeout.as_secs_f64())
}

/// The socket's error before any answer: an ICMP port unreachable (a connected UDP socket's
/// "connection refused") means nothing listens on that UDP port; any other error as it is.
pub(crate) fn socket_error(to: SocketAddr, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => format!(
            "h3 to {to}: nothing listens on UDP port {} (ICMP port unreachable), so no HTTP/3 there",
            to.port()
        ),
        _ => format!("h3 to {to}: {e}"),
    }
}

/// The connection could not be made or went down: why, as one line.
pub(crate) fn describe(to: SocketAddr, e: &ConnectionError) -> String {
    let why = match e {
        ConnectionError::TransportError(t) if is_tls(t.code) => format!(
            "TLS: {}{}",
            t.reason,
            crate::transport::tls::certificate_hint(&t.reason)
        ),
        ConnectionError::TransportError(t) => format!("QUIC error {:?}: {}", t.code, t.reason),
        ConnectionError::ConnectionClosed(c) => {
            let reason = String::from_utf8_lossy(&c.reason);
            format!(
                "the server closed the connection with {}{}",
                name(c.error_code),
                said(&reason)
            )
        }
        ConnectionError::ApplicationClosed(c) => {
            let code = webstand_h3::ErrorCode::from_u64(c.error_code.into_inner());
            let reason = String::from_utf8_lossy(&c.reason);
            format!(
                "the server closed the connection with {code}{}",
                said(&reason)
            )
        }
        ConnectionError::Reset => "the server reset the connection (stateless reset)".into(),
        ConnectionError::TimedOut => "the connection timed out (QUIC idle timeout)".into(),
        other => other.to_string(),
    };
    format!("h3 to {to}: {why}")
}

/// The code a connection ended on, for the run's count of errors; None for an end that is no
/// error (our own close, the server's H3_NO_ERROR or NO_ERROR).
pub(crate) fn error_code(e: &ConnectionError) -> Option<String> {
    match e {
        ConnectionError::LocallyClosed => None,
        ConnectionError::ApplicationClosed(c) => {
            let code = webstand_h3::ErrorCode::from_u64(c.error_code.into_inner());
            (code != webstand_h3::ErrorCode::NoError).then(|| code.to_string())
        }
        ConnectionError::ConnectionClosed(c) => {
            (c.error_code != TransportErrorCode::NO_ERROR).then(|| name(c.error_code))
        }
        ConnectionError::TransportError(t) => Some(name(t.code)),
        ConnectionError::VersionMismatch => Some("VERSION_NEGOTIATION".into()),
        ConnectionError::Reset => Some("STATELESS_RESET".into()),
        ConnectionError::TimedOut => Some("IDLE_TIMEOUT".into()),
        ConnectionError::CidsExhausted => Some("CIDS_EXHAUSTED".into()),
    }
}

/// A transport code's RFC name; a TLS alert as `CRYPTO_ERROR (TLS alert N)`.
fn name(code: TransportErrorCode) -> String {
    let n = u64::from(code);
    match is_tls(code) {
        true => format!("CRYPTO_ERROR (TLS alert {})", n & 0xff),
        false => format!("{code:?}"),
    }
}

fn is_tls(code: TransportErrorCode) -> bool {
    (0x100..0x200).contains(&u64::from(code))
}

fn said(reason: &str) -> String {
    match reason.is_empty() {
        true => String::new(),
        false => format!(" ({reason})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quinn_proto::{ApplicationClose, ConnectionClose, VarInt};

    #[test]
    fn each_end_gets_its_line_and_code() {
        let to: SocketAddr = "127.0.0.1:4433".parse().unwrap();
        let alpn = ConnectionError::ConnectionClosed(ConnectionClose {
            error_code: TransportErrorCode::crypto(120),
            frame_type: None,
            reason: bytes::Bytes::new(),
        });
        assert_eq!(
            not_h3(to, &alpn).unwrap(),
            "h3 to 127.0.0.1:4433: the server does not speak HTTP/3 (it refused ALPN h3 with no_application_protocol)"
        );
        assert_eq!(error_code(&alpn).unwrap(), "CRYPTO_ERROR (TLS alert 120)");
        let app = ConnectionError::ApplicationClosed(ApplicationClose {
            error_code: VarInt::from_u32(0x101),
            reason: bytes::Bytes::from_static(b"bye"),
        });
        assert_eq!(not_h3(to, &app), None);
        assert_eq!(
            describe(to, &app),
            "h3 to 127.0.0.1:4433: the server closed the connection with H3_GENERAL_PROTOCOL_ERROR (bye)"
        );
        assert_eq!(error_code(&app).unwrap(), "H3_GENERAL_PROTOCOL_ERROR");
        let fine = ConnectionError::ApplicationClosed(ApplicationClose {
            error_code: VarInt::from_u32(0x100),
            reason: bytes::Bytes::new(),
        });
        assert_eq!(error_code(&fine), None);
        assert_eq!(
            handshake_timeout(to, Duration::from_secs(2), false),
            "h3 to 127.0.0.1:4433: no QUIC answer over UDP within 2 s"
        );
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            socket_error(to, &refused),
            "h3 to 127.0.0.1:4433: nothing listens on UDP port 4433 (ICMP port unreachable), so no HTTP/3 there"
        );
    }
}
