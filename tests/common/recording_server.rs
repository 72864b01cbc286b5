//! An in-test HTTP/1.1 server that records what it saw: every request's connection, method,
//! path, headers and body in arrival order, and how many requests came in each read (pipelining).
//! It answers each with a small keep-alive 200. Stops taking connections when dropped.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Seen: yes\r\n\r\nhello";

/// One request as the server read it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub conn: usize,
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
    /// How many requests the read that completed it held.
    pub batch: usize,
    pub at: Instant,
}

pub struct RecordingServer {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl RecordingServer {
    pub fn start() -> RecordingServer {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr");
        l.set_nonblocking(true).expect("nonblocking");
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let stop: Arc<AtomicBool> = Arc::default();
        let (s2, st2) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut conn = 0;
            while !st2.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((s, _)) => {
                        conn += 1;
                        let seen = s2.clone();
                        let id = conn;
                        std::thread::spawn(move || converse(s, id, &seen));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
        });
        RecordingServer { addr, seen, stop }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// What it saw so far, and forgets it.
    pub fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl Drop for RecordingServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn converse(mut s: TcpStream, conn: usize, seen: &Mutex<Vec<Seen>>) {
    let _ = s.set_nodelay(true);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let n = match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut got = Vec::new();
        while let Some((req, used)) = parse(&buf, conn) {
            got.push(req);
            buf.drain(..used);
        }
        let batch = got.len();
        if batch == 0 {
            continue;
        }
        let answers = ANSWER.repeat(batch);
        {
            let mut seen = seen.lock().unwrap();
            for mut r in got {
                r.batch = batch;
                seen.push(r);
            }
        }
        if s.write_all(&answers).is_err() {
            return;
        }
    }
}

/// One complete request at the front of `buf`, and its length.
fn parse(buf: &[u8], conn: usize) -> Option<(Seen, usize)> {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut fields);
    let head = match req.parse(buf).ok()? {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => return None,
    };
    let headers: BTreeMap<String, String> = req
        .headers
        .iter()
        .map(|h| {
            let v = String::from_utf8_lossy(h.value).into_owned();
            (h.name.to_ascii_lowercase(), v)
        })
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    if buf.len() < head + len {
        return None;
    }
    let seen = Seen {
        conn,
        method: req.method?.to_string(),
        path: req.path?.to_string(),
        headers,
        body: buf[head..head + len].to_vec(),
        batch: 0,
        at: Instant::now(),
    };
    Some((seen, head + len))
}
