//! QUIC's smallest congestion window, the figure `bench --h3` reports, after a loss that must drive
//! it to QUIC's floor. `bench --h3` uploads to `webstand serve` through a UDP relay of the test's
//! own on loopback. The relay carries datagrams of at most 1200 bytes both ways (a path whose MTU
//! is 1228: the client's datagrams stay at QUIC's base size, its probes for more are lost), and it
//! drops everything the client sends from the uploads' first full-size 1-RTT datagram (their first
//! flight) through the probes of the client's next four probe timeouts (PTO, each twice as long as
//! the one before). Ack-eliciting packets lost over more than three PTOs with nothing acknowledged
//! between them are persistent congestion (RFC 9002 §7.6): the window falls to its minimum, two
//! datagrams, 2400 bytes exactly, which the report must show; the uploads after it grow the window
//! again far past that before the connection closes, so the window at the close would be wrong.
//! The relay's own count of the client's 1-RTT datagrams it dropped is a view of the loss apart from
//! quinn's: the report's lost packets are no fewer. (The loss is the relay's rather than netem's
//! because it has to follow the client's flights, not chance.)

use crate::common;

use common::h3::{docroot, H3Server};
use common::*;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The largest UDP payload the relay carries: QUIC's base datagram size.
const PATH_MAX: usize = 1200;
/// Bursts of the client's full-size datagrams dropped: the first flight and the probes of four
/// PTOs. Lost over 1 + 2 + 4 = 7 PTOs at least, more than persistent congestion's three, even if
/// one burst were counted twice.
const DARK_BURSTS: u32 = 5;
/// A full-size datagram this long after the one before starts a new burst: less than a PTO, which
/// is at least the server's 25 ms acknowledgement delay.
const BURST_GAP: Duration = Duration::from_millis(15);

/// What the relay did with the client's datagrams.
#[derive(Default)]
struct Dark {
    /// Bursts of full-size client datagrams dropped so far (0: the first flight has not come).
    bursts: u32,
    /// When the last full-size client datagram was dropped.
    last: Option<Instant>,
    /// The dark is over: everything up to PATH_MAX passes.
    over: bool,
    /// Client datagrams dropped in the dark whose first packet is a 1-RTT one.
    dropped_1rtt: u64,
}

impl Dark {
    /// Whether the client's `datagram`, read at `now`, is to be dropped.
    fn drops(&mut self, datagram: &[u8], now: Instant) -> bool {
        if self.over {
            return false;
        }
        let short_header = datagram[0] & 0x80 == 0;
        let full = datagram.len() == PATH_MAX;
        if full && short_header && self.bursts == 0 {
            self.bursts = 1;
        } else if full && self.last.is_some_and(|t| now - t >= BURST_GAP) {
            self.bursts += 1;
        }
        if self.bursts > DARK_BURSTS {
            self.over = true;
            return false;
        }
        if self.bursts == 0 {
            return false;
        }
        if full {
            self.last = Some(now);
        }
        self.dropped_1rtt += u64::from(short_header);
        true
    }
}

/// A UDP socket on loopback whose receive buffer holds the client's largest bursts (a relay that
/// lost datagrams of its own would blur its count).
fn udp_socket() -> UdpSocket {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).unwrap();
    s.set_recv_buffer_size(4 << 20).unwrap();
    s.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    s.into()
}

/// A UDP relay on loopback for one client: what the client sends goes to the server from a socket
/// of the relay's, what comes back goes to the client.
struct Relay {
    addr: SocketAddr,
    dark: Arc<Mutex<Dark>>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Relay {
    fn start(server: SocketAddr) -> Relay {
        let front = udp_socket();
        let back = udp_socket();
        back.connect(server).unwrap();
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        }
        let addr = front.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
        let dark: Arc<Mutex<Dark>> = Arc::default();
        let up = {
            let (front, back) = (front.try_clone().unwrap(), back.try_clone().unwrap());
            let (stop, client, dark) = (stop.clone(), client.clone(), dark.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, from)) = front.recv_from(&mut buf) else {
                        continue;
                    };
                    *client.lock().unwrap() = Some(from);
                    if n <= PATH_MAX && !dark.lock().unwrap().drops(&buf[..n], Instant::now()) {
                        let _ = back.send(&buf[..n]);
                    }
                }
            })
        };
        let down = {
            let (stop, client) = (stop.clone(), client.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                while !stop.load(Ordering::Relaxed) {
                    let Ok(n) = back.recv(&mut buf) else {
                        continue;
                    };
                    if let (Some(to), true) = (*client.lock().unwrap(), n <= PATH_MAX) {
                        let _ = front.send_to(&buf[..n], to);
                    }
                }
            })
        };
        Relay {
            addr,
            dark,
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

/// The numbers of the report's "packets:" line: (lost, congestion events, smallest window).
fn packets_line(report: &str) -> (u64, u64, u64) {
    let line = field(report, "packets:");
    let number_before = |what: &str| -> u64 {
        let head = &line[..line
            .find(what)
            .unwrap_or_else(|| panic!("no {what:?} in {line:?}"))];
        let word = head.split_whitespace().last().unwrap();
        word.parse()
            .unwrap_or_else(|_| panic!("{word:?} before {what:?} in {line:?}"))
    };
    let window = line
        .strip_suffix(" bytes")
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no smallest window in {line:?}"));
    (
        number_before(" lost"),
        number_before(" congestion events"),
        window,
    )
}

#[test]
fn a_lost_first_flight_shows_as_the_floor_of_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let doc = docroot(dir.path());
    // /cgi-bin/len answers with the length of the body it was given.
    let server = H3Server::start(dir.path(), &doc, &["--cgi", "/cgi-bin/*"]);
    let relay = Relay::start(server.quic);
    let body = dir.path().join("body");
    std::fs::write(&body, vec![b'u'; 400_000]).unwrap();
    let url = format!("https://{}/cgi-bin/len", relay.addr);
    let args = [
        "bench",
        "--h3",
        "-n",
        "4",
        "-c",
        "1",
        "-p",
        body.to_str().unwrap(),
        "-T",
        "application/octet-stream",
        &url,
    ];
    let out = run_with_timeout(&args, Duration::from_secs(60));
    let report = stdout(&out);
    assert!(out.status.success(), "{report}\n{}", stderr(&out));
    let dark = relay.dark.lock().unwrap();
    assert!(
        dark.over,
        "the relay saw {} bursts, not the first flight and four probes",
        dark.bursts
    );
    assert_eq!(field(&report, "Complete requests:"), "4", "{report}");
    assert_eq!(field(&report, "Failed requests:"), "0", "{report}");
    let (lost, events, window) = packets_line(&report);
    assert!(
        lost >= dark.dropped_1rtt && dark.dropped_1rtt > 0 && events > 0,
        "the relay dropped {} 1-RTT datagrams of the client's: {report}",
        dark.dropped_1rtt
    );
    // Persistent congestion's window, two datagrams of the relay's path: not the initial window
    // (12,000 bytes: the figure never looked at), not the one at the close (grown again).
    assert_eq!(window, 2 * PATH_MAX as u64, "{report}");
    // Every upload reached the CGI program, which answered with its count (400000 and a newline).
    let lines = server.log_lines(4);
    let whole = "\"POST /cgi-bin/len HTTP/3.0\" 200 7";
    assert_eq!(
        lines.iter().filter(|l| l.ends_with(whole)).count(),
        4,
        "{lines:?}"
    );
}
