//! `webstand lab up` as a test starts it: the lab's own server of a kind on loopback, its
//! `key=value` lines read from stdout once it printed `ready=1`, stopped with SIGTERM.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A `webstand lab up` that printed `ready=1`; killed if still running when dropped.
pub struct LabUp {
    pub child: Child,
    /// Its `key=value` lines.
    pub lines: HashMap<String, String>,
}

impl LabUp {
    /// Runs `webstand lab up ARGS` and waits (up to 60 s) for its `ready=1`; the test fails with
    /// its stderr if it exits first.
    pub fn start(args: &[&str]) -> LabUp {
        let mut child = super::webstand()
            .arg("lab")
            .arg("up")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn webstand lab up");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut lines = HashMap::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while lines.get("ready").map(String::as_str) != Some("1") {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    let (k, v) = line.split_once('=').expect("a key=value line");
                    lines.insert(k.to_string(), v.to_string());
                }
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(_) => {
                    let _ = child.kill();
                    let out = child.wait_with_output().unwrap();
                    panic!(
                        "lab up {args:?} never got ready: {lines:?}\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            }
        }
        LabUp { child, lines }
    }

    /// The value of `key` (the test fails without one).
    pub fn get(&self, key: &str) -> &str {
        self.lines
            .get(key)
            .unwrap_or_else(|| panic!("no {key}= in {:?}", self.lines))
    }

    /// The server's URL of `path` ("/2k.html").
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.get("url").trim_end_matches('/'), path)
    }

    /// The server's address on loopback.
    pub fn addr(&self) -> std::net::SocketAddr {
        format!("127.0.0.1:{}", self.get("port")).parse().unwrap()
    }

    /// SIGTERM, and its exit (the test fails if it takes more than 30 s).
    pub fn stop(&mut self) -> ExitStatus {
        // SAFETY: kill(2) of the child this test started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            assert!(
                Instant::now() < deadline,
                "lab up still running 30 s after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for LabUp {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.stop();
        }
    }
}
