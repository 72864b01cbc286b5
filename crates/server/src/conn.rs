//! One client connection: its transport (transport.rs), the protocol it speaks with that
//! protocol's input state (protocol.rs), the output that could not be written at once (memory and
//! file segments), and the flags of its life cycle. Nothing here knows HTTP/1.

use crate::cgi::CgiJob;
use crate::config::Config;
use crate::fastcgi::FcgiJob;
use crate::handler::Ctx;
use crate::protocol::Protocol;
use crate::transport::Transport;
use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

/// A piece of output waiting to be written.
pub enum Segment {
    /// Bytes, and how many of them are already written.
    Mem(Vec<u8>, usize),
    /// A byte range [pos, end) of a file, sent with sendfile.
    File(Arc<File>, u64, u64),
}

/// Where writing stopped.
pub enum Output {
    Done,
    /// The socket buffer is full; an edge-triggered writable event resumes it.
    Blocked,
    /// A throttle's budget is spent until the given time.
    Throttled(Instant),
}

pub struct Conn {
    /// The byte stream (TCP today).
    pub transport: Transport,
    pub peer: IpAddr,
    queue: VecDeque<Segment>,
    pub registered: bool,
    /// Close once the queued output is written.
    pub closing: bool,
    /// …and close gracefully (shut down writing, swallow input until the FIN) because the input
    /// was refused mid-stream.
    pub linger: bool,
    pub lingering: bool,
    /// The protocol spoken, and its state between reads.
    pub protocol: Protocol,
    /// The socket may hold unread input: a readable event came while output or a CGI program was
    /// pending (edge-triggered epoll will not report it again).
    pub unread: bool,
    /// The peer has shut down its side (no further readable edge will come).
    pub hup: bool,
    /// When this connection times out in its current state.
    pub deadline: Instant,
    /// When it was accepted (a TLS handshake must end within the header timeout from then).
    pub opened: Instant,
    /// The CGI programs running for this connection (one at most for HTTP/1; up to
    /// `h2::MAX_JOBS` jobs of both kinds for HTTP/2's streams). Boxed: a job is taken out of the
    /// list while it is worked on and put back, a pointer's move rather than the job's.
    #[allow(clippy::vec_box)]
    pub cgi: Vec<Box<CgiJob>>,
    /// The FastCGI requests in progress for this connection (as `cgi`).
    #[allow(clippy::vec_box)]
    pub fcgi: Vec<Box<FcgiJob>>,
    /// (local, peer) addresses, looked up once for FastCGI's parameters.
    pub addrs: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
    /// The throttle rule the queued output is paced by.
    pub throttle: Option<usize>,
    pub throttled_until: Option<Instant>,
    /// File ranges an HTTP/2 answer staged this round (h2/send.rs).
    pub staged_files: Vec<crate::h2::FileRange>,
}

impl Conn {
    pub fn new(transport: Transport, peer: IpAddr, now: Instant, config: &Config) -> Conn {
        Conn {
            transport,
            peer,
            queue: VecDeque::new(),
            registered: false,
            closing: false,
            linger: false,
            lingering: false,
            protocol: Protocol::default(),
            unread: false,
            hup: false,
            deadline: now + config.header_timeout,
            opened: now,
            cgi: Vec::new(),
            fcgi: Vec::new(),
            addrs: None,
            throttle: None,
            throttled_until: None,
            staged_files: Vec::new(),
        }
    }

    /// Nothing half-received, nothing to send, nothing running: safe to close at any moment.
    pub fn is_idle(&self) -> bool {
        !self.protocol.partial_input() && !self.has_output() && self.jobs() == 0
    }

    /// CGI programs and FastCGI requests running for this connection.
    pub fn jobs(&self) -> usize {
        self.cgi.len() + self.fcgi.len()
    }

    /// Output queued here, or held by the transport (TLS records the socket has not taken).
    pub fn has_output(&self) -> bool {
        !self.queue.is_empty() || self.transport.pending() || self.protocol.has_output()
    }

    /// Best-effort last bytes before the server closes (HTTP/2's GOAWAY).
    pub fn farewell(&mut self) {
        let bytes = self.protocol.farewell();
        if !bytes.is_empty() && !self.transport.handshaking() {
            let _ = self.transport.write(&bytes);
            let _ = self.transport.flush();
        }
    }

    /// Waiting for the rest of a request (the header timeout applies).
    pub fn awaiting_request_bytes(&self) -> bool {
        self.protocol.partial_input()
            && !self.protocol.stalled()
            && !self.has_output()
            && self.jobs() == 0
    }

    /// Sets the deadline for waiting on the client: the protocol's while a request is partly in
    /// (protocol.rs), the header timeout from the accept while a TLS handshake is under way, else
    /// the idle keep-alive timeout.
    pub fn set_wait_deadline(&mut self, now: Instant, config: &Config) {
        self.deadline = if self.transport.handshaking() {
            self.opened + config.header_timeout
        } else {
            self.protocol
                .wait_deadline(now, config)
                .unwrap_or(now + config.idle_timeout)
        };
    }

    /// Bytes queued but not yet written.
    pub fn unsent(&self) -> u64 {
        self.queue
            .iter()
            .map(|s| match s {
                Segment::Mem(buf, pos) => (buf.len() - pos) as u64,
                Segment::File(_, pos, end) => end - pos,
            })
            .sum()
    }

    /// Queues the output gathered so far, then a file range to send with sendfile.
    pub fn push_file(&mut self, out: &mut Vec<u8>, file: Arc<File>, start: u64, end: u64) {
        if !out.is_empty() {
            self.queue.push_back(Segment::Mem(out.clone(), 0));
            out.clear();
        }
        if end > start {
            self.queue.push_back(Segment::File(file, start, end));
        }
    }

    /// Queues the output gathered so far (used before pausing the connection).
    pub fn push_out(&mut self, out: &mut Vec<u8>) {
        if !out.is_empty() {
            self.queue.push_back(Segment::Mem(out.clone(), 0));
            out.clear();
        }
    }

    /// Writes `out` (this round's answers) after anything already queued. The common case, an empty
    /// queue and a socket with room, is a single write call.
    pub fn flush(&mut self, out: &mut Vec<u8>, ctx: &mut Ctx) -> io::Result<Output> {
        self.protocol.frame_output(out, &mut self.staged_files);
        if self.queue.is_empty() && self.throttle.is_none() {
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
                self.queue.push_back(Segment::Mem(out[pos..].to_vec(), 0));
            }
            out.clear();
        } else {
            self.push_out(out);
        }
        self.drain_queue(ctx)
    }

    fn drain_queue(&mut self, ctx: &mut Ctx) -> io::Result<Output> {
        while !self.queue.is_empty() {
            let more_follows = self.queue.len() > 1;
            let mut budget = usize::MAX;
            if let Some(rule) = self.throttle {
                match ctx.throttle_budget(rule) {
                    Ok(b) => budget = b,
                    Err(until) => return Ok(Output::Throttled(until)),
                }
            }
            let Some(seg) = self.queue.front_mut() else {
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
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Output::Blocked),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if let Some(rule) = self.throttle {
                ctx.throttle_spend(rule, sent as u64);
            }
            let finished = match self.queue.front() {
                Some(Segment::Mem(buf, pos)) => *pos == buf.len(),
                Some(Segment::File(_, pos, end)) => pos == end,
                None => true,
            };
            if finished {
                self.queue.pop_front();
            }
        }
        self.throttle = None;
        if !self.transport.flush()? {
            return Ok(Output::Blocked);
        }
        Ok(Output::Done)
    }
}
