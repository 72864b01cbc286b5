//! What tells saved runs apart: each run's settings (target, clients, keep-alive, protocol, the
//! other options it was given, the versions and the machine) and its headline figure. `history`
//! shows the first few and the headline on each run's line; `diff` names the settings its two sides
//! differ in.

use super::stored::{compare_rows, max_error_pct, option_given, protocols_spoken};
use webstand_store::StoredRun;

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

/// The clients of the run's levels, each once, in the order first measured.
fn clients(run: &StoredRun) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for l in &run.levels {
        if !out.contains(&l.clients) {
            out.push(l.clients);
        }
    }
    out
}

/// The clients for a narrow column: "4", or "1..32" over several levels ("-" with none).
pub fn clients_span(run: &StoredRun) -> String {
    let c = clients(run);
    match (c.iter().min(), c.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
        (Some(lo), Some(hi)) => format!("{lo}..{hi}"),
        _ => "-".into(),
    }
}

/// Whether the run kept its connections open: as its command asked (bench's `-k` or
/// `--pipeline`, sweep's `-k`, compare unless `--no-keepalive`; HTTP/2 always), or as its levels
/// show (requests that reused a connection).
pub fn keep_alive(run: &StoredRun) -> bool {
    let asked = match run.meta.kind.as_str() {
        "compare" => !option_given(run, "--no-keepalive"),
        _ => ["-k", "--keep-alive", "--pipeline"]
            .iter()
            .any(|f| option_given(run, f)),
    };
    let h2 = run.protocol.as_ref().is_some_and(|p| p.is_h2());
    asked || h2 || run.levels.iter().any(|l| l.result.keep_alive_requests > 0)
}

/// What the run spoke: "HTTP/1.1", "HTTP/1.1 over TLS", "h2c -m 16", a comparison's "HTTP/1.1, h2".
pub fn protocol(run: &StoredRun) -> String {
    match &run.protocol {
        Some(p) if p.is_h2() => p.to_string(),
        Some(p) => protocols_spoken(run)
            .into_iter()
            .next()
            .unwrap_or_else(|| p.name.clone()),
        None => Some(protocols_spoken(run).join(", "))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "-".into()),
    }
}

/// What the run measured: a comparison's servers and workloads ("builtin, nginx: 2k"), else its
/// target.
pub fn target(run: &StoredRun) -> String {
    if run.meta.kind != "compare" {
        return run.meta.target.clone();
    }
    let (mut servers, mut workloads): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for g in run.groups() {
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
        return run.meta.target.clone();
    }
    format!("{}: {}", servers.join(", "), workloads.join(", "))
}

/// The figure a run is quoted by: its peak hits/s (the fastest level within its error threshold),
/// with the clients there when it had several levels; a comparison's fastest server on its first
/// workload (the median of its rounds, as compare printed it). None when no level was clean.
pub fn headline(run: &StoredRun) -> Option<String> {
    if run.meta.kind == "compare" {
        let (workload, rows) = compare_rows(run).into_iter().next()?;
        let best = rows
            .iter()
            .filter(|r| r.measured)
            .max_by(|a, b| a.peak_hits_per_sec.total_cmp(&b.peak_hits_per_sec))?;
        return Some(format!(
            "{:.0} hits/s {} ({workload})",
            best.peak_hits_per_sec, best.server
        ));
    }
    let results = run.levels.iter().map(|l| &l.result);
    let i = webstand_results::figures::peak(results, max_error_pct(run))?;
    let peak = &run.levels[i];
    let hits = peak.result.hits_per_sec();
    Some(match run.levels.len() {
        1 => format!("{hits:.0} hits/s"),
        _ => format!("{hits:.0} hits/s @{}", peak.clients),
    })
}

/// The options of the run's command line after its command, as (flag, value), "yes" for a flag
/// without one. Values are the words that follow a flag unless they are flags or URLs themselves.
fn options(run: &StoredRun) -> Vec<(String, String)> {
    let words: Vec<&str> = run.meta.command_line.split_whitespace().collect();
    let start = words
        .iter()
        .position(|w| *w == run.meta.kind)
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

/// Every setting of the run that may tell it from another, in a fixed order: target, clients,
/// keep-alive, protocol, then its other options as given (those that only change how it is shown
/// left out), the server, webstand's version and the machine.
pub fn settings(run: &StoredRun) -> Vec<(String, String)> {
    let list = |v: Vec<usize>| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let mut out = vec![
        ("target".to_string(), target(run)),
        ("clients".to_string(), list(clients(run))),
        (
            "keep-alive".to_string(),
            if keep_alive(run) { "yes" } else { "no" }.to_string(),
        ),
        ("protocol".to_string(), protocol(run)),
    ];
    let h2 = run.protocol.as_ref().is_some_and(|p| p.is_h2());
    for (flag, value) in options(run) {
        let streams = flag == "-m" && h2 && value.parse::<u32>().is_ok();
        if DISPLAY_ONLY.contains(&flag.as_str()) || DERIVED.contains(&flag.as_str()) || streams {
            continue;
        }
        match out.iter_mut().find(|(k, _)| *k == flag) {
            Some((_, v)) => *v = format!("{v} {value}"),
            None => out.push((flag, value)),
        }
    }
    let mut servers: Vec<&str> = Vec::new();
    for v in run
        .levels
        .iter()
        .filter_map(|l| l.server_version.as_deref())
    {
        if !servers.contains(&v) {
            servers.push(v);
        }
    }
    if !servers.is_empty() {
        out.push(("server".into(), servers.join(", ")));
    }
    let m = &run.machine;
    out.push(("webstand".into(), run.version.clone()));
    out.push((
        "machine".into(),
        format!(
            "{}, {} cores, {}, host {}",
            m.cpu_model, m.cores, m.kernel, m.hostname
        ),
    ));
    out
}
