//! `webstand sweep --h2` and HTTP/2 runs in the history, over real sockets against Debian's h2o (h2c
//! by prior knowledge) and nginx (h2 over TLS): every level is an HTTP/2 run whose counts (streams
//! done and succeeded, data bytes) equal h2load's at the same -n, -c and -m; the runs are saved
//! with their protocol and -m, which `history`, `show`, `export` (JSON and CSV) and the HTML
//! `report` carry, and `diff` flags an h2 run against an HTTP/1 one; a server without HTTP/2 and
//! HTTP/2 options without --h2 are one line and a non-zero exit.

use crate::common;

use common::h2::{h2load, h2o};
use common::*;
use serde_json::Value;
use std::time::Duration;

fn ok(args: &[&str]) -> String {
    let out = run_with_timeout(args, Duration::from_secs(120));
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

fn db() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db").display().to_string();
    (dir, db)
}

/// A level's h2load figure at `pointer` (`/requests/done` …).
fn h2_at(level: &Value, pointer: &str) -> u64 {
    level["h2"]
        .pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} in {level}"))
}

#[test]
fn every_level_is_an_h2_run_whose_counts_equal_h2loads() {
    let (plain, tls) = (h2o(false), lab_nginx(&["--tls", "--h2"]));
    let urls = [
        format!("http://127.0.0.1:{}/page.html", plain.port),
        format!("https://127.0.0.1:{}/page.html", tls.port),
    ];
    let (_dir, db) = db();
    for url in &urls {
        let text = ok(&[
            "--db", &db, "sweep", "--h2", "-m", "4", "-c", "2,4", "-n", "400", "--warmup", "0",
            "-q", "--json", url,
        ]);
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        let levels = doc["levels"].as_array().unwrap();
        assert_eq!(levels.len(), 2, "{doc}");
        for (level, clients) in levels.iter().zip(["2", "4"]) {
            assert_eq!(level["clients"].as_u64().unwrap().to_string(), clients);
            let (done, succeeded, data) = h2load(&["-n", "400", "-c", clients, "-m", "4", url]);
            let ours = (
                h2_at(level, "/requests/done"),
                h2_at(level, "/requests/succeeded"),
                h2_at(level, "/traffic/data_bytes"),
            );
            assert_eq!(ours, (done, succeeded, data), "{url} at {clients}: {level}");
            assert_eq!(done, 400);
            assert_eq!(h2_at(level, "/status_codes/2xx"), 400, "{level}");
            assert_eq!(h2_at(level, "/max_streams_per_connection"), 4, "{level}");
            // A client is a connection, each carrying its streams.
            assert_eq!(
                level["result"]["connections"].as_u64().unwrap().to_string(),
                clients,
                "{level}"
            );
            let savings = level["h2"]["traffic"]["space_savings_pct"]
                .as_f64()
                .unwrap();
            assert!(savings > 0.0, "{level}");
        }
    }
}

#[test]
fn h2_runs_are_saved_shown_diffed_exported_and_reported_as_h2() {
    let server = h2o(false);
    let url = format!("http://127.0.0.1:{}/page.html", server.port);
    let (dir, db) = db();
    let level = ["-n", "300", "--warmup", "0", "-q", &url];
    let sweep = |extra: &[&str]| {
        let mut args = vec!["--db", db.as_str(), "sweep", "-c", "1,2"];
        args.extend(extra);
        args.extend(level);
        ok(&args)
    };
    sweep(&["--h2", "-m", "4"]);
    ok(&[
        "--db", &db, "bench", "--h2", "-m", "8", "-c", "2", "-n", "300", "-q", &url,
    ]);
    sweep(&[]);

    // history: the h2 runs name their protocol and -m in the Protocol column; the HTTP/1 one its.
    let list = ok(&["history", "--db", &db]);
    let rows: Vec<&str> = list.lines().skip(1).collect();
    for (row, protocol) in rows
        .iter()
        .zip(["  h2c -m 4  ", "  h2c -m 8  ", "  HTTP/1.1  "])
    {
        assert!(row.contains(protocol) && row.ends_with(&url), "{list}");
    }

    // show: the protocol, the seed table and the h2 table with each level's streams.
    let show = ok(&["show", "--db", &db, "1"]);
    assert!(
        show.contains(&format!("sweep of {url} over h2c -m 4 (")),
        "{show}"
    );
    assert!(
        show.contains("Protocol: h2c, -m 4 streams per connection asked"),
        "{show}"
    );
    let h2_rows: Vec<Vec<&str>> = show
        .lines()
        .skip_while(|l| !l.starts_with("HTTP/2 (h2load's counts per level)"))
        .skip(2)
        .take(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        h2_rows
            .iter()
            .map(|r| (r[0], r[1], r[3], r[4], r[8]))
            .collect::<Vec<_>>(),
        [
            ("1", "4", "300", "300", "300"),
            ("2", "4", "300", "300", "300")
        ],
        "{show}"
    );
    let bench = ok(&["show", "--db", &db, "2"]);
    assert!(
        bench.contains("requests: 300 total, 300 started, 300 done, 300 succeeded, 0 failed"),
        "{bench}"
    );
    assert!(ok(&["show", "--db", &db, "3"]).contains("Protocol: HTTP/1.1"));

    // diff: h2 against HTTP/1 is flagged on the third line; two h2 runs are not.
    let d = ok(&["diff", "--db", &db, "1", "3"]);
    assert!(
        d.lines()
            .nth(2)
            .unwrap()
            .starts_with("warning: A spoke h2c -m 4 and B spoke HTTP/1.1"),
        "{d}"
    );
    assert!(!ok(&["diff", "--db", &db, "1", "1"]).contains("spoke"));

    // export: the protocol and every level's h2 figures, in JSON and CSV.
    let doc: Value = serde_json::from_str(&ok(&["export", "--db", &db, "1"])).unwrap();
    assert_eq!(
        (&doc["run"]["protocol"], &doc["run"]["h2_streams"]),
        (&"h2c".into(), &4.into())
    );
    for level in doc["levels"].as_array().unwrap() {
        assert_eq!(h2_at(level, "/requests/succeeded"), 300, "{level}");
        assert!(h2_at(level, "/time_for_connect/count") >= 1, "{level}");
    }
    let csv = |run: &str| -> Vec<Vec<String>> {
        ok(&["export", "--db", &db, run, "--format", "csv"])
            .lines()
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    };
    let (h2_csv, h1_csv) = (csv("1"), csv("3"));
    let col = |name: &str| h2_csv[0].iter().position(|c| c == name).unwrap();
    for row in &h2_csv[1..] {
        assert_eq!(
            (
                &row[col("h2_max_streams")][..],
                &row[col("h2_succeeded")][..]
            ),
            ("4", "300")
        );
    }
    assert!(h1_csv[1..]
        .iter()
        .all(|r| r[col("h2_succeeded")].is_empty()));

    // report: the charts' series and the tables say HTTP/2 and the streams per connection.
    let page = dir.path().join("r.html");
    ok(&[
        "report",
        "--db",
        &db,
        "1",
        "3",
        "-o",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("/page.html (HTTP/2: 4 streams/conn)"),
        "series label"
    );
    assert!(html.contains("HTTP/2 (h2load&#x27;s counts per level)"));
    assert!(html.contains("over h2c -m 4"));
}

#[test]
fn a_server_without_http2_and_h2_options_without_h2_are_one_line_and_a_non_zero_exit() {
    let http1 = lab_nginx(&[]);
    let url = format!("http://127.0.0.1:{}/page.html", http1.port);
    let (_dir, db) = db();
    let one_line = |args: &[&str], code: i32, says: &str| {
        let mut all = vec!["--db", db.as_str(), "sweep", "-c", "1,2", "-n", "50"];
        all.extend(args);
        all.extend(["--warmup", "0", "-q", &url]);
        let out = run_with_timeout(&all, Duration::from_secs(60));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    one_line(&["--h2"], 4, "does not speak HTTP/2");
    one_line(
        &["-m", "4"],
        1,
        "-m 4: streams per connection are an HTTP/2 and HTTP/3 option: add --h2 or --h3",
    );
    one_line(
        &["--h2", "-m", "GET"],
        1,
        "-m GET: expected a number of streams",
    );
    one_line(&["--window-bits", "3"], 1, "add --h2");
    one_line(&["--h2", "-W", "31"], 1, "window bits go from 0 to 30");
    one_line(&["--h2", "-m", "0"], 1, "must be at least 1");
}

/// A max-users search with --h2 against `webstand serve` without --h2c: the level that broke and
/// the run's last line are the engine's one line naming what the server answered the preface with
/// (bench's `Ended::NoHttp2` line), not "the target was without HTTP/2", and the exit is non-zero.
#[test]
fn max_users_over_h2_against_an_http1_server_names_what_it_answered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2k.html"), "a".repeat(2048)).unwrap();
    let server = serve(dir.path(), &["--threads", "1"]);
    let url = format!("http://{}/2k.html", server.addr);
    let (_db_dir, db) = db();
    let out = run_with_timeout(
        &[
            "--db",
            &db,
            "sweep",
            "--find-max-users",
            "--h2",
            "-n",
            "50",
            "--warmup",
            "0",
            "-q",
            &url,
        ],
        Duration::from_secs(60),
    );
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(4), "{text}\n{err}");
    let said = format!(
        "h2c to {}: the server does not speak HTTP/2 here (it answered the preface with \"HTTP/1.1 400 Bad Request\")",
        server.addr
    );
    // Read as words: the sentence wraps at 120 columns.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(&format!("1 clients broke: {said}")),
        "{text}"
    );
    assert!(!text.contains("the target was"), "{text}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&said), "{err}");
}
