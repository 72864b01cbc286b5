//! A blocking QUIC client for the probe's hostile HTTP/3 cases (`probe`): quinn-proto's client
//! connection on a UDP socket of its own, driven by hand (datagrams read and handed to it, its
//! transmits sent one datagram each, its timers run) until a condition holds or a deadline passes,
//! so that a case can do what a well-behaved client never would: stop after its first flight,
//! write malformed frames, reset every stream it opens. TLS 1.3 by rustls on the workspace's one
//! provider, trusting the lab's CA only, ALPN `h3`.

use anyhow::{Context, Result};
use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{
    ClientConfig, ConnectionError, ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig,
    Event, ReadError, StreamEvent, StreamId,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest datagram read (QUIC's datagrams are at most 65527 bytes of UDP payload).
const DATAGRAM_MAX: usize = 65536;

/// quinn-proto's client configuration: TLS 1.3 trusting only the CA in `ca` (PEM), ALPN `h3`.
pub fn client_config(ca: &Path) -> Result<ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).with_context(|| format!("{}", ca.display()))? {
        roots.add(cert.with_context(|| format!("{}", ca.display()))?)?;
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let quic = QuicClientConfig::try_from(Arc::new(tls))?;
    Ok(ClientConfig::new(Arc::new(quic)))
}

/// The datagrams that open a new connection to `server` (its Initial, padded to 1200 bytes): what
/// a client sends first, to be sent from whatever socket the caller likes.
pub fn first_flight(server: SocketAddr, config: &ClientConfig) -> Result<Vec<Vec<u8>>> {
    let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
    let now = Instant::now();
    let (_, mut conn) = endpoint
        .connect(now, config.clone(), server, "localhost")
        .map_err(|e| anyhow::anyhow!("QUIC to {server}: {e}"))?;
    let mut out = Vec::new();
    let mut tx = Vec::new();
    while let Some(t) = conn.poll_transmit(now, 1, &mut tx) {
        out.push(tx[..t.size].to_vec());
        tx.clear();
    }
    Ok(out)
}

/// One client connection and its socket.
pub struct Client {
    sock: UdpSocket,
    server: SocketAddr,
    endpoint: Endpoint,
    handle: ConnectionHandle,
    pub conn: quinn_proto::Connection,
    /// The handshake completed.
    pub connected: bool,
    /// How the connection ended, when it did.
    pub lost: Option<ConnectionError>,
    /// UDP payload bytes sent and received.
    pub sent: u64,
    pub received: u64,
    /// How the server ended our streams it ended (answered, reset, stopped), in order.
    ends: Vec<(StreamId, String)>,
    buf: Vec<u8>,
}

impl Client {
    /// A new connection to `server` from a socket of its own on loopback; nothing sent yet.
    pub fn new(server: SocketAddr, config: &ClientConfig) -> Result<Client> {
        let sock = UdpSocket::bind(("127.0.0.1", 0)).context("a UDP socket on 127.0.0.1")?;
        sock.connect(server)?;
        let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
        let (handle, conn) = endpoint
            .connect(Instant::now(), config.clone(), server, "localhost")
            .map_err(|e| anyhow::anyhow!("QUIC to {server}: {e}"))?;
        Ok(Client {
            sock,
            server,
            endpoint,
            handle,
            conn,
            connected: false,
            lost: None,
            sent: 0,
            received: 0,
            ends: Vec::new(),
            buf: vec![0; DATAGRAM_MAX],
        })
    }

    /// Sends every datagram the connection has ready; how many.
    pub fn flush(&mut self) -> usize {
        let mut tx = Vec::new();
        let mut n = 0;
        while let Some(t) = self.conn.poll_transmit(Instant::now(), 1, &mut tx) {
            // A datagram the socket cannot take is lost, as on a network: QUIC sends it again.
            if self.sock.send(&tx[..t.size]).is_ok() {
                self.sent += t.size as u64;
                n += 1;
            }
            tx.clear();
        }
        n
    }

    /// Drives the connection until `done` holds (true) or `deadline` passes (false): sends what it
    /// has, reads what comes, runs its timers, and notes its handshake and its end.
    pub fn drive(&mut self, deadline: Instant, mut done: impl FnMut(&mut Client) -> bool) -> bool {
        loop {
            self.flush();
            self.events();
            if done(self) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline || self.conn.is_drained() {
                return false;
            }
            let timer = self.conn.poll_timeout().unwrap_or(deadline).min(deadline);
            let wait = timer.saturating_duration_since(now);
            self.receive(wait.max(Duration::from_micros(100)));
            if self
                .conn
                .poll_timeout()
                .is_some_and(|t| t <= Instant::now())
            {
                self.conn.handle_timeout(Instant::now());
            }
        }
    }

    /// Waits up to `wait` for a datagram, then hands it and any others waiting to the connection.
    fn receive(&mut self, wait: Duration) {
        let _ = self.sock.set_read_timeout(Some(wait));
        let mut first = true;
        loop {
            let _ = self.sock.set_nonblocking(!first);
            let n = match self.sock.recv(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            first = false;
            self.received += n as u64;
            let data = bytes::BytesMut::from(&self.buf[..n]);
            let mut reply = Vec::new();
            let now = Instant::now();
            match self
                .endpoint
                .handle(now, self.server, None, None, data, &mut reply)
            {
                Some(DatagramEvent::ConnectionEvent(h, e)) if h == self.handle => {
                    self.conn.handle_event(e)
                }
                Some(DatagramEvent::Response(t)) => {
                    let _ = self.sock.send(&reply[..t.size]);
                }
                _ => {}
            }
        }
        let _ = self.sock.set_nonblocking(false);
    }

    /// The connection's news: its handshake, its end; the endpoint's part passed both ways.
    fn events(&mut self) {
        while let Some(e) = self.conn.poll_endpoint_events() {
            if let Some(reply) = self.endpoint.handle_event(self.handle, e) {
                self.conn.handle_event(reply);
            }
        }
        while let Some(e) = self.conn.poll() {
            match e {
                Event::Connected => self.connected = true,
                Event::ConnectionLost { reason } => self.lost = Some(reason),
                Event::Stream(StreamEvent::Stopped { id, error_code }) => {
                    let how = format!("stopped the stream with {:#x}", error_code.into_inner());
                    self.ends.push((id, how));
                }
                _ => {}
            }
        }
    }

    /// The error code the server closed the connection with (QUIC's or HTTP/3's), if it did.
    pub fn closed_with(&self) -> Option<u64> {
        match self.lost.as_ref()? {
            ConnectionError::ApplicationClosed(c) => Some(c.error_code.into_inner()),
            ConnectionError::ConnectionClosed(c) => Some(u64::from(c.error_code)),
            _ => None,
        }
    }

    /// How the server ended our stream `id`, once it did: answered on it, reset it, stopped it.
    pub fn stream_ended(&mut self, id: StreamId) -> Option<String> {
        if let Some((_, how)) = self.ends.iter().find(|(s, _)| *s == id) {
            return Some(how.clone());
        }
        let how = {
            let mut recv = self.conn.recv_stream(id);
            let mut chunks = recv.read(true).ok()?;
            match chunks.next(usize::MAX) {
                Ok(Some(_)) => "answered on the stream".to_string(),
                Ok(None) => "ended the stream without an answer".to_string(),
                Err(ReadError::Reset(code)) => {
                    format!("reset the stream with {:#x}", code.into_inner())
                }
                Err(ReadError::Blocked) => return None,
            }
        };
        self.ends.push((id, how.clone()));
        Some(how)
    }

    /// Reads and counts what came on the socket without handing it to the connection (a client
    /// that never answers), without waiting.
    pub fn listen_only(&mut self) {
        let _ = self.sock.set_nonblocking(true);
        while let Ok(n) = self.sock.recv(&mut self.buf) {
            self.received += n as u64;
        }
    }
}
