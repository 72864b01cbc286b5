//! [`Session`]: the wiring of the stop signals (`interrupt`), progress and the history around a command's runs (bench,
//! sweep, the main job, compare), and [`Session::conclude`], which ends every such command the same
//! way: the history's status and the exit status both from one `webstand_results::Verdict`, and that
//! verdict on the command's last line when it is not `complete`. Where a run executes (this
//! process, or MPI ranks) is the caller's [`Runner`]: the lab knows nothing of MPI.

use crate::compare::observer::CompareObserver;
use crate::maxusers::MaxUsersSpec;
use crate::progress::{self, Progress};
use crate::sweep::{Observer, SweepSpec};
use anyhow::Result;
use std::path::Path;
use std::sync::Arc;
use webstand_results::MaxUsers;
use webstand_results::{Level, SweepResult};
use webstand_results::{Live, Outcome, Plan, RunResult, Verdict};
use webstand_results::{Note, ServerFigures};
use webstand_store::{Protocol, RunId, RunMeta, Store};

/// Where a session's runs execute, and what to say after each level about how a run was spread.
#[derive(Clone, Copy)]
pub struct Runner {
    pub execute: fn(&Plan, Arc<Live>) -> Result<RunResult>,
    /// A table of how the last run was spread (over MPI ranks), printed after its level.
    pub spread: fn() -> Option<String>,
}

impl Runner {
    /// Every run in this process's engine.
    pub const LOCAL: Runner = Runner {
        execute: webstand_engine::run,
        spread: || None,
    };
}

/// One history run for the whole command, a level saved as soon as it is measured. Any command
/// driving `webstand_lab` runs can use it as the lab's `Observer` (set the group and server version
/// before each series).
pub struct Session {
    store: Option<(Store, RunId)>,
    quiet: bool,
    /// The series the next levels belong to (the history's group).
    pub group: String,
    /// Which round of a comparison the next levels belong to, from 1 (the history's round; 1 for
    /// bench and sweep).
    pub round: usize,
    /// The target's version for the history; when `None`, the response's Server header.
    pub server_version: Option<String>,
    /// What the next levels' row must say (a comparison's series), saved with each.
    notes: Vec<Note>,
    progress: Option<Progress>,
    runner: Runner,
    /// Told of each run as it starts (the CLI's live view and metrics); when it returns true it
    /// shows the run's progress itself, and the progress display stays off.
    pub on_run: Option<OnRun>,
}

/// [`Session::on_run`]: the run's label, plan and live counters.
pub type OnRun = Box<dyn FnMut(&str, &Plan, &Arc<Live>) -> bool + Send>;

impl Session {
    /// Opens the history (`db`, or the default one) and records the start of a run (a history that
    /// cannot be opened is reported and the run goes on unsaved).
    pub fn open(
        db: Option<&Path>,
        runner: Runner,
        kind: &str,
        target: &str,
        quiet: bool,
    ) -> Result<Session> {
        let meta = RunMeta {
            kind: kind.to_string(),
            command_line: command_line(),
            target: target.to_string(),
        };
        crate::interrupt::install();
        let store = match Store::open(db).and_then(|s| s.begin_run(&meta).map(|id| (s, id))) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("webstand: warning: results not saved in the history: {e:#}");
                None
            }
        };
        crate::interrupt::saving_into(store.as_ref().map(|(s, id)| (s.path().to_path_buf(), *id)));
        Ok(Session {
            store,
            quiet,
            group: String::new(),
            round: 1,
            server_version: None,
            notes: Vec::new(),
            progress: None,
            on_run: None,
            runner,
        })
    }

    pub fn note(&self, text: &str) {
        if !self.quiet {
            eprintln!("webstand: {text}");
        }
    }

    pub fn sweep(&mut self, spec: &SweepSpec, plan: &Plan, workload: &str) -> Result<SweepResult> {
        self.group = workload.to_string();
        crate::sweep::run(spec, plan, workload, self)
    }

    pub fn max_users(
        &mut self,
        spec: &MaxUsersSpec,
        plan: &Plan,
        workload: &str,
    ) -> Result<MaxUsers> {
        self.group = workload.to_string();
        crate::maxusers::find(spec, plan, self)
    }

    /// Records the server's side of a level already saved in `group` (the lab's /proc figures).
    pub fn save_server_figures(&mut self, clients: usize, figures: &ServerFigures) {
        if let Some((store, id)) = &self.store {
            if let Err(e) = store.add_server_figures(*id, &self.group, clients, figures) {
                eprintln!("webstand: warning: server figures not saved in the history: {e:#}");
                self.store = None;
            }
        }
    }

    /// Records what bound a level already saved in `group` at `clients` (the `--json` diagnosis
    /// object; a later call for the same level replaces it).
    pub fn save_diagnosis(&mut self, clients: usize, diagnosis: &serde_json::Value) {
        if let Some((store, id)) = &self.store {
            if let Err(e) = store.add_diagnosis(*id, &self.group, clients, diagnosis) {
                eprintln!("webstand: warning: the diagnosis not saved in the history: {e:#}");
                self.store = None;
            }
        }
    }

    /// Records the thresholds judged on the level of `group` at `clients` (a JSON array of checks).
    pub fn save_thresholds(&mut self, group: &str, clients: usize, checks: &serde_json::Value) {
        if let Some((store, id)) = &self.store {
            if let Err(e) = store.add_thresholds(*id, group, clients, checks) {
                eprintln!("webstand: warning: the thresholds not saved in the history: {e:#}");
                self.store = None;
            }
        }
    }

    /// Records the protocol `plan` speaks (HTTP/1.x, or h2 / h2c / h3 with its `-m`) as the run's, for
    /// `history`, `show` and `diff` (bench and sweep: one plan for every level).
    pub fn save_protocol(&mut self, plan: &Plan) {
        if let Some((store, id)) = &self.store {
            if let Err(e) = store.set_protocol(*id, &protocol_of(plan)) {
                eprintln!("webstand: warning: the protocol not saved in the history: {e:#}");
            }
        }
    }

    /// Records the wrk script the run's levels ran with (`-s FILE`).
    pub fn save_script(&mut self, script: &webstand_store::StoredScript) {
        if let Some((store, id)) = &self.store {
            if let Err(e) = store.set_script(*id, script) {
                eprintln!("webstand: warning: the script not saved in the history: {e:#}");
            }
        }
    }

    /// Records the files and command line a comparison started `server` with.
    pub fn save_configs(&mut self, server: &str, files: &[(String, String)]) {
        let Some((store, id)) = &self.store else {
            return;
        };
        for (name, text) in files {
            if let Err(e) = store.add_config(*id, server, name, text) {
                eprintln!("webstand: warning: {server}'s configs not saved in the history: {e:#}");
                return;
            }
        }
    }

    /// Marks the run finished with `status` (an `Outcome`'s); returns where it was saved, to print.
    pub fn finish_as(&mut self, status: &str) -> Option<String> {
        crate::interrupt::saving_into(None);
        let (store, id) = self.store.take()?;
        match store.finish_run(id, status) {
            Ok(()) => Some(format!(
                "Saved as run {id} in {} (see `webstand show {id}`)",
                store.path().display()
            )),
            Err(e) => {
                eprintln!("webstand: warning: could not mark run {id} finished: {e:#}");
                None
            }
        }
    }

    /// Passes `r` on; an error (the run could not go on) first marks the history run `failed`, so it
    /// never stays `unfinished`.
    pub fn failed_on_error<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.finish_as(Outcome::Failed.status());
        }
        r
    }

    /// Ends the command: saves the verdict as the run's status, prints where the run was saved
    /// (`saved_line`: on stdout, or stderr when stdout carries JSON) and, unless the run is complete,
    /// the verdict as the last line on stderr. Returns the exit status.
    pub fn conclude(&mut self, verdict: &Verdict, saved_line: SavedLine) -> i32 {
        let saved = self.finish_as(verdict.outcome.status());
        match (saved, saved_line) {
            (Some(s), SavedLine::Stdout) => println!("\n{s}"),
            (Some(s), SavedLine::Stderr) => eprintln!("webstand: {s}"),
            _ => {}
        }
        if let Some(line) = verdict_line(verdict) {
            eprintln!("{line}");
        }
        verdict.outcome.exit_code()
    }
}

/// Where [`Session::conclude`] says where the run was saved.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SavedLine {
    Stdout,
    Stderr,
}

/// "webstand: errors (exit status 3): …", or None for a complete run.
pub fn verdict_line(v: &Verdict) -> Option<String> {
    (v.outcome != Outcome::Complete).then(|| {
        format!(
            "webstand: {} (exit status {}): {}",
            v.outcome.status(),
            v.outcome.exit_code(),
            v.reason
        )
    })
}

impl Observer for Session {
    fn live(&mut self) -> Arc<Live> {
        crate::interrupt::live()
    }
    fn run_starting(&mut self, label: &str, plan: &Plan, live: &Arc<Live>) {
        if let Some(on_run) = self.on_run.as_mut() {
            if on_run(label, plan, live) {
                return;
            }
        }
        let label = format!("{}: {label}", self.group);
        self.progress = Some(progress::start(
            &label,
            live.clone(),
            plan.stop.requests,
            plan.stop.duration,
            self.quiet,
        ));
    }
    fn execute(&mut self, plan: &Plan, live: Arc<Live>) -> Result<RunResult> {
        (self.runner.execute)(plan, live)
    }
    fn run_ended(&mut self) {
        self.progress = None;
    }
    fn level_done(&mut self, level: &Level) -> Result<()> {
        let r = &level.result;
        let how = match (r.interrupted, r.ended) {
            (true, _) => " (interrupted)".to_string(),
            (false, Some(e)) => format!(" ({})", e.name()),
            _ => String::new(),
        };
        self.note(&format!(
            "{}: {} clients: {:.0} hits/s, {} errors ({} failed, {} non-2xx){how}",
            self.group,
            level.clients,
            r.hits_per_sec(),
            r.errors(),
            r.failed.total(),
            r.non_2xx,
        ));
        if let Some(spread) = (self.runner.spread)() {
            self.note(spread.trim_end());
        }
        if let Some((store, id)) = &self.store {
            let version = self
                .server_version
                .as_deref()
                .or(r.server_software.as_deref());
            let saved = store
                .add_level(*id, &self.group, level.clients, self.round, version, r)
                .and_then(|()| match self.notes.is_empty() {
                    true => Ok(()),
                    false => store.add_notes(*id, &self.group, level.clients, &self.notes),
                });
            if let Err(e) = saved {
                eprintln!("webstand: warning: results not saved in the history: {e:#}");
                self.store = None;
            }
        }
        Ok(())
    }
}

/// The protocol a plan speaks, as the history names it: "h2" (ALPN over TLS) or "h2c" (prior
/// knowledge) with the streams per connection asked for, else "HTTP/1.1" or "HTTP/1.0".
pub fn protocol_of(plan: &Plan) -> Protocol {
    if let Some(h3) = &plan.h3 {
        return Protocol {
            name: "h3".to_string(),
            h2_streams: Some(h3.max_streams),
        };
    }
    match (&plan.h2, plan.http_version) {
        (Some(h2), _) => Protocol {
            name: if plan.tls.is_some() { "h2" } else { "h2c" }.to_string(),
            h2_streams: Some(h2.max_streams),
        },
        (None, v) => Protocol {
            name: match v {
                webstand_results::HttpVersion::Http10 => "HTTP/1.0",
                webstand_results::HttpVersion::Http11 => "HTTP/1.1",
            }
            .to_string(),
            h2_streams: None,
        },
    }
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// A comparison's series are saved through its [`Session`]: one history run for the whole
/// comparison, a group per server and workload.
impl CompareObserver for Session {
    fn series(&mut self, server: &str, version: &str, workload: &str, round: usize) {
        self.group = format!("{server}/{workload}");
        self.round = round + 1;
        self.server_version = Some(format!("{server} {version}"));
        self.notes.clear();
    }
    fn notes(&mut self, notes: &[Note]) {
        self.notes = notes.to_vec();
    }
    fn note(&mut self, line: &str) {
        Session::note(self, line)
    }
    fn stop_requested(&self) -> bool {
        crate::interrupt::interrupted()
    }
    fn server_figures(&mut self, clients: usize, figures: &ServerFigures) {
        self.save_server_figures(clients, figures);
    }
    fn server_configs(&mut self, server: &str, files: &[(String, String)]) {
        self.save_configs(server, files);
    }
}
