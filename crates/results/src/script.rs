//! What a user's script (wrk's Lua, `webstand-script`) gives a run, as the engine sees it: no Lua
//! here, only the calls and when they are made. Before the run, one [`ThreadScript`] per load
//! thread is made on the calling thread (wrk's `setup(thread)` and `init(args)` run there, in order);
//! each goes to its load thread, which calls it where the engine already decides things —
//! `requests.rs` for `request()`, `record.rs` for `response()`, the driver's wait for `delay()` —
//! and it is handed back after the run (wrk's `done()` reads the threads' values).
//!
//! A call the script does not define is never made: [`Calls`] says which are, once.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Which of the per-request callbacks a thread's script defines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// `request()`: each request's bytes come from it (else they are built once).
    pub request: bool,
    /// `response(status, headers, body)`: each response's head and body go to it.
    pub response: bool,
    /// `delay()`: each request waits that long before it is sent.
    pub delay: bool,
}

/// A script's part of a run: its per-thread states, made before the run and handed back after it.
pub trait Script: Send + Sync {
    /// Load thread `index`'s state (of `threads`), its connections going to `addr`: made (and set
    /// up) on the calling thread before the run starts, in thread order.
    fn thread(
        &self,
        index: usize,
        threads: usize,
        addr: SocketAddr,
    ) -> anyhow::Result<Box<dyn ThreadScript>>;

    /// Thread `index`'s state, back after its loop ended.
    fn returned(&self, index: usize, state: Box<dyn ThreadScript>);

    /// What another process loads the same script from (an MPI rank: its own states).
    fn source(&self) -> ScriptSource;
}

/// A script as text, for a process that loads its own copy: its name (for errors), its code and
/// the arguments its `init` gets.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScriptSource {
    pub name: String,
    pub code: String,
    pub args: Vec<String>,
}

/// One load thread's script state. An error is the script's, one line naming its file and line;
/// the run stops at the first.
pub trait ThreadScript: Send {
    /// The callbacks it defines.
    fn calls(&self) -> Calls;

    /// Where its connections go (wrk's `thread.addr`, which `setup` may change).
    fn addr(&self) -> SocketAddr;

    /// How many requests one request's bytes hold (wrk counts them once: a script's `request()`
    /// may return several, pipelined).
    fn requests_per_call(&self) -> usize;

    /// The request bytes when `request()` is not defined: built once, after `init`.
    fn fixed_request(&self) -> &[u8];

    /// Calls `request()` and appends what it returned to `out`.
    fn request(&mut self, out: &mut Vec<u8>) -> anyhow::Result<()>;

    /// Calls `response(status, headers, body)`: `head` is the response's header block as received,
    /// `body` its (decoded) body.
    fn response(&mut self, status: u16, head: &[u8], body: &[u8]) -> anyhow::Result<()>;

    /// Calls `delay()`: how long the next request waits before it is sent.
    fn delay(&mut self) -> anyhow::Result<Duration>;

    /// The script called `thread:stop()`: the thread's part of the run ends.
    fn stopped(&self) -> bool;
}

/// A plan's script, shared by every thread (not serialised: a rank loads its own).
#[derive(Clone)]
pub struct ScriptRef(pub Arc<dyn Script>);

impl std::fmt::Debug for ScriptRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScriptRef")
    }
}
