//! `webstand serve --listen-quic` under a second, independent HTTP/3 client: oha built with its
//! `http3` feature (quinn and the h3 crate; scripts/install-deps.sh builds it). A bounded run of
//! 4000 requests over 8 QUIC connections × 4 streams, checking the server's certificate: every
//! answer is a 200 as oha counts them, and the access log has one line per request saying so,
//! no more. The run ends as soon as the requests do: oha's connections say GOAWAY when done and
//! wait for the server's close, which the server sends once their requests are answered (else
//! each would wait out oha's 30 s idle timeout).

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
