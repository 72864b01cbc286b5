//! The requests each workload a comparison can run makes over the fixtures.

use anyhow::{Context, Result};
use webstand_results::WorkloadKind;
use webstand_workload::fixtures::{self, Manifest};
use webstand_workload::{webstone, Workload};

/// The requests `kind` makes and how it picks them over the fixtures.
pub fn workload(kind: WorkloadKind, manifest: &Manifest) -> Result<Workload> {
    let mut w = match kind {
        WorkloadKind::SmallFiles | WorkloadKind::H2 | WorkloadKind::H3 => {
            Workload::small_files(manifest, webstand_workload::DEFAULT_SEED)?
        }
        WorkloadKind::Cgi => Workload::single(fixtures::CGI_HELLO),
        WorkloadKind::Large => {
            let large = manifest
                .files
                .iter()
                .find(|e| e.path.starts_with("/large/"))
                .context("the fixtures have no large file")?;
            Workload::single(&large.path)
        }
        WorkloadKind::Webstone2 => Workload::weighted(
            "webstone2",
            &webstone::preset("webstone2").expect("shipped"),
            webstand_workload::DEFAULT_SEED,
        )?,
        WorkloadKind::TwoK
        | WorkloadKind::TlsKa
        | WorkloadKind::TlsNew
        | WorkloadKind::TlsResume
        | WorkloadKind::H2TwoK
        | WorkloadKind::H3TwoK => Workload::single(fixtures::TENON_FILE),
        WorkloadKind::Php => {
            let mut w = Workload::single(crate::php::page::PATH);
            w.requests[0].expect = Some(crate::php::page::body_check());
            w
        }
        WorkloadKind::Wordpress => Workload::single("/"),
    };
    w.name = kind.name().to_string();
    Ok(w)
}
