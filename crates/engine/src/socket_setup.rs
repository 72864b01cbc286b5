//! What a load connection's socket gets before it connects, when the plan asks: ab's `-b` (the
//! send and receive buffer sizes) and `-B` (the local address to bind). Without either, a socket
//! is opened exactly as before (mio's connect), so the options cost nothing when they are off.

use mio::net::TcpStream;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{IpAddr, SocketAddr};

/// The pre-connect options of every connection of a run, from the plan, read once.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SocketSetup {
    pub buffer: Option<u32>,
    pub bind: Option<IpAddr>,
}

impl SocketSetup {
    pub(crate) fn of(plan: &crate::Plan) -> SocketSetup {
        SocketSetup {
            buffer: plan.socket_buffer,
            bind: plan.bind,
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
        if let Some(ip) = self.bind {
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
}
