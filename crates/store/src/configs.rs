//! The config files and command lines a lab run started its servers with, saved beside the run (one
//! row per file) so that anyone can audit the comparison or start the same servers again
//! (`webstand show N --configs`). Added in schema version 6; older files have none.

use anyhow::Context;
use rusqlite::{params, Transaction, TransactionBehavior};

use crate::{RunId, Store};

/// The schema version that added `configs`.
pub(crate) const SINCE: i32 = 6;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS configs (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs(id),
    server  TEXT    NOT NULL,
    name    TEXT    NOT NULL,
    text    TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS configs_by_run ON configs(run_id, id);
";

/// One file a server of a run was started with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredConfig {
    /// The server ("nginx").
    pub server: String,
    /// The file's name ("nginx.conf"), or "command line".
    pub name: String,
    pub text: String,
}

impl Store {
    /// Saves one of `server`'s files for `run`, in its own transaction (immediate, as a level is).
    pub fn add_config(
        &self,
        run: RunId,
        server: &str,
        name: &str,
        text: &str,
    ) -> anyhow::Result<()> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let n = tx.execute(
            "INSERT INTO configs (run_id, server, name, text)
             SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1)",
            params![run, server, name, text],
        )?;
        anyhow::ensure!(n == 1, "run {run} is not in {}", self.path.display());
        tx.commit()
            .with_context(|| format!("saving {server}'s {name} in {}", self.path.display()))
    }

    /// The files saved with `run`, in the order they were added (none for a file older than schema 6).
    pub fn configs(&self, run: RunId) -> anyhow::Result<Vec<StoredConfig>> {
        if self.version < SINCE {
            return Ok(Vec::new());
        }
        let mut st = self
            .conn
            .prepare("SELECT server, name, text FROM configs WHERE run_id = ?1 ORDER BY id")?;
        let rows = st.query_map([run], |r| {
            Ok(StoredConfig {
                server: r.get(0)?,
                name: r.get(1)?,
                text: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunMeta;
    use rusqlite::Connection;

    fn meta() -> RunMeta {
        RunMeta {
            kind: "compare".into(),
            command_line: "webstand compare".into(),
            target: "lab".into(),
        }
    }

    #[test]
    fn configs_come_back_in_order_per_run() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(Some(&dir.path().join("h.db"))).unwrap();
        let (a, b) = (s.begin_run(&meta()).unwrap(), s.begin_run(&meta()).unwrap());
        s.add_config(a, "nginx", "nginx.conf", "worker_processes 1;\n")
            .unwrap();
        s.add_config(a, "nginx", "command line", "/usr/sbin/nginx -c x\n")
            .unwrap();
        s.add_config(b, "h2o", "h2o.conf", "num-threads: 1\n")
            .unwrap();
        assert!(
            s.add_config(99, "h2o", "h2o.conf", "").is_err(),
            "no run 99"
        );
        let got = s.configs(a).unwrap();
        assert_eq!(
            got.iter()
                .map(|c| (c.server.as_str(), c.name.as_str()))
                .collect::<Vec<_>>(),
            [("nginx", "nginx.conf"), ("nginx", "command line")]
        );
        assert_eq!(got[0].text, "worker_processes 1;\n");
        assert_eq!(s.configs(b).unwrap().len(), 1);
    }

    /// A version 5 file (before configs were saved) reads as having none, and a writer adds the table.
    #[test]
    fn a_version_5_file_reads_as_no_configs_and_is_upgraded_by_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("v5.db");
        let id = {
            let s = Store::open(Some(&db)).unwrap();
            s.begin_run(&meta()).unwrap()
        };
        Connection::open(&db)
            .unwrap()
            .execute_batch("DROP TABLE configs; PRAGMA user_version = 5;")
            .unwrap();
        let reader = Store::open_existing(Some(&db)).unwrap();
        assert_eq!(reader.configs(id).unwrap(), []);
        drop(reader);
        let writer = Store::open(Some(&db)).unwrap();
        writer.add_config(id, "caddy", "Caddyfile", "{}\n").unwrap();
        assert_eq!(writer.configs(id).unwrap()[0].name, "Caddyfile");
    }
}
