//! `webstand fixtures DIR`: writes the deterministic benchmark docroot and its manifest.

use crate::Global;
use anyhow::Result;
use std::path::PathBuf;
use webstand_workload::fixtures;

#[derive(clap::Args)]
#[command(after_help = super::help::FIXTURES)]
pub struct Args {
    /// Directory to write into (created if missing; files of the same names are replaced)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Sizes of the large files under large/, comma-separated, with an optional K, M or G suffix
    /// (powers of 1024), e.g. `1M,64M`
    #[arg(long, value_name = "SIZES", default_value = "1M")]
    pub large_size: String,
}

pub fn run(args: Args, _global: &Global) -> Result<i32> {
    let large_sizes = args
        .large_size
        .split(',')
        .map(fixtures::parse_size)
        .collect::<Result<Vec<u64>>>()?;
    let opts = fixtures::Options {
        large_sizes,
        ..Default::default()
    };
    let manifest = fixtures::write(&args.dir, &opts)?;
    let bytes: u64 = manifest.files.iter().map(|e| e.size).sum();
    println!(
        "Wrote {} files ({} bytes) and {} to {}",
        manifest.files.len(),
        bytes,
        fixtures::MANIFEST,
        args.dir.display()
    );
    Ok(0)
}
