//! The lab's servers, for real: every known server is started through the lab on one docroot, every
//! file of the docroot is fetched from it and compared byte for byte, its features are checked, and
//! stopping it must leave no process behind; a taken port and a failed start. Then `webstand compare`
//! end to end: its tables, history and JSON, `--verify` against wrk and ab, bad input, a server killed
//! mid-run and Ctrl-C.

use crate::common;

use common::lab::{installed, locate, names, TextTable};
use common::short_compare;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use webstand_lab::servers::{self, Kind, Server, Setup};
use webstand_results::Support;

/// A docroot written by `webstand fixtures`, plus the lab's own files.
fn docroot() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("webstand-labtest-")
        .tempdir()
        .unwrap();
    let out = common::run(&["fixtures", dir.path().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "webstand fixtures failed: {}",
        common::stderr(&out)
    );
    servers::write_lab_files(dir.path()).unwrap();
    dir
}

/// Every regular file under `dir` (the fixtures and their manifest) except the CGI program, the lab's
/// protected files and dot files, as URL paths.
fn static_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                if name != "cgi-bin" && name != "lab" {
                    todo.push(p);
                }
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((format!("/{rel}"), p));
            }
        }
    }
    out.sort();
    out
}

fn builtin_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_webstand"))
}

/// Starts `kind` through the lab, fetches every static file and the CGI program, checks the features
/// the lab configures, stops it and checks nothing of it is left.
fn serve_every_file(kind: Kind) {
    let binary = locate(kind);
    let doc = docroot();
    let mut setup = Setup::new(doc.path());
    // Pinned to the first CPU this test may use (CPU 0 on the project's machine).
    let cpu = servers::allowed_cpus()[0];
    setup.cpus = Some(vec![cpu]);
    let mut server = Server::start(&binary, &setup)
        .unwrap_or_else(|e| panic!("{} did not start: {e:#}", kind.name()));
    let pid = server.pid();
    let files = static_files(doc.path());
    assert!(files.len() >= 10, "docroot too small: {files:?}");
    for (url, path) in &files {
        let want = std::fs::read(path).unwrap();
        let got = servers::fetch(server.addr, url, None, Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("{}: {url}: {e:#}", kind.name()));
        assert_eq!(got.status, 200, "{} {url}: {}", kind.name(), got.head);
        assert!(
            got.body == want,
            "{} {url}: {} bytes, expected {}",
            kind.name(),
            got.body.len(),
            want.len()
        );
    }
    // Every server runs the CGI program: itself, or through fcgiwrap (an install-deps package).
    {
        let got =
            servers::fetch(server.addr, "/cgi-bin/hello", None, Duration::from_secs(10)).unwrap();
        assert_eq!(
            got.status,
            200,
            "{} CGI: {}\nlog: {}",
            kind.name(),
            got.head,
            server.log_tail(5)
        );
        assert!(
            String::from_utf8_lossy(&got.body)
                .to_lowercase()
                .contains("hello"),
            "{} CGI body {:?}",
            kind.name(),
            String::from_utf8_lossy(&got.body)
        );
    }
    // Pinned as asked.
    let allowed = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(
        allowed
            .lines()
            .any(|l| l.strip_prefix("Cpus_allowed_list:").map(str::trim) == Some(&cpu.to_string())),
        "{} not pinned to CPU {cpu}",
        kind.name()
    );
    // Each feature the lab configures is verified (chroot too: CI runs as root), and the others are
    // reported absent; "configured but unverified" fails, saying why it could not be checked.
    common::require_root("the chroot feature check starts a second, chrooted instance");
    let features = servers::check_features(&mut server, &setup);
    let configured = kind.configures();
    for (name, configured, got) in [
        ("basic auth", configured.basic_auth, &features.basic_auth),
        ("chroot", configured.chroot, &features.chroot),
        ("throttling", configured.throttling, &features.throttling),
    ] {
        let want = if configured {
            Support::Verified
        } else {
            Support::No
        };
        assert_eq!(*got, want, "{} {name}", kind.name());
    }
    assert!(
        server.cpu().total() > Duration::ZERO,
        "{} used no CPU serving {} files",
        kind.name(),
        files.len()
    );
    server.stop().unwrap();
    assert!(
        server.leftovers().is_empty(),
        "{} left {:?}",
        kind.name(),
        server.leftovers()
    );
    assert!(
        webstand_lab::procstat::stat(pid).is_none(),
        "{} main process {pid} still there",
        kind.name()
    );
}

#[test]
fn builtin_serves_every_file() {
    serve_every_file(Kind::parse("builtin").unwrap());
}
#[test]
fn builtin_nocache_serves_every_file() {
    serve_every_file(Kind::parse("builtin-nocache").unwrap());
}
#[test]
fn nginx_serves_every_file() {
    serve_every_file(Kind::parse("nginx").unwrap());
}
#[test]
fn lighttpd_serves_every_file() {
    serve_every_file(Kind::parse("lighttpd").unwrap());
}
#[test]
fn apache_serves_every_file() {
    serve_every_file(Kind::parse("apache").unwrap());
}
#[test]
fn h2o_serves_every_file() {
    serve_every_file(Kind::parse("h2o").unwrap());
}
#[test]
fn caddy_serves_every_file() {
    serve_every_file(Kind::parse("caddy").unwrap());
}
#[test]
fn mini_httpd_serves_every_file() {
    serve_every_file(Kind::parse("mini_httpd").unwrap());
}

/// A port that is already taken makes the lab start the server on another one.
#[test]
fn a_taken_port_is_replaced_by_a_free_one() {
    let doc = docroot();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    for &kind in Kind::ALL {
        let binary = locate(kind);
        let mut setup = Setup::new(doc.path());
        setup.port = Some(port);
        let mut server =
            Server::start(&binary, &setup).unwrap_or_else(|e| panic!("{}: {e:#}", kind.name()));
        assert_ne!(server.addr.port(), port, "{}", kind.name());
        let got = servers::fetch(server.addr, "/2k.html", None, Duration::from_secs(5)).unwrap();
        assert_eq!((got.status, got.body.len()), (200, 2048), "{}", kind.name());
        server.stop().unwrap();
    }
}

/// A server that exits at start: the error carries the end of its log.
#[test]
fn a_failed_start_shows_the_end_of_the_servers_log() {
    let not_a_dir = tempfile::NamedTempFile::new().unwrap();
    let binary = servers::locate(Kind::parse("builtin").unwrap(), Some(&builtin_exe())).unwrap();
    let e = Server::start(&binary, &Setup::new(not_a_dir.path())).unwrap_err();
    let text = format!("{e:#}");
    assert!(
        text.contains("builtin did not start") && text.contains("its log ends"),
        "{text}"
    );
    assert!(
        text.contains("not a directory"),
        "the server's own message is missing: {text}"
    );
}

// ---- `webstand compare` end to end ----

#[test]
fn compare_prints_a_row_per_server_and_saves_every_level() {
    let kinds = installed(&[
        Kind::parse("builtin").unwrap(),
        Kind::parse("nginx").unwrap(),
        Kind::parse("lighttpd").unwrap(),
    ]);
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("h.db");
    // Levels of 500 ms: server CPU comes from /proc in 10 ms clock ticks.
    let servers = names(&kinds);
    let db_arg = ["compare", "--db", db_path.to_str().unwrap(), "-q"];
    let out = common::run(
        &[
            &db_arg[..],
            &short_compare(&servers, "2k,cgi", "1,4", "500ms", &[]),
        ]
        .concat(),
    );
    let text = common::stdout(&out);
    assert!(
        out.status.success(),
        "stdout: {text}\nstderr: {}",
        common::stderr(&out)
    );
    for table in [
        "Workload: 2k",
        "Workload: cgi",
        "Web server comparison (thttpd's layout)",
    ] {
        assert!(text.contains(table), "{table} missing from:\n{text}");
    }
    let section = |name: &str| {
        text.split("Workload: ")
            .find(|s| s.starts_with(name))
            .unwrap()
            .to_string()
    };
    let table = section("2k");
    let table = TextTable::of(&table);
    for k in &kinds {
        let row = table.row(k.name());
        let line = row.line;
        assert_eq!(row.cells.len(), table.header.len(), "{line}");
        let hits: f64 =
            (row.cell("peak hits/s").parse()).unwrap_or_else(|_| panic!("bad row {line}"));
        assert!(hits > 100.0, "{line}");
        assert_eq!(row.cell("errors"), "0", "errors in {line}");
        let server_cpu: f64 = (row.cell("srv CPU-µs/req").parse())
            .unwrap_or_else(|_| panic!("no server CPU in {line}"));
        assert!(server_cpu > 0.0, "{line}");
    }
    assert!(
        section("cgi").contains("nginx: CGI through fcgiwrap"),
        "{text}"
    );
    // Every measured level is in the history: servers × levels for 2k and for CGI (every server runs
    // it, natively or through fcgiwrap).
    let expected = 4 * kinds.len();
    let history = common::run(&["history", "--db", db_path.to_str().unwrap()]);
    let listing = common::stdout(&history);
    let line = listing
        .lines()
        .find(|l| l.contains("compare"))
        .unwrap_or_else(|| panic!("no compare run in\n{listing}"));
    let cells: Vec<&str> = line.split_whitespace().collect();
    let at = cells.iter().position(|c| *c == "compare").unwrap();
    assert_eq!(cells[at + 1], "complete", "{line}");
    let db = db_path.to_str().unwrap();
    let csv = common::stdout(&common::run(&[
        "export", "--db", db, "last", "--format", "csv",
    ]));
    assert_eq!(csv.lines().count(), 1 + expected, "levels saved: {csv}");
    // `show` rebuilds the rows' notes from the history as the live tables printed them.
    let shown = common::run(&["show", "last", "--db", db_path.to_str().unwrap()]);
    let shown = common::stdout(&shown);
    for note in [
        "nginx: CGI through fcgiwrap (FastCGI, 6 processes)",
        "builtin: files ≤ 64 KiB served from memory",
    ] {
        assert!(
            text.contains(note) && shown.contains(note),
            "{note}:\n{text}\n{shown}"
        );
    }
}

#[test]
fn compare_rejects_an_unknown_server_listing_the_known_ones() {
    let out = common::run(&["compare", "--servers", "nginx,iis"]);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("unknown server 'iis'")
            && err.contains(
                "builtin, builtin-nocache, nginx, lighttpd, apache, apache-modphp, h2o, caddy, mini_httpd"
            ),
        "{err}"
    );
}

#[test]
fn compare_rejects_a_docroot_it_cannot_write() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let under_a_file = file.path().join("docroot");
    let out = common::run(&[
        "compare",
        "--servers",
        "builtin",
        "--docroot",
        under_a_file.to_str().unwrap(),
        "-q",
    ]);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot write the docroot") && err.contains(under_a_file.to_str().unwrap()),
        "{err}"
    );
}

/// Processes whose parent is `parent` and whose command name is `comm`.
fn children_named(parent: u32, comm: &str) -> Vec<i32> {
    webstand_lab::procstat::all_processes()
        .into_iter()
        .filter(|s| s.ppid == parent as i32)
        .filter(|s| {
            std::fs::read_to_string(format!("/proc/{}/comm", s.pid))
                .map(|c| c.trim() == comm)
                .unwrap_or(false)
        })
        .map(|s| s.pid)
        .collect()
}

/// Runs `webstand compare ARGS --db (a new history)`, calls `act(webstand pid, server pid)` once a
/// process named `comm` was started by it and the first level was saved (the readiness signal: the
/// comparison is measuring), and returns the output. Bounded: the command is killed after 120 s.
fn compare_while(
    args: &[&str],
    comm: &str,
    act: impl Fn(u32, i32),
) -> (std::process::Output, Vec<i32>) {
    let history = tempfile::tempdir().unwrap();
    let db = history.path().join("h.db");
    let mut child = common::webstand()
        .args(args)
        .args(["--db", db.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while seen.is_empty() && std::time::Instant::now() < deadline {
        seen = children_named(pid, comm);
        std::thread::sleep(Duration::from_millis(20));
    }
    if seen.is_empty() {
        let _ = child.kill();
        panic!("{comm} never started");
    }
    common::wait_for_levels(&db, 1, Duration::from_secs(60));
    // The first process seen may be a short-lived one (`-v` for the version, a config check): the
    // server is the one still running once the comparison measures.
    let live = children_named(pid, comm);
    assert!(!live.is_empty(), "{comm} not running while measured");
    act(pid, live[0]);
    seen.retain(|p| !live.contains(p));
    seen.extend(live);
    let done = std::thread::spawn(move || child.wait_with_output().unwrap());
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !done.is_finished() {
        assert!(
            std::time::Instant::now() < deadline,
            "webstand compare did not finish"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (done.join().unwrap(), seen)
}

#[test]
fn a_server_that_dies_mid_run_is_reported_in_its_row() {
    installed(&[Kind::parse("lighttpd").unwrap()]);
    let args = [
        &["compare", "-q"][..],
        &short_compare("lighttpd,builtin", "2k", "1,2,4,8,16", "1s", &[]),
    ]
    .concat();
    // Killed once its first 1 s level is saved: 4 s before its sweep would end.
    let (out, pids) = compare_while(&args, "lighttpd", |_, server| {
        common::send_signal(server as u32, libc::SIGKILL)
    });
    let text = common::stdout(&out);
    // A comparison that lost a server is not a clean run: target lost, exit status 5, said last.
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{text}\n{err}");
    assert!(
        err.trim_end()
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("webstand: target lost (exit status 5)")
                && l.contains("lighttpd")),
        "{err}"
    );
    let note = text
        .lines()
        .find(|l| l.trim_start().starts_with("lighttpd:"))
        .unwrap_or_else(|| panic!("no note for lighttpd in\n{text}"));
    assert!(note.contains("died"), "{note}");
    // The rest of the comparison went on.
    assert!(
        text.lines().any(|l| l.starts_with("builtin")
            && l.split_whitespace()
                .nth(2)
                .and_then(|h| h.parse::<f64>().ok())
                .is_some_and(|h| h > 0.0)),
        "{text}"
    );
    assert!(pids
        .iter()
        .all(|p| webstand_lab::procstat::stat(*p).is_none()));
}

#[test]
fn ctrl_c_prints_what_was_measured_and_stops_the_server() {
    installed(&[
        Kind::parse("nginx").unwrap(),
        Kind::parse("lighttpd").unwrap(),
    ]);
    let args = [
        &["compare", "-q"][..],
        &short_compare("nginx,lighttpd", "2k", "1,2,4,8,16,32", "1s", &[]),
    ]
    .concat();
    // Interrupted once nginx's first 1 s level is saved: 5 s before its sweep would end.
    let (out, pids) = compare_while(&args, "nginx", |webstand, _| {
        common::send_signal(webstand, libc::SIGINT)
    });
    let text = common::stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{text}\n{}",
        common::stderr(&out)
    );
    assert!(
        text.contains("Workload: 2k") && text.contains("Interrupted"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("nginx")
            && l.split_whitespace()
                .nth(2)
                .and_then(|h| h.parse::<f64>().ok())
                .is_some_and(|h| h > 0.0)),
        "{text}"
    );
    assert!(text.contains("lighttpd: not run: interrupted"), "{text}");
    // nginx's master and its worker (same process group) are gone.
    for p in pids {
        assert!(
            webstand_lab::procstat::stat(p).is_none(),
            "nginx {p} left running"
        );
        assert!(
            webstand_lab::procstat::group_members(p).is_empty(),
            "nginx's group {p} left running"
        );
    }
}

#[test]
fn verify_puts_wrk_and_ab_beside_webstand_with_the_same_bytes_per_request() {
    common::require("wrk");
    common::require("ab");
    let out = common::run(
        &[
            &["compare"][..],
            &short_compare("builtin", "2k", "1", "200ms", &["--verify", "-q"]),
        ]
        .concat(),
    );
    let text = common::stdout(&out);
    assert!(out.status.success(), "{text}\n{}", common::stderr(&out));
    let table = text
        .split("Verification:")
        .nth(1)
        .unwrap_or_else(|| panic!("no verification table in\n{text}"));
    let mut per_request = Vec::new();
    for tool in ["webstand", "wrk", "ab"] {
        let row = table
            .lines()
            .find(|l| l.split_whitespace().nth(2) == Some(tool))
            .unwrap_or_else(|| panic!("no {tool} row in\n{table}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        let requests: u64 = cells[4].parse().unwrap();
        let hits: f64 = cells[5].parse().unwrap();
        assert!(requests > 100 && hits > 100.0, "{row}");
        assert_eq!(cells[8], "0", "errors: {row}");
        per_request.push(cells[7].parse::<f64>().unwrap());
    }
    // The same response, counted by three tools: bytes per request agree within a few header bytes.
    for b in &per_request {
        assert!(
            (b - per_request[0]).abs() < 40.0 && *b > 2048.0,
            "{per_request:?}"
        );
    }
}

#[test]
fn compare_json_holds_the_rows_of_every_table() {
    let out = common::run(
        &[
            &["compare"][..],
            &short_compare("builtin", "2k,cgi", "1", "300ms", &["-q", "--json"]),
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&common::stdout(&out)).expect("stdout is one JSON document");
    assert_eq!(
        (
            doc["outcome"]["status"].as_str(),
            doc["outcome"]["exit_status"].as_i64()
        ),
        (Some("complete"), Some(0)),
        "{}",
        doc["outcome"]
    );
    let workloads = doc["workloads"].as_array().unwrap();
    assert_eq!(
        workloads
            .iter()
            .map(|w| w["workload"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["2k", "cgi"]
    );
    for w in workloads {
        let row = &w["rows"][0];
        assert_eq!(
            (row["server"].as_str(), row["measured"].as_bool()),
            (Some("builtin"), Some(true)),
            "{w}"
        );
        assert!(
            row["peak_hits_per_sec"].as_f64().unwrap() > 0.0 && row["errors"] == 0,
            "{w}"
        );
    }
    assert_eq!(doc["servers"][0]["name"], "builtin");
    assert!(doc["servers"][0]["cgi_rps"].as_f64().unwrap() > 0.0);
}

/// utime + stime in clock ticks and the process group of a process, read from /proc/PID/stat by
/// the test itself (fields 14, 15 and 5 of proc(5), counted after the command's closing paren).
fn stat_ticks_and_group(pid: i32) -> Option<(u64, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let (utime, stime): (u64, u64) = (f[11].parse().ok()?, f[12].parse().ok()?);
    Some((utime + stime, f[2].parse().ok()?))
}

/// Watches every process of the process groups led by children of `parent` named in `names`, and
/// keeps each one's latest CPU ticks, until `done` is set: the servers' whole-life CPU, measured
/// apart from the lab. Returns ticks per server name. A leader is named by its latest name: between
/// fork and exec every child of webstand is called "webstand" (nginx too), so a first sight alone
/// would put nginx's CPU under builtin's.
fn watch_server_cpu(
    parent: u32,
    names: &'static [&'static str],
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<std::collections::HashMap<&'static str, u64>> {
    std::thread::spawn(move || {
        let mut leaders: std::collections::HashMap<i32, &'static str> = Default::default();
        let mut last: std::collections::HashMap<i32, (u64, i32)> = Default::default();
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            for name in names {
                for pid in children_named(parent, name) {
                    leaders.insert(pid, name);
                }
            }
            for entry in std::fs::read_dir("/proc").unwrap().flatten() {
                let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                    continue;
                };
                if let Some((ticks, group)) = stat_ticks_and_group(pid) {
                    if leaders.contains_key(&group) {
                        last.insert(pid, (ticks, group));
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut per_server = std::collections::HashMap::new();
        for (ticks, group) in last.values() {
            *per_server.entry(leaders[group]).or_insert(0) += ticks;
        }
        per_server
    })
}

/// The headline figure, server CPU-µs per request, against the servers' own /proc accounting read
/// by this test over each server's whole life (one level of one workload, so that life is the level
/// plus start-up and stop). Tolerance: the lab's figure covers the level only, so it may be lower
/// by the start-up and stop cost (within 10 %) and by /proc's tick (10 ms) at each end; never
/// higher than the whole life plus two ticks. nginx checks the process tree: master and worker.
#[test]
fn server_cpu_per_request_agrees_with_proc_read_by_the_test() {
    installed(&[
        Kind::parse("builtin").unwrap(),
        Kind::parse("nginx").unwrap(),
    ]);
    let history = tempfile::tempdir().unwrap();
    let db = history.path().join("h.db");
    let child = common::webstand()
        .args(["compare", "-q", "--json", "--db", db.to_str().unwrap()])
        .args(short_compare("builtin,nginx", "2k", "2", "2s", &[]))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = watch_server_cpu(child.id(), &["webstand", "nginx"], done.clone());
    let out = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let ticks = watcher.join().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = webstand_store::Store::open_existing(Some(&db))
        .unwrap()
        .load_run(1)
        .unwrap();
    // SAFETY: sysconf has no preconditions.
    let tick_us = 1e6 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    for (server, comm) in [("builtin", "webstand"), ("nginx", "nginx")] {
        let row = doc["workloads"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["server"] == server)
            .unwrap_or_else(|| panic!("no {server} row: {doc}"));
        let level = run
            .levels
            .iter()
            .find(|l| l.group == format!("{server}/2k"))
            .unwrap_or_else(|| panic!("no {server}/2k level saved"));
        let complete = level.result.complete as f64;
        assert!(complete > 1000.0, "{server}: {complete} requests");
        let lab_us = row["server_cpu_us"].as_f64().unwrap() * complete;
        let life_us = *ticks
            .get(comm)
            .unwrap_or_else(|| panic!("{server} never seen in /proc")) as f64
            * tick_us;
        eprintln!(
            "{server}: server CPU {:.0} ms by the lab, {:.0} ms by /proc over its life",
            lab_us / 1e3,
            life_us / 1e3
        );
        assert!(
            lab_us <= life_us + 2.0 * tick_us && lab_us >= 0.9 * life_us - 2.0 * tick_us,
            "{server}: the lab says {:.0} ms of server CPU for {complete} requests, /proc {:.0} ms \
             over the server's life",
            lab_us / 1e3,
            life_us / 1e3
        );
    }
}

/// `webstand compare ARGS --json --db DB -q` (in a TMPDIR of its own, leaving no process behind:
/// [`common::lab::compare_json_in`]): the document and the saved run.
fn compare_json(args: &[&str]) -> (serde_json::Value, webstand_store::StoredRun) {
    let history = tempfile::tempdir().unwrap();
    let db = history.path().join("h.db");
    let (out, doc) = common::lab::compare_json_in(&db, args, &[]);
    assert!(out.status.success(), "{args:?}: {}", common::stderr(&out));
    assert!(
        doc.is_object(),
        "no JSON document: {}",
        common::stdout(&out)
    );
    let run = webstand_store::Store::open_existing(Some(&db))
        .unwrap()
        .load_run(1)
        .unwrap();
    (doc, run)
}

/// Clients of the levels saved under `group`, in order.
fn saved_clients(run: &webstand_store::StoredRun, group: &str) -> Vec<usize> {
    run.levels
        .iter()
        .filter(|l| l.group == group)
        .map(|l| l.clients)
        .collect()
}

/// `compare --max-users`: the search runs on the named workload with the bounds given, its probes
/// are saved as `server/workload/max-users`, and the row reports the largest clean level: `4+`
/// (capped) when every level up to --max-clients passed, nothing when even the first broke.
#[test]
fn compare_max_users_searches_with_the_given_bounds() {
    let base = common::quick_compare(
        "builtin",
        &[
            "--warmup",
            "0",
            "--max-users",
            "2k",
            "--start-clients",
            "1",
            "--max-clients",
            "4",
        ],
    );
    // Bounds any loopback server meets: doubling reaches the limit.
    let (doc, run) = compare_json(&[&base[..], &["--max-p99-ms", "1000"]].concat());
    let row = &doc["workloads"][0]["rows"][0];
    assert_eq!(
        (row["max_users"].as_u64(), row["max_users_capped"].as_bool()),
        (Some(4), Some(true)),
        "{doc}"
    );
    assert_eq!(saved_clients(&run, "builtin/2k/max-users"), [1, 2, 4]);
    for l in run.levels.iter().filter(|l| l.group.ends_with("max-users")) {
        assert!(
            l.result.complete > 0 && l.result.failed.total() == 0,
            "{} clients",
            l.clients
        );
    }
    assert!(
        doc["settings"]
            .as_str()
            .unwrap()
            .contains("max users: 1 to 4 clients"),
        "{doc}"
    );
    // A p99 bound no server meets (1 µs): the first probe breaks and no level is reported clean.
    let (doc, run) = compare_json(&[&base[..], &["--max-p99-ms", "0.001"]].concat());
    let row = &doc["workloads"][0]["rows"][0];
    assert!(row["max_users"].is_null(), "{doc}");
    assert_eq!(row["max_users_capped"], false, "{doc}");
    assert_eq!(saved_clients(&run, "builtin/2k/max-users"), [1]);
    assert!(
        doc["settings"].as_str().unwrap().contains("p99 ≤ 0.001 ms"),
        "{doc}"
    );
}

/// `compare --rounds 3` end to end: the servers take turns, the order rotating round after round
/// (the history's order says so), and each row is the median of the rounds as the README defines it, recomputed here
/// from the saved levels: the round with the median peak gives peak hits/s and its clients, server
/// CPU-µs per request is the median of the rounds' figures at their peaks, errors are summed.
#[test]
fn compare_rounds_report_medians_of_the_rounds() {
    installed(&[Kind::parse("nginx").unwrap()]);
    let (doc, run) = compare_json(&short_compare(
        "builtin,nginx",
        "2k",
        "1,2",
        "300ms",
        &["--rounds", "3"],
    ));
    assert_eq!(doc["rounds"], 3, "{doc}");
    let order: Vec<&str> = run.levels.iter().map(|l| l.group.as_str()).collect();
    let (b, n) = (["builtin/2k"; 2], ["nginx/2k"; 2]);
    assert_eq!(
        order,
        [b, n, n, b, b, n].concat(),
        "servers take turns, the order rotating each round"
    );
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[1]
    };
    for server in ["builtin", "nginx"] {
        let levels: Vec<_> = run
            .levels
            .iter()
            .filter(|l| l.group == format!("{server}/2k"))
            .collect();
        let hits = |l: &webstand_store::StoredLevel| {
            l.result.complete as f64 / l.result.elapsed.as_secs_f64()
        };
        // Each round's peak level (by the round the history saved with each level), then the
        // round whose peak is the median.
        let peaks: Vec<_> = (1..=3)
            .map(|round| {
                *levels
                    .iter()
                    .filter(|l| l.round == Some(round))
                    .max_by(|a, b| hits(a).total_cmp(&hits(b)))
                    .unwrap()
            })
            .collect();
        let saved: Vec<Option<usize>> = levels.iter().map(|l| l.round).collect();
        assert_eq!(saved, [1, 1, 2, 2, 3, 3].map(Some), "{server}");
        let mid = median(peaks.iter().map(|l| hits(l)).collect());
        let mid_level = peaks.iter().find(|l| hits(l) == mid).unwrap();
        let cpu = median(
            peaks
                .iter()
                .map(|l| l.server.as_ref().unwrap().cpu_us_per_request(&l.result))
                .collect(),
        );
        let row = doc["workloads"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["server"] == server)
            .unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(
            close(row["peak_hits_per_sec"].as_f64().unwrap(), mid),
            "{server}: peak {} vs the median round's {mid}",
            row["peak_hits_per_sec"]
        );
        assert_eq!(
            row["clients_at_peak"].as_u64(),
            Some(mid_level.clients as u64)
        );
        assert!(
            close(row["server_cpu_us"].as_f64().unwrap(), cpu),
            "{server}: server CPU {} vs the rounds' median {cpu}",
            row["server_cpu_us"]
        );
        let errors: u64 = levels.iter().map(|l| l.result.failed.total()).sum();
        assert_eq!(row["errors"].as_u64(), Some(errors), "{server}");
    }
}

#[test]
fn compare_takes_benchs_spin_flag_and_refuses_a_bad_one() {
    common::lab::compare_refused(
        &["--servers", "builtin", "--spin", "on"],
        "--spin: expected auto, off or a window in microseconds (1 to 1000), got 'on'",
    );
}
