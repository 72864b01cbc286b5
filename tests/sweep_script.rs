//! `sweep -s FILE` and `compare -s FILE`: the same wrk script runs with every level, its
//! arguments after `--` reach `init`, the server sees the script's requests, and `done()` is
//! called once per measured level (not for warm-ups) with that level's figures.

use crate::common;
use common::recording_server::RecordingServer;
use common::{run_with_timeout, scratch, stderr, stdout};
use std::path::PathBuf;
use std::time::Duration;

fn script(name: &str, text: &str) -> PathBuf {
    let dir = scratch().join("sweep-scripts");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A request per call with the argument in its path and its own header; `done()` says which level
/// it saw, with the threads' count of good responses.
const TAGGED: &str = r#"
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) tag = args[1] end
function request()
  return wrk.format("GET", "/tagged?" .. tag, { ["X-Tag"] = tag })
end
good = 0
function response(status, headers, body)
  if status == 200 and body == "hello" then good = good + 1 end
end
function done(summary)
  local g = 0
  for _, t in ipairs(threads) do g = g + t:get("good") end
  print("done " .. #threads .. " threads " .. summary.requests .. " requests " .. g .. " good")
end
"#;

#[test]
fn sweep_runs_the_script_at_every_level_and_done_once_per_level() {
    let srv = RecordingServer::start();
    let file = script("tagged.lua", TAGGED);
    let db = scratch().join("sweep_script.db");
    let url = srv.url("/start");
    let args = [
        "sweep",
        &url,
        "-c",
        "1,2",
        "--threads",
        "1",
        "-n",
        "40",
        "--warmup",
        "200ms",
        "-k",
        "-q",
        "--db",
        db.to_str().unwrap(),
        "-s",
        file.to_str().unwrap(),
        "--",
        "blue",
    ];
    let out = run_with_timeout(&args, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let done: Vec<&str> = text.lines().filter(|l| l.starts_with("done ")).collect();
    // Two levels, one done() each (the warm-ups call none), each with its own level's figures.
    assert_eq!(
        done,
        [
            "done 1 threads 40 requests 40 good",
            "done 1 threads 40 requests 40 good"
        ],
        "{text}"
    );
    // The history keeps the script's name and digest: `show` says them, `diff` sets them apart
    // from a run without the script (run 2, below).
    let sum = std::process::Command::new("sha256sum")
        .arg(&file)
        .output()
        .unwrap();
    let sha = String::from_utf8(sum.stdout).unwrap();
    let sha = sha.split_whitespace().next().unwrap().to_string();
    let db_s = db.to_str().unwrap();
    let show = run_with_timeout(&["show", "--db", db_s, "1"], Duration::from_secs(60));
    let show = stdout(&show);
    assert!(
        show.contains(&format!("Script:   tagged.lua (sha256 {sha})")),
        "{show}"
    );
    let seen = srv.take();
    assert!(seen.len() >= 80, "{}", seen.len());
    for s in &seen {
        assert_eq!(
            (s.method.as_str(), s.path.as_str()),
            ("GET", "/tagged?blue")
        );
        assert_eq!(s.headers.get("x-tag").map(String::as_str), Some("blue"));
    }
    // A timeout given to -s is still the timeout; a script with --find-max-users is refused.
    let plain = run_with_timeout(
        &[
            "sweep",
            &url,
            "-c",
            "1",
            "-n",
            "5",
            "--warmup",
            "0",
            "-s",
            "2s",
            "-q",
            "--db",
            db.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    let show = stdout(&run_with_timeout(
        &["show", "--db", db_s, "2"],
        Duration::from_secs(60),
    ));
    assert!(!show.contains("Script:"), "{show}");
    let diff = stdout(&run_with_timeout(
        &["diff", "--db", db_s, "1", "2"],
        Duration::from_secs(60),
    ));
    let line = diff
        .lines()
        .find(|l| l.trim_start().starts_with("script "))
        .unwrap_or_else(|| panic!("{diff}"));
    assert!(
        line.contains(&format!("tagged.lua {}", &sha[..12])),
        "{diff}"
    );
    let refused = run_with_timeout(
        &[
            "sweep",
            &url,
            "--find-max-users",
            "-s",
            file.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--find-max-users"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn compare_runs_the_script_with_every_level_of_every_row() {
    // The 2k workload's page: 2,048 bytes.
    let text = TAGGED
        .replace("/tagged?", "/2k.html?")
        .replace("body == \"hello\"", "#body == 2048");
    let file = script("compare.lua", &text);
    let (out, doc) = common::lab::compare_json(
        &[
            "--servers",
            "builtin",
            "--workloads",
            "2k",
            "-c",
            "1,2",
            "-n",
            "30",
            "--warmup",
            "0",
            "-s",
            file.to_str().unwrap(),
            "--",
            "x",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(doc.is_object(), "{}", stdout(&out));
    // Under --json the script prints to stderr: one done() per level of the one row.
    let err = stderr(&out);
    let done: Vec<&str> = err.lines().filter(|l| l.starts_with("done ")).collect();
    assert_eq!(done.len(), 2, "{err}");
    for d in done {
        assert!(d.ends_with(" 30 requests 30 good"), "{d}");
    }
}
