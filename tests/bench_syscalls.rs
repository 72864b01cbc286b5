//! The generator's system calls per request, counted: `webstand bench` runs under `strace -ff` (one
//! trace per thread) against `webstand serve`, and the load thread's calls are tallied by name.
//!
//! What it proves is the hot path docs/BENCHMARKS.md ("Findings") measures against wrk's: per
//! keep-alive request one send and one receive, no poller registration change (wrk makes two
//! `epoll_ctl` per request), no sleep of any kind in the event loop; with a new connection per request
//! one socket, connect, send, receive, registration and close each, and no extra socket option.
//! A generator pinned to a CPU of its own spins (polls without blocking) before it blocks; unpinned
//! it never does, and neither makes more than one blocking poll per request. `--spin off` never
//! spins, pinned or not; `--spin MICROS` spins unpinned too; and the same for `sweep --spin`.
//! `--h2` (against `webstand serve --h2c`) never spins unless `--spin MICROS` says so, and writes
//! its requests in batches.
//! Its 8 connections stay below the queue at which `halfway.rs` blocks in `ppoll` (32 over
//! plaintext), so no `ppoll` either.

use crate::common;

use std::collections::HashMap;
use std::process::Command;

const REQUESTS: u64 = 2000;
const CLIENTS: u64 = 8;

/// Runs `webstand bench --threads 1 -n REQUESTS -c CLIENTS [-k]` under strace; returns the load
/// thread's system calls by name (the thread that sent the requests) and the bench's report.
fn load_thread_calls(keep_alive: bool) -> (HashMap<String, u64>, String) {
    load_thread_calls_on(keep_alive, None, &[])
}

/// The same, with strace and the generator pinned to `cpu` when given, and `extra` options (with
/// `--h2` among them, the server speaks h2c).
fn load_thread_calls_on(
    keep_alive: bool,
    cpu: Option<usize>,
    extra: &[&str],
) -> (HashMap<String, u64>, String) {
    let (n, c) = (REQUESTS.to_string(), CLIENTS.to_string());
    let mut args = vec!["bench", "--threads", "1", "-n", &n, "-c", &c];
    if keep_alive {
        args.push("-k");
    }
    args.extend_from_slice(extra);
    trace_load_thread(cpu, &args)
}

/// Runs webstand with `args` and a URL of `webstand serve` on a 2 KiB file (h2c with `--h2` among
/// them) under strace, pinned to `cpu` when given; returns the load thread's system calls by name
/// and the standard output. `args` must run one load thread.
fn trace_load_thread(cpu: Option<usize>, args: &[&str]) -> (HashMap<String, u64>, String) {
    let strace = common::require("strace");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2k.html"), "a".repeat(2048)).unwrap();
    let h2c: &[&str] = if args.contains(&"--h2") {
        &["--h2c"]
    } else {
        &[]
    };
    let server = common::serve(dir.path(), &[&["--threads", "1"], h2c].concat());
    let traces = tempfile::tempdir().unwrap();
    let prefix = traces.path().join("t");
    let url = format!("http://{}/2k.html", server.addr);
    let args = [args, &[url.as_str()]].concat();
    // Bounded twice: -n and the timeout of coreutils around strace.
    let mut cmd = Command::new("timeout");
    cmd.arg("120");
    if let Some(cpu) = cpu {
        cmd.arg(common::require("taskset"))
            .args(["-c", &cpu.to_string()]);
    }
    let out = cmd
        .arg(&strace)
        .args(["-ff", "-o"])
        .arg(&prefix)
        .arg(env!("CARGO_BIN_EXE_webstand"))
        .args(&args)
        .env("XDG_DATA_HOME", common::xdg_data_home())
        .output()
        .expect("run strace");
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?} under strace failed: {report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut load: Vec<HashMap<String, u64>> = std::fs::read_dir(traces.path())
        .unwrap()
        .map(|e| tally(&std::fs::read_to_string(e.unwrap().path()).unwrap()))
        // The load thread is the one event loop (the main thread also sends: getifaddrs asks the
        // kernel over netlink for the Diagnosis's link speed).
        .filter(|calls| count(calls, &["epoll_wait", "epoll_pwait", "epoll_wait:0"]) > 0)
        .collect();
    assert_eq!(load.len(), 1, "one thread runs the load: {load:?}");
    (load.remove(0), report)
}

/// System calls by name in one thread's strace output (`name(args) = result` lines); a poll with
/// a timeout of 0 (one that cannot block) is tallied as `epoll_wait:0`. strace pads a short call to
/// column 40 before its result (`epoll_wait(8, [], 1024, 0)              = 0`, a spin that found
/// nothing), so the arguments end at the last ` = `, not at `) = `.
fn tally(trace: &str) -> HashMap<String, u64> {
    let mut calls = HashMap::new();
    for line in trace.lines() {
        if let Some((name, rest)) = line.split_once('(') {
            if !name.is_empty()
                && name
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            {
                let args = rest
                    .rsplit_once(" = ")
                    .and_then(|(a, _)| a.trim_end().strip_suffix(')'))
                    .unwrap_or(rest);
                let polls = name == "epoll_wait" || name == "epoll_pwait";
                let name = match args.rsplit_once(", ") {
                    Some((_, "0")) if polls => "epoll_wait:0",
                    _ => name,
                };
                *calls.entry(name.to_string()).or_insert(0) += 1;
            }
        }
    }
    calls
}

#[test]
fn tally_reads_the_timeout_of_padded_and_unpadded_polls() {
    // As strace -ff writes them: a short line padded to column 40, a long one not.
    let trace = "epoll_wait(8, [], 1024, 0)              = 0\n\
                 epoll_wait(8, [{events=EPOLLIN, data={u32=0, u64=0}}], 1024, 0) = 1\n\
                 epoll_wait(8, [{events=EPOLLIN, data={u32=0, u64=0}}], 1024, 50) = 1\n\
                 epoll_wait(8, [], 1024, 10)             = 0\n\
                 sendto(9, \"GET / HTTP/1.1\\r\\n\"..., 89, MSG_NOSIGNAL, NULL, 0) = 89\n";
    let calls = tally(trace);
    assert_eq!(count(&calls, &["epoll_wait:0"]), 2, "{calls:?}");
    assert_eq!(count(&calls, &["epoll_wait"]), 2, "{calls:?}");
    assert_eq!(count(&calls, &["sendto"]), 1, "{calls:?}");
}

fn count(calls: &HashMap<String, u64>, names: &[&str]) -> u64 {
    names
        .iter()
        .map(|n| calls.get(*n).copied().unwrap_or(0))
        .sum()
}

/// No sleeping call of any kind: the loop blocks only in the poller, and only when nothing is ready.
fn assert_never_sleeps(calls: &HashMap<String, u64>) {
    let sleeps = [
        "nanosleep",
        "clock_nanosleep",
        "select",
        "pselect6",
        "poll",
        "ppoll",
    ];
    assert_eq!(count(calls, &sleeps), 0, "the load thread slept: {calls:?}");
}

fn assert_complete(report: &str) {
    assert_eq!(
        common::field(report, "Complete requests:"),
        REQUESTS.to_string(),
        "{report}"
    );
    assert_eq!(common::field(report, "Failed requests:"), "0", "{report}");
}

#[test]
fn keep_alive_requests_cost_one_send_and_one_receive_each() {
    let (calls, report) = load_thread_calls(true);
    assert_complete(&report);
    let sends = count(&calls, &["sendto", "write", "writev", "sendmsg"]);
    let receives = count(&calls, &["recvmsg", "recvfrom", "read", "readv"]);
    assert_eq!(sends, REQUESTS, "one send per request: {calls:?}");
    // One receive per response, not a read until "would block" (that would be two per request);
    // a response whose head and body arrive apart takes a second one.
    assert!(
        receives >= REQUESTS && receives * 4 <= REQUESTS * 5,
        "receives {receives} for {REQUESTS} responses: {calls:?}"
    );
    // Connections are registered once, with no interest change per request.
    assert_eq!(count(&calls, &["epoll_ctl"]), CLIENTS, "{calls:?}");
    assert_eq!(count(&calls, &["connect"]), CLIENTS, "{calls:?}");
    // Each blocking poll returns at least one ready socket (or times out, at most every 50 ms).
    assert!(
        count(&calls, &["epoll_wait", "epoll_pwait"]) <= REQUESTS,
        "{calls:?}"
    );
    // Unpinned, the thread never spins: every poll may block.
    if !pinned() {
        assert_eq!(count(&calls, &["epoll_wait:0"]), 0, "{calls:?}");
    }
    assert_never_sleeps(&calls);
}

/// Whether this test process is already limited to fewer CPUs than the machine has.
fn pinned() -> bool {
    let n = |args: &[&str]| {
        let out = Command::new("nproc")
            .args(args)
            .output()
            .expect("run nproc");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<usize>()
            .unwrap()
    };
    n(&[]) < n(&["--all"])
}

#[test]
fn a_pinned_generator_spins_before_it_blocks_and_never_sleeps() {
    let (calls, report) = load_thread_calls_on(true, Some(common::last_cpu()), &[]);
    assert_complete(&report);
    // The same work per request as unpinned.
    let sends = count(&calls, &["sendto", "write", "writev", "sendmsg"]);
    assert_eq!(sends, REQUESTS, "one send per request: {calls:?}");
    assert_eq!(count(&calls, &["epoll_ctl"]), CLIENTS, "{calls:?}");
    // Its first wait, with every request at the server, is a spin (a poll that cannot block); the
    // blocking polls stay at most one per request, and nothing sleeps.
    assert!(count(&calls, &["epoll_wait:0"]) >= 1, "{calls:?}");
    assert!(
        count(&calls, &["epoll_wait", "epoll_pwait"]) <= REQUESTS,
        "{calls:?}"
    );
    assert_never_sleeps(&calls);
}

#[test]
fn spin_off_never_polls_without_blocking_and_a_window_spins_unpinned() {
    // Pinned, `--spin off` takes the spin away: every poll may block, as wrk's do.
    let (calls, report) = load_thread_calls_on(true, Some(common::last_cpu()), &["--spin", "off"]);
    assert_complete(&report);
    assert_eq!(count(&calls, &["epoll_wait:0"]), 0, "{calls:?}");
    assert_eq!(
        count(&calls, &["sendto", "write", "writev", "sendmsg"]),
        REQUESTS,
        "{calls:?}"
    );
    assert_never_sleeps(&calls);
    // Unpinned, an explicit window spins all the same (the user says the CPU is free).
    let (calls, report) = load_thread_calls_on(true, None, &["--spin", "50"]);
    assert_complete(&report);
    assert!(count(&calls, &["epoll_wait:0"]) >= 1, "{calls:?}");
    assert_never_sleeps(&calls);
}

#[test]
fn h2_pinned_never_spins_unless_told_and_writes_requests_in_batches() {
    let h2 = ["--h2", "-m", "4"];
    let (calls, report) = load_thread_calls_on(false, Some(common::last_cpu()), &h2);
    assert_complete(&report);
    assert_eq!(count(&calls, &["epoll_wait:0"]), 0, "{calls:?}");
    assert!(
        count(&calls, &["epoll_wait", "epoll_pwait"]) <= REQUESTS,
        "{calls:?}"
    );
    // Batches of half of -m 4: after a connection's first write (preface, SETTINGS, its ack and
    // the first streams), each write carries at least two requests, the last ones aside.
    let writes = count(&calls, &["write", "writev", "sendto", "sendmsg"]);
    assert!(writes <= REQUESTS / 2 + 4 * CLIENTS, "{writes}: {calls:?}");
    assert_never_sleeps(&calls);
    let spin = [&h2[..], &["--spin", "50"]].concat();
    let (calls, report) = load_thread_calls_on(false, Some(common::last_cpu()), &spin);
    assert_complete(&report);
    assert!(count(&calls, &["epoll_wait:0"]) >= 1, "{calls:?}");
    assert_never_sleeps(&calls);
}

#[test]
fn new_connection_requests_cost_one_call_of_each_kind() {
    let (calls, report) = load_thread_calls(false);
    assert_complete(&report);
    for name in ["socket", "connect", "sendto", "epoll_ctl"] {
        assert_eq!(
            count(&calls, &[name]),
            REQUESTS,
            "one {name} per request: {calls:?}"
        );
    }
    let closes = count(&calls, &["close"]);
    assert!(
        (REQUESTS..=REQUESTS + CLIENTS).contains(&closes),
        "one close per connection: {calls:?}"
    );
    // The response ends at its Content-Length: no read waits for the server's FIN.
    let receives = count(&calls, &["recvmsg", "recvfrom", "read", "readv"]);
    assert!(
        receives >= REQUESTS && receives * 4 <= REQUESTS * 5,
        "receives {receives} for {REQUESTS} responses: {calls:?}"
    );
    // A connection that carries one request gets no socket options (Nagle, congestion control
    // and arrival stamps only pay off on keep-alive connections).
    assert_eq!(count(&calls, &["setsockopt"]), 0, "{calls:?}");
    assert_never_sleeps(&calls);
}

/// `sweep --spin` is bench's flag: pinned, `--spin off` never polls without blocking; unpinned, a
/// window spins all the same.
#[test]
fn sweep_waits_as_its_spin_flag_says() {
    let (n, c) = (REQUESTS.to_string(), CLIENTS.to_string());
    let sweep = |cpu: Option<usize>, spin: &str| {
        let args = [
            "sweep",
            "--threads",
            "1",
            "-n",
            &n,
            "-c",
            &c,
            "-k",
            "--warmup",
            "0",
            "-q",
            "--table",
            "tenon",
            "--spin",
            spin,
        ];
        trace_load_thread(cpu, &args).0
    };
    let calls = sweep(Some(common::last_cpu()), "off");
    assert_eq!(count(&calls, &["epoll_wait:0"]), 0, "{calls:?}");
    assert_eq!(
        count(&calls, &["sendto", "write", "writev", "sendmsg"]),
        REQUESTS,
        "{calls:?}"
    );
    let calls = sweep(None, "50");
    assert!(count(&calls, &["epoll_wait:0"]) >= 1, "{calls:?}");
    assert_never_sleeps(&calls);
}
