//! What a stored run says of how it ran, read from what the history kept: the options its command
//! line gave, the protocol each level spoke, its clients, whether it kept connections open, what it
//! measured, and every setting that tells it from another run (`history` shows the first few,
//! `diff` names those its two sides differ in). Also which run a reference (`3`, `last`, `3-5`)
//! names.

use crate::{RunId, RunSummary, Store, StoredRun};
use anyhow::{bail, Context};

/// What the history shows as the target of runs against the embedded server: its port is a
/// temporary one, which says nothing about what was measured.
pub const EMBEDDED_TARGET: &str = "embedded webstand serve";

/// Options that change how a run is shown or where it is kept, not what it measured.
const DISPLAY_ONLY: &[&str] = &[
    "--db",
    "-q",
    "--quiet",
    "--json",
    "--table",
    "--latency",
    "-S",
    "-w",
    "-x",
    "-y",
    "-z",
    "-g",
    "-e",
];

/// Options that the derived settings (clients, keep-alive, protocol) already say.
const DERIVED: &[&str] = &[
    "-c",
    "--clients",
    "--levels",
    "-k",
    "--keep-alive",
    "--no-keepalive",
    "--h2",
    "--max-streams",
];

/// A run's status as shown: a run that never finished was cut off without a chance to say so
/// (killed, crashed).
pub fn shown_status(status: &str) -> &str {
    if status == "running" {
        "unfinished"
    } else {
        status
    }
}

impl Store {
    /// The run one reference names: an id, or `last`.
    pub fn run_id(&self, spec: &str) -> anyhow::Result<RunId> {
        let spec = spec.trim();
        if spec == "last" {
            return self
                .last_run()?
                .with_context(|| format!("no runs saved yet in {}", self.path().display()));
        }
        spec.parse::<RunId>().map_err(|_| {
            anyhow::anyhow!(
                "bad run id {spec:?}: expected a number from `webstand history`, or `last`"
            )
        })
    }

    /// The runs `3`, `last`, `3,4,5` or `3-5` name.
    pub fn run_ids(&self, spec: &str) -> anyhow::Result<Vec<RunId>> {
        let mut out = Vec::new();
        for part in spec.split(',') {
            match part.split_once('-') {
                Some((a, b)) if !a.trim().is_empty() => {
                    let (a, b) = (self.run_id(a)?, self.run_id(b)?);
                    if b < a || b - a > 1000 {
                        bail!("bad run range {part:?}");
                    }
                    out.extend(a..=b);
                }
                _ => out.push(self.run_id(part)?),
            }
        }
        Ok(out)
    }

    /// Every setting of `run` that may tell it from another ([`StoredRun::settings`]), with the wrk
    /// script it ran with (its name and the start of its digest).
    pub fn run_settings(&self, run: &StoredRun) -> anyhow::Result<Vec<(String, String)>> {
        let mut settings = run.settings();
        if let Some(s) = self.script(run.id)? {
            let short = s.sha256.get(..12).unwrap_or(&s.sha256);
            settings.push(("script".into(), format!("{} {short}", s.name)));
        }
        Ok(settings)
    }
}

impl RunSummary {
    /// The run's target; a sweep run against the embedded server (no URL on its command line),
    /// saved by an older webstand with the server's temporary port, shows as the embedded server.
    pub fn shown_target(&self) -> &str {
        let no_url = !self.command_line.contains("http://");
        if self.kind == "sweep" && no_url && self.target.starts_with("http://127.0.0.1:") {
            EMBEDDED_TARGET
        } else {
            &self.target
        }
    }
}

impl StoredRun {
    /// The run's status as shown ([`shown_status`]).
    pub fn shown_status(&self) -> &str {
        shown_status(&self.status)
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

    /// Whether the run's command line has the flag `f` as a word of its own.
    pub fn option_given(&self, f: &str) -> bool {
        self.meta.command_line.split_whitespace().any(|w| w == f)
    }

    /// The error threshold the run was judged by (its `--max-error-pct`, else the default).
    pub fn max_error_pct(&self) -> f64 {
        self.option("--max-error-pct")
            .and_then(|v| v.parse().ok())
            .unwrap_or(webstand_results::figures::DEFAULT_MAX_ERROR_PCT)
    }

    /// What each level spoke, in the run's order: "HTTP/1.1", "HTTP/1.1 over TLS", "h2" (over
    /// TLS), "h2c" or "h3" — for the CSV, the JSON and `show` alike. A bench or sweep saved its
    /// protocol (over TLS when its URL is https://); a comparison's levels are told by its command
    /// line's --tls (or --h3) and their HTTP/2 and QUIC figures (its HTTP/1 workloads are
    /// HTTP/1.1); a run saved before the history kept protocols says "HTTP/2" or "HTTP/1" (its
    /// version unsaid).
    pub fn level_protocols(&self) -> Vec<String> {
        let tls = match &self.protocol {
            Some(_) => self.meta.target.starts_with("https://"),
            // A comparison's --h3 puts its servers on HTTPS too.
            None => {
                self.meta.kind == "compare"
                    && (self.option_given("--tls") || self.option_given("--h3"))
            }
        };
        let named = |h1: &str, h2: bool| match (h2, tls) {
            (true, true) => "h2".to_string(),
            (true, false) => "h2c".to_string(),
            (false, true) => format!("{h1} over TLS"),
            (false, false) => h1.to_string(),
        };
        self.levels
            .iter()
            .map(|l| match &self.protocol {
                Some(p) if p.is_h2() => p.name.clone(), // "h2", "h2c" or "h3", as saved
                Some(p) => named(&p.name, false),
                None if self.meta.kind == "compare" && l.result.quic.is_some() => "h3".to_string(),
                None if self.meta.kind == "compare" => named("HTTP/1.1", l.result.h2.is_some()),
                None if l.result.h2.is_some() => "HTTP/2".to_string(),
                None => "HTTP/1".to_string(),
            })
            .collect()
    }

    /// The protocols a run's levels spoke, each once, in first-seen order ("HTTP/1.1 over TLS, h2").
    pub fn protocols_spoken(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in self.level_protocols() {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// The clients of the run's levels, each once, in the order first measured.
    fn clients(&self) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for l in &self.levels {
            if !out.contains(&l.clients) {
                out.push(l.clients);
            }
        }
        out
    }

    /// The clients for a narrow column: "4", or "1..32" over several levels ("-" with none).
    pub fn clients_span(&self) -> String {
        let c = self.clients();
        match (c.iter().min(), c.iter().max()) {
            (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
            (Some(lo), Some(hi)) => format!("{lo}..{hi}"),
            _ => "-".into(),
        }
    }

    /// Whether the run kept its connections open: as its command asked (bench's `-k` or
    /// `--pipeline`, sweep's `-k`, compare unless `--no-keepalive`; HTTP/2 always), or as its
    /// levels show (requests that reused a connection).
    pub fn keep_alive(&self) -> bool {
        let asked = match self.meta.kind.as_str() {
            "compare" => !self.option_given("--no-keepalive"),
            _ => ["-k", "--keep-alive", "--pipeline"]
                .iter()
                .any(|f| self.option_given(f)),
        };
        let h2 = self.protocol.as_ref().is_some_and(|p| p.is_h2());
        asked || h2 || self.levels.iter().any(|l| l.result.keep_alive_requests > 0)
    }

    /// What the run spoke: "HTTP/1.1", "HTTP/1.1 over TLS", "h2c -m 16", a comparison's
    /// "HTTP/1.1, h2".
    pub fn protocol_spoken(&self) -> String {
        match &self.protocol {
            Some(p) if p.is_h2() => p.to_string(),
            Some(p) => self
                .protocols_spoken()
                .into_iter()
                .next()
                .unwrap_or_else(|| p.name.clone()),
            None => Some(self.protocols_spoken().join(", "))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "-".into()),
        }
    }

    /// What the run measured: a comparison's servers and workloads ("builtin, nginx: 2k"), else
    /// its target.
    pub fn measured(&self) -> String {
        if self.meta.kind != "compare" {
            return self.meta.target.clone();
        }
        let (mut servers, mut workloads): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
        for g in self.groups() {
            let (s, w) = g.split_once('/').unwrap_or((g, ""));
            let w = w.trim_end_matches("/max-users");
            if !servers.contains(&s) {
                servers.push(s);
            }
            if !w.is_empty() && !workloads.contains(&w) {
                workloads.push(w);
            }
        }
        if servers.is_empty() {
            return self.meta.target.clone();
        }
        format!("{}: {}", servers.join(", "), workloads.join(", "))
    }

    /// The options of the run's command line after its command, as (flag, value), "yes" for a
    /// flag without one. Values are the words that follow a flag unless they are flags or URLs
    /// themselves.
    fn options(&self) -> Vec<(String, String)> {
        let words: Vec<&str> = self.meta.command_line.split_whitespace().collect();
        let start = words
            .iter()
            .position(|w| *w == self.meta.kind)
            .map_or(1, |i| i + 1);
        let mut out = Vec::new();
        let mut i = start;
        while i < words.len() {
            let w = words[i];
            i += 1;
            if !w.starts_with('-') || w == "-" {
                continue;
            }
            let (flag, value) = match w.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), v.to_string()),
                _ => match words.get(i) {
                    Some(v) if !v.starts_with('-') && !v.contains("://") => {
                        i += 1;
                        (w.to_string(), v.to_string())
                    }
                    _ => (w.to_string(), "yes".to_string()),
                },
            };
            out.push((flag, value));
        }
        out
    }

    /// The servers the levels saw (their Server headers), each once, in the order first measured:
    /// a comparison's rounds and levels repeat them.
    pub fn servers(&self) -> Vec<&str> {
        let mut servers: Vec<&str> = Vec::new();
        for v in self
            .levels
            .iter()
            .filter_map(|l| l.server_version.as_deref())
        {
            if !servers.contains(&v) {
                servers.push(v);
            }
        }
        servers
    }

    /// Every setting of the run that may tell it from another, in a fixed order: target, clients,
    /// keep-alive, protocol, then its other options as given (those that only change how it is
    /// shown left out), the server, webstand's version and the machine.
    pub fn settings(&self) -> Vec<(String, String)> {
        let list = |v: Vec<usize>| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let mut out = vec![
            ("target".to_string(), self.measured()),
            ("clients".to_string(), list(self.clients())),
            (
                "keep-alive".to_string(),
                if self.keep_alive() { "yes" } else { "no" }.to_string(),
            ),
            ("protocol".to_string(), self.protocol_spoken()),
        ];
        let h2 = self.protocol.as_ref().is_some_and(|p| p.is_h2());
        for (flag, value) in self.options() {
            let streams = flag == "-m" && h2 && value.parse::<u32>().is_ok();
            if DISPLAY_ONLY.contains(&flag.as_str()) || DERIVED.contains(&flag.as_str()) || streams
            {
                continue;
            }
            match out.iter_mut().find(|(k, _)| *k == flag) {
                Some((_, v)) => *v = format!("{v} {value}"),
                None => out.push((flag, value)),
            }
        }
        let servers = self.servers();
        if !servers.is_empty() {
            out.push(("server".into(), servers.join(", ")));
        }
        out.push(("webstand".into(), self.version.clone()));
        out.push(("machine".into(), self.machine.to_string()));
        out
    }
}

/// What several runs spoke ("h2c -m 16", "HTTP/1.1"; several joined by " + "), as saved, or as
/// their levels tell (h2 figures or none) for runs saved before the history kept it.
pub fn protocols(runs: &[StoredRun]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        let name = match (&r.protocol, r.levels.iter().any(|l| l.result.h2.is_some())) {
            (Some(p), _) => p.to_string(),
            (None, true) => "HTTP/2".to_string(),
            (None, false) if r.meta.kind == "compare" => continue,
            (None, false) => "HTTP/1".to_string(),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (!names.is_empty()).then(|| names.join(" + "))
}

#[cfg(test)]
mod tests {
    use crate::tests::meta;
    use crate::Store;

    #[test]
    fn references_name_runs_or_say_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(Some(&dir.path().join("h.db"))).unwrap();
        let e = store.run_id("last").unwrap_err().to_string();
        assert!(e.starts_with("no runs saved yet in "), "{e}");
        for _ in 0..4 {
            store.begin_run(&meta()).unwrap();
        }
        assert_eq!(store.run_id(" last ").unwrap(), 4);
        assert_eq!(store.run_id("2").unwrap(), 2);
        assert_eq!(store.run_ids("1,3").unwrap(), [1, 3]);
        assert_eq!(store.run_ids("2-last").unwrap(), [2, 3, 4]);
        let e = store.run_ids("3-1").unwrap_err().to_string();
        assert_eq!(e, "bad run range \"3-1\"");
        let e = store.run_id("x").unwrap_err().to_string();
        assert_eq!(
            e,
            "bad run id \"x\": expected a number from `webstand history`, or `last`"
        );
    }

    #[test]
    fn a_runs_settings_come_from_its_command_line_and_levels() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(Some(&dir.path().join("h.db"))).unwrap();
        let mut m = meta();
        m.command_line =
            "webstand sweep -k --levels 1,4 --max-error-pct 5 --db h.db -n 100 http://127.0.0.1:1/"
                .into();
        let id = store.begin_run(&m).unwrap();
        let run = store.load_run(id).unwrap();
        assert_eq!(run.option("--max-error-pct"), Some("5"));
        assert_eq!(run.max_error_pct(), 5.0);
        assert!(run.keep_alive());
        assert_eq!(run.clients_span(), "-");
        assert_eq!(run.protocol_spoken(), "-");
        let settings = run.settings();
        let names: Vec<&str> = settings.iter().map(|(k, _)| k.as_str()).collect();
        // Shown-only (--db) and derived (-k, --levels) options are left out.
        assert_eq!(
            names,
            [
                "target",
                "clients",
                "keep-alive",
                "protocol",
                "--max-error-pct",
                "-n",
                "webstand",
                "machine"
            ]
        );
        assert_eq!(settings[0].1, "http://127.0.0.1:1/");
    }
}
