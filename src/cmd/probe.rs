//! `webstand probe URL`: hostile and edge-case requests against one server, a verdict per case,
//! printed as a table (or JSON) and saved in the history case by case.

use crate::Global;
use anyhow::{bail, Context};
use std::sync::atomic::Ordering;
use std::time::Duration;
use webstand_probe::{Case, CaseResult, Ended, Options, Report, Target, Verdict};

#[derive(clap::Args)]
#[command(
    after_help = "Sends malformed and hostile traffic: probe only servers you run or may test.\n\n\
Examples:\n  webstand probe http://127.0.0.1:8080/index.html\n  \
webstand probe --only smuggling,traversal http://127.0.0.1:8080/\n  \
webstand probe --secret-path ../secret.txt --secret-marker 'MARKER-1f3a9' http://127.0.0.1:8080/\n  \
webstand probe --cases builtin --cases mine.toml --json http://127.0.0.1:8080/ > probe.json\n  \
webstand probe --dump-cases > mine.toml      # the built-in cases, to start your own from\n\n\
Guide: docs/PROBE.md; the case format: docs/PROBE-CASES.md\n\n\
Exit status: 0 every case run, 1 could not run (an unreachable target, a bad case file), 2 bad \
command line, 3 a case at --fail-on or worse, 5 target lost, 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP \
(docs/EXIT-STATUS.md)"
)]
pub struct Args {
    /// The server to probe, http://host[:port]/path; the path should name a file it serves (every
    /// case uses it as the normal request)
    #[arg(value_name = "URL", required_unless_present_any = ["dump_cases", "list"])]
    url: Option<String>,

    /// Case file (repeatable); `builtin` is the suite shipped with webstand [default: builtin]
    #[arg(long = "cases", value_name = "FILE")]
    cases: Vec<String>,

    /// Run only these categories or case names (comma-separated), e.g. smuggling,slowloris
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    only: Vec<String>,

    /// Print the cases (name, category, what) and exit without sending anything
    #[arg(long)]
    list: bool,

    /// Print the built-in case file and exit
    #[arg(long)]
    dump_cases: bool,

    /// A file outside the document root, as a path from it (../secret.txt): traversal cases also
    /// try to reach it (needs --secret-marker)
    #[arg(long, value_name = "PATH", requires = "secret_marker")]
    secret_path: Option<String>,

    /// Text that only the --secret-path file holds; an answer containing it is a leak
    #[arg(long, value_name = "TEXT", requires = "secret_path")]
    secret_marker: Option<String>,

    /// Stop starting cases when the whole probe would take longer (e.g. 2m, 90s)
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    max_time: String,

    /// Exit with status 3 when a case is at least this bad: unsafe or lenient
    #[arg(long, value_name = "VERDICT", value_parser = ["unsafe", "lenient"])]
    fail_on: Option<String>,

    /// Print the whole report as JSON on stdout instead of the table
    #[arg(long)]
    json: bool,

    /// No line per case on stderr while probing
    #[arg(short, long)]
    quiet: bool,
}

/// The cases of `files` (the built-in suite when none), filtered by `only` (categories or case
/// names; all when empty): `probe --cases --only`, and `compare --probe-only`.
pub fn load_cases(files: &[String], only: &[String]) -> anyhow::Result<Vec<Case>> {
    let files = if files.is_empty() {
        vec![webstand_probe::BUILTIN_NAME.to_string()]
    } else {
        files.to_vec()
    };
    let mut all: Vec<Case> = Vec::new();
    for f in &files {
        let loaded = if f == webstand_probe::BUILTIN_NAME {
            webstand_probe::load("cases.toml (built in)", webstand_probe::BUILTIN)?
        } else {
            let text =
                std::fs::read_to_string(f).with_context(|| format!("cannot read case file {f}"))?;
            webstand_probe::load(f, &text)?
        };
        for c in loaded {
            if let Some(first) = all.iter().find(|k| k.name == c.name) {
                bail!(
                    "{}: case '{}' is already defined at {}",
                    c.origin,
                    c.name,
                    first.origin
                );
            }
            all.push(c);
        }
    }
    if !only.is_empty() {
        let unknown: Vec<&String> = only
            .iter()
            .filter(|o| !all.iter().any(|c| &c.category == *o || &c.name == *o))
            .collect();
        if let Some(u) = unknown.first() {
            bail!("--only: no case or category named '{u}' (`webstand probe --list` shows them)");
        }
        all.retain(|c| only.iter().any(|o| o == &c.category || o == &c.name));
    }
    Ok(all)
}

fn target(url: &str) -> anyhow::Result<Target> {
    let (t, path) = webstand_engine::parse_url(url)?;
    let host = if t.port == 80 {
        t.host.clone()
    } else {
        format!("{}:{}", t.host, t.port)
    };
    Ok(Target {
        url: url.to_string(),
        addrs: t.addrs,
        host,
        path,
    })
}

pub fn run(a: Args, global: &Global) -> anyhow::Result<i32> {
    // Parsed here rather than by clap so that a bad value gets one line (`webstand: error: …`).
    let max_time =
        webstand_duration::positive(&a.max_time).map_err(|e| anyhow::anyhow!("--max-time: {e}"))?;
    if a.dump_cases {
        print!("{}", webstand_probe::BUILTIN);
        return Ok(0);
    }
    let cases = load_cases(&a.cases, &a.only)?;
    if a.list {
        for c in &cases {
            println!("{:<24} {:<11} {}", c.name, c.category, c.what);
        }
        return Ok(0);
    }
    let url = a.url.as_deref().context("a URL is needed")?;
    let target = target(url)?;
    let mut opts = Options {
        max_time,
        ..Options::default()
    };
    if let (Some(p), Some(m)) = (&a.secret_path, &a.secret_marker) {
        opts.leaks.push(webstand_probe::secret(p, m)?);
    }
    let probe = webstand_probe::Probe::reach(&target, &opts)?;
    eprintln!(
        "webstand probe: sending hostile and malformed requests to {url} ({}; {} case{}, at most {}): probe only servers you run or may test",
        probe.address(),
        cases.len(),
        if cases.len() == 1 { "" } else { "s" },
        humanize(max_time)
    );
    let (normal, _) = probe.baseline();
    if !(200..300).contains(&normal) {
        eprintln!("webstand probe: note: {url} answers {normal}; the cases use it as the normal request, so name a file the server serves");
    }
    let live = webstand_lab::interrupt::live();
    let history = History::begin(global, url);
    let quiet = a.quiet;
    let mut on_case = |r: &CaseResult| {
        if !quiet {
            eprintln!("  {:<28} {:<8} {}", r.name, r.verdict.name(), r.did());
        }
        history.add(r);
    };
    let report = probe.run(&cases, &live.stop, &mut on_case)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json(&report))?);
    } else {
        super::print(&webstand_probe::table::render(&report));
    }
    let status = status(
        &report,
        a.fail_on.as_deref(),
        live.stop.load(Ordering::Relaxed),
    );
    history.finish(status.1);
    Ok(status.0)
}

/// The report with its per-category counts, for `--json`.
fn json(report: &Report) -> serde_json::Value {
    let mut v = serde_json::to_value(report).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "by_category".into(),
            serde_json::to_value(report.by_category()).unwrap_or_default(),
        );
    }
    v
}

/// The exit status and the history's status.
fn status(report: &Report, fail_on: Option<&str>, interrupted: bool) -> (i32, &'static str) {
    let worst = report.cases.iter().map(|c| c.verdict).max();
    let bar = match fail_on {
        Some("lenient") => Some(Verdict::Lenient),
        Some(_) => Some(Verdict::Unsafe),
        None => None,
    };
    match report.ended {
        _ if interrupted => (webstand_lab::interrupt::exit_status(), "interrupted"),
        Ended::Interrupted => (webstand_lab::interrupt::exit_status(), "interrupted"),
        Ended::TargetLost => (5, "target lost"),
        // Exit 3 and the history's status agree (docs/EXIT-STATUS.md): cases past --fail-on.
        _ if bar.is_some() && worst >= bar => (3, "errors"),
        _ => (0, "complete"),
    }
}

fn humanize(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// The probe's row in the history, begun with its first case (an unreachable target leaves no
/// row), and its cases as they complete. Failures only warn: the table is what the user asked for.
struct History<'a> {
    global: &'a Global,
    url: String,
    saved: std::cell::RefCell<Option<(webstand_store::Store, webstand_store::RunId)>>,
    failed: std::cell::Cell<bool>,
}

impl History<'_> {
    fn begin<'g>(global: &'g Global, url: &str) -> History<'g> {
        History {
            global,
            url: url.to_string(),
            saved: Default::default(),
            failed: Default::default(),
        }
    }

    fn add(&self, r: &CaseResult) {
        let mut saved = self.saved.borrow_mut();
        if saved.is_none() && !self.failed.get() {
            let begun = (|| -> anyhow::Result<_> {
                let store = webstand_store::Store::open(self.global.db.as_deref())?;
                let run = store.begin_run(&webstand_store::RunMeta {
                    kind: "probe".into(),
                    command_line: std::env::args().collect::<Vec<_>>().join(" "),
                    target: self.url.clone(),
                })?;
                Ok((store, run))
            })();
            self.failed.set(begun.is_err());
            *saved = begun.map_err(warn).ok();
        }
        if let Some((store, run)) = saved.as_ref() {
            let case = webstand_store::ProbeCase {
                name: r.name.clone(),
                category: r.category.clone(),
                verdict: r.verdict.name().to_ascii_lowercase(),
                result_json: serde_json::to_string(r).unwrap_or_default(),
            };
            let _ = store.add_probe_case(*run, &case).map_err(warn);
        }
    }

    fn finish(&self, status: &str) {
        if let Some((store, run)) = self.saved.borrow().as_ref() {
            let _ = store.finish_run(*run, status).map_err(warn);
        }
    }
}

fn warn(e: anyhow::Error) {
    eprintln!("webstand: warning: the probe was not saved in the history: {e:#}");
}

/// A saved probe's table (`webstand show N`).
pub fn stored(
    store: &webstand_store::Store,
    run: &webstand_store::StoredRun,
) -> anyhow::Result<String> {
    let cases = store
        .probe_cases(run.id)?
        .iter()
        .map(|c| serde_json::from_str::<CaseResult>(&c.result_json))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("reading the cases of probe run {}", run.id))?;
    if cases.is_empty() {
        return Ok("(no case completed)\n".into());
    }
    let count = |v: Verdict| cases.iter().filter(|c| c.verdict == v).count();
    Ok(format!(
        "{}\n{} case runs: {} safe, {} lenient, {} unsafe\n",
        webstand_probe::table::rows(&cases).trim_start_matches('\n'),
        cases.len(),
        count(Verdict::Safe),
        count(Verdict::Lenient),
        count(Verdict::Unsafe)
    ))
}
