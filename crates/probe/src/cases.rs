//! The case file: what a probe sends and what it expects, as data (docs/PROBE-CASES.md is the
//! reference). Loading checks everything — keys, templates, durations, expectations — and reports a
//! mistake as `FILE:LINE: …`, so a bad file fails before any traffic.

use crate::template::{Template, Vars};
use serde::Deserialize;
use std::time::Duration;
use toml::Spanned;

/// The suite shipped with webstand (crates/probe/cases.toml).
pub const BUILTIN: &str = include_str!("../cases.toml");
/// The name that selects it in `--cases`.
pub const BUILTIN_NAME: &str = "builtin";

/// Longest time limit one case may ask for.
const MAX_LIMIT: Duration = Duration::from_secs(120);
/// Most connections one case may open.
const MAX_CONNECTIONS: usize = 10_000;

/// One step of a case, done on every one of its connections in lockstep.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Write these bytes.
    Send(Template),
    /// Write these bytes `bytes` at a time, one write every `every`.
    Drip {
        text: Template,
        every: Duration,
        bytes: usize,
    },
    /// Wait (still reading what arrives).
    Pause(Duration),
}

/// What a well-behaved server does; a failed expectation makes the verdict lenient or unsafe
/// (docs/PROBE-CASES.md, "Verdicts").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expect {
    /// Lenient unless the first answer is a refusal: 4xx/5xx, or no 2xx/3xx answer at all.
    pub refuse: bool,
    /// Lenient unless the first answer's status matches: "400", "4xx", "200|206|416".
    pub status: Option<String>,
    /// Lenient unless the server closes the connection before the case ends.
    pub close: bool,
    /// Unsafe (a desync) when more responses than this come back on one connection.
    pub max_responses: Option<u64>,
    /// Lenient unless the server has closed every connection this long after the case started.
    pub closed_within: Option<Duration>,
    /// Lenient unless the first answer (or a close) comes within this time.
    pub answer_within: Option<Duration>,
    /// Unsafe when, this long into the case, a fresh request on a new connection goes unanswered.
    pub available_at: Option<Duration>,
    /// Lenient when a connection receives more than this many times the bytes of the URL's
    /// normal response (range amplification).
    pub max_bytes_ratio: Option<f64>,
}

/// One case, checked and ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub name: String,
    pub category: String,
    /// One line on what is sent.
    pub what: String,
    /// What RFC 9110/9112 (or common sense, said so) expect, shown in the table.
    pub rfc: String,
    pub connections: usize,
    /// The whole case ends by this time after it started.
    pub limit: Duration,
    /// false: never read from the socket (slow read: the receive window closes).
    pub read: bool,
    /// SO_RCVBUF for the case's sockets (small values close the window sooner).
    pub recv_buffer: Option<usize>,
    pub steps: Vec<Step>,
    pub expect: Expect,
    /// Where it was defined, for messages: "cases.toml:12".
    pub origin: String,
}

impl Case {
    /// Whether the case names the leak target (it then runs once per target).
    pub fn uses_leak(&self) -> bool {
        self.steps.iter().any(|s| match s {
            Step::Send(t) | Step::Drip { text: t, .. } => t.uses_leak(),
            Step::Pause(_) => false,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    case: Vec<Spanned<RawCase>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: String,
    category: String,
    #[serde(default)]
    what: String,
    rfc: String,
    #[serde(default = "one")]
    connections: usize,
    limit: Option<String>,
    #[serde(default = "yes")]
    read: bool,
    recv_buffer: Option<usize>,
    send: Option<String>,
    #[serde(default)]
    steps: Vec<RawStep>,
    #[serde(default)]
    expect: RawExpect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    send: Option<String>,
    drip: Option<String>,
    every: Option<String>,
    bytes: Option<usize>,
    pause: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    #[serde(default)]
    refuse: bool,
    status: Option<String>,
    #[serde(default)]
    close: bool,
    max_responses: Option<u64>,
    closed_within: Option<String>,
    answer_within: Option<String>,
    available_at: Option<String>,
    max_bytes_ratio: Option<f64>,
}

fn one() -> usize {
    1
}
fn yes() -> bool {
    true
}

/// Loads the cases of one file; `name` is how messages name it.
pub fn load(name: &str, text: &str) -> anyhow::Result<Vec<Case>> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(s.start)).unwrap_or(1);
        let msg = e.message().lines().next().unwrap_or("").to_string();
        anyhow::anyhow!("{name}:{line}: {msg}")
    })?;
    let mut cases: Vec<Case> = Vec::new();
    for raw in file.case {
        let origin = format!("{name}:{}", line_of(raw.span().start));
        let case = check(raw.into_inner(), origin.clone())
            .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        if let Some(first) = cases.iter().find(|c| c.name == case.name) {
            anyhow::bail!(
                "{origin}: case '{}' is already defined at {}",
                case.name,
                first.origin
            );
        }
        cases.push(case);
    }
    if cases.is_empty() {
        anyhow::bail!("{name}:1: no [[case]] in the file");
    }
    Ok(cases)
}

fn check(raw: RawCase, origin: String) -> Result<Case, String> {
    if raw.name.is_empty() || !raw.name.bytes().all(|b| b.is_ascii_graphic() && b != b'@') {
        return Err(format!(
            "case name '{}' must be printable ASCII without spaces or '@'",
            raw.name
        ));
    }
    if !(1..=MAX_CONNECTIONS).contains(&raw.connections) {
        return Err(format!("connections must be 1 to {MAX_CONNECTIONS}"));
    }
    let limit = match &raw.limit {
        Some(s) => duration(s, "limit")?,
        None => Duration::from_secs(3),
    };
    if limit > MAX_LIMIT {
        return Err(format!("limit must be at most {}s", MAX_LIMIT.as_secs()));
    }
    let mut steps = Vec::new();
    if let Some(send) = &raw.send {
        steps.push(Step::Send(template(send, "send")?));
    }
    for s in &raw.steps {
        steps.push(step(s)?);
    }
    if steps.is_empty() {
        return Err("a case needs `send = \"…\"` or `steps = [...]`".into());
    }
    fits(&steps)?;
    Ok(Case {
        name: raw.name,
        category: raw.category,
        what: raw.what,
        rfc: raw.rfc,
        connections: raw.connections,
        limit,
        read: raw.read,
        recv_buffer: raw.recv_buffer,
        steps,
        expect: expect(&raw.expect, limit)?,
        origin,
    })
}

/// Expands every step once with typical values, so a template too large to send is refused now.
fn fits(steps: &[Step]) -> Result<(), String> {
    let leak = crate::passwd();
    let vars = Vars {
        host: "host.example:65535",
        path: "/index.html",
        leak: Some(&leak),
    };
    for s in steps {
        if let Step::Send(t) | Step::Drip { text: t, .. } = s {
            t.expand(&vars)?;
        }
    }
    Ok(())
}

fn step(s: &RawStep) -> Result<Step, String> {
    let kinds = [s.send.is_some(), s.drip.is_some(), s.pause.is_some()];
    if kinds.iter().filter(|&&k| k).count() != 1 {
        return Err(
            "each step is one of { send = … }, { drip = …, every = … }, { pause = … }".into(),
        );
    }
    if s.drip.is_none() && (s.every.is_some() || s.bytes.is_some()) {
        return Err("`every` and `bytes` belong to a drip step".into());
    }
    if let Some(text) = &s.send {
        return Ok(Step::Send(template(text, "send")?));
    }
    if let Some(p) = &s.pause {
        return Ok(Step::Pause(duration(p, "pause")?));
    }
    let every = duration(
        s.every.as_deref().ok_or("a drip step needs `every`")?,
        "every",
    )?;
    let bytes = s.bytes.unwrap_or(1);
    if bytes == 0 {
        return Err("a drip step's `bytes` must be at least 1".into());
    }
    Ok(Step::Drip {
        text: template(s.drip.as_deref().unwrap_or_default(), "drip")?,
        every,
        bytes,
    })
}

fn expect(e: &RawExpect, limit: Duration) -> Result<Expect, String> {
    if let Some(s) = &e.status {
        status_matcher(s)?;
    }
    let within = |v: &Option<String>, key: &str| -> Result<Option<Duration>, String> {
        let Some(v) = v else { return Ok(None) };
        let d = duration(v, key)?;
        if d > limit {
            return Err(format!("expect.{key} ({v}) is beyond the case's limit"));
        }
        Ok(Some(d))
    };
    if e.max_bytes_ratio
        .is_some_and(|r| !(r > 0.0 && r.is_finite()))
    {
        return Err("expect.max_bytes_ratio must be a positive number".into());
    }
    Ok(Expect {
        refuse: e.refuse,
        status: e.status.clone(),
        close: e.close,
        max_responses: e.max_responses,
        closed_within: within(&e.closed_within, "closed_within")?,
        answer_within: within(&e.answer_within, "answer_within")?,
        available_at: within(&e.available_at, "available_at")?,
        max_bytes_ratio: e.max_bytes_ratio,
    })
}

/// Whether `status` matches a pattern like "400", "4xx" or "200|206|416".
pub fn status_matches(pattern: &str, status: u16) -> bool {
    let s = status.to_string();
    pattern.split('|').any(|alt| {
        let alt = alt.trim();
        alt.len() == 3
            && alt
                .bytes()
                .zip(s.bytes())
                .all(|(p, d)| p == b'x' || p == b'X' || p == d)
    })
}

fn status_matcher(pattern: &str) -> Result<(), String> {
    let ok = pattern.split('|').all(|alt| {
        let alt = alt.trim().as_bytes();
        alt.len() == 3
            && (b'1'..=b'5').contains(&alt[0])
            && alt[1..]
                .iter()
                .all(|&b| b.is_ascii_digit() || b == b'x' || b == b'X')
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "expect.status '{pattern}' must be codes or classes like \"400\", \"4xx\", \"200|206\""
        ))
    }
}

fn template(text: &str, key: &str) -> Result<Template, String> {
    Template::parse(text).map_err(|e| format!("{key}: {e}"))
}

fn duration(s: &str, key: &str) -> Result<Duration, String> {
    humantime::parse_duration(s)
        .map_err(|_| format!("{key}: bad duration '{s}' (e.g. \"500ms\", \"3s\")"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_suite_loads() {
        let cases = load("cases.toml", BUILTIN).unwrap();
        assert!(cases.len() >= 40, "{}", cases.len());
        for category in [
            "smuggling",
            "traversal",
            "limits",
            "ranges",
            "slowloris",
            "slow-body",
            "slow-read",
            "idle-flood",
            "pipelining",
        ] {
            assert!(
                cases.iter().any(|c| c.category == category),
                "no {category} case"
            );
        }
        assert!(cases.iter().any(Case::uses_leak));
    }

    #[test]
    fn mistakes_name_file_and_line() {
        let base = "[[case]]\nname = \"a\"\ncategory = \"c\"\nrfc = \"r\"\n";
        for (extra, line, says) in [
            ("send = \"{nope}\"\n", 1, "unknown placeholder"),
            ("send = \"x\"\nlimit = \"soon\"\n", 1, "bad duration"),
            ("send = \"x\"\nbogus = 1\n", 6, "unknown field"),
            (
                "send = \"x\"\n[case.expect]\nstatus = \"4\"\n",
                1,
                "expect.status",
            ),
            ("\n", 1, "needs `send"),
            (
                "steps = [{ send = \"a\", pause = \"1s\" }]\n",
                1,
                "each step",
            ),
            (
                "send = \"x\"\n[case.expect]\navailable_at = \"9s\"\n",
                1,
                "beyond",
            ),
            ("send = \"{repeat:20000:{repeat:1000:a}}\"\n", 1, "MiB"),
        ] {
            let text = format!("\n\n{base}{extra}");
            let e = load("f.toml", &text).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("f.toml:{}:", line + 2)) && e.contains(says),
                "{extra:?}: {e}"
            );
        }
        let twice = format!("{base}send = \"x\"\n{base}send = \"y\"\n");
        let e = load("f.toml", &twice).unwrap_err().to_string();
        assert!(
            e.starts_with("f.toml:6:") && e.contains("already defined at f.toml:1"),
            "{e}"
        );
        let e = load("f.toml", "[[case]\n").unwrap_err().to_string();
        assert!(e.starts_with("f.toml:1:"), "{e}");
    }

    #[test]
    fn status_patterns() {
        assert!(status_matches("4xx", 431));
        assert!(status_matches("200|206|416", 416));
        assert!(!status_matches("400", 404));
        assert!(!status_matches("4xx", 500));
    }
}
