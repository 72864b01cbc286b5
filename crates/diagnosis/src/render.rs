//! A diagnosis as the user reads it: the Diagnosis section printed after a report, and its JSON
//! (which the history keeps, and [`from_json`] reads back).

use crate::findings::{Diagnosis, Finding, Limit};
use crate::watch::Watched;
use serde_json::{json, Value};
use webstand_results::text::wrap;

/// The Diagnosis section: one line for a clean run, else the verdict and one line per finding.
pub fn section(d: &Diagnosis) -> String {
    wrap(&format!(
        "\nDiagnosis: {}\n{}",
        headline(d),
        finding_lines(d, "  ")
    ))
}

/// The Diagnosis section of several levels: a headline per level (`label`: "8 clients",
/// "small-files at 8 clients"), each followed by its findings.
pub fn levels_section<'a>(levels: impl IntoIterator<Item = (String, &'a Diagnosis)>) -> String {
    let mut out = String::from("\nDiagnosis:\n");
    for (label, d) in levels {
        out.push_str(&format!("  {label}: {}\n", headline(d)));
        out.push_str(&finding_lines(d, "    "));
    }
    wrap(&out)
}

/// One finding a line, "- evidence: what to do", each line starting with `indent` (wrapped at
/// the reports' width, `webstand_results::text::wrap`, by the sections that print them).
pub fn finding_lines(d: &Diagnosis, indent: &str) -> String {
    d.findings
        .iter()
        .map(|f| format!("{indent}- {}: {}\n", f.evidence, f.advice))
        .collect()
}

/// The verdict line's text, without "Diagnosis: ": one verdict, "no problem found" only when
/// nothing bound the run, then how busy each side was when known.
pub fn headline(d: &Diagnosis) -> String {
    // The generator's work beside the verdicts that weigh the two sides' CPU; the server's always.
    let weighs_cpu = matches!(
        d.verdict,
        None | Some(
            Limit::Server
                | Limit::Generator
                | Limit::BothSaturated
                | Limit::Saturated
                | Limit::Pool
        )
    );
    let sides = [
        d.server_busy
            .map(|b| format!("the server used {:.0} % of its CPUs", b * 100.0)),
        d.generator_busy
            .filter(|_| weighs_cpu)
            .map(|b| format!("the generator's busiest thread worked {:.0} %", b * 100.0)),
    ];
    let sides: Vec<String> = sides.into_iter().flatten().collect();
    let sides = match sides.is_empty() {
        true => String::new(),
        false => format!(" ({})", sides.join("; ")),
    };
    match d.verdict {
        Some(v) => format!("{}{sides}", v.verdict()),
        None => format!("no problem found{sides}"),
    }
}

/// The short name of what bound a level, for a table column ("-" when nothing did).
pub fn bound_cell(d: &Diagnosis) -> &'static str {
    d.verdict.map_or("-", Limit::short)
}

/// Marks a comparison row's (round's) peak by its diagnosis, live or read back from the history:
/// its Bound-by cell, and a note when the peak is not the server's limit (the generator's, or both
/// sides' at once).
pub fn mark_peak(w: &mut webstand_results::WorkloadOutcome, d: &Diagnosis) {
    use webstand_results::Note;
    w.peak_bound = Some(bound_cell(d).to_string());
    match d.verdict {
        Some(Limit::Generator) => w.disclosures.push(Note::PeakGeneratorBound),
        Some(Limit::BothSaturated) => w.disclosures.push(Note::PeakBothSaturated),
        _ => {}
    }
}

/// A diagnosis read back from its [`json`] (the history keeps that object); None when it is not one.
pub fn from_json(v: &Value) -> Option<Diagnosis> {
    let verdict = match &v["verdict"] {
        Value::Null => None,
        Value::String(s) => Some(Limit::from_short(s)?),
        _ => return None,
    };
    let findings: Vec<Finding> = serde_json::from_value(v.get("findings")?.clone()).ok()?;
    Some(Diagnosis {
        verdict,
        findings,
        server_busy: v["evidence"]["server_busy"].as_f64(),
        generator_busy: v["evidence"]["generator_busy"].as_f64(),
    })
}

/// The diagnosis with its evidence, for `--json`.
pub fn json(d: &Diagnosis, w: &Watched) -> Value {
    json!({
        "verdict": d.verdict.map(Limit::short),
        "summary": headline(d),
        "findings": d.findings,
        "evidence": {
            "tcp_counters_host_wide": w.tcp.0,
            "load_threads": w.threads,
            "link": w.link,
            "errors_per_interval": w.errors,
            "completions_per_interval": w.completions,
            "server_busy": d.server_busy,
            "generator_busy": d.generator_busy,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnosis_reads_back_from_its_json() {
        let d = Diagnosis {
            verdict: Some(Limit::ListenQueue),
            findings: vec![Finding {
                limit: Limit::ListenQueue,
                evidence: "listen queue overflowed 3 times".into(),
                advice: "raise the backlog".into(),
            }],
            server_busy: Some(0.25),
            generator_busy: Some(0.5),
        };
        let back = from_json(&json(&d, &Watched::default())).unwrap();
        assert_eq!(back, d);
        assert_eq!(section(&back), section(&d));
        let clean = Diagnosis {
            verdict: None,
            findings: vec![],
            server_busy: None,
            generator_busy: None,
        };
        assert_eq!(from_json(&json(&clean, &Watched::default())), Some(clean));
        assert_eq!(from_json(&serde_json::json!({"verdict": "sunspots"})), None);
        assert_eq!(from_json(&serde_json::json!("text")), None);
    }
}
