//! An in-test HTTP/1.1 server whose misbehaviour a test chooses (a small backlog, slow accepts,
//! answers in two writes, 503s always, in a burst or now and then), for provoking each finding of
//! the Diagnosis over real sockets.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a test server answers each request on a connection.
#[derive(Clone, Copy)]
pub enum Answer {
    /// Headers and body in two writes (Nagle left on), keep-alive.
    TwoWrites,
    /// 503 in one write, keep-alive.
    Unavailable,
    /// 200 in one write, then close.
    OkClose,
    /// 200 in one write, and the connection kept until the client closes it (so the client's
    /// side of each connection ends in TIME_WAIT).
    OkOpen,
    /// 503 for the requests that come from `from` to `to` after the connection's first, 200 for
    /// the others (keep-alive): a stall in the middle of a run.
    UnavailableBetween(Duration, Duration),
    /// 503 for every `n`th request of a connection, 200 for the others (keep-alive).
    UnavailableEvery(u64),
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
const UNAVAILABLE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy";

/// An in-test HTTP server: a listener with `backlog`, an accept loop that waits `accept_delay`
/// after each accept, a thread per connection answering as `answer` says. Stops when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub accepted: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    pub fn start(backlog: i32, accept_delay: Duration, answer: Answer) -> TestServer {
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
            .unwrap();
        sock.listen(backlog).unwrap();
        let listener: TcpListener = sock.into();
        let addr = listener.local_addr().unwrap();
        let (accepted, stop) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (count, flag) = (accepted.clone(), stop.clone());
        std::thread::spawn(move || {
            for s in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(s) = s else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || converse(s, answer));
                // The slow accept: the point of the backlog test (not a wait for readiness).
                std::thread::sleep(accept_delay);
            }
        });
        TestServer {
            addr,
            accepted,
            stop,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}/x", self.addr)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop so it sees the flag
    }
}

/// Answers every request on `s` until the client closes.
pub fn converse(mut s: TcpStream, answer: Answer) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    let (mut first, mut served) = (None, 0u64);
    loop {
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            served += 1;
            let since = first.get_or_insert_with(Instant::now).elapsed();
            let done = match answer {
                Answer::TwoWrites => s
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
                    .and_then(|_| s.write_all(b"hello")),
                Answer::Unavailable => s.write_all(UNAVAILABLE),
                Answer::OkClose => {
                    let _ = s.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                    );
                    return;
                }
                Answer::OkOpen => s.write_all(OK),
                Answer::UnavailableBetween(from, to) if since >= from && since < to => {
                    s.write_all(UNAVAILABLE)
                }
                Answer::UnavailableEvery(every) if served % every == 0 => s.write_all(UNAVAILABLE),
                Answer::UnavailableBetween(..) | Answer::UnavailableEvery(_) => s.write_all(OK),
            };
            if done.is_err() {
                return;
            }
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}
