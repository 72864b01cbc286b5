//! The results history: every bench, sweep and compare run in an embedded SQLite database.
//!
//! A run is a row in `runs` (when, the command line, webstand's version, kind, target, status and the
//! machine it ran on); each measured level is a row in `levels` with every count of its `RunResult`
//! and the four merged HDR histograms as V2-serialized BLOBs. Each level is written in its own
//! transaction (WAL journal), so an interrupted run keeps every level completed before the stop and a
//! crash never touches earlier runs.
//!
//! The file is marked as webstand's with `PRAGMA application_id` and versioned with
//! `PRAGMA user_version`: a database that is someone else's, or from a newer webstand, is refused
//! before anything is written. Readers ([`Store::open_existing`]) never create or change a file.
//!
//! This crate knows SQLite and `RunResult`; it knows nothing of sockets, reports or the command line.

use anyhow::{bail, Context};
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use rusqlite::{
    params, Connection, OpenFlags, OptionalExtension, Row, Transaction, TransactionBehavior,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use webstand_engine::{CpuTime, Ended, Failures, Histograms, RunResult};

mod configs;
mod machine;
pub use configs::StoredConfig;
pub use machine::Machine;

/// A run's id in the history.
pub type RunId = i64;

/// What a run was, recorded when it begins.
#[derive(Clone, Debug, Default)]
pub struct RunMeta {
    /// "bench", "sweep" or "compare".
    pub kind: String,
    /// The command line as typed.
    pub command_line: String,
    /// The target URL (or "lab" for a comparison).
    pub target: String,
}

/// "WBST": marks a SQLite file as webstand's history (PRAGMA application_id).
pub const APPLICATION_ID: i32 = 0x5742_5354;
/// The schema this build writes and reads. A file with a higher `user_version` is refused.
/// Version 2 added `levels.first_error`, version 3 `levels.sent_bytes`, version 4 the server's CPU
/// and peak memory per level, version 5 the probe's cases ([`probe`]), version 6 `levels.ended`
/// (unreachable / target lost), version 7 the `configs` a comparison's servers ran with ([`configs`]);
/// an older file is upgraded when opened for writing and read as it is otherwise.
///
/// Two builds wrote a "version 6": main's (with `levels.ended`, no `configs`) and, briefly, the lab
/// fairness branch's (with `configs`, no `levels.ended`). So from version 6 on, readers and the
/// upgrade look at what the file holds rather than trust the number, and every step is idempotent.
pub const SCHEMA_VERSION: i32 = 7;

const SCHEMA: &str = "
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
    hostname      TEXT    NOT NULL
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
    ended               TEXT
);
CREATE INDEX levels_by_run ON levels(run_id, id);
";

mod probe;
pub use probe::ProbeCase;

/// One line of `webstand history`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub id: RunId,
    pub started_unix: f64,
    pub kind: String,
    pub command_line: String,
    pub target: String,
    pub status: String,
    pub levels: u64,
}

/// A run read back from the history.
#[derive(Clone, Debug)]
pub struct StoredRun {
    pub id: RunId,
    pub meta: RunMeta,
    pub started_unix: f64,
    /// None while the run has not finished (or when its process died before finishing).
    pub finished_unix: Option<f64>,
    /// webstand's version that measured it.
    pub version: String,
    /// "running" until finished; then an `Outcome`'s status: "complete", "errors", "failed",
    /// "target lost" or "interrupted".
    pub status: String,
    pub machine: Machine,
    pub levels: Vec<StoredLevel>,
}

/// One measured level of a stored run, in the order it was added.
#[derive(Clone, Debug)]
pub struct StoredLevel {
    pub group: String,
    pub clients: usize,
    pub server_version: Option<String>,
    pub result: RunResult,
    /// The server's side, when the lab measured it ([`Store::add_server_figures`]).
    pub server: Option<ServerFigures>,
}

/// What the lab measured of the server during a level: its process tree's CPU time and peak memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerFigures {
    pub cpu: CpuTime,
    pub peak_rss_kib: Option<u64>,
}

impl ServerFigures {
    /// Server CPU-µs per complete request of `result` (user + sys).
    pub fn cpu_us_per_request(&self, result: &RunResult) -> f64 {
        if result.complete == 0 {
            0.0
        } else {
            self.cpu.total().as_secs_f64() * 1e6 / result.complete as f64
        }
    }
}

impl StoredRun {
    /// The groups (series) of this run in first-seen order.
    pub fn groups(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for l in &self.levels {
            if !out.contains(&l.group.as_str()) {
                out.push(&l.group);
            }
        }
        out
    }
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The file's schema version (older files are read as they are, upgraded only by writers).
    version: i32,
}

/// The default database: `$XDG_DATA_HOME/webstand/history.db`, or `~/.local/share/webstand/history.db`.
pub fn default_path() -> anyhow::Result<PathBuf> {
    let data = match std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        _ => {
            let home = std::env::var_os("HOME")
                .context("neither XDG_DATA_HOME nor HOME is set; pass --db PATH")?;
            PathBuf::from(home).join(".local/share")
        }
    };
    Ok(data.join("webstand").join("history.db"))
}

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// u64 counts as SQLite integers (i64); counts beyond i64 cannot occur in a bounded run.
fn sql_u64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn serialize(h: &Histogram<u64>) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut buf)
        .map_err(|e| anyhow::anyhow!("serializing a histogram: {e:?}"))?;
    Ok(buf)
}

fn deserialize(bytes: &[u8]) -> anyhow::Result<Histogram<u64>> {
    let mut reader = bytes;
    Deserializer::new()
        .deserialize(&mut reader)
        .map_err(|e| anyhow::anyhow!("reading a stored histogram: {e:?}"))
}

impl Store {
    /// Opens (creating if needed) the database at `path`, or the default one in the user's data dir.
    /// Refuses a file that is not webstand's history or is from a newer schema, without changing it.
    pub fn open(path: Option<&Path>) -> anyhow::Result<Store> {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None => default_path()?,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| {
                format!("cannot create the history directory {}", dir.display())
            })?;
        }
        let conn = Connection::open(&path)
            .with_context(|| format!("cannot open the history database {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        let store = Store {
            conn,
            path,
            version: SCHEMA_VERSION,
        };
        if store.check_schema()? != Some(SCHEMA_VERSION) {
            store.prepare_schema()?;
        }
        Ok(store)
    }

    /// Opens an existing history for reading (history, show, diff, export, report): never creates
    /// the file and never writes to it.
    pub fn open_existing(path: Option<&Path>) -> anyhow::Result<Store> {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None => default_path()?,
        };
        if !path.is_file() {
            bail!(
                "no history database at {} (bench, sweep and compare save runs there; or pass --db PATH)",
                path.display()
            );
        }
        // Read-write without create: a read-only connection cannot open a WAL file whose -shm is
        // missing; nothing below writes. A file we may not write (another user's, a read-only
        // mount) is still worth a read-only try.
        let base = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(&path, base | OpenFlags::SQLITE_OPEN_READ_WRITE)
            .or_else(|_| {
                Connection::open_with_flags(&path, base | OpenFlags::SQLITE_OPEN_READ_ONLY)
            })
            .with_context(|| format!("cannot open the history database {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        let mut store = Store {
            conn,
            path,
            version: SCHEMA_VERSION,
        };
        // A file created but never written to reads as an empty history.
        store.version = store.check_schema()?.unwrap_or(SCHEMA_VERSION);
        Ok(store)
    }

    /// The database file in use.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks the file is webstand's and not newer than this build: its schema version, or None when
    /// the file is empty (new).
    fn check_schema(&self) -> anyhow::Result<Option<i32>> {
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

    /// Creates the schema in a new file, or brings an older one up to this version. Several
    /// processes may open a new history at once (parallel tests, two benches): the check is repeated
    /// under an immediate (write-locked) transaction, so exactly one of them creates or upgrades.
    fn prepare_schema(&self) -> anyhow::Result<()> {
        let shown = self.path.display();
        if self.check_schema()?.is_none() {
            // WAL (persistent, and not allowed inside a transaction): readers never block the
            // writer, and a crash mid-write leaves earlier commits intact.
            self.conn
                .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
                .context("enabling WAL")?;
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
    fn upgrade(&self, from: i32) -> anyhow::Result<()> {
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
        Ok(())
    }

    /// Whether `table` has `column` (a version 6 file may or may not have `levels.ended`).
    fn has_column(&self, table: &str, column: &str) -> anyhow::Result<bool> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = ?2",
            [table, column],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// Whether the file has `table` (a version 6 file may or may not have `configs`).
    fn has_table(&self, table: &str) -> anyhow::Result<bool> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }

    /// Records the start of a run (status "running").
    pub fn begin_run(&self, meta: &RunMeta) -> anyhow::Result<RunId> {
        let m = Machine::current();
        self.conn
            .execute(
                "INSERT INTO runs (started_unix, command_line, version, kind, target, status, cpu_model, cores, kernel, hostname)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7, ?8, ?9)",
                params![now_unix(), meta.command_line, env!("CARGO_PKG_VERSION"), meta.kind, meta.target, m.cpu_model, m.cores, m.kernel, m.hostname],
            )
            .with_context(|| format!("saving the run in {}", self.path.display()))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Records one measured level, in its own transaction. `group` names the series it belongs to
    /// ("" for a bench run, the workload for a sweep, "server/workload" for a comparison);
    /// `server_version` is the target's version where known.
    pub fn add_level(
        &self,
        run: RunId,
        group: &str,
        clients: usize,
        server_version: Option<&str>,
        result: &RunResult,
    ) -> anyhow::Result<()> {
        let r = result;
        let h = &r.histograms;
        let blobs = [
            serialize(&h.total)?,
            serialize(&h.connect)?,
            serialize(&h.waiting)?,
            serialize(&h.processing)?,
        ];
        // Immediate: take the write lock first, so a concurrent writer makes this wait (busy
        // timeout) instead of failing when a read-then-write transaction cannot upgrade.
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let exists: Option<i64> = tx
            .query_row("SELECT id FROM runs WHERE id = ?1", [run], |r| r.get(0))
            .optional()?;
        if exists.is_none() {
            bail!("run {run} is not in {}", self.path.display());
        }
        tx.execute(
            "INSERT INTO levels (run_id, grp, clients, server_version, started_unix, elapsed_ns, complete,
                failed_connect, failed_receive, failed_length, failed_exceptions, write_errors, non_2xx,
                keep_alive_requests, connections, total_bytes, body_bytes, document_length, server_software,
                latency_sum_us, cpu_user_ns, cpu_sys_ns, late_sends, per_request, interrupted,
                hist_total, hist_connect, hist_waiting, hist_processing, first_error, sent_bytes, ended)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
                ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32)",
            params![
                run,
                group,
                sql_u64(clients as u64),
                server_version,
                r.started_unix,
                sql_u64(r.elapsed.as_nanos() as u64),
                sql_u64(r.complete),
                sql_u64(r.failed.connect),
                sql_u64(r.failed.receive),
                sql_u64(r.failed.length),
                sql_u64(r.failed.exceptions),
                sql_u64(r.write_errors),
                sql_u64(r.non_2xx),
                sql_u64(r.keep_alive_requests),
                sql_u64(r.connections),
                sql_u64(r.total_bytes),
                sql_u64(r.body_bytes),
                r.document_length.map(sql_u64),
                r.server_software,
                // u128 does not fit an SQLite integer; decimal text keeps it exact.
                r.latency_sum_us.to_string(),
                sql_u64(r.cpu.user.as_nanos() as u64),
                sql_u64(r.cpu.sys.as_nanos() as u64),
                sql_u64(r.late_sends),
                serde_json::to_string(&r.per_request)?,
                r.interrupted,
                blobs[0],
                blobs[1],
                blobs[2],
                blobs[3],
                r.first_error,
                sql_u64(r.sent_bytes),
                r.ended.map(|e| e.name()),
            ],
        )?;
        tx.commit()
            .with_context(|| format!("saving a level of run {run} in {}", self.path.display()))?;
        Ok(())
    }

    /// Adds the server's figures to the run's latest level of `group` at `clients` (the lab learns them
    /// after the level is saved). In its own transaction, like a level.
    pub fn add_server_figures(
        &self,
        run: RunId,
        group: &str,
        clients: usize,
        figures: &ServerFigures,
    ) -> anyhow::Result<()> {
        let n = self
            .conn
            .execute(
                "UPDATE levels SET server_cpu_user_ns = ?1, server_cpu_sys_ns = ?2, server_peak_rss_kib = ?3
                 WHERE id = (SELECT max(id) FROM levels WHERE run_id = ?4 AND grp = ?5 AND clients = ?6)",
                params![
                    sql_u64(figures.cpu.user.as_nanos() as u64),
                    sql_u64(figures.cpu.sys.as_nanos() as u64),
                    figures.peak_rss_kib.map(sql_u64),
                    run,
                    group,
                    sql_u64(clients as u64)
                ],
            )
            .with_context(|| format!("saving server figures of run {run} in {}", self.path.display()))?;
        if n == 0 {
            bail!(
                "run {run} has no level {group:?} at {clients} clients in {}",
                self.path.display()
            );
        }
        Ok(())
    }

    /// Marks a run finished with an `Outcome`'s status ("complete", "errors", "failed", "target lost",
    /// "interrupted").
    pub fn finish_run(&self, run: RunId, status: &str) -> anyhow::Result<()> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET status = ?1, finished_unix = ?2 WHERE id = ?3",
                params![status, now_unix(), run],
            )
            .with_context(|| format!("finishing run {run} in {}", self.path.display()))?;
        if n == 0 {
            bail!("run {run} is not in {}", self.path.display());
        }
        Ok(())
    }

    /// Every run, oldest first, with its number of levels.
    pub fn runs(&self) -> anyhow::Result<Vec<RunSummary>> {
        let mut st = self.conn.prepare(
            "SELECT r.id, r.started_unix, r.kind, r.target, r.status, (SELECT count(*) FROM levels l WHERE l.run_id = r.id),
                r.command_line
             FROM runs r ORDER BY r.id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(RunSummary {
                id: r.get(0)?,
                started_unix: r.get(1)?,
                kind: r.get(2)?,
                command_line: r.get(6)?,
                target: r.get(3)?,
                status: r.get(4)?,
                levels: r.get::<_, i64>(5)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The newest run's id, if any.
    pub fn last_run(&self) -> anyhow::Result<Option<RunId>> {
        Ok(self
            .conn
            .query_row("SELECT max(id) FROM runs", [], |r| r.get(0))?)
    }

    /// A run with all its levels, histograms included.
    pub fn load_run(&self, id: RunId) -> anyhow::Result<StoredRun> {
        let run = self
            .conn
            .query_row(
                "SELECT id, kind, command_line, target, started_unix, finished_unix, version, status, cpu_model, cores, kernel, hostname
                 FROM runs WHERE id = ?1",
                [id],
                |r| {
                    Ok(StoredRun {
                        id: r.get(0)?,
                        meta: RunMeta { kind: r.get(1)?, command_line: r.get(2)?, target: r.get(3)? },
                        started_unix: r.get(4)?,
                        finished_unix: r.get(5)?,
                        version: r.get(6)?,
                        status: r.get(7)?,
                        machine: Machine { cpu_model: r.get(8)?, cores: r.get(9)?, kernel: r.get(10)?, hostname: r.get(11)? },
                        levels: Vec::new(),
                    })
                },
            )
            .optional()?;
        let Some(mut run) = run else {
            bail!(
                "no run {id} in {} (`webstand history` lists them)",
                self.path.display()
            );
        };
        // Columns added by later schemas read as NULL from older files.
        let first_error = if self.version >= 2 {
            "first_error"
        } else {
            "NULL"
        };
        let sent_bytes = if self.version >= 3 { "sent_bytes" } else { "0" };
        let server = if self.version >= 4 {
            "server_cpu_user_ns, server_cpu_sys_ns, server_peak_rss_kib"
        } else {
            "NULL, NULL, NULL"
        };
        let ended = if self.version >= 6 && self.has_column("levels", "ended")? {
            "ended"
        } else {
            "NULL"
        };
        let mut st = self.conn.prepare(&format!(
            "SELECT grp, clients, server_version, started_unix, elapsed_ns, complete, failed_connect, failed_receive,
                failed_length, failed_exceptions, write_errors, non_2xx, keep_alive_requests, connections,
                total_bytes, body_bytes, document_length, server_software, latency_sum_us, cpu_user_ns,
                cpu_sys_ns, late_sends, per_request, interrupted, hist_total, hist_connect, hist_waiting,
                hist_processing, {first_error}, {sent_bytes}, {server}, {ended}
             FROM levels WHERE run_id = ?1 ORDER BY id"
        ))?;
        let mut rows = st.query([id])?;
        while let Some(row) = rows.next()? {
            run.levels
                .push(level_from_row(row).with_context(|| format!("reading run {id}"))?);
        }
        Ok(run)
    }
}

#[allow(clippy::needless_update)]
fn level_from_row(r: &Row) -> anyhow::Result<StoredLevel> {
    let u = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)?.max(0) as u64) };
    let latency_sum: String = r.get(18)?;
    let per_request: String = r.get(22)?;
    let result = RunResult {
        started_unix: r.get(3)?,
        elapsed: Duration::from_nanos(u(4)?),
        complete: u(5)?,
        failed: Failures {
            connect: u(6)?,
            receive: u(7)?,
            length: u(8)?,
            exceptions: u(9)?,
        },
        write_errors: u(10)?,
        non_2xx: u(11)?,
        keep_alive_requests: u(12)?,
        connections: u(13)?,
        total_bytes: u(14)?,
        body_bytes: u(15)?,
        document_length: r.get::<_, Option<i64>>(16)?.map(|v| v.max(0) as u64),
        server_software: r.get(17)?,
        latency_sum_us: latency_sum.parse().context("bad latency sum")?,
        histograms: Histograms {
            total: deserialize(&r.get::<_, Vec<u8>>(24)?)?,
            connect: deserialize(&r.get::<_, Vec<u8>>(25)?)?,
            waiting: deserialize(&r.get::<_, Vec<u8>>(26)?)?,
            processing: deserialize(&r.get::<_, Vec<u8>>(27)?)?,
        },
        cpu: CpuTime {
            user: Duration::from_nanos(u(19)?),
            sys: Duration::from_nanos(u(20)?),
        },
        late_sends: u(21)?,
        per_request: serde_json::from_str(&per_request).context("bad per-request counts")?,
        interrupted: r.get(23)?,
        first_error: r.get(28)?,
        sent_bytes: u(29)?,
        ended: r
            .get::<_, Option<String>>(33)?
            .as_deref()
            .and_then(Ended::from_name),
        // Fields the engine adds later start at their defaults until the schema stores them.
        ..Default::default()
    };
    let ns = |i: usize| -> rusqlite::Result<Option<Duration>> {
        Ok(r.get::<_, Option<i64>>(i)?
            .map(|v| Duration::from_nanos(v.max(0) as u64)))
    };
    let server = match (ns(30)?, ns(31)?) {
        (Some(user), Some(sys)) => Some(ServerFigures {
            cpu: CpuTime { user, sys },
            peak_rss_kib: r.get::<_, Option<i64>>(32)?.map(|v| v.max(0) as u64),
        }),
        _ => None,
    };
    Ok(StoredLevel {
        group: r.get(0)?,
        clients: u(1)? as usize,
        server_version: r.get(2)?,
        result,
        server,
    })
}

/// A synthetic result for the tests below: `complete` requests whose latencies spread evenly from
/// `base_us` to twice that.
#[cfg(test)]
fn synthetic_result(complete: u64, base_us: u64, elapsed: Duration) -> RunResult {
    let mut r = RunResult {
        elapsed,
        complete,
        connections: complete,
        total_bytes: complete * 2300,
        body_bytes: complete * 2048,
        ..Default::default()
    };
    r.document_length = Some(2048);
    r.server_software = Some("synthetic/1.0".into());
    for i in 0..complete {
        let v = base_us + base_us * i / complete.max(1);
        r.histograms.total.record(v).unwrap();
        r.histograms.connect.record(v / 10 + 1).unwrap();
        r.histograms.waiting.record(v / 2 + 1).unwrap();
        r.histograms.processing.record(v - v / 10).unwrap();
        r.latency_sum_us += v as u128;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> RunMeta {
        RunMeta {
            kind: "sweep".into(),
            command_line: "webstand sweep http://127.0.0.1:1/".into(),
            target: "http://127.0.0.1:1/".into(),
        }
    }

    #[test]
    fn a_run_comes_back_as_it_was_saved() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("sub/history.db");
        let s = Store::open(Some(&db)).unwrap();
        let id = s.begin_run(&meta()).unwrap();
        let mut r = synthetic_result(500, 1000, Duration::from_millis(1500));
        r.failed = Failures {
            connect: 1,
            receive: 2,
            length: 3,
            exceptions: 4,
        };
        r.non_2xx = 7;
        r.cpu = CpuTime {
            user: Duration::from_micros(1234),
            sys: Duration::from_micros(99),
        };
        r.per_request = vec![400, 100];
        r.latency_sum_us = u64::MAX as u128 + 5;
        r.sent_bytes = 98765;
        r.ended = Some(Ended::TargetLost);
        s.add_level(id, "2k.html", 8, Some("nginx/1.22"), &r)
            .unwrap();
        s.add_level(
            id,
            "2k.html",
            16,
            None,
            &synthetic_result(10, 50, Duration::from_secs(1)),
        )
        .unwrap();
        s.finish_run(id, "complete").unwrap();
        drop(s);

        let s = Store::open_existing(Some(&db)).unwrap();
        let runs = s.runs().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(
            (runs[0].id, runs[0].levels, runs[0].status.as_str()),
            (id, 2, "complete")
        );
        let run = s.load_run(id).unwrap();
        assert_eq!(run.meta.command_line, meta().command_line);
        assert_eq!(run.version, env!("CARGO_PKG_VERSION"));
        assert!(
            run.machine.cores >= 1 && run.machine.kernel.contains("Linux"),
            "{:?}",
            run.machine
        );
        assert!(run.finished_unix.unwrap() >= run.started_unix);
        let l = &run.levels[0];
        assert_eq!(
            (l.group.as_str(), l.clients, l.server_version.as_deref()),
            ("2k.html", 8, Some("nginx/1.22"))
        );
        let back = &l.result;
        assert_eq!(back.complete, 500);
        assert_eq!(back.failed, r.failed);
        assert_eq!(back.elapsed, r.elapsed);
        assert_eq!(back.cpu, r.cpu);
        assert_eq!(back.per_request, vec![400, 100]);
        assert_eq!(back.latency_sum_us, r.latency_sum_us);
        assert_eq!(
            (back.sent_bytes, back.ended),
            (98765, Some(Ended::TargetLost))
        );
        assert_eq!(
            (
                back.non_2xx,
                back.document_length,
                back.server_software.clone()
            ),
            (7, Some(2048), Some("synthetic/1.0".into()))
        );
        assert_eq!(back.histograms.total, r.histograms.total);
        assert_eq!(back.histograms.processing, r.histograms.processing);
        assert_eq!(back.histograms.total.len(), 500);
        assert_eq!(run.levels[1].clients, 16);
        assert_eq!(l.server, None);
        let figures = ServerFigures {
            cpu: CpuTime {
                user: Duration::from_millis(300),
                sys: Duration::from_millis(200),
            },
            peak_rss_kib: None,
        };
        s.add_server_figures(id, "2k.html", 8, &figures).unwrap();
        assert!(
            s.add_server_figures(id, "2k.html", 9, &figures).is_err(),
            "no such level"
        );
        let again = s.load_run(id).unwrap();
        assert_eq!(again.levels[0].server, Some(figures));
        assert_eq!(
            again.levels[0]
                .server
                .unwrap()
                .cpu_us_per_request(&again.levels[0].result),
            1000.0
        );
        assert_eq!(s.last_run().unwrap(), Some(id));
    }

    #[test]
    fn an_unfinished_run_keeps_its_levels_across_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let s = Store::open(Some(&db)).unwrap();
        let id = s.begin_run(&meta()).unwrap();
        s.add_level(
            id,
            "",
            1,
            None,
            &synthetic_result(5, 100, Duration::from_secs(1)),
        )
        .unwrap();
        std::mem::forget(s); // as if the process died: no clean close
        let run = Store::open(Some(&db)).unwrap().load_run(id).unwrap();
        assert_eq!((run.status.as_str(), run.levels.len()), ("running", 1));
    }

    #[test]
    fn foreign_newer_and_missing_databases_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        // Another application's SQLite file.
        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        let before = std::fs::read(&other).unwrap();
        let e = Store::open(Some(&other)).err().unwrap().to_string();
        assert!(e.contains("not a webstand history database"), "{e}");
        assert_eq!(std::fs::read(&other).unwrap(), before);
        // A text file.
        let text = dir.path().join("notes.txt");
        std::fs::write(
            &text,
            "hello, this is not SQLite at all, just some words to fill a page",
        )
        .unwrap();
        let e = format!("{:#}", Store::open_existing(Some(&text)).err().unwrap());
        assert!(e.contains("not a webstand history database"), "{e}");
        // A newer schema.
        let newer = dir.path().join("newer.db");
        Store::open(Some(&newer)).unwrap();
        Connection::open(&newer)
            .unwrap()
            .execute_batch("PRAGMA user_version = 99")
            .unwrap();
        let e = Store::open(Some(&newer)).err().unwrap().to_string();
        assert!(e.contains("newer webstand") && e.contains("99"), "{e}");
        // Missing, for a reader: not created.
        let missing = dir.path().join("missing.db");
        assert!(Store::open_existing(Some(&missing)).is_err());
        assert!(!missing.exists());
        // Unknown run.
        let s = Store::open(Some(&dir.path().join("ok.db"))).unwrap();
        let e = s.load_run(42).err().unwrap().to_string();
        assert!(e.contains("no run 42"), "{e}");
        assert!(s.add_level(42, "", 1, None, &RunResult::default()).is_err());
        assert!(s.finish_run(42, "complete").is_err());
    }

    #[test]
    fn a_version_1_file_is_read_as_is_and_upgraded_by_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("v1.db");
        let s = Store::open(Some(&db)).unwrap();
        let id = s.begin_run(&meta()).unwrap();
        s.add_level(
            id,
            "",
            1,
            None,
            &synthetic_result(5, 100, Duration::from_secs(1)),
        )
        .unwrap();
        drop(s);
        // Make it what version 1 wrote: no first_error column.
        Connection::open(&db)
            .unwrap()
            .execute_batch(
                "ALTER TABLE levels DROP COLUMN first_error; ALTER TABLE levels DROP COLUMN sent_bytes;
                 ALTER TABLE levels DROP COLUMN server_cpu_user_ns; ALTER TABLE levels DROP COLUMN server_cpu_sys_ns;
                 ALTER TABLE levels DROP COLUMN server_peak_rss_kib; ALTER TABLE levels DROP COLUMN ended;
                 DROP TABLE configs; DROP TABLE probe_cases; PRAGMA user_version = 1;",
            )
            .unwrap();
        let reader = Store::open_existing(Some(&db)).unwrap();
        assert_eq!(
            reader.load_run(id).unwrap().levels[0].result.first_error,
            None
        );
        drop(reader);
        let version = |db: &Path| -> i32 {
            Connection::open(db)
                .unwrap()
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(version(&db), 1, "a reader changes nothing");
        let writer = Store::open(Some(&db)).unwrap();
        let mut failed = synthetic_result(0, 100, Duration::from_secs(1));
        failed.first_error = Some("connect to 127.0.0.1:1: Connection refused".into());
        failed.ended = Some(Ended::Unreachable);
        failed.sent_bytes = 1234;
        writer.add_level(id, "", 2, None, &failed).unwrap();
        assert_eq!(version(&db), SCHEMA_VERSION);
        let run = writer.load_run(id).unwrap();
        assert_eq!(
            run.levels[1].result.first_error.as_deref(),
            Some("connect to 127.0.0.1:1: Connection refused")
        );
        assert_eq!(
            (run.levels[0].result.ended, run.levels[1].result.ended),
            (None, Some(Ended::Unreachable))
        );
        assert_eq!(
            (
                run.levels[0].result.sent_bytes,
                run.levels[1].result.sent_bytes
            ),
            (0, 1234)
        );
        let figures = ServerFigures {
            cpu: CpuTime {
                user: Duration::from_millis(5),
                sys: Duration::from_millis(2),
            },
            peak_rss_kib: Some(4096),
        };
        writer.add_server_figures(id, "", 2, &figures).unwrap();
        let run = writer.load_run(id).unwrap();
        assert_eq!(
            (run.levels[0].server, run.levels[1].server),
            (None, Some(figures))
        );
    }

    #[test]
    fn many_processes_opening_a_new_history_at_once_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let db = db.clone();
                std::thread::spawn(move || {
                    let s = Store::open(Some(&db))?;
                    let id = s.begin_run(&meta())?;
                    s.add_level(
                        id,
                        "",
                        1,
                        None,
                        &synthetic_result(3, 100, Duration::from_secs(1)),
                    )?;
                    s.finish_run(id, "complete")
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let runs = Store::open_existing(Some(&db)).unwrap().runs().unwrap();
        assert_eq!(runs.len(), 8);
        assert!(runs.iter().all(|r| r.levels == 1 && r.status == "complete"));
    }

    #[test]
    fn default_path_follows_xdg() {
        // Only reads the environment; run-order independent because it sets nothing.
        let p = default_path().unwrap();
        assert!(p.ends_with("webstand/history.db"), "{}", p.display());
    }
}
