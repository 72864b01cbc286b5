//! End-to-end tests of the workloads: fixtures bytes, URL files, WebStone mixes and checksums, against
//! `webstand serve` over loopback; and the one-line errors for bad lists.

use crate::common;

use common::*;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use webstand_results::{BodyCheck, Live, Plan, RunResult, Stop};
use webstand_workload::fixtures::Manifest;
use webstand_workload::{urlfile, webstone, Workload};

fn fixtures_dir() -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["fixtures", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let m = Manifest::load(dir.path()).unwrap();
    (dir, m)
}

fn plan_for(server: &Running, w: &Workload, stop: Stop, clients: usize) -> Plan {
    let (target, _) = webstand_engine::parse_url(&format!("http://{}/", server.addr)).unwrap();
    let mut plan = Plan::new(target, "/");
    w.apply(&mut plan);
    plan.shape = webstand_results::Shape::Closed { clients };
    plan.stop = stop;
    plan.keep_alive = true;
    plan.timeout = Duration::from_secs(10);
    plan
}

fn bounded(requests: u64, secs: u64) -> Stop {
    Stop {
        requests: Some(requests),
        duration: Some(Duration::from_secs(secs)),
    }
}

#[test]
fn fixtures_are_the_same_bytes_twice_and_match_the_seeds() {
    let (a, ma) = fixtures_dir();
    let (b, mb) = fixtures_dir();
    assert_eq!(ma, mb);
    for e in &ma.files {
        let rel = &e.path[1..];
        let x = std::fs::read(a.path().join(rel)).unwrap();
        assert_eq!(
            x,
            std::fs::read(b.path().join(rel)).unwrap(),
            "{} differs",
            e.path
        );
        assert_eq!(x.len() as u64, e.size, "{}", e.path);
    }
    assert_eq!(ma.small_paths().len(), 1000);
    assert_eq!(ma.get("/2k.html").unwrap().size, 2048);
    assert_eq!(ma.get("/large/1M.bin").unwrap().size, 1 << 20);
    for f in webstone::preset("webstone1")
        .unwrap()
        .files
        .iter()
        .chain(&webstone::preset("webstone2").unwrap().files)
    {
        let e = ma
            .get(&f.path)
            .unwrap_or_else(|| panic!("{} missing", f.path));
        if let Some(size) = f.size {
            assert_eq!(e.size, size, "{}", f.path);
        }
    }
    let hello = ma.get("/cgi-bin/hello").unwrap();
    assert!(hello.cgi);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(a.path().join("cgi-bin/hello"))
        .unwrap()
        .permissions()
        .mode();
    assert!(mode & 0o111 != 0, "cgi-bin/hello is not executable");
    let out = std::process::Command::new(a.path().join("cgi-bin/hello"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("Content-Type: text/plain\r\n\r\nHello")
    );
}

/// Observed counts match the weights: each file's count lies within 4.5 binomial standard deviations
/// of weight ÷ total × n (a false alarm about once in 300,000 runs per file).
fn assert_mix(list: &webstone::FileList, r: &RunResult) {
    let n: u64 = r.per_request.iter().sum();
    assert_eq!(n, r.complete);
    let total = list.total_weight() as f64;
    for (f, &seen) in list.files.iter().zip(&r.per_request) {
        let p = f.weight as f64 / total;
        let expected = p * n as f64;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (seen as f64 - expected).abs() <= 4.5 * sd + 1.0,
            "{}: fetched {seen} times of {n}, expected {expected:.0} ± {:.0}",
            f.path,
            4.5 * sd
        );
    }
}

#[test]
fn webstone_mixes_match_their_weights() {
    let (dir, _) = fixtures_dir();
    let server = serve(dir.path(), &[]);
    for (name, n) in [("webstone2", 12_000), ("webstone1", 12_000)] {
        let list = webstone::preset(name).unwrap();
        let w = Workload::weighted(name, &list, 7).unwrap();
        let r = webstand_engine::run(
            &plan_for(&server, &w, bounded(n, 60), 8),
            Arc::new(Live::default()),
        )
        .unwrap();
        assert_eq!(r.failed.total(), 0, "{name}: {:?}", r.failed);
        assert!(
            r.complete > n / 2,
            "{name}: only {} requests in the time bound",
            r.complete
        );
        assert_mix(&list, &r);
    }
}

#[test]
fn url_file_fetches_every_line_at_random() {
    let (dir, _) = fixtures_dir();
    let server = serve(dir.path(), &[]);
    let text = format!(
        "# three files\n/2k.html\nhttp://{}/small/007.html\n\n/file1k.html\n",
        server.addr
    );
    let f = urlfile::parse(&text, "urls").unwrap();
    assert_eq!(f.origin, Some(format!("http://{}", server.addr)));
    let w = Workload::uniform("urls", &f.paths(), 1).unwrap();
    let r = webstand_engine::run(
        &plan_for(&server, &w, bounded(3000, 30), 4),
        Arc::new(Live::default()),
    )
    .unwrap();
    assert_eq!(r.complete, 3000);
    for &seen in &r.per_request {
        assert!(
            (800..=1200).contains(&seen),
            "uniform pick is off: {:?}",
            r.per_request
        );
    }
}

/// Replaces a file atomically with different bytes of the same length.
/// Replaces the file (by rename) with bytes of the same length that differ; returns them.
fn corrupt(path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    for b in bytes.iter_mut().skip(100).take(20) {
        *b = b'X';
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
    bytes
}

/// Waits until the server answers `path` with `want` (its cache re-checks a file at most once a
/// second; the bound, 3 s, leaves a loaded machine a margin).
fn wait_until_served(addr: std::net::SocketAddr, path: &str, want: &[u8]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        let got = webstand_lab::servers::fetch(addr, path, None, Duration::from_secs(5)).unwrap();
        if got.body == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{path} still served unchanged"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn manifest_checksums_catch_a_changed_file() {
    let (dir, _) = fixtures_dir();
    let server = serve(dir.path(), &[]);
    let sweep = |dir: &Path, code: i32| {
        let out = run(&[
            "sweep",
            &format!("http://{}/", server.addr),
            "--filelist",
            "webstone2",
            "--checksum",
            "--manifest",
            dir.to_str().unwrap(),
            "--clients",
            "4",
            "-n",
            "1000",
            "-d",
            "30s",
            "--warmup",
            "0",
            "--json",
            "-q",
            "--db",
            dir.join("history.db").to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(doc["outcome"]["exit_status"], code, "{doc}");
        doc["levels"][0]["result"].clone()
    };
    let clean = sweep(dir.path(), 0);
    assert_eq!(clean["failed"]["length"], 0, "{clean}");
    assert_eq!(clean["complete"], 1000);
    // file500.html is 35 % of the mix; the server re-checks files once a second: the sweep starts
    // once the server serves the changed bytes (bounded at 3 s, a margin over that second).
    let changed = corrupt(&dir.path().join("file500.html"));
    wait_until_served(server.addr, "/file500.html", &changed);
    // About a third of the bodies fail their checksum: errors above 1 %, exit status 3.
    let dirty = sweep(dir.path(), 3);
    let bad = dirty["failed"]["length"].as_u64().unwrap();
    assert!(
        (200..=500).contains(&bad),
        "expected about 350 checksum failures of 1000, got {bad}: {dirty}"
    );
}

#[test]
fn first_fetch_checksums_catch_a_file_changed_during_a_run() {
    let (dir, _) = fixtures_dir();
    let server = serve(dir.path(), &[]);
    let w = Workload::single("/2k.html").with_checksum(None);
    assert_eq!(w.requests[0].expect, Some(BodyCheck::FirstFetch));
    let plan = plan_for(
        &server,
        &w,
        Stop {
            requests: Some(10_000_000),
            duration: Some(Duration::from_secs(3)),
        },
        2,
    );
    // The file changes once the run has completed 100 requests (the Live counter says so); the
    // server notices within a second, and the run goes on for 3 s in all.
    let live = Arc::new(Live::default());
    let changer = {
        let file = dir.path().join("2k.html");
        let live = live.clone();
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            while live.complete.load(Ordering::SeqCst) < 100 && std::time::Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            corrupt(&file);
        })
    };
    let r = webstand_engine::run(&plan, live.clone()).unwrap();
    changer.join().unwrap();
    assert!(!live.stop.load(Ordering::SeqCst));
    assert!(r.complete > 0, "nothing completed before the change");
    assert!(
        r.failed.length > 0,
        "the change went unnoticed: {} complete, {:?}",
        r.complete,
        r.failed
    );
}

/// Runs `webstand ARGS`, expects failure with exactly one stderr line containing every `needles`.
fn fails_with_one_line(args: &[&str], needles: &[&str]) {
    let out = run_with_timeout(args, Duration::from_secs(30));
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "{args:?} succeeded: {}",
        stdout(&out)
    );
    assert_eq!(
        err.lines().count(),
        1,
        "{args:?}: expected one line, got:\n{err}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
}

#[test]
fn bad_lists_get_one_line_naming_file_line_and_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let url = "http://127.0.0.1:9/";
    let malformed = write(
        "bad.txt",
        "/file500.html 350 #500\n/file5k.html five #5125\n",
    );
    fails_with_one_line(
        &["sweep", url, "--filelist", &malformed],
        &["bad.txt:2:", "expected '/PATH WEIGHT [#SIZE]'"],
    );
    let classes = write(
        "classes.txt",
        "2\n40 2\n/file2k.html\n/file3k.html\n25\n/file1k.html\n",
    );
    fails_with_one_line(
        &["sweep", url, "--filelist", &classes],
        &[
            "classes.txt:5:",
            "expected 'WEIGHT NFILES' for page class 2",
        ],
    );
    let empty = write("empty.txt", "# nothing here\n\n");
    fails_with_one_line(
        &["sweep", url, "--filelist", &empty],
        &["empty.txt", "empty"],
    );
    let zero = write("zero.txt", "/a.html 0\n/b.html 0\n");
    fails_with_one_line(
        &["sweep", url, "--filelist", &zero],
        &["zero.txt", "total weight", "zero"],
    );
    let urls = write("urls.txt", "/a.html\nftp://x/y\n");
    fails_with_one_line(
        &["sweep", url, "--url-file", &urls],
        &["urls.txt:2:", "expected a path starting with '/'"],
    );
    let no_urls = write("none.txt", "\n");
    fails_with_one_line(
        &["sweep", url, "--url-file", &no_urls],
        &["none.txt", "empty"],
    );
    fails_with_one_line(
        &["sweep", url, "--filelist", "webstone3"],
        &["no file list", "webstone1, webstone2"],
    );
}
