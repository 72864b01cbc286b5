//! The lab's one-request HTTP client, for the feature checks and the tests: an HTTP/1.0 GET read to
//! the close, so there is no chunking or keep-alive to handle.

use anyhow::{anyhow, bail, Context};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// What came back for one request.
#[derive(Clone, Debug)]
pub struct Fetched {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
    pub elapsed: Duration,
}

/// One HTTP/1.0 GET over a fresh connection, read to the close (no chunking to undo). With `auth`,
/// sends Basic credentials. Bounded by `limit`.
pub fn fetch(
    addr: SocketAddr,
    path: &str,
    auth: Option<(&str, &str)>,
    limit: Duration,
) -> anyhow::Result<Fetched> {
    use base64::Engine;
    let started = Instant::now();
    let mut s =
        TcpStream::connect_timeout(&addr, limit).with_context(|| format!("connect {addr}"))?;
    s.set_read_timeout(Some(limit))?;
    s.set_write_timeout(Some(limit))?;
    let mut req = format!(
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nUser-Agent: webstand-lab\r\n",
        addr.port()
    );
    if let Some((u, p)) = auth {
        req.push_str(&format!(
            "Authorization: Basic {}\r\n",
            base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
        ));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        if started.elapsed() > limit {
            bail!("GET {path}: no complete response within {limit:?}");
        }
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(anyhow!("GET {path}: {e}")),
        }
    }
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| anyhow!("GET {path}: no header end in {} bytes", raw.len()))?;
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| anyhow!("GET {path}: bad status line"))?;
    Ok(Fetched {
        status,
        head,
        body: raw[end + 4..].to_vec(),
        elapsed: started.elapsed(),
    })
}
