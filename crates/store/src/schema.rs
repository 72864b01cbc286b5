//! What makes a file webstand's history and which version it is: the application id, the schema
//! version, the tables of a new file and the steps that bring an older one up to date. Writers
//! upgrade; readers take a file as it is.

use crate::{configs, generator, h2, notes, probe, quic, script, thresholds, Store};
use anyhow::{bail, Context};

/// The PHP backends' CPU time over a level (schema 11): user and system nanoseconds.
pub(crate) const BACKENDS_CPU: [&str; 2] = ["backends_cpu_user_ns", "backends_cpu_sys_ns"];

/// "WBST": marks a SQLite file as webstand's history (PRAGMA application_id).
pub const APPLICATION_ID: i32 = 0x5742_5354;
/// The schema this build writes and reads. A file with a higher `user_version` is refused.
/// Version 2 added `levels.first_error`, version 3 `levels.sent_bytes`, version 4 the server's CPU
/// and peak memory per level, version 5 the probe's cases ([`probe`]), version 6 `levels.ended`
/// (unreachable / target lost), version 7 the `configs` a comparison's servers ran with ([`configs`]),
/// version 8 `levels.diagnosis` (what bound the level, as the `--json` diagnosis object), version 9
/// HTTP/2 ([`h2`]: `runs.protocol`, `runs.h2_streams`, `levels.h2`, `levels.h2_connect`,
/// `levels.h2_first_byte`), version 10 `levels.round` (which round of a comparison measured the
/// level: 1 for bench and sweep; NULL in a level saved before, whose round readers infer from the
/// saved order), version 11 `levels.backends_cpu_user_ns` and `levels.backends_cpu_sys_ns` (the
/// PHP backends' CPU over a comparison's php or wordpress level: PHP-FPM, MariaDB), version 12
/// `levels.generator` (the load threads' work and waiting, where they ran, non-2xx by status:
/// [`generator`]), version 13 the `thresholds` judged on each level ([`thresholds`]), version 14 the `scripts`
/// a run ran with ([`script`]), version 15 `levels.quic` (an HTTP/3 level's QUIC figures: [`quic`]), version 16
/// `levels.notes` (how the server ran a comparison level's workload: [`notes`]);
/// an older file is upgraded when opened for writing and read as it is otherwise.
///
/// Two builds wrote a "version 6": main's (with `levels.ended`, no `configs`) and, briefly, the lab
/// fairness branch's (with `configs`, no `levels.ended`). So from version 6 on, readers and the
/// upgrade look at what the file holds rather than trust the number, and every step is idempotent.
pub const SCHEMA_VERSION: i32 = 16;

pub(crate) const SCHEMA: &str = "
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    started_unix  REAL    NOT NULL,
    finished_unix REAL,
    command_line  TEXT    NOT NULL,
    version       TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    target        TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    cpu_model     TEXT    NOT NULL,
    cores         INTEGER NOT NULL,
    kernel        TEXT    NOT NULL,
    hostname      TEXT    NOT NULL,
    protocol      TEXT,
    h2_streams    INTEGER
);
CREATE TABLE levels (
    id                  INTEGER PRIMARY KEY,
    run_id              INTEGER NOT NULL REFERENCES runs(id),
    grp                 TEXT    NOT NULL,
    clients             INTEGER NOT NULL,
    server_version      TEXT,
    started_unix        REAL    NOT NULL,
    elapsed_ns          INTEGER NOT NULL,
    complete            INTEGER NOT NULL,
    failed_connect      INTEGER NOT NULL,
    failed_receive      INTEGER NOT NULL,
    failed_length       INTEGER NOT NULL,
    failed_exceptions   INTEGER NOT NULL,
    write_errors        INTEGER NOT NULL,
    non_2xx             INTEGER NOT NULL,
    keep_alive_requests INTEGER NOT NULL,
    connections         INTEGER NOT NULL,
    total_bytes         INTEGER NOT NULL,
    body_bytes          INTEGER NOT NULL,
    document_length     INTEGER,
    server_software     TEXT,
    latency_sum_us      TEXT    NOT NULL,
    cpu_user_ns         INTEGER NOT NULL,
    cpu_sys_ns          INTEGER NOT NULL,
    late_sends          INTEGER NOT NULL,
    per_request         TEXT    NOT NULL,
    interrupted         INTEGER NOT NULL,
    hist_total          BLOB    NOT NULL,
    hist_connect        BLOB    NOT NULL,
    hist_waiting        BLOB    NOT NULL,
    hist_processing     BLOB    NOT NULL,
    first_error         TEXT,
    sent_bytes          INTEGER NOT NULL DEFAULT 0,
    server_cpu_user_ns  INTEGER,
    server_cpu_sys_ns   INTEGER,
    server_peak_rss_kib INTEGER,
    ended               TEXT,
    diagnosis           TEXT,
    h2                  TEXT,
    h2_connect          BLOB,
    h2_first_byte       BLOB,
    round               INTEGER,
    backends_cpu_user_ns INTEGER,
    backends_cpu_sys_ns  INTEGER,
    generator           TEXT,
    quic                TEXT,
    notes               TEXT
);
CREATE INDEX levels_by_run ON levels(run_id, id);
";

impl Store {
    /// Checks the file is webstand's and not newer than this build: its schema version, or None when
    /// the file is empty (new).
    pub(crate) fn check_schema(&self) -> anyhow::Result<Option<i32>> {
        let shown = self.path.display();
        // One statement, so one snapshot: another process creating the schema meanwhile is seen
        // either not at all or whole.
        let (app_id, version, objects): (i32, i32, i64) = self
            .conn
            .query_row(
                "SELECT (SELECT application_id FROM pragma_application_id),
                        (SELECT user_version FROM pragma_user_version),
                        (SELECT count(*) FROM sqlite_master)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::NotADatabase) => {
                    anyhow::anyhow!("{shown} is not a webstand history database (not SQLite)")
                }
                _ => anyhow::Error::new(e).context(format!("reading {shown}")),
            })?;
        if app_id == 0 && version == 0 && objects == 0 {
            return Ok(None);
        }
        if app_id != APPLICATION_ID {
            bail!("{shown} is not a webstand history database (application_id {app_id:#x}); pass another --db PATH");
        }
        if version > SCHEMA_VERSION {
            bail!(
                "{shown} was written by a newer webstand (history schema {version}; this one reads up to {SCHEMA_VERSION}); upgrade webstand or pass another --db PATH"
            );
        }
        if version < 1 {
            bail!("{shown} has an unknown webstand history schema {version}");
        }
        Ok(Some(version))
    }

    /// Switches a new file to WAL. SQLite answers this pragma "database is locked" at once, without
    /// the busy handler, while another process holds the file (several opening a new history at
    /// once), so it is tried again for as long as the busy timeout would have waited.
    fn enable_wal(&self) -> rusqlite::Result<()> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match self
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                other => return other,
            }
        }
    }

    /// Creates the schema in a new file, or brings an older one up to this version. Several
    /// processes may open a new history at once (parallel tests, two benches): the check is repeated
    /// under an immediate (write-locked) transaction, so exactly one of them creates or upgrades.
    pub(crate) fn prepare_schema(&self) -> anyhow::Result<()> {
        let shown = self.path.display();
        if self.check_schema()?.is_none() {
            // WAL (persistent, and not allowed inside a transaction): readers never block the
            // writer, and a crash mid-write leaves earlier commits intact.
            self.enable_wal().context("enabling WAL")?;
        }
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .with_context(|| format!("locking {shown}"))?;
        let outcome = self.check_schema().and_then(|version| {
            match version {
                None => {
                    self.conn.execute_batch(SCHEMA)?;
                    self.conn.execute_batch(probe::SCHEMA)?;
                    self.conn.execute_batch(configs::SCHEMA)?;
                    self.conn.execute_batch(thresholds::SCHEMA)?;
                    self.conn.execute_batch(script::SCHEMA)?;
                    self.conn
                        .execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID};"))?;
                }
                Some(v) if v < SCHEMA_VERSION => self.upgrade(v)?,
                Some(_) => return Ok(()), // another process got there first
            }
            self.conn
                .execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))?;
            Ok(())
        });
        match outcome {
            Ok(()) => self
                .conn
                .execute_batch("COMMIT")
                .with_context(|| format!("writing the history schema of {shown}")),
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// The changes from schema `from` to this one (inside [`Store::prepare_schema`]'s transaction).
    pub(crate) fn upgrade(&self, from: i32) -> anyhow::Result<()> {
        if from < 2 {
            self.conn
                .execute_batch("ALTER TABLE levels ADD COLUMN first_error TEXT;")?;
        }
        if from < 3 {
            self.conn.execute_batch(
                "ALTER TABLE levels ADD COLUMN sent_bytes INTEGER NOT NULL DEFAULT 0;",
            )?;
        }
        if from < 4 {
            self.conn.execute_batch(
                "ALTER TABLE levels ADD COLUMN server_cpu_user_ns INTEGER;
                 ALTER TABLE levels ADD COLUMN server_cpu_sys_ns INTEGER;
                 ALTER TABLE levels ADD COLUMN server_peak_rss_kib INTEGER;",
            )?;
        }
        if from < probe::SINCE {
            self.conn.execute_batch(probe::SCHEMA)?;
        }
        if !self.has_column("levels", "ended")? {
            self.conn
                .execute_batch("ALTER TABLE levels ADD COLUMN ended TEXT;")?;
        }
        if from < configs::SINCE {
            // CREATE ... IF NOT EXISTS: a branch-built version 6 file already has the table.
            self.conn.execute_batch(configs::SCHEMA)?;
        }
        if !self.has_column("levels", "diagnosis")? {
            self.conn
                .execute_batch("ALTER TABLE levels ADD COLUMN diagnosis TEXT;")?;
        }
        for (table, column, kind) in h2::COLUMNS {
            if !self.has_column(table, column)? {
                self.conn
                    .execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind};"))?;
            }
        }
        if !self.has_column("levels", "round")? {
            self.conn
                .execute_batch("ALTER TABLE levels ADD COLUMN round INTEGER;")?;
        }
        for column in BACKENDS_CPU {
            if !self.has_column("levels", column)? {
                self.conn
                    .execute_batch(&format!("ALTER TABLE levels ADD COLUMN {column} INTEGER;"))?;
            }
        }
        for (table, column, kind) in [generator::COLUMN, quic::COLUMN, notes::COLUMN] {
            if !self.has_column(table, column)? {
                self.conn
                    .execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind};"))?;
            }
        }
        if from < thresholds::SINCE {
            self.conn.execute_batch(thresholds::SCHEMA)?;
        }
        self.conn.execute_batch(script::SCHEMA)?; // CREATE ... IF NOT EXISTS
        Ok(())
    }

    /// Whether `table` has `column` (a version 6 file may or may not have `levels.ended`).
    pub(crate) fn has_column(&self, table: &str, column: &str) -> anyhow::Result<bool> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = ?2",
            [table, column],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// Whether the file has `table` (a version 6 file may or may not have `configs`).
    pub(crate) fn has_table(&self, table: &str) -> anyhow::Result<bool> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }
}
