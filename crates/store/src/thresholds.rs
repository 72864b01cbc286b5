//! The thresholds a run was judged against (schema 13): a row per judged level with the checks as
//! JSON (each threshold as written, its figure, its unit and whether it held), so this crate keeps
//! them without knowing their shape. A file older than schema 13 has none.

use crate::{sql_u64, RunId, Store};
use anyhow::Context;
use rusqlite::params;

/// The schema version that added `thresholds`.
pub(crate) const SINCE: i32 = 13;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS thresholds (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id),
    grp      TEXT    NOT NULL,
    clients  INTEGER NOT NULL,
    checks   TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS thresholds_by_run ON thresholds(run_id, id);
";

/// One judged level's thresholds, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredChecks {
    pub group: String,
    pub clients: usize,
    /// A JSON array of `{threshold, actual, unit, passed}`.
    pub checks: serde_json::Value,
}

impl Store {
    /// Records the thresholds judged on the level of `group` at `clients` of `run`.
    pub fn add_thresholds(
        &self,
        run: RunId,
        group: &str,
        clients: usize,
        checks: &serde_json::Value,
    ) -> anyhow::Result<()> {
        self.conn
            .execute(
                "INSERT INTO thresholds (run_id, grp, clients, checks) VALUES (?1, ?2, ?3, ?4)",
                params![run, group, sql_u64(clients as u64), checks.to_string()],
            )
            .with_context(|| {
                format!(
                    "saving the thresholds of run {run} in {}",
                    self.path.display()
                )
            })?;
        Ok(())
    }

    /// The judged levels of `run`, in the order judged (none from a file older than schema 13).
    pub fn thresholds(&self, run: RunId) -> anyhow::Result<Vec<StoredChecks>> {
        if self.version < SINCE || !self.has_table("thresholds")? {
            return Ok(Vec::new());
        }
        let mut st = self
            .conn
            .prepare("SELECT grp, clients, checks FROM thresholds WHERE run_id = ?1 ORDER BY id")?;
        let rows = st.query_map([run], |r| {
            let checks: String = r.get(2)?;
            let clients: i64 = r.get(1)?;
            Ok(StoredChecks {
                group: r.get(0)?,
                clients: clients as usize,
                checks: serde_json::from_str(&checks).unwrap_or(serde_json::Value::Null),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunMeta;

    #[test]
    fn thresholds_come_back_in_order_and_an_older_file_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let store = Store::open(Some(&path)).unwrap();
        let run = store.begin_run(&RunMeta::default()).unwrap();
        let checks = serde_json::json!([{"threshold": "p99<20ms", "actual": 3.5, "unit": "ms", "passed": true}]);
        store.add_thresholds(run, "2k.html", 8, &checks).unwrap();
        store
            .add_thresholds(run, "2k.html", 16, &serde_json::json!([]))
            .unwrap();
        let back = store.thresholds(run).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!((back[0].clients, &back[0].checks), (8, &checks));
        assert_eq!(back[1].clients, 16);
        drop(store);
        // A file written before the thresholds: read as it is, with none.
        let old = Store::open(Some(&path)).unwrap();
        old.conn
            .execute_batch("DROP TABLE thresholds; PRAGMA user_version = 12;")
            .unwrap();
        drop(old);
        let reader = Store::open_existing(Some(&path)).unwrap();
        assert!(reader.thresholds(run).unwrap().is_empty());
    }
}
