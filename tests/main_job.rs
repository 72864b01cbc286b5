//! `webstand` with no arguments: fixtures, the embedded server, Tenon's sweep and the small-file run,
//! the tables, where results were saved — in about a minute.

mod common;

use common::*;
use std::time::{Duration, Instant};

#[test]
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

    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let header = rows
        .iter()
        .position(|r| r[..] == ["Clients", "Hits/Sec.", "Kbytes/Sec."])
        .unwrap_or_else(|| panic!("{text}"));
    for (i, clients) in ["1", "2", "4", "8", "16", "32"].iter().enumerate() {
        let row = &rows[header + 1 + i];
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
    assert!(
        text.contains("Saved as run ") && text.contains(db.to_str().unwrap()),
        "{text}"
    );
    assert!(db.exists());
}
