//! wrk's lines for a wrk user (`--latency`): the "Thread Stats" table (Latency and Req/Sec rows:
//! average, standard deviation, maximum and the share of samples within one deviation of the
//! average, each in wrk's units; Req/Sec from each load thread's own rate samples, as wrk takes
//! them), and a percentile table fine enough for sub-millisecond latencies, which ab's
//! whole-millisecond table prints as a column of zeros.

use std::fmt::Write;
use std::time::Duration;
use webstand_results::RunResult;

/// Completed requests per interval of a run, as the diagnosis's watch sampled them: what stands in
/// for wrk's Req/Sec samples in a run saved before the history kept each thread's own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rates {
    pub interval: Duration,
    pub counts: Vec<u64>,
}

/// Average, standard deviation, maximum, and % of the samples within one deviation of the average.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub mean: f64,
    pub stdev: f64,
    pub max: f64,
    pub within: f64,
}

impl Stats {
    /// Of a histogram's recorded values; None when it is empty.
    fn of_histogram(h: &hdrhistogram::Histogram<u64>) -> Option<Stats> {
        let samples: Vec<(f64, u64)> = h
            .iter_recorded()
            .map(|v| {
                (
                    h.median_equivalent(v.value_iterated_to()) as f64,
                    v.count_at_value(),
                )
            })
            .collect();
        Stats::of(&samples)
    }

    /// Of `(value, how many)` pairs; None without a sample.
    fn of(samples: &[(f64, u64)]) -> Option<Stats> {
        let samples = samples.iter().copied();
        let n: u64 = samples.clone().map(|(_, k)| k).sum();
        if n == 0 {
            return None;
        }
        let mean = samples.clone().map(|(v, k)| v * k as f64).sum::<f64>() / n as f64;
        let var = samples
            .clone()
            .map(|(v, k)| (v - mean).powi(2) * k as f64)
            .sum::<f64>()
            / (n.max(2) - 1) as f64;
        let stdev = var.sqrt();
        let max = samples.clone().map(|(v, _)| v).fold(f64::MIN, f64::max);
        let inside: u64 = samples
            .filter(|(v, _)| (v - mean).abs() <= stdev)
            .map(|(_, k)| k)
            .sum();
        Some(Stats {
            mean,
            stdev,
            max,
            within: inside as f64 * 100.0 / n as f64,
        })
    }
}

/// The latency of every complete request, in µs, from the run's histogram.
pub fn latency_stats(r: &RunResult) -> Option<Stats> {
    Stats::of_histogram(&r.histograms.total)
}

/// Requests per second per load thread, as wrk samples them: each thread's own rate every 100 ms
/// (`RunResult::histograms.requests`); None when no thread took a sample.
pub fn thread_rate_stats(r: &RunResult) -> Option<Stats> {
    Stats::of_histogram(&r.histograms.requests)
}

/// Requests per second per load thread in each full interval, estimated from the run's own rate
/// (`rates`) shared out among `threads`: for a saved run without the threads' own samples. The last
/// interval, cut short by the run's end, is left out when there are others.
pub fn rate_stats(rates: &Rates, threads: usize) -> Option<Stats> {
    let secs = rates.interval.as_secs_f64();
    if secs <= 0.0 || threads == 0 {
        return None;
    }
    let full = match rates.counts.len() {
        0 | 1 => rates.counts.len(),
        n => n - 1,
    };
    let per = |c: &u64| *c as f64 / secs / threads as f64;
    let samples: Vec<(f64, u64)> = rates.counts[..full].iter().map(|c| (per(c), 1)).collect();
    Stats::of(&samples)
}

/// A time in µs as wrk prints it: "63.00us", "1.26ms", "2.10s".
pub fn time(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.2}us")
    } else if us < 1e6 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// A count as wrk prints it: "512.00", "23.06k", "1.20M".
pub fn metric(v: f64) -> String {
    if v < 1e3 {
        format!("{v:.2}")
    } else if v < 1e6 {
        format!("{:.2}k", v / 1e3)
    } else {
        format!("{:.2}M", v / 1e6)
    }
}

/// wrk's "Thread Stats" table: a Latency row from the histogram, and a Req/Sec row from the load
/// threads' own rate samples, or (a saved run without them) from the run's `rates` shared out among
/// its threads, which the table then says. Empty without a complete request.
pub fn thread_stats(r: &RunResult, rates: Option<&Rates>) -> String {
    let Some(lat) = latency_stats(r) else {
        return String::new();
    };
    let mut o = String::from("\n  Thread Stats   Avg      Stdev     Max   +/- Stdev\n");
    let row = |o: &mut String, name: &str, s: Stats, f: fn(f64) -> String| {
        let _ = writeln!(
            o,
            "    {name:<8}{:>9}{:>10}{:>9}{:>9.2}%",
            f(s.mean),
            f(s.stdev),
            f(s.max),
            s.within
        );
    };
    row(&mut o, "Latency", lat, time);
    let threads = r.thread_cpu.len().max(1);
    if let Some(req) = thread_rate_stats(r) {
        row(&mut o, "Req/Sec", req, metric);
    } else if let Some(req) = rates.and_then(|t| rate_stats(t, threads)) {
        row(&mut o, "Req/Sec", req, metric);
        let _ = writeln!(
            o,
            "    (Req/Sec estimated: the run's rate per 100 ms ÷ {threads} load thread{}; saved without each thread's own samples)",
            if threads == 1 { "" } else { "s" }
        );
    }
    o
}

/// Percentiles fine enough for sub-millisecond latencies (ms with three decimals), ab's percentiles
/// beside ab's whole-millisecond table. Printed when that table rounds its median below 10 ms,
/// where whole milliseconds lose the figure (a fast server's are a column of zeros).
pub fn fine_percentiles(r: &RunResult) -> String {
    let h = &r.histograms.total;
    if h.is_empty() || h.value_at_quantile(0.5) >= 9_500 {
        return String::new();
    }
    let mut o = String::from("\nThe same percentiles, finer (ms)\n");
    for p in [50u64, 66, 75, 80, 90, 95, 98, 99, 100] {
        let us = if p == 100 {
            h.max()
        } else {
            h.value_at_quantile(p as f64 / 100.0)
        };
        let _ = writeln!(o, " {:>3}%  {:9.3}", p, us as f64 / 1000.0);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_follow_wrks() {
        assert_eq!(time(63.0), "63.00us");
        assert_eq!(time(1260.0), "1.26ms");
        assert_eq!(time(2_100_000.0), "2.10s");
        assert_eq!(metric(512.0), "512.00");
        assert_eq!(metric(23_060.0), "23.06k");
        assert_eq!(metric(1_200_000.0), "1.20M");
    }

    #[test]
    fn stats_and_rates_follow_their_definitions() {
        let s = Stats::of(&[(1.0, 1), (2.0, 1), (3.0, 1), (10.0, 1)]).unwrap();
        assert_eq!((s.mean, s.max), (4.0, 10.0));
        assert!((s.stdev - 4.0825).abs() < 1e-3, "{s:?}");
        // 1, 2 and 3 lie within 4 ± 4.08; 10 does not.
        assert_eq!(s.within, 75.0);
        let rates = Rates {
            interval: Duration::from_millis(100),
            counts: vec![200, 400, 7],
        };
        // Two load threads: 1000 and 2000 req/s each; the cut-short last interval left out.
        let r = rate_stats(&rates, 2).unwrap();
        assert_eq!((r.mean, r.max), (1500.0, 2000.0));
        assert_eq!(Stats::of(&[]), None);
    }

    #[test]
    fn req_sec_comes_from_each_threads_samples_and_an_estimate_says_so() {
        let mut r = RunResult {
            thread_cpu: vec![Default::default(); 2],
            ..Default::default()
        };
        r.histograms.total.record(100).unwrap();
        let rates = Rates {
            interval: Duration::from_millis(100),
            counts: vec![200, 400, 7],
        };
        // No thread's own samples (a saved run from before they were kept): the estimate, said so.
        let estimated = thread_stats(&r, Some(&rates));
        assert!(estimated.contains("Req/Sec     1.50k"), "{estimated}");
        assert!(estimated.contains("estimated"), "{estimated}");
        // Each thread's samples: one thread at 1000/s twice, the other at 3000/s twice.
        r.histograms.requests.record_n(1000, 2).unwrap();
        r.histograms.requests.record_n(3000, 2).unwrap();
        let sampled = thread_stats(&r, Some(&rates));
        assert!(sampled.contains("Req/Sec     2.00k"), "{sampled}");
        assert!(sampled.contains("   3.00k"), "{sampled}");
        assert!(!sampled.contains("estimated"), "{sampled}");
    }
}
