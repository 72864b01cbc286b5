//! A run's row in `runs`: begun with what it is and where it ran, finished with its outcome's status,
//! listed for `webstand history` and loaded whole (levels included) for show, diff, export and report.

use crate::h2::protocol;
use crate::levels::{level_from_row, StoredLevel};
use crate::{now_unix, Machine, Protocol, RunId, RunMeta, Store};
use anyhow::{bail, Context};
use rusqlite::{params, OptionalExtension};

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
    /// What the run spoke, when it said (bench and sweep since schema 9).
    pub protocol: Option<Protocol>,
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
    /// What the run spoke, when it said (bench and sweep since schema 9).
    pub protocol: Option<Protocol>,
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

    /// The value of a command-line option as the run was started (`--opt X` or `--opt=X`).
    pub fn option(&self, name: &str) -> Option<&str> {
        let words: Vec<&str> = self.meta.command_line.split_whitespace().collect();
        words
            .iter()
            .enumerate()
            .find_map(|(i, w)| match w.strip_prefix(name) {
                Some("") => words.get(i + 1).copied(),
                Some(v) => v.strip_prefix('='),
                None => None,
            })
    }
}

impl Store {
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
        let mut st = self.conn.prepare(&format!(
            "SELECT r.id, r.started_unix, r.kind, r.target, r.status, (SELECT count(*) FROM levels l WHERE l.run_id = r.id),
                r.command_line, {}
             FROM runs r ORDER BY r.id",
            self.protocol_sql("r.")?
        ))?;
        let rows = st.query_map([], |r| {
            Ok(RunSummary {
                id: r.get(0)?,
                started_unix: r.get(1)?,
                kind: r.get(2)?,
                command_line: r.get(6)?,
                target: r.get(3)?,
                status: r.get(4)?,
                levels: r.get::<_, i64>(5)? as u64,
                protocol: protocol(r.get(7)?, r.get(8)?),
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
                &format!("SELECT id, kind, command_line, target, started_unix, finished_unix, version, status, cpu_model, cores, kernel, hostname, {}
                 FROM runs WHERE id = ?1", self.protocol_sql("")?),
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
                        protocol: protocol(r.get(12)?, r.get(13)?),
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
        let diagnosis = if self.has_column("levels", "diagnosis")? {
            "diagnosis"
        } else {
            "NULL"
        };
        let h2 = self.level_h2_sql()?;
        let round = if self.has_column("levels", "round")? {
            "round"
        } else {
            "NULL"
        };
        let backends = if self.has_column("levels", crate::schema::BACKENDS_CPU[0])? {
            crate::schema::BACKENDS_CPU.join(", ")
        } else {
            "NULL, NULL".to_string()
        };
        let generator = if self.has_column("levels", crate::generator::COLUMN.1)? {
            crate::generator::COLUMN.1
        } else {
            "NULL"
        };
        let quic = if self.has_column("levels", crate::quic::COLUMN.1)? {
            crate::quic::COLUMN.1
        } else {
            "NULL"
        };
        let notes = if self.has_column("levels", crate::notes::COLUMN.1)? {
            crate::notes::COLUMN.1
        } else {
            "NULL"
        };
        let mut st = self.conn.prepare(&format!(
            "SELECT grp, clients, server_version, started_unix, elapsed_ns, complete, failed_connect, failed_receive,
                failed_length, failed_exceptions, write_errors, non_2xx, keep_alive_requests, connections,
                total_bytes, body_bytes, document_length, server_software, latency_sum_us, cpu_user_ns,
                cpu_sys_ns, late_sends, per_request, interrupted, hist_total, hist_connect, hist_waiting,
                hist_processing, {first_error}, {sent_bytes}, {server}, {ended}, {diagnosis}, {h2}, {round},
                {backends}, {generator}, {quic}, {notes}
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
