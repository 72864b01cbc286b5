//! `webstand serve` over TLS as real clients see it: curl and `openssl s_client` (content, TLS 1.2
//! and 1.3, ALPN, resumption by ticket and by session ID, certificate chains), both listeners in one
//! process, the hostile inputs a TLS port meets (plain HTTP, garbage and truncated ClientHellos,
//! handshakes that never end, renegotiation, thousands of abandoned handshakes) and bad certificate
//! or key files at start-up. Certificates are made at test time with the openssl command.

use crate::common;

use common::{raw_exchange, require, webstand};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);
const GET_CLOSE: &[u8] = b"GET /2k.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// A test's files: a docroot and certificates (an ECDSA chain under a test CA, an RSA self-signed).
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("doc");
        std::fs::create_dir(&doc).unwrap();
        std::fs::write(doc.join("2k.html"), "a".repeat(2048)).unwrap();
        let big: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(doc.join("big.bin"), big).unwrap();
        let f = Fixture { dir };
        f.make_certs();
        f
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn p(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    fn openssl(&self, args: &[&str]) {
        let out = Command::new(require("openssl"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .expect("run openssl");
        assert!(out.status.success(), "openssl {args:?}: {out:?}");
    }

    /// ca.pem; ec-chain.pem (leaf then CA) with ec.key (SEC1); rsa.pem with rsa.key (PKCS#1).
    fn make_certs(&self) {
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
        let days = ["-days", "2", "-nodes"];
        self.openssl(
            &[
                &["req", "-x509"][..],
                &ec,
                &days,
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-subj",
                    "/CN=webstand test CA",
                ],
            ]
            .concat(),
        );
        self.openssl(
            &[
                &["req"][..],
                &ec,
                &[
                    "-nodes",
                    "-keyout",
                    "ec8.key",
                    "-out",
                    "ec.csr",
                    "-subj",
                    "/CN=localhost",
                ],
            ]
            .concat(),
        );
        std::fs::write(
            self.path("san.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .unwrap();
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            "ec.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "ec.pem",
        ]);
        self.openssl(&["ec", "-in", "ec8.key", "-out", "ec.key"]);
        let chain = [
            std::fs::read(self.path("ec.pem")).unwrap(),
            std::fs::read(self.path("ca.pem")).unwrap(),
        ]
        .concat();
        std::fs::write(self.path("ec-chain.pem"), chain).unwrap();
        self.openssl(
            &[
                &["req", "-x509", "-newkey", "rsa:2048"][..],
                &days,
                &[
                    "-keyout",
                    "rsa8.key",
                    "-out",
                    "rsa.pem",
                    "-subj",
                    "/CN=localhost",
                    "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1",
                ],
            ]
            .concat(),
        );
        self.openssl(&["rsa", "-in", "rsa8.key", "-traditional", "-out", "rsa.key"]);
        assert!(std::fs::read_to_string(self.path("ec.key"))
            .unwrap()
            .contains("BEGIN EC PRIVATE KEY"));
        assert!(std::fs::read_to_string(self.path("rsa.key"))
            .unwrap()
            .contains("BEGIN RSA PRIVATE KEY"));
    }

    /// `webstand serve` over TLS with the ECDSA chain, plus `extra` flags.
    fn serve(&self, extra: &[&str]) -> Server {
        self.serve_with(
            &[
                "--tls-cert",
                &self.p("ec-chain.pem"),
                "--tls-key",
                &self.p("ec.key"),
            ],
            extra,
        )
    }

    fn serve_with(&self, cert_key: &[&str], extra: &[&str]) -> Server {
        let mut child = webstand()
            .arg("serve")
            .arg(self.path("doc"))
            .args(["--listen-tls", "127.0.0.1:0", "--threads", "1"])
            .args(cert_key)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn webstand serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut server = Server {
            child,
            tls: None,
            plain: None,
        };
        while server.tls.is_none() {
            let line = lines.next().expect("serve said where it listens").unwrap();
            if let Some(a) = line.strip_prefix("listening on https://") {
                server.tls = Some(a.parse().unwrap());
            } else if let Some(a) = line.strip_prefix("listening on http://") {
                server.plain = Some(a.parse().unwrap());
            } else {
                panic!("unexpected line from serve: {line}");
            }
        }
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || lines.for_each(drop));
        server
    }
}

struct Server {
    child: Child,
    tls: Option<SocketAddr>,
    plain: Option<SocketAddr>,
}

impl Server {
    fn tls(&self) -> SocketAddr {
        self.tls.unwrap()
    }

    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.tls().port())
    }

    /// Descriptors the server holds now.
    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .unwrap()
            .count()
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// curl with the test CA (so the chain is verified); returns (verbose stderr, body).
fn curl(f: &Fixture, args: &[&str]) -> (String, Vec<u8>) {
    let out = Command::new(require("curl"))
        .args([
            "-s",
            "-S",
            "-v",
            "--max-time",
            "10",
            "--cacert",
            &f.p("ca.pem"),
        ])
        .args(args)
        .output()
        .expect("run curl");
    assert!(
        out.status.success(),
        "curl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.stdout,
    )
}

/// `openssl s_client -connect ADDR ARGS…` with `input` on stdin; returns everything it printed.
fn s_client(addr: SocketAddr, args: &[&str], input: &[u8], pause: Duration) -> String {
    // coreutils' timeout bounds it even if the server never closed.
    let mut child = Command::new("timeout")
        .arg(T.as_secs().to_string())
        .arg(require("openssl"))
        .args(["s_client", "-connect", &addr.to_string()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run openssl s_client");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    std::thread::spawn(move || {
        std::thread::sleep(pause);
        let _ = stdin.write_all(&input);
        std::thread::sleep(Duration::from_secs(30));
    });
    let mut out = String::new();
    let mut err = String::new();
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let errs = std::thread::spawn(move || {
        let _ = se.read_to_string(&mut err);
        err
    });
    let _ = so.read_to_string(&mut out);
    let _ = child.wait();
    out + &errs.join().unwrap()
}

/// The server is still running and serves /2k.html whole to curl.
fn assert_still_serves(f: &Fixture, s: &mut Server) {
    assert!(s.alive(), "the server died");
    assert_serves_2k(f, s);
}

/// curl gets /2k.html whole.
fn assert_serves_2k(f: &Fixture, s: &Server) {
    let (_, body) = curl(f, &[&s.url("/2k.html")]);
    assert_eq!(body.len(), 2048);
}

fn body_of(text: &str) -> &str {
    text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("")
}

#[test]
fn curl_gets_files_over_ecdsa_and_rsa_with_alpn_http11() {
    let f = Fixture::new();
    let s = f.serve(&[]);
    let (log, body) = curl(&f, &["--http1.1", &s.url("/2k.html")]);
    assert_eq!(body, "a".repeat(2048).as_bytes());
    assert!(log.contains("ALPN: server accepted http/1.1"), "{log}");
    // A file past the cache goes through the file path (pread and encrypt): every byte arrives.
    let (_, big) = curl(&f, &["--http1.1", &s.url("/big.bin")]);
    assert_eq!(big, std::fs::read(f.path("doc/big.bin")).unwrap());
    // A client that offers h2 first gets it (tests/serve_h2.rs has the rest of HTTP/2).
    let (log, big) = curl(&f, &["--http2", &s.url("/big.bin")]);
    assert!(log.contains("ALPN: server accepted h2"), "{log}");
    assert_eq!(big, std::fs::read(f.path("doc/big.bin")).unwrap());
    // Keep-alive: two requests, one connection, one handshake.
    let (log, _) = curl(
        &f,
        &[
            &s.url("/2k.html"),
            &s.url("/big.bin"),
            "-o",
            "/dev/null",
            "-o",
            "/dev/null",
        ],
    );
    assert_eq!(log.matches("SSL connection using").count(), 1, "{log}");

    let rsa = f.serve_with(
        &["--tls-cert", &f.p("rsa.pem"), "--tls-key", &f.p("rsa.key")],
        &[],
    );
    let out = Command::new(require("curl"))
        .args([
            "-s",
            "--max-time",
            "10",
            "--cacert",
            &f.p("rsa.pem"),
            &rsa.url("/2k.html"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.stdout, "a".repeat(2048).as_bytes());
}

#[test]
fn tls12_and_tls13_each_resume_by_ticket_and_tls12_by_session_id() {
    let f = Fixture::new();
    let s = f.serve(&[]);
    for (version, extra) in [
        ("-tls1_3", None),
        ("-tls1_2", None),
        ("-tls1_2", Some("-no_ticket")),
    ] {
        let sess = f.p("session.pem");
        let _ = std::fs::remove_file(&sess);
        let mut args = vec![version, "-alpn", "http/1.1", "-sess_out", &sess];
        args.extend(extra);
        let first = s_client(s.tls(), &args, GET_CLOSE, Duration::ZERO);
        let name = if version == "-tls1_3" {
            "TLSv1.3"
        } else {
            "TLSv1.2"
        };
        assert!(
            first.contains(&format!("New, {name}")),
            "{version}: {first}"
        );
        assert!(first.contains("ALPN protocol: http/1.1"), "{first}");
        assert!(first.contains("HTTP/1.1 200 OK"), "{first}");
        assert!(body_of(&first).starts_with(&"a".repeat(2048)), "{first}");
        args[3] = "-sess_in";
        let second = s_client(s.tls(), &args, GET_CLOSE, Duration::ZERO);
        assert!(
            second.contains(&format!("Reused, {name}")),
            "{version} {extra:?}: {second}"
        );
        assert!(second.contains("HTTP/1.1 200 OK"), "{second}");
    }
}

#[test]
fn plain_and_tls_listeners_in_one_process_and_tls_alone_from_the_config_file() {
    let f = Fixture::new();
    let s = f.serve(&["--listen", "127.0.0.1:0"]);
    let plain = s.plain.expect("a plain listener too");
    let answer = raw_exchange(plain, GET_CLOSE, T);
    assert!(answer.starts_with(b"HTTP/1.1 200 OK"));
    assert_serves_2k(&f, &s);

    let toml = format!(
        "root = {:?}\nlisten_tls = \"127.0.0.1:0\"\ntls_cert = {:?}\ntls_key = {:?}\n",
        f.p("doc"),
        f.p("ec-chain.pem"),
        f.p("ec.key")
    );
    std::fs::write(f.path("serve.toml"), toml).unwrap();
    let only = f.serve_with(&["--config", &f.p("serve.toml")], &[]);
    assert!(
        only.plain.is_none(),
        "no plain listener when only TLS is named"
    );
    let (_, body) = curl(&f, &[&only.url("/2k.html")]);
    assert_eq!(body.len(), 2048);
    // The key and certificate are the server's own files: never served, even from the docroot.
    std::fs::copy(f.path("ec.key"), f.path("doc/key.pem")).unwrap();
    let own = f.serve_with(
        &[
            "--tls-cert",
            &f.p("ec-chain.pem"),
            "--tls-key",
            &f.p("doc/key.pem"),
        ],
        &[],
    );
    let out = Command::new(require("curl"))
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--cacert",
            &f.p("ca.pem"),
            &own.url("/key.pem"),
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "404");
}

#[test]
fn plain_http_to_the_tls_port_gets_a_400_and_a_close() {
    let f = Fixture::new();
    let s = f.serve(&[]);
    let answer = String::from_utf8_lossy(&raw_exchange(s.tls(), GET_CLOSE, T)).into_owned();
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    assert!(answer.contains("https://"), "{answer}");
    assert_serves_2k(&f, &s);
}

/// The first bytes of a ClientHello record claiming 512 bytes: a handshake that cannot finish.
fn truncated_hello() -> Vec<u8> {
    let mut b = vec![
        0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
    ];
    b.extend((0..32u8).map(|i| i.wrapping_mul(37)));
    b
}

/// Reads until the server closes; returns what came and how long it took (None: still open at T).
fn until_closed(mut sock: TcpStream) -> (Vec<u8>, Option<Duration>) {
    let start = Instant::now();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while start.elapsed() < T {
        match sock.read(&mut buf) {
            Ok(0) => return (got, Some(start.elapsed())),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return (got, Some(start.elapsed()))
            }
            Err(_) => {}
        }
    }
    (got, None)
}

#[test]
fn garbage_and_truncated_client_hellos_are_closed_and_the_server_serves_on() {
    let f = Fixture::new();
    let mut s = f.serve(&[]);
    // Garbage in a handshake record: rustls answers a fatal alert (content type 21) and closes.
    let mut garbage = vec![0x16, 0x03, 0x01, 0x00, 0x40, 0x01, 0x00, 0x00, 0x3c];
    garbage.extend((0..60u32).map(|i| (i * 151 % 256) as u8));
    let mut sock = TcpStream::connect(s.tls()).unwrap();
    sock.write_all(&garbage).unwrap();
    let (got, closed) = until_closed(sock);
    assert!(closed.is_some(), "garbage hello left open");
    assert_eq!(got.first(), Some(&21), "an alert record: {got:?}");
    // Bytes that are no TLS at all (and no HTTP either).
    let (got, closed) = {
        let mut sock = TcpStream::connect(s.tls()).unwrap();
        sock.write_all(&[0u8; 300]).unwrap();
        until_closed(sock)
    };
    assert!(closed.is_some() && !got.starts_with(b"HTTP"), "{got:?}");
    // A truncated hello, then the client's FIN: closed at once, not at a timeout.
    let mut sock = TcpStream::connect(s.tls()).unwrap();
    sock.write_all(&truncated_hello()).unwrap();
    sock.shutdown(std::net::Shutdown::Write).unwrap();
    let (_, closed) = until_closed(sock);
    assert!(
        closed.is_some_and(|d| d < Duration::from_secs(2)),
        "{closed:?}"
    );
    assert_still_serves(&f, &mut s);
}

#[test]
fn a_handshake_or_a_head_that_never_completes_ends_at_the_header_timeout() {
    let f = Fixture::new();
    let s = f.serve(&["--header-timeout", "1s"]);
    let mut sock = TcpStream::connect(s.tls()).unwrap();
    sock.write_all(&truncated_hello()).unwrap();
    let (_, closed) = until_closed(sock);
    let took = closed.expect("a stalled handshake was never closed");
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(4),
        "{took:?}"
    );
    // Slowloris over TLS: the handshake completes, the head never does: 408, then the close.
    let partial = b"GET /2k.html HTTP/1.1\r\nHost: localhost\r\n";
    let start = Instant::now();
    let out = s_client(s.tls(), &["-quiet"], partial, Duration::ZERO);
    assert!(out.contains("HTTP/1.1 408 "), "{out}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn renegotiation_is_refused_and_the_connection_and_server_carry_on() {
    let f = Fixture::new();
    let mut s = f.serve(&[]);
    // s_client renegotiates when a line "R" comes on stdin (TLS 1.2 only: 1.3 has none).
    let out = s_client(s.tls(), &["-tls1_2"], b"R\n", Duration::from_millis(500));
    assert!(out.contains("RENEGOTIATING"), "{out}");
    assert!(
        out.contains("no renegotiation"),
        "the server refused: {out}"
    );
    assert_still_serves(&f, &mut s);
}

#[test]
fn thousands_of_abandoned_handshakes_leave_no_descriptor_behind() {
    let f = Fixture::new();
    let mut s = f.serve(&["--header-timeout", "1s"]);
    assert_serves_2k(&f, &s);
    let baseline = s.fds();
    let hello = truncated_hello();
    // 3000 handshakes abandoned midway, 300 at a time: half closed by the client (FIN or
    // reset), half left open for the header timeout to end.
    for round in 0..10 {
        let mut held = Vec::new();
        for i in 0..300 {
            let mut sock = TcpStream::connect(s.tls()).unwrap();
            sock.write_all(&hello[..8 + (i % 30)]).unwrap();
            match (round + i) % 4 {
                0 => drop(sock),
                1 => {
                    socket2::SockRef::from(&sock)
                        .set_linger(Some(Duration::ZERO))
                        .unwrap();
                    drop(sock)
                }
                _ => held.push(sock),
            }
        }
        drop(held);
    }
    // Connections held open at the end are closed by the header timeout.
    let mut left = Vec::new();
    for _ in 0..300 {
        let mut sock = TcpStream::connect(s.tls()).unwrap();
        sock.write_all(&hello).unwrap();
        left.push(sock);
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while s.fds() > baseline && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(s.fds() <= baseline, "fds {} > baseline {baseline}", s.fds());
    assert_still_serves(&f, &mut s);
    drop(left);
}

/// Runs serve with `cert` and `key`; it must exit non-zero at once with one line naming `blame`.
fn refused_at_start(f: &Fixture, cert: &Path, key: &Path, blame: &Path, what: &str) {
    let out = common::run_with_timeout(
        &[
            "serve",
            &f.p("doc"),
            "--listen-tls",
            "127.0.0.1:0",
            "--tls-cert",
            &cert.display().to_string(),
            "--tls-key",
            &key.display().to_string(),
        ],
        T,
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{cert:?} {key:?} was accepted");
    assert_ne!(out.status.code(), Some(101), "a panic: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&blame.display().to_string()),
        "names {blame:?}: {err}"
    );
    assert!(err.contains(what), "says {what:?}: {err}");
}

#[test]
fn bad_certificate_or_key_files_stop_the_start_with_one_line_naming_the_file() {
    let f = Fixture::new();
    let (cert, key) = (f.path("ec-chain.pem"), f.path("ec.key"));
    let missing = f.path("missing.pem");
    refused_at_start(&f, &missing, &key, &missing, "cannot read");
    refused_at_start(&f, &cert, &missing, &missing, "cannot read");
    let empty = f.path("empty.pem");
    std::fs::write(&empty, "").unwrap();
    refused_at_start(&f, &empty, &key, &empty, "no certificate");
    refused_at_start(&f, &cert, &empty, &empty, "no private key");
    // A key where the certificate belongs, and the reverse.
    refused_at_start(&f, &key, &key, &key, "no certificate");
    refused_at_start(&f, &cert, &cert, &cert, "no private key");
    // Broken base64 inside the PEM markers.
    let broken = f.path("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    refused_at_start(&f, &broken, &key, &broken, "bad PEM");
    // A well-formed PEM block that holds no certificate.
    let junk = f.path("junk.pem");
    std::fs::write(
        &junk,
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    refused_at_start(&f, &junk, &key, &junk, "TLS certificate");
    // The RSA key does not belong to the ECDSA certificate.
    refused_at_start(
        &f,
        &cert,
        &f.path("rsa.key"),
        &f.path("rsa.key"),
        "is not the key",
    );
    // --listen-tls without a certificate, and a certificate without --listen-tls.
    let out = common::run_with_timeout(&["serve", &f.p("doc"), "--listen-tls", "127.0.0.1:0"], T);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("tls_cert"),
        "{out:?}"
    );
}

#[test]
fn tls_protocols_offers_only_the_versions_named_and_refuses_unknown_names() {
    let f = Fixture::new();
    for (list, on, off, name) in [
        ("TLSv1.2", "-tls1_2", "-tls1_3", "TLSv1.2"),
        ("tlsv1.3", "-tls1_3", "-tls1_2", "TLSv1.3"),
    ] {
        let s = f.serve(&["--tls-protocols", list]);
        let served = s_client(s.tls(), &[on], GET_CLOSE, Duration::ZERO);
        assert!(served.contains(&format!("New, {name}")), "{list}: {served}");
        assert!(served.contains("HTTP/1.1 200 OK"), "{list}: {served}");
        let refused = s_client(s.tls(), &[off], GET_CLOSE, Duration::ZERO);
        assert!(!refused.contains("HTTP/1.1 200"), "{list} {off}: {refused}");
        assert!(refused.contains("alert"), "{list} {off}: {refused}");
    }
    // Both, comma separated: a client that can do either gets TLS 1.3.
    let s = f.serve(&["--tls-protocols", "TLSv1.2,TLSv1.3"]);
    let both = s_client(s.tls(), &[], GET_CLOSE, Duration::ZERO);
    assert!(both.contains("New, TLSv1.3"), "{both}");
    for bad in ["TLSv1.1", "SSLv3 TLSv1.3", ""] {
        let out = common::run_with_timeout(
            &[
                "serve",
                &f.p("doc"),
                "--listen-tls",
                "127.0.0.1:0",
                "--tls-cert",
                &f.p("ec-chain.pem"),
                "--tls-key",
                &f.p("ec.key"),
                "--tls-protocols",
                bad,
            ],
            T,
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "{bad:?} was accepted");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains("tls_protocols"), "{bad:?}: {err}");
    }
}
