//! The resident memory an idle keep-alive connection costs a running lab server: the RSS of its
//! processes (VmRSS summed, as `ps` shows it) with N connections open, each having made one request
//! for /2k.html and now idle, minus the RSS before they opened, over N. Kernel socket buffers are
//! not in RSS and not counted. On an HTTPS port the connections are TLS (the lab's client), so the
//! figure includes the server's TLS state per connection.

use rustls::ClientConfig;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::client::Stream;
use crate::procstat;
use crate::servers::process::Server;
use webstand_results::PerConnection;

/// Opens `n` connections to the server, one request each, and reads its RSS before and with them.
pub fn per_connection(server: &Server, n: usize) -> PerConnection {
    let rss = || procstat::rss_kib(&server.members(false).pids()).0;
    let mut out = PerConnection {
        rss_before_kib: rss(),
        ..Default::default()
    };
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        match open_one(server.addr, server.tls.as_ref()) {
            Ok(s) => held.push(s),
            Err(e) => {
                out.note = Some(format!("connection {} of {n}: {e:#}", i + 1));
                return out;
            }
        }
    }
    out.rss_with_kib = rss();
    out.connections = held.len();
    out
}

/// One connection (TLS with `tls`) that made one keep-alive request for /2k.html and read its whole
/// answer.
fn open_one(to: SocketAddr, tls: Option<&Arc<ClientConfig>>) -> anyhow::Result<Stream> {
    let limit = Duration::from_secs(5);
    let mut s = Stream::connect(to, tls, limit)?;
    s.get("/2k.html", "localhost", None, false, limit)?;
    Ok(s)
}
