//! The generator's side of a run in words: how many load threads, where they ran, how they waited
//! for the server, and their time split into work and waiting (docs/ARCHITECTURE.md defines the
//! split). The bench report prints these lines after ab's, so that a figure that differs from ab's,
//! wrk's or h2load's says why: more threads than ab's one, a spin where wrk blocks.

use std::fmt::Write;
use std::time::Duration;
use webstand_results::RunResult;

/// Whether the load threads had fewer CPUs than the machine (pinned, e.g. by taskset); None when
/// the result does not say.
pub fn pinned(r: &RunResult) -> Option<bool> {
    (!r.load_cpus.is_empty() && r.online_cpus > 0).then_some(r.load_cpus.len() < r.online_cpus)
}

/// `d` per complete request of `r`, in µs; None without a complete request.
pub fn per_request_us(r: &RunResult, d: Duration) -> Option<f64> {
    (r.complete > 0).then(|| d.as_secs_f64() * 1e6 / r.complete as f64)
}

/// "CPU 1", "CPUs 0-3", "CPUs 0,2".
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &c in cpus {
        match ranges.last_mut() {
            Some((_, hi)) if *hi + 1 == c => *hi = c,
            _ => ranges.push((c, c)),
        }
    }
    let text: Vec<String> = ranges
        .iter()
        .map(|&(lo, hi)| match hi - lo {
            0 => lo.to_string(),
            1 => format!("{lo},{hi}"),
            _ => format!("{lo}-{hi}"),
        })
        .collect();
    let noun = if cpus.len() == 1 { "CPU" } else { "CPUs" };
    format!("{noun} {}", text.join(","))
}

/// How the load threads waited, in words: "spin ≤20 µs, then block", with the halfway waits the
/// run took.
pub fn wait_policy(r: &RunResult) -> String {
    let window = r.spin_window.as_micros();
    let mut policy = if window > 0 {
        format!("spin ≤{window} µs, then block")
    } else if pinned(r) == Some(false) {
        "block, no spin (the load threads have no CPU of their own)".to_string()
    } else {
        "block, no spin".to_string()
    };
    let (naps, blocks) = r
        .thread_waits
        .iter()
        .fold((0, 0), |(n, b), w| (n + w.naps, b + w.blocks));
    let deep = match (naps, blocks) {
        (0, 0) => None,
        (n, 0) => Some(format!("nap {n} times")),
        (0, b) => Some(format!("block on one socket {b} times")),
        (n, b) => Some(format!("nap {n} times, block on one socket {b} times")),
    };
    if let Some(deep) = deep {
        let _ = write!(policy, "; with a deep queue at the server, {deep}");
    }
    policy
}

/// The report's lines: "Load threads:" (how many, where, how they waited) and "Generator:" (work
/// and spin per request, and the shares of the threads' time spent working, spinning, napping
/// and blocked). Empty for a result that carries no load threads.
pub fn lines(r: &RunResult) -> String {
    let threads = r.thread_cpu.len();
    if threads == 0 {
        return String::new();
    }
    let place = match pinned(r) {
        Some(true) => format!(", pinned to {}", cpu_list(&r.load_cpus)),
        Some(false) => format!(", not pinned ({} online)", r.online_cpus),
        None => String::new(),
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nLoad threads:           {threads}{place}; waiting: {}",
        wait_policy(r)
    );
    let g = r.generator_time();
    let whole = r.elapsed.as_secs_f64() * threads as f64;
    let pct = |d: Duration| {
        if whole > 0.0 {
            d.as_secs_f64() * 100.0 / whole
        } else {
            0.0
        }
    };
    let us = |d: Duration| per_request_us(r, d).map_or("-".into(), |v| format!("{v:.1}"));
    let _ = writeln!(
        o,
        "Generator time:         work {:.0} %, spin {:.0} %, nap {:.0} %, blocked {:.0} % (of the load threads' {:.3} s)",
        pct(g.work),
        pct(g.spin),
        pct(g.nap),
        pct(g.block),
        whole
    );
    let _ = writeln!(
        o,
        "Generator CPU:          {} [µs] per request: work {}, spin {}",
        us(g.cpu),
        us(g.work),
        us(g.spin)
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_results::{CpuTime, HalfwayWaits};

    fn result() -> RunResult {
        RunResult {
            elapsed: Duration::from_secs(2),
            complete: 100_000,
            thread_cpu: vec![CpuTime {
                user: Duration::from_millis(600),
                sys: Duration::from_millis(1000),
            }],
            thread_spin: vec![Duration::from_millis(400)],
            thread_waits: vec![HalfwayWaits {
                blocks: 0,
                naps: 0,
                napped: Duration::ZERO,
                blocked: Duration::from_millis(300),
            }],
            spin_window: Duration::from_micros(20),
            load_cpus: vec![1],
            online_cpus: 2,
            ..Default::default()
        }
    }

    #[test]
    fn the_lines_say_where_and_how_the_threads_waited_and_split_their_time() {
        let out = lines(&result());
        for line in [
            "Load threads:           1, pinned to CPU 1; waiting: spin ≤20 µs, then block\n",
            "Generator time:         work 60 %, spin 20 %, nap 0 %, blocked 15 % (of the load threads' 2.000 s)\n",
            "Generator CPU:          16.0 [µs] per request: work 12.0, spin 4.0\n",
        ] {
            assert!(out.contains(line), "missing {line:?} in\n{out}");
        }
    }

    #[test]
    fn an_unpinned_run_without_spin_and_with_naps_says_so() {
        let mut r = result();
        r.spin_window = Duration::ZERO;
        r.load_cpus = vec![0, 1];
        r.thread_waits[0].naps = 12;
        assert_eq!(
            wait_policy(&r),
            "block, no spin (the load threads have no CPU of their own); with a deep queue at the server, nap 12 times"
        );
        assert!(lines(&r)
            .contains("Load threads:           1, not pinned (2 online); waiting: block, no spin"));
        assert_eq!(cpu_list(&[0, 1, 2, 5]), "CPUs 0-2,5");
        assert_eq!(cpu_list(&[0, 1]), "CPUs 0,1");
        assert!(lines(&RunResult::default()).is_empty());
    }
}
