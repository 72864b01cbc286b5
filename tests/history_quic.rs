//! QUIC's figures kept in the history and read back by every command that reads it, after real
//! `bench --h3` runs against `webstand serve --listen-quic`: `show` reprints the QUIC lines byte
//! for byte as bench printed them, `history` and `show` name the protocol (h3 and its -m), `diff`
//! compares the QUIC figures (resumed handshakes against none), `export` carries them in JSON and
//! in the CSV's `quic_` columns, and the HTML report has a QUIC section for the run. A history
//! file from before they were kept (schema 14) still opens and reads, without them, and gains the
//! column when written to.

use crate::common;

use common::h3::{docroot, H3Server};
use common::*;
use serde_json::Value;
use std::time::Duration;

fn ok(args: &[&str]) -> String {
    let out = run_with_timeout(args, Duration::from_secs(60));
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The "QUIC:" block of a report, to its last line (UDP offload).
fn quic_block(report: &str) -> String {
    let from = report
        .find("\nQUIC:\n")
        .unwrap_or_else(|| panic!("no QUIC lines in {report}"));
    let part = &report[from..];
    let to = part.find("UDP offload: ").expect("the offload line");
    let end = to + part[to..].find('\n').unwrap_or(part.len() - to);
    part[..end].to_string()
}

#[test]
fn quic_figures_are_kept_shown_diffed_exported_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let doc = docroot(dir.path());
    let server = H3Server::start(dir.path(), &doc, &[]);
    let url = format!("https://{}/2k.html", server.quic);
    let db = dir.path().join("h.db").display().to_string();
    // Two threads, a connection each at a time, five requests per connection: four connections,
    // the first two full handshakes, the two after them resumed (run 1); none resumed (run 2).
    let run = [
        "-n",
        "20",
        "-c",
        "2",
        "-m",
        "2",
        "--max-requests-per-connection",
        "5",
    ];
    let bench = |extra: &[&str]| {
        let head = ["--db", db.as_str(), "bench", "--threads", "2"];
        ok(&[&head[..], extra, &run[..], &[url.as_str()][..]].concat())
    };
    let printed = bench(&["--h3", "--tls-resume"]);
    bench(&["--h3"]);
    assert!(
        printed.contains("handshakes: 4 total, 2 full, 2 resumed, 0-RTT 0 accepted, 0 rejected"),
        "{printed}"
    );

    // history and show: the protocol; show's QUIC lines are bench's, byte for byte.
    let list = ok(&["history", "--db", &db]);
    assert_eq!(list.matches("  h3 -m 2  ").count(), 2, "{list}");
    let shown = ok(&["show", "--db", &db, "1"]);
    assert_eq!(quic_block(&shown), quic_block(&printed), "{shown}");
    assert!(
        shown.contains("Protocol: h3, -m 2 streams per connection asked"),
        "{shown}"
    );

    // diff: the QUIC table under the metrics, resumed handshakes 50 % against none.
    let d = ok(&["diff", "--db", &db, "1", "2"]);
    let row = |name: &str| -> Vec<String> {
        let line = d
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in {d}"));
        line[name.len()..]
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    assert!(d.contains("\nQUIC "), "{d}");
    assert_eq!(row("Resumed %")[..2], ["50.0", "0.000"], "{d}");
    assert_eq!(row("Conn errors")[..2], ["0.000", "0.000"], "{d}");
    assert!(!d.contains("spoke"), "the same protocol on both sides: {d}");

    // export: JSON under `quic`, CSV in the quic_ columns.
    let json: Value = serde_json::from_str(&ok(&["export", "--db", &db, "1"])).unwrap();
    assert_eq!(json["run"]["protocol"], "h3", "{json}");
    let q = &json["levels"][0]["quic"];
    assert_eq!(q["handshakes"]["total"], 4, "{q}");
    assert_eq!(q["handshakes"]["resumed"], 2, "{q}");
    assert!(q["datagrams"]["sent"].as_u64().unwrap() >= 20, "{q}");
    let csv = ok(&["export", "--db", &db, "1", "--format", "csv"]);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let cell = |name: &str| rows[1][rows[0].iter().position(|c| *c == name).unwrap()];
    assert_eq!(
        (
            cell("protocol"),
            cell("quic_handshakes"),
            cell("quic_resumed")
        ),
        ("h3", "4", "2"),
        "{csv}"
    );
    assert_eq!(cell("quic_connection_errors"), "", "{csv}");

    // report: a QUIC section for each run, and the series says HTTP/3.
    let page = dir.path().join("r.html");
    ok(&[
        "report",
        "--db",
        &db,
        "1",
        "2",
        "-o",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<h3>QUIC</h3>").count(), 2, "{html}");
    assert!(html.contains("<td>4 (2 / 2)</td>"), "run 1's handshakes");
    assert!(html.contains("<td>4 (4 / 0)</td>"), "run 2's handshakes");
    assert!(
        html.contains("/2k.html (HTTP/3: 2 streams/conn)"),
        "series label"
    );

    // A file from before QUIC's figures were kept: it reads without them, and gains the column
    // when a run is saved in it.
    let old = dir.path().join("old.db");
    std::fs::copy(&db, &old).unwrap();
    rusqlite::Connection::open(&old)
        .unwrap()
        .execute_batch("ALTER TABLE levels DROP COLUMN quic; PRAGMA user_version = 14;")
        .unwrap();
    let old = old.display().to_string();
    assert_eq!(
        ok(&["history", "--db", &old])
            .matches("  h3 -m 2  ")
            .count(),
        2
    );
    let shown = ok(&["show", "--db", &old, "1"]);
    assert!(
        !shown.contains("\nQUIC:\n") && shown.contains("Protocol: h3"),
        "{shown}"
    );
    ok(&["export", "--db", &old, "1", "--format", "csv"]);
    let head = ["--db", old.as_str(), "bench", "--h3"];
    ok(&[&head[..], &run[..], &[url.as_str()][..]].concat());
    assert!(ok(&["show", "--db", &old, "3"]).contains("\nQUIC:\n"));
    let version: i32 = rusqlite::Connection::open(&old)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        version, 16,
        "upgraded to the current schema when the run was saved"
    );
}
