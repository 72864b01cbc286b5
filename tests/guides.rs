//! The user's documentation against the binary: every option `--help` lists is explained in its
//! command's guide and listed under its group's heading, `--help` stays one line per option and
//! lists every exit status, the README stays a short start with the two commands, and neither the
//! docs nor `--help` speak of the project's development history.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Each command (as typed after `webstand`) and the guide in docs/ that documents its options.
const GUIDES: &[(&[&str], &str)] = &[
    (&["bench"], "BENCH.md"),
    (&["sweep"], "SWEEP.md"),
    (&["fixtures"], "SWEEP.md"),
    (&["compare"], "COMPARE.md"),
    (&["lab", "up"], "COMPARE.md"),
    (&["serve"], "SERVE.md"),
    (&["probe"], "PROBE.md"),
    (&["history"], "HISTORY.md"),
    (&["show"], "HISTORY.md"),
    (&["diff"], "HISTORY.md"),
    (&["export"], "HISTORY.md"),
    (&["report"], "HISTORY.md"),
];

/// The commands that measure, whose exit statuses are the run's outcome.
const MEASURING: &[&str] = &["bench", "sweep", "compare"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_webstand"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "webstand {args:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The options of a `--help` text: the long name where there is one, else the short one.
fn options(help: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in help.lines() {
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        let rest = rest.trim_start();
        if !rest.starts_with('-') {
            continue;
        }
        let names: Vec<&str> = rest
            .split_whitespace()
            .take_while(|w| w.starts_with('-') && w.len() > 1)
            .map(|w| w.trim_end_matches(','))
            .collect();
        let name = names.iter().find(|n| n.starts_with("--")).or(names.first());
        if let Some(name) = name {
            found.push(name.to_string());
        }
    }
    found
}

/// Whether `text` names `flag` as a whole word (`--threads`, not `--threads-max`).
fn names(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(at, _)| {
        let next = text[at + flag.len()..].chars().next();
        !matches!(next, Some(c) if c.is_alphanumeric() || c == '-' || c == '_')
    })
}

#[test]
fn every_option_in_help_is_in_its_commands_guide() {
    let mut missing = Vec::new();
    for (command, guide) in GUIDES {
        let doc = read(&root().join("docs").join(guide));
        for flag in options(&help(command)) {
            if ["--help", "-h", "--version", "-V", "--db"].contains(&flag.as_str()) {
                continue; // every command's; the README and HISTORY.md say what --db is
            }
            if !names(&doc, &flag) {
                missing.push(format!("{} {flag} (docs/{guide})", command.join(" ")));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "options no guide explains: {missing:#?}"
    );
}

#[test]
fn help_is_one_line_per_option_and_lists_every_exit_status() {
    for (command, _) in GUIDES {
        let text = help(command);
        for line in text.lines() {
            let words = line.split_whitespace().count();
            assert!(
                words <= 50,
                "webstand {} --help: a line of {words} words belongs in the guide: {line}",
                command.join(" ")
            );
        }
        assert!(
            text.contains("Guide: docs/"),
            "webstand {} --help names no guide:\n{text}",
            command.join(" ")
        );
    }
    for command in MEASURING {
        let text = help(&[command]);
        for status in [
            "0 complete",
            "1 could not run",
            "2 bad command line",
            "3 errors",
            "130",
        ] {
            assert!(
                text.contains(status),
                "webstand {command} --help: no \"{status}\" in its exit statuses:\n{text}"
            );
        }
    }
}

#[test]
fn bench_help_lists_its_url_as_an_argument_not_under_a_heading() {
    let text = help(&["bench"]);
    let url = text.find("  [URL]").expect("bench --help lists [URL]");
    let arguments = text.find("Arguments:").expect("an Arguments heading");
    let options = text.find("Options:").expect("an Options heading");
    assert!(
        arguments < url && url < options,
        "[URL] is not under Arguments:\n{text}"
    );
}

/// The option groups `--help` gives a heading of their own, each with every option it holds.
const HEADINGS: &[(&str, &[&str])] = &[
    (
        "TLS (https:// URLs)",
        &["-f", "-Z", "-E", "-I", "--cacert", "--tls-resume"],
    ),
    (
        "HTTP/2 and HTTP/3 (h2load's options)",
        &[
            "--h2",
            "--h3",
            "--max-streams",
            "--window-bits",
            "--connection-window-bits",
            "--max-requests-per-connection",
            "-m",
        ],
    ),
    (
        "Watching the run",
        &["--live", "--metrics-listen", "--otlp-endpoint"],
    ),
    (
        "Max-rate search (open loop)",
        &[
            "--find-max-rate",
            "--slo",
            "--start-rate",
            "--max-rate",
            "--max-steps",
            "--search-time",
            "--rounds",
        ],
    ),
    (
        "Pass/fail thresholds",
        &["--threshold", "--junit", "--summary-md"],
    ),
];

/// A `--help` text's sections: each heading ("Arguments", "Options", "TLS (https:// URLs)" …) with
/// its text.
fn sections(help: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in help.lines() {
        match line.strip_suffix(':') {
            Some(h) if !h.starts_with(' ') && !h.is_empty() => {
                out.push((h.to_string(), String::new()))
            }
            _ => {
                if let Some((_, body)) = out.last_mut() {
                    *body += &format!("{line}\n");
                }
            }
        }
    }
    out
}

#[test]
fn each_option_is_under_its_own_heading() {
    for command in ["bench", "sweep", "compare", "serve"] {
        let text = help(&[command]);
        let found: Vec<(String, Vec<String>)> = (sections(&text).into_iter())
            .map(|(h, body)| {
                // Arguments ([URL], [ARGS]...) go under "Arguments" and nowhere else.
                let positional = body
                    .lines()
                    .any(|l| l.starts_with("  [") || l.starts_with("  <"));
                assert!(
                    !positional || h == "Arguments",
                    "webstand {command} --help lists an argument under \"{h}\":\n{text}"
                );
                (h, options(&body))
            })
            .collect();
        for (heading, options) in &found {
            // A heading of a group holds that group's options and no other.
            if let Some((_, group)) = HEADINGS.iter().find(|(h, _)| h == heading) {
                for o in options {
                    assert!(
                        group.contains(&o.as_str()),
                        "webstand {command} --help lists {o} under \"{heading}\":\n{text}"
                    );
                }
            }
        }
        // And every option of a group the command has is under the group's heading (`-m` is
        // ab's method where HTTP/2 has no heading of its own: bench's Options).
        for (heading, group) in HEADINGS {
            let Some((_, under)) = found.iter().find(|(h, _)| h == heading) else {
                continue;
            };
            for o in group.iter().filter(|o| **o != "-m") {
                let elsewhere = found
                    .iter()
                    .any(|(h, os)| h != heading && os.iter().any(|x| x == o));
                assert!(
                    under.iter().any(|x| x == o) || !elsewhere,
                    "webstand {command} --help lists {o} outside \"{heading}\":\n{text}"
                );
            }
        }
    }
}

/// Where `text` speaks of an issue or session by number, or of a helper's temporary directory.
fn development_history(text: &str) -> Option<String> {
    for (at, _) in text.char_indices() {
        let rest = &text[at..];
        for word in ["issue ", "Issue ", "session ", "Session ", "/tmp/w"] {
            if let Some(after) = rest.strip_prefix(word) {
                if after.starts_with(|c: char| c.is_ascii_digit()) {
                    return Some(rest.chars().take(40).collect());
                }
            }
        }
    }
    None
}

fn files_under(dir: &Path, ext: &str, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, ext, into);
        } else if path.extension().is_some_and(|e| e == ext) {
            into.push(path);
        }
    }
}

#[test]
fn readme_docs_and_help_speak_of_no_development_history() {
    let mut files = vec![root().join("README.md")];
    files_under(&root().join("docs"), "md", &mut files);
    files_under(&root().join("src"), "rs", &mut files);
    // The measured figures keep their provenance; everything else is for users.
    files.retain(|f| !f.ends_with("docs/BENCHMARKS.md"));
    let mut found = Vec::new();
    for file in &files {
        if let Some(at) = development_history(&read(file)) {
            found.push(format!("{}: {at}", file.display()));
        }
    }
    for (command, _) in GUIDES {
        if let Some(at) = development_history(&help(command)) {
            found.push(format!("webstand {} --help: {at}", command.join(" ")));
        }
    }
    if let Some(at) = development_history(&help(&[])) {
        found.push(format!("webstand --help: {at}"));
    }
    assert!(found.is_empty(), "development history: {found:#?}");
    assert!(development_history("as issue 18 showed").is_some());
}

#[test]
fn readme_is_a_short_start_with_the_two_commands_and_working_links() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= 120,
        "README.md has {lines} lines: the reference goes in docs/"
    );
    for command in ["cargo run --release ", "scripts/test.sh "] {
        assert!(
            readme.lines().any(|l| l.starts_with(command)),
            "README.md has no line starting `{command}`"
        );
    }
    let examples = readme
        .lines()
        .filter(|l| l.starts_with("webstand "))
        .count();
    assert!(examples >= 10, "README.md has {examples} examples");
    let mut broken = Vec::new();
    for (at, _) in readme.match_indices("](") {
        let target: String = readme[at + 2..].chars().take_while(|&c| c != ')').collect();
        if !root().join(&target).exists() {
            broken.push(target);
        }
    }
    for (_, guide) in GUIDES {
        assert!(
            readme.contains(&format!("docs/{guide}")),
            "README.md does not point to docs/{guide}"
        );
    }
    assert!(
        broken.is_empty(),
        "README.md links to missing files: {broken:?}"
    );
}
