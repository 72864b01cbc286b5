//! Where a run goes: this process's engine, or, in a build with `--features mpi` started by mpirun,
//! every MPI rank (webstand-dist), merged into one result. Rank 0 runs the command; the other ranks
//! never get past [`start`].

use std::sync::Arc;
use webstand_results::{Live, Plan, RunResult};

/// How the last run was spread over the ranks (None when it ran in this process only).
#[derive(Clone, Debug)]
pub struct Spread {
    pub ranks: usize,
    pub start_skew_ms: f64,
    /// Time the distribution added (start protocol + merge), in milliseconds.
    pub protocol_ms: f64,
    pub missing: Vec<usize>,
    pub rows: Vec<webstand_dist::RankRow>,
}

#[cfg(feature = "mpi")]
mod imp {
    use super::*;
    use std::cell::RefCell;
    use webstand_dist::ranks::{init, launched, Leader, Role};

    thread_local! {
        static LEADER: RefCell<Option<Leader>> = const { RefCell::new(None) };
        static LAST: RefCell<Option<Spread>> = const { RefCell::new(None) };
    }

    pub fn start() {
        if !launched() {
            return;
        }
        match init(load_script) {
            Ok(Role::Leader(l)) => LEADER.with(|c| *c.borrow_mut() = Some(l)),
            // 143: ended by SIGTERM, as the shell would say.
            Ok(Role::Worker { clean }) => std::process::exit(if clean { 0 } else { 143 }),
            Err(e) => {
                eprintln!("webstand: error: {e:#}");
                std::process::exit(1);
            }
        }
    }

    /// A rank's own copy of rank 0's script: its `print` goes to the rank's standard output,
    /// which mpirun forwards.
    fn load_script(
        source: &webstand_results::script::ScriptSource,
        plan: &Plan,
    ) -> anyhow::Result<webstand_results::script::ScriptRef> {
        let output = webstand_script::Output::stdout();
        Ok(webstand_script::WrkScript::from_source(source, plan, output)?.plan_ref())
    }

    pub fn run(plan: &Plan, live: Arc<Live>) -> anyhow::Result<RunResult> {
        let merged = LEADER.with(|c| -> Option<anyhow::Result<_>> {
            let mut leader = c.borrow_mut();
            let leader = leader.as_mut()?;
            let ranks = leader.ranks();
            Some(leader.run(plan, &live, || {
                let plural = if ranks == 1 { "" } else { "s" };
                eprintln!("webstand: load started on {ranks} MPI rank{plural}");
            }))
        });
        let Some(merged) = merged else {
            return webstand_engine::run(plan, live);
        };
        let m = merged?;
        LAST.with(|c| {
            *c.borrow_mut() = Some(Spread {
                ranks: m.ranks.len(),
                start_skew_ms: m.start_skew_ms,
                protocol_ms: m.protocol_ms,
                missing: m.missing.clone(),
                rows: m.ranks.clone(),
            })
        });
        Ok(m.result)
    }

    pub fn last() -> Option<Spread> {
        LAST.with(|c| c.borrow().clone())
    }

    pub fn finish() {
        if let Some(l) = LEADER.with(|c| c.borrow_mut().take()) {
            l.finish();
        }
    }
}

#[cfg(not(feature = "mpi"))]
mod imp {
    use super::*;
    pub fn start() {}
    pub fn run(plan: &Plan, live: Arc<Live>) -> anyhow::Result<RunResult> {
        webstand_engine::run(plan, live)
    }
    pub fn last() -> Option<Spread> {
        None
    }
    pub fn finish() {}
}

/// Called last thing: tells the other ranks to quit and ends MPI.
pub use imp::finish;
/// How the last run was spread over the ranks.
pub use imp::last;
/// Carries out `plan`: over every rank under mpirun, else in this process.
pub use imp::run;
/// Called first thing: under mpirun, starts MPI; a rank other than 0 serves plans and exits here.
pub use imp::start;

impl Spread {
    /// The per-rank table printed after a distributed run's report.
    pub fn table(&self) -> String {
        let mut out = format!(
            "\nRanks (MPI):            {}, start skew {:.3} ms (largest), protocol {:.1} ms\n",
            self.ranks, self.start_skew_ms, self.protocol_ms
        );
        out.push_str(
            "  rank  connections   requests     failed  CPU-µs/req  process  start skew (ms)\n",
        );
        let us = |v: Option<f64>| v.map_or("-".to_string(), |c| format!("{c:.2}"));
        for r in &self.rows {
            let state = match (r.loaded, self.missing.contains(&r.rank)) {
                (_, true) => "  no result (died or killed)".to_string(),
                (false, false) => "  idle (more ranks than connections)".to_string(),
                (true, false) => format!("{:>17.3}", r.start_skew_ms),
            };
            out.push_str(&format!(
                "{:>6} {:>12} {:>10} {:>10} {:>11} {:>8}{state}\n",
                r.rank,
                r.clients,
                r.requests,
                r.failures,
                us(r.cpu_us_per_request),
                us(r.process_cpu_us_per_request)
            ));
        }
        if !self.missing.is_empty() {
            let list: Vec<String> = self.missing.iter().map(|r| r.to_string()).collect();
            out.push_str(&format!(
                "INCOMPLETE: no result from rank {} (died or killed): the figures cover the other ranks\n",
                list.join(", ")
            ));
        }
        out
    }

    /// The same as a JSON object (the `ranks` member of `bench --json`).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.ranks,
            "start_skew_ms": self.start_skew_ms,
            "protocol_ms": self.protocol_ms,
            "missing": self.missing,
            "incomplete": !self.missing.is_empty(),
            "per_rank": serde_json::to_value(&self.rows).unwrap_or_default(),
        })
    }
}
