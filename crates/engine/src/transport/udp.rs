//! The datagram transport of QUIC connections (`bench --h3`): one UDP socket per connection slot,
//! bound (to `-B`'s address when given) and connected to the target, with quinn-udp's state for it:
//! GSO on send and GRO on receive where the kernel has them (quinn-udp asks at start-up and falls
//! back to one datagram per call when it has not; `WEBSTAND_UDP_OFFLOAD=off` turns both off). The
//! connection (`h3/conn.rs`) hands it quinn-proto's transmits and takes what it reads, a buffer of
//! one datagram or of several of the same size (`RecvMeta::stride`) when GRO joined them.
//!
//! A datagram the socket cannot take (its send buffer full) is dropped, as a router would drop it:
//! QUIC's loss recovery sends it again.

use crate::transport::socket_setup::SocketSetup;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;

/// The receive buffer a socket asks for (the kernel caps it at net.core.rmem_max): a burst of
/// responses on `-m` streams is many datagrams at once, and a drop costs a retransmission.
const RECV_BUFFER: usize = 4 << 20;

pub(crate) struct Udp {
    pub sock: mio::net::UdpSocket,
    state: quinn_udp::UdpSocketState,
    /// GSO and GRO where the kernel has them (`webstand_h3::offload`: off by the environment).
    offload: bool,
}

impl Udp {
    /// A non-blocking socket connected to `to`, with `-b`'s buffer sizes and `-B`'s address.
    pub(crate) fn open(to: SocketAddr, setup: &SocketSetup) -> io::Result<Udp> {
        let sock = setup.udp(to)?;
        let state = quinn_udp::UdpSocketState::new((&sock).into())?;
        if setup.buffer.is_none() {
            let _ = state.set_recv_buffer_size((&sock).into(), RECV_BUFFER);
        }
        let offload = !webstand_h3::offload::off();
        if !offload {
            // A kernel without GRO has nothing to stop.
            let _ = webstand_h3::offload::stop_gro(&sock);
        }
        Ok(Udp {
            sock: mio::net::UdpSocket::from_std(sock),
            state,
            offload,
        })
    }

    /// Datagrams one transmit may carry (GSO segments; 1 without GSO).
    pub(crate) fn max_segments(&self) -> usize {
        match self.offload {
            true => self.state.max_gso_segments(),
            false => 1,
        }
    }

    /// Whether the kernel joins received datagrams (GRO).
    pub(crate) fn gro(&self) -> bool {
        self.offload && self.state.gro_segments() > 1
    }

    /// Sends the datagrams of `t`, held in `bytes`; a full socket drops them.
    pub(crate) fn send(&self, t: &quinn_proto::Transmit, bytes: &[u8]) {
        let transmit = quinn_udp::Transmit {
            destination: t.destination,
            ecn: t
                .ecn
                .and_then(|e| quinn_udp::EcnCodepoint::from_bits(e as u8)),
            contents: &bytes[..t.size],
            segment_size: t.segment_size,
            src_ip: t.src_ip,
        };
        // An error is the datagram's alone (the peer unreachable for now, an MTU probe too large):
        // loss recovery and the connection's own timers take it from there.
        let _ = self.state.try_send((&self.sock).into(), &transmit);
    }

    /// Reads one buffer of datagrams into `buf`: how many bytes, and their source and stride.
    pub(crate) fn recv(&self, buf: &mut [u8]) -> io::Result<quinn_udp::RecvMeta> {
        let mut meta = [quinn_udp::RecvMeta::default()];
        let mut bufs = [IoSliceMut::new(buf)];
        self.state.recv((&self.sock).into(), &mut bufs, &mut meta)?;
        Ok(meta[0])
    }
}
