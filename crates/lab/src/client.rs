//! The lab's one blocking HTTP/1 client, for its own checks (basic auth, throttling, chroot, TLS, the
//! memory an idle connection costs) and for the tests: a connection to a lab server, plain or TLS
//! (rustls, trusting the lab's CA), a GET written out, and the response read by webstand's own
//! HTTP/1 parser (webstand-http1: the head, then the body as its framing says: a length, chunks, or
//! to the close), so the connection may stay open for the next request.

use anyhow::{anyhow, bail, Context, Result};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, HandshakeKind, ProtocolVersion, StreamOwned};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
use webstand_http1::chunked::{self, Policy};
use webstand_http1::framing::{self, ResponseBody};
use webstand_http1::response::parse_head;

/// A connection to a lab server: plain TCP, or TLS over it.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// What one TLS handshake agreed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handshake {
    pub version: Option<ProtocolVersion>,
    pub suite: Option<String>,
    pub resumed: bool,
}

/// One response as it came.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    /// The status line and header fields, as text.
    pub head: String,
    /// The body, chunked coding undone.
    pub body: Vec<u8>,
    /// Whether the server lets the connection stay open.
    pub keep_alive: bool,
}

/// What came back for one request on a fresh connection, and how long it took.
#[derive(Clone, Debug)]
pub struct Fetched {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
    pub elapsed: Duration,
}

impl Stream {
    /// Connects to `addr` (with TLS when `tls` is given), reads and writes bounded by `limit`.
    pub fn connect(
        addr: SocketAddr,
        tls: Option<&Arc<ClientConfig>>,
        limit: Duration,
    ) -> Result<Stream> {
        let tcp =
            TcpStream::connect_timeout(&addr, limit).with_context(|| format!("connect {addr}"))?;
        tcp.set_read_timeout(Some(limit))?;
        tcp.set_write_timeout(Some(limit))?;
        let Some(config) = tls else {
            return Ok(Stream::Plain(tcp));
        };
        let conn = ClientConnection::new(Arc::clone(config), ServerName::from(addr.ip()))?;
        let mut s = StreamOwned::new(conn, tcp);
        while s.conn.is_handshaking() {
            s.conn
                .complete_io(&mut s.sock)
                .with_context(|| format!("TLS handshake with {addr}"))?;
        }
        Ok(Stream::Tls(Box::new(s)))
    }

    /// What the handshake agreed, for TLS connections.
    pub fn handshake(&self) -> Option<Handshake> {
        let Stream::Tls(s) = self else {
            return None;
        };
        Some(Handshake {
            version: s.conn.protocol_version(),
            suite: s
                .conn
                .negotiated_cipher_suite()
                .map(|c| format!("{:?}", c.suite())),
            resumed: s.conn.handshake_kind() == Some(HandshakeKind::Resumed),
        })
    }

    /// GET `path` with `Host: host` (Basic credentials with `auth`; `Connection: close` with
    /// `close`), and its whole response, within `limit`.
    pub fn get(
        &mut self,
        path: &str,
        host: &str,
        auth: Option<(&str, &str)>,
        close: bool,
        limit: Duration,
    ) -> Result<Response> {
        use base64::Engine;
        let deadline = Instant::now() + limit;
        let mut req =
            format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: webstand-lab\r\n");
        if let Some((u, p)) = auth {
            let token = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
            req.push_str(&format!("Authorization: Basic {token}\r\n"));
        }
        if close {
            req.push_str("Connection: close\r\n");
        }
        req.push_str("\r\n");
        self.write_all(req.as_bytes())?;
        self.flush()?;
        self.response(deadline)
            .with_context(|| format!("GET {path}"))
    }

    /// Reads one response (interim 1xx ones skipped) to the end of its body.
    fn response(&mut self, deadline: Instant) -> Result<Response> {
        let mut buf = Vec::new();
        let (len, status, keep_alive, fields) = loop {
            match parse_head(&buf, false).map_err(|e| anyhow!("{e}"))? {
                Some(h) if framing::is_interim(h.status) => {
                    buf.drain(..h.len);
                }
                Some(h) => break (h.len, h.status, h.keep_alive, h.body),
                None => {
                    if self.read_more(&mut buf, deadline)? == 0 {
                        bail!("closed after {} bytes, before a whole head", buf.len());
                    }
                }
            }
        };
        let head = String::from_utf8_lossy(&buf[..len]).trim_end().to_string();
        let body = match framing::response_body(false, status, fields) {
            ResponseBody::None => Vec::new(),
            ResponseBody::Length(n) => {
                let want = len + usize::try_from(n)?;
                while buf.len() < want {
                    if self.read_more(&mut buf, deadline)? == 0 {
                        bail!("closed {} bytes into a {n}-byte body", buf.len() - len);
                    }
                }
                buf[len..want].to_vec()
            }
            ResponseBody::Chunked => loop {
                let mut out = Vec::new();
                if chunked::decode_all(&buf[len..], Policy::LENIENT, &mut out)
                    .map_err(|e| anyhow!("chunked body: {}", e.message()))?
                    .is_some()
                {
                    break out;
                }
                if self.read_more(&mut buf, deadline)? == 0 {
                    bail!("closed inside a chunked body");
                }
            },
            ResponseBody::UntilClose => {
                while self.read_more(&mut buf, deadline)? > 0 {}
                buf[len..].to_vec()
            }
        };
        Ok(Response {
            status,
            head,
            body,
            keep_alive,
        })
    }

    /// Appends what the next read brings to `buf`: its length, 0 at the end of the stream (a TLS
    /// peer that closes without close_notify, as most servers do after a last response, ends it
    /// too).
    fn read_more(&mut self, buf: &mut Vec<u8>, deadline: Instant) -> Result<usize> {
        let mut chunk = [0u8; 65536];
        loop {
            if Instant::now() > deadline {
                bail!("no complete response in time ({} bytes read)", buf.len());
            }
            match self.read(&mut chunk) {
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// One GET over a fresh connection that asks to be closed after it. With `auth`, sends Basic
/// credentials. Bounded by `limit`.
pub fn fetch(
    addr: SocketAddr,
    path: &str,
    auth: Option<(&str, &str)>,
    limit: Duration,
) -> Result<Fetched> {
    fetch_over(addr, None, path, auth, limit)
}

/// [`fetch`] over HTTPS with `tls`'s client (plain HTTP without one).
pub fn fetch_over(
    addr: SocketAddr,
    tls: Option<&Arc<ClientConfig>>,
    path: &str,
    auth: Option<(&str, &str)>,
    limit: Duration,
) -> Result<Fetched> {
    let started = Instant::now();
    let mut s = Stream::connect(addr, tls, limit)?;
    let host = format!("127.0.0.1:{}", addr.port());
    let left = limit.saturating_sub(started.elapsed());
    let r = s.get(path, &host, auth, true, left)?;
    Ok(Fetched {
        status: r.status,
        head: r.head,
        body: r.body,
        elapsed: started.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server that writes `answer` to the first connection after its request, then closes.
    fn answering(answer: &'static [u8]) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut req = [0u8; 1024];
            let _ = c.read(&mut req);
            c.write_all(answer).unwrap();
        });
        addr
    }

    #[test]
    fn bodies_are_framed_by_length_chunks_or_the_close() {
        let limit = Duration::from_secs(5);
        let cases: [(&'static [u8], &[u8]); 4] = [
            (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA", b"hello"),
            (
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n",
                b"hello",
            ),
            (b"HTTP/1.0 200 OK\r\n\r\nhello", b"hello"),
            (b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", b""),
        ];
        for (answer, body) in cases {
            let f = fetch(answering(answer), "/x", None, limit).unwrap();
            assert_eq!(f.body, body, "{}", String::from_utf8_lossy(answer));
        }
        let cut = fetch(
            answering(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello"),
            "/x",
            None,
            limit,
        );
        assert!(cut.unwrap_err().to_string().contains("GET /x"));
    }
}
