//! `--live`: the terminal view in a real terminal (tmux runs bench and sweep against `webstand
//! serve`; what the pane shows is read with capture-pane), the report printed once it closes,
//! Ctrl-C in the view still stopping the run with its report, and the plain lines written instead
//! when stdout is not a terminal.

use crate::common;

use common::{field, require, run, serve, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of the test's own (its socket in a scratch directory), killed when dropped.
struct Tmux {
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmux {
    /// A detached 120×40 session running `shell` (through sh), kept open after it ends.
    fn start(shell: &str) -> Tmux {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("tmux.sock");
        let t = Tmux { socket, _dir: dir };
        let ok = t
            .cmd(&[
                "new-session",
                "-d",
                "-x",
                "120",
                "-y",
                "40",
                "sh",
                "-c",
                shell,
            ])
            .status()
            .unwrap();
        assert!(ok.success(), "tmux new-session");
        t.cmd(&["set-option", "-g", "remain-on-exit", "on"])
            .status()
            .unwrap();
        t
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(require("tmux"));
        c.arg("-S").arg(&self.socket).args(args);
        c
    }

    /// What the pane shows now, with the lines scrolled above it (a report is longer than the pane;
    /// the view's alternate screen never goes into that history).
    fn screen(&self) -> String {
        let out = self
            .cmd(&["capture-pane", "-p", "-S", "-"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the pane shows every one of `texts`; returns the screen.
    fn wait_for(&self, texts: &[&str], limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let s = self.screen();
            if texts.iter().all(|t| s.contains(t)) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "the pane never showed {texts:?}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &str) {
        assert!(self.cmd(&["send-keys", keys]).status().unwrap().success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).status();
    }
}

/// The shell line that runs `webstand ARGS` in the pane and then shows its exit status (the shell
/// itself outlives a Ctrl-C: a trapped signal is the default again in its child).
fn in_pane(args: &str, dir: &Path) -> String {
    format!(
        "trap : INT; TMPDIR={} XDG_DATA_HOME={} {} {args}; echo EXIT=$?; sleep 60",
        dir.display(),
        common::xdg_data_home().display(),
        env!("CARGO_BIN_EXE_webstand")
    )
}

fn docroot() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1k.html"), [b'x'; 1024]).unwrap();
    dir
}

#[test]
fn bench_live_draws_the_view_then_prints_the_report() {
    let dir = docroot();
    let server = serve(dir.path(), &[]);
    let url = format!("http://{}/1k.html", server.addr);
    let tmux = Tmux::start(&in_pane(
        &format!("bench --live -k -c 8 -t 4 -n 100000000 {url}"),
        dir.path(),
    ));
    // While it runs: every part of the view, with figures in it.
    let view = tmux.wait_for(
        &[
            "Requests/s",
            "Latency",
            "p99",
            "max",
            "Status",
            "2xx:",
            "Errors",
            "connect: 0",
            "8 open",
            "% busy",
            "Latency histogram",
        ],
        Duration::from_secs(20),
    );
    assert!(view.contains("webstand bench"), "{view}");
    let complete: u64 = view
        .lines()
        .find_map(|l| l.split("Complete").nth(1))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no Complete count in\n{view}"));
    assert!(complete > 0, "{view}");
    // Then the view closes and the usual report is on the screen.
    let report = tmux.wait_for(&["EXIT=0", "Complete requests:"], Duration::from_secs(30));
    assert!(
        !report.contains("Latency histogram"),
        "the view is gone:\n{report}"
    );
    assert!(
        field(&report, "Failed requests:").starts_with('0'),
        "{report}"
    );
}

#[test]
fn ctrl_c_in_the_view_stops_the_run_with_its_report() {
    let dir = docroot();
    let server = serve(dir.path(), &[]);
    let url = format!("http://{}/1k.html", server.addr);
    let tmux = Tmux::start(&in_pane(
        &format!("bench --live -k -c 4 -t 60 -n 100000000 {url}"),
        dir.path(),
    ));
    tmux.wait_for(&["Requests/s", "2xx:"], Duration::from_secs(20));
    let pressed = Instant::now();
    tmux.keys("C-c");
    let report = tmux.wait_for(
        &["EXIT=130", "Complete requests:", "stopped by Ctrl-C"],
        Duration::from_secs(30),
    );
    assert!(pressed.elapsed() < Duration::from_secs(30));
    assert!(!report.contains("Latency histogram"), "{report}");
}

#[test]
fn sweep_live_shows_each_level() {
    let dir = docroot();
    let server = serve(dir.path(), &[]);
    let url = format!("http://{}/1k.html", server.addr);
    let db = dir.path().join("history.db");
    let tmux = Tmux::start(&in_pane(
        &format!("--db {} sweep --live -c 2,6 -d 3 {url}", db.display()),
        dir.path(),
    ));
    tmux.wait_for(
        &["webstand sweep", "level 1/2", "2 clients"],
        Duration::from_secs(20),
    );
    let view = tmux.wait_for(
        &["webstand sweep · level 2/2 · 6 clients · ", "6 open"],
        Duration::from_secs(30),
    );
    // The title names the level's clients once.
    let title = view
        .lines()
        .find(|l| l.starts_with("webstand sweep"))
        .unwrap_or_else(|| panic!("no title in\n{view}"));
    assert_eq!(title.matches("clients").count(), 1, "{title}");
    let report = tmux.wait_for(&["EXIT=0"], Duration::from_secs(30));
    assert!(!report.contains("Latency histogram"), "{report}");
}

#[test]
fn without_a_terminal_live_writes_plain_lines() {
    let dir = docroot();
    let server = serve(dir.path(), &[]);
    let url = format!("http://{}/1k.html", server.addr);
    let out = run(&[
        "bench",
        "--live",
        "-k",
        "-c",
        "4",
        "-t",
        "3",
        "-n",
        "100000000",
        &url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (report, lines) = (stdout(&out), stderr(&out));
    let live: Vec<&str> = lines
        .lines()
        .filter(|l| l.starts_with("webstand bench: "))
        .collect();
    assert!(live.len() >= 2, "a line a second, and the last: {lines}");
    for l in &live {
        for part in [
            "req/s",
            "p50",
            "p99",
            "2xx",
            "failed 0",
            "4 connections open",
            "% busy",
        ] {
            assert!(l.contains(part), "{part:?} missing from {l}");
        }
    }
    // The last line covers the whole run: its count is the report's; no escape codes anywhere.
    let complete = field(&report, "Complete requests:");
    assert!(
        live.last()
            .unwrap()
            .contains(&format!(" {complete} complete")),
        "{complete}: {lines}"
    );
    assert!(!report.contains('\x1b') && !lines.contains('\x1b'));
}
