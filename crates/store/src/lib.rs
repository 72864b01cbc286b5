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
//!
//! The files: `schema.rs` (the application id, the schema version, creating and upgrading a file),
//! `runs.rs` (a run's row: begin, finish, list, load), `levels.rs` (a level's row with its histograms
//! as V2 blobs, and the server's figures), `h2.rs` (the protocol a run spoke, an HTTP/2 level's
//! h2load figures), `quic.rs` (an HTTP/3 level's QUIC figures), `notes.rs` (a comparison level's notes),
//! `comparison.rs` (a stored comparison read back into the model compare printed), `probe.rs` (probe cases), `thresholds.rs` (the thresholds judged on a level), `configs.rs` (a lab run's
//! server configs), `machine.rs` (the machine a run ran on), `settings.rs` (what a stored run says
//! of how it ran: its options, the protocol each level spoke, its settings; which run a reference
//! names).

use anyhow::{bail, Context};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod comparison;
mod configs;
mod generator;
mod h2;
mod histogram;
mod levels;
mod machine;
mod notes;
mod probe;
mod quic;
mod runs;
mod schema;
mod script;
mod settings;
mod thresholds;
pub use configs::StoredConfig;
pub use h2::Protocol;
pub use levels::StoredLevel;
pub use machine::Machine;
pub use probe::ProbeCase;
pub use runs::{RunSummary, StoredRun};
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use script::StoredScript;
pub use settings::{protocols, shown_status, EMBEDDED_TARGET};
pub use thresholds::StoredChecks;

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
}

#[cfg(test)]
mod tests {
    use super::*;

    use webstand_results::{CpuTime, Ended, Failures, RunResult, ServerFigures};

    /// A synthetic result for the tests below: `complete` requests whose latencies spread evenly from
    /// `base_us` to twice that.
    pub(crate) fn synthetic_result(complete: u64, base_us: u64, elapsed: Duration) -> RunResult {
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

    pub(crate) fn meta() -> RunMeta {
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
        s.add_level(id, "2k.html", 8, 1, Some("nginx/1.22"), &r)
            .unwrap();
        s.add_level(
            id,
            "2k.html",
            16,
            1,
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
            backends_cpu: None,
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
        assert!(s
            .add_level(42, "", 1, 1, None, &RunResult::default())
            .is_err());
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
                 ALTER TABLE levels DROP COLUMN server_peak_rss_kib; ALTER TABLE levels DROP COLUMN ended; ALTER TABLE levels DROP COLUMN diagnosis;
                 ALTER TABLE levels DROP COLUMN h2; ALTER TABLE levels DROP COLUMN h2_connect;
                 ALTER TABLE levels DROP COLUMN h2_first_byte; ALTER TABLE runs DROP COLUMN protocol;
                 ALTER TABLE runs DROP COLUMN h2_streams; ALTER TABLE levels DROP COLUMN round;
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
        writer.add_level(id, "", 2, 1, None, &failed).unwrap();
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
            backends_cpu: None,
        };
        writer.add_server_figures(id, "", 2, &figures).unwrap();
        let run = writer.load_run(id).unwrap();
        assert_eq!(
            (run.levels[0].server, run.levels[1].server),
            (None, Some(figures))
        );
        // The upgrade added the diagnosis column: the old level has none, a new one keeps its own.
        let found = serde_json::json!({"verdict": "errors", "summary": "limited by errors"});
        writer.add_diagnosis(id, "", 2, &found).unwrap();
        let run = writer.load_run(id).unwrap();
        assert_eq!(run.levels[0].diagnosis, None);
        assert_eq!(run.levels[1].diagnosis.as_ref(), Some(&found));
    }

    #[test]
    fn an_h2_level_and_the_runs_protocol_come_back_and_an_older_file_gains_their_columns() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h2.db");
        let s = Store::open(Some(&db)).unwrap();
        let id = s.begin_run(&meta()).unwrap();
        let mut r = synthetic_result(50, 100, Duration::from_secs(1));
        let mut h2 = webstand_results::H2Summary::new(8);
        (h2.started, h2.done, h2.succeeded, h2.errored, h2.timeout) = (52, 51, 48, 2, 1);
        h2.status = [0, 0, 47, 1, 3, 0];
        (h2.header_bytes, h2.header_decoded_bytes) = (900, 4000);
        (h2.resets, h2.goaways) = (2, 1);
        for v in [120, 4000, 65_537] {
            h2.connect.record(v).unwrap();
            h2.first_byte.record(v * 2).unwrap();
        }
        r.h2 = Some(h2.clone());
        s.add_level(id, "2k", 4, 1, None, &r).unwrap();
        s.add_level(
            id,
            "2k",
            8,
            1,
            None,
            &synthetic_result(5, 100, Duration::from_secs(1)),
        )
        .unwrap();
        let asked = Protocol {
            name: "h2c".into(),
            h2_streams: Some(16),
        };
        s.set_protocol(id, &asked).unwrap();
        let run = s.load_run(id).unwrap();
        assert_eq!(run.protocol.as_ref(), Some(&asked));
        assert_eq!(s.runs().unwrap()[0].protocol.as_ref(), Some(&asked));
        let back = run.levels[0].result.h2.as_ref().expect("the h2 figures");
        assert_eq!(
            (
                back.started,
                back.done,
                back.succeeded,
                back.errored,
                back.timeout
            ),
            (52, 51, 48, 2, 1)
        );
        assert_eq!((back.status, back.max_streams), (h2.status, 8));
        assert_eq!((back.header_bytes, back.header_decoded_bytes), (900, 4000));
        assert_eq!((back.resets, back.goaways), (2, 1));
        assert_eq!(
            (&back.connect, &back.first_byte),
            (&h2.connect, &h2.first_byte)
        );
        assert!(run.levels[1].result.h2.is_none());
        drop(s);
        // A version 8 file (no protocol, no h2 columns) reads as it is, and a writer adds them.
        Connection::open(&db)
            .unwrap()
            .execute_batch(
                "ALTER TABLE levels DROP COLUMN h2; ALTER TABLE levels DROP COLUMN h2_connect;
                 ALTER TABLE levels DROP COLUMN h2_first_byte; ALTER TABLE runs DROP COLUMN protocol;
                 ALTER TABLE runs DROP COLUMN h2_streams; ALTER TABLE levels DROP COLUMN round;
                 PRAGMA user_version = 8;",
            )
            .unwrap();
        let old = Store::open_existing(Some(&db))
            .unwrap()
            .load_run(id)
            .unwrap();
        assert!(old.protocol.is_none() && old.levels[0].result.h2.is_none());
        let writer = Store::open(Some(&db)).unwrap();
        writer.add_level(id, "2k", 16, 1, None, &r).unwrap();
        writer.set_protocol(id, &asked).unwrap();
        let run = writer.load_run(id).unwrap();
        assert_eq!(
            run.levels[2].result.h2.as_ref().map(|h| h.succeeded),
            Some(48)
        );
        assert_eq!(run.protocol, Some(asked));
    }

    #[test]
    fn a_level_keeps_its_latest_diagnosis() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(Some(&dir.path().join("d.db"))).unwrap();
        let id = s.begin_run(&meta()).unwrap();
        let r = synthetic_result(5, 100, Duration::from_secs(1));
        for round in 1..=2 {
            s.add_level(id, "builtin/2k", 8, round, None, &r).unwrap();
        }
        let first = serde_json::json!({"verdict": null, "summary": "no problem found"});
        let again =
            serde_json::json!({"verdict": "server", "summary": "no problem found; server-bound"});
        s.add_diagnosis(id, "builtin/2k", 8, &first).unwrap();
        s.add_diagnosis(id, "builtin/2k", 8, &again).unwrap();
        let run = s.load_run(id).unwrap();
        // The latest level of the group at those clients (compare's second round) got it, replaced.
        assert_eq!(run.levels[0].diagnosis, None);
        assert_eq!(run.levels[1].diagnosis.as_ref(), Some(&again));
        assert!(s.add_diagnosis(id, "builtin/2k", 9, &first).is_err());
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
