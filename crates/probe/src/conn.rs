//! One probe connection: a non-blocking socket, the bytes still to write, and what came back (read
//! by `reader.rs`: the responses, and whether a leak marker went by) and the way the connection
//! ended.

use crate::reader::Reader;
use crate::result::{End, Seen};
use crate::template::LeakTarget;
use mio::net::TcpStream;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

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
    reader: Reader,
    out: Vec<u8>,
    written: usize,
    pub last_rx: Option<Instant>,
    pub seen: Seen,
}

impl Conn {
    pub fn new(stream: std::net::TcpStream) -> std::io::Result<Conn> {
        stream.set_nonblocking(true)?;
        Ok(Conn {
            stream: Some(TcpStream::from_std(stream)),
            reader: Reader::default(),
            out: Vec::new(),
            written: 0,
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
        self.reader.mid_response()
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
                    self.reader.closed(&mut self.seen);
                    return self.end(End::Closed, start);
                }
                Ok(n) => {
                    let now = Instant::now();
                    self.last_rx = Some(now);
                    let at = ms(now.duration_since(start));
                    self.reader.absorb(&mut self.seen, &buf[..n], markers, at);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    return self.end(End::Reset, start)
                }
                Err(_) => return self.end(End::Closed, start),
            }
        }
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
            let how = if self.seen.responses > 0 && !self.reader.mid_response() {
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
