//! HTTP/2 in the history (schema 9): the protocol a bench or sweep spoke and the streams per
//! connection it asked for (`runs.protocol`, `runs.h2_streams`), and an HTTP/2 level's h2load
//! figures (`levels.h2`: the counts as a JSON object; `levels.h2_connect` and
//! `levels.h2_first_byte`: the per-connection histograms as V2 blobs, like the latency ones).
//! Files from before schema 9 read as HTTP/1 runs of unknown protocol, without h2 figures.

use crate::histogram::{deserialize, serialize};
use crate::{sql_u64, RunId, Store};
use anyhow::Context;
use rusqlite::params;
use serde_json::json;
use webstand_results::H2Summary;

/// The steps that add them to an older file, each taken only when its column is missing.
pub(crate) const COLUMNS: [(&str, &str, &str); 5] = [
    ("runs", "protocol", "TEXT"),
    ("runs", "h2_streams", "INTEGER"),
    ("levels", "h2", "TEXT"),
    ("levels", "h2_connect", "BLOB"),
    ("levels", "h2_first_byte", "BLOB"),
];

/// What a run spoke: "HTTP/1.1", "HTTP/1.0", "h2" (over TLS), "h2c" or "h3", with `-m` for
/// HTTP/2 and HTTP/3.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protocol {
    pub name: String,
    /// The streams per connection asked for (`-m`); a server's lower limit is in each level's
    /// `H2Summary::max_streams`.
    pub h2_streams: Option<u32>,
}

impl Protocol {
    /// Whether it multiplexes streams on a connection (HTTP/2 or HTTP/3, with `-m`).
    pub fn is_h2(&self) -> bool {
        self.h2_streams.is_some()
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.h2_streams {
            Some(m) => write!(f, "{} -m {m}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// A level's h2 columns: the counts as JSON text, the two histograms as blobs.
pub(crate) type H2Columns = (Option<String>, Option<Vec<u8>>, Option<Vec<u8>>);

pub(crate) fn columns(h2: Option<&H2Summary>) -> anyhow::Result<H2Columns> {
    let Some(h) = h2 else {
        return Ok((None, None, None));
    };
    let counts = json!({
        "started": h.started,
        "done": h.done,
        "succeeded": h.succeeded,
        "errored": h.errored,
        "timeout": h.timeout,
        "status": h.status,
        "header_bytes": h.header_bytes,
        "header_decoded_bytes": h.header_decoded_bytes,
        "resets": h.resets,
        "goaways": h.goaways,
        "max_streams": h.max_streams,
    });
    Ok((
        Some(counts.to_string()),
        Some(serialize(&h.connect)?),
        Some(serialize(&h.first_byte)?),
    ))
}

/// The summary back from its columns; None for a level without HTTP/2.
pub(crate) fn from_columns(
    (counts, connect, first_byte): H2Columns,
) -> anyhow::Result<Option<H2Summary>> {
    let Some(text) = counts else {
        return Ok(None);
    };
    let v: serde_json::Value = serde_json::from_str(&text).context("bad h2 figures")?;
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    let mut h = H2Summary::new(n("max_streams") as u32);
    (h.started, h.done, h.succeeded, h.errored, h.timeout) = (
        n("started"),
        n("done"),
        n("succeeded"),
        n("errored"),
        n("timeout"),
    );
    for (i, s) in h.status.iter_mut().enumerate() {
        *s = v["status"][i].as_u64().unwrap_or(0);
    }
    (h.header_bytes, h.header_decoded_bytes) = (n("header_bytes"), n("header_decoded_bytes"));
    (h.resets, h.goaways) = (n("resets"), n("goaways"));
    if let Some(b) = connect {
        h.connect = deserialize(&b)?;
    }
    if let Some(b) = first_byte {
        h.first_byte = deserialize(&b)?;
    }
    Ok(Some(h))
}

impl Store {
    /// Records what protocol run `run` speaks (bench and sweep, once their plan is made).
    pub fn set_protocol(&self, run: RunId, protocol: &Protocol) -> anyhow::Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET protocol = ?1, h2_streams = ?2 WHERE id = ?3",
                params![
                    protocol.name,
                    protocol.h2_streams.map(|m| sql_u64(m.into())),
                    run
                ],
            )
            .with_context(|| format!("saving run {run}'s protocol in {}", self.path.display()))?;
        Ok(())
    }

    /// The SQL that reads runs' protocol columns (NULLs from a file without them).
    pub(crate) fn protocol_sql(&self, alias: &str) -> anyhow::Result<String> {
        Ok(if self.has_column("runs", "protocol")? {
            format!("{alias}protocol, {alias}h2_streams")
        } else {
            "NULL, NULL".to_string()
        })
    }

    /// The SQL that reads a level's h2 columns (NULLs from a file without them).
    pub(crate) fn level_h2_sql(&self) -> anyhow::Result<&'static str> {
        Ok(if self.has_column("levels", "h2")? {
            "h2, h2_connect, h2_first_byte"
        } else {
            "NULL, NULL, NULL"
        })
    }
}

/// A protocol read back from its two columns.
pub(crate) fn protocol(name: Option<String>, streams: Option<i64>) -> Option<Protocol> {
    name.map(|name| Protocol {
        name,
        h2_streams: streams.map(|m| m.clamp(0, u32::MAX.into()) as u32),
    })
}
