//! `bench --h3 --max-requests-per-connection N`: connections re-opened as the run goes, and with
//! `--tls-resume` resumed from the session tickets the earlier ones got, their first requests sent
//! as 0-RTT where the ticket allows it. Against `webstand serve` (tickets, no 0-RTT) the
//! handshakes line counts one full handshake and the rest resumed, and the access log holds every
//! request; against aioquic's server (tests/h3/server.py, which logs each handshake as it saw it)
//! the counts of resumed handshakes and of 0-RTT accepted equal its own, and when it forgets its
//! tickets every 0-RTT is counted rejected and its requests are sent again, none lost or doubled.

use crate::common;

use common::aioquic::AioquicServer;
use common::h3::{docroot, H3Server};
use common::*;
use serde_json::Value;
use std::time::Duration;

/// `bench -q --json ARGS…` with a history of the test's own; its JSON.
fn bench_json(args: &[&str]) -> Value {
    let db = scratch().join("bench_h3_resume.db");
    let mut all = vec!["bench", "--db", db.to_str().unwrap(), "-q", "--json"];
    all.extend(args);
    let out = run_with_timeout(&all, Duration::from_secs(60));
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    json_stdout(&out)
}

/// The run's handshakes: (total, full, resumed, 0-RTT accepted, 0-RTT rejected).
fn handshakes(v: &Value) -> [u64; 5] {
    [
        "total",
        "full",
        "resumed",
        "zero_rtt_accepted",
        "zero_rtt_rejected",
    ]
    .map(|k| {
        v.pointer(&format!("/quic/handshakes/{k}"))
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("{k} in {v}"))
    })
}

#[test]
fn against_serve_reopened_connections_resume_and_every_request_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let doc = docroot(dir.path());
    let server = H3Server::start(dir.path(), &doc, &[]);
    let url = format!("https://{}/2k.html", server.quic);
    let per = ["-n", "12", "-c", "1", "--max-requests-per-connection", "2"];
    // Without --tls-resume every connection is a full handshake, as ab's HTTPS is.
    let mut args = vec!["--h3"];
    args.extend(per);
    args.push(&url);
    let v = bench_json(&args);
    assert_eq!(v["complete"], 12, "{v}");
    assert_eq!(handshakes(&v), [6, 6, 0, 0, 0], "{v}");
    args.insert(1, "--tls-resume");
    let v = bench_json(&args);
    assert_eq!(v["complete"], 12, "{v}");
    // The first connection had no ticket; serve's tickets allow no early data.
    assert_eq!(handshakes(&v), [6, 1, 5, 0, 0], "{v}");
    let logged = server.log_lines(24);
    assert_eq!(
        logged
            .iter()
            .filter(|l| l.contains(" HTTP/3.0\" 200 2048"))
            .count(),
        24,
        "{logged:?}"
    );

    // The text report's line.
    let db = scratch().join("bench_h3_resume.db");
    let mut text = vec!["bench", "--db", db.to_str().unwrap()];
    text.extend(&args);
    let out = run_with_timeout(&text, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(
        report.contains("handshakes: 6 total, 1 full, 5 resumed, 0-RTT 0 accepted, 0 rejected"),
        "{report}"
    );
}

#[test]
fn against_aioquic_0rtt_is_accepted_as_its_log_says_and_when_rejected_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let server = AioquicServer::start(dir.path(), "ok", 0);
    let url = server.url("/300");
    let args = [
        "--h3",
        "--tls-resume",
        "-n",
        "12",
        "-c",
        "1",
        "-m",
        "2",
        "--max-requests-per-connection",
        "2",
        &url,
    ];
    let v = bench_json(&args);
    assert_eq!(v["complete"], 12, "{v}");
    assert_eq!(handshakes(&v), [6, 1, 5, 5, 0], "{v}");
    let seen = server.handshakes(6);
    let count = |kind: &str, early: &str| {
        seen.iter()
            .filter(|h| h == &&(kind.into(), early.into()))
            .count()
    };
    assert_eq!(
        (count("full", "no-0rtt"), count("resumed", "0rtt-accepted")),
        (1, 5),
        "{seen:?}"
    );
    let lines = server.lines(12);
    assert_eq!(lines.len(), 12, "{lines:?}");
    assert_eq!(v["h2"]["traffic"]["data_bytes"], 12 * 300, "{v}");

    // A server that forgets its tickets: each resumption becomes a full handshake, 0-RTT is
    // rejected, and the requests it carried go again after the handshake.
    let forgets = AioquicServer::start(dir.path(), "forget", 0);
    let url = forgets.url("/300");
    let mut again = args;
    *again.last_mut().unwrap() = &url;
    let v = bench_json(&again);
    assert_eq!(v["complete"], 12, "{v}");
    assert_eq!(v["failed"]["total"], 0, "{v}");
    assert_eq!(handshakes(&v), [6, 6, 0, 0, 5], "{v}");
    assert_eq!(v["h2"]["requests"]["started"], 12, "{v}");
    let seen = forgets.handshakes(6);
    assert!(
        seen.iter().all(|h| h.0 == "full" && h.1 == "no-0rtt"),
        "{seen:?}"
    );
    // Every request answered once: none lost with the rejected 0-RTT, none answered twice.
    assert_eq!(forgets.lines(12).len(), 12);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(forgets.lines(12).len(), 12);
}

#[test]
fn the_option_needs_h3_and_a_positive_count() {
    for (args, says) in [
        (
            vec!["--max-requests-per-connection", "2", "https://127.0.0.1:1/"],
            "--max-requests-per-connection is an HTTP/3 option: add --h3",
        ),
        (
            vec![
                "--h3",
                "--max-requests-per-connection",
                "0",
                "https://127.0.0.1:1/",
            ],
            "--max-requests-per-connection must be at least 1",
        ),
    ] {
        let mut all = vec!["bench"];
        all.extend(args);
        let out = run_with_timeout(&all, Duration::from_secs(10));
        assert_ne!(out.status.code(), Some(0));
        let err = stderr(&out);
        assert!(err.trim_end().ends_with(says), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}
