//! Every table and the sentences around it fit 120 columns, by layout rather than by cutting: a
//! sweep (its full layout as two tables, throughput then latency; Tenon's; WebStone's) with a level
//! of 404s flagged, a comparison over two rounds with a max-users search and over HTTPS with HTTP/2,
//! `show` of each (a sweep in ab's layout too), `diff` between them and `history` of them all. And a
//! level with no successful response has no latency histogram to export: `export --format hgrm`
//! says so in one line and exits 1, the CSV leaves its latencies empty rather than zero; `show`
//! and `diff` print dashes for them.

use crate::common;

use common::{quick_compare, run, serve, short_compare, stderr, stdout};

/// The widest line a report may print (`webstand_results::text::REPORT_WIDTH`).
const WIDTH: usize = 120;

/// Fails naming every line of `text` (`what` printed it) wider than [`WIDTH`] columns.
fn assert_fits(what: &str, text: &str) {
    let wide: Vec<String> = (text.lines())
        .filter(|l| l.chars().count() > WIDTH)
        .map(|l| format!("{:>4}: {l}", l.chars().count()))
        .collect();
    assert!(
        wide.is_empty(),
        "{what}: lines wider than {WIDTH} columns:\n{}",
        wide.join("\n")
    );
    assert!(!text.trim().is_empty(), "{what} printed nothing");
}

/// `webstand ARGS --db DB`, which must exit with `code`; its standard output.
fn ran(db: &str, args: &[&str], code: i32) -> String {
    let mut all = args.to_vec();
    all.extend(["--db", db]);
    let out = run(&all);
    assert_eq!(out.status.code(), Some(code), "{all:?}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn sweeps_comparisons_show_and_diff_fit_120_columns() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    assert!(run(&["fixtures", www.to_str().unwrap()]).status.success());
    let db = dir.path().join("h.db").to_string_lossy().into_owned();
    let server = serve(&www, &[]);
    let url = format!("http://{}/2k.html", server.addr);
    let sweep = [
        "sweep", &url, "-c", "1,4", "-d", "300ms", "--warmup", "0", "-q",
    ];
    let text = ran(&db, &sweep, 0);
    assert!(
        text.contains("Throughput\n") && text.contains("Latency (ms)\n"),
        "{text}"
    );
    assert_fits("sweep", &text);
    // A level of 404s is flagged at its row's end, after what bound it.
    let missing = format!("http://{}/nosuch.html", server.addr);
    let text = ran(
        &db,
        &[
            "sweep", &missing, "-c", "1,4", "-d", "300ms", "--warmup", "0", "-q",
        ],
        4,
    );
    assert!(text.contains("<< MOSTLY ERRORS: 100.0 %"), "{text}");
    assert_fits("sweep of 404s", &text);
    for table in ["full", "tenon", "webstone", "ab"] {
        for run in ["1", "2"] {
            assert_fits(
                &format!("show {run} --table {table}"),
                &ran(&db, &["show", run, "--table", table], 0),
            );
        }
    }
    // A sweep in ab's layout: ab's report for each level, as `sweep --table ab` prints it.
    let ab = ran(&db, &["show", "1", "--table", "ab"], 0);
    assert_eq!(ab.matches("Concurrency Level:").count(), 2, "{ab}");
    assert!(
        ab.contains("Requests per second:") && ab.contains("Peak: "),
        "{ab}"
    );
    let rounds = quick_compare(
        "builtin,nginx",
        &[
            "--warmup",
            "0",
            "--rounds",
            "2",
            "--max-users",
            "2k",
            "--start-clients",
            "2",
            "--max-clients",
            "4",
            "-q",
        ],
    );
    let mut args = vec!["compare"];
    args.extend(rounds);
    let text = ran(&db, &args, 0);
    assert!(text.contains("What each peak cost on 2k"), "{text}");
    assert_fits("compare --rounds 2 --max-users 2k", &text);
    let tls = short_compare(
        "builtin,nginx",
        "h2",
        "1",
        "300ms",
        &["--tls", "--h2", "-q"],
    );
    let mut args = vec!["compare"];
    args.extend(tls);
    assert_fits("compare --tls --h2", &ran(&db, &args, 0));
    for id in ["3", "4"] {
        assert_fits(&format!("show {id}"), &ran(&db, &["show", id], 0));
    }
    assert_fits("diff 1 3", &ran(&db, &["diff", "1", "3"], 0));
    assert_fits("diff 1 2", &ran(&db, &["diff", "1", "2"], 0));
    // A comparison has no ab layout: said in one line, with what to use instead.
    let out = run(&["show", "3", "--table", "ab", "--db", &db]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.trim_end().lines().count() == 1 && err.contains("use --table full, tenon or webstone"),
        "{err}"
    );
    // The history of sweeps, comparisons over HTTPS and HTTP/2, and a sweep of 404s.
    let history = ran(&db, &["history"], 0);
    assert_eq!(history.lines().count(), 1 + 4, "{history}");
    assert_fits("history", &history);
}

#[test]
fn a_level_without_a_successful_response_exports_no_histogram() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db").to_string_lossy().into_owned();
    let port = common::closed_port();
    let url = format!("http://127.0.0.1:{}/", port.port);
    ran(&db, &["bench", "-n", "20", "-c", "2", "-q", &url], 4);
    let mut args = vec!["export", "1", "--format", "hgrm", "--db", &db];
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(stdout(&out), "", "no histogram on standard output");
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("run 1 level 1 has no successful response (")
            && err.contains(" failed, 0 non-2xx)"),
        "{err}"
    );
    args[3] = "csv";
    let csv = stdout(&run(&args));
    let (header, row) = csv.split_once('\n').unwrap();
    let cell = |name: &str| {
        let at = header.split(',').position(|h| h == name).unwrap();
        row.trim_end().split(',').nth(at).unwrap().to_string()
    };
    for column in [
        "latency_mean_ms",
        "latency_p99_ms",
        "latency_max_ms",
        "generator_cpu_us_per_request",
    ] {
        assert_eq!(cell(column), "", "{column}: {csv}");
    }
    assert_ne!(cell("failed"), "0", "{csv}");
    // The JSON has null for what is per complete request.
    args[3] = "json";
    let json: serde_json::Value = serde_json::from_str(&stdout(&run(&args))).unwrap();
    let figures = &json["levels"][0]["result"]["figures"];
    for figure in ["mean_latency_secs", "littles_load", "cpu_us_per_request"] {
        assert!(figures[figure].is_null(), "{figure}: {figures}");
    }
    // diff with a run that was answered: the latencies of the side without a response, and their
    // ratios, are dashes; its hits/s were measured (0).
    let www = dir.path().join("www");
    assert!(run(&["fixtures", www.to_str().unwrap()]).status.success());
    let server = serve(&www, &[]);
    let answered = format!("http://{}/2k.html", server.addr);
    ran(&db, &["bench", "-n", "20", "-c", "2", "-q", &answered], 0);
    let diff = ran(&db, &["diff", "2", "1"], 0);
    let cells = |metric: &str| -> Vec<String> {
        let line = diff.lines().find(|l| l.starts_with(metric)).unwrap();
        line[metric.len()..]
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    for metric in [
        "Mean latency ms",
        "p50 ms",
        "p99 ms",
        "Max ms",
        "Little's load",
    ] {
        assert_eq!(&cells(metric)[1..3], ["-", "-"], "{metric}: {diff}");
    }
    assert_eq!(cells("Hits/s")[1], "0.000", "{diff}");
}
