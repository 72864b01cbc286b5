//! TLS as a transport (rustls on aws-lc-rs, the binary's one crypto provider): the server's certificate and settings loaded once at
//! start-up (`load`), and a connection's byte stream (`TlsStream`): records read from and written
//! to the same non-blocking socket, so the protocol above sees plaintext and nothing else changes.
//!
//! Settings: TLS 1.3 and 1.2 (or one of them: `tls_protocols`), the server's suite order (TLS 1.3
//! AES-128-GCM first), ALPN `http/1.1`, resumption by tickets (a key rotated by rustls's
//! ticketer) and by a session-ID cache shared by the loops. rustls refuses renegotiation itself (a
//! `no_renegotiation` warning to a TLS 1.2 client's new hello), and bounds a handshake message at
//! 64 KiB. The handshake's duration is bounded by the header timeout (conn.rs).
//!
//! No zero-copy file path: the kernel here has no `tls` module (TCP_ULP "tls" is refused), so
//! kernel TLS offload cannot take the records; file ranges are read with pread and encrypted in
//! user space (`send_file`). docs/BENCHMARKS.md has the reasoning and the figures.

use anyhow::{anyhow, bail, Result};
use mio::net::TcpStream;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ServerConfig, ServerConnection, ServerSessionMemoryCache};
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::InconsistentKeys;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// Sessions remembered for session-ID resumption (TLS 1.2 clients without ticket support).
const SESSION_CACHE: usize = 20_000;
/// Plaintext bytes of a file encrypted per `send_file` step (one full TLS record).
const FILE_CHUNK: usize = 16 << 10;

/// What a plain HTTP request sent to the TLS port gets (nginx answers the same way) before the
/// connection closes: a client that forgot `https://` learns why.
const PLAIN_HTTP_ANSWER: &[u8] = b"HTTP/1.1 400 Bad Request\r\nServer: webstand\r\n\
Content-Type: text/plain\r\nContent-Length: 48\r\nConnection: close\r\n\r\n\
This port speaks HTTPS: use an https:// URL.\r\n\r\n";

/// Reads the certificate chain and private key (PEM: RSA, ECDSA or Ed25519; PKCS#8, PKCS#1 or
/// SEC1) and builds the settings every TLS connection shares, offering the `protocols` named
/// (`tls_protocols`). Errors name the file or the setting at fault.
pub fn load(cert_path: &Path, key_path: &Path, protocols: &str) -> Result<Arc<ServerConfig>> {
    let versions = protocol_versions(protocols)?;
    let provider = Arc::new(aes128_first(rustls::crypto::aws_lc_rs::default_provider()));
    let certified = certified_key(cert_path, key_path, &provider)?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| anyhow!("TLS settings: {e}"))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(SingleCertAndKey::from(certified)));
    config.ignore_client_order = true;
    // h2 first: the server's preference decides (ignore_client_order covers ALPN in rustls).
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE);
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()
        .map_err(|e| anyhow!("TLS session tickets: {e}"))?;
    Ok(Arc::new(config))
}

/// The TLS settings of QUIC connections (`--listen-quic`): the same certificate and provider,
/// TLS 1.3 alone (QUIC has no other, RFC 9001 §4.2), ALPN `h3`, resumption by tickets; no 0-RTT
/// (a replayed request is the server's risk, and nothing here needs it).
pub fn load_quic(cert_path: &Path, key_path: &Path) -> Result<ServerConfig> {
    let provider = Arc::new(aes128_first(rustls::crypto::aws_lc_rs::default_provider()));
    let certified = certified_key(cert_path, key_path, &provider)?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| anyhow!("TLS settings: {e}"))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(SingleCertAndKey::from(certified)));
    config.alpn_protocols = vec![b"h3".to_vec()];
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()
        .map_err(|e| anyhow!("TLS session tickets: {e}"))?;
    Ok(config)
}

/// The certificate chain and its key, checked to belong together.
fn certified_key(
    cert_path: &Path,
    key_path: &Path,
    provider: &rustls::crypto::CryptoProvider,
) -> Result<CertifiedKey> {
    let certs = read_certs(cert_path)?;
    let key = provider
        .key_provider
        .load_private_key(read_key(key_path)?)
        .map_err(|e| anyhow!("TLS key {}: not a usable key ({e})", key_path.display()))?;
    let certified = CertifiedKey::new(certs, key);
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(InconsistentKeys::Unknown)) => {}
        Err(rustls::Error::InconsistentKeys(InconsistentKeys::KeyMismatch)) => bail!(
            "TLS key {} is not the key of certificate {}",
            key_path.display(),
            cert_path.display()
        ),
        Err(e) => bail!("TLS certificate {}: {e}", cert_path.display()),
    }
    Ok(certified)
}

/// The provider's suites with TLS13_AES_128_GCM_SHA256 first, which the server then prefers over
/// the client's order (OpenSSL clients such as curl and wrk list AES-256 first): its SHA-256
/// transcript hash and key schedule cost a new connection 9-22 % less CPU than
/// TLS13_AES_256_GCM_SHA384's SHA-384 (measured with ring, which ran SHA-384 without SIMD on this
/// CPU; SHA-256 stays the cheaper schedule); Go and Caddy prefer AES-128 too. TLS 1.2 suites keep the provider's order. docs/BENCHMARKS.md measures it.
fn aes128_first(mut provider: rustls::crypto::CryptoProvider) -> rustls::crypto::CryptoProvider {
    provider
        .cipher_suites
        .sort_by_key(|s| s.suite() != rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    provider
}

/// The versions a `tls_protocols` list names (nginx's `ssl_protocols` spelling), newest first.
fn protocol_versions(list: &str) -> Result<Vec<&'static rustls::SupportedProtocolVersion>> {
    let mut tls12 = false;
    let mut tls13 = false;
    for name in list.split([' ', ',']).filter(|n| !n.is_empty()) {
        match name.to_ascii_lowercase().as_str() {
            "tlsv1.2" => tls12 = true,
            "tlsv1.3" => tls13 = true,
            _ => bail!("tls_protocols: unknown protocol '{name}' (known: TLSv1.2 TLSv1.3)"),
        }
    }
    let versions: Vec<_> = [
        (tls13, &rustls::version::TLS13),
        (tls12, &rustls::version::TLS12),
    ]
    .into_iter()
    .filter_map(|(on, v)| on.then_some(v))
    .collect();
    if versions.is_empty() {
        bail!("tls_protocols: no protocol given (TLSv1.2, TLSv1.3 or both)");
    }
    Ok(versions)
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let bytes = read_file(path, "certificate")?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow!("TLS certificate {}: bad PEM ({e})", path.display()))?;
    if certs.is_empty() {
        bail!(
            "TLS certificate {}: no certificate in it (expected PEM '-----BEGIN CERTIFICATE-----')",
            path.display()
        );
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    let bytes = read_file(path, "key")?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => anyhow!(
            "TLS key {}: no private key in it (expected PEM 'PRIVATE KEY', 'RSA PRIVATE KEY' or 'EC PRIVATE KEY')",
            path.display()
        ),
        e => anyhow!("TLS key {}: bad PEM ({e})", path.display()),
    })
}

fn read_file(path: &Path, what: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| anyhow!("TLS {what} {}: cannot read it ({e})", path.display()))
}

/// A TLS connection's byte stream over a non-blocking socket.
pub struct TlsStream {
    sock: TcpStream,
    tls: ServerConnection,
    /// The last socket read returned less than asked: nothing more is waiting in the kernel.
    drained: bool,
    /// The last plaintext read may have left more behind (the socket or rustls still hold some).
    more: bool,
    /// The connection's first byte, to recognise plain HTTP sent to the TLS port.
    first_byte: Option<u8>,
}

impl TlsStream {
    pub fn new(sock: TcpStream, config: &Arc<ServerConfig>) -> io::Result<TlsStream> {
        let tls = ServerConnection::new(config.clone()).map_err(io::Error::other)?;
        Ok(TlsStream {
            sock,
            tls,
            drained: false,
            more: false,
            first_byte: None,
        })
    }

    /// Plaintext received, reading and decrypting records as needed; Ok(0) at the end of the
    /// stream (close_notify or the peer's FIN), WouldBlock when the socket has nothing more.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.tls.reader().read(buf) {
                Ok(n) => {
                    self.more = !self.drained || n == buf.len();
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed without close_notify: for HTTP/1 framing, an end like any other.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            let mut probe = Probe {
                sock: &self.sock,
                drained: false,
                first: None,
            };
            self.tls.read_tls(&mut probe)?;
            self.drained = probe.drained;
            self.first_byte = self.first_byte.or(probe.first);
            if let Err(e) = self.tls.process_new_packets() {
                return Err(self.refuse(e));
            }
            // Handshake messages (and alerts) answer at once. After the peer's FIN the reader
            // above reports the end once the last records are taken.
            self.flush()?;
        }
    }

    /// Whether input may be left after a read of `n` bytes (else edge-triggered epoll reports
    /// the next arrival).
    pub fn may_have_more(&self) -> bool {
        self.more
    }

    /// Encrypts up to the rustls buffer limit of `buf` and pushes what the socket takes.
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.flush()?;
        let n = self.tls.writer().write(buf)?;
        self.flush()?;
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    /// Sends up to `len` bytes of `file` from `*offset`: read with pread, encrypted, written.
    pub fn send_file(&mut self, file: &File, offset: &mut u64, len: usize) -> io::Result<usize> {
        let mut chunk = [0u8; FILE_CHUNK];
        let want = len.min(FILE_CHUNK);
        let got = file.read_at(&mut chunk[..want], *offset)?;
        if got == 0 {
            return Ok(0);
        }
        let n = self.write(&chunk[..got])?;
        *offset += n as u64;
        Ok(n)
    }

    /// Writes the encrypted bytes rustls holds; Ok(false) when the socket is full.
    pub fn flush(&mut self) -> io::Result<bool> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Encrypted output still waits for room in the socket.
    pub fn pending(&self) -> bool {
        self.tls.wants_write()
    }

    /// ALPN chose HTTP/2.
    pub fn alpn_h2(&self) -> bool {
        self.tls.alpn_protocol() == Some(b"h2")
    }

    pub fn handshaking(&self) -> bool {
        self.tls.is_handshaking()
    }

    /// Ends the stream: close_notify, then the socket's FIN.
    pub fn shutdown_write(&mut self) {
        self.close_notify();
        let _ = self.sock.shutdown(std::net::Shutdown::Write);
    }

    fn close_notify(&mut self) {
        if !self.tls.is_handshaking() {
            self.tls.send_close_notify();
            let _ = self.flush();
        }
    }

    pub fn socket(&self) -> &TcpStream {
        &self.sock
    }

    pub fn socket_mut(&mut self) -> &mut TcpStream {
        &mut self.sock
    }

    /// Input rustls refused: send its alert, or to a plain HTTP client the 400 it can read.
    fn refuse(&mut self, e: rustls::Error) -> io::Error {
        let plain_http =
            self.tls.is_handshaking() && self.first_byte.is_some_and(|b| b.is_ascii_uppercase());
        if plain_http {
            let _ = (&self.sock).write(PLAIN_HTTP_ANSWER);
        } else {
            let _ = self.flush();
        }
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

impl Drop for TlsStream {
    /// A connection closed by the server ends with close_notify (best effort: the socket never
    /// blocks), so the client can tell the end from a truncation.
    fn drop(&mut self) {
        self.close_notify();
    }
}

/// The socket as rustls reads it, noting whether a read came back short (the kernel had nothing
/// more: epoll's next edge will say when it does) and the stream's first byte.
struct Probe<'a> {
    sock: &'a TcpStream,
    drained: bool,
    first: Option<u8>,
}

impl Read for Probe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (&*self.sock).read(buf)?;
        self.drained = n < buf.len();
        self.first = (n > 0).then(|| buf[0]);
        Ok(n)
    }
}
