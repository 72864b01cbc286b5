//! `--junit` files read back by junitparser (PyPI), the JUnit reader CI tools build on, from the venv
//! scripts/install-deps.sh made: each suite with the counts it declares and the cases it holds, and
//! each case with how it ended.

use std::path::{Path, PathBuf};
use std::process::Command;

/// junitparser's version, as scripts/install-deps.sh pins it.
const JUNITPARSER: &str = "4.0.2";

/// One test case as junitparser read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub suite: String,
    pub name: String,
    /// "passed", "failure", "error" or "skipped".
    pub ended: String,
    /// The failure's, error's or skip's message; a passed case's system-out.
    pub message: String,
}

/// A JUnit document: the counts its root declares (tests, failures, errors, skipped) and its cases.
#[derive(Debug)]
pub struct Read {
    pub totals: [usize; 4],
    pub cases: Vec<Case>,
}

impl Read {
    pub fn case(&self, suite: &str, name: &str) -> &Case {
        self.cases
            .iter()
            .find(|c| c.suite.starts_with(suite) && c.name == name)
            .unwrap_or_else(|| panic!("no case {name:?} in a suite {suite:?}: {self:#?}"))
    }
}

/// The python of the junitparser venv; the test fails naming the install script when it is missing.
fn python() -> PathBuf {
    let venv = match std::env::var_os("WEBSTAND_JUNITPARSER_VENV") {
        Some(v) => PathBuf::from(v),
        None => {
            let data = std::env::var_os("XDG_DATA_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var("HOME").unwrap()).join(".local/share")
                });
            data.join(format!("webstand/junitparser-{JUNITPARSER}"))
        }
    };
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "junitparser {JUNITPARSER} is not installed at {} (scripts/install-deps.sh installs it)",
        venv.display()
    );
    python
}

/// Reads `file` with junitparser; checks that every suite's declared counts are its cases'.
pub fn read(file: &Path) -> Read {
    const PY: &str = r#"
import sys, junitparser as j
x = j.JUnitXml.fromfile(sys.argv[1])
assert isinstance(x, j.JUnitXml), "the root is not <testsuites>"
print("totals", x.tests, x.failures, x.errors, x.skipped, sep="\t")
for s in x:
    kinds = [type(c.result[0]).__name__.lower() if c.result else "passed" for c in s]
    declared = (s.tests, s.failures, s.errors, s.skipped)
    counted = (len(kinds), kinds.count("failure"), kinds.count("error"), kinds.count("skipped"))
    assert declared == counted, f"suite {s.name}: declares {declared}, holds {counted}"
    for c, kind in zip(s, kinds):
        message = (c.result[0].message if c.result else c.system_out) or ""
        print("case", s.name, c.name, kind, message, sep="\t")
"#;
    let out = Command::new(python())
        .args(["-c", PY])
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "junitparser: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(file).unwrap_or_default()
    );
    let mut totals = [0; 4];
    let mut cases = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f[..] {
            ["totals", ..] => {
                for (t, v) in totals.iter_mut().zip(&f[1..]) {
                    *t = v.parse().unwrap();
                }
            }
            ["case", suite, name, ended, ref message @ ..] => cases.push(Case {
                suite: suite.into(),
                name: name.into(),
                ended: ended.into(),
                message: message.join("\t"),
            }),
            _ => panic!("junitparser said {line:?}"),
        }
    }
    Read { totals, cases }
}
