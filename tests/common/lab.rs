//! Helpers of the lab's end-to-end tests: a comparison run as the CLI runs it, in a temporary
//! directory of its own, with the check that it left no process behind; its JSON rows.

use std::path::Path;

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
    use std::os::unix::fs::PermissionsExt;
    let history = tempfile::tempdir().unwrap();
    let db = history.path().join("h.db");
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
    let out = cmd.output().unwrap();
    assert_eq!(processes_under(tmp.path()), Vec::<String>::new());
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, doc)
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
