//! ab's options in `webstand bench`, each against ab's own behaviour over loopback: ab and webstand
//! run with the same arguments against the same server — an in-test server where the wire must be
//! read (headers, bodies, the request target through a proxy, the peer address, socket buffers as
//! `ss` shows them), nginx where counts and files are compared — and what each sends or prints must
//! be what ab sends or prints. Bad values get one line and a non-zero exit.

use crate::common;

use common::offline::Offline;
use common::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::mpsc;
use std::time::Duration;

/// One request as the in-test server received it.
#[derive(Debug, Clone)]
struct Seen {
    peer: SocketAddr,
    head: String,
    body: Vec<u8>,
}

impl Seen {
    fn request_line(&self) -> &str {
        self.head.lines().next().unwrap_or("")
    }
    /// Every value of header `name` (case-insensitive), in order.
    fn headers(&self, name: &str) -> Vec<String> {
        self.head
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .filter(|(n, _)| n.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
            .collect()
    }
}

/// Reads one request (head, then a Content-Length body) from a new connection.
fn read_one(s: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end + 4]).into_owned();
            let len = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while data.len() < end + 4 + len {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => data.extend_from_slice(&buf[..n]),
                }
            }
            return Some((head, data[end + 4..].to_vec()));
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
}

const ANSWER: &[u8] = b"HTTP/1.0 200 OK\r\nServer: wire/1\r\nContent-Length: 5\r\n\r\nhello";

/// A server that answers every request with [`ANSWER`] and closes, sending what it saw to the test.
/// Before answering it waits for a word from `hold` when one is given (to look at the client's
/// socket while the request is open).
fn wire_server(hold: Option<mpsc::Receiver<()>>) -> (SocketAddr, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let Some((head, body)) = read_one(&mut s) else {
                continue;
            };
            let peer = s.peer_addr().unwrap();
            if tx.send(Seen { peer, head, body }).is_err() {
                return;
            }
            if let Some(h) = &hold {
                let _ = h.recv_timeout(Duration::from_secs(30));
            }
            let _ = s.write_all(ANSWER);
        }
    });
    (addr, rx)
}

/// `webstand bench` with a history of its own and the given arguments; must exit 0.
fn bench(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut all = vec!["bench", "--db", db.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_with_timeout(&all, Duration::from_secs(60));
    assert!(out.status.success(), "webstand {all:?}: {}", stderr(&out));
    out
}

/// Runs ab, then webstand, with `args` against the wire server; returns what each sent.
fn both_send(args: &[&str], rx: &mpsc::Receiver<Seen>, n: usize) -> (Vec<Seen>, Vec<Seen>) {
    let take = || {
        (0..n)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).expect("a request"))
            .collect::<Vec<_>>()
    };
    ab(args);
    let by_ab = take();
    bench(args);
    let by_us = take();
    (by_ab, by_us)
}

#[test]
fn credentials_and_cookies_reach_the_server_as_abs_do() {
    let (addr, rx) = wire_server(None);
    let u = format!("http://{addr}/private");
    let args = [
        "-q",
        "-n",
        "2",
        "-A",
        "user:s3cret",
        "-P",
        "px:pw",
        "-C",
        "a=1",
        &u,
    ];
    let (by_ab, by_us) = both_send(&args, &rx, 2);
    for (a, w) in by_ab.iter().zip(&by_us) {
        for name in ["Authorization", "Proxy-Authorization", "Cookie"] {
            assert_eq!(w.headers(name), a.headers(name), "{name}: {w:?} vs {a:?}");
        }
    }
    assert_eq!(
        by_us[0].headers("Authorization"),
        ["Basic dXNlcjpzM2NyZXQ="]
    );
    // Repeated -C: every cookie, in one Cookie header (RFC 6265 §5.4; ab 2.3 keeps only the last).
    bench(&["-q", "-n", "1", "-C", "a=1", "-C", "b=2", &u]);
    let seen = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(seen.headers("Cookie"), ["a=1; b=2"]);
}

#[test]
fn head_requests_have_no_body_and_count_as_abs() {
    let (addr, rx) = wire_server(None);
    let (by_ab, by_us) = both_send(
        &["-q", "-i", "-n", "1", &format!("http://{addr}/h")],
        &rx,
        1,
    );
    assert!(by_ab[0].request_line().starts_with("HEAD /h HTTP/1."));
    assert!(by_us[0].request_line().starts_with("HEAD /h HTTP/1."));
    assert!(by_us[0].body.is_empty() && by_us[0].headers("Content-Length").is_empty());
    let ngx = start_nginx();
    let u = format!("http://127.0.0.1:{}/page.html", ngx.port);
    for extra in [&[][..], &["-k"][..]] {
        let mut args = vec!["-q", "-i", "-n", "30", "-c", "3"];
        args.extend_from_slice(extra);
        args.push(&u);
        let a = ab_report(&args);
        let w = stdout(&bench(&args));
        let names = [
            "Document Length:",
            "Complete requests:",
            "Failed requests:",
            "Total transferred:",
            "HTML transferred:",
        ];
        assert_fields_equal(&w, &a, &names, &format!("HEAD {extra:?}"));
        assert_eq!(field(&w, "HTML transferred:"), "0 bytes");
    }
}

#[test]
fn put_sends_the_file_with_its_type_as_ab() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.json");
    std::fs::write(&file, b"{\"put\": [1, 2, 3]}\n").unwrap();
    let (addr, rx) = wire_server(None);
    let u = format!("http://{addr}/put");
    let f = file.to_str().unwrap();
    let args = ["-q", "-n", "2", "-u", f, "-T", "application/json", &u];
    let (by_ab, by_us) = both_send(&args, &rx, 2);
    for (a, w) in by_ab.iter().zip(&by_us) {
        assert!(w.request_line().starts_with("PUT /put HTTP/1."), "{w:?}");
        assert!(a.request_line().starts_with("PUT /put HTTP/1."), "{a:?}");
        for name in ["Content-Type", "Content-Length"] {
            assert_eq!(w.headers(name), a.headers(name), "{name}");
        }
        assert_eq!(w.body, std::fs::read(&file).unwrap());
        assert_eq!(w.body, a.body);
    }
    // nginx refuses PUT on a static file: the same refusal counted the same way.
    let ngx = start_nginx();
    let u = format!("http://127.0.0.1:{}/page.html", ngx.port);
    let args = ["-q", "-n", "20", "-c", "2", "-u", f, &u];
    let a = ab_report(&args);
    let out = run_bench_any(&args);
    let w = stdout(&out);
    let names = [
        "Complete requests:",
        "Failed requests:",
        "Non-2xx responses:",
    ];
    assert_fields_equal(&w, &a, &names, "PUT refused by nginx");
    // Every byte written, request heads included: ours are HTTP/1.1 heads, longer than ab's.
    let sent: u64 = field(&w, "Total body sent:").parse().unwrap();
    assert!(sent > 20 * 19, "{w}");
}

/// `webstand bench` whatever its exit status (a run of refusals exits 4).
fn run_bench_any(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut all = vec!["bench", "--db", db.to_str().unwrap()];
    all.extend_from_slice(args);
    run_with_timeout(&all, Duration::from_secs(60))
}

#[test]
fn a_proxy_gets_absolute_targets_and_proxy_credentials_as_from_ab() {
    let (proxy, rx) = wire_server(None);
    // The origin's name never resolves: only the proxy is connected to, as with ab.
    let u = "http://origin.invalid:8081/page?q=1";
    let p = proxy.to_string();
    let args = ["-q", "-n", "3", "-c", "1", "-X", &p, "-P", "px:pw", u];
    let (by_ab, by_us) = both_send(&args, &rx, 3);
    for (a, w) in by_ab.iter().zip(&by_us) {
        let target = |s: &Seen| s.request_line().split(' ').nth(1).unwrap_or("").to_string();
        assert_eq!(target(w), "http://origin.invalid:8081/page?q=1");
        assert_eq!(target(w), target(a));
        for name in ["Host", "Proxy-Authorization"] {
            assert_eq!(w.headers(name), a.headers(name), "{name}");
        }
    }
    let w = stdout(&bench(&args));
    for _ in 0..3 {
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
    }
    assert!(
        w.contains(&format!("Benchmarking origin.invalid [through {p}]")),
        "{w}"
    );
    assert_eq!(field(&w, "Complete requests:"), "3");
    assert_eq!(field(&w, "Server Hostname:"), "origin.invalid");
    assert_eq!(field(&w, "Document Path:"), "/page?q=1");
}

#[test]
fn the_bound_source_address_is_the_peer_address_the_server_sees() {
    let (addr, rx) = wire_server(None);
    let u = format!("http://{addr}/bound");
    let (by_ab, by_us) = both_send(&["-q", "-n", "3", "-c", "2", "-B", "127.0.0.2", &u], &rx, 3);
    for s in by_ab.iter().chain(&by_us) {
        assert_eq!(s.peer.ip().to_string(), "127.0.0.2", "{s:?}");
    }
    let (_, plain) = both_send(&["-q", "-n", "1", &u], &rx, 1);
    assert_eq!(plain[0].peer.ip().to_string(), "127.0.0.1");
}

/// The `rb` and `tb` of the client socket whose local port is `port`, as `ss -tm` shows them.
fn socket_buffers(port: u16) -> (u64, u64) {
    let ss = Command::new(require("ss"))
        .args([
            "-tmnH",
            "state",
            "established",
            "sport",
            "=",
            &format!(":{port}"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&ss.stdout).into_owned();
    let value = |key: &str| {
        text.split([',', '(', ')'])
            .find_map(|f| f.strip_prefix(key))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no {key} in ss output {text:?}"))
    };
    (value("rb"), value("tb"))
}

#[test]
fn socket_buffers_are_abs_size() {
    let mut sizes = Vec::new();
    for client in ["ab", "webstand"] {
        let (hold_tx, hold_rx) = mpsc::channel();
        let (addr, rx) = wire_server(Some(hold_rx));
        let u = format!("http://{addr}/buffers");
        let child = std::thread::spawn(move || {
            let args = ["-q", "-n", "1", "-b", "6000", u.as_str()];
            match client {
                "ab" => ab(&args),
                _ => bench(&args),
            }
        });
        let seen = rx.recv_timeout(Duration::from_secs(20)).expect("a request");
        sizes.push(socket_buffers(seen.peer.port()));
        hold_tx.send(()).unwrap();
        child.join().unwrap();
    }
    assert_eq!(sizes[0], sizes[1], "ab's (rb, tb) vs ours");
    // The kernel doubles what is asked (socket(7)); the default is far larger.
    assert_eq!(sizes[1].0, 12000, "{sizes:?}");
}

/// Runs ab and webstand with `args` (FILE stands for each one's own file) against nginx's page.
fn files_of_both(flag: &str, extra: &[&str]) -> (String, String) {
    let ngx = start_nginx();
    let u = format!("http://127.0.0.1:{}/page.html", ngx.port);
    let dir = tempfile::tempdir().unwrap();
    let mut texts = Vec::new();
    for who in ["ab", "webstand"] {
        let path = dir.path().join(format!("{who}.out"));
        let mut args = vec!["-q", "-n", "200", "-c", "4", flag, path.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.push(&u);
        match who {
            "ab" => ab(&args),
            _ => bench(&args),
        };
        texts.push(std::fs::read_to_string(&path).unwrap());
    }
    (texts.remove(0), texts.remove(0))
}

#[test]
fn gnuplot_file_has_abs_columns_and_a_row_per_request() {
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let (a, w) = files_of_both("-g", &[]);
    let (al, wl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), w.lines().collect());
    assert_eq!(wl[0], al[0]);
    assert_eq!(wl[0], "starttime\tseconds\tctime\tdtime\tttime\twait");
    assert_eq!(wl.len(), al.len());
    assert_eq!(wl.len(), 201);
    let mut last_total = 0;
    for (ours, theirs) in wl[1..].iter().zip(&al[1..]) {
        let c: Vec<&str> = ours.split('\t').collect();
        let t: Vec<&str> = theirs.split('\t').collect();
        assert_eq!(c.len(), t.len());
        assert_eq!(
            c[0].len(),
            t[0].len(),
            "ctime text {:?} vs ab's {:?}",
            c[0],
            t[0]
        );
        assert_eq!(c[0].split(' ').count(), t[0].split(' ').count());
        let n: Vec<u64> = c[1..].iter().map(|v| v.parse().unwrap()).collect();
        assert!(n[0] >= before && n[0] <= before + 120, "{ours}");
        // ctime + dtime = ttime, each rounded on its own; rows by total time, as ab's.
        assert!((n[1] + n[2]).abs_diff(n[3]) <= 1, "{ours}");
        assert!(n[3] >= last_total, "not sorted by ttime at {ours}");
        last_total = n[3];
    }
}

#[test]
fn percentages_file_is_abs_csv() {
    let (a, w) = files_of_both("-e", &["-k"]);
    let (al, wl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), w.lines().collect());
    assert_eq!(wl[0], "Percentage served,Time in ms");
    assert_eq!(wl[0], al[0]);
    assert_eq!((wl.len(), al.len()), (102, 102));
    let mut last = 0.0;
    for (i, (ours, theirs)) in wl[1..].iter().zip(&al[1..]).enumerate() {
        let (p, ms) = ours.split_once(',').unwrap();
        assert_eq!(p, i.to_string());
        assert_eq!(theirs.split_once(',').unwrap().0, p);
        let decimals = ms.split_once('.').map(|(_, d)| d.len());
        assert_eq!(decimals, Some(3), "{ours}");
        let ms: f64 = ms.parse().unwrap();
        assert!(ms >= last, "percentages must not go down: {ours}");
        last = ms;
    }
}

/// The report's lines with every number replaced by `#` and runs of spaces by one.
fn shape(report: &str) -> Vec<String> {
    report
        .lines()
        .map(|l| {
            let mut out = String::new();
            let mut in_number = false;
            for ch in l.chars() {
                if ch.is_ascii_digit() || (in_number && ch == '.') {
                    if !in_number {
                        out.push('#');
                    }
                    in_number = true;
                } else {
                    in_number = false;
                    if !(ch == ' ' && out.ends_with(' ')) {
                        out.push(ch);
                    }
                }
            }
            out
        })
        .collect()
}

#[test]
fn html_table_has_abs_rows_and_attributes() {
    let ngx = start_nginx();
    let u = format!("http://127.0.0.1:{}/page.html", ngx.port);
    for extra in [
        &["-x", "border=1", "-y", "class=r", "-z", "class=d"][..],
        &["-k"][..],
    ] {
        let mut args = vec!["-q", "-w", "-n", "40", "-c", "4"];
        args.extend_from_slice(extra);
        args.push(&u);
        let a = ab_report(&args);
        let w = stdout(&bench(&args));
        let table = |t: &str| {
            let from = t.find("<table").expect("a table");
            let to = t.find("</table>").expect("the table's end");
            t[from..to + 8].to_string()
        };
        assert_eq!(shape(&table(&w)), shape(&table(&a)), "\n{w}\n{a}");
        let row = |t: &str, name: &str| {
            t.lines()
                .find(|l| l.contains(&format!(">{name}</th>")))
                .unwrap_or_else(|| panic!("no {name} row in {t}"))
                .to_string()
        };
        for name in [
            "Server Software:",
            "Document Length:",
            "Complete requests:",
            "Failed requests:",
            "Total transferred:",
            "HTML transferred:",
        ] {
            assert_eq!(row(&w, name), row(&a, name));
        }
        assert!(
            !w.contains("Diagnosis") && !w.contains("Benchmarking"),
            "{w}"
        );
    }
}

#[test]
fn d_and_s_trim_the_report_as_abs() {
    let ngx = start_nginx();
    let u = format!("http://127.0.0.1:{}/page.html", ngx.port);
    // ab's -d comes right before the URL here, where wrk's -d would take it for a duration.
    for args in [
        vec!["-q", "-S", "-n", "30", "-d", &u],
        vec!["-q", "-n", "30", "-S", &u],
        vec!["-q", "-d", "-n", "30", &u],
    ] {
        let a = ab_report(&args);
        let w = stdout(&bench(&args));
        let times = |t: &str| {
            let from = t.find("Connection Times (ms)").expect("the times table");
            let rest = &t[from..];
            let to = rest.find("\n\n").unwrap_or(rest.len());
            shape(&rest[..to])
        };
        assert_eq!(times(&w), times(&a), "{args:?}\n{w}\n{a}");
        assert_eq!(
            w.contains("Percentage of the requests"),
            a.contains("Percentage of the requests"),
            "{args:?}"
        );
        assert_eq!(field(&w, "Complete requests:"), "30");
    }
}

#[test]
fn verbosity_prints_what_ab_prints() {
    let ngx = start_nginx();
    let count = |t: &str, what: &str| t.lines().filter(|l| l.contains(what)).count();
    for (level, path, lines) in [
        (
            "2",
            "/missing.html",
            &[
                "INFO: GET header ==",
                "LOG: header received:",
                "WARNING: Response code not 2xx (404)",
            ][..],
        ),
        (
            "3",
            "/page.html",
            &["LOG: header received:", "LOG: Response code = 200"][..],
        ),
        (
            "1",
            "/missing.html",
            &["LOG: header received:", "WARNING: Response code"][..],
        ),
    ] {
        let u = format!("http://127.0.0.1:{}{path}", ngx.port);
        let args = ["-q", "-n", "4", "-v", level, &u];
        let a = ab_report(&args);
        let out = run_bench_any(&args);
        let w = stdout(&out);
        for what in lines {
            assert_eq!(
                count(&w, what),
                count(&a, what),
                "-v {level}: {what}\n{w}\n{a}"
            );
        }
        if level == "2" {
            assert_eq!(count(&w, "LOG: header received:"), 4);
            assert!(w.contains("HTTP/1.1 404 Not Found"), "{w}");
            assert!(w.contains(&format!("GET {path} HTTP/1.1")), "{w}");
        }
    }
}

#[test]
fn receive_errors_with_r_are_counted_like_abs() {
    // Every connection is reset once its request is read.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let _ = read_one(&mut s);
            let s = socket2::Socket::from(s);
            let _ = s.set_linger(Some(Duration::ZERO));
        }
    });
    let u = format!("http://{addr}/");
    let args = ["-q", "-r", "-n", "10", &u];
    let a = ab_report(&args);
    let w = stdout(&run_bench_any(&args));
    let receive = |t: &str| {
        let l = field(t, "   (Connect:").to_string();
        l.split(", ")
            .find(|p| p.starts_with("Receive"))
            .unwrap()
            .to_string()
    };
    assert_eq!(receive(&w), receive(&a), "\n{w}\n{a}");
    assert_eq!(receive(&w), "Receive: 10");
}

#[test]
fn capital_v_prints_the_version() {
    let out = run(&["bench", "-V"]);
    assert!(out.status.success());
    assert!(stdout(&out).starts_with("webstand "), "{}", stdout(&out));
}

#[test]
fn bad_ab_options_get_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("b.txt");
    std::fs::write(&body, "x").unwrap();
    let b = body.to_str().unwrap();
    let db = dir.path().join("h.db");
    let u = "http://127.0.0.1:1/";
    let cases: [(&[&str], &str); 11] = [
        (&["-u", "/no/such/file"], "cannot read /no/such/file"),
        (&["-X", "nocolon"], "-X: 'nocolon' is not PROXY:PORT"),
        (&["-X", "127.0.0.1:0"], "is not PROXY:PORT"),
        (
            &["-X", "no-such-proxy.invalid:3128"],
            "-X: unknown proxy host 'no-such-proxy.invalid'",
        ),
        (&["-B", "10.255.255.1"], "-B: cannot bind to 10.255.255.1"),
        (&["-B", "::1"], "-B: '::1' has no IPv4 address"),
        (&["-b", "0"], "-b: '0' is not a buffer size"),
        (&["-b", "lots"], "-b: 'lots' is not a buffer size"),
        (&["-v", "loud"], "-v: 'loud' is not a verbosity level"),
        (&["-i", "-u", b], "each choose the method"),
        (
            &["-g", "/no/such/dir/g.tsv"],
            "-g: cannot write /no/such/dir/g.tsv",
        ),
    ];
    // The unknown proxy's name is asked where no query can leave the machine; the other cases
    // resolve no name.
    let offline = Offline::new();
    for (extra, expect) in cases {
        let mut args = vec!["bench", "--db", db.to_str().unwrap(), "-q"];
        args.extend_from_slice(extra);
        args.push(u);
        let mut cmd = webstand();
        cmd.args(&args);
        if extra.contains(&"no-such-proxy.invalid:3128") {
            offline.enter(&mut cmd);
        }
        let out = output_within(&mut cmd, Duration::from_secs(30));
        assert!(!out.status.success(), "{args:?} should fail");
        let err = stderr(&out);
        assert!(err.contains(expect), "{args:?}: {err:?} lacks {expect:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(!stdout(&out).contains("Complete requests"), "{args:?} ran");
    }
}
