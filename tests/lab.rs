//! The lab's servers, for real: every known server is started through the lab on one docroot, every
//! file of the docroot is fetched from it and compared byte for byte, its features are checked, and
//! stopping it must leave no process behind; a taken port and a failed start. Then `webstand compare`
//! end to end: its tables, history and JSON, `--verify` against wrk and ab, bad input, a server killed
//! mid-run and Ctrl-C.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use webstand_lab::servers::{self, Kind, Server, Setup, Support};

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
    let Ok(binary) = servers::locate(kind, Some(&builtin_exe())) else {
        eprintln!(
            "skipping {}: not installed (scripts/install-deps.sh installs it)",
            kind.name()
        );
        return;
    };
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
    let features = servers::check_features(&mut server, &setup);
    let (auth, chroot, throttle) = servers::configures(kind);
    for (name, configured, got) in [
        ("basic auth", auth, &features.basic_auth),
        ("chroot", chroot, &features.chroot),
        ("throttling", throttle, &features.throttling),
    ] {
        match got {
            Support::Failed(why) => panic!("{} {name}: {why}", kind.name()),
            Support::No => assert!(
                !configured,
                "{} {name} configured but reported absent",
                kind.name()
            ),
            _ => assert!(configured),
        }
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
    serve_every_file(Kind::Builtin);
}
#[test]
fn builtin_nocache_serves_every_file() {
    serve_every_file(Kind::BuiltinNoCache);
}
#[test]
fn nginx_serves_every_file() {
    serve_every_file(Kind::Nginx);
}
#[test]
fn lighttpd_serves_every_file() {
    serve_every_file(Kind::Lighttpd);
}
#[test]
fn apache_serves_every_file() {
    serve_every_file(Kind::Apache);
}
#[test]
fn h2o_serves_every_file() {
    serve_every_file(Kind::H2o);
}
#[test]
fn caddy_serves_every_file() {
    serve_every_file(Kind::Caddy);
}
#[test]
fn mini_httpd_serves_every_file() {
    serve_every_file(Kind::MiniHttpd);
}

/// A port that is already taken makes the lab start the server on another one.
#[test]
fn a_taken_port_is_replaced_by_a_free_one() {
    let doc = docroot();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    for kind in Kind::ALL {
        let Ok(binary) = servers::locate(kind, Some(&builtin_exe())) else {
            continue;
        };
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
    let binary = servers::locate(Kind::Builtin, Some(&builtin_exe())).unwrap();
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

/// Servers of this machine among `want`, as a --servers list (builtin is always there).
fn installed(want: &[Kind]) -> Vec<Kind> {
    want.iter()
        .copied()
        .filter(|k| servers::locate(*k, Some(&builtin_exe())).is_ok())
        .collect()
}

fn names(kinds: &[Kind]) -> String {
    kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(",")
}

#[test]
fn compare_prints_a_row_per_server_and_saves_every_level() {
    let kinds = installed(&[Kind::Builtin, Kind::Nginx, Kind::Lighttpd]);
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("h.db");
    // Levels of 500 ms: server CPU comes from /proc in 10 ms clock ticks.
    let out = common::run(&[
        "compare",
        "--db",
        db_path.to_str().unwrap(),
        "--servers",
        &names(&kinds),
        "--workloads",
        "2k,cgi",
        "-c",
        "1,4",
        "-d",
        "500ms",
        "--warmup",
        "0",
        "--max-users",
        "none",
        "--no-features",
        "-q",
    ]);
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
    for k in &kinds {
        let row = section("2k")
            .lines()
            .find(|l| l.starts_with(k.name()))
            .unwrap_or_else(|| panic!("no {} row in\n{text}", k.name()))
            .to_string();
        let cells: Vec<&str> = row.split_whitespace().collect();
        let hits: f64 = cells[2].parse().unwrap_or_else(|_| panic!("bad row {row}"));
        assert!(hits > 100.0, "{row}");
        assert_eq!(cells[5], "0", "errors in {row}");
        let server_cpu: f64 = cells[7]
            .parse()
            .unwrap_or_else(|_| panic!("no server CPU in {row}"));
        assert!(server_cpu > 0.0, "{row}");
    }
    if kinds.contains(&Kind::Nginx) {
        assert!(
            section("cgi").contains("nginx: CGI through fcgiwrap"),
            "{text}"
        );
    }
    // Every measured level is in the history: servers × levels for 2k and for CGI.
    let expected = 4 * kinds.len();
    let history = common::run(&["history", "--db", db_path.to_str().unwrap()]);
    let listing = common::stdout(&history);
    let line = listing
        .lines()
        .find(|l| l.contains("compare"))
        .unwrap_or_else(|| panic!("no compare run in\n{listing}"));
    let cells: Vec<&str> = line.split_whitespace().collect();
    let at = cells.iter().position(|c| *c == "compare").unwrap();
    assert_eq!(cells[at + 1], expected.to_string(), "levels saved: {line}");
    assert_eq!(cells[at + 2], "complete", "{line}");
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
                "builtin, builtin-nocache, nginx, lighttpd, apache, h2o, caddy, mini_httpd"
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

/// Runs `webstand compare ARGS`, calls `act(webstand pid)` once a process named `comm` was started by
/// it, and returns the output. Bounded: the command is killed after 120 s.
fn compare_while(
    args: &[&str],
    comm: &str,
    act: impl Fn(u32, i32),
) -> (std::process::Output, Vec<i32>) {
    let child = common::webstand()
        .args(args)
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
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!seen.is_empty(), "{comm} never started");
    // Let the first levels run.
    std::thread::sleep(Duration::from_millis(1500));
    act(pid, seen[0]);
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
    if installed(&[Kind::Lighttpd]).is_empty() {
        eprintln!("skipping: lighttpd not installed");
        return;
    }
    let args = [
        "compare",
        "--servers",
        "lighttpd,builtin",
        "--workloads",
        "2k",
        "-c",
        "1,2,4,8,16",
        "-d",
        "1s",
        "--warmup",
        "0",
        "--max-users",
        "none",
        "--no-features",
        "-q",
    ];
    let (out, pids) = compare_while(&args, "lighttpd", |_, server| unsafe {
        libc::kill(server, libc::SIGKILL);
    });
    let text = common::stdout(&out);
    assert!(out.status.success(), "{text}\n{}", common::stderr(&out));
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
    if installed(&[Kind::Nginx]).is_empty() {
        eprintln!("skipping: nginx not installed");
        return;
    }
    let args = [
        "compare",
        "--servers",
        "nginx,lighttpd",
        "--workloads",
        "2k",
        "-c",
        "1,2,4,8,16,32",
        "-d",
        "1s",
        "--warmup",
        "0",
        "--max-users",
        "none",
        "--no-features",
        "-q",
    ];
    let (out, pids) = compare_while(&args, "nginx", |webstand, _| unsafe {
        libc::kill(webstand as i32, libc::SIGINT);
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
    if !common::have("wrk") || !common::have("ab") {
        eprintln!("skipping: wrk or ab not installed (scripts/install-deps.sh installs them)");
        return;
    }
    let out = common::run(&[
        "compare",
        "--servers",
        "builtin",
        "--workloads",
        "2k",
        "-c",
        "1",
        "-d",
        "200ms",
        "--warmup",
        "0",
        "--max-users",
        "none",
        "--no-features",
        "--verify",
        "-q",
    ]);
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
    let out = common::run(&[
        "compare",
        "--servers",
        "builtin",
        "--workloads",
        "2k,cgi",
        "-c",
        "1",
        "-d",
        "300ms",
        "--warmup",
        "0",
        "--max-users",
        "none",
        "--no-features",
        "-q",
        "--json",
    ]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&common::stdout(&out)).expect("stdout is one JSON document");
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
