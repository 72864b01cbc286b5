//! tests/h3/server.py, an HTTP/3 server on aioquic (an independent implementation): started in a
//! mode, its port read from its "ready" line, its request log and handshake log read back once
//! they hold what a test expects, killed on drop.

use super::free_port;
use super::h3::{aioquic_python, certificate};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// tests/h3/server.py in MODE (answering after `delay_ms`), its port and log.
pub struct AioquicServer {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl AioquicServer {
    pub fn start(dir: &Path, mode: &str, delay_ms: u32) -> AioquicServer {
        if !dir.join("cert.pem").exists() {
            certificate(dir);
        }
        let log = dir.join(format!("aioquic-{mode}-{}.log", free_port()));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/h3/server.py");
        let mut child = Command::new(aioquic_python())
            .arg(script)
            .arg(dir.join("cert.pem"))
            .arg(dir.join("key.pem"))
            .arg(&log)
            .arg(mode)
            .arg(delay_ms.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn tests/h3/server.py");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("server.py said it is ready within 30 s");
        let port = line
            .trim()
            .strip_prefix("ready ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("server.py said {line:?}"));
        AioquicServer { child, port, log }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// The log's lines once it holds `n`: (path, bytes, requests open when it came).
    pub fn lines(&self, n: usize) -> Vec<(String, u64, u64)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            if text.lines().count() >= n {
                return text
                    .lines()
                    .map(|l| {
                        let f: Vec<&str> = l.split(' ').collect();
                        (
                            f[1].to_string(),
                            f[3].parse().unwrap(),
                            f[4].parse().unwrap(),
                        )
                    })
                    .collect();
            }
            assert!(Instant::now() < deadline, "server.py logged {text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The handshake log's lines once it holds `n`: ("full" or "resumed", "0rtt-accepted" or
    /// "no-0rtt").
    pub fn handshakes(&self, n: usize) -> Vec<(String, String)> {
        let path = PathBuf::from(format!("{}.handshakes", self.log.display()));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.lines().count() >= n {
                return text
                    .lines()
                    .map(|l| {
                        let (kind, early) = l.split_once(' ').unwrap();
                        (kind.to_string(), early.to_string())
                    })
                    .collect();
            }
            assert!(Instant::now() < deadline, "server.py's handshakes: {text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for AioquicServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
