//! A measured level's row in `levels`: every count of its `RunResult`, the four HDR histograms as
//! V2-serialized blobs, and the server's figures the lab adds once the level is saved. Each level is
//! written in its own transaction, so an interrupted run keeps every level completed before the stop.

use crate::histogram::{deserialize, serialize};
use crate::{sql_u64, RunId, Store};
use anyhow::{bail, Context};
use rusqlite::{params, OptionalExtension, Row, Transaction, TransactionBehavior};
use std::time::Duration;
use webstand_results::{CpuTime, Ended, Failures, Histograms, RunResult, ServerFigures};

/// One measured level of a stored run, in the order it was added.
#[derive(Clone, Debug)]
pub struct StoredLevel {
    pub group: String,
    pub clients: usize,
    /// Which round of a comparison measured it, from 1 (bench and sweep: 1); None for a level saved
    /// before the history kept rounds (schema 10), whose round only its place in the run tells.
    pub round: Option<usize>,
    pub server_version: Option<String>,
    pub result: RunResult,
    /// The server's side, when the lab measured it ([`Store::add_server_figures`]).
    pub server: Option<ServerFigures>,
    /// What bound the level, as the diagnosis object of `--json` (`verdict`, `summary`,
    /// `findings`, `evidence`), when it was diagnosed ([`Store::add_diagnosis`]).
    pub diagnosis: Option<serde_json::Value>,
    /// How the server ran the level's workload, where a comparison said so ([`Store::add_notes`]);
    /// None for other runs' levels and levels saved before the history kept them (schema 16).
    pub notes: Option<Vec<webstand_results::Note>>,
}

/// The run's latest level of a group at a number of clients: its three parameters (run, group,
/// clients) follow the SET clause's numbered ones (SQLite numbers a bare `?` after the largest so far).
const LATEST_LEVEL: &str =
    "WHERE id = (SELECT max(id) FROM levels WHERE run_id = ? AND grp = ? AND clients = ?)";

impl Store {
    /// Records one measured level, in its own transaction. `group` names the series it belongs to
    /// ("" for a bench run, the workload for a sweep, "server/workload" for a comparison), `round`
    /// which of a comparison's rounds measured it (from 1; 1 for a bench or a sweep);
    /// `server_version` is the target's version where known.
    pub fn add_level(
        &self,
        run: RunId,
        group: &str,
        clients: usize,
        round: usize,
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
        let (h2, h2_connect, h2_first_byte) = crate::h2::columns(r.h2.as_ref())?;
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
                hist_total, hist_connect, hist_waiting, hist_processing, first_error, sent_bytes, ended,
                h2, h2_connect, h2_first_byte, round, generator, quic)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
                ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38)",
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
                h2,
                h2_connect,
                h2_first_byte,
                sql_u64(round as u64),
                crate::generator::column(r)?,
                crate::quic::column(r)?,
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
                &format!("UPDATE levels SET server_cpu_user_ns = ?1, server_cpu_sys_ns = ?2, server_peak_rss_kib = ?3,
                    backends_cpu_user_ns = ?4, backends_cpu_sys_ns = ?5 {LATEST_LEVEL}"),
                params![
                    sql_u64(figures.cpu.user.as_nanos() as u64),
                    sql_u64(figures.cpu.sys.as_nanos() as u64),
                    figures.peak_rss_kib.map(sql_u64),
                    figures.backends_cpu.map(|c| sql_u64(c.user.as_nanos() as u64)),
                    figures.backends_cpu.map(|c| sql_u64(c.sys.as_nanos() as u64)),
                    run,
                    group,
                    sql_u64(clients as u64)
                ],
            )
            .with_context(|| format!("saving server figures of run {run} in {}", self.path.display()))?;
        self.updated_one(n, run, group, clients)
    }

    /// Keeps the diagnosis of the run's latest level of `group` at `clients` (the `--json`
    /// diagnosis object); a later call replaces it (compare diagnoses a level again once the
    /// server's CPU is known).
    pub fn add_diagnosis(
        &self,
        run: RunId,
        group: &str,
        clients: usize,
        diagnosis: &serde_json::Value,
    ) -> anyhow::Result<()> {
        let n = self
            .conn
            .execute(
                &format!("UPDATE levels SET diagnosis = ?1 {LATEST_LEVEL}"),
                params![diagnosis.to_string(), run, group, sql_u64(clients as u64)],
            )
            .with_context(|| {
                format!(
                    "saving the diagnosis of run {run} in {}",
                    self.path.display()
                )
            })?;
        self.updated_one(n, run, group, clients)
    }

    /// Keeps the notes of the run's latest level of `group` at `clients` (the lab's, for its row).
    pub fn add_notes(
        &self,
        run: RunId,
        group: &str,
        clients: usize,
        notes: &[webstand_results::Note],
    ) -> anyhow::Result<()> {
        let n = self
            .conn
            .execute(
                &format!("UPDATE levels SET notes = ?1 {LATEST_LEVEL}"),
                params![
                    serde_json::to_string(notes)?,
                    run,
                    group,
                    sql_u64(clients as u64)
                ],
            )
            .with_context(|| format!("saving the notes of run {run} in {}", self.path.display()))?;
        self.updated_one(n, run, group, clients)
    }

    fn updated_one(
        &self,
        rows: usize,
        run: RunId,
        group: &str,
        clients: usize,
    ) -> anyhow::Result<()> {
        if rows == 0 {
            bail!(
                "run {run} has no level {group:?} at {clients} clients in {}",
                self.path.display()
            );
        }
        Ok(())
    }
}

#[allow(clippy::needless_update)]
pub(crate) fn level_from_row(r: &Row) -> anyhow::Result<StoredLevel> {
    let u = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)?.max(0) as u64) };
    let latency_sum: String = r.get(18)?;
    let per_request: String = r.get(22)?;
    let mut result = RunResult {
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
            ..Histograms::new()
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
        h2: crate::h2::from_columns((r.get(35)?, r.get(36)?, r.get(37)?))?,
        // Fields the engine adds later start at their defaults until the schema stores them.
        ..Default::default()
    };
    let ns = |i: usize| -> rusqlite::Result<Option<Duration>> {
        Ok(r.get::<_, Option<i64>>(i)?
            .map(|v| Duration::from_nanos(v.max(0) as u64)))
    };
    let backends_cpu = match (ns(39)?, ns(40)?) {
        (Some(user), Some(sys)) => Some(CpuTime { user, sys }),
        _ => None,
    };
    let server = match (ns(30)?, ns(31)?) {
        (Some(user), Some(sys)) => Some(ServerFigures {
            cpu: CpuTime { user, sys },
            peak_rss_kib: r.get::<_, Option<i64>>(32)?.map(|v| v.max(0) as u64),
            backends_cpu,
        }),
        _ => None,
    };
    crate::generator::apply(r.get::<_, Option<String>>(41)?.as_deref(), &mut result);
    crate::quic::apply(r.get::<_, Option<String>>(42)?.as_deref(), &mut result);
    // A diagnosis that does not parse (written by hand, cut short) reads as none.
    let diagnosis = r
        .get::<_, Option<String>>(34)?
        .and_then(|text| serde_json::from_str(&text).ok());
    Ok(StoredLevel {
        group: r.get(0)?,
        clients: u(1)? as usize,
        round: r.get::<_, Option<i64>>(38)?.map(|v| v.max(1) as usize),
        server_version: r.get(2)?,
        result,
        server,
        diagnosis,
        notes: crate::notes::read(r.get::<_, Option<String>>(43)?.as_deref()),
    })
}

#[cfg(test)]
mod tests {
    use crate::tests::{meta, synthetic_result};
    use crate::{Store, StoredRun};
    use rusqlite::Connection;
    use std::time::Duration;

    #[test]
    fn a_levels_round_comes_back_and_a_version_9_file_reads_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("rounds.db");
        let s = Store::open(Some(&db)).unwrap();
        let id = s.begin_run(&meta()).unwrap();
        let r = synthetic_result(5, 100, Duration::from_secs(1));
        // Clients that fall (2 then 1), so no order of clients could tell the rounds.
        for (round, clients) in [(1, 2), (1, 1), (2, 2), (2, 1), (3, 2), (3, 1)] {
            s.add_level(id, "builtin/2k", clients, round, None, &r)
                .unwrap();
        }
        let rounds = |run: &StoredRun| -> Vec<Option<usize>> {
            run.levels.iter().map(|l| l.round).collect()
        };
        let run = s.load_run(id).unwrap();
        let saved = [1, 1, 2, 2, 3, 3].map(Some);
        assert_eq!(rounds(&run), saved);
        drop(s);
        // What schema 9 wrote: no round column. A reader takes it as it is: no round known.
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch("ALTER TABLE levels DROP COLUMN round; PRAGMA user_version = 9;")
            .unwrap();
        drop(conn);
        let old = Store::open_existing(Some(&db)).unwrap();
        assert_eq!(rounds(&old.load_run(id).unwrap()), [None; 6]);
        drop(old);
        // A writer adds the column: the old levels stay without a round, a new one has its own.
        let writer = Store::open(Some(&db)).unwrap();
        writer.add_level(id, "builtin/2k", 4, 4, None, &r).unwrap();
        let run = writer.load_run(id).unwrap();
        assert_eq!(rounds(&run), [None, None, None, None, None, None, Some(4)]);
    }

    #[test]
    fn a_levels_backends_cpu_comes_back_and_a_version_10_file_reads_without_it() {
        use webstand_results::CpuTime;
        use webstand_results::ServerFigures;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("backends.db");
        let s = Store::open(Some(&db)).unwrap();
        let id = s.begin_run(&meta()).unwrap();
        // 100 complete requests: 2 ms of server CPU and 3 ms of PHP-FPM's make 20 and 50 µs each.
        let r = synthetic_result(100, 100, Duration::from_secs(1));
        s.add_level(id, "nginx/php", 1, 1, None, &r).unwrap();
        let ms = |m| Duration::from_millis(m);
        let figures = ServerFigures {
            cpu: CpuTime {
                user: ms(1),
                sys: ms(1),
            },
            peak_rss_kib: Some(1024),
            backends_cpu: Some(CpuTime {
                user: ms(2),
                sys: ms(1),
            }),
        };
        s.add_server_figures(id, "nginx/php", 1, &figures).unwrap();
        let level = &s.load_run(id).unwrap().levels[0];
        assert_eq!(level.server, Some(figures));
        let server = level.server.unwrap();
        assert_eq!(server.cpu_us_per_request(&level.result), 20.0);
        assert_eq!(
            server.with_backends_cpu_us_per_request(&level.result),
            Some(50.0)
        );
        drop(s);
        // What schema 10 wrote: no backends columns. A reader takes it as it is; a writer adds them.
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(
            "ALTER TABLE levels DROP COLUMN backends_cpu_user_ns;
             ALTER TABLE levels DROP COLUMN backends_cpu_sys_ns; PRAGMA user_version = 10;",
        )
        .unwrap();
        drop(conn);
        let old = Store::open_existing(Some(&db)).unwrap();
        let server = old.load_run(id).unwrap().levels[0].server.unwrap();
        assert_eq!(
            (server.backends_cpu, server.peak_rss_kib),
            (None, Some(1024))
        );
        drop(old);
        let writer = Store::open(Some(&db)).unwrap();
        writer
            .add_server_figures(id, "nginx/php", 1, &figures)
            .unwrap();
        assert_eq!(writer.load_run(id).unwrap().levels[0].server, Some(figures));
    }
}
