//! The wiring of `webstand_diagnosis` into the measuring commands: a [`Diagnosing`] observer that
//! wraps any lab observer and watches each measured run (kernel counters, load threads, the server's
//! CPU when its process is known), and the one-line refusal of a concurrency the open-files limit
//! cannot hold.

use anyhow::{bail, Result};
use std::sync::Arc;
use webstand_diagnosis::{render, Diagnosis, Inputs, ServerUse, Watch, Watched};
use webstand_engine::{CpuTime, Live, Plan, RunResult};
use webstand_lab::procstat;
use webstand_lab::sweep::{Level, Observer};

/// Refuses, before anything runs, a concurrency the open-files hard limit cannot hold.
pub fn check_open_files(clients: usize) -> Result<()> {
    webstand_diagnosis::limits::check_open_files(clients as u64).map_err(anyhow::Error::msg)
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

/// A watch of one run: the load threads and kernel counters, and the server's CPU at the start.
pub struct RunWatch {
    watch: Watch,
    server: Option<(ServerProcess, CpuTime)>,
}

impl RunWatch {
    pub fn start(server: Option<ServerProcess>) -> RunWatch {
        RunWatch {
            server: server.map(|s| (s, procstat::tree_cpu(s.0))),
            watch: Watch::start(),
        }
    }
    /// Ends the watch: what was seen, and the server's CPU over the run.
    pub fn finish(self) -> RunEvidence {
        let server = self.server.map(|(s, before)| ServerUse {
            cpu: procstat::cpu_delta(before, procstat::tree_cpu(s.0)).total(),
            cpus: cpus_allowed(s.0),
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
    pub fn diagnose(&self, result: &RunResult, max_error_pct: f64) -> Diagnosis {
        webstand_diagnosis::diagnose(&Inputs {
            result,
            max_error_pct,
            watched: &self.watched,
            server: self.server.clone(),
        })
    }
}

/// The CPUs `pid` may run on (`Cpus_allowed_list` in /proc/PID/status, e.g. "0", "0-1,3").
fn cpus_allowed(pid: i32) -> Vec<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap_or("");
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
            cpus.extend(a..=b);
        }
    }
    cpus
}

/// A lab observer that passes everything on to `inner` and diagnoses each measured level.
pub struct Diagnosing<'a> {
    pub inner: &'a mut dyn Observer,
    pub server: Option<ServerProcess>,
    pub max_error_pct: f64,
    watch: Option<RunWatch>,
    last: RunEvidence,
    /// One per measured level, in order: (clients, diagnosis, evidence).
    pub levels: Vec<(usize, Diagnosis, RunEvidence)>,
}

impl<'a> Diagnosing<'a> {
    pub fn new(
        inner: &'a mut dyn Observer,
        server: Option<ServerProcess>,
        max_error_pct: f64,
    ) -> Self {
        Diagnosing {
            inner,
            server,
            max_error_pct,
            watch: None,
            last: RunEvidence::default(),
            levels: Vec::new(),
        }
    }
    /// The Diagnosis section of a sweep: one line per level, then each level's findings.
    pub fn section(&self) -> String {
        let mut out = String::from("\nDiagnosis:\n");
        for (clients, d, _) in &self.levels {
            out.push_str(&format!("  {clients} clients: {}\n", render::headline(d)));
            for f in &d.findings {
                out.push_str(&format!("    - {}: {}\n", f.evidence, f.advice));
            }
        }
        out
    }
    pub fn json(&self) -> serde_json::Value {
        self.levels
            .iter()
            .map(|(c, d, w)| {
                let mut v = render::json(d, &w.watched);
                v["clients"] = (*c).into();
                v
            })
            .collect()
    }
}

impl Observer for Diagnosing<'_> {
    fn live(&mut self) -> Arc<Live> {
        self.inner.live()
    }
    fn run_starting(&mut self, label: &str, plan: &Plan, live: &Arc<Live>) {
        self.inner.run_starting(label, plan, live);
        self.watch = Some(RunWatch::start(self.server));
    }
    fn run_ended(&mut self) {
        if let Some(w) = self.watch.take() {
            self.last = w.finish();
        }
        self.inner.run_ended();
    }
    fn level_done(&mut self, level: &Level) -> Result<()> {
        let d = self.last.diagnose(&level.result, self.max_error_pct);
        self.levels
            .push((level.clients, d, std::mem::take(&mut self.last)));
        self.inner.level_done(level)
    }
}
