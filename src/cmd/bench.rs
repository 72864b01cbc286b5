//! `webstand bench` (placeholder until its issue lands).

use crate::Global;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _global: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("'bench' is not available yet")
}
