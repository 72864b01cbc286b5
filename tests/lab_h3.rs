//! `webstand compare --h3` end to end over loopback: the lab servers that speak HTTP/3 here (the
//! builtin `webstand serve --listen-quic`, Debian's caddy) get rows whose request counts are the
//! servers' own, read back from their access logs (caddy's JSON log, added to the lab's Caddyfile
//! by a wrapper on PATH; serve's `--access-log`, added by a wrapper given as the builtin binary);
//! the others (nginx 1.22, h2o 2.2, apache, lighttpd, mini_httpd) each say in one line why not;
//! `--probe` gives HTTP/3 servers the h3 category (five hostile QUIC clients, each judged); bad
//! input is one line and a non-zero exit.

use crate::common;

use common::lab::{compare_json, installed, kinds, row, server};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use webstand_lab::compare::{self, CompareObserver, Options};
use webstand_lab::servers::find_program;
use webstand_lab::tls::KeyType;
use webstand_results::WorkloadKind;

/// Requests per level: few, and the level ends on them (its duration is far longer).
const REQUESTS: u64 = 300;

/// An executable shell script at `path`.
fn script(path: &Path, text: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{text}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A directory anyone may write (caddy runs as the lab's worker user when the test is root).
fn shared_dir(parent: &Path, name: &str) -> PathBuf {
    let d = parent.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    d
}

/// `bin/caddy` under `dir`: the real caddy, started on a copy of the lab's Caddyfile whose site
/// also writes a JSON access log to `log`.
fn caddy_with_access_log(dir: &Path, log: &Path) -> PathBuf {
    let real = find_program("caddy").expect("caddy: CI installs it");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let copy = log.with_file_name("Caddyfile");
    script(
        &bin.join("caddy"),
        &format!(
            "if [ \"$1\" = run ]; then\n  sed 's|^  bind 127.0.0.1$|  bind 127.0.0.1\\n  log {{\\n    \
             output file {log}\\n    format json\\n  }}|' \"$3\" > {copy}\n  \
             exec {real} run --config {copy} --adapter caddyfile\nfi\nexec {real} \"$@\"\n",
            log = log.display(),
            copy = copy.display(),
            real = real.display(),
        ),
    );
    bin
}

/// HTTP/3 requests of an access log: caddy's JSON lines (`request.proto`, `status`).
fn caddy_h3_requests(log: &Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["request"]["proto"] == "HTTP/3.0")
        .map(|v| {
            let uri = v["request"]["uri"].as_str().unwrap_or_default().to_string();
            (uri, v["status"].as_u64().unwrap_or(0))
        })
        .collect()
}

/// Why each server without HTTP/3 here has none, as its rows and its thttpd row say.
const WHY_NOT: [(&str, &str); 5] = [
    (
        "nginx",
        "no h3: this nginx has no http_v3_module (HTTP/3 came in nginx 1.25)",
    ),
    (
        "h2o",
        "no h3: h2o 2.2 has no QUIC (HTTP/3 came with h2o 2.3)",
    ),
    (
        "apache",
        "no h3: Apache httpd has no HTTP/3 module (HTTP/1.1 and HTTP/2 only)",
    ),
    (
        "lighttpd",
        "no h3: lighttpd 1.4 has no QUIC (HTTP/1.1 and HTTP/2 only)",
    ),
    ("mini_httpd", "no h3: mini_httpd speaks HTTP/1.1 only"),
];

#[test]
fn compare_h3_rows_are_what_caddy_logged_and_the_others_say_why_not() {
    let _busy = common::busy_lab();
    let names = "builtin,caddy,nginx,h2o,apache,lighttpd,mini_httpd";
    installed(&kinds(&names.split(',').collect::<Vec<_>>()));
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let logs = shared_dir(dir.path(), "logs");
    let log = logs.join("caddy.json");
    let bin = caddy_with_access_log(dir.path(), &log);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let n = REQUESTS.to_string();
    let args = common::short_compare(names, "h3-2k,2k", "4", "20s", &["--h3", "-n", &n]);
    let (out, doc) = compare_json(&args, &[("PATH", path)]);
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}\n{doc:#}");
    assert!(doc["settings"]
        .as_str()
        .unwrap()
        .contains("HTTP/3 over QUIC"));
    for name in ["builtin", "caddy"] {
        let s = server(&doc, name);
        assert_eq!((&s["h3"], &s["tls"]), (&"yes".into(), &"yes".into()), "{s}");
        let r = row(&doc, "h3-2k", name);
        assert_eq!(
            (&r["measured"], &r["errors"], &r["requests_at_peak"]),
            (&true.into(), &0.into(), &REQUESTS.into()),
            "{r}\n{err}"
        );
    }
    // caddy's own count: the h3 check's GET (and its retries while the QUIC port opened), then
    // every request of the row, each a 200 for /2k.html over HTTP/3.
    let logged = caddy_h3_requests(&log);
    assert!(
        logged
            .iter()
            .all(|(uri, status)| uri == "/2k.html" && *status == 200),
        "{logged:?}"
    );
    let extra = logged.len() as u64 - REQUESTS.min(logged.len() as u64);
    assert!(
        (1..=3).contains(&extra) && logged.len() as u64 > REQUESTS,
        "caddy logged {} HTTP/3 requests, the row has {REQUESTS}",
        logged.len()
    );
    for (name, why) in WHY_NOT {
        let s = server(&doc, name);
        assert_eq!(s["h3"], "no", "{s}");
        assert!(s["note"].as_str().unwrap().contains(why), "{name}: {s}");
        let r = row(&doc, "h3-2k", name);
        assert_eq!(r["measured"], false, "{r}");
        assert!(
            r["note"].as_str().unwrap_or_default().starts_with(why),
            "{r}"
        );
        // Its HTTP/1.1 workload still ran, over HTTPS.
        let r = row(&doc, "2k", name);
        assert_eq!(
            (&r["measured"], &r["errors"]),
            (&true.into(), &0.into()),
            "{r}"
        );
    }
}

/// The comparison's observer: nothing to say, never stopped.
struct Quiet;

impl webstand_lab::sweep::Observer for Quiet {}

impl CompareObserver for Quiet {
    fn series(&mut self, _: &str, _: &str, _: &str, _: usize) {}
    fn note(&mut self, _: &str) {}
    fn stop_requested(&self) -> bool {
        false
    }
}

/// The builtin row against `webstand serve`'s own access log: the lab given, as its builtin
/// binary, a wrapper that adds `--access-log` to the serve it starts.
#[test]
fn compare_h3_builtin_rows_are_what_serve_logged() {
    let _busy = common::busy_lab();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let logs = shared_dir(dir.path(), "logs");
    let log = logs.join("access.log");
    let wrapper = dir.path().join("webstand");
    script(
        &wrapper,
        &format!(
            "if [ \"$1\" = serve ] && [ \"$2\" = --config ]; then\n  \
             exec {real} \"$@\" --access-log {log}\nfi\nexec {real} \"$@\"\n",
            real = env!("CARGO_BIN_EXE_webstand"),
            log = log.display()
        ),
    );
    let mut opts = Options::new(&dir.path().join("docroot"));
    opts.servers = kinds(&["builtin"]);
    opts.workloads = vec![WorkloadKind::H3, WorkloadKind::H3TwoK];
    opts.levels = vec![2, 8];
    opts.stop.requests = Some(REQUESTS);
    opts.stop.duration = Some(Duration::from_secs(20));
    opts.warmup = None;
    opts.max_users_for.clear();
    opts.features = false;
    opts.tls = Some(KeyType::EcdsaP256);
    opts.h3 = true;
    opts.builtin = Some(wrapper);
    let c = compare::run(&opts, &mut Quiet).unwrap();
    let outcome = &c.servers[0];
    assert!(outcome.skipped.is_none(), "{:?}", outcome.skipped);
    let mut measured = 0;
    for w in &outcome.workloads {
        let sweep = w.sweep.as_ref().unwrap_or_else(|| panic!("{:?}", w.note));
        for l in &sweep.levels {
            assert_eq!((l.result.successful(), l.result.errors()), (REQUESTS, 0));
            let quic = l.result.quic.as_ref().expect("QUIC's figures");
            assert_eq!(
                quic.handshakes, l.clients as u64,
                "one connection per client"
            );
            measured += l.result.successful();
        }
    }
    assert_eq!(measured, 4 * REQUESTS);
    let text = std::fs::read_to_string(&log).unwrap();
    let h3: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" HTTP/3.0\" "))
        .collect();
    assert!(h3.iter().all(|l| l.contains("\" 200 ")), "{h3:?}");
    let extra = h3.len() as u64 - measured.min(h3.len() as u64);
    assert!(
        (1..=3).contains(&extra) && h3.len() as u64 > measured,
        "serve logged {} HTTP/3 requests, the rows have {measured}",
        h3.len()
    );
}

/// `--probe` on an HTTP/3 run: the h3 category's five cases judged on builtin and caddy; ours
/// survives every one as the RFCs ask.
#[test]
fn compare_h3_probe_gives_http3_servers_the_h3_category() {
    let _alone = common::alone_in_lab();
    common::require("slowhttptest");
    installed(&kinds(&["builtin", "caddy"]));
    let args = common::short_compare(
        "builtin,caddy,mini_httpd",
        "2k",
        "1",
        "300ms",
        &[
            "--h3",
            "--probe",
            "--probe-only",
            "h3",
            "--attack-connections",
            "10",
            "--attack-time",
            "1s",
            "--hold-max",
            "10",
        ],
    );
    let (out, doc) = compare_json(&args, &[]);
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}\n{doc:#}");
    let robustness = doc["robustness"].as_array().expect("a robustness array");
    let h3 = |name: &str| -> Option<Value> {
        let r = robustness.iter().find(|r| r["server"] == name)?;
        let cats = r["categories"].as_array()?;
        cats.iter().find(|c| c["category"] == "h3").cloned()
    };
    let ours = h3("builtin").unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(
        (&ours["safe"], &ours["lenient"], &ours["unsafe"]),
        (&5.into(), &0.into(), &0.into()),
        "{ours}\n{doc:#}"
    );
    let caddy = h3("caddy").unwrap_or_else(|| panic!("{doc:#}"));
    let total: u64 = ["safe", "lenient", "unsafe"]
        .iter()
        .map(|k| caddy[k].as_u64().unwrap())
        .sum();
    assert_eq!(total, 5, "{caddy}");
    // mini_httpd has no HTTP/3: no h3 category in its row.
    assert!(h3("mini_httpd").is_none(), "{doc:#}");
}

#[test]
fn bad_h3_input_is_one_line_and_a_non_zero_exit() {
    for (args, want) in [
        (
            &["--servers", "nginx", "--workloads", "h3-2k"][..],
            "workload h3-2k runs over HTTP/3: add --h3",
        ),
        (
            &["--h3", "--servers", "mini_httpd,h2o"][..],
            "--h3: none of the servers speaks HTTP/3 here (no h3: mini_httpd speaks HTTP/1.1 \
             only; no h3: h2o 2.2 has no QUIC (HTTP/3 came with h2o 2.3)); these do: builtin, \
             builtin-nocache, caddy",
        ),
    ] {
        common::lab::compare_refused(args, want);
    }
    let out = common::run(&["lab", "up", "builtin", "--h3"]);
    assert_eq!(out.status.code(), Some(1));
    let err = common::stderr(&out);
    assert!(err.contains("--h3 needs --tls"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// `lab up caddy --tls --h3`: ready once its QUIC port answers, which `bench --h3` then reaches
/// verifying the lab's CA.
#[test]
fn lab_up_h3_is_ready_when_quic_answers() {
    let _busy = common::busy_lab();
    installed(&kinds(&["caddy"]));
    let mut up = common::lab_up::LabUp::start(&["caddy", "--tls", "--h3"]);
    let url = up.url("/2k.html");
    let ca = up.get("ca").to_string();
    let out = common::run(&[
        "bench", "-q", "--h3", "--cacert", &ca, "-n", "20", "-c", "2", &url,
    ]);
    let text = common::stdout(&out);
    assert!(out.status.success(), "{text}{}", common::stderr(&out));
    assert!(text.contains("Complete requests:      20"), "{text}");
    assert!(up.stop().success());
}
