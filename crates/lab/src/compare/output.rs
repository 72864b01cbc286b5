//! A comparison's output: every row by workload, the text tables (rendered by
//! `webstand_report::compare`) and one JSON document.

use webstand_report::compare::{FeatureRow, WorkloadRow};

use super::{Comparison, WorkloadKind};

impl Comparison {
    /// Every table as text: one per workload, thttpd's, and the verification when run.
    /// Each workload's rows, in order.
    pub fn workload_rows(&self) -> Vec<(String, Vec<WorkloadRow>)> {
        self.workloads
            .iter()
            .map(|&wk| {
                (
                    wk.name().to_string(),
                    self.servers.iter().map(|s| s.workload_row(wk)).collect(),
                )
            })
            .collect()
    }

    /// Everything the tables show, as one JSON document.
    pub fn to_json(&self) -> serde_json::Value {
        let features: Vec<FeatureRow> = self.servers.iter().map(|s| s.feature_row()).collect();
        serde_json::json!({
            "pinning": self.pinning,
            "settings": self.settings,
            "cpu_accounting": self.cpu_accounting,
            "rounds": self.rounds,
            "interrupted": self.interrupted,
            "workloads": self.workload_rows().into_iter().map(|(name, rows)| serde_json::json!({ "workload": name, "rows": rows })).collect::<Vec<_>>(),
            "servers": features,
            "verify": self.verify,
        })
    }

    pub fn render(&self) -> String {
        use webstand_report::compare as rc;
        let rounds = if self.rounds > 1 {
            format!("; medians of {} rounds", self.rounds)
        } else {
            String::new()
        };
        let mut out = format!(
            "Lab comparison: {}{rounds}\n{}\n{}\n\n",
            self.pinning, self.settings, self.cpu_accounting
        );
        for (name, rows) in self.workload_rows() {
            out.push_str(&rc::workload_table(&name, &rows));
            out.push('\n');
        }
        if self.workloads.contains(&WorkloadKind::Wordpress) {
            out.push_str(&self.seed_table(WorkloadKind::Wordpress));
            out.push('\n');
        }
        let rows: Vec<FeatureRow> = self.servers.iter().map(|s| s.feature_row()).collect();
        out.push_str(&rc::thttpd_table(&rows));
        if !self.verify.is_empty() {
            out.push('\n');
            out.push_str(&rc::verify_table(&self.verify));
        }
        if self.interrupted {
            out.push_str("\nInterrupted: the tables hold what was measured before Ctrl-C.\n");
        }
        out
    }
}
