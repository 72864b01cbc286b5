//! `webstand bench --h3` over real UDP sockets on loopback: against `webstand serve
//! --listen-quic`, its counts and bytes equal the server's access log (one URL with `-m`, a URL
//! file, WebStone-style weighted list, and the open loop's `--rate`); against aioquic's server
//! (tests/h3/server.py, an independent HTTP/3 implementation), its log is the reference and shows
//! that `-m` streams reach the server at once; and every bad case is one line and a non-zero exit
//! within its bound, never a hang: nothing answering on UDP, a certificate that fails `--cacert`,
//! a server without h3 (ALPN refused), a server that resets every stream or closes the connection
//! with an error code, and `--h3` with an http:// URL.

use crate::common;

use common::aioquic::AioquicServer;
use common::h3::{certificate, docroot, H3Server};
use common::*;
use serde_json::Value;
use std::process::Output;
use std::time::{Duration, Instant};

fn bench(args: &[&str]) -> Output {
    let db = scratch().join("bench_h3.db");
    let mut all = vec!["bench", "--db", db.to_str().unwrap(), "-q"];
    all.extend(args);
    run_with_timeout(&all, Duration::from_secs(60))
}

fn bench_json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend(args);
    let out = bench(&all);
    let text = stdout(&out);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}\n{}", stderr(&out)))
}

fn num(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} in {v}"))
}

/// The access log's HTTP/3 lines: (path, status, bytes).
fn h3_lines(lines: &[String]) -> Vec<(String, u16, u64)> {
    lines
        .iter()
        .filter(|l| l.contains(" HTTP/3.0\" "))
        .map(|l| {
            let request = l.split('"').nth(1).unwrap();
            let path = request.split(' ').nth(1).unwrap().to_string();
            let mut tail = l.rsplit('"').next().unwrap().split_whitespace();
            let status = tail.next().unwrap().parse().unwrap();
            let bytes = tail.next().unwrap().parse().unwrap_or(0);
            (path, status, bytes)
        })
        .collect()
}

/// A run's complete requests, failures and body bytes, checked against the log's lines.
fn assert_matches_log(v: &Value, server: &H3Server, n: u64) -> Vec<(String, u16, u64)> {
    assert_eq!(num(v, "/complete"), n, "{v}");
    assert_eq!(num(v, "/failed/total"), 0, "{v}");
    let lines = h3_lines(&server.log_lines(n as usize));
    assert_eq!(lines.len() as u64, n, "{lines:?}");
    assert!(lines.iter().all(|(_, status, _)| *status == 200));
    let logged: u64 = lines.iter().map(|(_, _, b)| b).sum();
    assert_eq!(num(v, "/h2/traffic/data_bytes"), logged, "{v}");
    lines
}

#[test]
fn counts_and_bytes_equal_serves_access_log() {
    let dir = tempfile::tempdir().unwrap();
    let doc = docroot(dir.path());
    let server = H3Server::start(dir.path(), &doc, &[]);
    let url = format!("https://127.0.0.1:{}/2k.html", server.quic.port());
    let cacert = server.cert.to_str().unwrap();
    let v = bench_json(&[
        "--h3", "-n", "300", "-c", "2", "-m", "4", "--cacert", cacert, &url,
    ]);
    assert_matches_log(&v, &server, 300);
    assert_eq!(num(&v, "/h2/max_streams_per_connection"), 4);
    assert_eq!(num(&v, "/h2/requests/succeeded"), 300);
    let quic = &v["quic"];
    assert_eq!(num(quic, "/handshakes/total"), 2, "{quic}");
    assert!(num(quic, "/datagrams/sent") > 0 && num(quic, "/datagrams/received") > 0);
    // The datagrams carried the bodies, and more than one answer per datagram on average is
    // impossible for 2 KiB answers (above one datagram's payload).
    assert!(num(quic, "/wire_bytes/received") >= 300 * 2048, "{quic}");
    assert!(num(quic, "/datagrams/received") >= 300, "{quic}");
    assert_eq!(quic["connection_errors"], serde_json::json!({}), "{quic}");
}

#[test]
fn url_files_weighted_lists_and_the_open_loop_count_as_the_server_does() {
    let dir = tempfile::tempdir().unwrap();
    let doc = docroot(dir.path());
    let server = H3Server::start(dir.path(), &doc, &[]);
    let origin = format!("https://127.0.0.1:{}", server.quic.port());
    let urls = dir.path().join("urls.txt");
    std::fs::write(&urls, "/2k.html\n/cgi-bin/env\n").unwrap();
    let v = bench_json(&[
        "--h3",
        "-n",
        "40",
        "-c",
        "2",
        "-m",
        "4",
        "--url-file",
        urls.to_str().unwrap(),
        &format!("{origin}/"),
    ]);
    let lines = assert_matches_log(&v, &server, 40);
    let paths: std::collections::BTreeSet<&str> =
        lines.iter().map(|(p, _, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        ["/2k.html", "/cgi-bin/env"].into(),
        "a URL file's paths at random"
    );

    let list = dir.path().join("list.txt");
    std::fs::write(&list, "/2k.html 3\n/cgi-bin/env 1\n").unwrap();
    let url = format!("{origin}/");
    let before = server.log_lines(40).len();
    let v = bench_json(&[
        "--h3",
        "-n",
        "40",
        "-c",
        "2",
        "-m",
        "2",
        "--filelist",
        list.to_str().unwrap(),
        &url,
    ]);
    let all = server.log_lines(before + 40);
    let lines = h3_lines(&all[before..]);
    assert_eq!((num(&v, "/complete"), lines.len()), (40, 40));
    let logged: u64 = lines.iter().map(|(_, _, b)| b).sum();
    assert_eq!(num(&v, "/h2/traffic/data_bytes"), logged);
    assert!(lines.iter().any(|(p, _, _)| p == "/cgi-bin/env"));

    // The open loop: 200 requests a second for a second on 4 connections, latency from each
    // send's intended time; what completed is what the server logged.
    let before = all.len();
    let v = bench_json(&[
        "--h3",
        "--rate",
        "200",
        "-d",
        "1s",
        "-c",
        "4",
        "-m",
        "4",
        &format!("{origin}/2k.html"),
    ]);
    let done = num(&v, "/complete");
    assert!((150..=210).contains(&done), "{done} at 200/s for 1 s");
    assert_eq!(num(&v, "/failed/total"), 0, "{v}");
    // The server logs an answer when it sends it: those still on the way when the second ended
    // (4 connections of 4 streams at most) are logged and not counted.
    let lines = h3_lines(&server.log_lines(before + done as usize)[before..]);
    let logged = lines.len() as u64;
    assert!(
        (done..=done + 16).contains(&logged),
        "{logged} logged, {done} done"
    );
}

#[test]
fn against_aioquics_server_its_log_is_the_reference_and_m_streams_are_concurrent() {
    let dir = tempfile::tempdir().unwrap();
    // Each answer waits 30 ms, so the requests of a batch are all at the server at once.
    let server = AioquicServer::start(dir.path(), "ok", 30);
    let v = bench_json(&[
        "--h3",
        "-n",
        "64",
        "-c",
        "2",
        "-m",
        "8",
        &server.url("/700"),
    ]);
    assert_eq!(num(&v, "/complete"), 64, "{v}");
    assert_eq!(v["server_software"], "aioquic-test", "{v}");
    let lines = server.lines(64);
    assert_eq!(lines.len(), 64);
    let logged: u64 = lines.iter().map(|(_, b, _)| b).sum();
    assert_eq!(num(&v, "/h2/traffic/data_bytes"), logged);
    assert_eq!(logged, 64 * 700);
    let most = lines.iter().map(|(_, _, open)| *open).max().unwrap();
    assert_eq!(most, 8, "a connection's 8 streams at the server at once");

    let server = AioquicServer::start(dir.path(), "ok", 5);
    let v = bench_json(&["--h3", "-n", "20", "-c", "1", "-m", "1", &server.url("/10")]);
    assert_eq!(num(&v, "/complete"), 20, "{v}");
    let most = server.lines(20).iter().map(|(_, _, o)| *o).max().unwrap();
    assert_eq!(most, 1, "-m 1: one request at a time");

    // Answers far above the windows QUIC starts with: flow control and acknowledgements both ways.
    let v = bench_json(&[
        "--h3",
        "-n",
        "4",
        "-c",
        "1",
        "-m",
        "2",
        &server.url("/1000000"),
    ]);
    assert_eq!(num(&v, "/complete"), 4, "{v}");
    assert_eq!(num(&v, "/h2/traffic/data_bytes"), 4_000_000, "{v}");
}

/// A bad case: a non-zero exit within `limit`, the last line of stderr naming it.
fn fails_with(args: &[&str], limit: Duration, says: &str) {
    let started = Instant::now();
    let out = bench(args);
    let took = started.elapsed();
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{args:?}: {err}");
    assert!(took < limit, "{args:?} took {took:?}");
    let line = err.lines().last().unwrap_or_default();
    assert!(line.contains(says), "{args:?}: expected {says:?} in {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_cases_are_one_line_and_a_non_zero_exit_never_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let secs = Duration::from_secs;

    // Nothing answers on the UDP port: a socket bound and silent.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/", silent.local_addr().unwrap());
    fails_with(
        &["--h3", "-n", "5", "-s", "2", &url],
        secs(20),
        "no QUIC answer over UDP within 2 s",
    );
    // Nothing listens there at all: the ICMP error ends it at once.
    let port = silent.local_addr().unwrap().port();
    drop(silent);
    fails_with(
        &["--h3", "-n", "5", "-s", "2", &url],
        secs(20),
        &format!("nothing listens on UDP port {port} (ICMP port unreachable), so no HTTP/3 there"),
    );

    // A certificate that the CA given does not vouch for.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    certificate(&other);
    let server = AioquicServer::start(dir.path(), "ok", 0);
    let other_ca = other.join("cert.pem");
    fails_with(
        &[
            "--h3",
            "-n",
            "5",
            "--cacert",
            other_ca.to_str().unwrap(),
            &server.url("/10"),
        ],
        secs(30),
        "TLS: invalid peer certificate",
    );

    // A server without HTTP/3: it refuses ALPN h3.
    let no_h3 = AioquicServer::start(dir.path(), "alpn", 0);
    fails_with(
        &["--h3", "-n", "5", &no_h3.url("/10")],
        secs(30),
        "the server does not speak HTTP/3 (it refused ALPN h3 with no_application_protocol)",
    );

    // A server that resets every request stream, and one that closes with an error code.
    let resets = AioquicServer::start(dir.path(), "reset", 0);
    fails_with(
        &["--h3", "-n", "10", "-c", "2", "-m", "2", &resets.url("/10")],
        secs(30),
        "H3_REQUEST_REJECTED",
    );
    let closes = AioquicServer::start(dir.path(), "close", 0);
    let out = bench(&[
        "--json",
        "--h3",
        "-n",
        "10",
        "-c",
        "2",
        "-m",
        "2",
        &closes.url("/10"),
    ]);
    assert_ne!(out.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(num(&v, "/failed/total"), 10, "{v}");
    assert!(
        num(&v, "/quic/connection_errors/H3_GENERAL_PROTOCOL_ERROR") >= 1,
        "{v}"
    );
    fails_with(
        &["--h3", "-n", "10", &closes.url("/10")],
        secs(30),
        "the server closed the connection with H3_GENERAL_PROTOCOL_ERROR (test close)",
    );

    // DATA after the response's trailers: a frame out of order, which RFC 9114 §4.1 makes a
    // connection error (H3_FRAME_UNEXPECTED), never body bytes counted. The server answered every
    // request (its log); each one failed here, its connection closed with that code.
    let late = AioquicServer::start(dir.path(), "trailers-data", 0);
    let out = bench(&["--json", "--h3", "-n", "4", "-c", "1", &late.url("/10")]);
    assert_ne!(out.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(num(&v, "/complete"), 0, "{v}");
    assert_eq!(num(&v, "/failed/total"), 4, "{v}");
    assert_eq!(
        num(&v, "/quic/connection_errors/H3_FRAME_UNEXPECTED"),
        4,
        "{v}"
    );
    assert_eq!(late.lines(4).len(), 4);
    let err = stderr(&out);
    assert!(err.contains("DATA after the response's trailers"), "{err}");

    // http:// has no QUIC.
    fails_with(
        &["--h3", "-n", "1", "http://127.0.0.1:1/"],
        secs(10),
        "--h3 runs HTTP/3 over QUIC, which is always TLS: give an https:// URL",
    );
}

#[test]
fn against_the_labs_caddy_over_tls_which_speaks_http3_on_its_port() {
    // Caddy adds HTTP/3 on the TLS port's UDP twin unless its config names the protocols (the
    // lab's does only for --h2); its certificate is the lab's CA's, verified here.
    let mut caddy = common::lab_up::LabUp::start(&["caddy", "--tls"]);
    let url = caddy.url("/2k.html");
    let ca = caddy.get("ca").to_string();
    let v = bench_json(&[
        "--h3", "-n", "200", "-c", "4", "-m", "4", "-s", "10", "--cacert", &ca, &url,
    ]);
    assert_eq!(num(&v, "/complete"), 200, "{v}");
    assert_eq!(num(&v, "/failed/total"), 0, "{v}");
    assert_eq!(v["server_software"], "Caddy", "{v}");
    let length = num(&v, "/document_length");
    assert!(length > 0, "{v}");
    assert_eq!(num(&v, "/h2/traffic/data_bytes"), 200 * length, "{v}");
    assert_eq!(num(&v, "/quic/handshakes/total"), 4, "{v}");
    assert!(caddy.stop().success());
}
