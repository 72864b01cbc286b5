//! `compare --scale COUNTS`: the connection-scaling comparison. It sets the run's workload (2k over
//! keep-alive) and its levels (the counts), and asks for the scaling table after the comparison's
//! own (`webstand_report::scale`).

use anyhow::{bail, Result};
use webstand_lab::compare::Options;
use webstand_lab::sweep::parse_clients;
use webstand_results::WorkloadKind;

/// The workload every server is measured on at each count.
pub const SCALE_WORKLOAD: WorkloadKind = WorkloadKind::TwoK;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct ScaleArgs {
    /// Which server holds up under a crowd: every server on /2k.html, keep-alive, at these
    /// rising connection counts (e.g. 32,1000,5000,15000), then each one's requests/s, CPU-µs per
    /// request, its growth and memory per connection (docs/COMPARE.md)
    #[arg(long, value_name = "COUNTS", conflicts_with_all = ["levels", "workloads", "no_keepalive"])]
    pub scale: Option<String>,
}

impl ScaleArgs {
    /// The counts asked for: two or more, rising.
    pub fn counts(&self) -> Result<Option<Vec<usize>>> {
        let Some(list) = &self.scale else {
            return Ok(None);
        };
        let counts = parse_clients(list).map_err(|e| anyhow::anyhow!("--scale: {e:#}"))?;
        if counts.len() < 2 || counts.windows(2).any(|w| w[0] >= w[1]) {
            bail!(
                "--scale {list}: give two or more connection counts, rising (32,1000,5000,15000)"
            );
        }
        Ok(Some(counts))
    }

    /// Puts a scaling run's workload and levels on `o` (no max-users search); nothing without
    /// `--scale`.
    pub fn apply(&self, o: &mut Options) -> Result<()> {
        if let Some(counts) = self.counts()? {
            o.workloads = vec![SCALE_WORKLOAD];
            o.levels = counts;
            o.max_users_for.clear();
        }
        Ok(())
    }
}
