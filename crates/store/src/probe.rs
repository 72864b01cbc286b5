//! Probe runs in the history: a row per case run in `probe_cases` (schema 5), with its name,
//! category and verdict as columns and the whole result as JSON, so this crate stores probe results
//! without knowing their shape.

use crate::{RunId, Store};
use anyhow::{bail, Context};
use rusqlite::{params, OptionalExtension};

/// The schema version that added `probe_cases`.
pub(crate) const SINCE: i32 = 5;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS probe_cases (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id),
    name     TEXT    NOT NULL,
    category TEXT    NOT NULL,
    verdict  TEXT    NOT NULL,
    result   TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS probe_cases_by_run ON probe_cases(run_id, id);
";

/// One stored case run of a probe.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeCase {
    pub name: String,
    pub category: String,
    pub verdict: String,
    /// The case's whole result as JSON (webstand-probe's `CaseResult`).
    pub result_json: String,
}

impl Store {
    /// Records one case run of probe `run`, in its own transaction (an interrupted probe keeps
    /// every case it finished).
    pub fn add_probe_case(&self, run: RunId, case: &ProbeCase) -> anyhow::Result<()> {
        let exists: Option<i64> = self
            .conn
            .query_row("SELECT id FROM runs WHERE id = ?1", [run], |r| r.get(0))
            .optional()?;
        if exists.is_none() {
            bail!("run {run} is not in {}", self.path.display());
        }
        self.conn
            .execute(
                "INSERT INTO probe_cases (run_id, name, category, verdict, result) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run, case.name, case.category, case.verdict, case.result_json],
            )
            .with_context(|| format!("saving a probe case of run {run} in {}", self.path.display()))?;
        Ok(())
    }

    /// The case runs of probe `run`, in the order they ran (none from a file older than schema 5).
    pub fn probe_cases(&self, run: RunId) -> anyhow::Result<Vec<ProbeCase>> {
        if self.version < SINCE {
            return Ok(Vec::new());
        }
        let mut st = self.conn.prepare(
            "SELECT name, category, verdict, result FROM probe_cases WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows = st.query_map([run], |r| {
            Ok(ProbeCase {
                name: r.get(0)?,
                category: r.get(1)?,
                verdict: r.get(2)?,
                result_json: r.get(3)?,
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
    fn probe_cases_round_trip_and_old_files_upgrade() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        // A schema-4 file, as an older webstand left it.
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(crate::schema::SCHEMA).unwrap();
            // Schema 6 added `levels.ended`: a schema-4 file does not have it.
            c.execute_batch("ALTER TABLE levels DROP COLUMN ended;")
                .unwrap();
            c.execute_batch(&format!(
                "PRAGMA application_id = {}; PRAGMA user_version = 4;",
                crate::APPLICATION_ID
            ))
            .unwrap();
        }
        let old = Store::open_existing(Some(&path)).unwrap();
        assert_eq!(old.probe_cases(1).unwrap(), vec![]);
        drop(old);
        let store = Store::open(Some(&path)).unwrap();
        let run = store
            .begin_run(&RunMeta {
                kind: "probe".into(),
                command_line: "webstand probe".into(),
                target: "http://127.0.0.1:1/".into(),
            })
            .unwrap();
        let case = ProbeCase {
            name: "cl-te".into(),
            category: "smuggling".into(),
            verdict: "safe".into(),
            result_json: "{\"x\":1}".into(),
        };
        store.add_probe_case(run, &case).unwrap();
        assert!(store.add_probe_case(run + 1, &case).is_err());
        let again = Store::open_existing(Some(&path)).unwrap();
        assert_eq!(again.probe_cases(run).unwrap(), vec![case]);
    }
}
