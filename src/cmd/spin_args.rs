//! `--spin auto|off|MICROS`: how a closed-loop load thread waits (the engine's `SpinRule`), one
//! flag for bench, sweep and compare, read with a one-line error and refused where nothing spins.

use anyhow::bail;
use webstand_engine::SpinRule;

#[derive(clap::Args, Clone, Default)]
pub struct SpinArgs {
    /// How a load thread waits once every request it has is at the server: auto spins (polls
    /// without blocking) up to 20 µs before it blocks when it has a CPU of its own (taskset), so a
    /// fast server is not charged a wake-up per response; over keep-alive with a deep queue at the
    /// server it sleeps half the measured backlog instead (HTTP from 16 requests in flight, HTTPS
    /// from 32), and where it cannot sleep, or from 48 over HTTP, it blocks on the socket halfway
    /// down that queue (from 32); --h2: auto never spins, its requests go in batches, and with as
    /// many connections with streams in flight (16 over HTTPS) it blocks on the one whose oldest
    /// batch went halfway down them; off always blocks, as wrk does; MICROS spins up to that long
    /// whatever the pinning. Closed loop only, HTTP/1, HTTPS or --h2 (--rate never spins)
    #[arg(long, value_name = "auto|off|MICROS", default_value = "auto")]
    spin: String,
}

impl SpinArgs {
    /// The rule, or one line saying why not; `open_loop`: --rate was given, where nothing spins.
    pub fn rule(&self, open_loop: bool) -> anyhow::Result<SpinRule> {
        let spin: SpinRule = self
            .spin
            .parse()
            .map_err(|e| anyhow::anyhow!("--spin: {e}"))?;
        if spin != SpinRule::Auto && open_loop {
            bail!("--spin {spin} applies to a closed loop: --rate never spins");
        }
        Ok(spin)
    }
}
