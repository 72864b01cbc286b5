//! `webstand serve --listen-quic` under a second, independent HTTP/3 client: oha built with its
//! `http3` feature (quinn and the h3 crate; scripts/install-deps.sh builds it). A bounded run of
//! 4000 requests over 8 QUIC connections × 4 streams, checking the server's certificate: every
//! answer is a 200 as oha counts them, and the access log has one line per request saying so,
//! no more. The run ends as soon as the requests do: oha's connections say GOAWAY when done and
//! wait for the server's close, which the server sends once their requests are answered (else
//! each would wait out oha's 30 s idle timeout). A timed run (`-z`) ends as soon as its time is
//! up, round after round: its connections say GOAWAY with requests still in flight, which the
//! server answers before it closes (it once missed the close when the last answer went out after
//! the GOAWAY came, in most runs of 4 connections).

use crate::common;

use common::h3::H3Server;
use std::time::{Duration, Instant};

const REQUESTS: u64 = 4000;

#[test]
fn oha_over_http3_gets_every_answer_the_access_log_counts() {
    let dir = tempfile::tempdir().unwrap();
    let doc = common::h3::docroot(dir.path());
    let server = H3Server::start(dir.path(), &doc, &["--threads", "1"]);
    let started = Instant::now();
    let load = ["-c", "8", "-p", "4"];
    let report = server.oha("/2k.html", REQUESTS, &load, Duration::from_secs(120));
    let took = started.elapsed();
    assert_eq!(
        report["statusCodeDistribution"]["200"], REQUESTS,
        "{report}"
    );
    assert_eq!(
        report["statusCodeDistribution"].as_object().unwrap().len(),
        1
    );
    assert!(
        report["errorDistribution"].as_object().unwrap().is_empty(),
        "{report}"
    );
    assert!(
        took < Duration::from_secs(20),
        "oha took {took:?}: a connection was not closed"
    );
    let lines = server.log_lines(REQUESTS as usize);
    assert_eq!(lines.len() as u64, REQUESTS);
    let expected = "\"GET /2k.html HTTP/3.0\" 200 2048";
    assert!(
        lines.iter().all(|l| l.ends_with(expected)),
        "{:?}",
        lines.iter().find(|l| !l.ends_with(expected))
    );
}

#[test]
fn a_timed_oha_run_ends_when_its_time_is_up() {
    let dir = tempfile::tempdir().unwrap();
    let doc = common::h3::docroot(dir.path());
    let server = H3Server::start(dir.path(), &doc, &["--threads", "1"]);
    let load = ["-z", "2s", "-c", "4", "-p", "2"];
    for round in 0..4 {
        let started = Instant::now();
        let report = server.oha_run("/2k.html", &load, Duration::from_secs(60));
        let took = started.elapsed();
        let answered = report["statusCodeDistribution"]["200"].as_u64();
        assert!(answered.is_some_and(|n| n > 0), "round {round}: {report}");
        assert_eq!(
            report["statusCodeDistribution"].as_object().unwrap().len(),
            1,
            "round {round}: {report}"
        );
        // The requests cut off by the time limit are oha's own "aborted due to deadline".
        let errors = report["errorDistribution"].as_object().unwrap();
        assert!(
            errors.keys().all(|e| e == "aborted due to deadline"),
            "round {round}: {report}"
        );
        assert!(
            took < Duration::from_secs(8),
            "round {round}: oha took {took:?} for a 2 s run: a connection was not closed"
        );
    }
}
