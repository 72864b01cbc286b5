//! `webstand lab up`: every lab server kind installed here started on the lab's own config, plain,
//! over TLS and over HTTP/2 where the kind has them, PHP behind one; each fetched over the URL it
//! printed by curl (an independent client), then gone after SIGTERM with its scratch removed. Bad
//! input is one line and a non-zero exit.

use crate::common;

use common::lab_up::LabUp;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Every kind `lab up` is tested with, and whether it has TLS and HTTP/2 in the lab (CI installs
/// them all, with lighttpd's mod_openssl and a mini_httpd built with TLS).
const KINDS: &[(&str, bool, bool)] = &[
    ("builtin", true, true),
    ("nginx", true, true),
    ("lighttpd", true, true),
    ("apache", true, true),
    ("h2o", true, true),
    ("caddy", true, true),
    ("mini_httpd", true, false),
];

/// curl's GET of `url` ("--http2" and friends in `how`): (status, HTTP version, body).
fn curl(url: &str, how: &[&str]) -> (String, String, Vec<u8>) {
    let out = common::output_within(
        Command::new(common::require("curl"))
            .args([
                "-sS",
                "--max-time",
                "10",
                "-o",
                "-",
                "-w",
                "%{stderr}%{http_code} %{http_version}",
            ])
            .args(how)
            .arg(url),
        Duration::from_secs(20),
    );
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let (code, version) = err.trim().rsplit_once(' ').unwrap_or(("?", "?"));
    let code = code.rsplit(['\n', ' ']).next().unwrap_or("?").to_string();
    (code, version.to_string(), out.stdout)
}

fn gone(pid: &str) -> bool {
    webstand_lab::procstat::stat(pid.parse().unwrap()).is_none()
}

/// Starts `lab up KIND FLAGS`, fetches /2k.html as `how` says (the CA it printed added for TLS),
/// expecting HTTP `version`; then SIGTERM: exit 0, the server's processes gone and the lab's
/// docroot removed.
fn up_fetch_stop(kind: &str, flags: &[&str], how: &[&str], version: &str) {
    let mut args = vec![kind];
    args.extend_from_slice(flags);
    let mut up = LabUp::start(&args);
    assert_eq!(up.get("server"), kind);
    let url = up.url("/2k.html");
    assert!(
        url.starts_with("http") && url.contains("://127.0.0.1:"),
        "{url}"
    );
    let mut how: Vec<&str> = how.to_vec();
    let ca = up.lines.get("ca").cloned();
    if let Some(ca) = &ca {
        how.extend(["--cacert", ca.as_str()]);
    }
    let want = std::fs::read(Path::new(up.get("docroot")).join("2k.html")).unwrap();
    let (code, got_version, body) = curl(&url, &how);
    assert_eq!(
        (code.as_str(), got_version.as_str()),
        ("200", version),
        "{kind} {flags:?}"
    );
    assert_eq!(body, want, "{kind} {flags:?}: the body");
    let pid = up.get("pid").to_string();
    let docroot = up.get("docroot").to_string();
    let status = up.stop();
    assert!(status.success(), "{kind} {flags:?}: lab up exited {status}");
    assert!(gone(&pid), "{kind} {flags:?}: pid {pid} still there");
    assert!(!Path::new(&docroot).exists(), "{docroot} left behind");
    if let Some(ca) = ca {
        assert!(!Path::new(&ca).exists(), "{ca} left behind");
    }
    let owner = format!("webstand-lab-{}-", up.child.id());
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&owner))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}

#[test]
fn every_kind_up_plain_over_tls_and_h2_then_gone_after_sigterm() {
    for &(kind, tls, h2) in KINDS {
        up_fetch_stop(kind, &[], &["--http1.1"], "1.1");
        if tls {
            up_fetch_stop(kind, &["--tls"], &["--http1.1"], "1.1");
        }
        if h2 {
            up_fetch_stop(kind, &["--h2"], &["--http2-prior-knowledge"], "2");
            up_fetch_stop(kind, &["--tls", "--h2"], &["--http2"], "2");
        }
    }
}

/// `--tls-version 1.2` and `1.3`: every kind with TLS that can offer one version alone (not
/// mini_httpd; h2o 1.3 only) answers a client held to that version and refuses one held to the
/// other.
#[test]
fn one_tls_version_offered_alone_by_every_kind_that_can() {
    for &(kind, tls, _) in KINDS {
        if !tls || kind == "mini_httpd" {
            continue;
        }
        for (version, takes, refuses) in [
            (
                "1.2",
                ["--tlsv1.2", "--tls-max", "1.2"],
                ["--tlsv1.3", "--tls-max", "1.3"],
            ),
            (
                "1.3",
                ["--tlsv1.3", "--tls-max", "1.3"],
                ["--tlsv1.2", "--tls-max", "1.2"],
            ),
        ] {
            if (kind, version) == ("h2o", "1.2") {
                continue; // refused in one line: the_port_asked_for_and_bad_input_in_one_line
            }
            let up = LabUp::start(&[kind, "--tls", "--tls-version", version]);
            let url = up.url("/2k.html");
            let ca = up.get("ca").to_string();
            let with_ca = |how: [&'static str; 3]| {
                let mut v = how.to_vec();
                v.extend(["--http1.1", "--cacert", ca.as_str()]);
                curl(&url, &v).0
            };
            assert_eq!(with_ca(takes), "200", "{kind} TLS {version} alone");
            assert_eq!(
                with_ca(refuses),
                "000",
                "{kind} TLS {version} alone answered a client held to the other version"
            );
        }
    }
}

/// `--docroot DIR`: every kind serves a directory of the user's own (one file, no CGI programs, as
/// the benchmark scripts give it) and leaves it in place after SIGTERM.
#[test]
fn every_kind_serves_a_docroot_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let page: Vec<u8> = (0..2048u32).map(|i| b'a' + (i % 26) as u8).collect();
    std::fs::write(dir.path().join("2k.html"), &page).unwrap();
    let root = dir.path().to_str().unwrap();
    for &(kind, _, _) in KINDS {
        let mut up = LabUp::start(&[kind, "--docroot", root]);
        let (code, _, body) = curl(&up.url("/2k.html"), &["--http1.1"]);
        assert_eq!(code, "200", "{kind}");
        assert_eq!(body, page, "{kind}: the body");
        assert!(up.stop().success(), "{kind}");
        assert!(
            dir.path().join("2k.html").exists(),
            "{kind} removed the docroot"
        );
    }
}

/// nginx with PHP-FPM behind it: the lab's PHP page comes whole, and both are gone after SIGTERM.
#[test]
fn php_behind_nginx_and_php_fpm_stopped_with_it() {
    let mut up = LabUp::start(&["nginx", "--php"]);
    let (code, _, body) = curl(&up.url("/php/page.php"), &[]);
    assert_eq!(code, "200");
    assert!(
        body.len() > 10_000 && body.ends_with(b"</html>\n"),
        "{} bytes: {}",
        body.len(),
        String::from_utf8_lossy(&body[..body.len().min(200)])
    );
    let (pid, fpm) = (up.get("pid").to_string(), up.get("php_fpm_pid").to_string());
    assert!(!gone(&fpm));
    assert!(up.stop().success());
    assert!(
        gone(&pid) && gone(&fpm),
        "nginx {pid} or PHP-FPM {fpm} still there"
    );
}

/// The port asked for, on loopback only; a port in use is refused in one line.
#[test]
fn the_port_asked_for_and_bad_input_in_one_line() {
    let port = common::free_port();
    let mut up = LabUp::start(&["lighttpd", "--port", &port.to_string()]);
    assert_eq!(up.get("url"), format!("http://127.0.0.1:{port}/"));
    let taken = common::run_with_timeout(
        &["lab", "up", "nginx", "--port", &port.to_string()],
        Duration::from_secs(30),
    );
    up.stop();
    for (args, says) in [
        (vec!["lab", "up", "iis"], "unknown server 'iis'"),
        (vec!["lab", "up", "mini_httpd", "--h2"], "no h2"),
        (vec!["lab", "up", "mini_httpd", "--php"], "no PHP"),
        (
            vec!["lab", "up", "mini_httpd", "--tls", "--tls-version", "1.2"],
            "no setting for its TLS versions",
        ),
        (
            vec!["lab", "up", "h2o", "--tls", "--tls-version", "1.2"],
            "cannot offer TLS 1.2 alone",
        ),
        (
            vec!["lab", "up", "nginx", "--tls-version", "1.3"],
            "needs --tls",
        ),
        (
            vec!["lab", "up", "nginx", "--docroot", "/nonexistent"],
            "not a directory",
        ),
    ]
    .into_iter()
    .chain([(vec![], "in use")])
    {
        let out = if args.is_empty() {
            taken.clone()
        } else {
            common::run_with_timeout(&args, Duration::from_secs(30))
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
