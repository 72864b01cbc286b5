//! One duration grammar for every command (crates/duration): a bad value gets the same one-line
//! error from each command and flag that takes a duration, and `5h` or `1h 30m` is accepted by
//! each of them. The grammar's own cases are unit tests in crates/duration.

use crate::common;

use common::{json_stdout, run_with_timeout, serve, stderr};
use std::time::Duration;

const NOWHERE: &str = "http://127.0.0.1:9/";

/// Runs `webstand ARGS…` and asserts it refused with one line naming the flag and the bad value.
fn refuses(args: &[&str], flag: &str, value: &str, reason: &str) {
    let out = run_with_timeout(args, Duration::from_secs(30));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    let expected = format!("bad duration '{value}': {reason}");
    assert!(
        err.starts_with("webstand: error: ") && err.contains(flag) && err.contains(&expected),
        "{args:?}: {err}"
    );
}

#[test]
fn a_bad_duration_gets_one_line_from_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let unit = "unknown time unit \"x\"";
    for (args, flag) in [
        (vec!["bench", "-d", "5x", NOWHERE], "-d: "),
        (vec!["sweep", NOWHERE, "-d", "5x"], "-d: "),
        (vec!["sweep", NOWHERE, "--warmup", "5x"], "--warmup: "),
        (vec!["sweep", NOWHERE, "--timeout", "5x"], "--timeout: "),
        (vec!["compare", "-d", "5x"], ""),
        (vec!["compare", "--timeout", "5x"], ""),
        (vec!["compare", "--warmup", "5x"], ""),
        (
            vec!["serve", root, "--idle-timeout", "5x"],
            "--idle-timeout: ",
        ),
        (
            vec!["serve", root, "--cgi-timeout", "5x"],
            "--cgi-timeout: ",
        ),
        (vec!["probe", "--max-time", "5x", NOWHERE], "--max-time: "),
    ] {
        refuses(&args, flag, "5x", unit);
    }
    // Zero is refused where it would mean "never" or "at once"; too long is refused everywhere.
    for (args, flag) in [
        (vec!["bench", "-d", "0", NOWHERE], "-d: "),
        (vec!["sweep", NOWHERE, "-d", "0s"], "-d: "),
        (vec!["compare", "-d", "0"], ""),
        (vec!["probe", "--max-time", "0ms", NOWHERE], "--max-time: "),
    ] {
        let zero = args[args.iter().position(|a| a.starts_with('0')).unwrap()];
        refuses(&args, flag, zero, "must be more than zero");
    }
    refuses(
        &["bench", "-d", "11y", NOWHERE],
        "-d: ",
        "11y",
        "too long (at most 10 years)",
    );
}

#[test]
fn a_bad_duration_in_serves_config_file_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("serve.toml");
    std::fs::write(&config, "idle_timeout = \"5x\"\n").unwrap();
    let out = run_with_timeout(
        &[
            "serve",
            dir.path().to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
        Duration::from_secs(30),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad duration '5x'"), "{err}");
}

/// `5h` and `1h 30m` read the same in every command: each accepts them (the run itself is bounded
/// by its request count), and bench's run is limited to five hours (its JSON's time limit: 18000 s),
/// ended early by its -n.
#[test]
fn hours_are_accepted_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.html"), "hello").unwrap();
    let config = dir.path().join("serve.toml");
    std::fs::write(&config, "idle_timeout = \"1h 30m\"\nheader_timeout = 5\n").unwrap();
    let server = serve(
        dir.path(),
        &["--config", config.to_str().unwrap(), "--io-timeout", "5h"],
    );
    let url = format!("http://{}/a.html", server.addr);
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    for args in [
        vec!["bench", "-n", "20", "-d", "5h", "-q", "--db", db, &url],
        vec![
            "sweep",
            &url,
            "-c",
            "1",
            "-n",
            "20",
            "-d",
            "1h 30m",
            "--warmup",
            "0",
            "--timeout",
            "5h",
            "-q",
            "--db",
            db,
        ],
        vec!["probe", "--max-time", "5h", "--list"],
    ] {
        let out = run_with_timeout(&args, Duration::from_secs(60));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let args = [
        "bench", "-n", "20", "-d", "5h", "--json", "-q", "--db", db, &url,
    ];
    let out = run_with_timeout(&args, Duration::from_secs(60));
    let run = json_stdout(&out);
    assert_eq!(run["time_limit_secs"], 18000.0, "{run}");
    assert_eq!(run["complete"], 20, "{run}");
    assert!(run["elapsed_secs"].as_f64().unwrap() < 60.0, "{run}");
    // Without -d, no time limit.
    let out = run_with_timeout(
        &["bench", "-n", "1", "--json", "-q", "--db", db, &url],
        Duration::from_secs(60),
    );
    assert_eq!(
        json_stdout(&out)["time_limit_secs"],
        serde_json::Value::Null
    );
}
