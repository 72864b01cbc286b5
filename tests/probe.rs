//! `webstand probe` end to end: against `webstand serve` every case is safe; against nginx and
//! lighttpd (started through the lab) every case runs and earns the verdict written down for that
//! server, saved and shown again by `show`;
//! against servers written here to be unsafe — one that reads Transfer-Encoding and carries on
//! (a desync) and serves `../` paths (a leak), one that serves a connection at a time (a hang), one
//! that dies on a long request line (a crash) — the probe says unsafe, for the right reason. Bad
//! input (an unreachable target, a bad case file, bad flags) is one line and a non-zero exit.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const MARKER: &str = "WEBSTAND-SECRET-5c1e77";

/// The root line of the site's own etc/passwd, which the unsafe server's `../` climbs reach in its
/// jail instead of the machine's.
const FAKE_ROOT_LINE: &str = "root:x:0:0:the probe tests' jail:/nonexistent:/usr/sbin/nologin";

/// A docroot under a directory that also holds a secret file beside it (outside the root) and an
/// etc/passwd of its own (see [`unsafe_server`]).
fn site() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    std::fs::create_dir(&www).unwrap();
    std::fs::write(
        www.join("index.html"),
        "<p>hello from the docroot</p>\n".repeat(40),
    )
    .unwrap();
    std::fs::write(dir.path().join("secret.txt"), format!("{MARKER}\n")).unwrap();
    std::fs::create_dir(dir.path().join("etc")).unwrap();
    std::fs::write(dir.path().join("etc/passwd"), format!("{FAKE_ROOT_LINE}\n")).unwrap();
    (dir, www)
}

fn probe(db: &Path, args: &[&str], limit: Duration) -> std::process::Output {
    let mut all = vec!["--db", db.to_str().unwrap(), "probe"];
    all.extend_from_slice(args);
    common::run_with_timeout(&all, limit)
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            common::stdout(out),
            common::stderr(out)
        )
    })
}

fn verdicts(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
                c["notes"].to_string(),
            )
        })
        .collect()
}

/// The built-in cases, as `webstand probe --list` names them.
fn builtin_cases() -> Vec<(String, String)> {
    let out = common::run(&["probe", "--list"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    common::stdout(&out)
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().unwrap().to_string(), w.next().unwrap().to_string())
        })
        .collect()
}

#[test]
fn webstand_serve_is_safe_in_every_case() {
    let (dir, www) = site();
    let server = common::serve(&www, &["--threads", "1"]);
    let db = dir.path().join("h.db");
    let url = format!("http://{}/index.html", server.addr);
    let out = probe(
        &db,
        &[
            "--json",
            "--secret-path",
            "../secret.txt",
            "--secret-marker",
            MARKER,
            &url,
        ],
        Duration::from_secs(240),
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let report = json(&out);
    assert_eq!(report["ended"], "complete");
    assert_eq!(report["not_run"].as_array().unwrap().len(), 0);
    let builtin = builtin_cases();
    let traversal = builtin.iter().filter(|(_, c)| c == "traversal").count();
    let rows = verdicts(&report);
    // Traversal cases that climb run once for /etc/passwd and once for the secret.
    assert!(rows.len() > builtin.len() && rows.len() < builtin.len() + traversal);
    for (name, verdict, notes) in &rows {
        assert_eq!(verdict, "safe", "{name}: {notes}");
    }
    assert!(rows.iter().any(|(n, ..)| n == "dotdot@secret"));
    // The server really was probed: it is still there, and its own log of refusals is not empty.
    assert!(common::wait_listening(server.addr, Duration::from_secs(1)));
    // Saved case by case in the history, and shown again by `show`.
    let show = common::run(&["--db", db.to_str().unwrap(), "show", "last"]);
    let text = common::stdout(&show);
    assert!(
        text.contains("cl-te") && text.contains("dotdot@secret"),
        "{text}"
    );
    let history = common::stdout(&common::run(&["--db", db.to_str().unwrap(), "history"]));
    // A probe's status in the history is its verdicts.
    let line = (history.lines())
        .find(|l| l.contains(" probe "))
        .unwrap_or_else(|| panic!("{history}"));
    assert!(
        line.contains(" unsafe, ") && line.contains(" lenient "),
        "{history}"
    );
}

/// Starts one lab server on `docroot`, probes it with the whole built-in suite (`--json`, saved
/// in the history `db`), stops it; the report, and what the probe said on stderr.
fn probe_lab_server(
    kind: webstand_lab::servers::Kind,
    docroot: &Path,
    db: &Path,
) -> (serde_json::Value, String) {
    use webstand_lab::servers::{locate, Server, Setup};
    let binary = locate(kind, None)
        .unwrap_or_else(|e| panic!("{} is needed (scripts/install-deps.sh): {e}", kind.name()));
    let mut server = Server::start(&binary, &Setup::new(docroot)).unwrap();
    let url = format!("http://{}/2k.html", server.addr);
    let out = probe(db, &["--json", &url], Duration::from_secs(300));
    let alive = server.alive();
    server.stop().unwrap();
    let err = common::stderr(&out);
    // The whole suite ran, and the server survived it.
    assert_eq!(out.status.code(), Some(0), "{}: {err}", kind.name());
    assert!(alive, "{}: exit 0 but the server died\n{err}", kind.name());
    (json(&out), err)
}

/// The verdicts Debian's nginx (1.22) and lighttpd (1.4) earn with the lab's configurations, case
/// by case: every case safe but these, which are lenient (none is unsafe). nginx accepts a chunk
/// extension of 100,000 bytes and bare LFs in chunk lines, and answers 1,300 one-byte suffix ranges
/// in full (52 times the page); both keep a slowloris head open past the case's 14 s.
fn lenient_cases(kind: webstand_lab::servers::Kind) -> &'static [&'static str] {
    match kind.name() {
        "nginx" => &[
            "chunk-ext-huge",
            "chunk-ext-bare-lf",
            "chunk-bare-lf",
            "range-1300-suffix",
            "slowloris",
        ],
        "lighttpd" => &["slowloris"],
        other => panic!("no verdicts written down for {other}"),
    }
}

#[test]
fn nginx_and_lighttpd_get_a_whole_table_of_known_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let docroot = dir.path().join("www");
    let out = common::run(&["fixtures", docroot.to_str().unwrap()]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    webstand_lab::servers::write_lab_files(&docroot).unwrap();
    let builtin = builtin_cases();
    // The two probes run side by side, each with a history of its own: each mostly waits on its
    // server.
    let runs: Vec<_> = [
        webstand_lab::servers::Kind::parse("nginx").unwrap(),
        webstand_lab::servers::Kind::parse("lighttpd").unwrap(),
    ]
    .into_iter()
    .map(|kind| {
        let (docroot, db) = (
            docroot.clone(),
            dir.path().join(format!("{}.db", kind.name())),
        );
        std::thread::spawn(move || (kind, db.clone(), probe_lab_server(kind, &docroot, &db)))
    })
    .collect();
    for run in runs {
        let (kind, db, (report, err)) = run.join().unwrap();
        let name = kind.name();
        assert!(
            err.starts_with("webstand probe: sending hostile and malformed requests to"),
            "{err}"
        );
        assert_eq!(report["ended"], "complete", "{name}: {report}");
        // Every built-in case ran (the traversal ones once, for /etc/passwd), each with the
        // verdict written down for this server.
        let rows = verdicts(&report);
        let ran: Vec<&str> = rows
            .iter()
            .map(|(case, ..)| case.split('@').next().unwrap())
            .collect();
        let listed: Vec<&str> = builtin.iter().map(|(case, _)| case.as_str()).collect();
        assert_eq!(ran, listed, "{name}: the cases run");
        let lenient = lenient_cases(kind);
        for (case, verdict, notes) in &rows {
            let plain = case.split('@').next().unwrap();
            let want = if lenient.contains(&plain) {
                "lenient"
            } else {
                "safe"
            };
            assert_eq!(verdict, want, "{name}: {case}: {notes}");
        }
        // The per-category counts add up to the same verdicts.
        let cases = report["cases"].as_array().unwrap();
        for counts in report["by_category"].as_array().unwrap() {
            let category = &counts["category"];
            for verdict in ["safe", "lenient", "unsafe"] {
                let n = cases
                    .iter()
                    .filter(|c| c["category"] == *category && c["verdict"] == verdict)
                    .count();
                assert_eq!(counts[verdict], n, "{name}: {verdict}: {counts}");
            }
        }
        // Saved case by case: `show` prints the whole table again, a row per case.
        let show = common::stdout(&common::run(&[
            "--db",
            db.to_str().unwrap(),
            "show",
            "last",
        ]));
        for (case, verdict, _) in &rows {
            assert!(
                show.lines().any(|l| {
                    let cells: Vec<&str> = l.split_whitespace().collect();
                    cells.first() == Some(&case.as_str()) && cells.contains(&verdict.as_str())
                }),
                "{name}: no {case} row saying {verdict} in\n{show}"
            );
        }
    }
}

/// How the hand-written unsafe server misbehaves.
#[derive(Clone, Copy)]
struct Flaws {
    /// One connection at a time: a held connection starves everyone else.
    serial: bool,
    /// A request line over 4 KiB kills it (it stops listening).
    dies_on_long_line: bool,
    /// How long it thinks before each answer.
    delay: Duration,
}

/// A server written to be unsafe: it frames a body by Transfer-Encoding when the word "chunked"
/// appears in it (else by the last Content-Length), never closes a connection, and serves the
/// percent-decoded target joined to its root as it is, `../` included — but inside a jail, the
/// site's directory (the root's parent), as if chrooted there ([`jailed`]): any local user can
/// connect to it while it runs, and must find none of the machine's files through it.
fn unsafe_server(root: PathBuf, flaws: Flaws) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let dead = Arc::new(AtomicBool::new(false));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if dead.load(Ordering::SeqCst) {
                return; // dropping the listener: connections are refused from now on
            }
            let Ok(conn) = conn else { continue };
            let (root, dead) = (root.clone(), dead.clone());
            let serve = move || {
                let _ = naive_connection(conn, &root, flaws, &dead);
            };
            if flaws.serial {
                serve();
            } else {
                std::thread::spawn(serve);
            }
        }
    });
    addr
}

fn naive_connection(
    conn: TcpStream,
    root: &Path,
    flaws: Flaws,
    dead: &AtomicBool,
) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut out = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if flaws.dies_on_long_line && line.len() > 4096 {
            dead.store(true, Ordering::SeqCst);
            let _ = TcpStream::connect(out.local_addr()?); // wake the accept loop
            return Ok(());
        }
        let target = line.split(' ').nth(1).unwrap_or("/").to_string();
        let (mut length, mut chunked) = (0usize, false);
        loop {
            let mut h = String::new();
            if r.read_line(&mut h)? == 0 || h.trim().is_empty() {
                break;
            }
            let lower = h.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            chunked |= lower.starts_with("transfer-encoding") && lower.contains("chunked");
        }
        if chunked {
            loop {
                let mut size = String::new();
                r.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                let mut skip = vec![0u8; n + 2];
                r.read_exact(&mut skip)?;
                if n == 0 {
                    break;
                }
            }
        } else {
            let mut skip = vec![0u8; length.min(1 << 20)];
            r.read_exact(&mut skip)?;
        }
        std::thread::sleep(flaws.delay);
        let path = percent_decode(target.split('?').next().unwrap_or("/"));
        let (status, body) = match std::fs::read(jailed(root, &path)) {
            Ok(b) => ("200 OK", b),
            Err(_) => ("404 Not Found", b"not found\n".to_vec()),
        };
        write!(
            out,
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )?;
        out.write_all(&body)?;
    }
}

/// `target` joined to `root`, each `..` climbing a level, but never above the jail (`root`'s
/// parent): there `..` stays where it is, as at a chroot's top. The site holds no symbolic links.
fn jailed(root: &Path, target: &str) -> PathBuf {
    let jail = root.parent().unwrap();
    let mut path = root.to_path_buf();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." if path == jail => {}
            ".." => {
                path.pop();
            }
            name => path.push(name),
        }
    }
    path
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_desync_and_a_leak_are_unsafe() {
    let (dir, www) = site();
    let addr = unsafe_server(
        www,
        Flaws {
            serial: false,
            dies_on_long_line: false,
            delay: Duration::ZERO,
        },
    );
    let db = dir.path().join("h.db");
    let url = format!("http://{addr}/index.html");
    let out = probe(
        &db,
        &[
            "--json",
            "--only",
            "cl-te,te-cl,dotdot,dotdot-encoded,host-twice",
            "--secret-path",
            "../secret.txt",
            "--secret-marker",
            MARKER,
            "--fail-on",
            "unsafe",
            &url,
        ],
        Duration::from_secs(120),
    );
    assert_eq!(out.status.code(), Some(3), "{}", common::stderr(&out));
    let rows = verdicts(&json(&out));
    let find = |name: &str| {
        rows.iter()
            .find(|(n, ..)| n == name)
            .unwrap_or_else(|| panic!("no {name} in {rows:?}"))
    };
    for name in ["cl-te", "te-cl"] {
        let (_, verdict, notes) = find(name);
        assert_eq!(verdict, "unsafe", "{name}: {notes}");
        assert!(notes.contains("desync: 3 responses"), "{name}: {notes}");
    }
    for name in [
        "dotdot@secret",
        "dotdot-encoded@secret",
        "dotdot@passwd",
        "dotdot-encoded@passwd",
    ] {
        let (_, verdict, notes) = find(name);
        assert_eq!(verdict, "unsafe", "{name}: {notes}");
        assert!(notes.contains("leak"), "{name}: {notes}");
    }
    // The passwd leak is the jail's own file: twelve levels up from the root end at the jail's top.
    let climb = format!(
        "GET /{}etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
        "../".repeat(12)
    );
    let answer = common::raw_exchange(addr, climb.as_bytes(), Duration::from_secs(2));
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.contains(FAKE_ROOT_LINE), "{answer}");
    // Accepting two Host fields is lenient: wrong, but no harm seen.
    let (_, verdict, notes) = find("host-twice");
    assert_eq!(verdict, "lenient", "{notes}");
    assert!(notes.contains("answered 200, expected 400"), "{notes}");
}

#[test]
fn a_server_that_hangs_or_dies_is_unsafe() {
    let (dir, www) = site();
    let db = dir.path().join("h.db");
    let serial = unsafe_server(
        www.clone(),
        Flaws {
            serial: true,
            dies_on_long_line: false,
            delay: Duration::ZERO,
        },
    );
    let out = probe(
        &db,
        &[
            "--json",
            "--only",
            "slow-body",
            &format!("http://{serial}/index.html"),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let rows = verdicts(&json(&out));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].1, "unsafe");
    assert!(
        rows[0].2.contains("unavailable: a fresh request"),
        "{:?}",
        rows[0]
    );

    let mortal = unsafe_server(
        www,
        Flaws {
            serial: false,
            dies_on_long_line: true,
            delay: Duration::ZERO,
        },
    );
    let out = probe(
        &db,
        &[
            "--json",
            "--only",
            "ws-before-colon,long-request-line,many-headers",
            &format!("http://{mortal}/index.html"),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(5), "{}", common::stderr(&out));
    let report = json(&out);
    assert_eq!(report["ended"], "target-lost");
    let rows = verdicts(&report);
    assert_eq!(
        rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["ws-before-colon", "long-request-line"]
    );
    assert_eq!(rows[1].1, "unsafe");
    assert!(rows[1].2.contains("stopped answering"), "{:?}", rows[1]);
    let not_run = report["not_run"].to_string();
    assert!(
        not_run.contains("many-headers: the target stopped answering"),
        "{not_run}"
    );
}

#[test]
fn the_time_shown_is_the_servers_and_a_wait_says_so() {
    let (dir, www) = site();
    let db = dir.path().join("h.db");
    // Answers each request 300 ms after it came, keeping the connection open.
    let slow = unsafe_server(
        www,
        Flaws {
            serial: false,
            dies_on_long_line: false,
            delay: Duration::from_millis(300),
        },
    );
    let out = probe(
        &db,
        &[
            "--only",
            "range-1300-whole",
            &format!("http://{slow}/index.html"),
        ],
        Duration::from_secs(60),
    );
    let text = common::stdout(&out);
    // The legend is read as words: it wraps at 120 columns.
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words(&text).contains(&words(webstand_probe::table::SERVER_DID)),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("range-1300-whole "))
        .unwrap_or_else(|| panic!("no row: {text}"));
    // "200 at 301ms, open, …": when the answer came, not when the probe stopped waiting for more.
    let at: u64 = row
        .split(" at ")
        .nth(1)
        .and_then(|t| t.split("ms").next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no answer time: {row}"));
    assert!((300..700).contains(&at), "{row}");
    assert!(row.contains("200 at ") && row.contains(", open, "), "{row}");
    // The same cell from the history.
    let show = common::stdout(&common::run(&[
        "--db",
        db.to_str().unwrap(),
        "show",
        "last",
    ]));
    assert!(show.contains(row.trim_end()), "{show}");
}

/// One line on stderr (after the command's own lines), and a failure status.
fn one_line_error(out: &std::process::Output, says: &str) {
    let err = common::stderr(out);
    assert!(!out.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("webstand: error: ") && lines[0].contains(says),
        "{err}"
    );
}

#[test]
fn bad_input_is_one_line_and_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let closed = common::closed_port();
    let unreachable = format!("http://127.0.0.1:{}/", closed.port);
    one_line_error(
        &probe(&db, &[&unreachable], Duration::from_secs(30)),
        "cannot probe",
    );
    assert!(
        !db.exists()
            || !common::stdout(&common::run(&["--db", db.to_str().unwrap(), "history"]))
                .contains("probe")
    );

    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[case]]\nname = \"x\"\ncategory = \"c\"\nrfc = \"r\"\nsend = \"GET {pth} HTTP/1.1\\r\\n\\r\\n\"\n",
    )
    .unwrap();
    let path = bad.to_str().unwrap();
    one_line_error(
        &probe(
            &db,
            &["--cases", path, &unreachable],
            Duration::from_secs(30),
        ),
        &format!("{path}:1: send: unknown placeholder {{pth}}"),
    );
    std::fs::write(&bad, "[[case]]\nname = \"y\"\ncategory = \"c\"\nrfc = \"r\"\nsend = \"a\"\nexpect = { refuse = 1 }\n").unwrap();
    one_line_error(
        &probe(
            &db,
            &["--cases", path, &unreachable],
            Duration::from_secs(30),
        ),
        &format!("{path}:6:"),
    );
    one_line_error(
        &probe(
            &db,
            &["--cases", "/nonexistent/cases.toml", &unreachable],
            Duration::from_secs(30),
        ),
        "cannot read case file",
    );
    one_line_error(
        &probe(
            &db,
            &["--only", "nosuch", &unreachable],
            Duration::from_secs(30),
        ),
        "no case or category named 'nosuch'",
    );
    one_line_error(
        &probe(
            &db,
            &[
                "--secret-path",
                "secret.txt",
                "--secret-marker",
                MARKER,
                &unreachable,
            ],
            Duration::from_secs(30),
        ),
        "must climb out of the document root",
    );
    one_line_error(
        &probe(&db, &["https://127.0.0.1/"], Duration::from_secs(30)),
        "only http://",
    );
}

#[test]
fn the_builtin_cases_can_be_dumped_extended_and_bounded() {
    let (dir, www) = site();
    let server = common::serve(&www, &["--threads", "1"]);
    let db = dir.path().join("h.db");
    let dumped = common::run(&["probe", "--dump-cases"]);
    let mine = dir.path().join("mine.toml");
    let extra = "\n[[case]]\nname = \"my-case\"\ncategory = \"mine\"\nrfc = \"404\"\nsend = \"GET /nope HTTP/1.1\\r\\nHost: {host}\\r\\n\\r\\n\"\nexpect = { status = \"404\" }\n";
    std::fs::write(&mine, format!("{}{extra}", common::stdout(&dumped))).unwrap();
    let listed = common::run(&["probe", "--cases", mine.to_str().unwrap(), "--list"]);
    assert_eq!(
        common::stdout(&listed).lines().count(),
        builtin_cases().len() + 1
    );
    // Loading the built-in file twice is a duplicate, named with both places.
    let twice = probe(
        &db,
        &[
            "--cases",
            "builtin",
            "--cases",
            mine.to_str().unwrap(),
            "--list",
        ],
        Duration::from_secs(30),
    );
    one_line_error(&twice, "is already defined at cases.toml (built in):");

    let url = format!("http://{}/index.html", server.addr);
    let out = probe(
        &db,
        &[
            "--json",
            "--cases",
            mine.to_str().unwrap(),
            "--only",
            "mine,slowloris",
            "--max-time",
            "8s",
            &url,
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let report = json(&out);
    assert_eq!(report["ended"], "max-time");
    assert_eq!(
        verdicts(&report)
            .iter()
            .map(|r| (r.0.as_str(), r.1.as_str()))
            .collect::<Vec<_>>(),
        [("my-case", "safe")]
    );
    assert!(
        report["not_run"][0]
            .as_str()
            .unwrap()
            .starts_with("slowloris: --max-time"),
        "{report}"
    );
    assert!(report["elapsed_ms"].as_u64().unwrap() < 8000);
}

#[test]
fn ctrl_c_keeps_the_cases_that_completed() {
    let (dir, www) = site();
    let server = common::serve(&www, &["--threads", "1"]);
    let db = dir.path().join("h.db");
    let url = format!("http://{}/index.html", server.addr);
    let mut child = common::webstand()
        .args([
            "--db",
            db.to_str().unwrap(),
            "probe",
            "--only",
            "cl-te,slowloris",
            &url,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // The first case's line says it is done; slowloris (15 s) is then under way.
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("no line for cl-te");
        if line.trim_start().starts_with("cl-te") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    common::send_signal(child.id(), libc::SIGINT);
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the probe took {:?} to stop",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(130));
    let text = common::stdout(&out);
    assert!(
        text.contains("  cl-te ") && !text.contains("  slowloris "),
        "{text}"
    );
    assert!(
        text.contains("slowloris: interrupted") && text.contains("(interrupted"),
        "{text}"
    );
    let history = common::stdout(&common::run(&["--db", db.to_str().unwrap(), "history"]));
    assert!(history.contains("interrupted"), "{history}");
    let show = common::stdout(&common::run(&[
        "--db",
        db.to_str().unwrap(),
        "show",
        "last",
    ]));
    assert!(
        show.contains("cl-te") && show.contains("1 case runs: 1 safe"),
        "{show}"
    );
}
