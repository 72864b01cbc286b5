//! `compare --scale`: the connection-scaling table, for real, against the lab's builtin and nginx at
//! 32 and 500 keep-alive connections over loopback: a row per server with its requests/s and server
//! CPU-µs per request at each count, the growth of that cost and its resident memory per connection,
//! in the JSON and in the text; every level saved; counts that do not rise, and flags that would
//! change what the table measures, refused in one line.

use crate::common;

use common::lab::{compare_json_in, compare_refused};

const COUNTS: [u64; 2] = [32, 500];

#[test]
fn scale_measures_every_server_at_every_count() {
    let _lab = common::busy_lab();
    let history = tempfile::tempdir().unwrap();
    let db = history.path().join("h.db");
    let args = [
        "--servers",
        "builtin,nginx",
        "--scale",
        "32,500",
        "-d",
        "1s",
        "--warmup",
        "0",
        "--no-features",
    ];
    let (out, doc) = compare_json_in(&db, &args, &[]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let scale = &doc["scale"];
    assert_eq!(scale["workload"], "2k", "{scale}");
    assert_eq!(scale["counts"], serde_json::json!(COUNTS), "{scale}");
    let rows = scale["rows"].as_array().expect("a row per server");
    let names: Vec<&str> = rows.iter().map(|r| r["server"].as_str().unwrap()).collect();
    assert_eq!(names, ["builtin", "nginx"]);
    for r in rows {
        let cells = r["cells"].as_array().unwrap();
        assert_eq!(cells.len(), COUNTS.len(), "{r}");
        for (cell, n) in cells.iter().zip(COUNTS) {
            assert_eq!(cell["connections"], n, "{r}");
            assert!(cell["requests_per_sec"].as_f64().unwrap() > 100.0, "{r}");
            let cpu = cell["server_cpu_us"]
                .as_f64()
                .expect("server CPU per request");
            // A 2 KiB keep-alive answer costs a server microseconds, never nothing nor a millisecond.
            assert!(cpu > 0.5 && cpu < 1000.0, "{r}");
            assert_eq!(cell["error_pct"], 0.0, "{r}");
        }
        let first = cells[0]["server_cpu_us"].as_f64().unwrap();
        let last = cells[1]["server_cpu_us"].as_f64().unwrap();
        let growth = r["cpu_growth"].as_f64().expect("growth");
        assert!((growth - last / first).abs() < 1e-9, "{r}");
        // 468 connections more hold at least their protocol state and at most a generous 1 MiB each.
        let kib = r["kib_per_connection"]
            .as_f64()
            .expect("memory per connection");
        assert!((0.0..1024.0).contains(&kib), "{r}");
    }
    // Every level is in the history with the server's figures, as any comparison's.
    let run = webstand_store::Store::open_existing(Some(&db))
        .unwrap()
        .load_run(1)
        .unwrap();
    for server in ["builtin", "nginx"] {
        let saved: Vec<usize> = run
            .levels
            .iter()
            .filter(|l| l.group == format!("{server}/2k") && l.server.is_some())
            .map(|l| l.clients)
            .collect();
        assert_eq!(saved, [32, 500], "{server}");
    }
}

#[test]
fn the_text_table_has_a_row_per_server_and_a_cell_per_count() {
    let _lab = common::busy_lab();
    let out = common::run(&[
        "compare",
        "-q",
        "--servers",
        "builtin",
        "--scale",
        "8,64",
        "-d",
        "300ms",
        "--warmup",
        "0",
        "--no-features",
    ]);
    let text = common::stdout(&out);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with("Connection scaling"));
    assert!(lines.next().is_some(), "no scaling table in {text}");
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["server", "8", "conns", "64", "conns", "CPU", "×8→64", "KiB/conn"],
        "{text}"
    );
    let row = lines
        .find(|l| l.starts_with("builtin"))
        .unwrap_or_else(|| panic!("no builtin row in {text}"));
    // builtin, then "rps / µs" twice, the growth and the memory per connection.
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells.len(), 9, "{row}");
    for i in [1, 3, 4, 6, 7, 8] {
        assert!(cells[i].parse::<f64>().is_ok(), "cell {i} of {row}");
    }
    assert_eq!((cells[2], cells[5]), ("/", "/"), "{row}");
}

#[test]
fn scale_refuses_counts_that_do_not_rise_and_flags_that_change_the_table() {
    compare_refused(&["--scale", "500,32"], "rising");
    compare_refused(&["--scale", "500"], "two or more");
    for other in [
        &["-c", "8"][..],
        &["--workloads", "small-files"],
        &["--no-keepalive"],
    ] {
        let out = common::run(&[&["compare", "--scale", "32,500"][..], other].concat());
        assert!(!out.status.success(), "{other:?}");
        assert!(
            common::stderr(&out).contains("cannot be used with"),
            "{other:?}: {}",
            common::stderr(&out)
        );
    }
}
