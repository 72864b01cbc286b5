//! `compare --probe`: how one running lab server fares against hostile clients, as the robustness
//! table's row: the probe's cases counted by category (webstand-probe), service availability under
//! slowhttptest's slowloris and slow-read attacks (a third-party tool from Debian, run as it would be
//! run by hand), the most keep-alive connections the server held at once with no error (engine
//! runs at doubling concurrency, each client keeping its one connection for two requests), the
//! resident memory an idle keep-alive connection costs the server (`memory.rs`), and for servers
//! that speak HTTP/3 the hostile QUIC clients' category (`h3::probe`). On an HTTPS port every part
//! speaks TLS but the probe's HTTP/1 cases, which speak plain HTTP only: their categories are then
//! listed as not run, never counted.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use webstand_results::{Held, Live, Plan, Robustness, Shape, Stop, Target, TlsPlan};

use crate::compare::observer::CompareObserver;
use crate::servers::process::Server;
use crate::slowhttp::Strength;

/// What `--probe` runs against each server.
#[derive(Clone, Debug)]
pub struct ProbeSpec {
    /// The probe's cases (all built-in ones unless the user chose).
    pub cases: Vec<webstand_probe::Case>,
    /// The probe's whole budget per server.
    pub max_time: Duration,
    /// slowhttptest's connections and length, for both attacks.
    pub attack_connections: usize,
    pub attack_time: Duration,
    /// The keep-alive search stops at this many connections.
    pub hold_max: usize,
    /// The HTTP/3 category's cases, against servers that speak HTTP/3 (`crate::h3::probe`).
    pub h3: Vec<crate::h3::probe::Case>,
}

impl ProbeSpec {
    /// The most connections `--probe` opens at once: what every server's limits must allow.
    pub fn most_connections(&self) -> usize {
        self.attack_connections.max(self.hold_max)
    }
}

/// Why the probe's HTTP/1 cases are not run on an HTTPS port.
pub const NOT_OVER_TLS: &str = "HTTP/1 cases not run: the probe speaks plain HTTP, the port HTTPS";

/// Measures one running server, over TLS trusting `ca` (the lab's CA) when its port is HTTPS; the
/// HTTP/3 category too with `h3`. Every part runs even when another failed; each says why it has
/// no figure.
pub fn measure(
    server: &Server,
    docroot: &Path,
    spec: &ProbeSpec,
    (ca, h3): (Option<&Path>, bool),
    obs: &mut dyn CompareObserver,
) -> Robustness {
    let name = server.kind().name();
    webstand_engine::raise_fd_limit(spec.most_connections() as u64 + 256);
    obs.note(&format!(
        "{name}: probing with {} hostile cases (at most {}s)",
        spec.cases.len(),
        spec.max_time.as_secs()
    ));
    let mut out = Robustness {
        memory: crate::memory::per_connection(server, spec.hold_max),
        ..Default::default()
    };
    // `--probe-only` may have named HTTP/3 cases alone.
    if !spec.cases.is_empty() && ca.is_some() {
        out.not_run = categories(&spec.cases);
        out.probe_note = Some(NOT_OVER_TLS.into());
    } else if !spec.cases.is_empty() {
        probe_cases(server.addr, spec, &mut out);
    }
    if let Some(ca) = ca.filter(|_| h3 && !spec.h3.is_empty()) {
        obs.note(&format!("{name}: {} hostile HTTP/3 cases", spec.h3.len()));
        let h3 = crate::h3::probe::run(server.addr, ca, &spec.h3);
        out.categories.push(h3.counts);
        out.h3_notes = h3.notes;
    }
    let large = large_file(docroot).unwrap_or_else(|| "/2k.html".into());
    for slow_read in [false, true] {
        let what = if slow_read { "slow-read" } else { "slowloris" };
        obs.note(&format!(
            "{name}: slowhttptest {what}, {} connections for {}s",
            spec.attack_connections,
            spec.attack_time.as_secs()
        ));
        let path = if slow_read {
            large.as_str()
        } else {
            "/2k.html"
        };
        let strength = Strength {
            connections: spec.attack_connections,
            time: spec.attack_time,
        };
        let tls = ca.is_some();
        let a = crate::slowhttp::attack(
            server.addr,
            tls,
            path,
            slow_read,
            strength,
            server.workdir(),
        );
        *(if slow_read {
            &mut out.slow_read
        } else {
            &mut out.slowloris
        }) = a;
    }
    obs.note(&format!(
        "{name}: keep-alive connections held, up to {}",
        spec.hold_max
    ));
    out.held = hold(server.addr, ca, spec.hold_max);
    out
}

/// The categories of `cases`, in first-seen order.
fn categories(cases: &[webstand_probe::Case]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in cases {
        if !out.contains(&c.category) {
            out.push(c.category.clone());
        }
    }
    out
}

/// The probe's cases against /2k.html, counted by category.
fn probe_cases(addr: SocketAddr, spec: &ProbeSpec, out: &mut Robustness) {
    let target = webstand_probe::Target {
        url: format!("http://{addr}/2k.html"),
        addrs: vec![addr],
        host: addr.to_string(),
        path: "/2k.html".into(),
    };
    let opts = webstand_probe::Options {
        max_time: spec.max_time,
        ..Default::default()
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let report = webstand_probe::Probe::reach(&target, &opts)
        .and_then(|p| p.run(&spec.cases, &stop, &mut |_| {}));
    match report {
        Ok(r) => {
            out.categories = r.by_category();
            out.probe_note = match r.ended {
                webstand_probe::Ended::Complete => None,
                e => Some(format!("{e:?}: {} case(s) not run", r.not_run.len().max(1))),
            };
        }
        Err(e) => out.probe_note = Some(format!("{e:#}")),
    }
}

/// The docroot's large file (the fixtures' `/large/…`), which a slow reader cannot take in at once.
fn large_file(docroot: &Path) -> Option<String> {
    let entry = std::fs::read_dir(docroot.join("large"))
        .ok()?
        .flatten()
        .next()?;
    Some(format!("/large/{}", entry.file_name().to_str()?))
}

/// Doubling levels from 250 up to `limit` (the last one is `limit` itself); the most connections
/// held with no error before the first level that had errors. Over TLS, verifying the server's
/// certificate against `ca`, when given.
pub fn hold(addr: SocketAddr, ca: Option<&Path>, limit: usize) -> Held {
    let mut held = Held {
        limit,
        ..Default::default()
    };
    let mut level = 250.min(limit);
    loop {
        let errors = hold_level(addr, ca, level);
        if errors > 0 {
            held.broke_at = Some((level, errors));
            return held;
        }
        held.most = level;
        if level >= limit {
            return held;
        }
        level = (level * 2).min(limit);
    }
}

/// Errors (failed or non-2xx, or requests never made) of `clients` connections each making two
/// keep-alive requests for /2k.html (over TLS with `ca`, a full handshake per connection).
fn hold_level(addr: SocketAddr, ca: Option<&Path>, clients: usize) -> u64 {
    let target = Target {
        host: addr.ip().to_string(),
        port: addr.port(),
        addrs: vec![addr],
    };
    let mut plan = Plan::new(target, "/2k.html");
    let wanted = 2 * clients as u64;
    plan.shape = Shape::Closed { clients };
    plan.keep_alive = true;
    plan.threads = 1;
    plan.timeout = Duration::from_secs(10);
    plan.tls = ca.map(|ca| TlsPlan {
        ca_cert: Some(ca.to_path_buf()),
        sni: true,
        ..TlsPlan::default()
    });
    plan.stop = Stop {
        requests: Some(wanted),
        duration: Some(Duration::from_secs(30)),
    };
    match webstand_engine::run(&plan, Arc::new(Live::default())) {
        Ok(r) => r.errors().max(wanted.saturating_sub(r.successful())),
        Err(_) => wanted,
    }
}
