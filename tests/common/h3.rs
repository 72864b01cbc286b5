//! What the HTTP/3 tests share: `webstand serve` with its plain, TLS and QUIC listeners on ports of
//! its own choosing (port 0), ready once it printed its QUIC address, killed on drop; the aioquic
//! venv that scripts/install-deps.sh made (its client, tests/h3/client.py, and the raw clients of
//! tests/h3/); and the server's access log read back once it holds the lines a test expects.

use super::{output_within, webstand};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// aioquic's version, as scripts/install-deps.sh pins it.
const AIOQUIC: &str = "1.7.2";

/// The python of the aioquic venv; the test fails naming the install script when it is missing.
pub fn aioquic_python() -> PathBuf {
    let venv = match std::env::var_os("WEBSTAND_AIOQUIC_VENV") {
        Some(v) => PathBuf::from(v),
        None => {
            let data = std::env::var_os("XDG_DATA_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var("HOME").unwrap()).join(".local/share")
                });
            data.join(format!("webstand/aioquic-{AIOQUIC}"))
        }
    };
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "aioquic {AIOQUIC} is not installed at {} (scripts/install-deps.sh installs it)",
        venv.display()
    );
    python
}

/// DIR/doc: a 2 KiB page, a 3 MB file (`big`) and CGI programs (`/cgi-bin/*`): env (the
/// protocol, method, query and HTTPS it was run with), len (the length of the body it was given),
/// slow (marks DIR/slow.flag that it runs, then answers a second later). Returns DIR/doc.
pub fn docroot(dir: &Path) -> PathBuf {
    let doc = dir.join("doc");
    std::fs::create_dir_all(doc.join("cgi-bin")).unwrap();
    std::fs::write(doc.join("2k.html"), "a".repeat(2048)).unwrap();
    std::fs::write(doc.join("big.bin"), big()).unwrap();
    for (name, script) in [
        (
            "env",
            "printf 'Content-Type: text/plain\\r\\n\\r\\n'\necho \"$SERVER_PROTOCOL $REQUEST_METHOD $QUERY_STRING $HTTPS\"\n",
        ),
        ("len", "printf 'Content-Type: text/plain\\r\\n\\r\\n'\nwc -c | tr -d ' '\n"),
        (
            "slow",
            "touch \"$DOCUMENT_ROOT/../slow.flag\"\nsleep 1\nprintf 'Content-Type: text/plain\\r\\n\\r\\nslow\\n'\n",
        ),
    ] {
        let path = doc.join("cgi-bin").join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    doc
}

/// The 3 MB file of `docroot`.
pub fn big() -> Vec<u8> {
    pattern(3_000_000)
}

/// N bytes of a pattern whose period (251) lines up with no packet or window size.
pub fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8).collect()
}

/// A self-signed certificate for localhost and 127.0.0.1 in DIR/cert.pem and DIR/key.pem.
pub fn certificate(dir: &Path) {
    super::h2::certificate(dir);
}

/// `webstand serve` with HTTP/3: listening, its addresses known.
pub struct H3Server {
    pub child: Child,
    pub plain: SocketAddr,
    pub tls: SocketAddr,
    pub quic: SocketAddr,
    pub log: PathBuf,
    pub cert: PathBuf,
}

impl H3Server {
    /// Serves `doc` with the certificate in `dir` (made there if missing), an access log in
    /// `dir`, and `extra` flags; returns once the QUIC address is printed (all listeners are then
    /// bound and the loops running).
    pub fn start(dir: &Path, doc: &Path, extra: &[&str]) -> H3Server {
        if !dir.join("cert.pem").exists() {
            certificate(dir);
        }
        let log = dir.join(format!("access-{}.log", super::free_port()));
        let mut child = webstand()
            .arg("serve")
            .arg(doc)
            .args(["--listen", "127.0.0.1:0", "--listen-tls", "127.0.0.1:0"])
            .args(["--listen-quic", "127.0.0.1:0", "--tls-cert"])
            .arg(dir.join("cert.pem"))
            .arg("--tls-key")
            .arg(dir.join("key.pem"))
            .arg("--access-log")
            .arg(&log)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn webstand serve");
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let (mut plain, mut tls, mut quic) = (None, None, None);
        let deadline = Instant::now() + Duration::from_secs(10);
        while quic.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("webstand serve printed no QUIC address within 10 s"));
            let addr = |l: &str| -> SocketAddr {
                let rest = l.split("://").nth(1).unwrap();
                rest.split_whitespace().next().unwrap().parse().unwrap()
            };
            if line.ends_with("(HTTP/3 over QUIC)") {
                quic = Some(addr(&line));
            } else if line.starts_with("listening on https://") {
                tls = Some(addr(&line));
            } else if line.starts_with("listening on http://") {
                plain = Some(addr(&line));
            }
        }
        H3Server {
            child,
            plain: plain.expect("a plain address"),
            tls: tls.expect("a TLS address"),
            quic: quic.unwrap(),
            log,
            cert: dir.join("cert.pem"),
        }
    }

    /// The access log's lines once it holds at least `n` (the server writes it every tick).
    pub fn log_lines(&self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            if lines.len() >= n {
                return lines;
            }
            assert!(
                Instant::now() < deadline,
                "the access log has {} lines, not {n}: {text}",
                lines.len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A client of the server's QUIC address, for this thread or another.
    pub fn client(&self) -> H3Client {
        H3Client {
            quic: self.quic,
            cert: self.cert.clone(),
        }
    }

    /// tests/h3/client.py's answers to `requests` (its JSON) on one connection.
    pub fn fetch(&self, requests: &serde_json::Value) -> serde_json::Value {
        self.client().fetch(requests)
    }

    /// Runs tests/h3/SCRIPT PORT CAFILE ARGS… with aioquic's python, bounded to 120 s (a 16 MiB
    /// answer takes aioquic 20 s on a loaded machine).
    pub fn python(&self, script: &str, args: &[&str]) -> Output {
        self.client().python(script, args)
    }

    /// oha (its `http3` build) over HTTP/3 on the server's QUIC address, checking its certificate:
    /// `requests` of `path` over `load` (oha's options: connections, streams, timeout), bounded
    /// to `within`; its JSON report.
    pub fn oha(
        &self,
        path: &str,
        requests: u64,
        load: &[&str],
        within: Duration,
    ) -> serde_json::Value {
        let n = requests.to_string();
        self.oha_run(path, &[&["-n", &n][..], load].concat(), within)
    }

    /// oha as `oha` runs it, with `args` saying how much (`-n`, `-z`) and the load.
    pub fn oha_run(&self, path: &str, args: &[&str], within: Duration) -> serde_json::Value {
        let oha = super::require("oha");
        let url = format!("https://127.0.0.1:{}{path}", self.quic.port());
        let out = output_within(
            Command::new(oha)
                .args(args)
                .args([
                    "--http-version",
                    "3",
                    "--no-tui",
                    "--output-format",
                    "json",
                    "--cacert",
                ])
                .arg(&self.cert)
                .arg(&url),
            within,
        );
        super::json_stdout(&out)
    }

    /// Whether the server is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a client needs of the server: its QUIC address and the certificate to check.
#[derive(Clone)]
pub struct H3Client {
    pub quic: SocketAddr,
    pub cert: PathBuf,
}

impl H3Client {
    /// tests/h3/client.py's answers to `requests` (its JSON) on one connection.
    pub fn fetch(&self, requests: &serde_json::Value) -> serde_json::Value {
        let out = self.python("client.py", &[&requests.to_string()]);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
            panic!(
                "client.py printed no JSON: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// Runs tests/h3/SCRIPT PORT CAFILE ARGS… with aioquic's python, bounded to 120 s (a 16 MiB
    /// answer takes aioquic 20 s on a loaded machine).
    pub fn python(&self, script: &str, args: &[&str]) -> Output {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/h3")
            .join(script);
        let mut cmd = Command::new(aioquic_python());
        cmd.arg(path)
            .arg(self.quic.port().to_string())
            .arg(&self.cert)
            .args(args);
        output_within(&mut cmd, Duration::from_secs(120))
    }
}
