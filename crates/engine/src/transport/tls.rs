//! The TLS transport: a rustls client connection over the TCP socket, driven without blocking.
//!
//! The handshake happens inside the first `write`: until it is done, `write` sends what the
//! handshake needs, reads what the server sent, and answers `WouldBlock`; a connection's
//! Connecting phase (and so ab's Connect time) therefore covers TCP connect and handshake, as ab's
//! does. The moment TCP connected (the ClientHello could be written) splits the two for the JSON.
//!
//! Reads keep the plain transport's promise to the connections: a read shorter than the buffer
//! means the socket was drained (edge-triggered polling will report later data), so a read goes on
//! taking records until the buffer is full or the socket says it has nothing more.

use crate::clock::recv_stamped;
use crate::transport::tls_config::{suite_facts, TlsSetup};
use mio::net::TcpStream;
use rustls::{ClientConnection, HandshakeKind, NamedGroup};
use std::io::{self, ErrorKind, Read, Write};
use std::time::{Duration, Instant};
use webstand_results::result::TlsSummary;

/// Plaintext handed to rustls at once (one TLS record's worth).
const CHUNK: usize = 16 * 1024;

pub(crate) struct TlsStream {
    pub sock: TcpStream,
    conn: ClientConnection,
    /// When the ClientHello could be written: TCP was connected.
    tcp_at: Option<Instant>,
    /// Plaintext rustls took whose records are not all on the socket yet.
    accepted: usize,
    /// The server closed (close_notify or TCP FIN).
    eof: bool,
}

/// One finished handshake, for the run's [`TlsSummary`].
pub(crate) struct Handshake {
    pub tcp_at: Instant,
    pub resumed: bool,
}

impl TlsStream {
    pub(crate) fn new(sock: TcpStream, setup: &TlsSetup) -> io::Result<TlsStream> {
        let conn = ClientConnection::new(setup.config.clone(), setup.name.clone())
            .map_err(|e| io::Error::other(format!("TLS: {e}")))?;
        Ok(TlsStream {
            sock,
            conn,
            tcp_at: None,
            accepted: 0,
            eof: false,
        })
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.conn.is_handshaking() {
            self.handshake()?;
        }
        if self.accepted == 0 {
            self.accepted = self.conn.writer().write(&bytes[..bytes.len().min(CHUNK)])?;
        }
        self.flush()?;
        Ok(std::mem::take(&mut self.accepted))
    }

    /// Puts every pending record on the socket; `WouldBlock` if it cannot take them all yet.
    fn flush(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.sock)?;
            if self.tcp_at.is_none() {
                self.tcp_at = Some(Instant::now());
            }
        }
        Ok(())
    }

    /// Advances the handshake as far as the socket allows: `WouldBlock` until it is complete.
    fn handshake(&mut self) -> io::Result<()> {
        loop {
            self.flush()?;
            if !self.conn.is_handshaking() {
                return Ok(());
            }
            match self.conn.read_tls(&mut self.sock) {
                Ok(0) => return Err(closed_during_handshake(self.tcp_at.is_some())),
                Ok(_) => {}
                Err(e) => return Err(e),
            }
            if let Err(e) = self.conn.process_new_packets() {
                let _ = self.flush(); // the alert, so the server's log says why
                return Err(tls_error(e));
            }
        }
    }

    /// The finished handshake (once, right after it completed), for the summary.
    pub(crate) fn handshake_done(&self) -> Option<Handshake> {
        let resumed = self.conn.handshake_kind()? == HandshakeKind::Resumed;
        Some(Handshake {
            tcp_at: self.tcp_at?,
            resumed,
        })
    }

    /// The protocol the server chose by ALPN.
    pub(crate) fn alpn(&self) -> Option<&[u8]> {
        self.conn.alpn_protocol()
    }

    /// What was negotiated, in ab's terms.
    pub(crate) fn summary(&self, sni: Option<String>) -> TlsSummary {
        let (cipher, cipher_bits) = self
            .conn
            .negotiated_cipher_suite()
            .map_or(("unknown", 0), |s| suite_facts(s.suite()));
        let protocol = match self.conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
            _ => "unknown",
        };
        let temp_key = match self.conn.negotiated_key_exchange_group().map(|g| g.name()) {
            Some(NamedGroup::X25519) => "X25519 253 bits".to_string(),
            Some(NamedGroup::secp256r1) => "ECDH prime256v1 256 bits".to_string(),
            Some(NamedGroup::secp384r1) => "ECDH secp384r1 384 bits".to_string(),
            Some(g) => format!("{g:?}"),
            None => String::new(),
        };
        TlsSummary {
            protocol: protocol.to_string(),
            cipher: cipher.to_string(),
            cipher_bits,
            server_key_bits: self
                .conn
                .peer_certificates()
                .and_then(|chain| chain.first())
                .map_or(0, |cert| public_key_bits(cert)),
            temp_key,
            server_name: sni,
            alpn: self
                .conn
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
            ..TlsSummary::default()
        }
    }

    pub(crate) fn read(
        &mut self,
        buf: &mut [u8],
        stamped: bool,
    ) -> io::Result<(usize, Option<Duration>)> {
        let mut filled = 0;
        let mut from = Recv {
            sock: &self.sock,
            stamped,
            at: None,
            short: false,
        };
        loop {
            match self.conn.reader().read(&mut buf[filled..]) {
                Ok(0) if filled < buf.len() => self.eof = true,
                Ok(n) => filled += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => self.eof = true,
                Err(e) => return Err(e),
            }
            if filled == buf.len() || self.eof {
                return Ok((filled, from.at));
            }
            if from.short {
                return match filled {
                    0 => Err(ErrorKind::WouldBlock.into()),
                    n => Ok((n, from.at)),
                };
            }
            match self.conn.read_tls(&mut from) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock && filled > 0 => {
                    return Ok((filled, from.at))
                }
                Err(e) => return Err(e),
            }
            let processed = self.conn.process_new_packets();
            // The alert, or a key update the records asked for.
            let _ = send_records(&mut self.conn, &self.sock);
            processed.map_err(tls_error)?;
        }
    }
}

/// The socket as rustls reads it: one `recv` (stamped when asked), noting the arrival time and
/// whether the socket had less than rustls asked for (drained).
struct Recv<'a> {
    sock: &'a TcpStream,
    stamped: bool,
    at: Option<Duration>,
    short: bool,
}

impl Read for Recv<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, at) = if self.stamped {
            recv_stamped(self.sock, buf)?
        } else {
            let mut sock = self.sock;
            (sock.read(buf)?, None)
        };
        if at.is_some() {
            self.at = at;
        }
        self.short = n > 0 && n < buf.len();
        Ok(n)
    }
}

/// Writes pending records to the socket while it takes them.
/// A certificate's public key size as OpenSSL's `EVP_PKEY_bits` gives it (what ab prints).
fn public_key_bits(cert: &[u8]) -> u32 {
    use x509_parser::public_key::PublicKey;
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(cert) else {
        return 0;
    };
    let spki = cert.public_key();
    match spki.parsed() {
        // An uncompressed P-521 point has 2 x 66 bytes; the curve has 521 bits.
        Ok(key @ PublicKey::EC(_)) if key.key_size() == 528 => 521,
        Ok(PublicKey::Unknown(_)) => match spki.algorithm.algorithm.to_id_string().as_str() {
            "1.3.101.112" => 253, // Ed25519
            "1.3.101.113" => 456, // Ed448
            _ => 0,
        },
        Ok(key) => key.key_size() as u32,
        Err(_) => 0,
    }
}

fn send_records(conn: &mut ClientConnection, sock: &TcpStream) -> io::Result<()> {
    let mut sock = sock;
    while conn.wants_write() {
        conn.write_tls(&mut sock)?;
    }
    Ok(())
}

fn tls_error(e: rustls::Error) -> io::Error {
    let msg = match &e {
        rustls::Error::InvalidMessage(_) => {
            format!("TLS handshake failed: {e} (is the server speaking TLS on this port?)")
        }
        _ => format!(
            "TLS handshake failed: {e}{}",
            certificate_hint(&e.to_string())
        ),
    };
    io::Error::new(ErrorKind::InvalidData, msg)
}

/// What to do about a certificate `--cacert` refused, after rustls's words for it (`reason`): a
/// self-signed certificate made by `openssl req -x509` without `basicConstraints=CA:FALSE` is a CA
/// certificate, which verification refuses as a server's own.
pub(crate) fn certificate_hint(reason: &str) -> &'static str {
    if reason.contains("CaUsedAsEndEntity") {
        " (the server's certificate is a CA certificate: make it with `-addext \
         basicConstraints=critical,CA:FALSE`, or leave out --cacert)"
    } else {
        ""
    }
}

fn closed_during_handshake(connected: bool) -> io::Error {
    let what = if connected {
        "the server closed the connection during the TLS handshake"
    } else {
        "the server closed the connection before the TLS handshake"
    };
    io::Error::new(ErrorKind::ConnectionAborted, what)
}

/// Counts a connection's finished handshake into the thread's result: TCP connect and handshake
/// time, full or resumed, and (first time) what was negotiated.
pub(crate) fn count_handshake(
    r: &mut webstand_results::result::RunResult,
    t: &TlsStream,
    start: Instant,
    now: Instant,
    sni: Option<&str>,
) {
    let Some(h) = t.handshake_done() else {
        return;
    };
    let s = r
        .tls
        .get_or_insert_with(|| t.summary(sni.map(str::to_string)));
    s.tcp_connect_us += crate::clock::micros(h.tcp_at.saturating_duration_since(start));
    let hs = crate::clock::micros(now.saturating_duration_since(h.tcp_at));
    if h.resumed {
        s.resumed_handshakes += 1;
        s.resumed_handshake_us += hs;
    } else {
        s.full_handshakes += 1;
        s.full_handshake_us += hs;
    }
}
