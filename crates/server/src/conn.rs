//! One client connection over a byte stream: its transport (transport.rs), the protocol it speaks
//! (chosen at its first bytes, protocol.rs), the output that could not be written at once
//! (output.rs's `Outbox`), written here within a throttle's budget, and the flags and deadline of
//! its life cycle. Nothing here knows HTTP, files or jobs.

use crate::config::Config;
use crate::job::Client;
use crate::output::{Outbox, Segment};
use crate::protocol::Protocol;
use crate::throttle;
use crate::transport::Transport;
use std::io;
use std::net::IpAddr;
use std::time::Instant;

/// Where writing stopped.
pub enum Written {
    Done,
    /// The socket buffer is full; an edge-triggered writable event resumes it.
    Blocked,
    /// A throttle's budget is spent until the given time.
    Throttled(Instant),
}

pub struct Conn {
    /// The byte stream (TCP, or TLS over it).
    pub transport: Transport,
    pub peer: IpAddr,
    /// The protocol spoken, once the first bytes said which.
    pub protocol: Option<Box<dyn Protocol>>,
    pub outbox: Outbox,
    pub registered: bool,
    /// The write side is shut and input is swallowed until the peer's FIN.
    pub lingering: bool,
    /// The socket may hold unread input: a readable event came while output or a job was
    /// pending (edge-triggered epoll will not report it again).
    pub unread: bool,
    /// The peer has shut down its side (no further readable edge will come).
    pub hup: bool,
    /// When this connection times out in its current state.
    pub deadline: Instant,
    /// When it was accepted (a TLS handshake must end within the header timeout from then).
    pub opened: Instant,
    /// Its addresses, read once when a job first needs them (dispatch.rs).
    pub client: Option<Client>,
    pub throttled_until: Option<Instant>,
}

impl Conn {
    pub fn new(transport: Transport, peer: IpAddr, now: Instant, config: &Config) -> Conn {
        Conn {
            transport,
            peer,
            protocol: None,
            outbox: Outbox::default(),
            registered: false,
            lingering: false,
            unread: false,
            hup: false,
            deadline: now + config.header_timeout,
            opened: now,
            client: None,
            throttled_until: None,
        }
    }

    /// Nothing half-received, nothing to send, no job running (`jobs`): safe to close at any moment.
    pub fn is_idle(&self, jobs: usize) -> bool {
        !self.protocol.as_ref().is_some_and(|p| p.partial_input())
            && !self.has_output()
            && jobs == 0
    }

    /// Output queued here, held by the protocol, or held by the transport (TLS records the socket
    /// has not taken).
    pub fn has_output(&self) -> bool {
        !self.outbox.queue.is_empty()
            || self.transport.pending()
            || self.protocol.as_ref().is_some_and(|p| p.has_output())
    }

    /// Best-effort last bytes before the server closes (HTTP/2's GOAWAY).
    pub fn farewell(&mut self) {
        let Some(protocol) = self.protocol.as_mut() else {
            return;
        };
        let bytes = protocol.farewell();
        if !bytes.is_empty() && !self.transport.handshaking() {
            let _ = self.transport.write(&bytes);
            let _ = self.transport.flush();
        }
    }

    /// Waiting for the rest of a request (the header timeout applies).
    pub fn awaiting_request_bytes(&self, jobs: usize) -> bool {
        self.protocol
            .as_ref()
            .is_some_and(|p| p.partial_input() && !p.stalled())
            && !self.has_output()
            && jobs == 0
    }

    /// Sets the deadline for waiting on the client: the protocol's while a request is partly in,
    /// the header timeout from the accept while a TLS handshake is under way, else the idle
    /// keep-alive timeout.
    pub fn set_wait_deadline(&mut self, now: Instant, config: &Config) {
        self.deadline = if self.transport.handshaking() {
            self.opened + config.header_timeout
        } else {
            self.protocol
                .as_ref()
                .and_then(|p| p.wait_deadline(now, config))
                .unwrap_or(now + config.idle_timeout)
        };
    }

    /// Writes `out` (this round's answers, framed by the protocol) after anything already queued.
    /// The common case, an empty queue and a socket with room, is a single write call.
    pub fn flush(
        &mut self,
        out: &mut Vec<u8>,
        throttles: &[throttle::Rule],
        now: Instant,
    ) -> io::Result<Written> {
        if let Some(protocol) = self.protocol.as_mut() {
            protocol.frame_output(out);
        }
        if self.outbox.queue.is_empty() && self.outbox.throttle.is_none() {
            let mut pos = 0;
            while pos < out.len() {
                match self.transport.write(&out[pos..]) {
                    Ok(n) => pos += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        out.clear();
                        return Err(e);
                    }
                }
            }
            if pos < out.len() {
                let rest = out[pos..].to_vec();
                self.outbox.queue.push_back(Segment::Mem(rest, 0));
            }
            out.clear();
        } else {
            self.outbox.push_bytes(out);
        }
        self.drain_queue(throttles, now)
    }

    fn drain_queue(&mut self, throttles: &[throttle::Rule], now: Instant) -> io::Result<Written> {
        while !self.outbox.queue.is_empty() {
            let more_follows = self.outbox.queue.len() > 1;
            let mut budget = usize::MAX;
            if let Some(rule) = self.outbox.throttle {
                match throttles[rule].budget(now) {
                    Ok(b) => budget = b,
                    Err(until) => return Ok(Written::Throttled(until)),
                }
            }
            let Some(seg) = self.outbox.queue.front_mut() else {
                break;
            };
            let sent = match seg {
                Segment::Mem(buf, pos) => {
                    let len = (buf.len() - *pos).min(budget);
                    let r = self.transport.send(&buf[*pos..*pos + len], more_follows);
                    if let Ok(n) = r {
                        *pos += n;
                    }
                    r
                }
                Segment::File(file, pos, end) => {
                    let len = ((*end - *pos) as usize).min(budget).min(1 << 30);
                    match self.transport.send_file(file, pos, len) {
                        // The file shrank under us: the promised length cannot be met.
                        Ok(0) => {
                            return Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                "file truncated while sent",
                            ))
                        }
                        r => r,
                    }
                }
            };
            let sent = match sent {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Written::Blocked),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if let Some(rule) = self.outbox.throttle {
                throttles[rule].spend(sent as u64);
            }
            if self.outbox.queue.front().is_none_or(Segment::done) {
                self.outbox.queue.pop_front();
            }
        }
        self.outbox.throttle = None;
        if !self.transport.flush()? {
            return Ok(Written::Blocked);
        }
        Ok(Written::Done)
    }
}
