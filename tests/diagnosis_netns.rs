//! Diagnosis findings that need a network of the test's own, made in namespaces so that the host's
//! settings stay untouched and the traffic stays inside: ephemeral ports run out (a namespace whose
//! port range is eight ports wide), and a link's bandwidth filled (two namespaces joined by a veth
//! pair shaped to 20 Mbit/s by tc, the bench in one, `webstand serve` in the other).

use crate::common;

use common::netns::Netns;
use common::test_server::{Answer, TestServer};
use common::*;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

/// One test at a time: each loads the machine's two cores for seconds.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `webstand bench ARGS… --json` run inside `ns`, bounded, and its JSON document.
fn bench_in(ns: &Netns, args: &[&str]) -> serde_json::Value {
    let mut cmd = webstand();
    cmd.args(["bench", "-q", "--json"]).args(args);
    json_stdout(&output_within(ns.enter(&mut cmd), Duration::from_secs(60)))
}

#[test]
fn ephemeral_ports_run_out_and_the_finding_says_how_to_get_more() {
    let _serial = one_at_a_time();
    // No reuse of a port whose last connection is in TIME_WAIT.
    let ns = Netns::new("echo 0 > /proc/sys/net/ipv4/tcp_tw_reuse");
    // The server leaves each connection open: the bench closes first, so its side of each
    // connection (and its port) waits in TIME_WAIT.
    let server = ns.inside(|| TestServer::start(128, Duration::ZERO, Answer::OkOpen));
    // Eight ports, narrowed after the server took its own port from the range.
    ns.sh("echo '40000 40007' > /proc/sys/net/ipv4/ip_local_port_range");
    // Two connections fit in eight ports: the up-front check lets the run start.
    let v = bench_in(&ns, &["-c", "2", "-d", "1s", &server.url()]);
    ns.inside(|| drop(server));
    let d = &v["diagnosis"];
    assert_eq!(v["complete"], 8, "one request per port: {v:#}");
    assert_eq!(d["verdict"], "errors", "{d:#}");
    let f = diagnosis_finding(d, "errors").unwrap_or_else(|| panic!("{d:#}"));
    let text = f["evidence"].as_str().unwrap();
    let failed = v["failed"]["connect"].as_u64().unwrap();
    assert!(
        text.contains(&format!("by socket error: {failed} EADDRNOTAVAIL")),
        "{text}"
    );
    assert!(
        text.contains("net.ipv4.ip_local_port_range is 40000 40007: 8 ports per source address"),
        "{text}"
    );
    let advice = f["advice"].as_str().unwrap();
    for way_out in ["keep-alive (-k)", "ip_local_port_range=", "-B FIRST-LAST"] {
        assert!(advice.contains(way_out), "{advice}");
    }
    assert!(
        diagnosis_finding(d, "error-burst").is_none(),
        "the generator's own errors are no burst of the server's: {d:#}"
    );
}

/// Two namespaces joined by a veth pair (10.214.0.1 for the bench, 10.214.0.2 for the server,
/// jumbo frames so that headers cost little), the server's side shaped to `rate` by tbf.
fn shaped_link(rate: &str) -> (Netns, Netns) {
    let server = Netns::new("true");
    let bench = Netns::new(&format!(
        "ip link add wsbench mtu 9000 type veth peer name wsserver mtu 9000 netns {} && \
         ip addr add 10.214.0.1/24 dev wsbench && ip link set wsbench up",
        server.pid()
    ));
    require("tc");
    server.sh(&format!(
        "ip addr add 10.214.0.2/24 dev wsserver && ip link set wsserver up && \
         tc qdisc add dev wsserver root tbf rate {rate} burst 64kb latency 100ms"
    ));
    (bench, server)
}

#[test]
fn a_link_shaped_to_20_mbit_fills_and_the_network_finding_names_it() {
    let _serial = one_at_a_time();
    let (bench, server) = shaped_link("20mbit");
    let dir = tempfile::tempdir().unwrap();
    let body: Vec<u8> = (0..256 * 1024).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("big.bin"), body).unwrap();
    let addr: SocketAddr = "10.214.0.2:8080".parse().unwrap();
    let mut serve = webstand();
    serve
        .arg("serve")
        .arg(dir.path())
        .args(["--listen", &addr.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _serve = Running {
        child: server.enter(&mut serve).spawn().unwrap(),
        addr,
    };
    assert!(
        bench.inside(|| wait_listening(addr, Duration::from_secs(10))),
        "webstand serve never listened on {addr} across the veth"
    );
    let url = format!("http://{addr}/big.bin");
    let run = |speed: &str| {
        let v = bench_in(
            &bench,
            &["-k", "-c", "4", "-d", "3s", "--link-speed", speed, &url],
        );
        v["diagnosis"].clone()
    };
    let d = run("20mbit");
    assert_eq!(d["verdict"], "network", "{d:#}");
    let text = diagnosis_finding(&d, "network").unwrap()["evidence"]
        .as_str()
        .unwrap();
    assert!(text.starts_with("received "), "{text}");
    assert!(
        text.contains(" Mbit/s of HTTP over wsbench, whose link runs at 20 Mbit/s (--link-speed; "),
        "{text}"
    );
    let mbit: f64 = text["received ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (18.0..=20.5).contains(&mbit),
        "tbf holds it near 20 Mbit/s: {text}"
    );
    assert_eq!(d["evidence"]["link"]["source"], "--link-speed", "{d:#}");
    // The same traffic on a link said to be 1 Gbit/s fills 2 % of it: no finding.
    let d = run("1gbit");
    assert!(diagnosis_finding(&d, "network").is_none(), "{d:#}");
    // veth has no speed in sysfs: without --link-speed there is nothing to approach.
    let mut cmd = Command::new("cat");
    cmd.arg("/sys/class/net/wsbench/speed");
    let out = bench.enter(&mut cmd).output().unwrap();
    assert!(
        !out.status.success() || stdout(&out).trim() == "-1",
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_link_speed_that_is_no_rate_is_refused_in_one_line() {
    for bad in ["fast", "20", "20mbps"] {
        let out = run(&[
            "bench",
            "--link-speed",
            bad,
            "-n",
            "1",
            "http://127.0.0.1:9/",
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{bad}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("--link-speed \"{bad}\" is not a rate")),
            "{err}"
        );
        assert!(err.contains("20mbit, 1gbit"), "{err}");
    }
    let out = run(&[
        "sweep",
        "--link-speed",
        "x",
        "-c",
        "1",
        "-n",
        "1",
        "http://127.0.0.1:9/",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("20mbit, 1gbit"), "{}", stderr(&out));
}
