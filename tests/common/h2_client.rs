//! The raw-frame HTTP/2 client of the serve_h2 tests (tests/h2/hostile.py, run by Debian's
//! python3 with python3-h2's hpack): one case against an h2c listener, its event lines back.

use std::path::Path;
use std::process::Command;

/// Runs `case` (its name, then its arguments) against the h2c listener at `port` with a 2 s I/O
/// timeout in mind; returns the lines the client printed ("STATUS 1 200", "RST 3 NO_ERROR"…).
pub fn run(port: u16, case: &[&str]) -> String {
    let mut cmd = python_h2("hostile.py");
    cmd.arg(case[0])
        .arg(port.to_string())
        .arg("2")
        .args(&case[1..]);
    printed(cmd, &format!("hostile.py {case:?}"))
}

/// What `cmd` printed on stdout; the test fails, with both outputs, when it did not succeed.
fn printed(mut cmd: Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {what}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// A command running tests/h2/SCRIPT with Debian's python3, which has python3-h2 (the `python3`
/// on PATH may be another build without it).
pub fn python_h2(script: &str) -> Command {
    let python = Path::new("/usr/bin/python3");
    assert!(
        python.exists(),
        "Debian's /usr/bin/python3 (with python3-h2) is required"
    );
    let mut cmd = Command::new(python);
    cmd.arg(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/h2")
            .join(script),
    );
    cmd
}

/// Runs a case of tests/h2/jobs.py (CGI and FastCGI jobs on one connection) against the h2c
/// listener at `port`; its printed lines ("BODY 1 200 <md5>", "FDS 9 10 9"…).
pub fn jobs(port: u16, case: &str, args: &[&str]) -> String {
    let mut cmd = python_h2("jobs.py");
    cmd.arg(case).arg(port.to_string()).args(args);
    printed(cmd, &format!("jobs.py {case} {args:?}"))
}

/// Runs a case of tests/h2/uploads.py (request bodies streamed to FastCGI) against the h2c
/// listener at `port`; its printed lines ("ANSWER 1 200 <body>", "HELD <bytes>", "FDS 9 9"…).
pub fn uploads(case: &str, port: u16, args: &[&str]) -> String {
    let mut cmd = python_h2("uploads.py");
    match case.strip_prefix("error ") {
        Some(kind) => cmd.args(["error", kind]),
        None => cmd.arg(case),
    };
    cmd.arg(port.to_string()).args(args);
    printed(cmd, &format!("uploads.py {case} {args:?}"))
}

/// The "FDS <before> <during> <after>" line of jobs.py's reset case, as numbers.
pub fn fds_line(out: &str) -> [usize; 3] {
    let line = out.lines().find_map(|l| l.strip_prefix("FDS "));
    let n: Vec<usize> = line
        .unwrap_or_else(|| panic!("no FDS line in {out}"))
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    [n[0], n[1], n[2]]
}

/// The descriptors process `pid` has open.
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Waits (10 s at most) for `done`; false if it never came.
pub fn within_10s(mut done: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !done() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    true
}

/// md5sum's digest of `bytes` (jobs.py prints each body's).
pub fn md5(bytes: &[u8]) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(super::require("md5sum"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..32].to_string()
}

/// md5sum's digest of the file at `path`.
pub fn file_md5(path: &std::path::Path) -> String {
    md5(&std::fs::read(path).unwrap())
}
