//! `--spin auto|off|MICROS`: how a closed-loop load thread waits (the engine's `SpinRule`), one
//! flag for bench, sweep and compare, read with a one-line error and refused where nothing spins.

use anyhow::bail;
use webstand_results::SpinRule;

#[derive(clap::Args, Clone, Default)]
pub struct SpinArgs {
    /// How a load thread waits for responses: auto (spin briefly or wait halfway down a deep queue:
    /// docs/BENCH.md), off (block, as wrk does) or MICROS (spin up to that long)
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
