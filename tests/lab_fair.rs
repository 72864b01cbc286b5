//! The lab's fairness, checked on the real servers from Debian over loopback: every CPU-second a
//! server's CGI programs burn is counted (apache's mod_cgid children nobody waits for, mini_httpd's
//! orphaned CGI relay, fcgiwrap's children behind nginx, caddy and h2o); every server listens with the
//! backlog the lab derived and defers accept where it can; every server holds as many connections at
//! once as the run's largest level; the configs are saved with the run and derived from its levels;
//! rounds rotate the server order. Nothing is left running.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use webstand_lab::limits::Limits;
use webstand_lab::procstat;
use webstand_lab::servers::{self, Kind, Server, Setup};
use webstand_results::CpuSource;

fn builtin_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_webstand"))
}

/// A docroot written by `webstand fixtures`, the lab's own files, `cgi-bin/burn`: a CGI program that
/// spins until it has used `BURN_SECS` of CPU itself, then answers, and `cgi-bin/big`: one that writes
/// `BIG_MIB` MiB (work for whatever relays a CGI program's output).
fn docroot() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("webstand-fairtest-")
        .tempdir()
        .unwrap();
    let out = common::run(&["fixtures", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let burn = dir.path().join("cgi-bin/burn");
    std::fs::write(
        &burn,
        format!(
            "#!/usr/bin/perl\n1 while (times())[0] + (times())[1] < {BURN_SECS};\n\
             print \"Content-Type: text/plain\\r\\n\\r\\nburnt\\n\";\n"
        ),
    )
    .unwrap();
    let big = dir.path().join("cgi-bin/big");
    std::fs::write(
        &big,
        format!(
            "#!/usr/bin/perl
print \"Content-Type: application/octet-stream\\r\\n\\r\\n\";
             my $b = \"x\" x 65536; print $b for 1..{};
",
            BIG_MIB * 16
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    for p in [&burn, &big] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    servers::write_lab_files(dir.path()).unwrap();
    dir
}

const BURN_SECS: f64 = 0.3;
const BIG_MIB: usize = 64;
/// A process's own CPU time, as `times()` shows it to the program, is rounded to clock ticks: each
/// burn may show up to a tick more than the kernel's exact count.
const TICK: f64 = 0.011;

fn start(kind: Kind, doc: &Path, limits: Limits) -> Server {
    let binary = servers::locate(kind, Some(&builtin_exe()))
        .unwrap_or_else(|e| panic!("{e} (scripts/install-deps.sh installs every lab server)"));
    let mut setup = Setup::new(doc);
    setup.cpus = Some(vec![servers::allowed_cpus()[0]]);
    setup.limits = limits;
    Server::start(&binary, &setup).unwrap_or_else(|e| panic!("{}: {e:#}", kind.name()))
}

fn stop(mut server: Server) {
    let pid = server.pid();
    server.stop().unwrap();
    assert!(
        server.leftovers().is_empty(),
        "{:?} left behind",
        server.leftovers()
    );
    assert!(procstat::stat(pid).is_none());
}

/// Three requests to a CGI program that burns 0.3 s of CPU each: the server's CPU time grows by at
/// least 0.9 s, counted by its cgroup. Returns what the /proc process-tree sum saw meanwhile.
fn cgi_cpu_is_counted(kind: Kind) -> Duration {
    let doc = docroot();
    let mut server = start(kind, doc.path(), Limits::new(8, 8));
    assert_ne!(
        server.cpu_source(),
        CpuSource::ProcTree,
        "{}: no cgroup: {:?}",
        kind.name(),
        server.cgroup_error()
    );
    let comm = |p: &i32| std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
    if kind.cgi_by_fcgiwrap() {
        // The bridge's processes are the server's on the CGI workload, not in its static memory.
        let bridged = |pids: Vec<i32>| pids.iter().filter(|p| comm(p).trim() == "fcgiwrap").count();
        // fcgiwrap forks its pool after its socket is ready: wait (bounded) for the whole pool.
        let deadline = Instant::now() + Duration::from_secs(10);
        while bridged(server.members(true).pids()) <= Limits::new(8, 8).cgi_level
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(bridged(server.members(true).pids()) > Limits::new(8, 8).cgi_level);
        assert_eq!(bridged(server.members(false).pids()), 0, "{}", kind.name());
    }
    let before = server.cpu();
    let tree_before = procstat::tree_cpu(server.pid());
    for _ in 0..3 {
        let got = servers::fetch(server.addr, "/cgi-bin/burn", None, Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("{}: {e:#}", kind.name()));
        assert_eq!(
            (got.status, got.body.as_slice()),
            (200, &b"burnt\n"[..]),
            "{}",
            kind.name()
        );
    }
    // A program may still be exiting after its answer went out: wait until the server is idle again.
    let deadline = Instant::now() + Duration::from_secs(10);
    let counted = loop {
        let used = server.cpu().total() - before.total();
        if used >= Duration::from_secs_f64(3.0 * (BURN_SECS - TICK)) || Instant::now() > deadline {
            break used;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The last program's answer can go out before it has exited: a live program is a member of the
    // tree, and its own time would count. Wait (bounded) until no `burn` is left.
    let deadline = Instant::now() + Duration::from_secs(10);
    while server
        .members(true)
        .pids()
        .iter()
        .any(|p| comm(p).trim() == "burn")
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let tree = procstat::tree_cpu(server.pid()).total() - tree_before.total();
    assert!(
        counted >= Duration::from_secs_f64(3.0 * (BURN_SECS - TICK)),
        "{}: three CGI programs burnt 0.9 s of CPU, the server's cgroup counted {counted:?}",
        kind.name()
    );
    stop(server);
    tree
}

/// apache runs CGI through mod_cgid, whose daemon ignores SIGCHLD: its programs are never waited for,
/// so their time never reaches a parent's cutime — the /proc tree sum misses it, the cgroup does not.
#[test]
fn apache_cgi_cpu_is_counted_though_mod_cgid_never_waits_for_it() {
    let _lab = common::busy_lab();
    let tree = cgi_cpu_is_counted(Kind::parse("apache").unwrap());
    assert!(
        tree < Duration::from_secs_f64(BURN_SECS),
        "the /proc tree sum was expected to miss mod_cgid's children, it saw {tree:?}"
    );
}

/// mini_httpd's connection process forks a relay for the program's output, then becomes the program
/// (exec): the program is reaped by mini_httpd (the /proc sum sees it too), the relay is orphaned when
/// the program exits. Its copying of 3 × 64 MiB is counted by the cgroup and missed by the /proc sum.
#[test]
fn mini_httpd_cgi_cpu_is_counted_though_its_relay_is_orphaned() {
    let _lab = common::busy_lab();
    cgi_cpu_is_counted(Kind::parse("mini_httpd").unwrap());
    let doc = docroot();
    let mut server = start(
        Kind::parse("mini_httpd").unwrap(),
        doc.path(),
        Limits::new(8, 8),
    );
    let (before, tree_before) = (server.cpu(), procstat::tree_cpu(server.pid()));
    for _ in 0..3 {
        let got =
            servers::fetch(server.addr, "/cgi-bin/big", None, Duration::from_secs(60)).unwrap();
        assert_eq!((got.status, got.body.len()), (200, BIG_MIB << 20));
    }
    // The relays are gone once only mini_httpd itself is left in its cgroup.
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.members(true).pids().len() > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let counted = server.cpu().total() - before.total();
    let tree = procstat::tree_cpu(server.pid()).total() - tree_before.total();
    assert!(
        counted >= tree + Duration::from_millis(3 * 40),
        "the orphaned relays' copying is missing: cgroup {counted:?}, /proc tree {tree:?}"
    );
    stop(server);
}

/// nginx, caddy and h2o run CGI through fcgiwrap, started beside them in their cgroup.
#[test]
fn cgi_cpu_behind_fcgiwrap_is_counted() {
    let _lab = common::busy_lab();
    for kind in [
        Kind::parse("nginx").unwrap(),
        Kind::parse("caddy").unwrap(),
        Kind::parse("h2o").unwrap(),
    ] {
        cgi_cpu_is_counted(kind);
    }
}

#[test]
fn builtin_and_lighttpd_cgi_cpu_is_counted() {
    let _lab = common::busy_lab();
    for kind in [
        Kind::parse("builtin").unwrap(),
        Kind::parse("lighttpd").unwrap(),
    ] {
        cgi_cpu_is_counted(kind);
    }
}

/// The listen backlog of the socket on `port`, as `ss -lt` shows it (Send-Q of a listener).
fn listen_backlog(port: u16) -> usize {
    let out = std::process::Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .expect("ss (iproute2) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let cells: Vec<&str> = text.split_whitespace().collect();
    cells
        .get(2)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no listener on {port} in {text:?}"))
}

/// Server-side connections on `port` that are established (accepted by the kernel's standards).
fn established_on(port: u16) -> usize {
    let out = std::process::Command::new("ss")
        .args(["-tnH", "state", "established", &format!("sport = :{port}")])
        .output()
        .expect("ss (iproute2) runs");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// Whether `server` defers accept: connections that have sent nothing stay half-open on its side
/// while a connection that sent a request (opened after them, so behind them in any accept queue) is
/// answered. The kernel defers a bare ACK only until its first SYN-ACK retransmission (1 s: nginx
/// and lighttpd ask for 1 s), so a look that took longer, on a loaded machine, is taken again.
fn defers_accept(server: &Server) -> bool {
    for _ in 0..5 {
        let t0 = Instant::now();
        let silent: Vec<TcpStream> = (0..4)
            .map(|_| TcpStream::connect(server.addr).unwrap())
            .collect();
        let got = servers::fetch(server.addr, "/2k.html", None, Duration::from_secs(10)).unwrap();
        assert_eq!(got.status, 200);
        let n = established_on(server.addr.port());
        drop(silent);
        if t0.elapsed() < Duration::from_millis(800) {
            return n == 0;
        }
    }
    panic!("five looks at the accept queue each took 800 ms or more: the machine is too busy")
}

#[test]
fn every_server_listens_with_the_derived_backlog_and_defers_accept_where_it_can() {
    let _lab = common::busy_lab();
    let somaxconn: usize = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let doc = docroot();
    let limits = Limits::new(100, 8);
    for &kind in Kind::ALL {
        let server = start(kind, doc.path(), limits);
        let backlog = listen_backlog(server.addr.port());
        // mini_httpd's backlog is compiled in (1024); every other server gets the derived one, which
        // the kernel caps at somaxconn.
        let want = match kind {
            k if k.name() == "mini_httpd" => 1024.min(somaxconn),
            _ => limits.backlog().min(somaxconn),
        };
        assert_eq!(
            backlog,
            want,
            "{} listens with backlog {backlog}",
            kind.name()
        );
        // caddy (Go's net package) and mini_httpd cannot set TCP_DEFER_ACCEPT.
        let can_defer = !["caddy", "mini_httpd"].contains(&kind.name());
        assert_eq!(defers_accept(&server), can_defer, "{}", kind.name());
        stop(server);
    }
}

/// Opens `n` connections to `addr` one after another, sends each a keep-alive request and reads its
/// answer while keeping every earlier one open: how many were answered.
fn answered_while_all_open(addr: SocketAddr, n: usize) -> usize {
    let mut open = Vec::with_capacity(n);
    let request = format!("GET /2k.html HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    for i in 0..n {
        let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
            return i;
        };
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        if s.write_all(request.as_bytes()).is_err() || !read_response(&mut s) {
            return i;
        }
        open.push(s);
    }
    n
}

/// Reads one response with a 2048-byte body (the fixtures' /2k.html).
fn read_response(s: &mut TcpStream) -> bool {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(k) => got.extend_from_slice(&buf[..k]),
        }
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            if got.len() >= end + 4 + 2048 {
                return got.starts_with(b"HTTP/1.1 200");
            }
        }
    }
}

/// Raises this process's open-file limit to its hard limit (the test holds many connections).
fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit on a local struct.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
}

/// With limits derived from a largest level of 900 clients, every server answers 900 connections held
/// open at once (apache's old config stopped accepting at about 768: its threads were a fixed 256).
#[test]
fn every_server_holds_the_largest_level_open_at_once() {
    let _lab = common::busy_lab();
    raise_fd_limit();
    let doc = docroot();
    let n = 900;
    for &kind in Kind::ALL {
        let server = start(kind, doc.path(), Limits::new(n, 8));
        let answered = answered_while_all_open(server.addr, n);
        assert_eq!(
            answered,
            n,
            "{} stopped answering at {answered}",
            kind.name()
        );
        stop(server);
    }
}

#[test]
fn a_comparison_saves_configs_derived_from_its_levels_and_rotates_its_rounds() {
    let _lab = common::busy_lab();
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("h.db");
    let db_arg = db_path.to_str().unwrap();
    let out = common::run(
        &[
            &["compare", "--db", db_arg][..],
            &common::short_compare(
                "builtin,nginx,apache,mini_httpd",
                "2k",
                "1,300",
                "200ms",
                &["--rounds", "2"],
            ),
        ]
        .concat(),
    );
    let (text, err) = (common::stdout(&out), common::stderr(&out));
    assert!(out.status.success(), "{text}\n{err}");
    assert!(
        text.contains("server CPU from a cgroup per server"),
        "the table must say where server CPU came from:\n{text}"
    );
    assert!(text.contains("mini_httpd: no keep-alive"), "{text}");
    assert!(
        text.contains("builtin: files ≤ 64 KiB served from memory"),
        "{text}"
    );
    // The turns: round 1 in the order given, round 2 rotated by one.
    let turns: Vec<&str> = err
        .lines()
        .filter_map(|l| l.split_once("round ").map(|(_, r)| r))
        .collect();
    assert_eq!(
        turns,
        [
            "1 of 2: builtin",
            "1 of 2: nginx",
            "1 of 2: apache",
            "1 of 2: mini_httpd",
            "2 of 2: nginx",
            "2 of 2: apache",
            "2 of 2: mini_httpd",
            "2 of 2: builtin"
        ],
        "{err}"
    );
    let shown = common::run(&["show", "last", "--db", db_arg, "--configs"]);
    let configs = common::stdout(&shown);
    assert!(shown.status.success(), "{}", common::stderr(&shown));
    let limits = Limits::new(300, 1);
    for want in [
        "== builtin: serve.toml ==".to_string(),
        "cache_file_max = 65536".into(),
        format!("max_connections = {}", limits.connections()),
        "== nginx: nginx.conf ==".into(),
        format!("worker_connections {};", limits.connections()),
        format!("backlog={} deferred;", limits.backlog()),
        "tcp_nopush off;".into(),
        "== apache: apache2.conf ==".into(),
        format!("ThreadsPerChild {}", limits.workers()),
        format!("MaxRequestWorkers {}", limits.workers()),
        format!("ListenBacklog {}", limits.backlog()),
        "== mini_httpd: command line ==".into(),
    ] {
        assert!(configs.contains(&want), "{want:?} missing from\n{configs}");
    }
    // Saved once per server, with the command lines that ran it.
    assert_eq!(
        configs.matches("== nginx: nginx.conf ==").count(),
        1,
        "{configs}"
    );
    let mini = configs
        .split("== mini_httpd: command line ==")
        .nth(1)
        .unwrap();
    let line = mini.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        line.contains("mini_httpd -D") && !line.contains(" -l "),
        "{line}"
    );
    // Bad use: --configs with --table.
    let bad = common::run(&[
        "show",
        "last",
        "--db",
        db_arg,
        "--configs",
        "--table",
        "tenon",
    ]);
    assert!(!bad.status.success());
}
