//! The config files and command lines a lab run started its servers with, saved beside the run (one
//! row per file) so that anyone can audit the comparison or start the same servers again
//! (`webstand show N --configs`). Added in schema version 7; older files have none, except a version 6
//! file written by the lab fairness branch before main's version 6 (`levels.ended`) landed.

use anyhow::Context;
use rusqlite::{params, Transaction, TransactionBehavior};

use crate::{RunId, Store};

/// The schema version that added `configs`.
pub(crate) const SINCE: i32 = 7;

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

    /// The files saved with `run`, in the order they were added (none for a file without the table).
    pub fn configs(&self, run: RunId) -> anyhow::Result<Vec<StoredConfig>> {
        if self.version < 6 || !self.has_table("configs")? {
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

    /// Writes a history of `version` as that build left it: one run, one level that ended with the
    /// target lost, one config; then drops what that version did not have (`drop`).
    fn old_file(db: &std::path::Path, version: i32, drop: &str) -> RunId {
        let id = {
            let s = Store::open(Some(db)).unwrap();
            let id = s.begin_run(&meta()).unwrap();
            let r = webstand_results::RunResult {
                ended: Some(webstand_results::Ended::TargetLost),
                ..Default::default()
            };
            s.add_level(id, "", 4, 1, None, &r).unwrap();
            s.add_config(id, "nginx", "nginx.conf", "worker_processes 1;\n")
                .unwrap();
            id
        };
        Connection::open(db)
            .unwrap()
            .execute_batch(&format!("{drop} PRAGMA user_version = {version};"))
            .unwrap();
        id
    }

    fn user_version(db: &std::path::Path) -> i32 {
        Connection::open(db)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    }

    /// Every table's columns, to compare an upgraded file with a new one.
    fn layout(db: &std::path::Path) -> Vec<(String, String)> {
        let c = Connection::open(db).unwrap();
        let mut st = c
            .prepare(
                "SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p
                 WHERE m.type = 'table' ORDER BY m.name, p.cid",
            )
            .unwrap();
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    /// Main's version 6 (`levels.ended`, no `configs`): read as it is (no configs, the level's end
    /// kept), then upgraded to 7 by a writer, which adds the table and keeps the column's values.
    #[test]
    fn mains_version_6_file_is_read_and_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("main6.db");
        let id = old_file(&db, 6, "DROP TABLE configs;");
        let reader = Store::open_existing(Some(&db)).unwrap();
        assert_eq!(reader.configs(id).unwrap(), []);
        let ended = |s: &Store| s.load_run(id).unwrap().levels[0].result.ended;
        assert_eq!(ended(&reader), Some(webstand_results::Ended::TargetLost));
        drop(reader);
        assert_eq!(user_version(&db), 6, "a reader changes nothing");
        let writer = Store::open(Some(&db)).unwrap();
        assert_eq!(user_version(&db), crate::SCHEMA_VERSION);
        writer.add_config(id, "caddy", "Caddyfile", "{}\n").unwrap();
        assert_eq!(writer.configs(id).unwrap()[0].name, "Caddyfile");
        assert_eq!(ended(&writer), Some(webstand_results::Ended::TargetLost));
    }

    /// The lab branch's version 6 (`configs`, no `levels.ended`): its configs read back as they are,
    /// and a writer adds the column (levels saved before it read as not ended) without a second table.
    #[test]
    fn the_lab_branchs_version_6_file_is_read_and_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("lab6.db");
        let id = old_file(&db, 6, "ALTER TABLE levels DROP COLUMN ended;");
        let reader = Store::open_existing(Some(&db)).unwrap();
        assert_eq!(reader.configs(id).unwrap()[0].name, "nginx.conf");
        assert_eq!(reader.load_run(id).unwrap().levels[0].result.ended, None);
        drop(reader);
        let writer = Store::open(Some(&db)).unwrap();
        assert_eq!(user_version(&db), crate::SCHEMA_VERSION);
        assert_eq!(writer.configs(id).unwrap().len(), 1, "kept, not recreated");
        let r = webstand_results::RunResult {
            ended: Some(webstand_results::Ended::Unreachable),
            ..Default::default()
        };
        writer.add_level(id, "", 8, 1, None, &r).unwrap();
        let levels = writer.load_run(id).unwrap().levels;
        assert_eq!(
            (levels[0].result.ended, levels[1].result.ended),
            (None, Some(webstand_results::Ended::Unreachable))
        );
    }

    /// Files at versions 4, 5, both 6s, 7, 8, 9 and 10 all end with a new file's layout, and running each
    /// upgrade step again on the upgraded file changes nothing and fails nowhere.
    #[test]
    fn every_upgrade_step_is_idempotent_and_ends_at_a_new_files_layout() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("new.db");
        drop(Store::open(Some(&fresh)).unwrap());
        let cases = [
            (
                4,
                "ALTER TABLE levels DROP COLUMN ended; DROP TABLE configs; DROP TABLE probe_cases;",
            ),
            (
                5,
                "ALTER TABLE levels DROP COLUMN ended; DROP TABLE configs;",
            ),
            (6, "DROP TABLE configs;"),
            (6, "ALTER TABLE levels DROP COLUMN ended;"),
            (7, ""),
            (8, ""),
            (9, ""),
            (10, ""),
            (11, ""),
        ];
        for (i, (version, drop)) in cases.into_iter().enumerate() {
            let db = dir.path().join(format!("{i}.db"));
            // Files before version 12 have no `levels.generator`, before version 11 no backends' CPU, before version 10 no `levels.round`,
            // before version 9 no HTTP/2 columns, and before version 8 no `levels.diagnosis` either.
            let h2 = match version {
                9..=11 => "",
                _ => "ALTER TABLE levels DROP COLUMN h2; ALTER TABLE levels DROP COLUMN h2_connect;
                    ALTER TABLE levels DROP COLUMN h2_first_byte; ALTER TABLE runs DROP COLUMN protocol;
                    ALTER TABLE runs DROP COLUMN h2_streams;",
            };
            let diagnosis = match version {
                8..=11 => "",
                _ => "ALTER TABLE levels DROP COLUMN diagnosis;",
            };
            let round = match version {
                10 | 11 => "",
                _ => "ALTER TABLE levels DROP COLUMN round;",
            };
            let backends = match version {
                11 => "",
                _ => {
                    "ALTER TABLE levels DROP COLUMN backends_cpu_user_ns;
                    ALTER TABLE levels DROP COLUMN backends_cpu_sys_ns;"
                }
            };
            // Nor, before versions 12, 15 and 16, `levels.generator`, `levels.quic`, `levels.notes`.
            let generator =
                "ALTER TABLE levels DROP COLUMN generator; ALTER TABLE levels DROP COLUMN quic;
                ALTER TABLE levels DROP COLUMN notes;";
            let drop = format!("{generator} {backends} {round} {h2} {diagnosis} {drop}");
            let id = old_file(&db, version, &drop);
            let s = Store::open(Some(&db)).unwrap();
            assert_eq!(layout(&db), layout(&fresh), "from {version} ({drop})");
            for from in 4..=11 {
                s.upgrade(from).unwrap();
            }
            assert_eq!(layout(&db), layout(&fresh), "again from {version}");
            assert_eq!(s.load_run(id).unwrap().levels.len(), 1);
        }
    }
}
