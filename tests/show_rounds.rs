//! A saved `compare --rounds 3` read back: `show`, `export` (JSON and CSV) and `report` give each
//! level's round as the lab saved it and quote the figures compare printed (the medians of the
//! rounds, not the best round's peak); a history written before the rounds were saved (schema 9)
//! still reads, its rounds told from the saved order, and says so.

use crate::common;

use common::lab::{installed, rows, TextTable};
use std::path::Path;
use webstand_lab::servers::Kind;

/// `webstand ARGS --db DB`, which must succeed; its standard output.
fn ok(db: &Path, args: &[&str]) -> String {
    let out = common::run(&[args, &["--db", db.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{args:?}: {}", common::stderr(&out));
    common::stdout(&out)
}

/// The cells of the report's summary table, one row per series (header first), tags stripped.
fn summary_rows(html: &str) -> Vec<Vec<String>> {
    let start = html.find("<table id=\"summary\"").expect("a summary table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    table
        .split("<tr")
        .skip(1)
        .map(|row| {
            let parts: Vec<&str> = row.split(['<', '>']).collect();
            parts
                .windows(2)
                .filter(|w| w[0] == "td" || w[0] == "th")
                .map(|w| w[1].to_string())
                .collect()
        })
        .collect()
}

/// Two servers over three rounds, client levels falling (2 then 1, so no order of clients tells a
/// round): every reader of the history gives what compare printed.
#[test]
fn a_saved_compare_s_rounds_read_back_as_compare_printed_them() {
    installed(&[Kind::parse("nginx").unwrap()]);
    let history = tempfile::tempdir().unwrap();
    let db = history.path().join("h.db");
    let args = common::short_compare("builtin,nginx", "2k", "2,1", "300ms", &["--rounds", "3"]);
    let (out, doc) = common::lab::compare_json_in(&db, &args, &[]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let live = rows(&doc, "2k");

    // export JSON: every level with the round the lab saved, and compare's medians.
    let exported: serde_json::Value = serde_json::from_str(&ok(&db, &["export", "1"])).unwrap();
    let saved = &exported["comparison"];
    assert_eq!(
        (saved["rounds"].as_u64(), saved["rounds_inferred"].as_bool()),
        (Some(3), Some(false))
    );
    for server in ["builtin", "nginx"] {
        let rounds: Vec<(u64, u64)> = exported["levels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["group"] == format!("{server}/2k"))
            .map(|l| (l["round"].as_u64().unwrap(), l["clients"].as_u64().unwrap()))
            .collect();
        assert_eq!(
            rounds,
            [(1, 2), (1, 1), (2, 2), (2, 1), (3, 2), (3, 1)],
            "{server}"
        );
        let row = |rows: &[serde_json::Value]| {
            rows.iter().find(|r| r["server"] == server).unwrap().clone()
        };
        let (live, back) = (
            row(live),
            row(saved["workloads"][0]["rows"].as_array().unwrap()),
        );
        for figure in [
            "peak_hits_per_sec",
            "p99_ms_at_peak",
            "server_cpu_us",
            "generator_cpu_us",
        ] {
            let (a, b) = (
                live[figure].as_f64().unwrap(),
                back[figure].as_f64().unwrap(),
            );
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                "{server} {figure}: compare {a}, export {b}"
            );
        }
        assert_eq!(live["clients_at_peak"], back["clients_at_peak"], "{server}");
        assert_eq!(live["errors"], back["errors"], "{server}");
    }

    // show: each server once on its Server line, the rounds as saved, each round's sweep apart,
    // and compare's median rows.
    let shown = ok(&db, &["show", "1"]);
    let servers: Vec<&str> = shown
        .lines()
        .filter(|l| l.trim_start().starts_with("Server:"))
        .collect();
    assert_eq!(servers.len(), 2, "one Server line per server:\n{shown}");
    assert!(
        servers[0].contains("builtin") && servers[1].contains("nginx"),
        "{shown}"
    );
    assert!(
        shown.contains("Rounds:   3, each level's round as saved"),
        "{shown}"
    );
    assert!(shown.contains("Medians of 3 rounds"), "{shown}");
    for server in ["builtin", "nginx"] {
        for r in 1..=3 {
            assert!(
                shown.contains(&format!("{server}/2k, round {r} of 3")),
                "{shown}"
            );
        }
        let got = TextTable::of(&shown).row(server);
        let line = got.line;
        let row = live.iter().find(|r| r["server"] == server).unwrap();
        let peak = row["peak_hits_per_sec"].as_f64().unwrap();
        assert_eq!(got.cell("peak hits/s"), format!("{peak:.0}"), "{line}");
        assert_eq!(
            got.cell("clients"),
            row["clients_at_peak"].to_string(),
            "{line}"
        );
    }

    // CSV: one row per level per round, 3 x (2 servers x 2 levels), each with its round.
    let csv = ok(&db, &["export", "1", "--format", "csv"]);
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| lines[0].iter().position(|c| *c == name).unwrap();
    assert_eq!(lines.len(), 1 + 12, "{csv}");
    for r in ["1", "2", "3"] {
        let of_round = lines[1..].iter().filter(|l| l[col("round")] == r).count();
        assert_eq!(of_round, 4, "round {r}:\n{csv}");
    }
    assert!(
        lines[1..].iter().all(|l| l[col("protocol")] == "HTTP/1.1"),
        "{csv}"
    );
    // Both CPU figures, each named for whose it is: the lab measured the server's of every level.
    for l in &lines[1..] {
        for whose in ["generator_cpu_us_per_request", "server_cpu_us_per_request"] {
            let v: f64 = l[col(whose)]
                .parse()
                .unwrap_or_else(|_| panic!("{whose}: {csv}"));
            assert!(v > 0.0, "{whose}: {csv}");
        }
    }

    // report: the summary quotes compare's median peak and clients, and says it is a median.
    let page = history.path().join("r.html");
    ok(&db, &["report", "1", "-o", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let summary = summary_rows(&html);
    for server in ["builtin", "nginx"] {
        let cells = summary
            .iter()
            .find(|r| r[0].starts_with(server))
            .unwrap_or_else(|| panic!("no {server} row in {summary:?}"));
        assert!(cells[0].ends_with("median of 3 rounds"), "{cells:?}");
        let row = live.iter().find(|r| r["server"] == server).unwrap();
        let peak = row["peak_hits_per_sec"].as_f64().unwrap();
        assert_eq!(cells[1], format!("{peak:.0}"), "{server}: {cells:?}");
        assert_eq!(
            cells[2],
            row["clients_at_peak"].to_string(),
            "{server}: {cells:?}"
        );
    }
    assert!(
        html.contains("quotes the median of its rounds"),
        "the report says which it is"
    );
    assert!(
        html.contains("class=\"round-range\""),
        "the charts draw the rounds' range"
    );

    // The same history as schema 9 wrote it (no round column): still read, its rounds told from
    // the saved order, and said so; the figures are the same.
    let old = history.path().join("old.db");
    std::fs::copy(&db, &old).unwrap();
    for ext in ["-wal", "-shm"] {
        let side = format!("{}{ext}", db.display());
        if Path::new(&side).exists() {
            std::fs::copy(&side, format!("{}{ext}", old.display())).unwrap();
        }
    }
    rusqlite::Connection::open(&old)
        .unwrap()
        .execute_batch("ALTER TABLE levels DROP COLUMN round; PRAGMA user_version = 9;")
        .unwrap();
    let shown_old = ok(&old, &["show", "1"]);
    assert!(
        shown_old.contains("Rounds:   3, told from the order the levels were saved"),
        "{shown_old}"
    );
    let tables = |text: &str| text[text.find("Medians of 3 rounds").unwrap()..].to_string();
    assert_eq!(
        tables(&shown_old),
        tables(&shown),
        "the same rounds, told from the order"
    );
    let exported_old: serde_json::Value =
        serde_json::from_str(&ok(&old, &["export", "1"])).unwrap();
    assert_eq!(exported_old["comparison"]["rounds_inferred"], true);
    assert_eq!(exported_old["levels"], exported["levels"]);
    let version: i64 = rusqlite::Connection::open(&old)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 9, "readers change nothing");
}

/// The workload tables of a text, each as printed: "Workload: …" and the peak's cost after it.
fn workload_tables(text: &str) -> Vec<String> {
    let mut tables: Vec<String> = Vec::new();
    for block in text.split("\n\n") {
        if block.starts_with("Workload: ") {
            tables.push(block.to_string());
        } else if let Some(last) = tables
            .last_mut()
            .filter(|_| block.starts_with("What each peak cost on "))
        {
            // The peak's cost is the workload's second table; its notes end it.
            last.push_str("\n\n");
            last.push_str(block);
        }
    }
    tables
}

/// A saved comparison's tables through `show` are the ones compare printed, byte for byte: the same
/// rows built the same way from the same model, its notes (fcgiwrap's CGI, builtin's cache) saved
/// as data and worded again, over two rounds, with a max-users search on 2k (its column rebuilt from
/// the saved probes, judged by the bounds compare's command line gave).
#[test]
fn show_prints_a_saved_compare_s_tables_as_compare_printed_them() {
    use std::os::unix::fs::PermissionsExt;
    installed(&[Kind::parse("nginx").unwrap()]);
    let history = tempfile::tempdir().unwrap();
    // Servers started as root drop to an unprivileged user: they must be able to reach the docroot.
    std::fs::set_permissions(history.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = history.path().join("h.db");
    let mut args = common::short_compare(
        "builtin,nginx",
        "2k,cgi",
        "2,1",
        "300ms",
        &[
            "--rounds",
            "2",
            "--start-clients",
            "1",
            "--max-clients",
            "2",
            "--max-p99-ms",
            "2000",
        ],
    );
    let at = args.iter().position(|a| *a == "--max-users").unwrap();
    args[at + 1] = "2k";
    let tmp = history.path().to_str().unwrap();
    let compared = common::run_with_env(
        &[&["compare", "-q", "--db", db.to_str().unwrap()], &args[..]].concat(),
        &[("TMPDIR", tmp)],
        std::time::Duration::from_secs(180),
    );
    assert!(compared.status.success(), "{}", common::stderr(&compared));
    let printed = common::stdout(&compared);
    let shown = ok(&db, &["show", "1"]);
    let (live, back) = (workload_tables(&printed), workload_tables(&shown));
    assert_eq!(live.len(), 2, "a table per workload:\n{printed}");
    // Read as words: the notes wrap at 120 columns.
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words(&live[1]).contains("nginx: CGI through fcgiwrap")
            && words(&live[0]).contains("served from memory"),
        "the notes compare prints:\n{printed}"
    );
    // The 2k table's max users: a figure (the search found one), not "-".
    let users = live[0]
        .lines()
        .find(|l| l.starts_with("nginx "))
        .and_then(|row| row.split_whitespace().last());
    assert!(
        users.is_some_and(|u| u.trim_end_matches('+').parse::<usize>().is_ok()),
        "no max users in nginx's 2k row:\n{}",
        live[0]
    );
    for (l, b) in live.iter().zip(&back) {
        assert_eq!(l, b, "show's table is not compare's");
    }
    assert_eq!(live.len(), back.len(), "{shown}");
}
