//! One reading of the run in progress, what every output shows: the load threads' merged view
//! (`webstand_results::ThreadView`), the rates over the last interval, and the stage the run is at
//! (a sweep's level and rate). Taken by the watcher's one thread a few times a second.

use std::collections::VecDeque;
use std::time::{Duration, Instant};
use webstand_results::{Plan, Shape, ThreadView};

/// Latency bucket bounds (seconds) for the exported histograms: 1-2-5 steps from 50 µs to 60 s,
/// fixed so that a series keeps its buckets from one scrape to the next. Each bucket's count is
/// read off the run's HDR histogram (3 significant digits), not recorded twice.
pub const BUCKETS: [f64; 20] = [
    0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0,
    2.0, 5.0, 10.0, 20.0, 30.0, 60.0,
];

/// Per-second rates kept for the view's chart.
const HISTORY: usize = 120;

/// What the run is doing: the command, the level in progress (a sweep's label), its clients and
/// asked rate.
#[derive(Clone, Debug, Default)]
pub struct Stage {
    pub command: String,
    pub label: String,
    pub clients: u64,
    /// Open loop: the rate asked, requests/s.
    pub target_rate: Option<f64>,
    /// A sweep: this level's number (from 1) and how many there are.
    pub level: Option<(usize, usize)>,
    /// The run's bounds, for the view's progress line.
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
}

impl Stage {
    /// The stage of a run of `plan` called `label` (a sweep's "8 clients"), at `level` of a sweep.
    /// The views say the clients themselves: a label that only repeats them ("8 clients") is
    /// dropped.
    pub fn of(label: &str, plan: &Plan, level: Option<(usize, usize)>) -> Stage {
        let clients = plan.shape.clients() as u64;
        let label = match label == format!("{clients} clients") {
            true => "",
            false => label,
        };
        Stage {
            command: String::new(),
            label: label.to_string(),
            clients,
            target_rate: match plan.shape {
                Shape::Open { rate, .. } => Some(rate),
                Shape::Closed { .. } => None,
            },
            level,
            duration: plan.stop.duration,
            requests: plan.stop.requests,
        }
    }
}

/// One reading.
#[derive(Clone, Debug)]
pub struct Reading {
    pub stage: Stage,
    pub view: ThreadView,
    /// Since the run (or level) started.
    pub elapsed: Duration,
    /// Complete responses per second over the last interval.
    pub rate: f64,
    /// The load threads' working CPU over the last interval, as a share of their wall time (0–1).
    pub busy: f64,
    /// Recent per-interval rates, oldest first.
    pub history: Vec<u64>,
}

impl Reading {
    /// Latency at percentile `p` (0–100), in seconds.
    pub fn latency(&self, p: f64) -> f64 {
        self.view.latency.value_at_percentile(p) as f64 / 1e6
    }

    /// Count of latencies at or below each of [`BUCKETS`] (cumulative, as Prometheus and OTLP's
    /// explicit buckets are built from), then the total count.
    pub fn cumulative_buckets(&self) -> Vec<u64> {
        let h = &self.view.latency;
        let mut out: Vec<u64> = BUCKETS
            .iter()
            .map(|&le| {
                let us = (le * 1e6) as u64;
                h.count_between(0, h.highest_equivalent(us))
            })
            .collect();
        out.push(h.len());
        out
    }

    /// The latencies' sum in seconds, from the histogram (its mean times its count).
    pub fn latency_sum(&self) -> f64 {
        self.view.latency.mean() * self.view.latency.len() as f64 / 1e6
    }

    /// Every failed request.
    pub fn failed(&self) -> u64 {
        self.view.failed.total()
    }

    /// Failed requests by ab's classes, as both expositions label them.
    pub fn failure_classes(&self) -> [(&'static str, u64); 4] {
        let f = &self.view.failed;
        [
            ("connect", f.connect),
            ("receive", f.receive),
            ("length", f.length),
            ("exceptions", f.exceptions),
        ]
    }
}

/// Turns successive views into readings (the rates need the previous one).
pub struct Reader {
    started: Instant,
    last: Option<(Instant, u64, Duration)>,
    rate: f64,
    busy: f64,
    history: VecDeque<u64>,
}

impl Reader {
    pub fn new(started: Instant) -> Reader {
        Reader {
            started,
            last: None,
            rate: 0.0,
            busy: 0.0,
            history: VecDeque::new(),
        }
    }

    /// The last reading of a run: its rates are the whole run's means, as the report's.
    pub fn read_last(&mut self, stage: &Stage, view: ThreadView, now: Instant) -> Reading {
        let mut r = self.read(stage, view, now, Duration::MAX);
        let secs = r.elapsed.as_secs_f64().max(1e-9);
        r.rate = r.view.complete as f64 / secs;
        let threads = r.view.threads.max(1) as f64;
        r.busy = (r.view.busy.as_secs_f64() / (secs * threads)).clamp(0.0, 1.0);
        r
    }

    /// A reading of `view` at `now`; the rates are over the time since the last one of at least
    /// `every`, so they stay steady between redraws.
    pub fn read(
        &mut self,
        stage: &Stage,
        view: ThreadView,
        now: Instant,
        every: Duration,
    ) -> Reading {
        match self.last {
            None => self.last = Some((self.started, 0, Duration::ZERO)),
            Some((t, complete, busy)) => {
                let dt = now.saturating_duration_since(t);
                if dt >= every {
                    let secs = dt.as_secs_f64();
                    let done = view.complete.saturating_sub(complete);
                    self.rate = done as f64 / secs;
                    let threads = view.threads.max(1) as f64;
                    self.busy = (view.busy.saturating_sub(busy).as_secs_f64() / (secs * threads))
                        .clamp(0.0, 1.0);
                    self.history.push_back(self.rate.round() as u64);
                    if self.history.len() > HISTORY {
                        self.history.pop_front();
                    }
                    self.last = Some((now, view.complete, view.busy));
                }
            }
        }
        Reading {
            stage: stage.clone(),
            elapsed: now.saturating_duration_since(self.started),
            rate: self.rate,
            busy: self.busy,
            history: self.history.iter().copied().collect(),
            view,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_that_repeats_the_clients_is_dropped() {
        let target = webstand_results::Target {
            host: "127.0.0.1".into(),
            port: 8080,
            addrs: Vec::new(),
        };
        let mut plan = Plan::new(target, "/");
        plan.shape = Shape::Closed { clients: 8 };
        assert_eq!(Stage::of("8 clients", &plan, Some((2, 3))).label, "");
        assert_eq!(
            Stage::of("warm-up, 8 clients", &plan, None).label,
            "warm-up, 8 clients"
        );
        assert_eq!(Stage::of("nginx 2k", &plan, None).label, "nginx 2k");
    }

    #[test]
    fn buckets_are_cumulative_and_end_with_the_count() {
        let mut view = ThreadView::empty();
        for us in [40, 150, 150, 3_000, 70_000_000] {
            view.latency.record(us).unwrap();
        }
        let r = Reader::new(Instant::now()).read(
            &Stage::default(),
            view,
            Instant::now(),
            Duration::ZERO,
        );
        let b = r.cumulative_buckets();
        assert_eq!(b.len(), BUCKETS.len() + 1);
        assert_eq!(b[0], 1, "40 µs is within 50 µs");
        assert_eq!(b[2], 3, "150 µs twice within 200 µs");
        assert_eq!(b[6], 4, "3 ms within 5 ms");
        assert_eq!(b[BUCKETS.len() - 1], 4, "70 s is past the last bound");
        assert_eq!(b[BUCKETS.len()], 5);
        assert!(b.windows(2).all(|w| w[0] <= w[1]));
    }
}
