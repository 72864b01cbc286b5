//! The wiring of `webstand_diagnosis` into the measuring commands: a [`Diagnosing`] observer that
//! wraps any lab observer and watches each measured run (kernel counters, load threads, the server's
//! CPU when its process is known), and the one-line refusal of a concurrency the open-files limit
//! or the source ports cannot hold.

use anyhow::{bail, Result};
use std::sync::Arc;
use webstand_diagnosis::{render, Diagnosis, Inputs, Previous, ServerUse, Watch, Watched};
use webstand_lab::compare::CompareObserver;
use webstand_lab::procstat;
use webstand_lab::session::Session;
use webstand_lab::sweep::Observer;
use webstand_results::Level;
use webstand_results::ServerFigures;
use webstand_results::{CpuTime, Live, Plan, RunResult};

/// Where a diagnosed level is kept besides the printout: the history, through the session.
pub trait KeepsDiagnosis {
    /// `diagnosis` is the `--json` object of the level just saved at `clients`.
    fn keep_diagnosis(&mut self, clients: usize, diagnosis: &serde_json::Value);
}

impl KeepsDiagnosis for Session {
    fn keep_diagnosis(&mut self, clients: usize, diagnosis: &serde_json::Value) {
        self.save_diagnosis(clients, diagnosis)
    }
}

/// Refuses, before anything runs, a concurrency the open-files hard limit cannot hold.
pub fn check_open_files(clients: usize) -> Result<()> {
    webstand_diagnosis::limits::check_open_files(clients as u64).map_err(anyhow::Error::msg)
}

/// Refuses, before anything runs, `clients` connections of `plan` that the open-files limit or its
/// source addresses' ephemeral ports cannot hold (`-B FIRST-LAST` multiplies the ports).
pub fn check_connections(clients: usize, plan: &Plan) -> Result<()> {
    check_open_files(clients)?;
    let sources = plan.bind.map_or(1, |b| u64::from(b.count));
    webstand_diagnosis::limits::check_source_ports(clients as u64, sources)
        .map_err(anyhow::Error::msg)
}

/// A server process to watch: `--server-pid`, the embedded server or a lab server.
#[derive(Clone, Copy)]
pub struct ServerProcess(pub i32);

impl ServerProcess {
    /// Checks that `pid` names a running process.
    pub fn given(pid: i32) -> Result<ServerProcess> {
        if pid <= 0 || procstat::stat(pid).is_none() {
            bail!("--server-pid {pid}: no such process");
        }
        Ok(ServerProcess(pid))
    }
}

/// What the user told webstand about a run's surroundings: the server's process (`--server-pid`,
/// or the embedded server's), the speed of the link to it (`--link-speed`).
#[derive(Clone, Copy, Default)]
pub struct Known {
    pub server: Option<ServerProcess>,
    pub link_mbit: Option<f64>,
}

/// `--link-speed RATE` in Mbit/s, refused in one line when it is not a rate.
pub fn link_speed(given: Option<&str>) -> Result<Option<f64>> {
    given
        .map(|s| {
            webstand_diagnosis::network::parse_rate(s)
                .map_err(|e| anyhow::anyhow!("--link-speed {e}"))
        })
        .transpose()
}

/// A watch of one run: the load threads and kernel counters, and the server's CPU at the start.
pub struct RunWatch {
    watch: Watch,
    server: Option<(ServerProcess, CpuTime)>,
}

impl RunWatch {
    /// Starts watching a run of `plan` (the link to its target, the kernel's counters, the load
    /// threads, its `live` error count) and, when known, its server's CPU.
    pub fn start(known: Known, plan: &Plan, live: &Arc<Live>) -> RunWatch {
        let target = plan.target.addrs.first().copied();
        RunWatch {
            server: known.server.map(|s| (s, procstat::tree_cpu(s.0))),
            watch: Watch::start(target, live.clone(), known.link_mbit),
        }
    }
    /// Ends the watch: what was seen, and the server's CPU over the run.
    pub fn finish(self) -> RunEvidence {
        let server = self.server.map(|(s, before)| ServerUse {
            cpu: procstat::cpu_delta(before, procstat::tree_cpu(s.0)).total(),
            cpus: webstand_engine::affinity::allowed_cpus_of(s.0),
        });
        RunEvidence {
            watched: self.watch.finish(),
            server,
        }
    }
}

/// What a [`RunWatch`] gathered.
#[derive(Clone, Default)]
pub struct RunEvidence {
    pub watched: Watched,
    pub server: Option<ServerUse>,
}

impl RunEvidence {
    /// The diagnosis of a run of `clients` (after `previous`, the level before it in a sweep).
    pub fn diagnose(
        &self,
        result: &RunResult,
        clients: usize,
        previous: Option<Previous>,
        max_error_pct: f64,
    ) -> Diagnosis {
        webstand_diagnosis::diagnose(&Inputs {
            result,
            clients,
            previous,
            max_error_pct,
            watched: &self.watched,
            server: self.server.clone(),
        })
    }
}

/// One diagnosed level: the series it belongs to (compare's "server/workload", empty for a sweep).
#[derive(Clone)]
pub struct Diagnosed {
    pub series: String,
    /// Which time the series was measured (compare's round, 0-based; 0 for a sweep).
    pub round: usize,
    pub clients: usize,
    pub diagnosis: Diagnosis,
    pub evidence: RunEvidence,
    /// Kept for compare, whose server CPU arrives after the level (`server_figures`).
    result: RunResult,
}

impl Diagnosed {
    fn as_previous(&self) -> Previous<'_> {
        Previous {
            clients: self.clients,
            result: &self.result,
        }
    }
}

/// A lab observer that passes everything on to `inner` and diagnoses each measured level.
pub struct Diagnosing<'a, O: ?Sized> {
    pub inner: &'a mut O,
    known: Known,
    max_error_pct: f64,
    watch: Option<RunWatch>,
    last: RunEvidence,
    series: String,
    /// The round (0-based) of the series being measured, as the lab numbers it: compare's rounds
    /// repeat the same server/workload.
    round: usize,
    /// The CPUs of the servers the lab starts (their CPU time comes from `server_figures`).
    pub lab_cpus: Vec<usize>,
    /// Every measured level, in order.
    pub levels: Vec<Diagnosed>,
}

impl<'a, O: Observer + ?Sized> Diagnosing<'a, O> {
    pub fn new(inner: &'a mut O, known: Known, max_error_pct: f64) -> Self {
        Diagnosing {
            inner,
            known,
            max_error_pct,
            watch: None,
            last: RunEvidence::default(),
            series: String::new(),
            round: 0,
            lab_cpus: Vec::new(),
            levels: Vec::new(),
        }
    }
    /// The Diagnosis section of a sweep: one line per level, then each level's findings.
    pub fn section(&self) -> String {
        render::levels_section(labelled(&self.levels, ""))
    }
    /// The level `clients` of `series` in `round`, if it was measured.
    pub fn level(&self, series: &str, round: usize, clients: usize) -> Option<&Diagnosed> {
        self.levels
            .iter()
            .find(|l| l.series == series && l.round == round && l.clients == clients)
    }
    pub fn json(&self) -> serde_json::Value {
        self.levels.iter().map(level_json).collect()
    }
}

/// Each level's "Bound by" cell, in order.
pub fn bound_cells(levels: &[Diagnosed]) -> Vec<&'static str> {
    levels
        .iter()
        .map(|l| render::bound_cell(&l.diagnosis))
        .collect()
}

/// Each level's diagnosis labelled "PREFIX8 clients", for [`render::levels_section`].
pub fn labelled<'a>(levels: &'a [Diagnosed], prefix: &str) -> Vec<(String, &'a Diagnosis)> {
    levels
        .iter()
        .map(|l| (format!("{prefix}{} clients", l.clients), &l.diagnosis))
        .collect()
}

pub fn level_json(l: &Diagnosed) -> serde_json::Value {
    let mut v = render::json(&l.diagnosis, &l.evidence.watched);
    v["clients"] = l.clients.into();
    if !l.series.is_empty() {
        v["series"] = l.series.clone().into();
        v["round"] = (l.round + 1).into();
    }
    v
}

impl<O: Observer + KeepsDiagnosis + ?Sized> Observer for Diagnosing<'_, O> {
    fn live(&mut self) -> Arc<Live> {
        self.inner.live()
    }
    fn run_starting(&mut self, label: &str, plan: &Plan, live: &Arc<Live>) {
        self.inner.run_starting(label, plan, live);
        self.watch = Some(RunWatch::start(self.known, plan, live));
    }
    // Every hook is forwarded, the defaulted ones too: a wrapper that let a default answer would
    // silently drop the inner observer's work (MPI ranks, saved configs).
    fn execute(&mut self, plan: &Plan, live: Arc<Live>) -> Result<RunResult> {
        self.inner.execute(plan, live)
    }
    fn run_ended(&mut self) {
        if let Some(w) = self.watch.take() {
            self.last = w.finish();
        }
        self.inner.run_ended();
    }
    fn level_done(&mut self, level: &Level) -> Result<()> {
        let evidence = std::mem::take(&mut self.last);
        let round = self.round;
        let previous = self
            .levels
            .last()
            .filter(|l| l.series == self.series && l.round == round)
            .map(Diagnosed::as_previous);
        let diagnosis =
            evidence.diagnose(&level.result, level.clients, previous, self.max_error_pct);
        let kept = render::json(&diagnosis, &evidence.watched);
        self.levels.push(Diagnosed {
            series: self.series.clone(),
            round,
            clients: level.clients,
            diagnosis,
            evidence,
            result: level.result.clone(),
        });
        self.inner.level_done(level)?;
        self.inner.keep_diagnosis(level.clients, &kept);
        Ok(())
    }
}

impl<O: CompareObserver + KeepsDiagnosis + ?Sized> CompareObserver for Diagnosing<'_, O> {
    fn series(&mut self, server: &str, version: &str, workload: &str, round: usize) {
        self.series = format!("{server}/{workload}");
        self.round = round;
        self.inner.series(server, version, workload, round);
    }
    fn notes(&mut self, notes: &[webstand_results::Note]) {
        self.inner.notes(notes)
    }
    fn note(&mut self, line: &str) {
        self.inner.note(line)
    }
    fn stop_requested(&self) -> bool {
        self.inner.stop_requested()
    }
    /// The lab measured the server of the level just done: diagnose it again with that CPU.
    fn server_figures(&mut self, clients: usize, figures: &ServerFigures) {
        self.inner.server_figures(clients, figures);
        let Some((l, before)) = self.levels.split_last_mut() else {
            return;
        };
        if l.clients != clients {
            return;
        }
        l.evidence.server = Some(ServerUse {
            cpu: figures.cpu.total(),
            cpus: self.lab_cpus.clone(),
        });
        let previous = before
            .last()
            .filter(|p| p.series == l.series && p.round == l.round)
            .map(Diagnosed::as_previous);
        l.diagnosis = l
            .evidence
            .diagnose(&l.result, clients, previous, self.max_error_pct);
        let kept = render::json(&l.diagnosis, &l.evidence.watched);
        self.inner.keep_diagnosis(clients, &kept);
    }
    fn server_configs(&mut self, server: &str, files: &[(String, String)]) {
        self.inner.server_configs(server, files)
    }
}
