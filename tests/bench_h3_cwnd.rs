//! QUIC's smallest congestion window is the smallest a connection had during the run, not the one
//! it closed with: `bench --h3` uploads through a UDP relay of the test's own to `webstand serve`,
//! the relay drops every datagram both ways for 600 ms in the middle of the run (QUIC's
//! persistent congestion: the window falls to its minimum, two datagrams), then passes everything,
//! and the uploads after it grow the window far past that minimum before the connection closes.

use crate::common;

use common::h3::{docroot, H3Server};
use common::*;
use serde_json::Value;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Client bytes passed before the blackout, and how long it lasts.
const BLACKOUT_AFTER: u64 = 3_000_000;
const BLACKOUT: Duration = Duration::from_millis(600);

/// A UDP relay on loopback for one client: what the client sends goes to `server` from a socket
/// of the relay's, what comes back goes to the client; both ways are dropped during the blackout.
struct Relay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

/// When the blackout began (None: not yet).
type Blackout = Arc<Mutex<Option<Instant>>>;

fn dark(blackout: &Blackout) -> bool {
    blackout
        .lock()
        .unwrap()
        .is_some_and(|t| t.elapsed() < BLACKOUT)
}

impl Relay {
    fn start(server: SocketAddr) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(server).unwrap();
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        }
        let addr = front.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
        let blackout: Blackout = Arc::default();
        let up = {
            let (front, back) = (front.try_clone().unwrap(), back.try_clone().unwrap());
            let (stop, client, blackout) = (stop.clone(), client.clone(), blackout.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                let mut passed = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, from)) = front.recv_from(&mut buf) else {
                        continue;
                    };
                    *client.lock().unwrap() = Some(from);
                    if passed >= BLACKOUT_AFTER {
                        blackout.lock().unwrap().get_or_insert_with(Instant::now);
                    }
                    if dark(&blackout) {
                        continue;
                    }
                    passed += n as u64;
                    let _ = back.send(&buf[..n]);
                }
            })
        };
        let down = {
            let (stop, client, blackout) = (stop.clone(), client.clone(), blackout.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                while !stop.load(Ordering::Relaxed) {
                    let Ok(n) = back.recv(&mut buf) else {
                        continue;
                    };
                    let to = *client.lock().unwrap();
                    if let (Some(to), false) = (to, dark(&blackout)) {
                        let _ = front.send_to(&buf[..n], to);
                    }
                }
            })
        };
        Relay {
            addr,
            stop,
            threads: vec![up, down],
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[test]
fn the_smallest_window_is_the_one_during_a_blackout_not_at_the_close() {
    let dir = tempfile::tempdir().unwrap();
    let doc = docroot(dir.path());
    // Each upload is 1.5 MB, past serve's default body limit (1 MiB).
    let server = H3Server::start(dir.path(), &doc, &["--max-body", "2000000"]);
    let relay = Relay::start(server.quic);
    let body = dir.path().join("body");
    std::fs::write(&body, vec![b'u'; 1_500_000]).unwrap();
    let db = scratch().join("bench_h3_cwnd.db");
    let url = format!("https://{}/cgi-bin/len", relay.addr);
    let args = [
        "bench",
        "--db",
        db.to_str().unwrap(),
        "-q",
        "--json",
        "--h3",
        "-n",
        "8",
        "-c",
        "1",
        "-p",
        body.to_str().unwrap(),
        "-T",
        "application/octet-stream",
        &url,
    ];
    let out = run_with_timeout(&args, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["complete"], 8, "{v}");
    let q = &v["quic"];
    let at = |p: &str| {
        q.pointer(p)
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("{p}: {q}"))
    };
    assert!(
        at("/packets_lost") > 0 && at("/congestion_events") > 0,
        "{q}"
    );
    // QUIC's minimum window is two datagrams of the path's MTU (at most 1452 bytes here).
    let min = at("/min_congestion_window");
    assert!(min > 0 && min <= 2 * 1452, "{q}");
    // Every upload arrived whole (the CGI program counts the bytes it was given).
    let lines = server.log_lines(8);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("POST /cgi-bin/len HTTP/3.0\" 200"))
            .count(),
        8
    );
}
