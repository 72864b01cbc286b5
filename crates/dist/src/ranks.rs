//! The protocol between the ranks, over MPI (rsmpi on OpenMPI).
//!
//! Rank 0 (the [`Leader`]) runs the command; every other rank [`serve`]s: it waits for a command
//! (a plan share, or quit), and for each share: a barrier with everyone, a clock sync with rank 0 if
//! it is on another host, the start instant broadcast by rank 0, a sleep to it, the engine on its
//! share, and its [`RankReport`] sent back. While the engines run, only point-to-point messages
//! polled with a short sleep pass (no collective): a rank that dies mid-run can then never hang the
//! others, and no rank spins a core that the load needs.
//!
//! Stopping: rank 0 tells every rank to stop when Ctrl-C or SIGTERM reaches it (mpirun turns a
//! Ctrl-C into SIGTERM to every rank, and SIGKILL about a second later) or when a rank reports that it
//! could not reach the target. After a stop rank 0 waits at most [`GRACE`] for the reports, then
//! merges what came and names the ranks that sent nothing.

use crate::merge::{merge, Merged, RankReport, WireResult};
use crate::split::split;
use crate::start::{now_unix, offset, sleep_until, Sample};
use anyhow::Context;
use mpi::environment::Universe;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::{Process, SimpleCommunicator};
use mpi::traits::*;
use mpi::Threading;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use webstand_results::script::{ScriptRef, ScriptSource};
use webstand_results::{Live, Plan};

const TAG_HELLO: i32 = 1;
const TAG_COMMAND: i32 = 2;
const TAG_SYNC: i32 = 3;
const TAG_STOP: i32 = 4;
const TAG_REPORT: i32 = 5;
const TAG_PROGRESS: i32 = 6;
/// From the start instant's broadcast to the start: time for every rank to receive it and wake.
const START_MARGIN: f64 = 0.005;
/// How often a rank looks for messages while it waits for a command or for reports.
const POLL: Duration = Duration::from_micros(500);
/// How often a rank looks for messages (a stop, a failed rank's report) while its engine runs: a
/// stop needs no sub-millisecond answer, and each wake-up is CPU the load does not get. The end of
/// the engine's run is seen at once (a channel), not at the next poll.
const RUN_POLL: Duration = Duration::from_millis(10);
/// After a stop, how long rank 0 waits for the ranks' reports: under mpirun's ~1 s from its SIGTERM
/// to its SIGKILL, so the merged report is printed before the kill.
const GRACE: Duration = Duration::from_millis(600);
/// How often a rank sends rank 0 its live counters, for the progress display (its refresh rate).
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Ping-pongs per clock sync with a rank on another host.
const SYNC_ROUNDS: usize = 8;

static TERMINATED: AtomicBool = AtomicBool::new(false);

/// Turns `signals` into a flag the polling loops read, by signal-hook (the program's one signal
/// mechanism: on rank 0 the lab's own stop takes the same signals beside it).
fn catch(signals: &[libc::c_int]) {
    for &sig in signals {
        // Failing to register only loses the graceful stop: the signal keeps its default action.
        let _ = signal_hook::flag::register(sig, &TERMINATED);
    }
}

/// True when this process was started by OpenMPI's mpirun.
pub fn launched() -> bool {
    std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some()
}

#[derive(Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)] // one per run, serialised at once
enum Command {
    Run {
        id: u64,
        plan: Option<Plan>,
        sync_clock: bool,
        /// The plan's wrk script, which the rank loads into Lua states of its own.
        #[serde(default)]
        script: Option<ScriptSource>,
    },
    Quit,
}

/// What this process is in the MPI job.
pub enum Role {
    Leader(Leader),
    /// A rank other than 0, done serving; `clean` is false when it stopped on a signal.
    Worker {
        clean: bool,
    },
}

/// How a rank loads a plan's script from its text (the binary's: this crate knows no Lua).
pub type LoadScript = fn(&ScriptSource, &Plan) -> anyhow::Result<ScriptRef>;

/// Starts MPI. On rank 0 returns the leader; on the others serves plans until rank 0 quits,
/// loading their scripts with `load`.
pub fn init(load: LoadScript) -> anyhow::Result<Role> {
    let (universe, _) = mpi::initialize_with_threading(Threading::Funneled)
        .context("MPI could not start (is this mpirun's job?)")?;
    let world = universe.world();
    let host = mpi::environment::processor_name().unwrap_or_default();
    let size = world.size() as usize;
    if world.rank() != 0 {
        catch(&[libc::SIGTERM, libc::SIGINT]);
        world
            .process_at_rank(0)
            .send_with_tag(host.as_bytes(), TAG_HELLO);
        let clean = serve(&world, load);
        if clean {
            drop(universe);
        } else {
            // A rank stopped by a signal: its peers may be gone, and MPI_Finalize would wait for them.
            std::mem::forget(universe);
        }
        return Ok(Role::Worker { clean });
    }
    catch(&[libc::SIGTERM]);
    let mut remote = vec![false; size];
    for (r, far) in remote.iter_mut().enumerate().skip(1) {
        let (name, _) = world
            .process_at_rank(r as i32)
            .receive_vec_with_tag::<u8>(TAG_HELLO);
        *far = name != host.as_bytes();
    }
    Ok(Role::Leader(Leader {
        universe: Some(universe),
        world,
        remote,
        next_id: 0,
        broken: false,
    }))
}

/// Waits for a message with `tag` from `from`, polling (a blocking receive would spin a core).
///
/// Even after a signal a worker waits for rank 0's word rather than exit: mpirun, once it is ending
/// the job, kills every rank as soon as one exits, and rank 0 still needs a moment to print.
fn wait_for(from: &Process, tag: i32) -> Vec<u8> {
    loop {
        if let Some(probed) = from.immediate_matched_probe_with_tag(tag) {
            return probed.matched_receive_vec::<u8>().0;
        }
        std::thread::sleep(POLL);
    }
}

/// A worker's life: run each share rank 0 sends until it says quit. False when a signal came.
fn serve(world: &SimpleCommunicator, load: LoadScript) -> bool {
    let root = world.process_at_rank(0);
    loop {
        let bytes = wait_for(&root, TAG_COMMAND);
        match serde_json::from_slice::<Command>(&bytes) {
            Ok(Command::Run {
                id,
                plan,
                sync_clock,
                script,
            }) => {
                // Before the barrier: the script's top level runs now, its setup() in the engine's.
                let plan = with_script(plan, script.as_ref(), load);
                world.barrier();
                let offset = if sync_clock { sync_with(&root) } else { 0.0 };
                let mut t0 = 0.0f64;
                root.broadcast_into(&mut t0);
                let live = Arc::new(Live::default());
                let mut last_progress = Instant::now();
                let report = run_share(world.rank() as usize, plan, t0, offset, &live, || {
                    stop_requested(&root, id, &live);
                    if last_progress.elapsed() >= PROGRESS_EVERY {
                        last_progress = Instant::now();
                        let counts = [&live.complete, &live.failed, &live.bytes, &live.non_2xx]
                            .map(|c| c.load(Ordering::Relaxed));
                        let msg = [id, counts[0], counts[1], counts[2], counts[3]];
                        root.send_with_tag(&msg[..], TAG_PROGRESS);
                    }
                });
                let bytes = serde_json::to_vec(&report).expect("a report serialises");
                root.send_with_tag(&bytes[..], TAG_REPORT);
            }
            Ok(Command::Quit) | Err(_) => return !TERMINATED.load(Ordering::SeqCst),
        }
    }
}

/// The rank's share with its own copy of the script, or why it could not be loaded.
fn with_script(
    plan: Option<Plan>,
    script: Option<&ScriptSource>,
    load: LoadScript,
) -> Result<Option<Plan>, String> {
    match (plan, script) {
        (Some(mut plan), Some(source)) => {
            plan.script = Some(load(source, &plan).map_err(|e| format!("{e:#}"))?);
            Ok(Some(plan))
        }
        (plan, _) => Ok(plan),
    }
}

/// A worker's check while its engine runs: a stop for this run from rank 0, or a signal.
fn stop_requested(root: &Process, id: u64, live: &Live) {
    while let Some(probed) = root.immediate_matched_probe_with_tag(TAG_STOP) {
        let (got, _) = probed.matched_receive_vec::<u64>();
        // A stop for an earlier run (sent after this rank had finished it) is stale.
        if got.first() == Some(&id) {
            live.stop.store(true, Ordering::SeqCst);
        }
    }
    if TERMINATED.load(Ordering::SeqCst) {
        live.stop.store(true, Ordering::SeqCst);
    }
}

/// This rank's clock offset from rank 0, from ping-pongs it leads.
fn sync_with(root: &Process) -> f64 {
    let samples: Vec<Sample> = (0..SYNC_ROUNDS)
        .map(|_| {
            let sent = now_unix();
            root.send_with_tag(&sent, TAG_SYNC);
            let (peer, _) = root.receive_with_tag::<f64>(TAG_SYNC);
            Sample {
                sent,
                peer,
                received: now_unix(),
            }
        })
        .collect();
    offset(&samples).unwrap_or(0.0)
}

/// Runs one rank's share from the start instant `t0` (rank 0's clock), calling `tick` at least
/// every [`RUN_POLL`] while the engine runs, and returns the rank's report.
///
/// The engine sets itself up (threads spawned and parked) before it sleeps to the instant, so the
/// rank's start skew is the wake-up alone. This thread waits on a channel rather than a timer for
/// the engine's end, so the rank reports the moment its share is done however slowly it polls.
fn run_share(
    rank: usize,
    plan: Result<Option<Plan>, String>,
    t0: f64,
    clock_offset: f64,
    live: &Arc<Live>,
    mut tick: impl FnMut(),
) -> RankReport {
    let mut report = RankReport {
        rank,
        clock_offset,
        ..Default::default()
    };
    let plan = match plan {
        Ok(Some(plan)) => plan,
        Ok(None) => return report,
        Err(e) => {
            report.error = Some(e);
            return report;
        }
    };
    report.clients = plan.shape.clients();
    let cpu0 = process_cpu();
    let out = std::thread::scope(|s| {
        let (done, ended) = mpsc::channel::<()>();
        let engine = s.spawn(|| {
            let start_at = || sleep_until(t0 + clock_offset);
            let out = webstand_engine::run_at(&plan, live.clone(), start_at);
            drop(done);
            out
        });
        loop {
            tick();
            if ended.recv_timeout(RUN_POLL) != Err(RecvTimeoutError::Timeout) {
                break;
            }
        }
        engine
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the engine panicked")))
    });
    report.process_cpu_ns = process_cpu().saturating_sub(cpu0);
    match out {
        Ok(r) => {
            report.start_skew = r.started_unix - clock_offset - t0;
            report.result = Some(WireResult::from(&r));
        }
        Err(e) => report.error = Some(format!("{e:#}")),
    }
    report
}

/// This process's CPU time so far (every thread, user and system), in nanoseconds.
fn process_cpu() -> u64 {
    // SAFETY: getrusage writes the zeroed struct it is given and nothing else.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

/// Rank 0's side of the job.
pub struct Leader {
    universe: Option<Universe>,
    world: SimpleCommunicator,
    /// Per rank: on another host than rank 0 (its clock needs syncing).
    remote: Vec<bool>,
    next_id: u64,
    /// A run lost ranks or was stopped by a signal: the job is ending, MPI cannot finalize cleanly.
    broken: bool,
}

/// Why rank 0 stopped a run early.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StopReason {
    /// Ctrl-C or SIGTERM.
    User,
    /// A rank could not run or could not reach the target.
    RankFailed,
}

impl Leader {
    pub fn ranks(&self) -> usize {
        self.remote.len()
    }

    /// Runs `plan` over every rank and returns the merged result. Errors (before any load) when the
    /// plan cannot be split; a rank's failure is in the result, as a single process's would be.
    /// `on_start` is called once the start instant is agreed, just before the load.
    pub fn run(
        &mut self,
        plan: &Plan,
        live: &Arc<Live>,
        on_start: impl FnOnce(),
    ) -> anyhow::Result<Merged> {
        let called = now_unix();
        let mut shares = split(plan, self.ranks())?;
        let script = plan.script.as_ref().map(|s| s.0.source());
        let id = self.next_id;
        self.next_id += 1;
        for (r, share) in shares.iter_mut().enumerate().skip(1) {
            let cmd = Command::Run {
                id,
                plan: share.take(),
                sync_clock: self.remote[r],
                script: script.clone(),
            };
            let bytes = serde_json::to_vec(&cmd)?;
            self.world
                .process_at_rank(r as i32)
                .send_with_tag(&bytes[..], TAG_COMMAND);
        }
        self.world.barrier();
        for r in (1..self.ranks()).filter(|&r| self.remote[r]) {
            let p = self.world.process_at_rank(r as i32);
            for _ in 0..SYNC_ROUNDS {
                let _: (f64, _) = p.receive_with_tag(TAG_SYNC);
                p.send_with_tag(&now_unix(), TAG_SYNC);
            }
        }
        let mut t0 = now_unix() + START_MARGIN;
        self.world.process_at_rank(0).broadcast_into(&mut t0);
        on_start();
        let mut c = Collector::new(self, id, live);
        let own = run_share(0, Ok(shares[0].take()), t0, 0.0, live, || c.tick());
        c.take(own);
        c.finish();
        let (reports, reason) = (c.reports, c.reason);
        let mut merged = merge(self.ranks(), &reports)?;
        if reason == Some(StopReason::RankFailed) {
            // The other ranks were stopped on purpose: the run ended on the failure, not a Ctrl-C.
            merged.result.interrupted = !merged.missing.is_empty();
        }
        self.broken |= !merged.missing.is_empty() || TERMINATED.load(Ordering::SeqCst);
        let last_end = merged.result.started_unix + merged.result.elapsed.as_secs_f64();
        merged.protocol_ms = ((t0 - called) + (now_unix() - last_end).max(0.0)) * 1e3;
        Ok(merged)
    }

    /// Ends the job: tells every rank to quit and finalizes MPI (skipped after a broken run, when
    /// mpirun is ending the job anyway and a finalize would wait for dead ranks).
    pub fn finish(mut self) {
        if self.broken {
            std::mem::forget(self.universe.take());
            return;
        }
        let quit = serde_json::to_vec(&Command::Quit).expect("a command serialises");
        for r in 1..self.ranks() {
            self.world
                .process_at_rank(r as i32)
                .send_with_tag(&quit[..], TAG_COMMAND);
        }
        drop(self.universe.take());
    }
}

/// Rank 0 gathering reports while its own share runs, and stopping the others when it must.
struct Collector<'a> {
    world: &'a SimpleCommunicator,
    ranks: usize,
    id: u64,
    live: &'a Arc<Live>,
    reports: Vec<RankReport>,
    reason: Option<StopReason>,
    stopped_at: Option<Instant>,
    /// Per rank, the live counters (complete, failed, bytes, non-2xx) it last sent: rank 0 adds the
    /// others' growth into its own `Live`, so the progress display and the diagnosis count every rank.
    progress: Vec<[u64; 4]>,
}

impl<'a> Collector<'a> {
    fn new(leader: &'a Leader, id: u64, live: &'a Arc<Live>) -> Collector<'a> {
        Collector {
            world: &leader.world,
            ranks: leader.ranks(),
            id,
            live,
            reports: Vec::new(),
            reason: None,
            stopped_at: None,
            progress: vec![[0; 4]; leader.ranks()],
        }
    }

    /// Takes the ranks' progress messages, adding what each counted since its last one into `live`
    /// (a message from an earlier run of a sweep is stale and dropped).
    fn take_progress(&mut self) {
        let any = self.world.any_process();
        while let Some(probed) = any.immediate_matched_probe_with_tag(TAG_PROGRESS) {
            let (msg, status) = probed.matched_receive_vec::<u64>();
            let rank = status.source_rank() as usize;
            let (Some(seen), &[id, complete, failed, bytes, non_2xx]) =
                (self.progress.get_mut(rank), &msg[..])
            else {
                continue;
            };
            if id != self.id {
                continue;
            }
            let now = [complete, failed, bytes, non_2xx];
            let counters = [
                &self.live.complete,
                &self.live.failed,
                &self.live.bytes,
                &self.live.non_2xx,
            ];
            for ((counter, new), old) in counters.into_iter().zip(now).zip(*seen) {
                counter.fetch_add(new.saturating_sub(old), Ordering::Relaxed);
            }
            *seen = now;
        }
    }

    fn stop(&mut self, reason: StopReason) {
        if self.reason.is_some() {
            return;
        }
        self.reason = Some(reason);
        self.stopped_at = Some(Instant::now());
        self.live.stop.store(true, Ordering::SeqCst);
        for r in 1..self.ranks {
            let p = self.world.process_at_rank(r as i32);
            if !self.reports.iter().any(|rep| rep.rank == r) {
                p.send_with_tag(&self.id, TAG_STOP);
            }
        }
    }

    fn take(&mut self, report: RankReport) {
        if report.failed() {
            self.stop(StopReason::RankFailed);
        }
        self.reports.push(report);
    }

    fn tick(&mut self) {
        if self.live.stop.load(Ordering::SeqCst) || TERMINATED.load(Ordering::SeqCst) {
            self.stop(StopReason::User);
        }
        self.take_progress();
        let any = self.world.any_process();
        while let Some(probed) = any.immediate_matched_probe_with_tag(TAG_REPORT) {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            let report = serde_json::from_slice(&bytes).unwrap_or_else(|e| RankReport {
                rank: status.source_rank() as usize,
                error: Some(format!("unreadable report: {e}")),
                ..Default::default()
            });
            self.take(report);
        }
    }

    /// Waits for every rank's report, or, after a stop, until [`GRACE`] has passed.
    fn finish(&mut self) {
        while self.reports.len() < self.ranks {
            self.tick();
            if self.stopped_at.is_some_and(|t| t.elapsed() > GRACE) {
                return;
            }
            std::thread::sleep(POLL);
        }
        self.take_progress();
    }
}
