//! The thresholds a saved run was judged against, as `show`, `diff` and `report` print them: the
//! same pass/fail tables the run printed (the report: as its thresholds section's rows), from the
//! history's rows.

use webstand_store::{RunId, Store};
use webstand_thresholds::{Check, Judged};

/// Each judged level of `run` with its checks; empty for a run without thresholds (or a file
/// older than the thresholds).
pub fn judged(store: &Store, run: RunId) -> anyhow::Result<Vec<Judged>> {
    let rows = store.thresholds(run)?;
    let several = rows.len() > 1;
    Ok(rows
        .into_iter()
        .map(|row| Judged {
            label: match several {
                true => format!("{} at {} clients", row.group, row.clients),
                false => String::new(),
            },
            checks: row
                .checks
                .as_array()
                .map(|a| a.iter().filter_map(Check::from_json).collect())
                .unwrap_or_default(),
        })
        .collect())
}

/// The tables, as the run printed them after its report.
pub fn tables(store: &Store, run: RunId) -> anyhow::Result<String> {
    Ok(judged(store, run)?
        .iter()
        .map(webstand_thresholds::table)
        .collect())
}

/// The report's thresholds section: each judged level with each check, held or crossed.
pub fn html_levels(
    store: &Store,
    run: RunId,
) -> anyhow::Result<Vec<webstand_report::thresholds_html::JudgedLevel>> {
    use webstand_report::thresholds_html::{JudgedLevel, ThresholdCheck};
    Ok(judged(store, run)?
        .into_iter()
        .map(|j| JudgedLevel {
            label: j.label,
            checks: j
                .checks
                .iter()
                .map(|c| ThresholdCheck {
                    threshold: c.threshold.clone(),
                    measured: c.shown(),
                    passed: c.passed,
                })
                .collect(),
        })
        .collect())
}

/// `diff`'s lines: each side's thresholds, under the side's name.
pub fn diff(store: &Store, sides: [(&str, &[RunId]); 2]) -> anyhow::Result<String> {
    let mut out = String::new();
    for (name, runs) in sides {
        let mut text = String::new();
        for &id in runs {
            text += &tables(store, id)?;
        }
        if !text.is_empty() {
            out += &format!("\nThresholds of {name}:{text}");
        }
    }
    Ok(out)
}
