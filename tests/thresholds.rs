//! `--threshold` end to end over loopback against `webstand serve`: every kind of threshold passing
//! and failing on a real run, the pass/fail table, exit status 6, `--json`, the history (`show`),
//! JUnit XML read back by a real XML parser, the Markdown summary, a sweep judged per level, a
//! comparison judged per row (exit 6), and malformed expressions refused in one line.

use crate::common;

use common::{json_stdout, run, serve, stderr, stdout, Running};
use serde_json::Value;
use std::path::Path;

/// `webstand serve` on a docroot with one page.
fn server() -> (tempfile::TempDir, Running) {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    std::fs::create_dir(&www).unwrap();
    std::fs::write(www.join("page.html"), "x".repeat(2048)).unwrap();
    let s = serve(&www, &["--threads", "1"]);
    (dir, s)
}

fn url(s: &Running, path: &str) -> String {
    format!("http://{}{path}", s.addr)
}

fn path_str(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

/// Every check of a bench `--json` document, by threshold.
fn checks(doc: &Value) -> Vec<(String, f64, bool)> {
    doc["thresholds"]
        .as_array()
        .expect("thresholds in --json")
        .iter()
        .map(|c| {
            let actual = c["actual"].as_f64().unwrap_or(f64::NAN);
            let t = c["threshold"].as_str().unwrap().to_string();
            (t, actual, c["passed"].as_bool().unwrap())
        })
        .collect()
}

const PASSING: &str = "p50<10s,p99.9<=10s,min<10s,max<30s,mean<10000ms,errors==0,errors<0.1%,status_2xx==400,status_2xx>=100%,status_4xx==0,status_5xx==0,rps>1,transfer>1KB/s";
const FAILING: &str = "p50>1000s,p99.9>=1000s,min>1000s,max>1000s,mean>1000000ms,errors>0,errors>=0.1%,status_2xx<400,status_2xx<100%,status_4xx>0,status_5xx>=1,rps>1000000000,transfer>1000000MB/s";

#[test]
fn each_kind_passes_and_fails_on_a_real_run_with_exit_6_only_when_crossed() {
    let (dir, s) = server();
    let db = path_str(&dir, "h.db");
    let page = url(&s, "/page.html");
    let bench = |thresholds: &str| {
        let t = format!("--threshold={thresholds}");
        run(&[
            "bench", "-k", "-c", "2", "-n", "400", "--json", &t, "--db", &db, &page,
        ])
    };
    let out = bench(PASSING);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json_stdout(&out);
    let passed = checks(&doc);
    assert_eq!(passed.len(), 13);
    assert!(passed.iter().all(|c| c.2), "{passed:?}");
    assert_eq!(doc["outcome"]["status"], "complete");
    // The figures are the report's own: the count of complete requests and the rate.
    let by = |name: &str| passed.iter().find(|c| c.0 == name).unwrap().1;
    assert_eq!(by("status_2xx==400"), doc["complete"].as_f64().unwrap());
    let rps = doc["figures"]["hits_per_sec"].as_f64().unwrap();
    assert!(
        (by("rps>1") - rps).abs() < 1e-6 * rps,
        "{} vs {rps}",
        by("rps>1")
    );

    let out = bench(FAILING);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let doc = json_stdout(&out);
    let failed = checks(&doc);
    assert_eq!(failed.len(), 13);
    assert!(failed.iter().all(|c| !c.2), "{failed:?}");
    assert_eq!(doc["outcome"]["status"], "thresholds");
    assert_eq!(doc["outcome"]["exit_status"], 6);
    let last = stderr(&out);
    let last = last.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("webstand: thresholds (exit status 6): thresholds crossed: p50>1000s was"),
        "{last}"
    );
    let statuses: Vec<String> = webstand_store::Store::open_existing(Some(Path::new(&db)))
        .unwrap()
        .runs()
        .unwrap()
        .into_iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, ["complete", "thresholds"]);
}

#[test]
fn status_classes_count_what_the_server_answered() {
    let (dir, s) = server();
    let list = dir.path().join("urls.txt");
    std::fs::write(&list, "/page.html\n/missing.html\n").unwrap();
    let t = "--threshold=status_4xx>0,status_4xx<100%,errors<1%,status_5xx==0";
    let out = run(&[
        "bench",
        "-k",
        "-c",
        "2",
        "-n",
        "300",
        "--json",
        "--max-error-pct",
        "100",
        "--url-file",
        list.to_str().unwrap(),
        t,
        &url(&s, "/"),
    ]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let doc = json_stdout(&out);
    let c = checks(&doc);
    let not_found = doc["non_2xx_statuses"]["404"].as_f64().unwrap();
    assert!(not_found > 0.0);
    assert_eq!((c[0].1, c[0].2), (not_found, true));
    let attempted = doc["complete"].as_f64().unwrap();
    assert!(
        (c[1].1 - not_found * 100.0 / attempted).abs() < 1e-9,
        "{c:?}"
    );
    assert!(c[1].2);
    assert!(!c[2].2, "errors (the 404s) over 1 %: {c:?}");
    assert!(c[3].2);
}

#[test]
fn the_table_the_history_junit_and_the_summary_say_the_same() {
    let (dir, s) = server();
    let db = path_str(&dir, "h.db");
    let (junit, md) = (path_str(&dir, "t.xml"), path_str(&dir, "t.md"));
    let out = run(&[
        "bench",
        "-k",
        "-c",
        "2",
        "-n",
        "300",
        "--db",
        &db,
        "--threshold",
        "p99<10s",
        "--threshold",
        "rps>1000000000,errors==0",
        "--junit",
        &junit,
        "--summary-md",
        &md,
        &url(&s, "/page.html"),
    ]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Thresholds: 2 passed, 1 crossed"), "{text}");
    let row = |t: &str, v: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(t))
            .unwrap_or_else(|| panic!("no row {t}: {text}"))
            .trim_end()
            .ends_with(v)
    };
    assert!(row("p99<10s", "pass") && row("rps>1000000000", "FAIL") && row("errors==0", "pass"));

    // The history keeps them: `show` prints the same table.
    let shown = run(&["show", "1", "--db", &db]);
    let shown = stdout(&shown);
    assert!(shown.contains("Thresholds: 2 passed, 1 crossed"), "{shown}");
    assert!(shown
        .lines()
        .any(|l| l.contains("rps>1000000000") && l.ends_with("FAIL")));
    // Its status is the one it was saved with, not a disagreement with an "older webstand".
    let status = shown
        .lines()
        .find(|l| l.trim_start().starts_with("Status:"))
        .unwrap_or_else(|| panic!("no Status line: {shown}"));
    assert_eq!(status.trim(), "Status:   thresholds, 1 level", "{shown}");

    // The HTML report gives them a section of their own: each check a row, the crossed one marked.
    let html = path_str(&dir, "r.html");
    let report = run(&["report", "1", "--db", &db, "-o", &html]);
    assert!(report.status.success(), "{}", stderr(&report));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<h3>Thresholds: 2 held, 1 crossed</h3>"),
        "{page}"
    );
    assert!(
        page.contains("<tr class=\"bad\"><td>the run</td><td>rps&gt;1000000000</td>"),
        "{page}"
    );
    assert!(page.contains("<td>p99&lt;10s</td>"), "{page}");

    // JUnit XML, read by Python's own XML parser.
    let py = "import sys, xml.etree.ElementTree as E\nr = E.parse(sys.argv[1]).getroot()\nfor c in r.iter('testcase'):\n    print(c.get('name'), 'failed' if c.find('failure') is not None else 'passed')\nprint(r.get('tests'), r.get('failures'))";
    let parsed = std::process::Command::new("python3")
        .args(["-c", py, &junit])
        .output()
        .unwrap();
    assert!(
        parsed.status.success(),
        "{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&parsed.stdout),
        "p99<10s passed\nrps>1000000000 failed\nerrors==0 passed\n3 1\n"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("Outcome: **thresholds**"), "{md}");
    assert!(
        md.contains("| run | `rps>1000000000` |") && md.contains("❌ fail"),
        "{md}"
    );
    assert!(md.contains("| run | 300 |"), "{md}");
}

#[test]
fn a_sweep_judges_every_level() {
    let (dir, s) = server();
    let db = path_str(&dir, "h.db");
    let out = run(&[
        "sweep",
        "-k",
        "-c",
        "1,2",
        "-n",
        "200",
        "--warmup",
        "0",
        "-q",
        "--json",
        "--db",
        &db,
        "--threshold",
        "p99<10s,status_2xx==200",
        &url(&s, "/page.html"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json_stdout(&out);
    let levels = doc["thresholds"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[1]["run"], "2 clients");
    assert!(levels.iter().all(|l| l["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["passed"] == true)));
    let shown = stdout(&run(&["show", "1", "--db", &db]));
    assert!(
        shown.contains("at 1 clients): 2 passed, 0 crossed"),
        "{shown}"
    );
    assert!(
        shown.contains("at 2 clients): 2 passed, 0 crossed"),
        "{shown}"
    );
}

#[test]
fn malformed_expressions_are_one_line_with_their_column() {
    let cases = [
        ("p99<<20ms", "at column 5: expected a number, found '<'"),
        ("p99<20", "at column 7: expected a latency unit"),
        ("p99=20ms", "at column 4: expected <, <=, >, >= or =="),
        ("latency<1ms", "unknown metric \"latency\""),
        ("errors<0.1%,rps>", "at column 17: expected a number"),
        ("status_7xx==0", "unknown metric"),
        ("", "at column 1: expected a metric"),
    ];
    for (expr, says) in cases {
        for cmd in [
            vec!["bench", "-n", "1", "http://127.0.0.1:9/"],
            vec!["sweep", "-c", "1", "-n", "1", "http://127.0.0.1:9/"],
        ] {
            let mut args = cmd.clone();
            let flag = format!("--threshold={expr}");
            args.insert(1, &flag);
            let out = run(&args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{expr}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{expr}: {err}");
            assert!(err.starts_with("webstand: error: --threshold"), "{err}");
            assert!(err.contains(says), "{expr}: {err}");
            assert!(stdout(&out).is_empty(), "nothing ran: {}", stdout(&out));
        }
    }
    let out = run(&[
        "sweep",
        "--find-max-rate",
        "--slo",
        "p99<<1ms",
        "http://127.0.0.1:9/",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--slo \"p99<<1ms\": at column 5"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_comparison_judges_each_row_and_exits_6_when_one_crosses() {
    let dir = tempfile::tempdir().unwrap();
    let db = path_str(&dir, "h.db");
    let compare = |threshold: &str| {
        let mut args = vec!["--db", db.as_str(), "compare"];
        args.extend(common::short_compare("builtin", "2k", "2", "1s", &[]));
        args.extend(["--threshold", threshold]);
        run(&args)
    };
    let passing = compare("errors==0,rps>1");
    let text = stdout(&passing);
    assert_eq!(passing.status.code(), Some(0), "{text}{}", stderr(&passing));
    assert!(
        text.contains("Thresholds (builtin/2k at 2 clients): 2 passed, 0 crossed"),
        "{text}"
    );
    let failing = compare("errors==0,rps>1000000000");
    let text = stdout(&failing);
    assert_eq!(failing.status.code(), Some(6), "{text}{}", stderr(&failing));
    assert!(
        text.contains("Thresholds (builtin/2k at 2 clients): 1 passed, 1 crossed"),
        "{text}"
    );
    // The history keeps the row's verdicts: `show` prints the same table.
    let shown = stdout(&run(&["show", "last", "--db", &db]));
    assert!(shown.contains("1 passed, 1 crossed"), "{shown}");
}
