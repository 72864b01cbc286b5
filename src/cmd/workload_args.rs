//! The workload options shared by the load commands (`sweep`, and `bench` if it flattens them): a URL
//! file, a WebStone file list, the small-file load, checksums. [`WorkloadArgs::apply`] fills a plan's
//! requests and pick from them.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use webstand_results::Plan;
use webstand_workload::fixtures::Manifest;
use webstand_workload::{urlfile, webstone, Workload};

#[derive(clap::Args, Clone, Debug, Default)]
pub struct WorkloadArgs {
    /// Fetch the URLs or paths listed in FILE (one per line, `#` comments), each fetch picking one at
    /// random (http_load's model). Full URLs must all name one host:port; it is the target when no URL
    /// is given
    #[arg(long, value_name = "FILE", conflicts_with_all = ["filelist", "small_files"])]
    pub url_file: Option<PathBuf>,

    /// Fetch from a weighted file list: `webstone1` (WebStone 1.1's page classes), `webstone2`
    /// (WebStone 2.0.1's list), or a FILE in either format (docs/SWEEP.md); ./NAME for a file named
    /// like a shipped list
    #[arg(long, value_name = "LIST|FILE", conflicts_with = "small_files")]
    pub filelist: Option<String>,

    /// Fetch thttpd's small-file load: /small/000.html … /small/999.html of the fixtures, at random
    #[arg(long)]
    pub small_files: bool,

    /// Check every response body: against --manifest's length and SHA-256 where it lists the path, else
    /// against the first fetch of the same URL; a mismatch counts as a failed request (Length)
    #[arg(long)]
    pub checksum: bool,

    /// The fixtures manifest for --checksum: manifest.json written by `webstand fixtures`, or its DIR
    #[arg(long, value_name = "PATH", requires = "checksum")]
    pub manifest: Option<PathBuf>,

    /// Seed of the random picks (same seed, same sequence of URLs)
    #[arg(long, value_name = "N", default_value_t = webstand_workload::DEFAULT_SEED)]
    pub seed: u64,
}

/// A workload and, when a URL file named full URLs, their origin (`http://host:port`).
pub struct Resolved {
    pub workload: Workload,
    pub origin: Option<String>,
}

impl WorkloadArgs {
    /// Whether any option chooses what to fetch (otherwise it is the URL's path).
    pub fn chooses_requests(&self) -> bool {
        self.url_file.is_some() || self.filelist.is_some() || self.small_files
    }

    /// Builds the workload: from the list options, else the single `url_path`. `manifest` (e.g. of
    /// fixtures the caller wrote) is used for --checksum when --manifest is not given.
    pub fn resolve(&self, url_path: &str, manifest: Option<&Manifest>) -> Result<Resolved> {
        let mut origin = None;
        let workload = if let Some(file) = &self.url_file {
            let f = urlfile::load(file)?;
            origin = f.origin.clone();
            Workload::uniform(&file_name(file), &f.paths(), self.seed)?
        } else if let Some(list) = &self.filelist {
            let (name, parsed) = match webstone::preset(list) {
                Some(l) => (list.clone(), l),
                None if Path::new(list).exists() => {
                    (file_name(Path::new(list)), webstone::load(Path::new(list))?)
                }
                None => bail!("no file list {list:?}: expected webstone1, webstone2 or a file"),
            };
            Workload::weighted(&name, &parsed, self.seed)?
        } else if self.small_files {
            let paths: Vec<String> = (0..1000).map(|i| format!("/small/{i:03}.html")).collect();
            Workload::uniform("small-files", &paths, self.seed)?
        } else {
            Workload::single(url_path)
        };
        let workload = if self.checksum {
            let loaded = self.manifest.as_deref().map(Manifest::load).transpose()?;
            workload.with_checksum(loaded.as_ref().or(manifest))
        } else {
            workload
        };
        Ok(Resolved { workload, origin })
    }

    /// Fills `plan.requests` and `plan.pick` (the plan's current first path is the URL's); returns the
    /// workload's name. A URL file's origin must be the plan's target. (For `bench` to flatten these
    /// options; `sweep` calls [`Self::resolve`] to pass its own fixtures' manifest.)
    #[allow(dead_code)]
    pub fn apply(&self, plan: &mut Plan) -> Result<String> {
        let path = plan
            .requests
            .first()
            .map(|r| r.path.clone())
            .unwrap_or_else(|| "/".to_string());
        let r = self.resolve(&path, None)?;
        if let Some(origin) = &r.origin {
            let (t, _) = webstand_engine::parse_url(origin)
                .with_context(|| format!("URL file origin {origin}"))?;
            if (t.host.as_str(), t.port) != (plan.target.host.as_str(), plan.target.port) {
                bail!(
                    "the URL file names {origin} but the target is {}:{} (one target per run)",
                    plan.target.host,
                    plan.target.port
                );
            }
        }
        r.workload.apply(plan);
        Ok(r.workload.name)
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}
