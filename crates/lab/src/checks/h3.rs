//! The check behind thttpd's h3 column: a real HTTP/3 exchange by the engine's QUIC client with a
//! server the lab started with HTTP/3 on, verifying the lab's certificate, which must fetch the
//! file whole (its length and SHA-256). Also what waits for a server's QUIC port to answer: a UDP
//! port has no "open" to wait for, only an answer.

use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use webstand_results::{BodyCheck, H2Plan, Live, Plan, Stop, Target, TlsPlan};

use crate::servers::process::{Server, Setup};
use webstand_results::Support;

/// How long a server's QUIC port gets to answer its first request.
const READY_WITHIN: Duration = Duration::from_secs(10);

/// thttpd's h3 column for a server the lab started with HTTP/3 on: `/2k.html` of the docroot
/// fetched over HTTP/3 at the server's port.
pub fn check_feature(server: &Server, setup: &Setup) -> Support {
    let path = webstand_workload::fixtures::TENON_FILE;
    let Some(cert) = setup.tls.as_ref() else {
        return Support::Failed("HTTP/3 needs the lab's certificate".into());
    };
    let want = match std::fs::read(setup.docroot.join(&path[1..])) {
        Ok(b) => b,
        Err(e) => return Support::Failed(format!("cannot read {path}: {e}")),
    };
    match fetch(server.addr, &cert.ca_file(), path, &want) {
        Ok(()) => Support::Verified,
        Err(why) => Support::Failed(why),
    }
}

/// GETs of `path` over HTTP/3 at `addr` (UDP), verifying the server's certificate against `ca`,
/// until one answers 200 with `want` (the first answers can miss while the server opens its QUIC
/// port after its TCP one) or [`READY_WITHIN`] passes: then what the last one saw.
pub fn fetch(addr: SocketAddr, ca: &Path, path: &str, want: &[u8]) -> Result<(), String> {
    answered_within(addr, ca, path, Some(want), READY_WITHIN)
}

/// Waits until the server at `addr` answers an HTTP/3 GET of `/` with any status: its QUIC port
/// is up (a docroot of the user's may have no index, nor `/2k.html`).
pub fn ready(addr: SocketAddr, ca: &Path) -> Result<(), String> {
    let each = Duration::from_secs(2);
    retried(READY_WITHIN, || {
        once(addr, ca, "/", Expect::AnyAnswer, each)
    })
}

/// GETs of `path` over HTTP/3, each on a new connection, until one is answered with a 2xx (and
/// `want`, when given) or `within` passes: then what the last one saw.
pub fn answered_within(
    addr: SocketAddr,
    ca: &Path,
    path: &str,
    want: Option<&[u8]>,
    within: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + within;
    retried(within, || {
        let left = deadline.saturating_duration_since(Instant::now());
        once(
            addr,
            ca,
            path,
            Expect::Success(want),
            left.max(Duration::from_millis(500)),
        )
    })
}

/// `attempt` again until it succeeds or `within` passes: then its last error.
fn retried(
    within: Duration,
    mut attempt: impl FnMut() -> Result<(), String>,
) -> Result<(), String> {
    let deadline = Instant::now() + within;
    loop {
        let why = match attempt() {
            Ok(()) => return Ok(()),
            Err(why) => why,
        };
        if Instant::now() >= deadline {
            return Err(why);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What a GET must get.
#[derive(Clone, Copy)]
enum Expect<'a> {
    /// A 2xx, with these bytes when given.
    Success(Option<&'a [u8]>),
    /// An answer, whatever its status.
    AnyAnswer,
}

/// One GET over a new QUIC connection, given `limit` to be answered.
fn once(
    addr: SocketAddr,
    ca: &Path,
    path: &str,
    expect: Expect,
    limit: Duration,
) -> Result<(), String> {
    let want = match expect {
        Expect::Success(want) => want,
        Expect::AnyAnswer => None,
    };
    let target = Target {
        host: addr.ip().to_string(),
        port: addr.port(),
        addrs: vec![addr],
    };
    let mut plan = Plan::new(target, path);
    plan.requests[0].expect = want.map(|want| BodyCheck::Digest {
        len: want.len() as u64,
        sha256: Sha256::digest(want).into(),
    });
    plan.threads = 1;
    plan.keep_alive = true;
    plan.timeout = limit.min(Duration::from_secs(2));
    plan.stop = Stop {
        requests: Some(1),
        duration: Some(limit),
    };
    plan.tls = Some(TlsPlan {
        ca_cert: Some(ca.to_path_buf()),
        sni: true,
        ..TlsPlan::default()
    });
    plan.h3 = Some(H2Plan::default());
    let r = webstand_engine::run(&plan, Arc::new(Live::default()))
        .map_err(|e| format!("HTTP/3 GET {path}: {e:#}"))?;
    let answered = match expect {
        Expect::Success(_) => r.successful() == 1 && r.errors() == 0,
        Expect::AnyAnswer => r.complete >= 1,
    };
    if answered {
        return Ok(());
    }
    let seen = r.first_error.clone().unwrap_or_else(|| {
        let (ok, non_2xx, failed) = (r.successful(), r.non_2xx, r.failed.total());
        match (r.complete, failed) {
            (0, 0) => format!("no answer in {limit:?}"),
            _ => format!(
                "{ok} answered whole, {non_2xx} non-2xx, {failed} failed (checksum or length)"
            ),
        }
    });
    Err(format!("HTTP/3 GET {path}: {seen}"))
}
