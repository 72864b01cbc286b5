//! A QUIC connection on a UDP socket of its own: quinn-proto's client connection and the endpoint
//! it was made through (one per connection, dropped with it: the socket carries nothing else),
//! the datagrams read handed to the endpoint (a GRO buffer cut at its stride), the datagrams quinn
//! wants sent put on the socket (several per call with GSO), the endpoint's and the connection's
//! news for each other passed on, the smallest congestion window seen as the connection goes, and
//! the close that sends CONNECTION_CLOSE at once and adds the connection's statistics to the
//! thread's.

use super::prepared::Prepared;
use crate::transport::socket_setup::SocketSetup;
use crate::transport::udp::Udp;
use mio::{Interest, Registry, Token};
use quinn_proto::{ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig, VarInt};
use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
use webstand_results::result::QuicSummary;

/// H3_NO_ERROR: our close when a connection is done with.
const NO_ERROR: u32 = 0x100;

pub(crate) struct Quic {
    endpoint: Endpoint,
    handle: ConnectionHandle,
    pub conn: quinn_proto::Connection,
    udp: Udp,
    /// The smallest congestion window the connection has had, looked at after each exchange.
    min_cwnd: u64,
}

impl Quic {
    /// Opens the socket to `to`, registers it under `slot`, and starts the handshake; the error
    /// says why not, with its errno if it has one.
    pub(crate) fn connect(
        to: SocketAddr,
        p: &Prepared,
        config: &Arc<EndpointConfig>,
        setup: &SocketSetup,
        registry: &Registry,
        slot: usize,
        now: Instant,
    ) -> Result<Quic, (String, Option<i32>)> {
        let failed = |e: io::Error| (format!("h3 to {to}: {e}"), e.raw_os_error());
        let mut udp = Udp::open(to, setup).map_err(failed)?;
        registry
            .register(&mut udp.sock, Token(slot), Interest::READABLE)
            .map_err(failed)?;
        let mut endpoint = Endpoint::new(config.clone(), None, true, None);
        let (handle, conn) = endpoint
            .connect(now, p.client.clone(), to, &p.server_name)
            .map_err(|e| (format!("h3 to {to}: {e}"), None))?;
        let min_cwnd = conn.congestion_state().window();
        Ok(Quic {
            endpoint,
            handle,
            conn,
            udp,
            min_cwnd,
        })
    }

    /// Whether its socket sends with GSO and receives with GRO.
    pub(crate) fn offload(&self) -> (bool, bool) {
        (self.udp.max_segments() > 1, self.udp.gro())
    }

    /// Reads every datagram waiting on the socket into `buf` and hands each to the connection;
    /// whether any came. An error other than "nothing more" is the socket's (over a connected
    /// socket, an ICMP error: nothing listens on the port).
    pub(crate) fn receive(
        &mut self,
        buf: &mut [u8],
        tx: &mut Vec<u8>,
        now: Instant,
    ) -> io::Result<bool> {
        let mut any = false;
        loop {
            let meta = match self.udp.recv(buf) {
                Ok(meta) => meta,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(any),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            any = true;
            let stride = if meta.stride == 0 {
                meta.len
            } else {
                meta.stride
            };
            let ecn = meta
                .ecn
                .and_then(|e| quinn_proto::EcnCodepoint::from_bits(e as u8));
            for datagram in buf[..meta.len].chunks(stride) {
                let data = bytes::BytesMut::from(datagram);
                tx.clear();
                match self
                    .endpoint
                    .handle(now, meta.addr, meta.dst_ip, ecn, data, tx)
                {
                    Some(DatagramEvent::ConnectionEvent(h, event)) if h == self.handle => {
                        self.conn.handle_event(event);
                        // The acknowledgement that declares a loss (persistent congestion: the
                        // window at its minimum) may be followed in the same read by ones that
                        // grow it again before the next transmit.
                        self.min_cwnd = self.min_cwnd.min(self.conn.congestion_state().window());
                    }
                    Some(DatagramEvent::Response(t)) => self.udp.send(&t, tx),
                    _ => {}
                }
            }
        }
    }

    /// Passes the connection's news to the endpoint, and the endpoint's answers back.
    pub(crate) fn endpoint_events(&mut self) {
        while let Some(event) = self.conn.poll_endpoint_events() {
            if let Some(reply) = self.endpoint.handle_event(self.handle, event) {
                self.conn.handle_event(reply);
            }
        }
    }

    /// Sends what quinn has; returns its next timer. The congestion window is looked at here
    /// (a timer's loss moves it) and after each datagram read (an acknowledgement's), so the
    /// smallest window seen is the connection's smallest.
    pub(crate) fn transmit(&mut self, tx: &mut Vec<u8>, now: Instant) -> Option<Instant> {
        self.min_cwnd = self.min_cwnd.min(self.conn.congestion_state().window());
        let max = self.udp.max_segments();
        loop {
            tx.clear();
            let Some(t) = self.conn.poll_transmit(now, max, tx) else {
                break;
            };
            self.udp.send(&t, tx);
        }
        self.conn.poll_timeout()
    }

    /// Closes the connection (H3_NO_ERROR unless it is closed already), sends the close, and adds
    /// its statistics to `sum`.
    pub(crate) fn close(mut self, tx: &mut Vec<u8>, sum: &mut QuicSummary) {
        let now = Instant::now();
        if !self.conn.is_closed() {
            let code = VarInt::from_u32(NO_ERROR);
            self.conn.close(now, code, bytes::Bytes::new());
        }
        self.transmit(tx, now);
        let s = self.conn.stats();
        sum.add(&QuicSummary {
            datagrams_sent: s.udp_tx.datagrams,
            datagrams_received: s.udp_rx.datagrams,
            bytes_sent: s.udp_tx.bytes,
            bytes_received: s.udp_rx.bytes,
            packets_sent: s.path.sent_packets,
            packets_lost: s.path.lost_packets,
            congestion_events: s.path.congestion_events,
            min_cwnd: self.min_cwnd.min(s.path.cwnd),
            ..QuicSummary::default()
        });
    }
}
