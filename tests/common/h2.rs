//! HTTP/2 servers for the tests, as Debian ships them: nginx (h2 over TLS, or h2c with `http2` on a
//! plain listener) and h2o (h2 over TLS, h2c by prior knowledge on a plain one) on loopback over a
//! docroot with the test page, each a `Daemon` stopped when dropped; and h2load's counts, the
//! reference a webstand HTTP/2 run is checked against.

use super::{require, start_nginx_in, www_with_page, Daemon};
use std::path::Path;
use std::process::Command;

/// A self-signed certificate for localhost and 127.0.0.1 in DIR/cert.pem and DIR/key.pem.
pub fn certificate(dir: &Path) {
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    std::fs::write(dir.join("cert.pem"), ck.cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), ck.key_pair.serialize_pem()).unwrap();
}

/// nginx on loopback with a certificate and a setting the lab's nginx does not have (a test's own
/// stream limit, in `extra`, which goes into the server block): `listen` is what follows the
/// address ("ssl http2", "http2", "ssl"). The lab's nginx, plain or with --tls and --h2, is
/// `lab_nginx`.
pub fn nginx(listen: &str, extra: &str) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    certificate(dir.path());
    let d = dir.path().display().to_string();
    let server = format!("ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem; {extra}");
    start_nginx_in(dir, listen, &server)
}

/// h2o on loopback, over TLS (h2 by ALPN) or plain (HTTP/1.1 and h2c by prior knowledge).
pub fn h2o(tls: bool) -> Daemon {
    let h2o = require("h2o");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    www_with_page(dir.path());
    certificate(dir.path());
    let ssl = match tls {
        true => format!("  ssl:\n    certificate-file: {d}/cert.pem\n    key-file: {d}/key.pem\n"),
        false => String::new(),
    };
    let user = if unsafe_is_root() { "user: root\n" } else { "" };
    let conf_path = format!("{d}/h2o.conf");
    Daemon::start("h2o", dir, |port| {
        let conf = format!(
            "listen:\n  host: 127.0.0.1\n  port: {port}\n{ssl}num-threads: 1\n{user}error-log: {d}/error.log\n\
             pid-file: {d}/h2o.pid\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: {d}/www\n"
        );
        std::fs::write(&conf_path, conf).unwrap();
        let mut cmd = Command::new(&h2o);
        cmd.args(["-c", &conf_path]);
        cmd
    })
}

fn unsafe_is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `h2load ARGS` (whose `-n` is `n`) and asserts that every request succeeded with a 2xx
/// status, as h2load counts them; returns its output for further checks.
pub fn h2load_all_succeed(n: u64, args: &[&str]) -> String {
    let out = Command::new(require("h2load")).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "h2load {args:?}: {text}");
    let all = format!(
        "requests: {n} total, {n} started, {n} done, {n} succeeded, 0 failed, 0 errored, 0 timeout"
    );
    assert!(text.contains(&all), "h2load {args:?}: {text}");
    assert!(text.contains(&format!("status codes: {n} 2xx")), "{text}");
    text
}

/// h2load's figures: requests done, succeeded, and data bytes.
pub fn h2load(args: &[&str]) -> (u64, u64, u64) {
    let out = Command::new(require("h2load")).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "h2load {args:?}: {text}");
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in {text}"))
            .to_string()
    };
    let number_before = |line: &str, word: &str| -> u64 {
        let words: Vec<&str> = line
            .split([' ', ',', '(', ')'])
            .filter(|w| !w.is_empty())
            .collect();
        let i = words
            .iter()
            .position(|w| *w == word)
            .unwrap_or_else(|| panic!("{word} in {line}"));
        words[i - 1].parse().unwrap()
    };
    let requests = line("requests:");
    let traffic = line("traffic:");
    (
        number_before(&requests, "done"),
        number_before(&requests, "succeeded"),
        number_before(&traffic, "data"),
    )
}
