//! The entry point of the `wrk_script` fuzz target (fuzz/, built with the `fuzzing` feature;
//! nothing here is in `bench`): a script's text loaded as `bench -s` loads it (a main state, then a
//! thread's state after `setup(thread)`, `init`, the request built and counted) and its callbacks
//! called as a run calls them. Two bounds stand in for the run's, which a fuzzer cannot use:
//! the watchdog ends the whole process when a callback never returns (LuaJIT's compiled loops
//! answer no hook), so here the JIT is off and every state stops after an instruction budget;
//! and each state's memory is capped. Fuzzed text must not touch the machine: `io`, `os` but its
//! clock, the loaders of files and native code, and `wrk.lookup`/`wrk.connect` are taken away,
//! and `print` only turns its arguments into strings; so are coroutines, which mlua's hook does
//! not follow (a hook meeting another thread removes itself).

use crate::state::{self, Source};
use crate::thread::{Handle, LuaThread};
use crate::watchdog::Watch;
use mlua::{HookTriggers, Lua, VmState};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use webstand_results::script::ThreadScript;

/// The file name the script goes by (error lines start with it).
pub const NAME: &str = "fuzz.lua";

/// Lua instructions a state may run, in all, before it is stopped.
const BUDGET: u32 = 2_000_000;
/// Every how many instructions the budget is checked.
const EVERY: u32 = 1000;
/// Heap a state may hold.
const MEMORY: usize = 32 << 20;

/// How a script fared.
#[derive(Debug, PartialEq, Eq)]
pub enum Fared {
    /// It loaded and each callback returned: the requests `request()` made (or the one built),
    /// and how many requests one holds.
    Ran {
        requests: Vec<Vec<u8>>,
        per_call: usize,
    },
    /// Refused with this message.
    Refused(String),
    /// It ran past the instruction budget (a run's watchdog would have stopped it).
    Stopped,
}

const SANDBOX: &str = r##"
jit.off()
jit.flush()
io, require, dofile, loadfile, module = nil, nil, nil, nil, nil
package, coroutine = nil, nil
os = { clock = os.clock, time = os.time, date = os.date, difftime = os.difftime }
wrk.lookup = function() error("no lookups here") end
wrk.connect = function() error("no connections here") end
print = function(...)
   for i = 1, select("#", ...) do
      tostring((select(i, ...)))
   end
end
"##;

/// Sets the bounds on a fresh state; `spent` goes up when the budget runs out.
fn bounds(lua: &Lua, spent: &Arc<AtomicBool>) -> mlua::Result<()> {
    lua.set_memory_limit(MEMORY)?;
    let spent = spent.clone();
    let left = Cell::new(BUDGET / EVERY);
    let out = || mlua::Error::runtime("the instruction budget ran out");
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(EVERY),
        move |lua, _| {
            left.set(left.get().saturating_sub(1));
            if left.get() > 0 {
                return Ok(VmState::Continue);
            }
            spent.store(true, Ordering::Relaxed);
            // From now on every instruction fails, so that no pcall in a loop can catch them all.
            lua.set_hook(HookTriggers::new().every_nth_instruction(1), move |_, _| {
                Err(out())
            });
            Err(out())
        },
    );
    lua.load(SANDBOX).set_name("=sandbox").exec()
}

/// Loads `code` and calls its callbacks: `request()` up to three times, `response()` with
/// `response` (a head and a body), `delay()`.
pub fn run(code: &str, response: (&[u8], &[u8])) -> Fared {
    let spent = Arc::new(AtomicBool::new(false));
    let fared = go(code, response, &spent);
    match fared {
        Err(_) if spent.load(Ordering::Relaxed) => Fared::Stopped,
        Err(e) => Fared::Refused(e.to_string()),
        Ok(f) => f,
    }
}

fn go(code: &str, (head, body): (&[u8], &[u8]), spent: &Arc<AtomicBool>) -> anyhow::Result<Fared> {
    let src = Source::localhost(NAME, NAME, code);
    let main = state::open_with(&src, |lua| bounds(lua, spent))?;
    let lua = state::open_with(&src, |lua| bounds(lua, spent))?;
    let handle = Handle::new(&lua, "127.0.0.1:8080".parse().expect("an address"));
    if let Some(setup) = state::function(&main, "setup") {
        setup
            .call::<()>(handle.clone())
            .map_err(|e| state::error(NAME, &e))?;
    }
    let args = vec!["-x".to_string(), "1".to_string()];
    let mut t = LuaThread::ready(lua, NAME, handle, &args, Watch::default())?;
    let calls = t.calls();
    let mut requests = Vec::new();
    if calls.request {
        for _ in 0..3 {
            let mut out = Vec::new();
            t.request(&mut out)?;
            requests.push(out);
        }
    } else {
        requests.push(t.fixed_request().to_vec());
    }
    if calls.response {
        t.response(200, head, body)?;
    }
    if calls.delay {
        t.delay()?;
    }
    Ok(Fared::Ran {
        requests,
        per_call: t.requests_per_call(),
    })
}
