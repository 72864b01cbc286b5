//! The raw-frame HTTP/2 client of the serve_h2 tests (tests/h2/hostile.py, run by Debian's
//! python3 with python3-h2's hpack): one case against an h2c listener, its event lines back.

use std::path::Path;
use std::process::Command;

/// Runs `case` (its name, then its arguments) against the h2c listener at `port` with a 2 s I/O
/// timeout in mind; returns the lines the client printed ("STATUS 1 200", "RST 3 NO_ERROR"…).
pub fn run(port: u16, case: &[&str]) -> String {
    let out = python_h2("hostile.py")
        .arg(case[0])
        .arg(port.to_string())
        .arg("2")
        .args(&case[1..])
        .output()
        .expect("run hostile.py");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "hostile.py {case:?}: {text}{}",
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
