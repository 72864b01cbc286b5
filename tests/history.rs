//! The history end to end: sweeps and benches against `webstand serve` over loopback are saved, and
//! `history`, `show`, `export` (json, csv, hgrm) and `diff` read them back; a run interrupted with
//! SIGINT, or killed outright, keeps every level it completed; progress lines appear on a
//! non-terminal stderr unless `--quiet`; bad input is one clear line, a non-zero exit and an unchanged
//! database.

use crate::common;

use common::{
    run, run_with_timeout, send_signal, serve, stderr, stdout, wait_for_levels, webstand, Running,
};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use webstand_store::Store;

/// The Bound by word `show` prints for a sweep's level of `clients` (its last column).
fn show_bound_by(show: &str, clients: u64) -> String {
    show.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() > 3 && w[0].parse::<u64>().is_ok() && w[1] == clients.to_string())
        .and_then(|w| w.last().map(|s| s.to_string()))
        .unwrap_or_else(|| panic!("no level of {clients} clients in\n{show}"))
}

/// A docroot with a 2 KiB page, served by `webstand serve`.
fn server() -> (tempfile::TempDir, Running) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2k.html"), "x".repeat(2048)).unwrap();
    let s = serve(dir.path(), &[]);
    (dir, s)
}

fn url(s: &Running) -> String {
    format!("http://{}/2k.html", s.addr)
}

fn db_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("history.db")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "webstand {args:?} failed:\n{}{}",
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// The database file's bytes (with its WAL, if one is left), to prove a command changed nothing.
fn snapshot(db: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(db).unwrap();
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    if let Ok(w) = std::fs::read(wal) {
        bytes.extend(w);
    }
    bytes
}

#[test]
fn a_sweep_and_benches_are_saved_and_read_back() {
    let (_root, srv) = server();
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    let db_s = db.to_str().unwrap();
    let target = url(&srv);

    ok(&[
        "sweep", "--db", db_s, &target, "-c", "1,2", "-n", "200", "-d", "20s", "--warmup", "0",
        "-q",
    ]);
    let saved = ok(&["bench", "--db", db_s, "-n", "300", "-c", "2", "-q", &target]);
    assert!(
        saved.contains(&format!("Saved as run 2 in {db_s}")),
        "bench says where its run went: {saved}"
    );
    ok(&["bench", "--db", db_s, "-n", "300", "-c", "2", "-q", &target]);

    // history: three runs, with kind, levels and status.
    let list = ok(&["history", "--db", db_s]);
    let rows: Vec<Vec<&str>> = list
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 3, "{list}");
    // Id, "11-22 21:40" (2 words: the runs are of one year), kind, status, then what tells runs
    // apart: clients, keep-alive, protocol, the peak hits/s ("8692 @2"), and the target last.
    let header: Vec<&str> = (list.lines().next().unwrap().split("  "))
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    assert_eq!(
        header,
        [
            "Id",
            "When (UTC)",
            "Kind",
            "Status",
            "Clients",
            "KA",
            "Protocol",
            "Peak hits/s",
            "Target"
        ],
        "{list}"
    );
    assert_eq!(
        (rows[0][0], rows[0][3], rows[0][4]),
        ("1", "sweep", "complete"),
        "{list}"
    );
    assert_eq!(
        (rows[0][5], rows[0][6], rows[0][7]),
        ("1..2", "no", "HTTP/1.1"),
        "{list}"
    );
    assert!(
        ["@1", "@2"].contains(&rows[0][9]),
        "the peak's clients: {list}"
    );
    assert_eq!(rows[0].last(), Some(&target.as_str()), "{list}");
    assert!(rows[0][8].parse::<f64>().unwrap() > 0.0, "{list}");
    assert_eq!(
        (rows[1][3], rows[1][4], rows[1][5], rows[1][6]),
        ("bench", "complete", "2", "no"),
        "{list}"
    );
    // The newest bench, and a line saying the other one is hidden.
    let newest = ok(&["history", "--db", db_s, "--kind", "bench", "-n", "1"]);
    assert_eq!(newest.lines().count(), 3, "{newest}");
    assert!(
        newest.ends_with("(1 older run not shown: `webstand history -n 0` lists every run)\n"),
        "{newest}"
    );

    // show: the sweep's table again, with the same counts; the bench in ab's layout.
    let show = ok(&["show", "--db", db_s, "1"]);
    assert!(
        show.contains("Run 1: sweep of") && show.contains("Clients  Requests"),
        "{show}"
    );
    // Each level numbered as `export --level` takes it, then its clients and requests (in the
    // throughput table, the first of the two).
    let counts: Vec<Vec<&str>> = show
        .lines()
        .filter(|l| matches!(l.split_whitespace().next(), Some("1" | "2")))
        .take(2)
        .map(|l| l.split_whitespace().take(3).collect())
        .collect();
    assert_eq!(counts, [["1", "1", "200"], ["2", "2", "200"]], "{show}");
    let tenon = ok(&["show", "--db", db_s, "1", "--table", "tenon"]);
    assert!(
        tenon.contains("Hits/Sec.") && tenon.contains("Kbytes/Sec.") && !tenon.contains("p99 ms"),
        "{tenon}"
    );
    let ab = ok(&["show", "--db", db_s, "2"]);
    assert!(
        ab.contains("Complete requests:      300") && ab.contains("Concurrency Level:      2"),
        "{ab}"
    );
    // The bench's Diagnosis was kept with it and is shown again after ab's report.
    assert!(ab.contains("\nDiagnosis: "), "{ab}");
    // The sweep's levels were diagnosed: the table names what bound each.
    assert!(show.contains("Bound by"), "{show}");

    // export json: the run's metadata and each level's counts.
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["export", "--db", db_s, "1", "--format", "json"])).unwrap();
    assert_eq!(json["run"]["kind"], "sweep");
    assert_eq!(json["run"]["target"], target.as_str());
    assert_eq!(json["run"]["status"], "complete");
    assert!(json["run"]["machine"]["cores"].as_u64().unwrap() >= 1);
    let levels = json["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    assert_eq!(
        (
            levels[0]["clients"].as_u64(),
            levels[0]["result"]["complete"].as_u64()
        ),
        (Some(1), Some(200))
    );
    assert_eq!(
        levels[1]["result"]["total_bytes"]
            .as_u64()
            .map(|b| b > 200 * 2048),
        Some(true)
    );

    // export csv to a file: a header and one row per level.
    let csv_path = tmp.path().join("run1.csv");
    ok(&[
        "export",
        "--db",
        db_s,
        "1",
        "--format",
        "csv",
        "-o",
        csv_path.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(
        lines[0].starts_with("series,group,clients,")
            && lines[2].contains(",2,")
            && lines[2].contains(",200,"),
        "{csv}"
    );
    // Each level carries its diagnosis as the JSON does: the Bound by word (`-` when nothing
    // bound the level) and the headline, the same as `show` prints.
    let header: Vec<&str> = lines[0].split(',').collect();
    let bound_at = header.iter().position(|h| *h == "bound_by").expect("{csv}");
    let diagnosis_at = header
        .iter()
        .position(|h| *h == "diagnosis")
        .expect("{csv}");
    for (level, row) in json["levels"].as_array().unwrap().iter().zip(&lines[1..]) {
        let cells: Vec<&str> = row.split(',').collect();
        let summary = level["diagnosis"]["summary"].as_str().unwrap();
        assert!(
            !cells[diagnosis_at].is_empty() && cells[diagnosis_at].starts_with(summary),
            "{csv}\n{level}"
        );
        let bound = show_bound_by(&show, level["clients"].as_u64().unwrap());
        assert_eq!(cells[bound_at], bound, "{csv}\n{show}");
    }

    // export hgrm: HdrHistogram's percentile text; its last row counts every request of the level.
    let hgrm = ok(&[
        "export", "--db", db_s, "1", "--format", "hgrm", "--level", "2",
    ]);
    assert!(
        hgrm.lines()
            .next()
            .unwrap()
            .contains("Value     Percentile TotalCount 1/(1-Percentile)"),
        "{hgrm}"
    );
    let last = webstand_report::export::parse_hgrm(&hgrm).pop().unwrap();
    assert_eq!((last.1, last.2), (1.0, 200), "{hgrm}");
    assert!(
        hgrm.contains("#[Mean    =") && hgrm.contains("Total count    =          200]"),
        "{hgrm}"
    );
    let o = run(&["export", "--db", db_s, "1", "--format", "hgrm"]);
    assert!(
        !o.status.success() && stderr(&o).contains("--level"),
        "a sweep needs --level: {}",
        stderr(&o)
    );

    // diff of two runs names the settings they differ in, and only those.
    let diff = ok(&["diff", "--db", db_s, "1", "2"]);
    let settings: Vec<&str> = diff
        .lines()
        .skip_while(|l| !l.starts_with("Settings that differ"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(settings.contains(&"clients"), "{diff}");
    assert!(
        !settings.contains(&"keep-alive") && !settings.contains(&"protocol"),
        "{diff}"
    );
    let same = ok(&["diff", "--db", db_s, "2", "3"]);
    assert!(!same.contains("Settings that differ"), "{same}");

    // diff of the two benches: every metric with its ratio, and the spread explained.
    let diff = ok(&["diff", "--db", db_s, "2", "3"]);
    let hits = diff.lines().find(|l| l.starts_with("Hits/s")).unwrap();
    let f: Vec<&str> = hits.split_whitespace().collect();
    let ratio: f64 = f[3].parse().unwrap();
    let (a, b): (f64, f64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
    assert!((ratio - b / a).abs() < 0.01 * ratio.max(1.0), "{hits}");
    assert!(
        diff.contains("p99 ms") && diff.contains("±SE*: measured once"),
        "{diff}"
    );
    // Several runs per side: repeats give a measured range, labelled as one (not ±).
    let diff = ok(&["diff", "--db", db_s, "2,3", "3"]);
    assert!(diff.contains("samples: A 2, B 1"), "{diff}");
    let hits = diff.lines().find(|l| l.starts_with("Hits/s")).unwrap();
    assert!(hits.contains("% range") && hits.contains("SE*"), "{hits}");

    // report over the saved runs writes a page.
    let page = tmp.path().join("r.html");
    ok(&[
        "report",
        "--db",
        db_s,
        "1",
        "2",
        "3",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains("data-chart=\"hits\""));
}

fn long_sweep(db: &Path, target: &str) -> std::process::Child {
    // Bounded: 4 levels of at most 3 s and 10 million requests each; the test stops it long before.
    webstand()
        .args([
            "sweep",
            "--db",
            db.to_str().unwrap(),
            target,
            "-c",
            "1,2,3,4",
            "-n",
            "10000000",
            "-d",
            "3s",
            "--warmup",
            "0",
            "-q",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn an_interrupted_sweep_keeps_its_completed_levels() {
    let (_root, srv) = server();
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    let child = long_sweep(&db, &url(&srv));
    wait_for_levels(&db, 1, Duration::from_secs(30));
    send_signal(child.id(), libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Clients"),
        "the interrupted sweep still prints its table"
    );

    let run = Store::open_existing(Some(&db))
        .unwrap()
        .load_run(1)
        .unwrap();
    assert_eq!(run.status, "interrupted");
    assert!(
        (1..4).contains(&run.levels.len()),
        "{} levels",
        run.levels.len()
    );
    assert!(run.levels[0].result.complete > 0 && !run.levels[0].result.interrupted);
    let list = ok(&["history", "--db", db.to_str().unwrap()]);
    assert!(list.contains("interrupted"), "{list}");
    ok(&["show", "--db", db.to_str().unwrap(), "1"]);
}

#[test]
fn a_killed_sweep_leaves_its_levels_and_earlier_runs_intact() {
    let (_root, srv) = server();
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    let mut child = long_sweep(&db, &url(&srv));
    wait_for_levels(&db, 1, Duration::from_secs(30));
    child.kill().unwrap(); // SIGKILL: no chance to finish anything
    child.wait().unwrap();
    let db_s = db.to_str().unwrap();
    let run = Store::open_existing(Some(&db))
        .unwrap()
        .load_run(1)
        .unwrap();
    assert_eq!(run.status, "running");
    assert!(!run.levels.is_empty());
    assert!(ok(&["history", "--db", db_s]).contains("unfinished"));
    // The database still takes new runs after the crash.
    ok(&[
        "bench",
        "--db",
        db_s,
        "-n",
        "50",
        "-c",
        "1",
        "-q",
        &url(&srv),
    ]);
    let runs = Store::open_existing(Some(&db)).unwrap().runs().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].status, "complete");
}

#[test]
fn progress_lines_go_to_a_non_terminal_stderr_unless_quiet() {
    let (_root, srv) = server();
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    let target = url(&srv);
    let db_s = db.to_str().unwrap();
    // Bounded by time (6 s) and requests.
    let o = run_with_timeout(
        &[
            "bench", "--db", db_s, "-n", "5000000", "-t", "6", "-c", "2", &target,
        ],
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.contains(" done, ") && l.contains("hits/s"))
        .map(String::from)
        .collect();
    assert!(!lines.is_empty(), "no progress line in:\n{}", stderr(&o));
    assert!(
        lines[0].starts_with("webstand: bench: ") && lines[0].contains(" failed, "),
        "{lines:?}"
    );
    let o = run_with_timeout(
        &[
            "bench", "--db", db_s, "-n", "5000000", "-t", "6", "-c", "2", "-q", &target,
        ],
        Duration::from_secs(60),
    );
    assert!(o.status.success());
    assert!(
        !stderr(&o).contains(" done, "),
        "quiet still showed progress:\n{}",
        stderr(&o)
    );
}

#[test]
fn a_terminal_gets_a_progress_bar() {
    // `script` gives the command a pseudo-terminal and records what it drew.
    let script = common::require("script");
    let (_root, srv) = server();
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    let log = tmp.path().join("tty.log");
    let command = format!(
        "{} bench --db {} -n 5000000 -t 3 -c 2 {}",
        env!("CARGO_BIN_EXE_webstand"),
        db.display(),
        url(&srv)
    );
    let status = std::process::Command::new(script)
        .args(["-qec", &command, log.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let drawn = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
    assert!(
        drawn.contains("bench (3s) [") && drawn.contains(" hits/s, 0 failed"),
        "no bar drawn:\n{drawn}"
    );
    assert!(
        !drawn.contains(" done, "),
        "a terminal gets the bar, not the plain lines"
    );
}

#[test]
fn bad_input_is_one_line_non_zero_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    // A history with one run, written through the store.
    {
        let s = Store::open(Some(&db)).unwrap();
        let id = s
            .begin_run(&webstand_store::RunMeta {
                kind: "bench".into(),
                command_line: "webstand bench".into(),
                target: "http://127.0.0.1:9/".into(),
            })
            .unwrap();
        s.add_level(id, "", 1, 1, None, &webstand_results::RunResult::default())
            .unwrap();
        s.finish_run(id, "complete").unwrap();
    }
    let db_s = db.to_str().unwrap();
    let fails = |args: &[&str], expect: &str| {
        let before = snapshot(Path::new(
            args[args.iter().position(|a| *a == "--db").unwrap() + 1],
        ));
        let o = run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("webstand: error: ") && err.contains(expect),
            "{args:?}: expected {expect:?} in {err}"
        );
        assert!(!err.contains("panicked"));
        let after = snapshot(Path::new(
            args[args.iter().position(|a| *a == "--db").unwrap() + 1],
        ));
        assert!(before == after, "{args:?} changed the database");
    };
    fails(&["show", "--db", db_s, "42"], "no run 42");
    fails(&["show", "--db", db_s, "x"], "bad run id");
    fails(
        &["export", "--db", db_s, "42", "--format", "csv"],
        "no run 42",
    );
    fails(&["diff", "--db", db_s, "1", "42"], "no run 42");
    let out = tmp.path().join("no/such/dir/x.csv");
    fails(
        &[
            "export",
            "--db",
            db_s,
            "1",
            "--format",
            "csv",
            "-o",
            out.to_str().unwrap(),
        ],
        "cannot write",
    );
    fails(
        &[
            "export",
            "--db",
            db_s,
            "1",
            "--format",
            "json",
            "-o",
            tmp.path().to_str().unwrap(),
        ],
        "cannot write",
    );
    fails(
        &[
            "export", "--db", db_s, "1", "--format", "hgrm", "--level", "3",
        ],
        "out of range",
    );

    // Someone else's SQLite database: refused by readers and by a run that would save into it.
    let other = tmp.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes(t TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    let other_s = other.to_str().unwrap();
    fails(
        &["history", "--db", other_s],
        "not a webstand history database",
    );
    fails(
        &["show", "--db", other_s, "1"],
        "not a webstand history database",
    );
    // A file that is not SQLite at all.
    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, "these are notes, not a database; ".repeat(40)).unwrap();
    fails(
        &["history", "--db", text.to_str().unwrap()],
        "not a webstand history database",
    );
    // A history from a newer webstand.
    let newer = tmp.path().join("newer.db");
    std::fs::copy(&db, &newer).unwrap();
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();
    fails(
        &["history", "--db", newer.to_str().unwrap()],
        "newer webstand",
    );
    fails(
        &["export", "--db", newer.to_str().unwrap(), "1"],
        "newer webstand",
    );

    // No database yet: history says so and creates nothing; show refuses.
    let missing = tmp.path().join("missing.db");
    let o = run(&["history", "--db", missing.to_str().unwrap()]);
    assert!(
        o.status.success() && stdout(&o).contains("No runs saved yet"),
        "{}",
        stdout(&o)
    );
    let o = run(&["show", "--db", missing.to_str().unwrap(), "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no history database"), "{}", stderr(&o));
    assert!(!missing.exists());

    // The good run is still there, unchanged.
    let run1 = Store::open_existing(Some(&db))
        .unwrap()
        .load_run(1)
        .unwrap();
    assert_eq!((run1.status.as_str(), run1.levels.len()), ("complete", 1));
}

/// A one-connection-at-a-time server whose k-th connection (0-based) is answered after
/// `delay_ms(k)`, so a sequential run (`-c 1`) has latencies known in advance.
fn server_with_delays(delay_ms: fn(usize) -> u64) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for (k, s) in listener.incoming().enumerate() {
            let Ok(mut s) = s else { continue };
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            std::thread::sleep(Duration::from_millis(delay_ms(k)));
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    addr
}

/// The hgrm export read as HdrHistogram publishes the percentile-distribution format (read here
/// by the test, not by webstand's parser), with the figures hand-computed from known latencies:
/// 50 sequential requests answered after 0 ms (30 of them), 100 ms (15) and 300 ms (5). Measured
/// latency is that delay plus loopback and scheduling time, allowed up to 80 ms (a loaded CI
/// machine); the clusters lie further apart, so each percentile's cluster is exact.
#[test]
fn hgrm_export_matches_hand_computed_percentiles() {
    const SLACK_MS: f64 = 80.0;
    let addr = server_with_delays(|k| match k % 10 {
        9 => 300,
        6..=8 => 100,
        _ => 0,
    });
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    let db_s = db.to_str().unwrap();
    ok(&[
        "bench",
        "--db",
        db_s,
        "-n",
        "50",
        "-c",
        "1",
        "-q",
        &format!("http://{addr}/"),
    ]);
    let hgrm = ok(&["export", "--db", db_s, "1", "--format", "hgrm"]);
    let lines: Vec<&str> = hgrm.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"],
        "{hgrm}"
    );
    assert!(
        lines[1].trim().is_empty(),
        "a blank line after the header: {hgrm}"
    );
    let body: Vec<&str> = lines[2..]
        .iter()
        .copied()
        .take_while(|l| !l.starts_with("#["))
        .collect();
    let rows: Vec<(f64, f64, u64)> = body
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (v, p, n): (f64, f64, u64) = (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            );
            if p < 1.0 {
                assert_eq!(f.len(), 4, "{l}");
                let inverse: f64 = f[3].parse().unwrap();
                assert!((inverse - 1.0 / (1.0 - p)).abs() <= 0.005 + 1e-9, "{l}");
            } else {
                assert_eq!(f.len(), 3, "the 100% row has no 1/(1-Percentile): {l}");
            }
            (v, p, n)
        })
        .collect();
    assert!(rows.len() >= 10, "{hgrm}");
    // HdrHistogram's percentile ticks at 5 per half distance: 0, 10 … 50 %, then 55 … 75 %, …
    let ticks: Vec<f64> = rows.iter().take(9).map(|r| r.1).collect();
    assert_eq!(
        ticks,
        [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65],
        "{hgrm}"
    );
    assert_eq!(rows.last().unwrap().1, 1.0, "{hgrm}");
    assert_eq!(rows.last().unwrap().2, 50, "{hgrm}");
    let cluster = |p: f64| -> (f64, u64, u64) {
        // (delay ms, requests up to the cluster before, requests up to this cluster)
        if p <= 0.6 {
            (0.0, 0, 30)
        } else if p <= 0.9 {
            (100.0, 30, 45)
        } else {
            (300.0, 45, 50)
        }
    };
    for pair in rows.windows(2) {
        assert!(pair[1].1 > pair[0].1 && pair[1].2 >= pair[0].2, "{hgrm}");
    }
    for &(v, p, n) in &rows {
        let (delay, before, upto) = cluster(p);
        assert!(
            v >= delay && v < delay + SLACK_MS,
            "the {p} percentile is {v} ms, expected {delay} ms + up to {SLACK_MS}:\n{hgrm}"
        );
        assert!(
            n > before && n <= upto && n as f64 >= p * 50.0,
            "at {p}: TotalCount {n}, expected ({before}, {upto}]:\n{hgrm}"
        );
    }
    // The footer: mean (60 ms), standard deviation (91.7 ms), max (300 ms) and count of the
    // delays, by hand: 30 × 0, 15 × 100 and 5 × 300 ms. Per-request noise moves the standard
    // deviation by at most the noise's own spread: 15 ms allows one request 80 ms late among 50.
    let footer = |key: &str| -> f64 {
        let at = hgrm
            .find(key)
            .unwrap_or_else(|| panic!("no {key} in {hgrm}"))
            + key.len();
        let rest = hgrm[at..].trim_start().trim_start_matches('=').trim_start();
        rest[..rest.find([',', ']']).unwrap()]
            .trim()
            .parse()
            .unwrap()
    };
    let (mean, stdev, max) = (footer("Mean"), footer("StdDeviation"), footer("Max"));
    let hand_stdev =
        ((30.0 * 60f64.powi(2) + 15.0 * 40f64.powi(2) + 5.0 * 240f64.powi(2)) / 50.0).sqrt();
    assert!(
        (60.0..60.0 + SLACK_MS).contains(&mean),
        "mean {mean}: {hgrm}"
    );
    assert!(
        (stdev - hand_stdev).abs() < 15.0,
        "stdev {stdev}, by hand {hand_stdev:.1}: {hgrm}"
    );
    assert!(
        (300.0..300.0 + SLACK_MS).contains(&max),
        "max {max}: {hgrm}"
    );
    assert_eq!(footer("Total count"), 50.0, "{hgrm}");
    // 3 significant digits: 2^ceil(log2(2 × 10^3)) = 2048 sub-buckets, as HdrHistogram sizes them.
    assert_eq!(footer("SubBuckets"), 2048.0, "{hgrm}");
}

/// `show last` is the most recent run, whatever its kind, in every layout `show N` has.
#[test]
fn show_last_is_the_latest_run() {
    let (_root, srv) = server();
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    let db_s = db.to_str().unwrap();
    let target = url(&srv);
    ok(&["bench", "--db", db_s, "-n", "30", "-c", "1", "-q", &target]);
    let bench = ok(&["show", "--db", db_s, "last"]);
    assert_eq!(bench, ok(&["show", "--db", db_s, "1"]));
    assert!(bench.contains("Complete requests:      30"), "{bench}");
    ok(&[
        "sweep", "--db", db_s, &target, "-c", "1,2", "-n", "40", "-d", "20s", "--warmup", "0", "-q",
    ]);
    let sweep = ok(&["show", "--db", db_s, "last"]);
    assert_eq!(sweep, ok(&["show", "--db", db_s, "2"]));
    assert!(sweep.contains("Run 2: sweep of"), "{sweep}");
    assert_eq!(
        ok(&["show", "--db", db_s, "last", "--table", "tenon"]),
        ok(&["show", "--db", db_s, "2", "--table", "tenon"])
    );
    // No run yet: one clear line, non-zero.
    let empty = tmp.path().join("empty.db");
    webstand_store::Store::open(Some(&empty)).unwrap();
    let o = run(&["show", "--db", empty.to_str().unwrap(), "last"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("webstand: error: "),
        "{}",
        stderr(&o)
    );
}

/// Decodes a PNG with Python's standard library (zlib and struct: a decoder independent of the
/// one that wrote it), checking every chunk's CRC, and prints `width height` and then, for each
/// colour asked (#rrggbb), how many opaque pixels have exactly that colour. Every filter type is
/// undone; None, Sub and Up (what the charts' encoder writes is Sub) and the colour counts run as
/// whole-line operations in C (accumulate, map, translate, int.from_bytes) rather than a Python
/// step per byte, which took seconds a chart.
const PNG_PROBE: &str = r#"
import struct, sys, zlib
from itertools import accumulate
from operator import add
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'signature'
pos, idat, ihdr = 8, b'', None
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    crc = struct.unpack('>I', data[pos + 8 + n:pos + 12 + n])[0]
    assert zlib.crc32(kind + body) == crc, 'CRC of ' + kind.decode()
    if kind == b'IHDR': ihdr = struct.unpack('>IIBBBBB', body)
    if kind == b'IDAT': idat += body
    pos += 12 + n
w, h, depth, ctype = ihdr[:4]
assert (depth, ctype) == (8, 6), 'expected 8-bit RGBA, got %d/%d' % (depth, ctype)
raw, stride, prev, lines = zlib.decompress(idat), w * 4, bytearray(w * 4), []
assert len(raw) == h * (stride + 1), 'scanline bytes'
byte = (255).__and__
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        # Sub: each byte adds the one a pixel before it, so a channel is its running sum.
        for c in range(4): line[c::4] = bytes(map(byte, accumulate(line[c::4])))
    elif f == 2: line = bytearray(map(byte, map(add, line, prev)))
    elif f in (3, 4):
        for i in range(stride):
            a = line[i - 4] if i >= 4 else 0
            b, c = prev[i], (prev[i - 4] if i >= 4 else 0)
            if f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            else:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    else: assert f == 0, 'filter type %d' % f
    lines.append(line); prev = line
pixels = b''.join(lines)
def count(colour):
    # One bit a pixel: each channel's bytes become 1 where they equal the wanted value, and the
    # four channels' bit strings ANDed leave the opaque pixels of exactly that colour.
    want, bits = bytes.fromhex(colour[1:]) + b'\xff', -1
    for c in range(4):
        table = bytes(v == want[c] for v in range(256))
        bits &= int.from_bytes(pixels[c::4].translate(table), 'big')
    return bin(bits).count('1')
print(w, h)
for colour in sys.argv[2:]: print(count(colour.lower()))
"#;

/// `report --png` end to end on measured runs: each chart's PNG decodes (every CRC right), is the
/// SVG's size twice over, and shows the chart: the white background, the series' own colour
/// along its line, and dark pixels of the axis labels.
#[test]
fn report_png_charts_of_measured_runs_decode_and_show_the_series() {
    let python = common::require("python3");
    let (_root, srv) = server();
    let tmp = tempfile::tempdir().unwrap();
    let db = db_in(&tmp);
    let db_s = db.to_str().unwrap();
    let target = url(&srv);
    ok(&[
        "sweep", "--db", db_s, &target, "-c", "1,2,4", "-n", "200", "-d", "20s", "--warmup", "0",
        "-q",
    ]);
    let (svg_dir, png_dir) = (tmp.path().join("svg"), tmp.path().join("png"));
    ok(&[
        "report",
        "--db",
        db_s,
        "1",
        "-o",
        tmp.path().join("r.html").to_str().unwrap(),
        "--svg",
        svg_dir.to_str().unwrap(),
        "--png",
        png_dir.to_str().unwrap(),
    ]);
    let attr = |svg: &str, name: &str| -> String {
        let at = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[at..at + svg[at..].find('"').unwrap()].to_string()
    };
    // Every chart is written; three kinds are decoded (pure-Python decoding takes 4 s a chart).
    for chart in ["hits", "latency", "errors", "kbytes", "distribution"] {
        assert!(
            png_dir.join(format!("{chart}.png")).is_file(),
            "{chart}.png"
        );
    }
    for chart in ["hits", "latency", "distribution"] {
        let svg = std::fs::read_to_string(svg_dir.join(format!("{chart}.svg"))).unwrap();
        let series = svg
            .split("<polyline")
            .nth(1)
            .map(|p| attr(p, "stroke"))
            .unwrap_or_else(|| panic!("{chart}.svg has no series line"));
        let png = png_dir.join(format!("{chart}.png"));
        let out = std::process::Command::new(&python)
            .args([
                "-c",
                PNG_PROBE,
                png.to_str().unwrap(),
                "#ffffff",
                &series,
                "#000000",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{chart}.png does not decode: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let n: Vec<u64> = text
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        let (w, h): (u64, u64) = (
            attr(&svg, "width").parse().unwrap(),
            attr(&svg, "height").parse().unwrap(),
        );
        assert_eq!((n[0], n[1]), (2 * w, 2 * h), "{chart}.png size");
        let all = n[0] * n[1];
        assert!(
            n[2] * 2 > all,
            "{chart}.png: mostly white background ({} of {all})",
            n[2]
        );
        assert!(
            n[3] >= 100,
            "{chart}.png: {} pixels of the series colour {series}",
            n[3]
        );
        assert!(n[4] >= 100, "{chart}.png: {} black pixels of text", n[4]);
    }
}
