//! The `Worker`'s concern of its QUIC socket (see mod.rs): datagrams received in batches (GRO),
//! each handed to quinn's endpoint, which routes it by connection ID to a connection (whose slot
//! is then driven like any connection with input), answers it itself (version negotiation,
//! stateless reset), or offers a new connection, which `admit` takes, refuses, or asks to prove
//! its address with a Retry; and the QUIC connections' own timers (loss detection, ACK delay,
//! idle), kept in a heap and fired between polls.
//!
//! Retry ("under load"): an Initial from an address not yet validated is answered with a Retry
//! (no connection state kept until the client echoes the token) when `quic_retry` says so, or
//! when this loop already holds `RETRY_ABOVE` connections whose handshake has not completed: what
//! a flood of Initials from spoofed addresses builds up, each costing a TLS handshake's state
//! until the header timeout drops it. A new connection past `max_connections`, or while the
//! server drains, is refused (CONNECTION_REFUSED).

use super::Worker;
use crate::conn::Conn;
use crate::quic::conn::QuicConn;
use crate::transport::Transport;
use quinn_proto::{DatagramEvent, Incoming};
use std::cmp::Reverse;
use std::io::IoSliceMut;
use std::time::Instant;

/// Connections in their handshake past which new ones must prove their address first.
pub const RETRY_ABOVE: usize = 64;
/// Receive buffers per call, each up to `DATAGRAM_BUF` (GRO packs several datagrams in one).
const BATCH: usize = 8;
const DATAGRAM_BUF: usize = 64 << 10;

impl Worker {
    /// Takes every datagram waiting on the QUIC socket, then drives the connections they were for.
    pub(super) fn receive_datagrams(&mut self) {
        let Some(shared) = self.quic.clone() else {
            return;
        };
        // The buffers are taken out while datagrams in them drive the loop's connections.
        let mut datagrams = std::mem::take(&mut self.datagrams);
        if datagrams.is_empty() {
            datagrams = vec![0; BATCH * DATAGRAM_BUF];
        }
        let mut touched = Vec::new();
        let mut reply = Vec::new();
        let mut meta = [quinn_udp::RecvMeta::default(); BATCH];
        loop {
            let mut chunks = datagrams.chunks_mut(DATAGRAM_BUF);
            let mut bufs: [IoSliceMut; BATCH] =
                std::array::from_fn(|_| IoSliceMut::new(chunks.next().unwrap_or_default()));
            let n = match shared.recv(&mut bufs, &mut meta) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break, // WouldBlock: all read (other errors are a datagram's own)
            };
            let now = Instant::now();
            for (i, m) in meta.iter().enumerate().take(n) {
                let data = &datagrams[i * DATAGRAM_BUF..i * DATAGRAM_BUF + m.len];
                let ecn = m
                    .ecn
                    .and_then(|e| quinn_proto::EcnCodepoint::from_bits(e as u8));
                for datagram in data.chunks(m.stride.max(1)) {
                    let event = shared.endpoint.borrow_mut().handle(
                        now,
                        m.addr,
                        m.dst_ip,
                        ecn,
                        datagram.into(),
                        &mut reply,
                    );
                    match event {
                        Some(DatagramEvent::ConnectionEvent(handle, event)) => {
                            let idx = shared.routes.borrow().get(&handle).copied();
                            if let Some(q) = idx.and_then(|i| self.quic_conn(i)) {
                                q.event(event);
                                touched.extend(idx);
                            }
                        }
                        Some(DatagramEvent::NewConnection(incoming)) => {
                            touched.extend(self.admit(incoming, now, &mut reply));
                        }
                        Some(DatagramEvent::Response(t)) => shared.send(&t, &reply),
                        None => {}
                    }
                    reply.clear();
                }
            }
        }
        self.datagrams = datagrams;
        touched.sort_unstable();
        touched.dedup();
        for idx in touched {
            self.drive(idx, true, false);
        }
    }

    /// A client's first Initial: a new connection in a slot of its own, a Retry, or a refusal.
    fn admit(&mut self, incoming: Incoming, now: Instant, reply: &mut Vec<u8>) -> Option<usize> {
        let shared = self.quic.clone()?;
        let mut endpoint = shared.endpoint.borrow_mut();
        if self.draining || self.live >= self.site.config.max_connections {
            let t = endpoint.refuse(incoming, reply);
            shared.send(&t, reply);
            return None;
        }
        let loaded = shared.handshaking.get() >= RETRY_ABOVE;
        if (self.site.config.quic_retry || loaded) && !incoming.remote_address_validated() {
            if incoming.may_retry() {
                if let Ok(t) = endpoint.retry(incoming, reply) {
                    shared.send(&t, reply);
                }
            } else {
                endpoint.ignore(incoming);
            }
            return None;
        }
        let (handle, connection) = match endpoint.accept(incoming, now, reply, None) {
            Ok(accepted) => accepted,
            Err(e) => {
                if let Some(t) = e.response {
                    shared.send(&t, reply);
                }
                return None;
            }
        };
        drop(endpoint);
        let peer = connection.remote_address().ip();
        let quic = QuicConn::new(connection, handle, shared.clone());
        let conn = Conn::new(
            Transport::Quic(Box::new(quic)),
            peer,
            now,
            &self.site.config,
        );
        let idx = self.insert(conn);
        shared.routes.borrow_mut().insert(handle, idx);
        Some(idx)
    }

    /// The QUIC connection in slot `idx`, if it holds one.
    fn quic_conn(&mut self, idx: usize) -> Option<&mut QuicConn> {
        self.slots.get_mut(idx)?.as_mut()?.conn.transport.quic()
    }

    /// After a QUIC connection's step: send what it has due and set its timer.
    pub(super) fn arm_quic(&mut self, idx: usize) {
        let Some(q) = self.quic_conn(idx) else {
            return;
        };
        q.transmit();
        let Some(due) = q.timeout() else {
            q.armed = None;
            return;
        };
        if q.armed.is_none_or(|armed| due < armed) {
            q.armed = Some(due);
            self.quic_timers.push(Reverse((due, idx)));
        }
    }

    /// When the earliest QUIC timer is due.
    pub(super) fn next_quic_timer(&self) -> Option<Instant> {
        self.quic_timers.peek().map(|Reverse((t, _))| *t)
    }

    /// Fires the QUIC timers that are due (an entry no longer current is dropped; one set
    /// earlier than the connection's timer now is set again).
    pub(super) fn quic_timers_due(&mut self) {
        let now = Instant::now();
        while let Some(&Reverse((due, idx))) = self.quic_timers.peek() {
            if due > now {
                break;
            }
            self.quic_timers.pop();
            let Some(q) = self.quic_conn(idx) else {
                continue;
            };
            if q.armed != Some(due) {
                continue;
            }
            q.armed = None;
            if q.timeout().is_some_and(|t| t <= now) {
                q.on_timeout();
                self.drive(idx, true, false);
            } else {
                self.arm_quic(idx);
            }
        }
    }
}
