//! The Diagnosis's sampler, counted: `webstand bench` runs under `strace -ff` (one trace per thread)
//! against `webstand serve`, and the `diagnosis` thread's system calls are tallied pass by pass.
//!
//! It shares the load thread's CPU when the generator is pinned, so what it costs is the generator's
//! CPU per request (docs/BENCHMARKS.md, "The diagnosis sampler's cost"): it wakes on
//! one timer per pass, at most every 50 ms, and a pass over one load thread is two calls (an `fstat`
//! of /proc/self/task for the thread count, a `pread` of the thread's schedstat, kept open). It
//! opened, listed, read and closed three files every 20 ms before.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

/// The bench's run, in seconds: about 100 passes, so that enough remain after the first STARTING
/// when strace and a loaded machine slow the sampler (under two busy loops, one per core, a 2 s
/// run made between 10 and 20 passes).
const SECONDS: u64 = 5;
/// The sampler's STARTING (crates/diagnosis/src/watch_tasks.rs): it lists the task directory at
/// each of its first this many passes.
const STARTING: usize = 5;

/// Runs `webstand bench --json -k -c 4 --threads 1 -d SECONDS` under strace; returns the diagnosis
/// thread's system call names in order and the bench's JSON.
fn sampler_calls() -> (Vec<String>, serde_json::Value) {
    let strace = common::require("strace");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2k.html"), "a".repeat(2048)).unwrap();
    let server = common::serve(dir.path(), &["--threads", "1"]);
    let traces = tempfile::tempdir().unwrap();
    let prefix = traces.path().join("t");
    let url = format!("http://{}/2k.html", server.addr);
    let seconds = format!("{SECONDS}s");
    let args = ["bench", "--json", "-q", "-k", "-c", "4", "--threads", "1"];
    // Bounded twice: -d and the timeout of coreutils around strace.
    let out = Command::new("timeout")
        .arg("60")
        .arg(&strace)
        .args(["-ff", "-o"])
        .arg(&prefix)
        .arg(env!("CARGO_BIN_EXE_webstand"))
        .args(args)
        .args(["-d", &seconds, &url])
        .env("XDG_DATA_HOME", common::xdg_data_home())
        .output()
        .expect("run strace");
    assert!(
        out.status.success(),
        "bench under strace failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = common::json_stdout(&out);
    let mut sampler: Vec<Vec<String>> = std::fs::read_dir(traces.path())
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .filter(|t| t.contains("PR_SET_NAME, \"diagnosis\""))
        .map(|t| t.lines().map(str::to_string).collect())
        .collect();
    assert_eq!(sampler.len(), 1, "one diagnosis thread");
    (sampler.remove(0), json)
}

/// A trace line's system call name ("openat" of `openat(AT_FDCWD, …) = 3`).
fn name(line: &str) -> &str {
    line.split_once('(').map_or("", |(n, _)| n)
}

/// The calls between consecutive waits of the sampler's timer: one list per pass.
fn passes(lines: &[String]) -> Vec<Vec<&String>> {
    let waits: Vec<usize> = (0..lines.len())
        .filter(|i| name(&lines[*i]) == "futex" && lines[*i].contains("FUTEX_WAIT"))
        .collect();
    waits
        .windows(2)
        .map(|w| lines[w[0] + 1..w[1]].iter().collect())
        .collect()
}

#[test]
fn the_sampler_wakes_on_one_timer_and_reads_open_files_with_two_calls_a_pass() {
    let (lines, json) = sampler_calls();
    let passes = passes(&lines);
    // Every 50 ms over the run and the set-up around it, not every 20 ms (2.5 times as many).
    let most = (SECONDS * 1000 / 50) as usize + 10;
    assert!(
        (10..=most).contains(&passes.len()),
        "{} passes: {lines:#?}",
        passes.len()
    );
    // It sleeps only on its timer (a futex wait with a deadline), never in another call.
    for sleep in [
        "nanosleep",
        "clock_nanosleep",
        "poll",
        "ppoll",
        "select",
        "pselect6",
    ] {
        assert!(
            lines.iter().all(|l| name(l) != sleep),
            "{sleep}: {lines:#?}"
        );
    }
    // A thread's schedstat is opened once and read again with pread; its stat (for the CPU) at
    // its first pass and every 20th.
    let mut opened: BTreeMap<&str, usize> = BTreeMap::new();
    for l in lines.iter().filter(|l| name(l) == "openat") {
        let path = l.split('"').nth(1).unwrap_or("");
        if path.ends_with("/stat") || path.ends_with("/schedstat") {
            *opened.entry(path).or_default() += 1;
        }
    }
    let schedstat: Vec<usize> = (opened.iter())
        .filter(|(p, _)| p.ends_with("/schedstat"))
        .map(|(_, n)| *n)
        .collect();
    assert_eq!(schedstat, [1], "one load thread's, once: {opened:?}");
    let stat = opened.iter().find(|(p, _)| p.ends_with("/stat")).unwrap().1;
    assert!(*stat <= passes.len() / 20 + 2, "{opened:?}");
    // The task list is read at each of the first STARTING passes, while the run starts its
    // threads; after that again only when the thread count changed or every 20 passes.
    let (starting, steady) = passes.split_at(STARTING.min(passes.len()));
    let listings = |passes: &[Vec<&String>]| {
        let calls = passes.iter().flatten();
        calls.filter(|l| name(l) == "getdents64").count() / 2
    };
    assert!(
        listings(starting) <= starting.len(),
        "{} listings in the first {} passes",
        listings(starting),
        starting.len()
    );
    assert!(
        steady.len() >= 10,
        "{} passes after the first {STARTING}",
        steady.len()
    );
    assert!(
        listings(steady) <= steady.len() / 20 + 4,
        "{} listings in {} passes after the first {STARTING}",
        listings(steady),
        steady.len()
    );
    // After those, most passes are the thread count's fstat and one pread per load thread; a slow
    // pass lists the threads again and reads each thread's CPU (open, pread, close).
    let short = steady.iter().filter(|p| p.len() <= 2).count();
    assert!(
        short * 10 >= steady.len() * 8,
        "{short} of {} passes after the first {STARTING} make 2 calls or fewer: {passes:#?}",
        steady.len()
    );
    assert!(passes.iter().all(|p| p.len() <= 12), "{passes:#?}");
    // And the Diagnosis still sees the load thread.
    let threads = &json["diagnosis"]["evidence"]["load_threads"];
    assert_eq!(threads.as_array().map(Vec::len), Some(1), "{json:#}");
    assert!(threads[0]["busy"].as_f64().unwrap() > 0.0, "{json:#}");
}
