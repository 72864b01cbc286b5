//! `webstand history|show|diff|export|report` (placeholders until issue 6 lands).

use crate::Global;

#[derive(clap::Args)]
pub struct HistoryArgs {}
#[derive(clap::Args)]
pub struct ShowArgs {}
#[derive(clap::Args)]
pub struct DiffArgs {}
#[derive(clap::Args)]
pub struct ExportArgs {}
#[derive(clap::Args)]
pub struct ReportArgs {}

pub fn history(_a: HistoryArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("'history' is not available yet")
}
pub fn show(_a: ShowArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("'show' is not available yet")
}
pub fn diff(_a: DiffArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("'diff' is not available yet")
}
pub fn export(_a: ExportArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("'export' is not available yet")
}
pub fn report(_a: ReportArgs, _g: &Global) -> anyhow::Result<i32> {
    anyhow::bail!("'report' is not available yet")
}
