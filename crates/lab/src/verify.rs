//! `compare --verify`: webstand, wrk and ab on the same single-URL targets of one server, with the
//! same number of clients and about the same length, so their hits/s and byte counts can be read
//! side by side.

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;
use webstand_results::{Stop, VerifyRow};
use webstand_workload::fixtures;
use webstand_workload::Workload;

use crate::compare::observer::CompareObserver;
use crate::compare::options::Options;
use crate::disclosure;
use crate::programs::run_bounded;
use crate::servers::process::Server;
use crate::servers::Kind;
use webstand_results::WorkloadKind;

const CLIENTS: usize = 16;
const SECONDS: u64 = 2;

pub fn run(server: &mut Server, opts: &Options, obs: &mut dyn CompareObserver) -> Vec<VerifyRow> {
    let name = server.kind().name().to_string();
    let mut rows = Vec::new();
    let mut targets = vec![fixtures::TENON_FILE.to_string()];
    let cgi = disclosure::cgi_unavailable(server.kind()).is_none();
    if cgi && opts.workloads.contains(&WorkloadKind::Cgi) {
        targets.push(fixtures::CGI_HELLO.to_string());
    }
    for path in targets {
        obs.note(&format!(
            "{name}: verifying {path} with webstand, wrk and ab"
        ));
        let keep_alive = opts.keep_alive && server.kind().keeps_alive();
        rows.push(webstand_row(
            server.addr,
            server.kind(),
            &path,
            opts,
            obs,
            &name,
        ));
        let scheme = if server.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let origin = format!("{scheme}://{}", server.addr);
        rows.push(wrk_row(&origin, &path, keep_alive, &name));
        rows.push(ab_row(&origin, &path, keep_alive, &name));
    }
    rows
}

fn row(server: &str, path: &str, tool: &str) -> VerifyRow {
    VerifyRow {
        server: server.into(),
        target: path.into(),
        tool: tool.into(),
        clients: CLIENTS,
        ..Default::default()
    }
}

fn webstand_row(
    addr: SocketAddr,
    kind: Kind,
    path: &str,
    opts: &Options,
    obs: &mut dyn CompareObserver,
    server: &str,
) -> VerifyRow {
    let mut r = row(server, path, "webstand");
    let mut plan = opts.base_plan(addr, kind, &Workload::single(path));
    plan.shape = webstand_results::Shape::Closed { clients: CLIENTS };
    plan.stop = Stop {
        requests: Some(1_000_000),
        duration: Some(Duration::from_secs(SECONDS)),
    };
    match webstand_engine::run(&plan, obs.live()) {
        Ok(res) => {
            r.requests = res.complete;
            r.hits_per_sec = res.hits_per_sec();
            r.bytes = res.total_bytes;
            r.errors = res.errors();
        }
        Err(e) => r.note = Some(format!("{e:#}")),
    }
    r
}

/// wrk with a Lua `done` hook printing exact counts (its summary rounds bytes to MB).
fn wrk_row(origin: &str, path: &str, keep_alive: bool, server: &str) -> VerifyRow {
    let mut r = row(server, path, "wrk");
    let script = "done = function(summary, latency, requests)\n  local e = summary.errors\n  io.write(string.format(\"WEBSTAND %d %d %d %d\\n\", summary.requests, summary.bytes, summary.duration, e.connect + e.read + e.write + e.status + e.timeout))\nend\n";
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            r.note = Some(e.to_string());
            return r;
        }
    };
    let file = dir.path().join("count.lua");
    if let Err(e) = std::fs::write(&file, script) {
        r.note = Some(e.to_string());
        return r;
    }
    let mut cmd = Command::new("wrk");
    cmd.args([
        "-t1",
        &format!("-c{CLIENTS}"),
        &format!("-d{SECONDS}s"),
        "-s",
    ])
    .arg(&file)
    .arg(format!("{origin}{path}"));
    if !keep_alive {
        cmd.args(["-H", "Connection: close"]);
    }
    match run_bounded(cmd, SECONDS + 20) {
        Err(e) => r.note = Some(e),
        Ok(text) => match text.lines().find_map(|l| l.strip_prefix("WEBSTAND ")) {
            Some(nums) => {
                let n: Vec<u64> = nums
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
                if n.len() == 4 {
                    r.requests = n[0];
                    r.bytes = n[1];
                    r.hits_per_sec = n[0] as f64 / (n[2] as f64 / 1e6).max(1e-9);
                    r.errors = n[3];
                }
            }
            None => {
                r.note = Some(format!(
                    "no counts in wrk's output: {}",
                    text.lines().last().unwrap_or("")
                ))
            }
        },
    }
    r
}

/// ab for the same time (`-t`, which also caps it at 50,000 requests).
fn ab_row(origin: &str, path: &str, keep_alive: bool, server: &str) -> VerifyRow {
    let mut r = row(server, path, "ab");
    let mut cmd = Command::new("ab");
    cmd.args([
        "-q",
        "-c",
        &CLIENTS.to_string(),
        "-t",
        &SECONDS.to_string(),
        "-s",
        "10",
    ]);
    if keep_alive {
        cmd.arg("-k");
    }
    cmd.arg(format!("{origin}{path}"));
    match run_bounded(cmd, SECONDS + 30) {
        Err(e) => r.note = Some(e),
        Ok(text) => {
            let field = |name: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
            };
            r.requests = field("Complete requests:")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            r.bytes = field("Total transferred:")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            r.hits_per_sec = field("Requests per second:")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0);
            r.errors = field("Failed requests:")
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
                + field("Non-2xx responses:")
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            if r.requests == 0 {
                r.note = Some(format!(
                    "ab: {}",
                    text.lines().last().unwrap_or("no output")
                ));
            }
        }
    }
    r
}
