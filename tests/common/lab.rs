//! Helpers of the lab's end-to-end tests: the servers as the lab finds them, a comparison run as the
//! CLI runs it, in a temporary directory of its own, with the check that it left no process behind;
//! its JSON rows.

use std::path::Path;
use webstand_lab::servers::{self, Kind};

/// The server's binary as the lab finds it (ours is the binary under test). CI installs every
/// server (scripts/install-deps.sh): a missing one fails the test, with the lab's own line on how
/// to install it.
pub fn locate(kind: Kind) -> servers::Binary {
    servers::locate(kind, Some(Path::new(env!("CARGO_BIN_EXE_webstand"))))
        .unwrap_or_else(|e| panic!("{e}: CI installs every server the lab knows"))
}

/// `kinds`, each found by [`locate`] (the test fails if one is missing).
pub fn installed(kinds: &[Kind]) -> Vec<Kind> {
    for k in kinds {
        locate(*k);
    }
    kinds.to_vec()
}

/// The lab's kinds of these names.
pub fn kinds(names: &[&str]) -> Vec<Kind> {
    names.iter().map(|n| Kind::parse(n).unwrap()).collect()
}

/// `kinds` as `--servers` lists them.
pub fn names(kinds: &[Kind]) -> String {
    kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(",")
}

/// Processes whose command line names a path under `dir`: every lab server's config, pid file and
/// certificate live under the comparison's temporary directory, so none may be left afterwards.
pub fn processes_under(dir: &Path) -> Vec<String> {
    let dir = dir.display().to_string();
    webstand_lab::procstat::all_processes()
        .into_iter()
        .filter_map(|s| {
            let cmd = std::fs::read(format!("/proc/{}/cmdline", s.pid)).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (cmd.contains(&dir) && s.state != 'Z').then(|| format!("{} {cmd}", s.pid))
        })
        .collect()
}

/// `webstand compare ARGS --json -q --db (a new history)` with its output and the document, its
/// temporary files (docroot, servers' directories, certificate) in a directory of the test's own;
/// asserts that no process of the comparison is left once it returns.
pub fn compare_json(
    args: &[&str],
    env: &[(&str, String)],
) -> (std::process::Output, serde_json::Value) {
    let history = tempfile::tempdir().unwrap();
    compare_json_in(&history.path().join("h.db"), args, env)
}

/// [`compare_json`] saving to the history `db`, which the test reads afterwards.
pub fn compare_json_in(
    db: &Path,
    args: &[&str],
    env: &[(&str, String)],
) -> (std::process::Output, serde_json::Value) {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    // Servers started as root drop to www-data or nobody: they must be able to reach the docroot.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = super::webstand();
    cmd.args(["compare", "--json", "-q", "--db", db.to_str().unwrap()])
        .args(args)
        .env("TMPDIR", tmp.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // Bounded: a comparison that hangs fails the test (with its output) after 3 minutes.
    let out = super::output_within(&mut cmd, std::time::Duration::from_secs(180));
    assert_eq!(processes_under(tmp.path()), Vec::<String>::new());
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, doc)
}

/// `webstand compare ARGS`, which must fail with one line on stderr that contains `want` (bad input
/// is one clear line and a non-zero exit); its output, for further checks.
pub fn compare_refused(args: &[&str], want: &str) -> std::process::Output {
    let all = [&["compare"][..], args].concat();
    let out = super::run(&all);
    let err = super::stderr(&out);
    assert!(!out.status.success(), "{all:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{all:?}: {err}");
    assert!(err.contains(want), "{all:?}: {err}");
    out
}

/// The rows of `workload`'s table in a comparison's JSON.
pub fn rows<'a>(doc: &'a serde_json::Value, workload: &str) -> &'a Vec<serde_json::Value> {
    doc["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workload"] == workload)
        .unwrap_or_else(|| panic!("no {workload} table in {doc}"))["rows"]
        .as_array()
        .unwrap()
}

/// `name`'s entry in a comparison's JSON list of servers.
pub fn server<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {doc}"))
}

/// `name`'s row in `workload`'s table in a comparison's JSON.
pub fn row<'a>(doc: &'a serde_json::Value, workload: &str, name: &str) -> &'a serde_json::Value {
    rows(doc, workload)
        .iter()
        .find(|r| r["server"] == name)
        .unwrap_or_else(|| panic!("no {name} row in {workload}"))
}

/// A comparison's text table, read by column name: its header is the first line of `text` that
/// starts with "server", joined by the headers of the tables after it up to the next workload's (a
/// workload's peaks and their cost are two tables, a row per server in each); columns are at least
/// two spaces apart, and a cell ("both saturated" under "bound by") may hold one.
pub struct TextTable<'a> {
    text: &'a str,
    pub header: Vec<String>,
}

/// One server's row of a [`TextTable`].
pub struct TextRow<'a> {
    pub line: &'a str,
    pub cells: Vec<String>,
    header: Vec<String>,
}

fn cells(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

impl<'a> TextTable<'a> {
    pub fn of(text: &'a str) -> TextTable<'a> {
        let at = text
            .find("\nserver ")
            .map(|i| i + 1)
            .filter(|_| !text.starts_with("server "))
            .unwrap_or(0);
        let end = text[at..]
            .find("\nWorkload: ")
            .map_or(text.len(), |i| at + i);
        let text = &text[at..end];
        let header: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("server "))
            .flat_map(cells)
            .collect();
        assert!(!header.is_empty(), "no header in\n{text}");
        TextTable { text, header }
    }

    /// The lines that start with `server`'s name, one per table, read as one row.
    pub fn row(&self, server: &str) -> TextRow<'a> {
        let lines: Vec<&str> = (self.text.lines())
            .filter(|l| l.starts_with(&format!("{server} ")))
            .collect();
        assert!(!lines.is_empty(), "no {server} row in\n{}", self.text);
        TextRow {
            line: lines[0],
            cells: lines.iter().copied().flat_map(cells).collect(),
            header: self.header.clone(),
        }
    }
}

impl TextRow<'_> {
    /// The cell under `column`.
    pub fn cell(&self, column: &str) -> &str {
        let at = (self.header.iter())
            .position(|h| h == column)
            .unwrap_or_else(|| panic!("no {column} column in {:?}", self.header));
        &self.cells[at]
    }
}
