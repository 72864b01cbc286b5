//! The resident memory an idle keep-alive connection costs a running lab server: the RSS of its
//! processes (VmRSS summed, as `ps` shows it) with N connections open, each having made one request
//! for /2k.html and now idle, minus the RSS before they opened, over N. Kernel socket buffers are
//! not in RSS and not counted.

use serde::Serialize;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::procstat;
use crate::servers::Server;

/// What the measurement saw.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerConnection {
    /// Connections held open (and answered) at the second reading.
    pub connections: usize,
    pub rss_before_kib: u64,
    pub rss_with_kib: u64,
    /// Why there is no figure (a connection refused or unanswered).
    pub note: Option<String>,
}

impl PerConnection {
    /// Bytes per connection, when measured.
    pub fn bytes(&self) -> Option<f64> {
        (self.note.is_none() && self.connections > 0).then(|| {
            let delta = self.rss_with_kib.saturating_sub(self.rss_before_kib);
            delta as f64 * 1024.0 / self.connections as f64
        })
    }

    /// The table's cell: KiB per connection with one decimal.
    pub fn cell(&self) -> String {
        match self.bytes() {
            Some(b) => format!("{:.1}", b / 1024.0),
            None => "FAILED".into(),
        }
    }
}

const REQUEST: &[u8] = b"GET /2k.html HTTP/1.1\r\nHost: localhost\r\n\r\n";

/// Opens `n` connections to the server, one request each, and reads its RSS before and with them.
pub fn per_connection(server: &Server, n: usize) -> PerConnection {
    let rss = || procstat::rss_kib(&server.members(false).pids()).0;
    let mut out = PerConnection {
        rss_before_kib: rss(),
        ..Default::default()
    };
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        match open_one(server.addr) {
            Ok(s) => held.push(s),
            Err(e) => {
                out.note = Some(format!("connection {} of {n}: {e}", i + 1));
                return out;
            }
        }
    }
    out.rss_with_kib = rss();
    out.connections = held.len();
    out
}

/// One connection that made one keep-alive request and read its whole answer.
fn open_one(to: SocketAddr) -> std::io::Result<TcpStream> {
    let mut s = TcpStream::connect_timeout(&to, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.write_all(REQUEST)?;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(total) = answer_length(&got) {
            if got.len() >= total {
                return Ok(s);
            }
        }
        match s.read(&mut buf)? {
            0 => return Err(std::io::Error::other("closed before the whole answer")),
            n => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// Head plus Content-Length, once the head is in (the lab's servers answer /2k.html that way).
fn answer_length(got: &[u8]) -> Option<usize> {
    let end = got.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))?;
    Some(end + len.trim().parse::<usize>().ok()?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_answer_ends_at_its_content_length() {
        let a = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nab";
        assert_eq!(super::answer_length(a), Some(41));
        assert_eq!(super::answer_length(b"HTTP/1.1 200 OK\r\n"), None);
    }
}
