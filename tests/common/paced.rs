//! A server of known capacity: HTTP/1.1 keep-alive over a real loopback socket, a thread per
//! connection, answering at most R requests per second in all (the max-rate search's knee, and the
//! open loop's pool at it). scripts/bench/paced-server.py is the same server for the benchmarks.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An HTTP/1.1 keep-alive server that answers at most `rate` requests per second in all: each
/// request takes the next free slot of a shared clock (slots 1/rate apart) and is answered when its
/// slot comes. Below the rate nothing waits; above it a queue grows, and latency with it.
pub struct Paced {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Paced {
    /// http://ADDR/
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// At most `rate` requests per second in all.
    pub fn start(rate: f64) -> Paced {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let next = Arc::new(Mutex::new(Instant::now()));
        let gap = Duration::from_secs_f64(1.0 / rate);
        let flag = stop.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let next = next.clone();
                std::thread::spawn(move || answer(conn, &next, gap));
            }
        });
        Paced { addr, stop }
    }
}

/// Answers each request on `conn` at its slot, until the client closes.
fn answer(mut conn: TcpStream, next: &Mutex<Instant>, gap: Duration) {
    let _ = conn.set_nodelay(true);
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            let slot = {
                let mut n = next.lock().unwrap();
                let slot = (*n).max(Instant::now());
                *n = slot + gap;
                slot
            };
            std::thread::sleep(slot.saturating_duration_since(Instant::now()));
            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            if conn.write_all(reply).is_err() {
                return;
            }
        }
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}

impl Drop for Paced {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}
