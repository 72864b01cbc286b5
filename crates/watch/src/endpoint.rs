//! `--metrics-listen ADDR`: an HTTP listener that answers every GET with the latest exposition
//! (`exposition.rs`). One connection at a time on a thread of its own: a scraper asks every few
//! seconds, and the load threads never see it.

use anyhow::Context;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The latest exposition, replaced by the watcher at each reading.
pub type Page = Arc<Mutex<String>>;

/// A scraper that sends nothing for this long is dropped.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The listener, serving until dropped.
pub struct Endpoint {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Endpoint {
    /// Listens on `addr` (port 0: any free one; [`Endpoint::addr`] says which).
    pub fn start(addr: SocketAddr, page: Page) -> anyhow::Result<Endpoint> {
        let listener =
            TcpListener::bind(addr).with_context(|| format!("--metrics-listen {addr}"))?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if flag.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(s) = conn {
                        let _ = answer(s, &page);
                    }
                }
            })?;
        Ok(Endpoint {
            addr,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The accept loop wakes on a connection of our own and sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request and answers it: the exposition for GET (any path), 405 for anything else.
fn answer(mut s: TcpStream, page: &Page) -> std::io::Result<()> {
    s.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut buf = vec![0u8; 8192];
    let mut len = 0;
    let method = loop {
        let n = s.read(&mut buf[len..])?;
        if n == 0 {
            return Ok(());
        }
        len += n;
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..len]) {
            Ok(httparse::Status::Complete(_)) => break req.method.unwrap_or("").to_string(),
            Ok(httparse::Status::Partial) if len < buf.len() => continue,
            _ => return respond(&mut s, "400 Bad Request", "text/plain", b"bad request\n"),
        }
    };
    match method.as_str() {
        "GET" => {
            let body = page.lock().unwrap_or_else(|e| e.into_inner()).clone();
            respond(
                &mut s,
                "200 OK",
                crate::exposition::CONTENT_TYPE,
                body.as_bytes(),
            )
        }
        _ => respond(
            &mut s,
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n",
        ),
    }
}

fn respond(s: &mut TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())?;
    s.write_all(body)
}
