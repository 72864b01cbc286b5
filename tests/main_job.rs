//! `webstand` with no arguments: fixtures, the embedded server, Tenon's sweep and the small-file run,
//! the tables, where results were saved — in about a minute.

use crate::common;

use common::*;
use std::time::{Duration, Instant};

#[test]
#[ignore = "slow (about a minute): scripts/test.sh runs it in its serial phase"]
fn the_main_job_prints_tenons_table_and_the_small_file_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let started = Instant::now();
    let out = run_with_timeout(&["--db", db.to_str().unwrap()], Duration::from_secs(180));
    let took = started.elapsed();
    let text = stdout(&out);
    assert!(out.status.success(), "{}\n{}", text, stderr(&out));
    assert!(
        took < Duration::from_secs(120),
        "the main job took {took:?}"
    );

    let rows = sweep_table(&text);
    for (i, clients) in ["1", "2", "4", "8", "16", "32"].iter().enumerate() {
        let row = &rows[i];
        assert_eq!(row[0], *clients, "{text}");
        let hits: f64 = row[1].parse().unwrap();
        let kbytes: f64 = row[2].parse().unwrap();
        assert!(hits > 0.0, "{text}");
        // Each hit carries the 2 KiB body plus headers.
        assert!(kbytes >= hits * 2.0 * 0.99, "{text}");
    }
    assert!(text.contains("Small files: 1000 × 1 KiB"), "{text}");
    let small_total = text
        .lines()
        .rfind(|l| l.trim_start().starts_with("Total"))
        .unwrap();
    let failed: u64 = small_total
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(failed, 0, "checksummed small files failed: {text}");
    // The main job started the server: its advice never asks for its PID, and each level has one
    // verdict (never "no problem found" beside "server-bound").
    assert!(!text.contains("--server-pid"), "{text}");
    assert!(!text.contains("no problem found; server-bound"), "{text}");
    assert!(
        text.contains("Saved as run ") && text.contains(db.to_str().unwrap()),
        "{text}"
    );
    assert!(db.exists());
}

/// Ctrl-C during the main job, once its first level is saved: the levels measured so far are
/// printed (the interrupted one marked), the run is in the history as interrupted, the exit status
/// is 130, and the embedded server and its fixtures are gone.
#[test]
fn ctrl_c_prints_the_levels_so_far_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let child = webstand()
        .args(["--db", db.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let done = std::thread::spawn(move || child.wait_with_output().unwrap());
    wait_for_levels(&db, 1, Duration::from_secs(60));
    send_signal(pid, libc::SIGINT);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done.is_finished() {
        assert!(
            Instant::now() < deadline,
            "the main job did not stop on Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = done.join().unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(130), "{text}\n{err}");
    let rows = sweep_table(&text);
    assert_eq!(rows[0][0], "1", "{text}");
    assert!(rows[0][1].parse::<f64>().unwrap() > 0.0, "{text}");
    assert!(
        !text.contains("Small files"),
        "the small-file run never started: {text}"
    );
    assert!(text.contains("Saved as run 1"), "{text}");
    let run = webstand_store::Store::open_existing(Some(&db))
        .unwrap()
        .load_run(1)
        .unwrap();
    assert_eq!(run.status, "interrupted");
    assert!(
        (1..=2).contains(&run.levels.len()),
        "{} levels",
        run.levels.len()
    );
    assert!(run.levels[0].result.complete > 0 && !run.levels[0].result.interrupted);
    // The signal may land in the second level's warm-up (nothing measured yet) or in the level
    // itself, which is then kept and marked.
    if run.levels.len() == 2 {
        assert!(run.levels[1].result.interrupted);
        assert!(text.contains("(interrupted)"), "{text}");
    }
    // Nothing left behind: the fixtures directory and the server it named.
    let fixtures = err
        .lines()
        .find_map(|l| l.strip_prefix("webstand: fixtures in "))
        .and_then(|l| l.split(',').next())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        !std::path::Path::new(fixtures).exists(),
        "{fixtures} left behind"
    );
    let server = err
        .lines()
        .find_map(|l| l.split("embedded server on http://").nth(1))
        .and_then(|l| l.split('/').next())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        std::net::TcpStream::connect(server).is_err(),
        "the embedded server on {server} outlived the main job"
    );
}
