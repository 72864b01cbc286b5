//! One probe connection: a non-blocking socket, the bytes still to write, and what came back —
//! responses split by the engine's response parser, the way the connection ended, and whether a
//! leak marker went by (searched across read boundaries).

use crate::result::{End, Seen};
use crate::template::LeakTarget;
use mio::net::TcpStream;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use webstand_engine::{Feed, ResponseParser};

/// Statuses kept per connection (the count goes on beyond).
const STATUSES_KEPT: usize = 16;

/// Opens a blocking-connected, then non-blocking, socket to `addr`.
pub fn connect(
    addr: SocketAddr,
    within: Duration,
    recv_buffer: Option<usize>,
) -> std::io::Result<std::net::TcpStream> {
    let s = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        None,
    )?;
    if let Some(n) = recv_buffer {
        // Before connect, so the window scale is negotiated for the small buffer.
        s.set_recv_buffer_size(n)?;
    }
    s.connect_timeout(&addr.into(), within.max(Duration::from_millis(1)))?;
    s.set_nodelay(true)?;
    Ok(s.into())
}

pub struct Conn {
    stream: Option<TcpStream>,
    parser: ResponseParser,
    out: Vec<u8>,
    written: usize,
    /// The last bytes read, so a marker split across two reads is still found.
    tail: Vec<u8>,
    pub last_rx: Option<Instant>,
    pub seen: Seen,
}

impl Conn {
    pub fn new(stream: std::net::TcpStream) -> std::io::Result<Conn> {
        stream.set_nonblocking(true)?;
        let mut parser = ResponseParser::default();
        parser.begin(false);
        Ok(Conn {
            stream: Some(TcpStream::from_std(stream)),
            parser,
            out: Vec::new(),
            written: 0,
            tail: Vec::new(),
            last_rx: None,
            seen: Seen::default(),
        })
    }

    pub fn stream(&mut self) -> Option<&mut TcpStream> {
        self.stream.as_mut()
    }

    /// Whether the server has ended the connection.
    pub fn ended(&self) -> bool {
        self.stream.is_none()
    }

    /// Whether a response has begun and not finished.
    pub fn mid_response(&self) -> bool {
        self.parser.started()
    }

    /// Queues bytes and writes what the socket takes now.
    pub fn send(&mut self, bytes: &[u8], start: Instant) {
        if self.stream.is_some() {
            self.out.extend_from_slice(bytes);
            self.flush(start);
        }
    }

    /// Writes queued bytes until the socket would block.
    pub fn flush(&mut self, start: Instant) {
        while self.written < self.out.len() {
            let Some(s) = self.stream.as_mut() else {
                return;
            };
            match s.write(&self.out[self.written..]) {
                Ok(0) => return self.end(End::Closed, start),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    return self.end(End::Reset, start)
                }
                Err(_) => return self.end(End::Closed, start),
            }
        }
    }

    /// Reads what has arrived (or, when `read` is false, only notices the end of the connection).
    pub fn receive(&mut self, read: bool, hup: bool, markers: &[LeakTarget], start: Instant) {
        if !read {
            if hup {
                self.end(End::Closed, start);
            }
            return;
        }
        let mut buf = [0u8; 64 << 10];
        loop {
            let Some(s) = self.stream.as_mut() else {
                return;
            };
            match s.read(&mut buf) {
                Ok(0) => {
                    if self.parser.eof() {
                        self.response_done();
                    }
                    return self.end(End::Closed, start);
                }
                Ok(n) => self.absorb(&buf[..n], markers, start),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    return self.end(End::Reset, start)
                }
                Err(_) => return self.end(End::Closed, start),
            }
        }
    }

    fn absorb(&mut self, mut data: &[u8], markers: &[LeakTarget], start: Instant) {
        let now = Instant::now();
        self.last_rx = Some(now);
        self.seen.bytes += data.len() as u64;
        self.seen
            .first_answer_ms
            .get_or_insert(ms(now.duration_since(start)));
        self.scan(data, markers);
        while self.seen.garbage.is_none() && !data.is_empty() {
            match self.parser.feed(data) {
                Ok(Feed::Done(n)) => {
                    self.response_done();
                    data = &data[n.min(data.len())..];
                    if n == 0 {
                        break;
                    }
                }
                Ok(Feed::More) => break,
                Err(e) => self.seen.garbage = Some(e.to_string()),
            }
        }
    }

    fn response_done(&mut self) {
        if self.seen.statuses.len() < STATUSES_KEPT {
            self.seen.statuses.push(self.parser.status);
        }
        self.seen.responses += 1;
        self.parser.begin(false);
    }

    fn scan(&mut self, data: &[u8], markers: &[LeakTarget]) {
        let longest = markers
            .iter()
            .flat_map(|t| t.markers.iter().map(Vec::len))
            .max()
            .unwrap_or(0);
        if longest == 0 {
            return;
        }
        self.tail.extend_from_slice(data);
        for target in markers {
            if target
                .markers
                .iter()
                .any(|m| memchr::memmem::find(&self.tail, m).is_some())
            {
                self.seen.leaked.get_or_insert_with(|| target.name.clone());
            }
        }
        let keep = longest.saturating_sub(1).min(self.tail.len());
        self.tail.drain(..self.tail.len() - keep);
    }

    /// Records how the connection ended and drops the socket.
    pub fn end(&mut self, how: End, start: Instant) {
        if self.stream.take().is_some() {
            let at = ms(start.elapsed());
            self.seen.end = how;
            self.seen.end_ms = at;
            if matches!(how, End::Closed | End::Reset) {
                // Closing is an answer too (a refusal without words).
                self.seen.first_answer_ms.get_or_insert(at);
            }
            self.seen.unsent = (self.out.len() - self.written) as u64;
        }
    }

    /// The case is over with the connection still open: `Open` after a complete answer, `Timeout`
    /// while waiting for one.
    pub fn finish(&mut self, start: Instant) {
        if self.stream.is_some() {
            let how = if self.seen.responses > 0 && !self.parser.started() {
                End::Open
            } else {
                End::Timeout
            };
            self.end(how, start);
        }
    }
}

pub fn ms(d: Duration) -> u64 {
    d.as_millis().min(u128::from(u64::MAX)) as u64
}
