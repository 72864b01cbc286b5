//! A loop's QUIC socket and what all of its QUIC connections share: one UDP socket (SO_REUSEPORT,
//! one per loop, like the TCP listeners), quinn-udp's state for it (GSO on send and GRO on
//! receive where the kernel has them: quinn-udp asks at start-up and falls back to one datagram
//! per call when it has not, or when a send with segments fails; `WEBSTAND_UDP_OFFLOAD=off` turns
//! both off), quinn-proto's `Endpoint` (which routes datagrams to connections by connection ID and
//! answers Initials, Retry, version negotiation and stateless resets itself), and which slot of the
//! loop holds each connection.
//!
//! A datagram the socket cannot take (its send buffer full) is dropped, as a router would drop
//! it: QUIC's loss recovery sends it again, and a full UDP buffer is the congestion it reacts to.

use quinn_proto::{ConnectionHandle, Endpoint, Transmit};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::sync::Arc;

pub struct Shared {
    pub socket: mio::net::UdpSocket,
    state: quinn_udp::UdpSocketState,
    pub endpoint: RefCell<Endpoint>,
    /// The loop's slot of each connection.
    pub routes: RefCell<HashMap<ConnectionHandle, usize>>,
    /// Connections whose handshake has not completed (Retry engages above a number of them).
    pub handshaking: Cell<usize>,
    /// The socket's own address.
    pub local: SocketAddr,
    /// GSO and GRO where the kernel has them (`webstand_h3::offload`: off by the environment).
    offload: bool,
}

impl Shared {
    pub fn new(
        socket: std::net::UdpSocket,
        server_config: Arc<quinn_proto::ServerConfig>,
    ) -> io::Result<Shared> {
        let state = quinn_udp::UdpSocketState::new((&socket).into())?;
        let local = socket.local_addr()?;
        let offload = !webstand_h3::offload::off();
        if !offload {
            // A kernel without GRO has nothing to stop.
            let _ = webstand_h3::offload::stop_gro(&socket);
        }
        let endpoint = Endpoint::new(
            Arc::new(quinn_proto::EndpointConfig::default()),
            Some(server_config),
            true,
            None,
        );
        Ok(Shared {
            socket: mio::net::UdpSocket::from_std(socket),
            state,
            endpoint: RefCell::new(endpoint),
            routes: RefCell::new(HashMap::new()),
            handshaking: Cell::new(0),
            local,
            offload,
        })
    }

    /// Datagrams one transmit may hold (GSO segments; 1 without GSO).
    pub fn max_datagrams(&self) -> usize {
        match self.offload {
            true => self.state.max_gso_segments(),
            false => 1,
        }
    }

    /// Sends the datagrams of `transmit`, held in `bytes`; a full socket drops them.
    pub fn send(&self, transmit: &Transmit, bytes: &[u8]) {
        let t = quinn_udp::Transmit {
            destination: transmit.destination,
            ecn: transmit
                .ecn
                .and_then(|e| quinn_udp::EcnCodepoint::from_bits(e as u8)),
            contents: &bytes[..transmit.size],
            segment_size: transmit.segment_size,
            src_ip: transmit.src_ip,
        };
        // Errors other than a full buffer (an unreachable peer, a message too large for an MTU
        // probe) are the datagram's alone; quinn-udp turns GSO off itself if the kernel refuses it.
        let _ = self.state.try_send((&self.socket).into(), &t);
    }

    /// Receives datagrams into `bufs`, described by `meta`; how many buffers were filled.
    pub fn recv(
        &self,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [quinn_udp::RecvMeta],
    ) -> io::Result<usize> {
        self.state.recv((&self.socket).into(), bufs, meta)
    }
}
