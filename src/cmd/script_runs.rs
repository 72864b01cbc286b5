//! A wrk script (`-s FILE [-- ARGS...]`) run with every run of a sweep or a comparison: each run
//! loads the script afresh, as one wrk invocation would (its `setup`, `init` and threads are that
//! run's), and each measured level calls its `done()` once with that level's figures, after the
//! level is saved. A warm-up runs the script too, but its `done()` is not called.

use anyhow::Result;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use webstand_lab::compare::CompareObserver;
use webstand_lab::sweep::Observer;
use webstand_results::{Level, Live, Plan, RunResult};
use webstand_script::{Output, WrkScript};

/// The script of a sweep or comparison, and its arguments.
pub struct ScriptRuns {
    pub file: PathBuf,
    pub args: Vec<String>,
    /// Where its `print` goes (standard error under `--json`).
    pub output: Output,
}

/// An observer that runs `script` with each run of `inner`'s.
pub struct Scripted<'a, O: ?Sized> {
    pub inner: &'a mut O,
    script: &'a ScriptRuns,
    /// The latest run's script, whose `done()` the level's end calls.
    last: Option<Arc<WrkScript>>,
}

impl<'a, O: ?Sized> Scripted<'a, O> {
    pub fn new(inner: &'a mut O, script: &'a ScriptRuns) -> Self {
        Scripted {
            inner,
            script,
            last: None,
        }
    }
}

impl<O: Observer + ?Sized> Observer for Scripted<'_, O> {
    fn live(&mut self) -> Arc<Live> {
        self.inner.live()
    }
    fn run_starting(&mut self, label: &str, plan: &Plan, live: &Arc<Live>) {
        self.inner.run_starting(label, plan, live)
    }
    fn execute(&mut self, plan: &Plan, live: Arc<Live>) -> Result<RunResult> {
        let s = &self.script;
        let script = WrkScript::load(&s.file, s.args.clone(), plan, s.output.clone())?;
        let mut plan = plan.clone();
        plan.script = Some(script.plan_ref());
        self.last = Some(script);
        self.inner.execute(&plan, live)
    }
    fn run_ended(&mut self) {
        self.inner.run_ended()
    }
    fn level_done(&mut self, level: &Level) -> Result<()> {
        self.inner.level_done(level)?;
        match self.last.take() {
            Some(script) => script.done(&level.result),
            None => Ok(()),
        }
    }
}

impl<O: CompareObserver + ?Sized> CompareObserver for Scripted<'_, O> {
    fn series(&mut self, server: &str, version: &str, workload: &str, round: usize) {
        self.inner.series(server, version, workload, round)
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
    fn server_figures(&mut self, clients: usize, figures: &webstand_results::ServerFigures) {
        self.inner.server_figures(clients, figures)
    }
    fn server_configs(&mut self, server: &str, files: &[(String, String)]) {
        self.inner.server_configs(server, files)
    }
}

/// The command line's script flags, as sweep and compare take them.
#[derive(clap::Args, Default)]
pub struct ScriptArgs {
    /// A wrk Lua script to run with every run, whatever its name (docs/SCRIPTING.md)
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,

    /// The script's arguments (its init(args)), after `--`
    #[arg(last = true, value_name = "ARGS")]
    pub script_args: Vec<String>,
}

impl ScriptArgs {
    /// `-s VALUE` read as wrk's and ab's both read it: a duration (anything that starts with a
    /// digit, checked later as the timeout) is the request timeout, returned (else `default`);
    /// anything else the script to run. `json`: the script prints to standard error.
    pub fn split_s(
        &self,
        s: &str,
        default: &str,
        json: bool,
    ) -> Result<(String, Option<ScriptRuns>)> {
        let (timeout, by_s) = match s.starts_with(|c: char| c.is_ascii_digit()) {
            true => (s.to_string(), None),
            false => (default.to_string(), Some(PathBuf::from(s))),
        };
        let file = match (by_s, &self.script) {
            (Some(_), Some(_)) => {
                anyhow::bail!("-s FILE and --script FILE each name the script: give one")
            }
            (s, None) => s,
            (None, Some(s)) => Some(s.clone()),
        };
        if file.is_none() && !self.script_args.is_empty() {
            anyhow::bail!("arguments after -- are a script's: give the script with -s FILE");
        }
        let output = match json {
            true => Output::stderr(),
            false => Output::stdout(),
        };
        let script = file.map(|file| ScriptRuns {
            file,
            args: self.script_args.clone(),
            output,
        });
        Ok((timeout, script))
    }
}

/// Saves `file`'s name and digest as the session's run's script (`show`, `diff`). A file that
/// cannot be read is the script's error, found when it is loaded.
pub fn save_identity(session: &mut webstand_lab::session::Session, file: &Path) {
    if let Ok((name, sha256)) = webstand_script::identity(file) {
        session.save_script(&webstand_store::StoredScript { name, sha256 });
    }
}
