//! What a load connection's socket gets before it connects, when the plan asks: ab's `-b` (the
//! send and receive buffer sizes) and `-B` (the local address to bind, or a range of them taken in
//! turn, one per new connection), for TCP and for QUIC's UDP sockets. Without either, a TCP socket
//! is opened exactly as before (mio's connect), so the options cost nothing when they are off.

use mio::net::TcpStream;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

/// The pre-connect options of every connection of a run, from the plan, read once.
#[derive(Debug, Default)]
pub(crate) struct SocketSetup {
    pub buffer: Option<u32>,
    pub bind: Option<webstand_results::plan::SourceAddrs>,
    /// Connections bound so far, across the run's threads: the next one takes the next address.
    bound: AtomicU64,
}

impl SocketSetup {
    pub(crate) fn of(plan: &webstand_results::plan::Plan) -> SocketSetup {
        SocketSetup {
            buffer: plan.socket_buffer,
            bind: plan.bind,
            bound: AtomicU64::new(0),
        }
    }

    /// Starts a non-blocking connection to `to` with these options.
    pub(crate) fn connect(&self, to: SocketAddr) -> io::Result<TcpStream> {
        if self.buffer.is_none() && self.bind.is_none() {
            return TcpStream::connect(to);
        }
        let s = Socket::new(Domain::for_address(to), Type::STREAM, Some(Protocol::TCP))?;
        s.set_nonblocking(true)?;
        if let Some(bytes) = self.buffer {
            s.set_send_buffer_size(bytes as usize)?;
            s.set_recv_buffer_size(bytes as usize)?;
        }
        if let Some(addrs) = self.bind {
            let ip = addrs.nth(self.bound.fetch_add(1, Ordering::Relaxed));
            // Port 0: the kernel picks the source port, as for an unbound socket.
            s.bind(&SocketAddr::new(ip, 0).into())?;
        }
        match s.connect(&to.into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        Ok(TcpStream::from_std(s.into()))
    }

    /// A non-blocking UDP socket connected to `to` (QUIC's), with these options.
    pub(crate) fn udp(&self, to: SocketAddr) -> io::Result<std::net::UdpSocket> {
        let s = Socket::new(Domain::for_address(to), Type::DGRAM, Some(Protocol::UDP))?;
        s.set_nonblocking(true)?;
        if let Some(bytes) = self.buffer {
            s.set_send_buffer_size(bytes as usize)?;
            s.set_recv_buffer_size(bytes as usize)?;
        }
        let ip = match self.bind {
            Some(addrs) => addrs.nth(self.bound.fetch_add(1, Ordering::Relaxed)),
            None if to.is_ipv4() => std::net::Ipv4Addr::UNSPECIFIED.into(),
            None => std::net::Ipv6Addr::UNSPECIFIED.into(),
        };
        s.bind(&SocketAddr::new(ip, 0).into())?;
        s.connect(&to.into())?;
        Ok(s.into())
    }
}
