//! `webstand bench`'s figures that explain themselves, over real sockets against `webstand serve`:
//! the report says how many load threads ran, where, and how they waited, and splits the
//! generator's time into work and waiting (spin, nap, block) in the text and the JSON, the busy
//! fraction being work alone; a `--latency` run has wrk's Thread Stats lines, in wrk's layout and
//! agreeing with wrk's own against the same server; sub-millisecond latencies get a finer table
//! than ab's column of zeros.

use crate::common;

use common::*;
use std::process::Command;
use std::time::Duration;

/// A docroot holding Tenon's 2 KiB page, served by `webstand serve` on one thread; the URL.
fn serve_2k() -> (tempfile::TempDir, Running, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2k.html"), vec![b'a'; 2048]).unwrap();
    let serve = serve(dir.path(), &["--threads", "1"]);
    let url = format!("http://{}/2k.html", serve.addr);
    (dir, serve, url)
}

/// `webstand bench ARGS…` under `taskset -c CPUS` (bounded): its output.
fn bench_on(cpus: &str, args: &[&str]) -> std::process::Output {
    let db = scratch().join("bench_figures.db");
    let mut cmd = Command::new(require("taskset"));
    cmd.args(["-c", cpus]).arg(env!("CARGO_BIN_EXE_webstand"));
    cmd.args(["bench", "-q", "--db", db.to_str().unwrap()])
        .args(args);
    output_within(&mut cmd, Duration::from_secs(60))
}

#[test]
fn the_report_says_how_the_load_threads_ran_and_waited() {
    let (_dir, _serve, url) = serve_2k();
    // One load thread on a CPU of its own (of two online): auto spins before it blocks.
    let out = bench_on(
        "1",
        &["-k", "-c", "8", "-n", "20000", "--threads", "1", &url],
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "\nLoad threads:           1, pinned to CPU 1; waiting: spin ≤20 µs, then block\n"
        ),
        "{text}"
    );
    assert!(text.contains("\nGenerator time:         work "), "{text}");
    assert!(text.contains("\nGenerator CPU:          "), "{text}");
    // Unpinned (both CPUs), spin off: no spin, and said so.
    let out = bench_on(
        "0,1",
        &[
            "-k",
            "-c",
            "8",
            "-n",
            "5000",
            "--threads",
            "2",
            "--spin",
            "off",
            &url,
        ],
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "\nLoad threads:           2, not pinned (2 online); waiting: block, no spin"
        ),
        "{text}"
    );
}

#[test]
fn the_generators_time_splits_into_work_and_waiting_and_busy_is_work_alone() {
    let (_dir, _serve, url) = serve_2k();
    let out = bench_on(
        "1",
        &[
            "--json",
            "-k",
            "-c",
            "8",
            "-d",
            "1s",
            "--threads",
            "1",
            &url,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json_stdout(&out);
    let elapsed = v["elapsed_secs"].as_f64().unwrap();
    let g = &v["generator"];
    let f = |k: &str| g[k].as_f64().unwrap_or_else(|| panic!("no {k} in {g}"));
    assert_eq!(g["load_threads"], 1, "{g}");
    assert_eq!(g["pinned"], true, "{g}");
    assert_eq!(g["cpus"], serde_json::json!([1]), "{g}");
    assert_eq!(f("spin_window_us"), 20.0, "{g}");
    // CPU = work + spin; the spin is there (a fast server on loopback answers within 20 µs often).
    assert!(
        (f("cpu_secs") - f("work_secs") - f("spin_secs")).abs() < 1e-6,
        "{g}"
    );
    assert!(f("spin_secs") > 0.0, "{g}");
    // Waiting off the CPU is measured too, and the thread's time adds up to no more than the run.
    assert!(f("block_secs") + f("nap_secs") > 0.0, "{g}");
    assert!(
        f("cpu_secs") + f("block_secs") + f("nap_secs") <= elapsed * 1.05,
        "{g} in {elapsed} s"
    );
    let t = &v["load_threads"][0];
    let busy = t["busy_fraction"].as_f64().unwrap();
    assert!(
        (busy - t["work_secs"].as_f64().unwrap() / elapsed).abs() < 1e-6,
        "busy is work ÷ elapsed: {t}"
    );
    // Per request: work + spin = the generator's CPU per request.
    let per = f("work_us_per_request") + f("spin_us_per_request");
    let cpu = f("cpu_secs") * 1e6 / v["complete"].as_f64().unwrap();
    assert!((per - cpu).abs() < 0.01 * cpu, "{per} vs {cpu}: {g}");
    // The verdict is judged on work: a generator-bound finding, if any, names its work and spin.
    let d = &v["diagnosis"];
    if d["verdict"] == "generator" {
        let evidence = d["findings"][0]["evidence"].as_str().unwrap();
        assert!(
            evidence.contains("worked") || evidence.contains("which another program was using"),
            "{d:#}"
        );
        assert!(busy >= 0.9 || evidence.contains("another program"), "{d:#}");
    }
}

/// The cells of a Thread Stats row ("Latency" or "Req/Sec"): average, deviation, max, ± deviation.
fn thread_stats_row(text: &str, name: &str) -> Vec<String> {
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with(name))
        .unwrap_or_else(|| panic!("no {name} row in {text}"));
    row.split_whitespace().skip(1).map(String::from).collect()
}

/// A wrk time ("63.00us", "1.26ms", "2.10s") in µs.
fn wrk_time_us(t: &str) -> f64 {
    for (unit, scale) in [("us", 1.0), ("ms", 1e3), ("s", 1e6)] {
        if let Some(n) = t.strip_suffix(unit) {
            return n.parse::<f64>().unwrap() * scale;
        }
    }
    panic!("not a wrk time: {t}")
}

/// A wrk count ("512.00", "23.06k", "1.20M").
fn wrk_metric(t: &str) -> f64 {
    for (unit, scale) in [("k", 1e3), ("M", 1e6)] {
        if let Some(n) = t.strip_suffix(unit) {
            return n.parse::<f64>().unwrap() * scale;
        }
    }
    t.parse().unwrap()
}

#[test]
fn a_latency_run_has_wrks_thread_stats_and_a_table_finer_than_whole_milliseconds() {
    let (_dir, _serve, url) = serve_2k();
    let wrk = Command::new(require("wrk"))
        .args(["-t2", "-c8", "-d1s", "--latency", &url])
        .output()
        .unwrap();
    let theirs = stdout(&wrk);
    assert!(wrk.status.success(), "{theirs}");
    let out = bench_on(
        "0,1",
        &[
            "-k",
            "-c",
            "8",
            "-d",
            "1s",
            "--threads",
            "2",
            "--latency",
            &url,
        ],
    );
    let ours = stdout(&out);
    assert!(out.status.success(), "{ours}{}", stderr(&out));
    // wrk's header line, as wrk prints it.
    let header = "  Thread Stats   Avg      Stdev     Max   +/- Stdev";
    assert!(theirs.contains(header), "{theirs}");
    assert!(ours.contains(header), "{ours}");
    for text in [&theirs, &ours] {
        let lat = thread_stats_row(text, "Latency");
        let req = thread_stats_row(text, "Req/Sec");
        assert_eq!((lat.len(), req.len()), (4, 4), "{text}");
        assert!(lat[3].ends_with('%') && req[3].ends_with('%'), "{text}");
        let (avg, max) = (wrk_time_us(&lat[0]), wrk_time_us(&lat[2]));
        assert!(avg > 0.0 && avg <= max, "{text}");
        assert!(wrk_metric(&req[0]) > 0.0, "{text}");
    }
    // Our Latency average is the run's measured mean; Req/Sec's, each thread's own rate (near the
    // run's ÷ 2), with no note that it was estimated.
    assert!(!ours.contains("Req/Sec estimated"), "{ours}");
    let field = |name: &str| -> f64 {
        ours.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no {name} in {ours}"))
            .parse()
            .unwrap()
    };
    let rps = field("Requests per second:");
    let per_thread = wrk_metric(&thread_stats_row(&ours, "Req/Sec")[0]);
    assert!(
        per_thread * 2.0 >= rps * 0.7 && per_thread * 2.0 <= rps * 1.3,
        "2 × {per_thread} against {rps} req/s: {ours}"
    );
    // ab's whole-millisecond table keeps ab's format; a finer one stands beside it with the
    // sub-millisecond median it rounds to 0.
    assert!(
        ours.contains("Percentage of the requests served within a certain time (ms)\n  50%"),
        "{ours}"
    );
    let ab_median: u64 = ours
        .lines()
        .find_map(|l| l.strip_prefix("  50%"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let fine = ours
        .split("The same percentiles, finer (ms)\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no finer table: {ours}"));
    let fine_median: f64 = fine
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("  50%"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(fine_median > 0.0, "{ours}");
    assert_eq!(ab_median, (fine_median + 0.5).floor() as u64, "{ours}");
}

#[test]
fn show_reprints_a_latency_run_as_it_was_printed() {
    let (_dir, _serve, url) = serve_2k();
    // A history of its own, so that `show last` is this run whatever else runs beside it.
    let db = scratch().join("latency_show.db");
    let db = db.to_str().unwrap();
    let bench = run(&[
        "--db",
        db,
        "bench",
        "-k",
        "-c",
        "4",
        "-n",
        "3000",
        "--latency",
        &url,
    ]);
    let printed = stdout(&bench);
    assert!(bench.status.success(), "{printed}{}", stderr(&bench));
    let show = run(&["--db", db, "show", "last"]);
    let shown = stdout(&show);
    assert!(show.status.success(), "{shown}{}", stderr(&show));
    // From ab's first figure to the end of the latency tables, byte for byte: wrk's Thread Stats,
    // ab's whole-millisecond table and the finer one are all kept, not only the figures.
    let report = |text: &str| -> String {
        let from = text
            .find("Server Software:")
            .unwrap_or_else(|| panic!("no report in {text}"));
        let part = &text[from..];
        let to = part.find("\nSaved as run").unwrap_or(part.len());
        part[..to].trim_end().to_string()
    };
    let (printed, shown) = (report(&printed), report(&shown));
    for part in [
        "  Thread Stats   Avg      Stdev     Max   +/- Stdev",
        "Percentage of the requests served within a certain time (ms)",
        "The same percentiles, finer (ms)",
    ] {
        assert!(shown.contains(part), "{part:?} not in show's {shown}");
    }
    assert_eq!(shown, printed);
}
