//! `--spin`, as a plan carries it: the rule a closed-loop load thread's wait follows. The wait
//! itself is the load thread's (`wait.rs`, over `spin.rs`, `halfway.rs` and `nap.rs`).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `--spin`: the rule a closed-loop thread's wait follows (HTTP/1, HTTPS and `--h2`). `Auto` is
/// `LIMIT` (20 µs) on a CPU of the thread's own and no spin otherwise, and never a spin for
/// `--h2` (its new requests leave in batches; there the spin bought 2–10 % more requests/s for
/// 35–70 % more of the generator's CPU, docs/BENCHMARKS.md, "How the generator waits"); `Off` never spins
/// (every wait blocks in the poller, as wrk's does); `Window` spins up to that long whatever the
/// pinning (the user says the CPU is free). An open loop (`--rate`) never spins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SpinRule {
    #[default]
    Auto,
    Off,
    Window(Duration),
}

/// The longest window `--spin MICROS` takes: a spin of a millisecond already outlasts any fast
/// server's answer on loopback; beyond that it only burns the CPU.
const MAX_WINDOW_US: u64 = 1000;

impl std::str::FromStr for SpinRule {
    type Err = String;

    fn from_str(s: &str) -> Result<SpinRule, String> {
        let bad = || {
            format!(
                "expected auto, off or a window in microseconds (1 to {MAX_WINDOW_US}), got '{s}'"
            )
        };
        match s {
            "auto" => Ok(SpinRule::Auto),
            "off" | "0" => Ok(SpinRule::Off),
            _ => match s.parse::<u64>() {
                Ok(us @ 1..=MAX_WINDOW_US) => Ok(SpinRule::Window(Duration::from_micros(us))),
                _ => Err(bad()),
            },
        }
    }
}

impl std::fmt::Display for SpinRule {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            SpinRule::Auto => f.write_str("auto"),
            SpinRule::Off => f.write_str("off"),
            SpinRule::Window(d) => write!(f, "{}", d.as_micros()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_spells_and_reads_back() {
        for (text, rule) in [
            ("auto", SpinRule::Auto),
            ("off", SpinRule::Off),
            ("25", SpinRule::Window(Duration::from_micros(25))),
        ] {
            assert_eq!(text.parse::<SpinRule>(), Ok(rule));
            assert_eq!(rule.to_string(), text);
        }
        assert_eq!("0".parse::<SpinRule>(), Ok(SpinRule::Off));
        for bad in ["", "on", "-5", "1001", "10us", "1.5"] {
            let err = bad.parse::<SpinRule>().unwrap_err();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
    }
}
