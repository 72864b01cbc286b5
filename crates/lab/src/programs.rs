//! Finding the programs the lab runs (servers, their backends, fcgiwrap, the tools it measures with):
//! on PATH, then in the sbin directories a non-root PATH lacks (nginx, apache2 and mini_httpd live in
//! /usr/sbin); or the one line saying which package to install. And running a tool to its end within
//! a time limit.

use anyhow::{anyhow, Result};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// `name` on PATH, then in the sbin directories a non-root PATH lacks.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/local/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A program (a name looked up as [`find_program`] does, or a path), or the one line saying how to
/// install `package`.
pub fn require(program: &str, package: &str) -> Result<PathBuf> {
    let found = if program.contains('/') {
        Some(PathBuf::from(program)).filter(|p| p.is_file())
    } else {
        find_program(program)
    };
    found.ok_or_else(|| {
        anyhow!("{program}: not installed (apt-get install {package}, or scripts/install-deps.sh)")
    })
}

/// fcgiwrap's binary, when installed: the CGI bridge of the servers without CGI of their own.
pub fn fcgiwrap() -> Option<PathBuf> {
    find_program("fcgiwrap")
}

/// Runs a tool to completion within `limit_secs`, returning stdout (stderr on failure).
pub fn run_bounded(mut cmd: Command, limit_secs: u64) -> std::result::Result<String, String> {
    let prog = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "{prog} not runnable ({e}): apt-get install {}",
                if prog == "ab" { "apache2-utils" } else { &prog }
            )
        })?;
    let deadline = std::time::Instant::now() + Duration::from_secs(limit_secs);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{prog} did not finish within {limit_secs}s"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() && text.trim().is_empty() {
        return Err(format!(
            "{prog}: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("failed")
        ));
    }
    Ok(text)
}
