//! `webstand serve --listen-quic` keeps serving after sustained HTTP/3 load that quinn paces: one
//! loop (`--threads 1`), oha (its `http3` build) fetching the 3 MB file over 2 connections × 2
//! streams, several bounded rounds; every request of every round is a 200, and a fresh aioquic
//! client is still answered afterwards. The access log counts exactly those requests. (A loop
//! that handed quinn an older clock than it had already seen spun on a pacing timer always in
//! the past and answered no one again.)

use crate::common;

use common::h3::H3Server;
use serde_json::json;
use std::time::Duration;

const ROUNDS: u64 = 6;
const REQUESTS: u64 = 60;

#[test]
fn paced_large_answers_leave_the_loop_serving_everyone() {
    let dir = tempfile::tempdir().unwrap();
    let doc = common::h3::docroot(dir.path());
    let server = H3Server::start(dir.path(), &doc, &["--threads", "1"]);
    for round in 0..ROUNDS {
        let load = ["-c", "2", "-p", "2", "-t", "10s"];
        let report = server.oha("/big.bin", REQUESTS, &load, Duration::from_secs(45));
        assert_eq!(
            report["statusCodeDistribution"]["200"], REQUESTS,
            "round {round}: {report}"
        );
    }
    let got = server.fetch(&json!([{"method": "GET", "path": "/2k.html"}]));
    assert_eq!(got["responses"][0]["status"], 200, "{got}");
    assert_eq!(got["responses"][0]["length"], 2048, "{got}");
    let total = (ROUNDS * REQUESTS + 1) as usize;
    let lines = server.log_lines(total);
    assert_eq!(lines.len(), total);
    let big = format!("\"GET /big.bin HTTP/3.0\" 200 {}", common::h3::big().len());
    let served_big = lines.iter().filter(|l| l.ends_with(&big)).count();
    assert_eq!(served_big as u64, ROUNDS * REQUESTS, "{lines:?}");
    assert!(lines[total - 1].ends_with("\"GET /2k.html HTTP/3.0\" 200 2048"));
}
