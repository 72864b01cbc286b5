//! `webstand serve` over HTTP/2 (prior-knowledge h2c) against hostile peers: each defence of
//! crates/server/src/h2/defence.rs played by a raw-frame client (tests/h2/hostile.py, Debian's
//! python3 with python3-h2's hpack) and the server's answer asserted — GOAWAY ENHANCE_YOUR_CALM
//! for rapid reset and floods, the connection closed on a CONTINUATION flood, a stream error for
//! an HPACK bomb and for each malformed request while the connection serves the next one,
//! REFUSED_STREAM past MAX_CONCURRENT_STREAMS, a peer that never opens its window dropped after the
//! I/O timeout, an idle connection closed with GOAWAY, a body past `--max-body` answered 413 then
//! reset with NO_ERROR, a body that disagrees with its content-length a stream error — and the
//! server still answering afterwards.

use crate::common;

use common::{require, serve};
use std::process::Command;

/// Runs one case of hostile.py against the server at `port`; returns its event lines.
fn hostile(port: u16, case: &[&str]) -> String {
    common::h2_client::run(port, case)
}

struct Fixture {
    _dir: tempfile::TempDir,
    server: common::Running,
    log: std::path::PathBuf,
}

fn start() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("doc");
    std::fs::create_dir(&doc).unwrap();
    std::fs::write(doc.join("2k.html"), "a".repeat(2048)).unwrap();
    std::fs::write(doc.join("big.bin"), vec![7u8; 4 << 20]).unwrap();
    let log = dir.path().join("access.log");
    let args = [
        "--h2c",
        "--threads",
        "1",
        "--io-timeout",
        "2s",
        "--idle-timeout",
        "2s",
        "--max-body",
        "32768",
        "--access-log",
    ];
    let mut all: Vec<&str> = args.to_vec();
    let log_s = log.display().to_string();
    all.push(&log_s);
    let server = serve(&doc, &all);
    Fixture {
        _dir: dir,
        server,
        log,
    }
}

impl Fixture {
    fn port(&self) -> u16 {
        self.server.addr.port()
    }

    /// The server still answers a plain HTTP/2 request on a fresh connection.
    fn still_serves(&self) {
        let out = Command::new(require("curl"))
            .args([
                "-s",
                "--max-time",
                "10",
                "--http2-prior-knowledge",
                "-o",
                "/dev/null",
            ])
            .args(["-w", "%{http_version} %{http_code}"])
            .arg(format!("http://127.0.0.1:{}/2k.html", self.port()))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "2 200");
    }

    fn rss_kib(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.server.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

#[test]
fn rapid_reset_gets_enhance_your_calm_and_reset_streams_are_not_worked_on() {
    let f = start();
    let events = hostile(f.port(), &["rapid_reset"]);
    assert!(events.contains("GOAWAY ENHANCE_YOUR_CALM"), "{events}");
    f.still_serves();
    // 2000 streams were opened and reset; the answers given are a small part of them (only a
    // stream whose RST_STREAM came in a later read than its HEADERS can have been answered).
    let answered = std::fs::read_to_string(&f.log)
        .unwrap_or_default()
        .lines()
        .count();
    assert!(answered < 1000, "{answered} reset streams answered");
}

#[test]
fn continuation_floods_close_the_connection_with_bounded_memory() {
    let f = start();
    let before = f.rss_kib();
    for case in ["continuation_flood", "continuation_empty"] {
        let events = hostile(f.port(), &[case]);
        assert!(
            events.contains("GOAWAY ENHANCE_YOUR_CALM"),
            "{case}: {events}"
        );
        assert!(events.trim_end().ends_with("CLOSED"), "{case}: {events}");
    }
    // 300 CONTINUATIONs of 16 KB were sent (4.8 MB): the server kept at most the 32 KiB block.
    assert!(
        f.rss_kib() < before + 2048,
        "{} KiB -> {} KiB",
        before,
        f.rss_kib()
    );
    f.still_serves();
}

#[test]
fn an_hpack_bomb_is_a_stream_error_and_the_connection_serves_on() {
    let f = start();
    let events = hostile(f.port(), &["hpack_bomb"]);
    assert!(events.contains("RST 1 PROTOCOL_ERROR"), "{events}");
    assert!(events.contains("STATUS 3 200"), "{events}");
}

#[test]
fn settings_ping_window_update_and_empty_data_floods_get_enhance_your_calm() {
    let f = start();
    for case in [
        "settings_flood",
        "ping_flood",
        "window_update_flood",
        "empty_data_flood",
    ] {
        let events = hostile(f.port(), &[case]);
        assert!(
            events.contains("GOAWAY ENHANCE_YOUR_CALM"),
            "{case}: {events}"
        );
    }
    f.still_serves();
}

#[test]
fn streams_past_the_limit_are_refused() {
    let f = start();
    let events = hostile(f.port(), &["too_many_streams"]);
    // 128 streams are open; the 129th (stream 257) is refused.
    assert!(events.contains("RST 257 REFUSED_STREAM"), "{events}");
}

#[test]
fn a_peer_that_never_opens_its_window_is_dropped_after_the_io_timeout() {
    let f = start();
    let t = std::time::Instant::now();
    let events = hostile(f.port(), &["slow_read"]);
    assert!(events.contains("STATUS 1 200"), "{events}");
    assert!(events.contains("GOAWAY"), "{events}");
    assert!(events.trim_end().ends_with("CLOSED"), "{events}");
    let waited = t.elapsed().as_secs_f64();
    assert!((1.5..10.0).contains(&waited), "closed after {waited} s");
}

#[test]
fn an_idle_connection_is_closed_with_goaway() {
    let f = start();
    let events = hostile(f.port(), &["idle"]);
    assert!(events.contains("GOAWAY NO_ERROR"), "{events}");
    assert!(events.trim_end().ends_with("CLOSED"), "{events}");
}

#[test]
fn malformed_requests_are_stream_errors_and_the_connection_lives_on() {
    let f = start();
    for kind in [
        "uppercase",
        "connection",
        "te",
        "no_path",
        "no_method",
        "dup_path",
        "pseudo_after",
        "empty_path",
    ] {
        let events = hostile(f.port(), &["malformed", "x", kind]);
        assert!(events.contains("RST 1 PROTOCOL_ERROR"), "{kind}: {events}");
        assert!(events.contains("STATUS 3 200"), "{kind}: {events}");
    }
}

#[test]
fn a_body_past_max_body_is_413_then_reset_and_the_connection_lives_on() {
    let mut f = start();
    // Declared past the limit (413 before any body), and without a length, growing past it.
    for case in ["body_declared_over", "body_grows_over"] {
        let events = hostile(f.port(), &[case, "32768"]);
        let at = |needle: &str| {
            events
                .find(needle)
                .unwrap_or_else(|| panic!("{case}: no {needle:?} in {events}"))
        };
        // The whole 413 answer first, then RST_STREAM NO_ERROR so the client stops sending.
        assert!(at("STATUS 1 413") < at("END 1"), "{case}: {events}");
        assert!(at("END 1") < at("RST 1 NO_ERROR"), "{case}: {events}");
        assert!(events.contains("STATUS 3 200"), "{case}: {events}");
        assert!(!events.contains("GOAWAY"), "{case}: {events}");
    }
    f.still_serves();
    // SAFETY: kill(2) on the server child this test started; no memory is involved.
    unsafe { libc::kill(f.server.child.id() as i32, libc::SIGTERM) };
    let _ = f.server.child.wait();
    let log = std::fs::read_to_string(&f.log).unwrap();
    assert_eq!(
        log.matches("\"POST /2k.html HTTP/2.0\" 413").count(),
        2,
        "{log}"
    );
}

#[test]
fn a_body_that_disagrees_with_its_content_length_is_a_stream_error() {
    let f = start();
    for case in ["body_shorter", "body_longer"] {
        let events = hostile(f.port(), &[case, "32768"]);
        assert!(events.contains("RST 1 PROTOCOL_ERROR"), "{case}: {events}");
        assert!(!events.contains("STATUS 1"), "{case}: {events}");
        assert!(events.contains("STATUS 3 200"), "{case}: {events}");
    }
}
