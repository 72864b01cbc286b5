//! The addresses of `wrk.lookup`, `wrk.connect` and `thread.addr`: a socket address as a Lua value
//! (printed "IP:PORT", as wrk prints it).

use mlua::{MetaMethod, UserData, UserDataMethods};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long `wrk.connect` waits for a connection.
const CONNECT_WAIT: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Addr(pub SocketAddr);

impl UserData for Addr {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::ToString, |_, a, ()| Ok(a.0.to_string()));
        m.add_meta_method(MetaMethod::Eq, |_, a, b: mlua::UserDataRef<Addr>| {
            Ok(a.0 == b.0)
        });
    }
}

/// The port of a service name or number ("http", "https", "8080").
pub(crate) fn service_port(service: &str) -> Option<u16> {
    match service {
        "http" => Some(80),
        "https" => Some(443),
        s => s.parse().ok(),
    }
}

/// The addresses `host` resolves to, with `port`.
pub(crate) fn resolve(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok((host, port).to_socket_addrs()?.collect())
}

/// Whether a TCP connection to `to` can be made (then closed at once): `wrk.connect`.
pub(crate) fn connects(to: SocketAddr) -> bool {
    TcpStream::connect_timeout(&to, CONNECT_WAIT).is_ok()
}
