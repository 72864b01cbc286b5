//! The lab over HTTP/2, for real: every server the lab can put on HTTP/2 is started with its h2
//! config, over TLS (h2 by ALPN) and on a plain port (h2c by prior knowledge), and curl, an
//! independent HTTP/2 client, fetches files from it over HTTP/2 with the docroot's bytes (md5sum of
//! each side); HTTP/1.1 still answers where the config keeps it; nghttp reads the stream limit each
//! announces (128 where it can be set). `webstand compare --h2`, with `--tls` (ALPN) and without
//! (h2c), runs the h2 workloads without an error on nginx and h2o and fills thttpd's h2 column: yes
//! for them, no for mini_httpd (its h2 rows say "no h2"), and for builtin what curl finds against
//! `webstand serve` itself. Bad input is one line; nothing the lab started is left.

use crate::common;

use common::h2_client::file_md5;
use common::lab::{compare_json, installed, locate, row, rows, server};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use webstand_lab::servers::{Kind, Server, Setup};
use webstand_lab::tls::{KeyType, LabCert};

/// The servers the lab configures for HTTP/2, and the concurrent streams each announces: the
/// shared 128 where the server lets it be set, else its own fixed value (the rows' notes say so).
const H2_SERVERS: &[(&str, u32)] = &[
    ("nginx", 128),
    ("apache", 128),
    ("lighttpd", 8),
    ("h2o", 100),
    ("caddy", 250),
];

/// curl's GET of `url` (HTTP/2 when `h2`: ALPN for https, prior knowledge for http; else
/// HTTP/1.1), verifying the lab's CA for https: (the HTTP version agreed, the body's file).
fn curl(url: &str, ca: Option<&Path>, h2: bool, out: &Path) -> String {
    let mut cmd = Command::new(common::require("curl"));
    cmd.args(["-sS", "--max-time", "10", "-o"])
        .arg(out)
        .args(["-w", "%{http_version} %{http_code}"]);
    if let Some(ca) = ca {
        cmd.arg("--cacert").arg(ca);
    }
    cmd.arg(match (h2, ca.is_some()) {
        (false, _) => "--http1.1",
        (true, true) => "--http2",
        (true, false) => "--http2-prior-knowledge",
    });
    let o = cmd.arg(url).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "curl {url}: {}", common::stderr(&o));
    let (version, status) = text.split_once(' ').unwrap();
    assert_eq!(status, "200", "curl {url}");
    version.to_string()
}

/// SETTINGS_MAX_CONCURRENT_STREAMS as nghttp reads it from the server's first SETTINGS frame.
fn announced_streams(url: &str) -> Option<u32> {
    let o = Command::new(common::require("nghttp"))
        .args(["-nv", "-t", "10", url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let at = text.find("recv SETTINGS")?;
    // The frame's own lines, up to the next frame nghttp prints ("[  0.1] recv …", "… send …").
    let line = text[at..]
        .lines()
        .skip(1)
        .take_while(|l| !l.contains("] recv ") && !l.contains("] send "))
        .find(|l| l.contains("SETTINGS_MAX_CONCURRENT_STREAMS"))?;
    line.rsplit(':')
        .next()?
        .trim()
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// A docroot the lab's servers (possibly dropping to www-data) can read, and a small file of it.
fn docroot(dir: &Path) -> (PathBuf, String) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let doc = dir.join("docroot");
    let manifest = webstand_lab::compare::prepare_docroot(&doc, 1 << 20).unwrap();
    let small = manifest
        .files
        .iter()
        .find(|e| e.size == 1024 && !e.cgi)
        .expect("a 1 KiB file")
        .path
        .clone();
    (doc, small)
}

#[test]
fn each_h2_config_answers_curl_over_http2_with_the_docroot_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (doc, small) = docroot(dir.path());
    let cert = Arc::new(LabCert::generate(KeyType::EcdsaP256).unwrap());
    let got = dir.path().join("got");
    for &(name, streams) in H2_SERVERS {
        let kind = Kind::parse(name).unwrap();
        let binary = locate(kind);
        for tls in [true, false] {
            let mut setup = Setup::new(&doc);
            setup.h2 = true;
            setup.tls = tls.then(|| Arc::clone(&cert));
            let mut server = Server::start(&binary, &setup)
                .unwrap_or_else(|e| panic!("{kind:?} (TLS {tls}): {e:#}"));
            let scheme = if tls { "https" } else { "http" };
            let ca = tls.then(|| cert.ca_file());
            let what = format!("{} over {scheme}", kind.name());
            for path in ["/2k.html", small.as_str()] {
                let url = format!("{scheme}://{}{path}", server.addr);
                let want = file_md5(&doc.join(&path[1..]));
                assert_eq!(curl(&url, ca.as_deref(), true, &got), "2", "{what}: {url}");
                assert_eq!(file_md5(&got), want, "{what}: {url}");
                // HTTP/1.1 beside HTTP/2: by ALPN over TLS; on the same plain port but nginx's,
                // whose h2c port (1.22) takes HTTP/2 only.
                if tls || kind != Kind::parse("nginx").unwrap() {
                    assert_eq!(curl(&url, ca.as_deref(), false, &got), "1.1", "{what}");
                    assert_eq!(file_md5(&got), want, "{what}: {url} over HTTP/1.1");
                }
            }
            let url = format!("{scheme}://{}/2k.html", server.addr);
            assert_eq!(announced_streams(&url), Some(streams), "{what}");
            let pids = server.members(true).pids();
            assert!(!pids.is_empty(), "{what}");
            server.stop().unwrap();
            let left: Vec<&i32> = pids
                .iter()
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/stat"))
                        .is_ok_and(|s| !s.contains(") Z "))
                })
                .collect();
            assert!(left.is_empty(), "{what}: left {left:?}");
        }
    }
}

/// Whether `webstand serve` over TLS agrees on HTTP/2 with curl: what the lab's builtin row must
/// say (the server side of HTTP/2 lands on its own branch).
fn serve_speaks_h2(cert: &LabCert, doc: &Path) -> bool {
    let (s, tls) = common::serve_tls(doc, &cert.cert_file(), &cert.key_file(), &[]);
    let out = doc.parent().unwrap().join("serve-got");
    let url = format!("https://{tls}/2k.html");
    let version = curl(&url, Some(&cert.ca_file()), true, &out);
    drop(s);
    version == "2"
}

/// `webstand compare --h2 [--tls] --servers nginx,h2o,mini_httpd,builtin` on the h2 workloads
/// (and 2k over HTTP/1.1 with TLS): (its document, the server entries by name, stderr).
fn compare_h2(tls: bool) -> (serde_json::Value, String) {
    installed(&[
        Kind::parse("nginx").unwrap(),
        Kind::parse("h2o").unwrap(),
        Kind::parse("mini_httpd").unwrap(),
    ]);
    let workloads = if tls { "h2,h2-2k,2k" } else { "h2,h2-2k" };
    let tls = if tls {
        &["--h2", "--tls"][..]
    } else {
        &["--h2"][..]
    };
    let args = common::short_compare(
        "nginx,h2o,mini_httpd,builtin",
        workloads,
        "1,4",
        "300ms",
        tls,
    );
    let (out, doc) = compare_json(&args, &[]);
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}\n{doc:#}");
    (doc, err)
}

/// nginx and h2o: h2 column yes, every h2 level measured over HTTP/2 without an error; mini_httpd:
/// no, its h2 rows say "no h2" and measure nothing.
fn assert_h2_rows(doc: &serde_json::Value, err: &str) {
    for name in ["nginx", "h2o"] {
        assert_eq!(
            server(doc, name)["h2"],
            "yes",
            "{}\n{err}",
            server(doc, name)
        );
        for wk in ["h2", "h2-2k"] {
            let r = row(doc, wk, name);
            assert_eq!(
                (&r["measured"], &r["errors"]),
                (&true.into(), &0.into()),
                "{r}"
            );
            assert!(r["peak_hits_per_sec"].as_f64().unwrap() > 100.0, "{r}");
        }
    }
    let mini = server(doc, "mini_httpd");
    assert_eq!(mini["h2"], "no", "{mini}");
    for wk in ["h2", "h2-2k"] {
        let r = row(doc, wk, "mini_httpd");
        assert_eq!(r["measured"], false, "{r}");
        let note = r["note"].as_str().unwrap();
        assert!(note.starts_with("no h2: mini_httpd"), "{r}");
    }
}

#[test]
fn compare_tls_h2_checks_the_h2_column_and_runs_the_h2_workloads() {
    let (doc, err) = compare_h2(true);
    assert_h2_rows(&doc, &err);
    // HTTP/1.1 workloads still run on the h2 configs (ALPN offers http/1.1 beside h2), mini_httpd's
    // too: it was started for them.
    for r in rows(&doc, "2k") {
        assert_eq!(
            (&r["measured"], &r["errors"]),
            (&true.into(), &0.into()),
            "{r}"
        );
    }
    // builtin's cell is what curl finds against `webstand serve` over TLS, started apart.
    let dir = tempfile::tempdir().unwrap();
    let (docroot, _) = docroot(dir.path());
    let cert = LabCert::generate(KeyType::EcdsaP256).unwrap();
    let b = server(&doc, "builtin");
    let h2_row = row(&doc, "h2-2k", "builtin");
    if serve_speaks_h2(&cert, &docroot) {
        assert_eq!(b["h2"], "yes", "{b}");
        assert_eq!(h2_row["errors"], 0, "{h2_row}");
    } else {
        assert_eq!(b["h2"], "no", "{b}");
        let note = b["note"].as_str().unwrap();
        assert!(note.contains("no h2: answered HTTP/1.1 to ALPN h2"), "{b}");
        assert_eq!(h2_row["measured"], false, "{h2_row}");
        assert!(h2_row["note"]
            .as_str()
            .unwrap()
            .starts_with("no h2: answered HTTP/1.1"));
    }
}

#[test]
fn compare_h2c_runs_the_h2_workloads_by_prior_knowledge() {
    let (doc, err) = compare_h2(false);
    assert_h2_rows(&doc, &err);
    assert!(doc["settings"].as_str().unwrap().contains("h2c"), "{doc}");
    // builtin takes h2c when its serve has --h2c; else it is not started, and says why.
    let help = common::run(&["serve", "--help"]);
    let b = server(&doc, "builtin");
    if common::stdout(&help).contains("--h2c") {
        assert_eq!(b["h2"], "yes", "{b}");
    } else {
        assert_eq!(b["h2"], "no", "{b}");
        let note = b["note"].as_str().unwrap();
        assert!(
            note.contains("no h2: this webstand's serve has no --h2c"),
            "{b}"
        );
    }
}

#[test]
fn bad_h2_input_is_one_line_and_a_non_zero_exit() {
    for (args, want) in [
        (
            &["--servers", "nginx", "--workloads", "h4"][..],
            "unknown workload 'h4'",
        ),
        (
            &["--servers", "nginx", "--workloads", "h2-2k"][..],
            "workload h2-2k runs over HTTP/2: add --h2",
        ),
        (
            &["--h2", "--tls", "--servers", "mini_httpd"][..],
            "--h2: none of the servers speaks HTTP/2 (no h2: mini_httpd speaks HTTP/1.1 only)",
        ),
        (
            &["--h2", "--servers", "nginx", "--workloads", "2k"][..],
            "workload 2k speaks HTTP/1.1, but --h2 without --tls puts the servers on h2c",
        ),
        (
            &[
                "--h2",
                "--servers",
                "nginx",
                "--workloads",
                "h2",
                "--verify",
            ][..],
            "--verify and --probe speak HTTP/1.1: with --h2 add --tls",
        ),
    ] {
        common::lab::compare_refused(args, want);
    }
}

/// What each level of a comparison spoke, as `export` (CSV and JSON) and `show` say it: with --tls
/// the HTTP/1.1 workloads are "HTTP/1.1 over TLS" and the h2 ones "h2"; without it "HTTP/1.1" and
/// "h2c" (builtin, one level per workload).
#[test]
fn compare_exports_and_shows_the_protocol_each_level_spoke() {
    let cases: [(&[&str], &str, &[&str]); 3] = [
        (&["--h2", "--tls"], "2k,h2", &["HTTP/1.1 over TLS", "h2"]),
        (&["--h2"], "h2", &["h2c"]),
        (&[], "2k", &["HTTP/1.1"]),
    ];
    for (extra, workloads, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let args = common::short_compare("builtin", workloads, "2", "300ms", extra);
        let (out, doc) = common::lab::compare_json_in(&db, &args, &[]);
        assert!(out.status.success(), "{}\n{doc:#}", common::stderr(&out));
        let db = db.to_str().unwrap();
        let export = |format: &str| {
            let out = common::run(&["export", "--db", db, "last", "--format", format]);
            assert!(out.status.success(), "{}", common::stderr(&out));
            common::stdout(&out)
        };
        let csv = export("csv");
        let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
        let col = |name: &str| lines[0].iter().position(|c| *c == name).unwrap();
        let spoke: Vec<&str> = lines[1..].iter().map(|r| r[col("protocol")]).collect();
        assert_eq!(spoke, want, "{extra:?}: {csv}");
        let json: serde_json::Value = serde_json::from_str(&export("json")).unwrap();
        let levels = json["levels"].as_array().unwrap();
        let spoke: Vec<&str> = levels
            .iter()
            .map(|l| l["protocol"].as_str().unwrap())
            .collect();
        assert_eq!(spoke, want, "{extra:?}: {json:#}");
        let show = common::stdout(&common::run(&["show", "--db", db, "last"]));
        let line = format!("Protocol: {}\n", want.join(", "));
        assert!(show.contains(&line), "{extra:?}: {show}");
    }
}
