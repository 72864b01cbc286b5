//! The one line that ends an `--h2` run against a server that does not speak HTTP/2, naming what
//! it did instead: the protocol it chose by ALPN over TLS, or its answer to the h2c preface (an
//! HTTP/1 server's status line, a close). The connection ends the run with it
//! (`Ended::NoHttp2`): retrying would only meet the same answer.

use std::net::SocketAddr;

/// Over TLS: ALPN offered `h2` (then `http/1.1`) and the server chose `chose`, or no protocol.
pub(crate) fn alpn(to: SocketAddr, chose: Option<&[u8]>) -> String {
    let chose = match chose {
        Some(p) => format!("it chose {}", String::from_utf8_lossy(p)),
        None => "it chose none (no ALPN)".to_string(),
    };
    format!(
        "h2 to {to}: the server does not speak HTTP/2 over TLS (ALPN: offered h2 and http/1.1, {chose})"
    )
}

/// Over TLS: the handshake failed on ALPN, as rustls's `err` names it: the server's alert for
/// "none of your protocols", or a protocol it chose that was not offered.
pub(crate) fn alpn_failure(to: SocketAddr, err: &str) -> Option<String> {
    let what = if err.contains("NoApplicationProtocol") {
        "it refused with no_application_protocol"
    } else if err.contains("SelectedUnofferedApplicationProtocol") {
        "it chose a protocol not offered"
    } else {
        return None;
    };
    Some(format!("h2 to {to}: the server does not speak HTTP/2 over TLS (ALPN: offered h2 and http/1.1, {what})"))
}

/// h2c: the server's first bytes were not a SETTINGS frame. `answer` is all it sent.
pub(crate) fn preface_answer(to: SocketAddr, answer: &[u8]) -> String {
    format!(
        "h2c to {to}: the server does not speak HTTP/2 here ({})",
        what_it_sent(answer)
    )
}

/// The server closed the connection before any SETTINGS frame (a reset is not taken for an
/// answer: an HTTP/2 server out of connections resets too).
pub(crate) fn closed_without_settings(to: SocketAddr, tls: bool) -> String {
    let h2 = if tls { "h2" } else { "h2c" };
    format!("{h2} to {to}: the server does not speak HTTP/2 here (it closed the connection without a SETTINGS frame)")
}

/// Its first line when that is text (an HTTP/1 status line), else its first bytes in hex.
fn what_it_sent(answer: &[u8]) -> String {
    let line = answer.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = |b: &u8| b.is_ascii_graphic() || *b == b' ';
    if !line.is_empty() && line.iter().all(text) {
        let shown = &line[..line.len().min(100)];
        return format!(
            "it answered the preface with \"{}\"",
            String::from_utf8_lossy(shown)
        );
    }
    let hex: Vec<String> = answer.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let more = if answer.len() > 8 { " …" } else { "" };
    format!(
        "its first bytes are not a SETTINGS frame: {}{more}",
        hex.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_what_the_server_sent() {
        let to: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(
            preface_answer(to, b"HTTP/1.1 400 Bad Request\r\nServer: nginx\r\n\r\n"),
            "h2c to 127.0.0.1:8080: the server does not speak HTTP/2 here (it answered the preface with \"HTTP/1.1 400 Bad Request\")"
        );
        assert_eq!(
            what_it_sent(&[0x15, 3, 1, 0, 2, 2, 0x46, 0, 0, 0]),
            "its first bytes are not a SETTINGS frame: 15 03 01 00 02 02 46 00 …"
        );
        assert!(
            alpn(to, Some(b"http/1.1")).ends_with("offered h2 and http/1.1, it chose http/1.1)")
        );
        let alert = "received fatal alert: NoApplicationProtocol";
        assert!(alpn_failure(to, alert)
            .unwrap()
            .ends_with("it refused with no_application_protocol)"));
        assert_eq!(
            alpn_failure(to, "received fatal alert: HandshakeFailure"),
            None
        );
        assert!(alpn(to, None).ends_with("it chose none (no ALPN))"));
    }
}
