//! One server's turn in one round of a comparison: start it with the run's limits, hand its configs to
//! the observer, check its features (first round), run each workload's sweep and max-users search with
//! its CPU and memory accounted, note what its rows must disclose, and stop it.

use webstand_results::{H2Plan, Plan};
use webstand_workload::Workload;

use crate::accounting::Accounting;
use crate::checks::features::check_features;
use crate::compare::observer::CompareObserver;
use crate::compare::options::Options;
use crate::disclosure;
use crate::h2;
use crate::maxusers;
use crate::php::Backends;
use crate::procstat;
use crate::robustness;
use crate::servers::binary::{locate, Binary};
use crate::servers::config::Pass;
use crate::servers::process::{Server, Setup};
use crate::servers::Kind;
use crate::sweep::{self, SweepSpec};
use crate::tls::cert::LabCert;
use crate::verify;
use std::sync::Arc;
use webstand_results::Support;
use webstand_results::SweepResult;
use webstand_results::VerifyRow;
use webstand_results::WorkloadKind;
use webstand_results::{Note, ServerOutcome, WorkloadOutcome};

/// What every server's turn in a round shares.
pub(crate) struct Run<'a> {
    pub round: usize,
    pub opts: &'a Options,
    pub pinned: bool,
    pub workloads: &'a [(WorkloadKind, Workload)],
    /// The lab's certificate, when every server runs on HTTPS.
    pub cert: Option<&'a Arc<LabCert>>,
    /// PHP-FPM (and MariaDB), when the run has dynamic workloads.
    pub backends: Option<&'a Backends>,
}

impl Run<'_> {
    /// The whole turn. Every server started is stopped before this returns.
    pub fn run(
        &self,
        kind: Kind,
        outcome: &mut ServerOutcome,
        obs: &mut dyn CompareObserver,
        verify: &mut Vec<VerifyRow>,
    ) {
        let Some((binary, setup, mut server)) = self.start(kind, outcome, obs) else {
            return;
        };
        if outcome.cpu_source.is_none() {
            outcome.cpu_source = Some(server.cpu_source());
            obs.server_configs(kind.name(), server.configs());
        }
        if self.round == 0 {
            check_protocols(outcome, &server, &setup, obs);
        }
        // Feature checks speak HTTP/1.1, which an h2c port may refuse (nginx's).
        let h2c = self.opts.h2 && self.cert.is_none();
        if self.opts.features && self.round == 0 && !h2c {
            let f = check_features(&mut server, &setup);
            obs.note(&format!(
                "{} features: basic auth {}, chroot {}, throttling {}",
                kind.name(),
                f.basic_auth.cell(),
                f.chroot.cell(),
                f.throttling.cell(),
            ));
            outcome.features = Some(f);
        }
        for (wk, workload) in self.workloads {
            if obs.stop_requested() {
                break;
            }
            let no_protocol = match (wk.h2_streams(), wk.h3_streams()) {
                (Some(_), _) => outcome.no_h2.as_deref(),
                (_, Some(_)) => outcome.no_h3.as_deref(),
                _ => None,
            };
            let w = self.workload(&mut server, &binary, (*wk, workload), no_protocol, obs);
            outcome.workloads.push(w);
        }
        let alive = server.death_note().is_none();
        if self.round == 0 && alive {
            outcome.shape = Some(procstat::shape(&server.members(false).pids()));
        }
        if let Some(spec) = self.opts.probe.as_ref().filter(|_| self.round == 0) {
            if !obs.stop_requested() && alive {
                let docroot = &self.opts.docroot;
                // Over TLS on an HTTPS port; the HTTP/3 category against servers whose h3 check
                // passed.
                let h3 = matches!(outcome.h3, Some(Support::Verified));
                let ca = self.cert.map(|c| c.ca_file());
                let r = robustness::measure(&server, docroot, spec, (ca.as_deref(), h3), obs);
                outcome.robustness = Some(r);
            }
        }
        if self.opts.verify && self.round == 0 && !obs.stop_requested() && alive {
            verify.extend(verify::run(&mut server, self.opts, obs));
        }
        if let Err(e) = server.stop() {
            obs.note(&format!("{}: {e:#}", kind.name()));
        }
    }

    /// Finds and starts the server; None (with the reason in `outcome`) when it cannot run.
    fn start(
        &self,
        kind: Kind,
        outcome: &mut ServerOutcome,
        obs: &mut dyn CompareObserver,
    ) -> Option<(Binary, Setup, Server)> {
        let binary = match locate(kind, self.opts.builtin.as_deref()) {
            Ok(b) => b,
            Err(hint) => {
                obs.note(&format!("skipping {hint}"));
                outcome.skipped = Some(hint);
                return None;
            }
        };
        outcome.version = binary.version.clone();
        outcome.exe_bytes = std::fs::metadata(&binary.path).ok().map(|m| m.len());
        if let Some(why) = self.unsupported(outcome, &binary) {
            obs.note(&format!("skipping {}: {why}", kind.name()));
            outcome.skipped = Some(why);
            return None;
        }
        let mut setup = Setup::new(&self.opts.docroot);
        setup.limits = self.opts.limits();
        setup.tls = self.cert.cloned();
        setup.h2 = self.opts.h2 && outcome.no_h2.is_none();
        setup.h3 = self.opts.h3 && outcome.no_h3.is_none();
        setup.php = self.backends.map(|b| Pass {
            socket: b.socket().display().to_string(),
            children: self.opts.php_children,
        });
        if self.pinned {
            setup.cpus = Some(self.opts.server_cpus.clone());
        }
        match Server::start(&binary, &setup) {
            Ok(server) => {
                let (name, version) = (kind.name(), &binary.version);
                let (addr, pid) = (server.addr, server.pid());
                let scheme = if server.tls.is_some() {
                    "https"
                } else {
                    "http"
                };
                obs.note(&format!(
                    "{name} {version} on {scheme}://{addr}/ (pid {pid})"
                ));
                Some((binary, setup, server))
            }
            Err(e) => {
                let msg = format!("{e:#}");
                obs.note(&format!("{} failed to start: {msg}", kind.name()));
                if self.round == 0 {
                    let one_line = msg.lines().collect::<Vec<_>>().join(" | ");
                    outcome.skipped = Some(format!("failed to start: {one_line}"));
                }
                None
            }
        }
    }

    /// Why `binary` cannot run here, if it cannot: no TLS with `--tls`; no HTTP/2 with `--h2` (no
    /// HTTP/3 with `--h3`) when every workload needs it. A server without HTTP/2 (HTTP/3) that has
    /// other workloads runs them, its outcome saying why its h2 (h3) ones are not run.
    fn unsupported(&self, outcome: &mut ServerOutcome, binary: &Binary) -> Option<String> {
        let kind = binary.kind;
        if let Some(Err(why)) = self.cert.map(|_| kind.tls(&binary.path)) {
            return Some(why);
        }
        if let Some(Err(why)) = self.opts.h3.then(|| kind.h3(&binary.path)) {
            outcome.h3 = Some(Support::No);
            outcome.no_h3 = Some(why.clone());
            if self.workloads.iter().all(|(w, _)| w.h3_streams().is_some()) {
                return Some(why);
            }
        }
        if !self.opts.h2 {
            return None;
        }
        let mode = h2::Mode::of(self.cert.is_some());
        let Err(why) = kind.h2_here(&binary.path, mode) else {
            return None;
        };
        outcome.h2 = Some(Support::No);
        outcome.no_h2 = Some(why.clone());
        let only_h2 = self.workloads.iter().all(|(w, _)| w.h2_streams().is_some());
        only_h2.then_some(why)
    }

    /// One workload on a running server: its sweep, its max-users search where asked, and its notes;
    /// `no_protocol` says why an HTTP/2 or HTTP/3 workload cannot run on it.
    fn workload(
        &self,
        server: &mut Server,
        binary: &Binary,
        (wk, workload): (WorkloadKind, &Workload),
        no_protocol: Option<&str>,
        obs: &mut dyn CompareObserver,
    ) -> WorkloadOutcome {
        let (kind, opts) = (binary.kind, self.opts);
        let mut w = WorkloadOutcome {
            workload: Some(wk),
            round: self.round,
            ..Default::default()
        };
        let unavailable = match wk {
            WorkloadKind::Cgi => disclosure::cgi_unavailable(kind),
            _ if wk.dynamic() => disclosure::php_unavailable(kind),
            _ if wk.h2_streams().or(wk.h3_streams()).is_some() => no_protocol.map(String::from),
            _ => None,
        };
        if let Some(why) = unavailable.or_else(|| server.death_note()) {
            w.note = Some(why);
            return w;
        }
        let limits = opts.limits();
        let keep_alive = opts.keep_alive && !wk.new_connection_per_request();
        let mut notes = disclosure::notes(kind, wk, keep_alive, limits.cgi_workers());
        let h2 = wk.h2_streams().map(|_| h2::Mode::of(self.cert.is_some()));
        notes.extend(disclosure::protocol_notes(kind, self.cert.is_some(), h2));
        if wk.dynamic() {
            notes.extend(disclosure::php_notes(kind, wk, opts.php_children));
        }
        if let Some(why) = server.cgroup_error() {
            notes.push(Note::CpuFromProcTree(why.to_string()));
        }
        w.disclosures = notes;
        obs.series(kind.name(), &binary.version, wk.name(), self.round);
        obs.notes(&w.disclosures);
        let mut plan = opts.base_plan(server.addr, kind, workload);
        if wk.new_connection_per_request() {
            plan.keep_alive = false;
        }
        if let Some(t) = plan.tls.as_mut() {
            // tls-new is ab's full handshake per connection; only tls-resume reuses sessions.
            t.resume = wk == WorkloadKind::TlsResume;
        }
        // The h2 workloads: `bench --h2 -m 16` (ALPN h2 over TLS, prior knowledge without).
        plan.h2 = wk.h2_streams().map(|max_streams| H2Plan {
            max_streams,
            ..H2Plan::default()
        });
        // The h3 workloads: `bench --h3 -m 16` (QUIC at the HTTPS port).
        plan.h3 = wk.h3_streams().map(|max_streams| H2Plan {
            max_streams,
            ..H2Plan::default()
        });
        plan.headers.extend(wk.headers());
        let mut peak_rss = self.sweep(&mut w, server, &plan, obs);
        let interrupted = w.sweep.as_ref().is_some_and(|s| s.interrupted);
        if opts.max_users_for.contains(&wk) && w.note.is_none() && !interrupted {
            // Saved apart from the sweep's levels, so the history's peak is the sweep's.
            let group = format!("{}/max-users", wk.name());
            obs.series(kind.name(), &binary.version, &group, self.round);
            let mut acct = Accounting::new(server, &mut *obs, wk == WorkloadKind::Cgi);
            match maxusers::find(&opts.max_users, &plan, &mut acct) {
                Ok(m) => w.max_users = Some(m),
                Err(e) => w.note = Some(format!("max users: {e:#}")),
            }
            peak_rss = peak_rss.max(acct.peak_rss_kib);
        }
        w.peak_rss_kib = Some(peak_rss).filter(|&k| k > 0);
        check_outcome(&mut w, server, plan.keep_alive);
        w
    }

    /// The sweep, one level at a time (a server that died ends it with the levels it finished);
    /// returns the peak resident memory seen, KiB.
    fn sweep(
        &self,
        w: &mut WorkloadOutcome,
        server: &mut Server,
        plan: &Plan,
        obs: &mut dyn CompareObserver,
    ) -> u64 {
        let opts = self.opts;
        let name = w.workload.map(|k| k.name()).unwrap_or_default();
        let cgi = w.workload == Some(WorkloadKind::Cgi);
        let dynamic = w.workload.is_some_and(WorkloadKind::dynamic);
        let mut acct = Accounting::new(server, &mut *obs, cgi)
            .with_backends(self.backends.filter(|_| dynamic));
        let mut swept = SweepResult {
            workload: name.to_string(),
            max_error_pct: opts.max_users.bounds.max_error_pct,
            ..Default::default()
        };
        for &clients in &opts.levels {
            if acct.server.death_note().is_some() {
                break;
            }
            let mut spec = SweepSpec::uniform(&[clients], opts.stop.clone(), opts.warmup.clone());
            spec.max_error_pct = swept.max_error_pct;
            match sweep::run(&spec, plan, name, &mut acct) {
                Ok(one) => {
                    swept.levels.extend(one.levels);
                    swept.interrupted |= one.interrupted;
                }
                Err(e) => w.note = Some(format!("{e:#}")),
            }
            let ended = swept.levels.last().and_then(|l| l.result.ended);
            if swept.interrupted || w.note.is_some() || ended.is_some() {
                break;
            }
        }
        w.sweep = Some(swept).filter(|s| !s.levels.is_empty());
        w.server_cpu = std::mem::take(&mut acct.per_level);
        w.rss_per_level = std::mem::take(&mut acct.rss_per_level);
        w.backends_cpu = std::mem::take(&mut acct.backends_per_level);
        acct.peak_rss_kib
    }
}

/// The protocol columns of thttpd's table, checked over the wire on a server's first start whatever
/// --no-features says (they prove the server speaks what the run asked): TLS with `--tls`, HTTP/2
/// with `--h2` and HTTP/3 with `--h3` unless the server is known not to speak it.
fn check_protocols(
    outcome: &mut ServerOutcome,
    server: &Server,
    setup: &Setup,
    obs: &mut dyn CompareObserver,
) {
    let name = outcome.name.clone();
    if let Some(s) = crate::checks::tls::check_feature(server, setup) {
        obs.note(&format!("{name} TLS: {}", s.cell()));
        outcome.tls = Some(s);
    }
    if setup.h2 {
        let (s, no_h2) = crate::checks::h2::check_feature(server, setup);
        let why = no_h2.as_deref().or(s.note());
        let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
        obs.note(&format!("{name} h2: {}{why}", s.cell()));
        (outcome.h2, outcome.no_h2) = (Some(s), no_h2);
    }
    if setup.h3 {
        let s = crate::checks::h3::check_feature(server, setup);
        let why = s.note().map(|w| format!(" ({w})")).unwrap_or_default();
        obs.note(&format!("{name} h3: {}{why}", s.cell()));
        outcome.h3 = Some(s);
    }
}

/// Notes a server that did not keep connections alive when asked to, or that died.
fn check_outcome(w: &mut WorkloadOutcome, server: &mut Server, keep_alive: bool) {
    let peak = w.sweep.as_ref().and_then(|s| s.peak());
    if let Some(p) = peak.filter(|p| keep_alive && p.result.keep_alive_share() < 0.9) {
        if w.note.is_none() {
            let share = p.result.keep_alive_share() * 100.0;
            w.note = Some(format!(
                "only {share:.0} % of requests reused a connection at the peak"
            ));
        }
    }
    if let Some(dead) = server.death_note() {
        let at = w
            .sweep
            .as_ref()
            .and_then(|s| s.levels.last())
            .map(|l| format!(" after {} clients", l.clients))
            .unwrap_or_default();
        (w.note, w.died) = (Some(format!("{dead}{at}")), true);
    }
}
