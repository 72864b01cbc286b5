//! `webstand serve` raises its soft open-files limit to the hard one at start (each connection is
//! a descriptor): started under `ulimit -Sn 256`, the running server's limits in /proc say so.

use crate::common;

use common::{free_port, wait_listening};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The soft and hard "Max open files" of a process, from /proc/PID/limits.
fn open_files_limits(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let mut numbers = line.split_whitespace().skip(3);
    let mut next = || numbers.next().unwrap().parse::<u64>().unwrap();
    (next(), next())
}

#[test]
fn serve_raises_its_soft_open_files_limit_to_the_hard_one() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    let script = format!(
        "ulimit -Sn 256 && exec \"$0\" serve {} --listen {addr}",
        dir.path().display()
    );
    let mut child = Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_webstand")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let listening = wait_listening(addr, Duration::from_secs(10));
    let (soft, hard) = open_files_limits(child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert!(listening, "webstand serve never listened on {addr}");
    assert!(
        hard > 256,
        "this test needs a hard limit above 256 (it is {hard})"
    );
    assert_eq!(soft, hard);
}
