//! `bench --h2` and `sweep --h2` against real servers that do not speak HTTP/2, in both forms: over
//! TLS, where ALPN offers h2 alone and the server chooses http/1.1, nothing, or refuses with an
//! alert; and h2c by prior knowledge on a plain port, where an HTTP/1 server answers the preface
//! as a request (or closes). nginx without `http2`, `webstand serve` without `--h2c` (its TLS
//! listener always offers h2), lighttpd with its h2 turned off, mini_httpd and Apache without
//! mod_http2. `bench`: one line naming what the server answered, exit 4. `sweep`: its first level
//! counts the connections' requests as failed (Connect, no more than the level's clients: the
//! engine does not retry), ends "without HTTP/2", the Diagnosis names the finding and the sweep
//! stops there, as it does for a target it cannot reach.

use crate::common;

use common::lab::locate;
use common::*;
use std::sync::Arc;
use std::time::Duration;
use webstand_lab::servers::{Kind, Server, Setup};
use webstand_lab::tls::{KeyType, LabCert};

/// A server without HTTP/2 at `url`, and what the one line must say it answered.
struct Case {
    url: String,
    answered: &'static str,
}

/// `bench --h2`: exit 4 and one line on stderr naming the answer.
fn bench_refused(c: &Case) {
    let out = run_with_timeout(
        &["bench", "--h2", "-n", "200", "-c", "2", &c.url],
        Duration::from_secs(30),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{}: {err}", c.url);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}: {err}", c.url);
    assert!(
        lines[0].starts_with("webstand: failed (exit status 4): h2")
            && lines[0].contains(&format!(
                " to {}: the server does not speak HTTP/2",
                host(c)
            ))
            && lines[0].contains(c.answered),
        "{}: {err}",
        c.url
    );
    assert!(!stdout(&out).contains("Requests per second"), "no figures");
}

/// `sweep --h2 -c 2,4`: the first level failed and is diagnosed, the second never runs.
fn sweep_refused(c: &Case, db: &str) {
    let args = ["--db", db, "sweep", "--h2", "-c", "2,4", "-n", "200"];
    let out = run_with_timeout(
        &[&args[..], &["--warmup", "0", "--json", "-q", &c.url]].concat(),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(4), "{}: {}", c.url, stderr(&out));
    let doc = json_stdout(&out);
    let levels = doc["levels"].as_array().unwrap();
    assert_eq!(
        levels.len(),
        1,
        "{}: the sweep stops at its first level",
        c.url
    );
    let r = &levels[0]["result"];
    assert_eq!(levels[0]["clients"], 2);
    assert_eq!(r["ended"], "without HTTP/2", "{}", c.url);
    assert_eq!(r["complete"], 0);
    let connect = r["failed"]["connect"].as_u64().unwrap();
    assert!((1..=2).contains(&connect), "{}: {r}", c.url);
    assert_eq!(r["failed"]["total"], connect, "{}: Connect alone", c.url);
    assert_eq!(r["errors"], connect);
    let first = r["first_error"].as_str().unwrap();
    assert!(first.contains(c.answered), "{}: {first}", c.url);
    let d = &doc["diagnosis"][0];
    assert_eq!(d["verdict"], "no HTTP/2", "{}: {d}", c.url);
    assert_eq!(d["summary"], "the server does not speak HTTP/2");
    let f = diagnosis_finding(d, "no-http2").unwrap();
    assert!(f["evidence"].as_str().unwrap().contains(c.answered), "{f}");
    assert_eq!(d["findings"].as_array().unwrap().len(), 1, "{d}");
    assert_eq!(doc["outcome"]["exit_status"], 4);
    assert!(doc["outcome"]["reason"]
        .as_str()
        .unwrap()
        .contains(c.answered));
    // The history's copy: `show` prints the level failed, bound by the finding.
    let shown = run(&["--db", db, "show", "last"]);
    // A row past 120 columns goes on in lines indented under it: read them as one.
    let text = stdout(&shown).replace("\n        ", " ");
    // `show` numbers its levels first: the one level, of 2 clients.
    let row = text
        .lines()
        .find(|l| l.split_whitespace().take(2).eq(["1", "2"]))
        .unwrap_or_else(|| panic!("no level row in\n{text}"));
    assert!(
        row.contains("no HTTP/2") && row.contains("(without HTTP/2)"),
        "{row}"
    );
}

/// host:port of the case's URL.
fn host(c: &Case) -> &str {
    let rest = c.url.split_once("://").unwrap().1;
    rest.split_once('/').unwrap().0
}

fn check(cases: &[Case]) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db").display().to_string();
    for c in cases {
        bench_refused(c);
        sweep_refused(c, &db);
    }
}

#[test]
fn nginx_without_http2_over_tls_and_plain() {
    let tls = common::lab_nginx(&["--tls"]);
    let plain = common::lab_nginx(&[]);
    check(&[
        Case {
            url: format!("https://127.0.0.1:{}/page.html", tls.port),
            answered: "ALPN: offered h2 and http/1.1, it chose http/1.1",
        },
        Case {
            url: format!("http://127.0.0.1:{}/page.html", plain.port),
            answered: "it answered the preface with \"HTTP/1.1 400 Bad Request\"",
        },
    ]);
}

#[test]
fn webstand_serve_without_h2c() {
    let dir = tempfile::tempdir().unwrap();
    let root = www_with_page(dir.path());
    let s = serve(&root, &["--threads", "1"]);
    check(&[Case {
        url: format!("http://{}/page.html", s.addr),
        answered: "it answered the preface with \"HTTP/1.1 400 Bad Request\"",
    }]);
}

/// A lab server of `kind` with its HTTP/2 off, over TLS and plain: what each answers.
fn lab_server_without_http2(kind: Kind, over_tls: &'static str, plain: &'static str) {
    let dir = tempfile::tempdir().unwrap();
    let docroot = dir.path().join("www");
    let out = run(&["fixtures", docroot.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    webstand_lab::servers::write_lab_files(&docroot).unwrap();
    let cert = Arc::new(LabCert::generate(KeyType::EcdsaP256).unwrap());
    let binary = locate(kind);
    for (tls, answered) in [(true, over_tls), (false, plain)] {
        let mut setup = Setup::new(&docroot);
        setup.tls = tls.then(|| Arc::clone(&cert));
        let mut server = Server::start(&binary, &setup)
            .unwrap_or_else(|e| panic!("{kind:?} (TLS {tls}): {e:#}"));
        let scheme = if tls { "https" } else { "http" };
        let url = format!("{scheme}://{}/2k.html", server.addr);
        check(&[Case { url, answered }]);
        server.stop().unwrap();
    }
}

#[test]
fn mini_httpd_over_tls_and_plain() {
    // Plain, it answers in the version the request line named.
    lab_server_without_http2(
        Kind::parse("mini_httpd").unwrap(),
        "it chose none (no ALPN)",
        "it answered the preface with \"HTTP/2.0 501 Not Implemented\"",
    );
}

#[test]
fn lighttpd_without_h2_over_tls_and_plain() {
    lab_server_without_http2(
        Kind::parse("lighttpd").unwrap(),
        "it chose http/1.1",
        "it answered the preface with \"HTTP/1.0 505 HTTP Version Not Supported\"",
    );
}

#[test]
fn apache_without_mod_http2_over_tls_and_plain() {
    lab_server_without_http2(
        Kind::parse("apache").unwrap(),
        "it chose http/1.1",
        "it answered the preface with \"HTTP/1.1 400 Bad Request\"",
    );
}
