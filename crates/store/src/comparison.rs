//! A stored comparison read back into the model a live one is (`webstand_results::Comparison`): a
//! server per "server/workload" group, a workload outcome per group and round with its levels, the
//! server's CPU and memory, and the notes the lab saved. The report then builds its rows the one way
//! it builds a live comparison's, so `show` prints what compare printed. Also each level's round:
//! as saved, or (a run saved before the history kept rounds) told from the saved order.

use crate::{StoredLevel, StoredRun};
use webstand_results::sweep::Bounds;
use webstand_results::{
    Comparison, CpuTime, Level, MaxUsers, ServerOutcome, SweepResult, WorkloadKind, WorkloadOutcome,
};

/// The group suffix of a comparison's max-users probes ("nginx/large/max-users"), saved apart from
/// the sweep's levels.
const MAX_USERS: &str = "/max-users";

impl StoredRun {
    /// Each level's round, from 1: as saved (schema 10 on), else told from the saved order (1 for
    /// any run but a comparison).
    pub fn rounds(&self) -> Vec<usize> {
        if !self.rounds_inferred() {
            return self.levels.iter().map(|l| l.round.unwrap_or(1)).collect();
        }
        self.inferred_rounds()
            .into_iter()
            .map(|r| r.unwrap_or(1))
            .collect()
    }

    /// Whether a compare run's rounds are told from the order its levels were saved: it was saved
    /// before the history kept each level's round.
    pub fn rounds_inferred(&self) -> bool {
        self.meta.kind == "compare" && self.levels.iter().any(|l| l.round.is_none())
    }

    /// How many rounds a compare run's sweeps were saved in (1 for any other run).
    pub fn round_count(&self) -> usize {
        self.rounds().into_iter().max().unwrap_or(1)
    }

    /// Each level's round in a compare run saved without them. compare saves every round's sweep
    /// of a server and workload into the same "server/workload" group, one after another, and every
    /// sweep starts at the first of the client levels given; so a level starts the group's next
    /// round when another group's level came just before it, or when its clients are the group's
    /// first level's. `None` for max-users searches (their own groups, clients up and down).
    fn inferred_rounds(&self) -> Vec<Option<usize>> {
        let mut seen: Vec<(&str, usize, usize)> = Vec::new(); // group, round, first level's clients
        let mut prev: Option<&str> = None;
        let mut out = Vec::with_capacity(self.levels.len());
        for l in &self.levels {
            let g = l.group.as_str();
            let round = if g.ends_with(MAX_USERS) {
                None
            } else if let Some(s) = seen.iter_mut().find(|s| s.0 == g) {
                if prev != Some(g) || l.clients == s.2 {
                    s.1 += 1;
                }
                Some(s.1)
            } else {
                seen.push((g, 1, l.clients));
                Some(1)
            };
            out.push(round);
            prev = Some(g);
        }
        out
    }

    /// The comparison as compare had it before printing: servers and workloads in the order first
    /// measured, each server's workload outcomes per round with their sweep (judged by
    /// `max_error_pct`), server CPU, memory and saved notes. `peak_diagnosed` is handed each
    /// outcome with its peak level's saved diagnosis, to mark the peak as compare did. A max-users
    /// search is rebuilt from its probes, judged again by `max_users` (the bounds compare had).
    pub fn comparison(
        &self,
        max_error_pct: f64,
        max_users: &Bounds,
        peak_diagnosed: &dyn Fn(&mut WorkloadOutcome, &serde_json::Value),
    ) -> Comparison {
        let rounds = self.rounds();
        let mut c = Comparison {
            rounds: self.round_count(),
            ..Default::default()
        };
        for group in self.groups() {
            let Some((server, workload)) = group.split_once('/') else {
                continue;
            };
            let Some(wk) = WorkloadKind::parse_list(workload)
                .ok()
                .and_then(|w| w.first().copied())
                .filter(|_| !workload.ends_with(MAX_USERS))
            else {
                continue;
            };
            if !c.workloads.contains(&wk) {
                c.workloads.push(wk);
            }
            let at = match c.servers.iter().position(|s| s.name == server) {
                Some(i) => i,
                None => {
                    c.servers.push(ServerOutcome::new(server, ""));
                    c.servers.len() - 1
                }
            };
            for round in 1..=c.rounds {
                let of_round: Vec<&StoredLevel> = (self.levels.iter().zip(&rounds))
                    .filter(|(l, r)| l.group == group && **r == round)
                    .map(|(l, _)| l)
                    .collect();
                if of_round.is_empty() {
                    continue;
                }
                let s = &mut c.servers[at];
                if let Some(v) = of_round.iter().find_map(|l| l.server_version.as_deref()) {
                    // The lab saves "nginx 1.22.1"; the row has its own server column.
                    s.version = v.strip_prefix(&format!("{server} ")).unwrap_or(v).into();
                }
                let probes = format!("{group}{MAX_USERS}");
                let probes: Vec<&StoredLevel> = (self.levels.iter().zip(&rounds))
                    .filter(|(l, r)| l.group == probes && **r == round)
                    .map(|(l, _)| l)
                    .collect();
                let mut w = outcome(wk, round, &of_round, &probes, max_error_pct);
                w.max_users = search(&probes, max_users);
                let peak = w.sweep.as_ref().and_then(SweepResult::peak_index);
                if let Some(d) = peak.and_then(|i| of_round[i].diagnosis.as_ref()) {
                    peak_diagnosed(&mut w, d);
                }
                s.workloads.push(w);
            }
        }
        c
    }
}

/// A max-users search from its saved probes, in the order run, each judged by `bounds` as the lab
/// judged it (`MaxUsers::record`); it ends at an interrupted probe, as the search did. None without
/// probes.
fn search(probes: &[&StoredLevel], bounds: &Bounds) -> Option<MaxUsers> {
    let mut out = MaxUsers::default();
    for l in probes {
        if l.result.interrupted {
            out.interrupted = true;
            break;
        }
        let level = Level {
            clients: l.clients,
            result: l.result.clone(),
        };
        out.record(level, bounds);
    }
    (!probes.is_empty()).then_some(out)
}

/// One server's workload in one round, from its saved levels: the sweep, the server's (and PHP
/// backends') CPU of each level where saved for every level, its largest resident memory over the
/// sweep and the max-users `probes`, and the notes the lab saved with the levels.
fn outcome<'a>(
    wk: WorkloadKind,
    round: usize,
    levels: &[&'a StoredLevel],
    probes: &[&'a StoredLevel],
    max_error_pct: f64,
) -> WorkloadOutcome {
    let every = |f: &dyn Fn(&StoredLevel) -> Option<CpuTime>| -> Vec<CpuTime> {
        levels
            .iter()
            .map(|l| f(l))
            .collect::<Option<_>>()
            .unwrap_or_default()
    };
    let peak_rss_kib = levels
        .iter()
        .chain(probes)
        .filter_map(|l| l.server.and_then(|s| s.peak_rss_kib))
        .max()
        .filter(|&k| k > 0);
    WorkloadOutcome {
        workload: Some(wk),
        round: round - 1,
        sweep: Some(SweepResult {
            workload: wk.name().to_string(),
            levels: levels
                .iter()
                .map(|l| Level {
                    clients: l.clients,
                    result: l.result.clone(),
                })
                .collect(),
            max_error_pct,
            interrupted: levels.iter().any(|l| l.result.interrupted),
        }),
        server_cpu: every(&|l| Some(l.server?.cpu)),
        backends_cpu: every(&|l| l.server?.backends_cpu),
        peak_rss_kib,
        disclosures: levels
            .iter()
            .find_map(|l| l.notes.clone())
            .unwrap_or_default(),
        ..Default::default()
    }
}
