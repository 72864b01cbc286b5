//! `bench --h3` and `sweep --h3` against servers that do not speak HTTP/3, over real UDP sockets on
//! loopback: one that answers every Initial with a version negotiation offering no QUIC v1 (a
//! socket of the test's own, speaking RFC 8999's invariant packet), and aioquic's server offering
//! another ALPN than h3. `bench`: exit 4 and one line naming what the server did. `sweep`: its
//! first level ends "without HTTP/3", its Diagnosis says the server does not speak HTTP/3, and it
//! stops there. (Nothing on the UDP port, and silence, are bench_h3.rs's bad cases.)

use crate::common;

use common::aioquic::AioquicServer;
use common::*;
use std::net::UdpSocket;
use std::time::Duration;

/// A UDP socket on loopback answering each long-header packet with a version negotiation that
/// lists QUIC v2 alone (0x6b3343cf), as a server without QUIC v1 would; it stops when dropped.
struct Negotiator {
    addr: std::net::SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Negotiator {
    fn start() -> Negotiator {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let addr = sock.local_addr().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                if let Some(answer) = version_negotiation(&buf[..n]) {
                    let _ = sock.send_to(&answer, from);
                }
            }
        });
        Negotiator {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Negotiator {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// RFC 8999 §6: the answer to a long-header packet — version 0, the client's connection IDs
/// swapped, then the versions the server speaks. None for anything else.
fn version_negotiation(packet: &[u8]) -> Option<Vec<u8>> {
    if packet.len() < 7 || packet[0] & 0x80 == 0 {
        return None;
    }
    let dcid_len = usize::from(packet[5]);
    let dcid = packet.get(6..6 + dcid_len)?;
    let scid_len = usize::from(*packet.get(6 + dcid_len)?);
    let scid = packet.get(7 + dcid_len..7 + dcid_len + scid_len)?;
    let mut answer = vec![0x80 | 0x2a, 0, 0, 0, 0];
    answer.push(scid.len() as u8);
    answer.extend_from_slice(scid);
    answer.push(dcid.len() as u8);
    answer.extend_from_slice(dcid);
    answer.extend_from_slice(&0x6b33_43cfu32.to_be_bytes());
    Some(answer)
}

/// `bench --h3 URL`: exit 4 within 20 s, one line on stderr, saying `says`.
fn bench_refused(url: &str, says: &str) {
    let args = ["bench", "--h3", "-n", "20", "-c", "2", "-s", "2", url];
    let started = std::time::Instant::now();
    let out = run_with_timeout(&args, Duration::from_secs(30));
    assert!(started.elapsed() < Duration::from_secs(20), "{url}");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{url}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{url}: {err}");
    assert!(
        lines[0].starts_with("webstand: failed (exit status 4): ") && lines[0].contains(says),
        "{url}: expected {says:?} in {err}"
    );
    assert!(!stdout(&out).contains("Requests per second"), "no figures");
}

/// `sweep --h3 -c 2,4`: the first level ends "without HTTP/3", diagnosed so, and the sweep stops.
fn sweep_refused(url: &str, says: &str) {
    let db = scratch().join("bench_h3_refused.db");
    let args = ["--db", db.to_str().unwrap(), "sweep", "--h3", "-c", "2,4"];
    let rest = ["-n", "20", "--warmup", "0", "--json", "-q", url];
    let out = run_with_timeout(&[&args[..], &rest[..]].concat(), Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(4), "{url}: {}", stderr(&out));
    let doc = json_stdout(&out);
    let levels = doc["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 1, "{url}: the sweep stops at its first level");
    let r = &levels[0]["result"];
    assert_eq!(r["ended"], "without HTTP/3", "{url}: {r}");
    assert_eq!(r["complete"], 0);
    assert!(r["first_error"].as_str().unwrap().contains(says), "{r}");
    let d = &doc["diagnosis"][0];
    assert_eq!(d["verdict"], "no HTTP/3", "{url}: {d}");
    assert_eq!(d["summary"], "the server does not speak HTTP/3");
    let f = diagnosis_finding(d, "no-http3").unwrap();
    assert!(
        f["advice"].as_str().unwrap().contains("--listen-quic"),
        "{f}"
    );
}

#[test]
fn a_version_negotiation_and_an_alpn_refusal_end_the_run_as_without_http3() {
    let vn = Negotiator::start();
    let url = format!("https://{}/", vn.addr);
    let says = format!(
        "h3 to {}: the server does not speak HTTP/3 (it answered with a version negotiation: no QUIC v1)",
        vn.addr
    );
    bench_refused(&url, &says);
    sweep_refused(&url, "version negotiation");

    let dir = tempfile::tempdir().unwrap();
    let no_h3 = AioquicServer::start(dir.path(), "alpn", 0);
    let says = "the server does not speak HTTP/3 (it refused ALPN h3 with no_application_protocol)";
    bench_refused(&no_h3.url("/10"), says);
    sweep_refused(&no_h3.url("/10"), says);
}
