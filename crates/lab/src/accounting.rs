//! What a lab server costs during each measured level: its CPU time (from its cgroup, see `cgroup`)
//! before and after each run, and its resident memory sampled during it (its CGI bridge's only on the
//! CGI workload; its CPU is counted always, and is nil when idle), handed to the caller's
//! observer with each level. On dynamic workloads the PHP backends' CPU (PHP-FPM, MariaDB: cgroups of
//! their own) is read over the same level, for the server-with-PHP figure. Wraps the caller's
//! observer, so sweeps and max-users searches need not know about servers.

use anyhow::Result;
use std::sync::Arc;
use std::time::Duration;
use webstand_results::{CpuTime, Live, Plan};

use crate::compare::observer::CompareObserver;
use crate::php::Backends;
use crate::procstat::{self, RssSampler};
use crate::servers::process::Server;
use crate::sweep::Observer;
use webstand_results::Level;
use webstand_results::ServerFigures;

pub(crate) struct Accounting<'a> {
    pub server: &'a mut Server,
    /// Whether the server's CGI bridge counts in its memory (only on the CGI workload).
    bridge: bool,
    inner: &'a mut dyn CompareObserver,
    before: Option<CpuTime>,
    sampler: Option<RssSampler>,
    /// The last run's CPU time and peak RSS.
    last: Option<(CpuTime, u64)>,
    /// CPU time and peak RSS (KiB) of each measured level, in order.
    pub per_level: Vec<CpuTime>,
    pub rss_per_level: Vec<u64>,
    /// PHP-FPM and MariaDB, when the workload runs PHP: their CPU before the run, the last run's,
    /// and each measured level's.
    backends: Option<&'a Backends>,
    backends_before: Option<CpuTime>,
    backends_last: Option<CpuTime>,
    pub backends_per_level: Vec<CpuTime>,
    /// Largest RSS seen over every run, KiB.
    pub peak_rss_kib: u64,
}

impl<'a> Accounting<'a> {
    pub fn new(
        server: &'a mut Server,
        inner: &'a mut dyn CompareObserver,
        bridge: bool,
    ) -> Accounting<'a> {
        Accounting {
            server,
            bridge,
            inner,
            before: None,
            sampler: None,
            last: None,
            per_level: Vec::new(),
            rss_per_level: Vec::new(),
            backends: None,
            backends_before: None,
            backends_last: None,
            backends_per_level: Vec::new(),
            peak_rss_kib: 0,
        }
    }

    /// Also reads `backends`' CPU over each level.
    pub fn with_backends(mut self, backends: Option<&'a Backends>) -> Accounting<'a> {
        self.backends = backends;
        self
    }
}

impl Observer for Accounting<'_> {
    fn live(&mut self) -> Arc<Live> {
        self.inner.live()
    }
    fn run_starting(&mut self, label: &str, plan: &Plan, live: &Arc<Live>) {
        self.before = Some(self.server.cpu());
        self.backends_before = self.backends.map(Backends::cpu);
        let members = self.server.members(self.bridge);
        self.sampler = Some(RssSampler::start(
            Box::new(move || members.pids()),
            Duration::from_millis(250),
        ));
        self.inner.run_starting(label, plan, live);
    }
    // Forwarded like every hook: the caller decides how a run is carried out (MPI ranks).
    fn execute(&mut self, plan: &Plan, live: Arc<Live>) -> Result<webstand_results::RunResult> {
        self.inner.execute(plan, live)
    }
    fn run_ended(&mut self) {
        let after = self.server.cpu();
        let rss = self.sampler.take().map(RssSampler::finish).unwrap_or(0);
        self.peak_rss_kib = self.peak_rss_kib.max(rss);
        self.last = self
            .before
            .take()
            .map(|b| (procstat::cpu_delta(b, after), rss));
        self.backends_last = self
            .backends
            .zip(self.backends_before.take())
            .map(|(now, before)| procstat::cpu_delta(before, now.cpu()));
        self.inner.run_ended();
    }
    fn level_done(&mut self, level: &Level) -> Result<()> {
        let (cpu, rss) = self.last.take().unwrap_or_default();
        self.per_level.push(cpu);
        self.rss_per_level.push(rss);
        let backends_cpu = self.backends_last.take();
        self.backends_per_level.extend(backends_cpu);
        self.inner.level_done(level)?;
        let figures = ServerFigures {
            cpu,
            peak_rss_kib: Some(rss).filter(|&k| k > 0),
            backends_cpu,
        };
        self.inner.server_figures(level.clients, &figures);
        Ok(())
    }
}
