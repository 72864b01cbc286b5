//! Which request a load thread sends next, and how many it may still send: its share of the run's
//! budget (`-n`), the pick among the plan's URLs (always the first, uniform or weighted, from a
//! seed so runs repeat), the open loop's [`Pacer`], and the requests taken but waiting for a
//! connection to carry them again (HTTP/2's streams above a GOAWAY's last one). The one place a
//! request is chosen, and so where a script's are (`script.rs`): its `request()` called for each
//! send when it defines one, else its request built once; its `delay()` asked here for the driver.
//! A script's first error stops the thread (kept for the run's result).
//!
//! A request is outstanding from the moment it is taken until [`Requests::done`]: the thread's part
//! of the run is over when the budget is spent and none is outstanding.

use crate::pacer::Pacer;
use crate::script_mux::{Encode, Encoded, ScriptMux};
use crate::share::Share;
use crate::shared::Shared;
use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use webstand_results::plan::{Pick, Shape};
use webstand_results::script::{Calls, ThreadScript};
use webstand_results::LATE_SEND;

pub(crate) struct Requests {
    /// Requests this thread may still start (None: until the deadline).
    budget: Option<u64>,
    /// Requests started and not yet finished (retries do not count twice).
    outstanding: u64,
    /// When the latest request finished (or failed).
    last_done: Instant,
    /// Open loop: the intended send times.
    pacer: Option<Pacer>,
    /// Requests taken from the budget to send again, with their start times and (a script's, over
    /// HTTP/2 or HTTP/3) the request as it was built, next first.
    again: VecDeque<(usize, Instant, Option<Encoded>)>,
    /// How many requests the plan has, and how the next is picked among them.
    count: usize,
    pick: PickBy,
    rng: SmallRng,
    /// Open loop: sends that left later than their intended time (by more than [`LATE_SEND`]).
    late_sends: u64,
    /// The thread's script, which callbacks it defines, and its first error.
    script: Option<Box<dyn ThreadScript>>,
    calls: Calls,
    script_error: Option<anyhow::Error>,
    /// HTTP/2 and HTTP/3: the script's requests as streams.
    mux: ScriptMux,
}

/// A request a multiplexed connection opens as a stream (`Requests::next_stream`).
pub(crate) struct StreamSend<'a> {
    pub req: usize,
    pub start: Instant,
    /// Its header block in the connection's protocol.
    pub block: &'a [u8],
    pub body: Option<&'a [u8]>,
    /// The script's request, kept by its stream: its body sent as the windows allow, and all of
    /// it sent again should the server not take it ([`Requests::again`]).
    pub own: Option<Encoded>,
}

enum PickBy {
    First,
    Uniform,
    Weighted(WeightedIndex<u32>),
}

impl Requests {
    /// Thread `index`'s requests: its share of the budget and of the rate, its own random stream.
    pub(crate) fn new(
        sh: &Shared,
        index: usize,
        share: &Share,
        script: Option<Box<dyn ThreadScript>>,
    ) -> anyhow::Result<Requests> {
        let plan = sh.plan;
        let (seed, pick) = match &plan.pick {
            Pick::Single => (0, PickBy::First),
            Pick::Uniform { seed } => (*seed, PickBy::Uniform),
            Pick::Weighted { weights, seed } => (
                *seed,
                PickBy::Weighted(WeightedIndex::new(weights.iter().copied())?),
            ),
        };
        let pacer = match plan.shape {
            Shape::Open { jitter, .. } if share.rate > 0.0 => {
                Some(Pacer::new(sh.start, share.rate, jitter))
            }
            _ => None,
        };
        Ok(Requests {
            budget: share.requests,
            outstanding: 0,
            last_done: sh.start,
            pacer,
            again: VecDeque::new(),
            count: sh.reqs.len(),
            pick,
            rng: SmallRng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            late_sends: 0,
            calls: script.as_ref().map(|s| s.calls()).unwrap_or_default(),
            script,
            script_error: None,
            mux: ScriptMux::default(),
        })
    }

    /// The bytes of request `req` as this thread sends it: its script's fixed request, or the
    /// plan's.
    pub(crate) fn bytes<'s>(&'s self, sh: &'s Shared, req: usize) -> &'s [u8] {
        match &self.script {
            Some(s) => s.fixed_request(),
            None => &sh.reqs[req],
        }
    }

    /// Where a new connection goes: the script's `thread.addr` when `setup` moved it off the
    /// target's first address, else `reach`'s choice.
    pub(crate) fn addr(&self, sh: &Shared) -> std::net::SocketAddr {
        match self.script.as_ref().map(|s| s.addr()) {
            Some(a) if a != sh.plan.target.addrs[0] => a,
            _ => sh.reach.addr(),
        }
    }

    /// HTTP/2 and HTTP/3: [`Requests::next`] as a stream, its header block and body the plan's,
    /// or the script's (`script_mux.rs`, its block made by `encode`). None once the script stopped
    /// the thread or failed.
    pub(crate) fn next_stream<'a>(
        &'a mut self,
        sh: &'a Shared,
        now: Instant,
        encode: Encode,
    ) -> Option<StreamSend<'a>> {
        if self.script.is_some() && self.script_ended() {
            return None;
        }
        let (req, start, own) = self.take_next(now)?;
        let Some(script) = self.script.as_deref_mut() else {
            return Some(StreamSend {
                req,
                start,
                block: &sh.reqs[req],
                body: sh.plan.body.as_ref().map(|(b, _)| &b[..]),
                own: None,
            });
        };
        let moved = match own {
            Some(e) => {
                self.mux.resume(e);
                Ok(())
            }
            None => self
                .mux
                .advance(script, self.calls.request, sh.plan, encode),
        };
        if let Err(e) = moved {
            self.done(now);
            self.script_error.get_or_insert(e);
            return None;
        }
        let e = self.mux.current();
        Some(StreamSend {
            req,
            start,
            block: &e.block,
            body: e.body.as_deref(),
            own: Some(e.clone()),
        })
    }

    /// Whether each send's bytes come from the script's `request()` (see [`Requests::build`]).
    pub(crate) fn scripted(&self) -> bool {
        self.calls.request
    }

    /// Appends the next send's bytes from the script's `request()` to `out`; false once the
    /// script failed (the thread then stops).
    pub(crate) fn build(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(s) = self.script.as_mut() else {
            return false;
        };
        match s.request(out) {
            Ok(()) => true,
            Err(e) => {
                self.script_error.get_or_insert(e);
                false
            }
        }
    }

    /// The script's `delay()` before a slot's next send, when it defines one (zero otherwise).
    pub(crate) fn delay(&mut self) -> Duration {
        if !self.calls.delay {
            return Duration::ZERO;
        }
        let s = self.script.as_mut().expect("delay() is the script's");
        s.delay().unwrap_or_else(|e| {
            self.script_error.get_or_insert(e);
            Duration::ZERO
        })
    }

    /// Whether the script's `delay()` is called before each send.
    pub(crate) fn delays(&self) -> bool {
        self.calls.delay
    }

    /// The script, when it reads responses (`record.rs` hands each to it).
    pub(crate) fn response_reader(&mut self) -> Option<&mut (dyn ThreadScript + 'static)> {
        match self.calls.response {
            true => self.script.as_deref_mut(),
            false => None,
        }
    }

    /// The script's `response()` failed.
    pub(crate) fn script_failed(&mut self, e: anyhow::Error) {
        self.script_error.get_or_insert(e);
    }

    /// The script ended this thread's part: it failed, or it called `thread:stop()`.
    pub(crate) fn script_ended(&self) -> bool {
        self.script_error.is_some() || self.script.as_ref().is_some_and(|s| s.stopped())
    }

    /// The thread's script back after the run, or its first error.
    pub(crate) fn finish_script(self) -> anyhow::Result<Option<Box<dyn ThreadScript>>> {
        match self.script_error {
            Some(e) => Err(e),
            None => Ok(self.script),
        }
    }

    /// Whether sends follow the open loop's pacer (`--rate`) rather than completions.
    pub(crate) fn open_loop(&self) -> bool {
        self.pacer.is_some()
    }

    /// Takes up to `n` requests from the budget; returns how many were granted (each then
    /// outstanding until [`Requests::done`]).
    pub(crate) fn take(&mut self, n: u64) -> u64 {
        let n = match &mut self.budget {
            None => n,
            Some(left) => {
                let k = n.min(*left);
                *left -= k;
                k
            }
        };
        self.outstanding += n;
        n
    }

    /// Which of the plan's requests goes next.
    pub(crate) fn pick(&mut self) -> usize {
        match &self.pick {
            PickBy::First => 0,
            PickBy::Uniform => self.rng.gen_range(0..self.count),
            PickBy::Weighted(w) => w.sample(&mut self.rng),
        }
    }

    /// Whether a request waits to be sent at `now`: one to send again, or (closed loop) budget
    /// left, or (open loop) a send that is due.
    pub(crate) fn due(&self, now: Instant) -> bool {
        let budget = self.budget != Some(0);
        !self.again.is_empty() || budget && self.pacer.as_ref().is_none_or(|p| p.due(now))
    }

    /// The next request to send at `now` and its start time (for a latency): one to send again
    /// first; then, closed loop, a new one from the budget starting `now`; open loop, the send due
    /// at its intended time, if one is due. An open loop's send that leaves late is counted.
    pub(crate) fn next(&mut self, now: Instant) -> Option<(usize, Instant)> {
        self.take_next(now).map(|(req, start, _)| (req, start))
    }

    /// [`Requests::next`], with a request sent again as it was built when it is a script's.
    fn take_next(&mut self, now: Instant) -> Option<(usize, Instant, Option<Encoded>)> {
        let next = match self.again.pop_front() {
            Some(again) => again,
            None if self.pacer.is_none() => match self.take(1) {
                1 => (self.pick(), now, None),
                _ => return None,
            },
            None => {
                let due = self.pacer.as_ref().is_some_and(|p| p.due(now));
                if !due || self.budget == Some(0) {
                    return None;
                }
                self.take(1);
                let req = self.pick();
                let pacer = self.pacer.as_mut().expect("open loop");
                let start = pacer.next();
                pacer.advance(&mut self.rng);
                (req, start, None)
            }
        };
        if self.pacer.is_some() && now.saturating_duration_since(next.1) > LATE_SEND {
            self.late_sends += 1;
        }
        Some(next)
    }

    /// Open loop: how long until the next send is due; None once the budget is spent.
    pub(crate) fn pace_wait(&self, now: Instant) -> Option<Duration> {
        let pacer = self.pacer.as_ref()?;
        (self.budget != Some(0)).then(|| pacer.next().saturating_duration_since(now))
    }

    /// Request `req`, started at `start`, must be sent again on another connection: it goes next.
    /// A script's (`own`, over HTTP/2 or HTTP/3) goes out again as it was built, not as a new call
    /// of `request()`.
    pub(crate) fn again(&mut self, req: usize, start: Instant, own: Option<Encoded>) {
        self.again.push_front((req, start, own));
    }

    /// An outstanding request finished, well or not, at `at`.
    pub(crate) fn done(&mut self, at: Instant) {
        self.outstanding -= 1;
        self.last_done = at;
    }

    pub(crate) fn outstanding(&self) -> u64 {
        self.outstanding
    }

    pub(crate) fn last_done(&self) -> Instant {
        self.last_done
    }

    /// Every request of the budget is sent and finished.
    pub(crate) fn spent(&self) -> bool {
        self.budget == Some(0) && self.outstanding == 0
    }

    pub(crate) fn late_sends(&self) -> u64 {
        self.late_sends
    }
}
