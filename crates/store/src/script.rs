//! The wrk script a run ran with (`-s FILE`): its file name and the SHA-256 of its text, saved
//! beside the run (schema 14) so `show` and `diff` say which script, and which version of it, a
//! run's figures came from. Older files have none.

use anyhow::Context;
use rusqlite::{params, OptionalExtension};

use crate::{RunId, Store};

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS scripts (
    run_id  INTEGER PRIMARY KEY REFERENCES runs(id),
    name    TEXT    NOT NULL,
    sha256  TEXT    NOT NULL
);
";

/// A run's script: its file name and its text's SHA-256 (hex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredScript {
    pub name: String,
    pub sha256: String,
}

impl std::fmt::Display for StoredScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (sha256 {})", self.name, self.sha256)
    }
}

impl Store {
    /// Records the script `run` runs with.
    pub fn set_script(&self, run: RunId, script: &StoredScript) -> anyhow::Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO scripts (run_id, name, sha256) VALUES (?1, ?2, ?3)",
                params![run, script.name, script.sha256],
            )
            .with_context(|| format!("saving run {run}'s script in {}", self.path.display()))?;
        Ok(())
    }

    /// The script `run` ran with; None for a run without one, or a file from before schema 14.
    pub fn script(&self, run: RunId) -> anyhow::Result<Option<StoredScript>> {
        if !self.has_table("scripts")? {
            return Ok(None);
        }
        let found = self
            .conn
            .query_row(
                "SELECT name, sha256 FROM scripts WHERE run_id = ?1",
                [run],
                |r| {
                    Ok(StoredScript {
                        name: r.get(0)?,
                        sha256: r.get(1)?,
                    })
                },
            )
            .optional()?;
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunMeta;

    #[test]
    fn a_script_is_saved_and_read_back_and_an_old_file_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let store = Store::open(Some(&db)).unwrap();
        let meta = RunMeta {
            kind: "bench".into(),
            command_line: "webstand bench -s a.lua http://x/".into(),
            target: "http://x/".into(),
        };
        let (with, without) = (
            store.begin_run(&meta).unwrap(),
            store.begin_run(&meta).unwrap(),
        );
        let s = StoredScript {
            name: "a.lua".into(),
            sha256: "ab".repeat(32),
        };
        store.set_script(with, &s).unwrap();
        assert_eq!(store.script(with).unwrap(), Some(s));
        assert_eq!(store.script(without).unwrap(), None);
        // A file from before schema 14: no table, no script, nothing written by reading it.
        store.conn.execute_batch("DROP TABLE scripts").unwrap();
        assert_eq!(store.script(with).unwrap(), None);
    }
}
