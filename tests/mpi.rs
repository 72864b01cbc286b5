//! `mpirun -np 4 webstand bench|sweep …` (built with `--features mpi`; scripts/test.sh builds it so):
//! four ranks on loopback against `webstand serve`, nginx and an in-test server that counts what it
//! answered (a sweep's merged counts per level equal its own). The merged counts equal one process's,
//! the connection split is exact, the start skew is reported (under 1 ms with a core per rank), a
//! max-users search finds what one process finds, the progress line counts every rank, an https
//! run's handshakes add up, an HTTP/2 run's h2load figures merge to h2load's own (h2o), an HTTP/3
//! run's QUIC figures merge to one process's (serve), and the failures end the job with one line
//! or a merged report: a bad option, an unreachable target, Ctrl-C to mpirun, a rank killed. A wrk
//! script runs on every rank and its `done()` once, with the merged figures.
#![cfg(feature = "mpi")]

use crate::common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One MPI job at a time: four ranks each already share the machine's two cores.
static ONE_JOB: Mutex<()> = Mutex::new(());

fn mpirun(ranks: usize) -> Command {
    let mut c = Command::new(require("mpirun"));
    // -q: mpirun's own notices (a rank's non-zero exit) would add lines to the one-line errors.
    c.args(["-q", "--allow-run-as-root", "--oversubscribe", "-np"])
        .arg(ranks.to_string())
        .arg(env!("CARGO_BIN_EXE_webstand"))
        .env("XDG_DATA_HOME", xdg_data_home())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// `mpirun -np RANKS webstand ARGS…` to completion, bounded in time.
fn mpi_run(ranks: usize, args: &[&str], limit: Duration) -> Output {
    let child = mpirun(ranks).args(args).spawn().expect("spawn mpirun");
    finish(child, limit)
}

/// Waits for `child` with a bound, draining both pipes; kills it (and fails) past the bound.
fn finish(mut child: Child, limit: Duration) -> Output {
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = child.stderr.take().map(|e| drain(Box::new(e)));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "mpirun did not finish within {limit:?}: {}",
                String::from_utf8_lossy(&out.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.map(|e| e.join().unwrap()).unwrap_or_default(),
    }
}

fn db(dir: &tempfile::TempDir) -> String {
    dir.path().join("history.db").display().to_string()
}

fn docroot() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let page: Vec<u8> = (0..2048u32).map(|i| b'a' + (i % 26) as u8).collect();
    std::fs::write(dir.path().join("2k.html"), page).unwrap();
    dir
}

/// `webstand serve` on a docroot with the 2 KiB page, and a history database of the test's own.
struct Bed {
    _root: tempfile::TempDir,
    _server: Running,
    _dir: tempfile::TempDir,
    db: String,
    url: String,
}

impl Bed {
    fn new() -> Bed {
        let root = docroot();
        let server = serve(root.path(), &[]);
        let dir = tempfile::tempdir().unwrap();
        Bed {
            db: db(&dir),
            url: format!("http://{}/2k.html", server.addr),
            _root: root,
            _server: server,
            _dir: dir,
        }
    }
}

/// Complete requests, Total transferred and HTML transferred of a 4-rank run equal one process's.
fn counts_equal_single_process(url: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let mut args = vec![
        "--db",
        db.as_str(),
        "bench",
        "-q",
        "-n",
        "40000",
        "-c",
        "10",
    ];
    args.extend(extra);
    args.push(url);
    let single = run_with_timeout(&args, Duration::from_secs(120));
    assert!(single.status.success(), "{}", stderr(&single));
    let merged = mpi_run(4, &args, Duration::from_secs(120));
    assert!(merged.status.success(), "{}", stderr(&merged));
    let (single, merged) = (stdout(&single), stdout(&merged));
    let names = [
        "Complete requests:",
        "Failed requests:",
        "Total transferred:",
        "HTML transferred:",
        "Document Length:",
        "Concurrency Level:",
    ];
    let (merged_of, single_of) = (("the 4 ranks'", &*merged), ("one process's", &*single));
    assert_fields_match(merged_of, single_of, &names, "4 ranks merged");
    assert_eq!(field(&merged, "Complete requests:"), "40000");
    assert!(merged.contains("Ranks (MPI):            4,"), "{merged}");
}

#[test]
fn webstand_serve_counts_add_up_to_a_single_process_run() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let root = docroot();
    let server = serve(root.path(), &[]);
    let url = format!("http://{}/2k.html", server.addr);
    counts_equal_single_process(&url, &["-k"]);
}

#[test]
fn nginx_counts_add_up_to_a_single_process_run() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let ngx = start_nginx();
    let url = format!("http://127.0.0.1:{}/page.html", ngx.port);
    // A new connection per request: 40,000 connections, split over the ranks too.
    counts_equal_single_process(&url, &[]);
}

/// `bench --h2` over two ranks against h2o (h2c by prior knowledge): rank 0 merges every rank's
/// h2load figures, and they equal h2load's own for the same total (-n, -c, -m).
#[test]
fn an_h2_run_over_two_ranks_merges_to_h2loads_counts() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let server = common::h2::h2o(false);
    let url = format!("http://127.0.0.1:{}/page.html", server.port);
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let (n, c, m) = ("3001", "4", "8");
    let args = [
        "--db", &db, "bench", "-q", "--json", "--h2", "-n", n, "-c", c, "-m", m, &url,
    ];
    let out = mpi_run(2, &args, Duration::from_secs(120));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["ranks"]["count"], 2, "{v}");
    let h2 = &v["h2"];
    let at = |p: &str| {
        h2.pointer(p)
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("{p} in {h2}"))
    };
    let (done, succeeded, data) = common::h2::h2load(&["-n", n, "-c", c, "-m", m, &url]);
    assert_eq!(
        (
            at("/requests/done"),
            at("/requests/succeeded"),
            at("/traffic/data_bytes")
        ),
        (done, succeeded, data),
        "{h2}"
    );
    assert_eq!(done, 3001);
    assert_eq!(
        (at("/requests/started"), at("/status_codes/2xx")),
        (3001, 3001)
    );
    let failed = ["/requests/failed", "/requests/errored", "/requests/timeout"];
    assert_eq!(failed.map(at), [0, 0, 0], "{h2}");
    // Both ranks' header bytes and per-connection times arrived: one connect and one first byte
    // per connection, four in all.
    assert!(at("/traffic/header_bytes") > 0, "{h2}");
    assert_eq!(
        (
            at("/time_for_connect/count"),
            at("/time_to_1st_byte/count"),
            at("/max_streams_per_connection")
        ),
        (4, 4, 8),
        "{h2}"
    );
    assert_eq!(v["complete"], 3001);
    assert_one_saved_run(&db, "bench");
}

#[test]
fn ten_connections_split_exactly_over_four_ranks_and_the_start_skew_is_reported() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let bed = Bed::new();
    let (db, url) = (bed.db.clone(), bed.url.clone());
    let args = [
        "--db", &db, "bench", "--json", "-k", "-n", "4001", "-c", "10", &url,
    ];
    let out = mpi_run(4, &args, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["complete"], 4001);
    let ranks = &v["ranks"];
    assert_eq!(ranks["count"], 4);
    assert_eq!(ranks["incomplete"], false);
    let per: &Vec<Value> = ranks["per_rank"].as_array().unwrap();
    let col = |k: &str| {
        per.iter()
            .map(|r| r[k].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(col("clients"), vec![3, 3, 2, 2]);
    // Requests follow the connections: ⌊4001·3/10⌋, then the remainders, adding up exactly.
    assert_eq!(col("requests"), vec![1200, 1200, 800, 801]);
    let skew = ranks["start_skew_ms"].as_f64().unwrap();
    let largest = per
        .iter()
        .map(|r| r["start_skew_ms"].as_f64().unwrap().abs())
        .fold(0.0, f64::max);
    // The skew is reported and is the largest rank's. Its size (under 1 ms on one quiet host) is a
    // timing claim, measured in docs/BENCHMARKS.md, not asserted on a test machine shared with builds;
    // this only bounds it far above the 5 ms start margin.
    assert_eq!(skew, largest);
    assert!(
        (0.0..50.0).contains(&skew),
        "start skew {skew} ms on one host"
    );
    let protocol = ranks["protocol_ms"].as_f64().unwrap();
    assert!(protocol > 0.0, "{ranks}");
    assert_one_saved_run(&db, "bench");
}

/// What one connection to a [`CountingServer`] carried: requests answered and bytes sent (all, and
/// the bodies').
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ConnCounts {
    requests: u64,
    bytes: u64,
    body_bytes: u64,
}

/// A keep-alive HTTP/1.1 server that answers every request with the same 2 KiB page and counts,
/// per connection in the order it accepted them, what it answered.
struct CountingServer {
    addr: std::net::SocketAddr,
    conns: std::sync::Arc<Mutex<Vec<ConnCounts>>>,
}

impl CountingServer {
    fn start() -> CountingServer {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let conns = std::sync::Arc::new(Mutex::new(Vec::new()));
        let all = conns.clone();
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(mut s) = s else { continue };
                let all = all.clone();
                let me = {
                    let mut all = all.lock().unwrap();
                    all.push(ConnCounts::default());
                    all.len() - 1
                };
                std::thread::spawn(move || {
                    let body = [b'x'; 2048];
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
                    let answer = [head.as_bytes(), &body].concat();
                    let mut r = BufReader::new(s.try_clone().unwrap());
                    loop {
                        // One request: its head, up to the empty line (the generator sends no body).
                        let mut line = String::new();
                        loop {
                            line.clear();
                            match r.read_line(&mut line) {
                                Ok(0) | Err(_) => return,
                                Ok(_) if line.trim_end().is_empty() => break,
                                Ok(_) => {}
                            }
                        }
                        if s.write_all(&answer).is_err() {
                            return;
                        }
                        let c = &mut all.lock().unwrap()[me];
                        c.requests += 1;
                        c.bytes += answer.len() as u64;
                        c.body_bytes += body.len() as u64;
                    }
                });
            }
        });
        CountingServer { addr, conns }
    }
}

/// A keep-alive sweep over four ranks, at 4 then 8 clients of 2000 requests each, saves one run;
/// each level's merged counts equal what the server answered on that level's connections (levels
/// do not overlap: the first 4 connections it accepted are the first level's, the next 8 the
/// second's).
#[test]
fn sweep_over_four_ranks_saves_one_run() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let server = CountingServer::start();
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let url = format!("http://{}/2k.html", server.addr);
    let args = [
        "--db", &db, "sweep", "-q", "-k", "-c", "4,8", "-n", "2000", "--warmup", "0", "--json",
        &url,
    ];
    let out = mpi_run(4, &args, Duration::from_secs(90));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let levels = v["levels"].as_array().expect("levels");
    let conns = server.conns.lock().unwrap().clone();
    assert_eq!(conns.len(), 4 + 8, "connections accepted: {conns:?}");
    let mut first = 0;
    for (level, clients) in levels.iter().zip([4usize, 8]) {
        assert_eq!(level["clients"], clients, "{level}");
        let seen = conns[first..first + clients]
            .iter()
            .fold(ConnCounts::default(), |a, c| ConnCounts {
                requests: a.requests + c.requests,
                bytes: a.bytes + c.bytes,
                body_bytes: a.body_bytes + c.body_bytes,
            });
        first += clients;
        let r = &level["result"];
        let merged = ConnCounts {
            requests: r["complete"].as_u64().unwrap(),
            bytes: r["total_bytes"].as_u64().unwrap(),
            body_bytes: r["body_bytes"].as_u64().unwrap(),
        };
        assert_eq!(merged, seen, "{clients} clients: merged vs the server's");
        assert_eq!(seen.requests, 2000, "{clients} clients");
        assert_eq!(r["connections"], clients, "{r}");
    }
    assert_eq!(levels.len(), 2, "{v}");
    assert_one_saved_run(&db, "sweep");
}

#[test]
fn a_bad_option_fails_once_with_one_line_before_any_load() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    for (args, code) in [
        (vec!["bench", "--no-such-option", "http://127.0.0.1:9/"], 2),
        (vec!["bench", "-c", "0", "http://127.0.0.1:9/"], 1),
        (
            vec![
                "bench",
                "-c",
                "4",
                "--rate",
                "0.002",
                "-d",
                "1s",
                "http://127.0.0.1:9/",
            ],
            1,
        ),
    ] {
        let mut all = vec!["--db", db.as_str()];
        all.extend(&args);
        let out = mpi_run(4, &all, Duration::from_secs(30));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(
            err.lines().count(),
            1,
            "{args:?}: one line, from rank 0 only:\n{err}"
        );
        assert!(err.starts_with("webstand: error: "), "{err}");
        assert!(!err.contains("load started"), "{err}");
    }
}

/// A wrk script over four ranks: each rank loads its own copy, `setup` runs once per load thread
/// of every rank, every rank's requests come from its `request()`, and `done` runs once, on rank 0,
/// with the merged count, which is the server's (its access log).
#[test]
fn a_script_runs_on_every_rank_and_done_sees_the_merged_count() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let root = docroot();
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let log = dir.path().join("access.log");
    let mut server = serve(root.path(), &["--access-log", log.to_str().unwrap()]);
    let script = dir.path().join("ranks.lua");
    std::fs::write(
        &script,
        "function setup(thread)\n  print(\"setup \" .. tostring(thread.addr))\nend\n\
         function request()\n  return wrk.format(\"GET\", \"/2k.html?by=lua\")\nend\n\
         function done(summary, latency, requests)\n  \
         print(\"done \" .. summary.requests)\nend\n",
    )
    .unwrap();
    let url = format!("http://{}/2k.html", server.addr);
    let args = [
        "--db",
        &db,
        "bench",
        "-k",
        "-c",
        "8",
        "-n",
        "4000",
        "--threads",
        "1",
        "-s",
        script.to_str().unwrap(),
        &url,
    ];
    let out = mpi_run(4, &args, Duration::from_secs(60));
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{err}");
    let setups = text.lines().filter(|l| l.starts_with("setup ")).count();
    assert_eq!(setups, 4, "one setup per rank's one thread:\n{text}");
    let done: Vec<&str> = text.lines().filter(|l| l.starts_with("done ")).collect();
    assert_eq!(done.len(), 1, "done() once, on rank 0:\n{text}");
    assert_eq!(field(&text, "Complete requests:"), "4000");
    // The merged count, not rank 0's share (a quarter of it).
    assert_eq!(done[0], "done 4000", "{text}");
    common::terminate(&mut server.child, Duration::from_secs(10));
    let logged = std::fs::read_to_string(&log).unwrap();
    let by_lua = logged
        .lines()
        .filter(|l| l.contains("GET /2k.html?by=lua "))
        .count();
    assert_eq!(logged.lines().count(), 4000, "every request the server saw");
    assert_eq!(by_lua, 4000, "each rank's requests came from its request()");
}

#[test]
fn an_unreachable_target_ends_the_job_with_the_ranks_error() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    // Nothing listens: every connect is refused.
    let closed = closed_port();
    let url = format!("http://127.0.0.1:{}/", closed.port);
    let args = ["--db", &db, "bench", "-q", "-n", "100000", "-c", "8", &url];
    let out = mpi_run(4, &args, Duration::from_secs(30));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    let last = err.lines().last().unwrap();
    assert!(
        last.contains("rank ") && last.contains("Connection refused"),
        "{err}"
    );
}

/// Starts a long distributed run and waits for its readiness line ("load started") on stderr;
/// returns mpirun and the rest of its stderr (read by a thread).
fn start_long_run(db: &str, url: &str) -> (Child, std::thread::JoinHandle<Vec<u8>>) {
    let args = ["--db", db, "bench", "-q", "-k", "-c", "8", "-d", "60s", url];
    let mut child = mpirun(4).args(args).spawn().expect("spawn mpirun");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        while err.read_line(&mut line).unwrap_or(0) > 0 {
            if line.contains("load started on 4 MPI ranks") {
                let _ = tx.send(());
            }
            line.clear();
        }
        Vec::new()
    });
    if rx.recv_timeout(Duration::from_secs(30)).is_err() {
        let _ = child.kill();
        panic!("the distributed run never started");
    }
    (child, reader)
}

/// The history holds one run of `kind` (saved by rank 0), not one per rank.
fn assert_one_saved_run(db: &str, kind: &str) {
    let history = stdout(&run(&["--db", db, "history"]));
    assert_eq!(history.matches(kind).count(), 1, "{history}");
}

/// The requests column of the per-rank table, rank 0 first.
fn rank_requests(report: &str) -> Vec<u64> {
    report
        .lines()
        .skip_while(|l| !l.starts_with("  rank  connections"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|r| r.split_whitespace().nth(2).unwrap().parse().unwrap())
        .collect()
}

/// Complete requests after an interrupted or broken run: a merged report was printed.
fn complete(report: &str) -> u64 {
    field(report, "Complete requests:").parse().unwrap()
}

#[test]
fn ctrl_c_to_mpirun_ends_every_rank_and_prints_the_merged_report() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let bed = Bed::new();
    let (child, reader) = start_long_run(&bed.db, &bed.url);
    // SAFETY: kill only sends a signal to the mpirun this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let started = Instant::now();
    let out = finish(child, Duration::from_secs(20));
    let _ = reader.join();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    let text = stdout(&out);
    assert!(complete(&text) > 0, "{text}");
    assert!(text.contains("(interrupted"), "{text}");
    // All four ranks reported: four rows with requests.
    let rows = rank_requests(&text);
    assert_eq!(rows.len(), 4, "{text}");
    let sum: u64 = rows.iter().sum();
    assert_eq!(sum, complete(&text));
}

/// The pid of the process mpirun started as rank `rank` (its environment says which).
fn rank_pid(mpirun: u32, rank: usize) -> Option<i32> {
    let children =
        std::fs::read_to_string(format!("/proc/{mpirun}/task/{mpirun}/children")).ok()?;
    children.split_whitespace().find_map(|pid| {
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
        env.split(|&b| b == 0)
            .any(|v| v == wanted.as_bytes())
            .then(|| pid.parse().ok())?
    })
}

#[test]
fn a_rank_killed_mid_run_leaves_a_report_marked_incomplete() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let bed = Bed::new();
    let (child, reader) = start_long_run(&bed.db, &bed.url);
    let pid = rank_pid(child.id(), 3).expect("rank 3 is a child of mpirun");
    // SAFETY: kill sends SIGKILL to rank 3 of the job this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let out = finish(child, Duration::from_secs(20));
    let _ = reader.join();
    let text = stdout(&out);
    assert!(complete(&text) > 0, "{text}");
    assert!(text.contains("INCOMPLETE: no result from rank 3"), "{text}");
    assert!(!out.status.success());
}

#[test]
fn two_ranks_start_within_a_millisecond_of_the_agreed_instant() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let bed = Bed::new();
    let (db, url) = (bed.db.clone(), bed.url.clone());
    let args = [
        "--db", &db, "bench", "--json", "-k", "-n", "2000", "-c", "4", &url,
    ];
    // Two ranks, one core each: the engine is set up before the start instant, so a rank's skew is
    // its wake-up. A wake-up on a machine shared with builds can be late by a scheduler slice, so
    // the claim is that the start protocol *can* start both ranks within 1 ms: the best of three
    // runs. (With more ranks than cores a rank may wait for a core: docs/BENCHMARKS.md.)
    let skews: Vec<f64> = (0..3)
        .map(|_| {
            let out = mpi_run(2, &args, Duration::from_secs(60));
            assert!(out.status.success(), "{}", stderr(&out));
            let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
            assert_eq!(v["complete"], 2000);
            v["ranks"]["start_skew_ms"].as_f64().unwrap()
        })
        .collect();
    let best = skews.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(best < 1.0, "largest start skew per run, ms: {skews:?}");
}

#[test]
fn max_users_search_over_four_ranks_finds_what_one_process_finds() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    // The bed tests/sweep.rs searches in one process (common::max_users_bed has the reasoning):
    // over four ranks the clients of a level are the ranks' connections together, so the search
    // must find 8 again.
    let (_slow, url) = max_users_bed();
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let mut args = vec!["--db", &db, "sweep", "--json", "-q", "--start-clients", "4"];
    args.extend(MAX_USERS_SEARCH);
    args.push(&url);
    let out = mpi_run(4, &args, Duration::from_secs(120));
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_max_users_of_the_bed(&doc);
    assert_one_saved_run(&db, "sweep");
}

#[test]
fn the_progress_line_counts_every_ranks_requests() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let bed = Bed::new();
    let (db, url) = (bed.db.clone(), bed.url.clone());
    // No -q, stderr a pipe: a plain progress line every 5 s ("…: 5 s, N done, …").
    let args = ["--db", &db, "bench", "-k", "-c", "8", "-d", "7s", &url];
    let out = mpi_run(4, &args, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let (text, err) = (stdout(&out), stderr(&out));
    let line = err
        .lines()
        .find(|l| l.contains(" done, "))
        .unwrap_or_else(|| panic!("no progress line:\n{err}"));
    let done: u64 = line
        .split(" done, ")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    let rank0 = rank_requests(&text)[0];
    // At 5 s of 7 the line has about 5/7 of every rank's requests; rank 0 alone ends with about a
    // quarter. Counting rank 0 only, the line could never pass rank 0's final count.
    assert!(
        done > rank0 && done <= complete(&text),
        "progress {done}, rank 0's final {rank0}, complete {}\n{line}",
        complete(&text)
    );
}

#[test]
fn an_https_run_over_two_ranks_reports_every_ranks_handshakes() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let cert = webstand_lab::tls::LabCert::generate(Default::default()).unwrap();
    let root = docroot();
    let (_server, tls_addr) = serve_tls(root.path(), &cert.cert_file(), &cert.key_file(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let db = db(&dir);
    let ca = cert.ca_file();
    let url = format!("https://{tls_addr}/2k.html");
    let args = [
        "--db",
        &db,
        "bench",
        "--json",
        "--cacert",
        ca.to_str().unwrap(),
        "-n",
        "400",
        "-c",
        "4",
        &url,
    ];
    let single = run_with_timeout(&args, Duration::from_secs(60));
    let merged = mpi_run(2, &args, Duration::from_secs(60));
    let tls = |out: &Output| {
        assert!(out.status.success(), "{}", stderr(out));
        let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
        assert_eq!(v["complete"], 400, "{v}");
        v["tls"].clone()
    };
    let (single, merged) = (tls(&single), tls(&merged));
    // A new connection per request: one full handshake each, on whichever rank made it.
    assert_eq!(merged["full_handshakes"], 400, "{merged}");
    for k in ["protocol", "cipher", "server_key_bits"] {
        assert_eq!(merged[k], single[k], "{k}: {merged} vs {single}");
    }
}

/// `bench --h3` over two ranks against `webstand serve --listen-quic`: rank 0 merges every rank's
/// QUIC figures as it does the h2 ones, so they equal one process's run of the same total where
/// the run fixes them (handshakes full and resumed, requests, body bytes), and every rank's
/// datagrams and packets are in the sums.
#[test]
fn an_h3_run_over_two_ranks_merges_its_quic_figures() {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let doc = common::h3::docroot(dir.path());
    let server = common::h3::H3Server::start(dir.path(), &doc, &[]);
    let db = db(&dir);
    let url = format!("https://{}/2k.html", server.quic);
    // Each rank's two connections start without a ticket (full); the six after them resume.
    let run = [
        "bench",
        "-q",
        "--json",
        "--h3",
        "--tls-resume",
        "-n",
        "400",
        "-c",
        "4",
        "-m",
        "4",
        "--max-requests-per-connection",
        "50",
        &url,
    ];
    let one_db = dir.path().join("single.db").display().to_string();
    let single = [&["--db", one_db.as_str()][..], &run[..]].concat();
    let single = run_with_timeout(&single, Duration::from_secs(60));
    let merged = [&["--db", db.as_str()][..], &run[..]].concat();
    let merged = mpi_run(2, &merged, Duration::from_secs(120));
    let quic = |out: &Output| {
        assert!(out.status.success(), "{}", stderr(out));
        let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
        assert_eq!(v["complete"], 400, "{v}");
        assert_eq!(v["h2"]["traffic"]["data_bytes"], 400 * 2048, "{v}");
        v["quic"].clone()
    };
    let (one, two) = (quic(&single), quic(&merged));
    let v: Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(v["ranks"]["count"], 2, "{v}");
    // Each rank's first two connections are full handshakes, as one process's four are; how many
    // replacements a run opens depends on when its last requests finish, so totals are not
    // compared between the two runs, only each run's own sum.
    assert_eq!(one["handshakes"]["full"], 4, "{one}");
    // Eight connections' worth of requests; a connection that reached its 50 may be replaced
    // while the last requests are still in flight on the others, so there can be more.
    let total = two["handshakes"]["total"].as_u64().unwrap();
    assert!(total >= 8, "{two}");
    assert_eq!(two["handshakes"]["full"], 4, "{two}");
    assert_eq!(
        two["handshakes"]["resumed"].as_u64().unwrap(),
        total - 4,
        "{two}"
    );
    assert_eq!(two["connection_errors"], serde_json::json!({}), "{two}");
    let at = |q: &Value, p: &str| q.pointer(p).and_then(Value::as_u64).unwrap();
    // Both ranks' traffic: a 2 KiB answer takes a datagram of its own at least; requests go
    // several to a datagram (-m 4), but each connection sends some.
    assert!(at(&two, "/datagrams/received") >= 400, "{two}");
    assert!(at(&two, "/datagrams/sent") >= total, "{two}");
    assert!(
        at(&two, "/packets_sent") >= at(&two, "/datagrams/sent"),
        "{two}"
    );
    assert!(at(&two, "/min_congestion_window") > 0, "{two}");
    assert_eq!(
        (two["gso"].clone(), two["gro"].clone()),
        (one["gso"].clone(), one["gro"].clone())
    );
    let logged = server.log_lines(800);
    assert_eq!(
        logged
            .iter()
            .filter(|l| l.contains(" HTTP/3.0\" 200 "))
            .count(),
        800
    );
    assert_one_saved_run(&db, "bench");
}
