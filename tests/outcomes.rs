//! Results that never mislead, end to end over loopback: a dead port, a sweep of 404s, a sweep with
//! some errors, a server killed mid-run, a rate run and a pipelined run, each checked for its exit
//! status, the status the history saved, the line that says why, and the figures and labels printed
//! (docs/EXIT-STATUS.md).

use crate::common;

use common::{closed_port, run, run_with_timeout, serve, stderr, stdout, webstand, Running};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A docroot written by `webstand fixtures`.
fn fixtures() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["fixtures", dir.path().join("www").to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    dir
}

fn www(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("www")
}

fn db(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

/// The statuses the history saved, oldest first.
fn statuses(db: &str) -> Vec<String> {
    webstand_store::Store::open_existing(Some(Path::new(db)))
        .unwrap()
        .runs()
        .unwrap()
        .into_iter()
        .map(|r| r.status)
        .collect()
}

fn last_line(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or("")
}

fn url(s: &Running, path: &str) -> String {
    format!("http://{}{path}", s.addr)
}

/// The printed text with each line past 120 columns read as one: the printer goes on in lines
/// indented four spaces under it (a table's rows are indented otherwise).
fn rows_as_one(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let goes_on = line.starts_with("    ") && !line[4..].starts_with(' ');
        if goes_on && !out.is_empty() {
            out.push(' ');
            out.push_str(line.trim_start());
        } else {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(line);
        }
    }
    out
}
#[test]
fn a_dead_port_fails_fast_with_status_4_and_is_saved_as_failed() {
    let dir = tempfile::tempdir().unwrap();
    let h = db(&dir, "h.db");
    let closed = closed_port();
    let dead = format!("http://127.0.0.1:{}/", closed.port);
    let t = Instant::now();
    let out = run(&["sweep", &dead, "-c", "1,2", "-d", "1s", "--db", &h, "-q"]);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "no fail-fast: {:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        last_line(&err).starts_with("webstand: failed (exit status 4): could not connect:")
            && last_line(&err).contains("Connection refused"),
        "{err}"
    );
    let text = stdout(&out);
    assert!(text.contains("Peak: none"), "{text}");
    assert!(!text.contains("Peak: 0"), "{text}");
    // The sweep stopped at its first level: the second would fail the same way.
    assert_eq!(
        text.lines().filter(|l| l.contains("(unreachable)")).count(),
        1,
        "{text}"
    );

    let out = run(&["bench", "-n", "100", "-c", "4", &dead, "--db", &h]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end().lines().count(),
        1,
        "{}",
        stderr(&out)
    );
    assert!(
        !stdout(&out).contains("Complete requests"),
        "{}",
        stdout(&out)
    );
    assert_eq!(statuses(&h), ["failed", "failed"]);
    let show = stdout(&run(&["show", "--db", &h, "last"]));
    assert!(
        show.contains("Status:   failed, 1 level: could not connect"),
        "{show}"
    );
}

#[test]
fn a_sweep_of_404s_fails_and_every_layout_marks_its_levels_mostly_errors() {
    let dir = fixtures();
    let server = serve(&www(&dir), &[]);
    let h = db(&dir, "h.db");
    let missing = url(&server, "/nosuch.html");
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep", &missing, "-c", "1,2", "-n", "300", "--warmup", "0", "-q", "--db", &h,
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {}", stderr(&out));
        assert!(
            last_line(&stderr(&out))
                .ends_with("no successful request: all 600 answers were non-2xx"),
            "{}",
            stderr(&out)
        );
        stdout(&out)
    };
    let full = sweep(&[]);
    let row: Vec<&str> = full
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap()
        .split_whitespace()
        .collect();
    // Clients, Requests, Failed, Non-2xx, Err%.
    assert_eq!(
        (row[1], row[2], row[3], row[4]),
        ("300", "0", "300", "100.00"),
        "{full}"
    );
    assert!(
        full.contains("Peak: none: no level had a successful request"),
        "{full}"
    );
    for (table, rows) in [("full", 2), ("tenon", 2), ("webstone", 2), ("ab", 2)] {
        let text = if table == "full" {
            full.clone()
        } else {
            sweep(&["--table", table])
        };
        let marked = rows_as_one(&text)
            .lines()
            .filter(|l| {
                l.contains("MOSTLY ERRORS: 100.0 %")
                    || l.contains(
                        "WARNING: 100.0 % of the requests failed or were answered non-2xx",
                    )
            })
            .count();
        assert_eq!(marked, rows, "{table}:\n{text}");
    }
    let json: Value = serde_json::from_str(&sweep(&["--json"])).unwrap();
    assert_eq!(json["peak"], Value::Null);
    assert_eq!(json["outcome"]["status"], "failed");
    assert_eq!(json["levels"][0]["result"]["mostly_errors"], true);
    assert_eq!(json["levels"][0]["result"]["figures"]["error_pct"], 100.0);
    let csv = stdout(&run(&["export", "--db", &h, "last", "--format", "csv"]));
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| first[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(
        (col("errors"), col("mostly_errors"), col("error_pct")),
        ("300", "true", "100.0000")
    );
    assert!(
        statuses(&h).iter().all(|s| s == "failed"),
        "{:?}",
        statuses(&h)
    );
}

#[test]
fn some_errors_exit_3_and_the_peak_counts_them_like_max_users_does() {
    let dir = fixtures();
    let server = serve(&www(&dir), &[]);
    let h = db(&dir, "h.db");
    // One path of four is missing: about a quarter of the answers are 404s.
    let list = dir.path().join("urls.txt");
    std::fs::write(
        &list,
        "/2k.html\n/file5k.html\n/file500.html\n/nosuch.html\n",
    )
    .unwrap();
    let base = url(&server, "/");
    let args = |pct: &'static str| -> Vec<String> {
        [
            "sweep",
            &base,
            "--url-file",
            list.to_str().unwrap(),
            "-c",
            "1,2",
            "-n",
            "2000",
            "--warmup",
            "0",
            "-q",
            "--db",
            &h,
            "--max-error-pct",
            pct,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let go = |a: &[String]| run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let out = go(&args("1"));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        last_line(&err).starts_with("webstand: errors (exit status 3): errors above --max-error-pct 1 % (failed or non-2xx): 1 clients 2"),
        "{err}"
    );
    let text = stdout(&out);
    assert!(
        text.contains("Peak: none") && !text.contains("MOSTLY ERRORS"),
        "{text}"
    );
    // The same errors with a 50 % threshold: clean levels, a peak, exit 0.
    let out = go(&args("50"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("the fastest level with errors ≤ 50 %"),
        "{}",
        stdout(&out)
    );
    assert_eq!(statuses(&h), ["errors", "complete"]);
    // Max users counts the same errors: with 1 % every level breaks on them.
    let out = run(&[
        "sweep",
        &base,
        "--url-file",
        list.to_str().unwrap(),
        "--find-max-users",
        "-n",
        "500",
        "--warmup",
        "0",
        "--max-clients",
        "2",
        "-q",
        "--db",
        &h,
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("1 clients broke: error rate 2"),
        "{}",
        stdout(&out)
    );
    assert!(
        last_line(&stderr(&out)).contains("no clean level"),
        "{}",
        stderr(&out)
    );
}

/// Starts `webstand serve` with an access log, so a test can see requests arriving.
fn serve_logged(root: &Path, log: &Path) -> Running {
    serve(root, &["--access-log", log.to_str().unwrap()])
}

/// Waits until the access log has lines: the load is flowing (the log is flushed every 32 KiB).
fn wait_for_traffic(log: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(log).map_or(true, |m| m.len() == 0) {
        assert!(Instant::now() < deadline, "no request reached the server");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `webstand ARGS…` in the background and SIGKILLs `server` once requests flow.
fn kill_server_during(
    args: &[&str],
    mut server: Running,
    log: &Path,
) -> (std::process::Output, Duration) {
    let child = webstand()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_traffic(log);
    let t = Instant::now();
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let out = child.wait_with_output().unwrap();
    (out, t.elapsed())
}

#[test]
fn a_server_killed_mid_run_is_target_lost_with_status_5() {
    let dir = fixtures();
    let h = db(&dir, "h.db");
    let log = dir.path().join("access.log");
    let server = serve_logged(&www(&dir), &log);
    let target = url(&server, "/2k.html");
    let args = [
        "bench", "-k", "-c", "8", "-d", "20s", "-q", "--db", &h, &target,
    ];
    let (out, after_kill) = kill_server_during(&args, server, &log);
    assert!(
        after_kill < Duration::from_secs(5),
        "the run went on against a dead port for {after_kill:?}"
    );
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(last_line(&err).starts_with("webstand: target lost (exit status 5): target lost: 10 connections in a row were refused"), "{err}");
    let text = stdout(&out);
    let done: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("Complete requests:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(done > 0, "{text}");
    // The Diagnosis says the target was lost, not that the server stalled or shed load.
    assert!(text.contains("Diagnosis: the target was lost"), "{text}");
    assert!(!text.contains("shed load"), "{text}");
    assert_eq!(statuses(&h), ["target lost"]);

    // A sweep keeps the levels it finished and stops at the one that lost its target.
    std::fs::remove_file(&log).unwrap();
    let server = serve_logged(&www(&dir), &log);
    let target = url(&server, "/2k.html");
    let args = [
        "sweep", &target, "-k", "-c", "2,4,8", "-d", "20s", "--warmup", "0", "-q", "--db", &h,
    ];
    let (out, _) = kill_server_during(&args, server, &log);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        last_line(&stderr(&out)).contains("target lost at 2 clients"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("(target lost)") && !stdout(&out).contains("\n      4 "),
        "{}",
        stdout(&out)
    );
    assert_eq!(statuses(&h), ["target lost", "target lost"]);
}

/// A field of ab's report: "Time per request:" → its first number.
fn ab_value(text: &str, label: &str, nth: usize) -> f64 {
    text.lines()
        .filter_map(|l| l.strip_prefix(label))
        .nth(nth)
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {label} #{nth} in\n{text}"))
}

#[test]
fn a_rate_run_prints_its_target_achieved_rate_late_sends_and_a_measured_time_per_request() {
    let dir = fixtures();
    let server = serve(&www(&dir), &[]);
    let h = db(&dir, "h.db");
    let target = url(&server, "/2k.html");
    let out = run(&[
        "bench", "-k", "-c", "16", "--rate", "400", "-d", "2s", "-q", "--db", &h, &target,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Target rate:            400.00 [#/sec] (open loop)\n"),
        "{text}"
    );
    let achieved = ab_value(&text, "Achieved rate:", 0);
    assert!(
        (achieved - 400.0).abs() < 40.0,
        "achieved {achieved}/s of 400/s"
    );
    assert!(
        text.contains("Late sends:")
            && text.contains("(left more than 2 ms after their intended time)"),
        "{text}"
    );
    // The measured mean from each intended send time, not ab's 16 connections × 2 s ÷ 800.
    assert!(
        text.contains("[ms] (mean, measured from each intended send time)"),
        "{text}"
    );
    let per_request = ab_value(&text, "Time per request:", 0);
    let measured = mean_latency_ms(&h);
    assert!(
        (per_request - measured).abs() < 0.0015,
        "{per_request} ms vs {measured}"
    );
    assert!(
        per_request < 10.0,
        "Time per request {per_request} ms is ab's formula, not the latency"
    );

    let out = run(&[
        "sweep", &target, "-k", "--rate", "300", "-c", "8", "-d", "1s", "--warmup", "0", "-q",
        "--db", &h,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let line = rows_as_one(&stdout(&out))
        .lines()
        .find(|l| l.starts_with("Open loop, 8 connections"))
        .map(String::from);
    let line = line.unwrap_or_else(|| panic!("{}", stdout(&out)));
    assert!(
        line.contains("target 300 requests/s, achieved ")
            && line.contains("sends left more than 2 ms late"),
        "{line}"
    );
}

#[test]
fn a_pipelined_run_prints_the_measured_time_per_request() {
    let dir = fixtures();
    let server = serve(&www(&dir), &[]);
    let h = db(&dir, "h.db");
    let target = url(&server, "/2k.html");
    let out = run(&[
        "bench",
        "--pipeline",
        "16",
        "-c",
        "2",
        "-n",
        "20000",
        "-q",
        "--db",
        &h,
        &target,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("[ms] (mean, measured: 16 pipelined per connection)"),
        "{text}"
    );
    // The value is the run's measured mean latency (as the history exported it), not ab's
    // concurrency × time ÷ requests, which ignores the 16 requests in flight per connection.
    let printed = ab_value(&text, "Time per request:", 0);
    let measured = mean_latency_ms(&h);
    assert!(
        (printed - measured).abs() < 0.0015,
        "{printed} ms vs {measured}"
    );
}

/// The last run's mean latency in ms, from `webstand export`.
fn mean_latency_ms(db: &str) -> f64 {
    let json: Value = serde_json::from_str(&stdout(&run(&["export", "--db", db, "last"]))).unwrap();
    json["levels"][0]["result"]["figures"]["mean_latency_secs"]
        .as_f64()
        .unwrap()
        * 1000.0
}

#[test]
fn webstone_labels_connections_and_hits_apart_under_keep_alive() {
    let dir = fixtures();
    let server = serve(&www(&dir), &[]);
    let h = db(&dir, "h.db");
    let target = url(&server, "/2k.html");
    let out = run(&[
        "sweep", &target, "-k", "-c", "2", "-n", "4000", "--warmup", "0", "--table", "webstone",
        "-q", "--db", &h,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let header = text.lines().find(|l| l.starts_with("Clients")).unwrap();
    assert!(
        header.contains("Hits/second")
            && header.contains("Conn/second")
            && header.contains("Latency (ms)"),
        "{text}"
    );
    let row: Vec<f64> = text
        .lines()
        .find(|l| l.starts_with("2 "))
        .unwrap()
        .split_whitespace()
        // The figures; the "Bound by" column after them names a verdict.
        .map_while(|v| v.parse().ok())
        .collect();
    assert!(row.len() >= 5, "{text}");
    let csv = stdout(&run(&["export", "--db", &h, "last", "--format", "csv"]));
    let cols: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let vals: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = |n: &str| -> f64 {
        vals[cols.iter().position(|c| *c == n).unwrap()]
            .parse()
            .unwrap()
    };
    assert!(
        (row[1] - col("hits_per_sec")).abs() < 0.01 && (row[2] - col("conns_per_sec")).abs() < 0.01,
        "{text}\n{csv}"
    );
    assert!(
        row[2] < row[1] / 100.0,
        "2 keep-alive connections carried the 4000 hits: {text}"
    );
    assert!(
        (row[4] - col("latency_mean_ms")).abs() < 0.001,
        "latency in ms: {text}\n{csv}"
    );
}

#[test]
fn show_prints_a_bench_runs_real_duration() {
    let dir = fixtures();
    let server = serve(&www(&dir), &[]);
    let h = db(&dir, "h.db");
    let out = run(&[
        "bench",
        "-c",
        "2",
        "-d",
        "2s",
        "-q",
        "--db",
        &h,
        &url(&server, "/2k.html"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let show = stdout(&run(&["show", "--db", &h, "last"]));
    let took: f64 = show
        .lines()
        .find_map(|l| l.split("(took ").nth(1))
        .and_then(|v| v.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{show}"));
    assert!(
        (2.0..10.0).contains(&took),
        "took {took} s for a 2 s run:\n{show}"
    );
    let ran = run_with_timeout(&["history", "--db", &h], Duration::from_secs(30));
    assert!(stdout(&ran).contains("complete"), "{}", stdout(&ran));
}
