//! What to request: the deterministic fixtures docroot and its manifest, URL files (http_load's model),
//! WebStone's weighted file lists, and checksums. It turns each into `RequestSpec`s and a `Pick` for the
//! engine ([`Workload`]); it knows nothing of sockets or reports.

pub mod fixtures; // the deterministic docroot and its manifest
pub mod urlfile; // http_load-style URL files
pub mod webstone; // WebStone 1.1 page classes and 2.0.1 weighted file lists, with the seed presets

use anyhow::{bail, Result};
use fixtures::Manifest;
use webstand_results::{BodyCheck, Pick, Plan, RequestSpec};

/// Seed of every random pick unless told otherwise, so two runs fetch the same sequence.
pub const DEFAULT_SEED: u64 = 1;

/// A named set of requests and how to pick among them: what a plan fetches.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Shown in tables and stored as the history's group ("/2k.html", "webstone2", "urls.txt" …).
    pub name: String,
    pub requests: Vec<RequestSpec>,
    pub pick: Pick,
}

impl Workload {
    /// One path, fetched every time.
    pub fn single(path: &str) -> Workload {
        Workload {
            name: path.to_string(),
            requests: vec![spec(path)],
            pick: Pick::Single,
        }
    }

    /// Paths fetched uniformly at random (http_load's URL-file model).
    pub fn uniform(name: &str, paths: &[String], seed: u64) -> Result<Workload> {
        if paths.is_empty() {
            bail!("{name}: no URLs to fetch");
        }
        Ok(Workload {
            name: name.to_string(),
            requests: paths.iter().map(|p| spec(p)).collect(),
            pick: Pick::Uniform { seed },
        })
    }

    /// A WebStone list: each file drawn with its weight.
    pub fn weighted(name: &str, list: &webstone::FileList, seed: u64) -> Result<Workload> {
        if list.files.is_empty() || list.total_weight() == 0 {
            bail!("{name}: the file list is empty or its total weight is zero");
        }
        Ok(Workload {
            name: name.to_string(),
            requests: list.files.iter().map(|f| spec(&f.path)).collect(),
            pick: Pick::Weighted {
                weights: list.files.iter().map(|f| f.weight).collect(),
                seed,
            },
        })
    }

    /// thttpd's small-file load: the manifest's `/small/…` files, uniformly at random.
    pub fn small_files(manifest: &Manifest, seed: u64) -> Result<Workload> {
        Workload::uniform("small-files", &manifest.small_paths(), seed)
    }

    /// Checks every body: against the manifest's digest where it knows the path, else against the
    /// first fetch of the same request (http_load's `-checksum`).
    pub fn with_checksum(mut self, manifest: Option<&Manifest>) -> Workload {
        for r in &mut self.requests {
            r.expect = Some(
                manifest
                    .and_then(|m| m.body_check(&r.path))
                    .unwrap_or(BodyCheck::FirstFetch),
            );
        }
        self
    }

    /// Puts the requests and pick into `plan`.
    pub fn apply(&self, plan: &mut Plan) {
        plan.requests = self.requests.clone();
        plan.pick = self.pick.clone();
    }
}

fn spec(path: &str) -> RequestSpec {
    RequestSpec {
        path: path.to_string(),
        expect: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_uses_manifest_then_first_fetch() {
        let dir = tempfile::tempdir().unwrap();
        let m = fixtures::write(
            dir.path(),
            &fixtures::Options {
                large_sizes: vec![10],
                small_files: 2,
            },
        )
        .unwrap();
        let w = Workload::uniform("u", &["/2k.html".into(), "/nope".into()], 7)
            .unwrap()
            .with_checksum(Some(&m));
        assert!(matches!(
            w.requests[0].expect,
            Some(BodyCheck::Digest { len: 2048, .. })
        ));
        assert_eq!(w.requests[1].expect, Some(BodyCheck::FirstFetch));
        let w = Workload::single("/2k.html").with_checksum(None);
        assert_eq!(w.requests[0].expect, Some(BodyCheck::FirstFetch));
    }

    #[test]
    fn weighted_keeps_one_weight_per_request() {
        let l = webstone::preset("webstone2").unwrap();
        let w = Workload::weighted("webstone2", &l, 3).unwrap();
        assert_eq!(w.requests.len(), 5);
        match w.pick {
            Pick::Weighted { weights, seed } => {
                assert_eq!(weights, [350, 500, 140, 9, 1]);
                assert_eq!(seed, 3);
            }
            p => panic!("{p:?}"),
        }
        assert!(Workload::uniform("e", &[], 1).is_err());
    }
}
