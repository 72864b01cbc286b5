//! Running a comparison: the docroot, the generator's pinning, the rounds with every server's turn in
//! a rotating order, and the header lines saying how it ran.

use anyhow::{bail, Context, Result};
use std::path::Path;
use webstand_workload::fixtures::{self, Manifest};
use webstand_workload::Workload;

use super::observer::CompareObserver;
use super::options::Options;
use super::workloads;
use crate::affinity::{allowed_cpus, pin_current};
use crate::php::Backends;
use crate::round::Run;
use crate::servers::lab_files::write_lab_files;
use crate::tls::cert::LabCert;
use std::sync::Arc;
use webstand_results::CpuSource;
use webstand_results::{Comparison, ServerOutcome};
use webstand_results::{WorkloadKind, H2_STREAMS_PER_CONNECTION};

/// A temporary directory for a comparison's docroot, removed when dropped.
pub fn scratch_dir() -> Result<tempfile::TempDir> {
    crate::owner::scratch_dir("compare").context("cannot create a temporary directory")
}

/// Writes the docroot: the fixtures and the lab's own files. A docroot that cannot be written is an
/// error naming it.
pub fn prepare_docroot(dir: &Path, large_size: u64) -> Result<Manifest> {
    let opts = fixtures::Options {
        large_sizes: vec![large_size],
        ..Default::default()
    };
    let manifest = fixtures::write(dir, &opts)
        .with_context(|| format!("cannot write the docroot {}", dir.display()))?;
    write_lab_files(dir).with_context(|| format!("cannot write the docroot {}", dir.display()))?;
    Ok(manifest)
}

/// Runs the comparison. Every server started is stopped before this returns, on every path.
pub fn run(opts: &Options, obs: &mut dyn CompareObserver) -> Result<Comparison> {
    if opts.levels.is_empty() {
        bail!("a comparison needs at least one client level");
    }
    opts.check()?;
    let cert = opts.tls.map(LabCert::generate).transpose()?.map(Arc::new);
    let manifest = prepare_docroot(&opts.docroot, opts.large_size)?;
    // PHP-FPM (and MariaDB with WordPress) for the whole comparison; dropped, so stopped, on return.
    let mut backends = start_backends(opts, obs)?;
    let workloads: Vec<(WorkloadKind, Workload)> = opts
        .workloads
        .iter()
        .map(|&k| {
            let w = workloads::workload(k, &manifest)?;
            Ok((
                k,
                if opts.checksum {
                    w.with_checksum(Some(&manifest))
                } else {
                    w
                },
            ))
        })
        .collect::<Result<_>>()?;
    let (pinned, pinning) = pin(opts);
    obs.note(&pinning);
    let mut out = Comparison {
        workloads: opts.workloads.clone(),
        pinning,
        settings: describe(opts),
        rounds: opts.rounds.max(1),
        ..Default::default()
    };
    out.servers = opts
        .servers
        .iter()
        .map(|&kind| ServerOutcome::new(kind.name(), kind.model()))
        .collect();
    for round in 0..out.rounds {
        for i in round_order(out.servers.len(), round) {
            let outcome = &mut out.servers[i];
            if obs.stop_requested() {
                out.interrupted = Some(crate::interrupt::stop_signal());
                if round == 0 && outcome.workloads.is_empty() {
                    outcome.skipped = Some("not run: interrupted".into());
                }
                continue;
            }
            if round > 0 && outcome.skipped.is_some() {
                continue;
            }
            if out.rounds > 1 {
                let (n, name) = (out.rounds, &outcome.name);
                obs.note(&format!("round {} of {n}: {name}", round + 1));
            }
            let server = Run {
                round,
                opts,
                pinned,
                workloads: &workloads,
                cert: cert.as_ref(),
                backends: backends.as_ref(),
            };
            server.run(opts.servers[i], outcome, obs, &mut out.verify);
        }
    }
    out.cpu_accounting = cpu_accounting(&out.servers);
    if obs.stop_requested() {
        out.interrupted = Some(crate::interrupt::stop_signal());
    }
    if let Some(Err(e)) = backends.as_mut().map(Backends::stop) {
        obs.note(&format!("{e:#}"));
    }
    Ok(out)
}

/// The PHP backends a run with dynamic workloads needs, pinned with the servers; None without any.
fn start_backends(opts: &Options, obs: &mut dyn CompareObserver) -> Result<Option<Backends>> {
    let dynamic: Vec<WorkloadKind> = opts
        .workloads
        .iter()
        .copied()
        .filter(|w| w.dynamic())
        .collect();
    if dynamic.is_empty() {
        return Ok(None);
    }
    let wordpress = dynamic.contains(&WorkloadKind::Wordpress);
    obs.note(if wordpress {
        "starting PHP-FPM and MariaDB, installing WordPress"
    } else {
        "starting PHP-FPM"
    });
    let setup = crate::php::Setup {
        fpm: opts.php_fpm.clone(),
        children: opts.php_children,
        backlog: opts.limits().backlog(),
        cpus: Some(opts.server_cpus.clone()).filter(|_| pin_allowed(opts)),
        wordpress,
    };
    let backends = Backends::start(&opts.docroot, &setup)?;
    if let Some(site) = &backends.site {
        obs.note(&format!(
            "WordPress: {} generated posts, index page {} bytes",
            site.posts, site.page_bytes
        ));
    }
    Ok(Some(backends))
}

/// The order servers run in during `round`: the list rotated by one place per round, so no server
/// always runs first (on a shared machine the first minutes of a run are not like the last).
pub fn round_order(servers: usize, round: usize) -> Vec<usize> {
    (0..servers).map(|i| (i + round) % servers).collect()
}

/// Whether the CPUs asked for are allowed and disjoint.
fn pin_allowed(opts: &Options) -> bool {
    let allowed = allowed_cpus();
    let wanted = || opts.server_cpus.iter().chain(&opts.generator_cpus);
    wanted().all(|c| allowed.contains(c))
        && opts
            .server_cpus
            .iter()
            .all(|c| !opts.generator_cpus.contains(c))
}

/// Pins this process (the generator) when the CPUs asked for are allowed and disjoint; the header line.
fn pin(opts: &Options) -> (bool, String) {
    let allowed = allowed_cpus();
    if !pin_allowed(opts) {
        return (false, format!(
            "not pinned: this process may use CPU {} only, and the server and generator need disjoint ones",
            list(&allowed)
        ));
    }
    pin_current(&opts.generator_cpus);
    let text = format!(
        "servers pinned to CPU {}, generator to CPU {}",
        list(&opts.server_cpus),
        list(&opts.generator_cpus)
    );
    (true, text)
}

fn list(v: &[usize]) -> String {
    v.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The line under the comparison's heading saying where server CPU time came from.
fn cpu_accounting(servers: &[ServerOutcome]) -> String {
    let mut sources: Vec<CpuSource> = servers.iter().filter_map(|s| s.cpu_source).collect();
    sources.dedup();
    match sources.as_slice() {
        [] => "server CPU: not measured".into(),
        [one] => format!("server CPU from {}", one.describe()),
        _ => "server CPU from different sources (see each row's note)".into(),
    }
}

/// One line on what every level ran.
fn describe(opts: &Options) -> String {
    let levels = list(&opts.levels);
    let stop = match (opts.stop.requests, opts.stop.duration) {
        (Some(n), Some(d)) => format!("{:?} or {n} requests", d),
        (None, Some(d)) => format!("{d:?}"),
        (Some(n), None) => format!("{n} requests"),
        (None, None) => "?".into(),
    };
    let warm = opts
        .warmup
        .as_ref()
        .and_then(|w| w.duration)
        .map(|d| format!(" after a {d:?} warm-up"))
        .unwrap_or_default();
    let mut text = format!(
        "clients {levels}, {stop} per level{warm}, {}",
        if opts.keep_alive {
            "keep-alive"
        } else {
            "a connection per request"
        }
    );
    if let Some(kt) = opts.tls {
        text.push_str(&format!(
            "; HTTPS only: the lab's {} certificate, TLS 1.3 and 1.2, resumption on, one cipher \
             preference (tls-new: a full handshake per request, tls-resume: a resumed one)",
            kt.name()
        ));
    }
    if opts.h2 {
        text.push_str(&format!(
            "; {}, {} concurrent streams allowed per connection where the server can set it; \
             h2 workloads: each client a connection with {} streams in flight",
            crate::h2::Mode::of(opts.tls.is_some()).describe(),
            crate::h2::MAX_CONCURRENT_STREAMS,
            H2_STREAMS_PER_CONNECTION
        ));
        if opts.tls.is_none() && opts.features {
            text.push_str("; no feature checks on h2c ports (they speak HTTP/1.1)");
        }
    }
    if opts.h3 {
        text.push_str(&format!("; {}", crate::h3::describe()));
    }
    if !opts.max_users_for.is_empty() {
        let b = &opts.max_users.bounds;
        text.push_str(&format!(
            "; max users: {} to {} clients, error ≤ {} %{}",
            opts.max_users.start,
            opts.max_users.limit,
            b.max_error_pct,
            b.max_p99_ms
                .map(|p| format!(", p99 ≤ {p} ms"))
                .unwrap_or_default()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_rotate_the_order() {
        assert_eq!(round_order(3, 0), [0, 1, 2]);
        assert_eq!(round_order(3, 1), [1, 2, 0]);
        assert_eq!(round_order(3, 5), [2, 0, 1]);
    }
}
