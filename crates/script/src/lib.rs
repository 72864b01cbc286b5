//! wrk's Lua scripts (`bench -s FILE [-- ARGS...]`) for the load generator, in LuaJIT as wrk runs
//! them: a main state where the script runs first and `setup(thread)` and `done(…)` are called,
//! and one state per load thread where `init(args)`, `request()`, `response(…)` and `delay()` are
//! (`thread.rs`). The engine sees a [`webstand_results::script::Script`] and knows no Lua.
//!
//! It owns the Lua side only: the `wrk` table and its functions (`state.rs`, `wrk.lua`,
//! `addr.rs`), the thread objects and how `response()` is called (`response.rs`), `done()`'s arguments (`summary.rs`), where `print` goes
//! (`output.rs`) and the bound on a callback that never returns (`watchdog.rs`). It must not know
//! the command line, reports or the history.

mod addr;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod output;
mod response;
mod state;
mod summary;
mod thread;
mod watchdog;

pub use output::Output;
pub use watchdog::RUNAWAY_STATUS;

use mlua::Lua;
use sha2::Digest;
use state::Source;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use thread::{Handle, LuaThread};
use watchdog::{Watch, Watchdog};
use webstand_results::script::{Script, ScriptRef, ScriptSource, ThreadScript};
use webstand_results::{Plan, RunResult};

/// A loaded script: its main state (the script already run in it) and what each thread's state
/// is made from.
pub struct WrkScript {
    src: Source,
    args: Vec<String>,
    main: Lua,
    main_watch: Watch,
    /// The threads' states, kept after the run for `done()`'s `thread:get`.
    threads: Mutex<Vec<Box<dyn ThreadScript>>>,
    watchdog: Watchdog,
}

impl WrkScript {
    /// Loads `file` for `plan` (its target, method, path, headers and body are the `wrk` table's
    /// defaults) with `args` for `init`; `print` goes to `output`. A syntax error or a failing
    /// top level is the one-line error.
    pub fn load(
        file: &Path,
        args: Vec<String>,
        plan: &Plan,
        output: Output,
    ) -> anyhow::Result<Arc<WrkScript>> {
        let name = file.display().to_string();
        let code = std::fs::read_to_string(file)
            .map_err(|e| anyhow::anyhow!("script {name}: cannot read it: {e}"))?;
        let source = ScriptSource { name, code, args };
        WrkScript::from_source(&source, plan, output)
    }

    /// Loads a script from its text (what an MPI rank gets from rank 0), as [`WrkScript::load`].
    pub fn from_source(
        source: &ScriptSource,
        plan: &Plan,
        output: Output,
    ) -> anyhow::Result<Arc<WrkScript>> {
        let name = source.name.clone();
        let t = &plan.target;
        let chunk = Path::new(&name)
            .file_name()
            .map_or_else(|| name.clone(), |n| n.to_string_lossy().into_owned());
        let src = Source {
            name: name.clone(),
            chunk,
            code: source.code.clone(),
            scheme: if plan.tls.is_some() { "https" } else { "http" }.into(),
            host: t.host.clone(),
            port: t.port,
            method: plan.method.clone(),
            path: plan.requests.first().map_or("/".into(), |r| r.path.clone()),
            authority: webstand_engine::authority(plan),
            headers: plan.headers.clone(),
            body: plan.body.as_ref().map(|(b, _)| b.clone()),
            output,
        };
        let watchdog = Watchdog::start(&name, plan.timeout);
        let main_watch = watchdog.watch();
        let main = main_watch.around(|| state::open(&src))?;
        Ok(Arc::new(WrkScript {
            src,
            args: source.args.clone(),
            main,
            main_watch,
            threads: Mutex::default(),
            watchdog,
        }))
    }

    /// The script as a plan's.
    pub fn plan_ref(self: &Arc<Self>) -> ScriptRef {
        ScriptRef(self.clone())
    }

    /// Calls `done(summary, latency, requests)` with the run's merged result, if the script
    /// defines it.
    pub fn done(&self, r: &RunResult) -> anyhow::Result<()> {
        let Some(done) = state::function(&self.main, "done") else {
            return Ok(());
        };
        let err = |e: mlua::Error| state::error(&self.src.name, &e);
        let args = summary::arguments(&self.main, r).map_err(err)?;
        self.main_watch
            .around(|| done.call::<()>(args))
            .map_err(err)
    }
}

impl Script for WrkScript {
    fn thread(
        &self,
        _index: usize,
        _threads: usize,
        addr: SocketAddr,
    ) -> anyhow::Result<Box<dyn ThreadScript>> {
        let watch = self.watchdog.watch();
        let lua = watch.around(|| state::open(&self.src))?;
        let handle = Handle::new(&lua, addr);
        if let Some(setup) = state::function(&self.main, "setup") {
            self.main_watch
                .around(|| setup.call::<()>(handle.clone()))
                .map_err(|e| state::error(&self.src.name, &e))?;
        }
        let t = LuaThread::ready(lua, &self.src.name, handle, &self.args, watch)?;
        Ok(Box::new(t))
    }

    fn returned(&self, _index: usize, state: Box<dyn ThreadScript>) {
        self.threads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(state);
    }

    fn source(&self) -> ScriptSource {
        ScriptSource {
            name: self.src.name.clone(),
            code: self.src.code.clone(),
            args: self.args.clone(),
        }
    }
}

/// The script's file name and a digest of its text (the history keeps both).
pub fn identity(file: &Path) -> anyhow::Result<(String, String)> {
    let text = std::fs::read(file)?;
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let digest = sha2::Sha256::digest(&text);
    Ok((name, digest.iter().map(|b| format!("{b:02x}")).collect()))
}
