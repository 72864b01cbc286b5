//! What a connection's bytes travel over: plain TCP or TLS, each one variant of [`Transport`];
//! QUIC's datagrams travel over `udp.rs`'s socket, which its connections drive themselves.
//!
//! A connection is bytes over a transport carrying a protocol: the transport (this folder) opens
//! the socket and moves plaintext in and out of it; the protocol's connection (`h1/conn.rs`,
//! `h2/conn.rs`) never sees which transport it rides on. A new transport is a new variant and its
//! own file, not cases threaded through the connections.
//!
//! Dispatch is static (an enum, one `match` per call) so plain TCP costs what it did before: the same
//! system calls, no extra copy, no allocation.

pub(crate) mod socket_setup;
pub(crate) mod tls;
pub(crate) mod tls_config;
pub(crate) mod udp;

use crate::clock::{kernel_arrival_times, recv_stamped};
use crate::transport::socket_setup::SocketSetup;
use crate::transport::tls::TlsStream;
use crate::transport::tls_config::TlsSetup;
use mio::net::TcpStream;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Duration;

pub(crate) enum Transport {
    Plain(TcpStream),
    /// Boxed: a rustls connection is large, and a plain slot should not carry its size.
    Tls(Box<TlsStream>),
}

impl Transport {
    /// Starts a non-blocking connection to `to`. `keep_alive`: the connection will carry more than
    /// one request, so it gets the options that only pay off then (no Nagle, Reno unless `body`,
    /// kernel arrival stamps).
    /// `setup`: ab's `-b` and `-B`, applied before the connection starts. With `tls`, the
    /// connection is TLS (the handshake runs inside the first writes).
    pub(crate) fn connect(
        to: SocketAddr,
        keep_alive: bool,
        body: bool,
        setup: &SocketSetup,
        tls: Option<&TlsSetup>,
    ) -> io::Result<Transport> {
        let s = setup.connect(to)?;
        // Nagle never holds back the first segment of a connection, so a plain connection that
        // carries one request saves the setsockopt. Over TLS the request follows the handshake's
        // last flight: Nagle would hold it until that flight's ACK, which the server delays (40 ms).
        if keep_alive || tls.is_some() {
            let _ = s.set_nodelay(true);
        }
        if keep_alive {
            if !body {
                simple_congestion_control(&s);
            }
            kernel_arrival_times(&s);
        }
        match tls {
            None => Ok(Transport::Plain(s)),
            Some(setup) => Ok(Transport::Tls(Box::new(TlsStream::new(s, setup)?))),
        }
    }

    /// The socket, for registering with the poller.
    pub(crate) fn socket(&mut self) -> &mut TcpStream {
        match self {
            Transport::Plain(s) => s,
            Transport::Tls(t) => &mut t.sock,
        }
    }

    /// The socket's descriptor, for a wait on it alone (`halfway.rs`).
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Transport::Plain(s) => s.as_raw_fd(),
            Transport::Tls(t) => t.sock.as_raw_fd(),
        }
    }

    /// Writes plaintext; `WouldBlock` or `NotConnected` while the connection is not ready for it.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(bytes),
            Transport::Tls(t) => t.write(bytes),
        }
    }

    /// Reads plaintext into `buf`: its length (0 at the peer's close) and, when `stamped`, the
    /// kernel's arrival time of the data (see [`crate::clock::StampClock`]).
    pub(crate) fn read(
        &mut self,
        buf: &mut [u8],
        stamped: bool,
    ) -> io::Result<(usize, Option<Duration>)> {
        match self {
            Transport::Plain(s) if stamped => recv_stamped(s, buf),
            Transport::Plain(s) => s.read(buf).map(|n| (n, None)),
            Transport::Tls(t) => t.read(buf, stamped),
        }
    }
}

/// Reno instead of the system default (often BBR, which paces from a timer without an fq qdisc): a
/// generator's sends are requests of a few hundred bytes, for which congestion control is only cost
/// (about 1 % of the generator's CPU per keep-alive request here). Not used for request bodies.
fn simple_congestion_control(s: &TcpStream) {
    const RENO: &[u8] = b"reno";
    // SAFETY: setsockopt with a valid fd and a byte string of the given length; failure is harmless.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            RENO.as_ptr().cast(),
            RENO.len() as libc::socklen_t,
        );
    }
}
