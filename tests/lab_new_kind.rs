//! A new server kind is one file implementing `ServerKind` and one line in a registry: this test is
//! that file for a throw-away kind (Python's `http.server`), adds it to a registry of its own (the
//! lab's plus one line) and runs it through a real short comparison beside the builtin server.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;
use webstand_lab::compare::{self, CompareObserver, Options};
use webstand_lab::servers::config::{Ctx, Launch};
use webstand_lab::servers::{Cgi, Kind, ServerKind};
use webstand_lab::sweep::Observer;
use webstand_results::Stop;
use webstand_results::WorkloadKind;

/// Python's `http.server`, one thread, HTTP/1.0 (a connection per request).
struct PythonHttp;

impl ServerKind for PythonHttp {
    fn name(&self) -> &'static str {
        "python-http"
    }
    fn package(&self) -> &'static str {
        "python3"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["python3"]
    }
    /// Debian's python3, which the worker user the lab drops to as root can run.
    fn program(&self, _webstand: Option<&Path>) -> Option<PathBuf> {
        Some(PathBuf::from("/usr/bin/python3")).filter(|p| p.is_file())
    }
    fn version_flag(&self) -> &'static str {
        "--version"
    }
    fn model(&self) -> &'static str {
        "1 thread, HTTP/1.0"
    }
    fn keeps_alive(&self) -> bool {
        false
    }
    fn cgi(&self) -> Cgi {
        Cgi::No("the throw-away kind runs no CGI")
    }
    fn launch(&self, c: &Ctx) -> Launch {
        Launch {
            args: ["-m", "http.server", "--bind", "127.0.0.1", "--directory"]
                .map(String::from)
                .into_iter()
                .chain([c.d.clone(), c.port.to_string()])
                .collect(),
            // It cannot drop root itself: as root the lab starts it as the worker user.
            as_worker: c.worker.is_some(),
            ..Default::default()
        }
    }
}

/// Notes and nothing else: the comparison's own checks are the test's.
struct Quiet;
impl Observer for Quiet {}
impl CompareObserver for Quiet {
    fn series(&mut self, _: &str, _: &str, _: &str, _: usize) {}
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
    fn stop_requested(&self) -> bool {
        false
    }
}

#[test]
fn a_kind_added_by_one_file_and_one_registry_line_runs_a_real_comparison() {
    // The lab's registry plus this kind's line.
    let registry: Vec<Kind> = Kind::ALL
        .iter()
        .copied()
        .chain([Kind::new(&PythonHttp)])
        .collect();
    assert!(Kind::parse("python-http").is_err(), "not in the lab's own");
    let servers = Kind::parse_list_in(&registry, "python-http,builtin").unwrap();
    let dir = webstand_lab::compare::scratch_dir().unwrap();
    let mut o = Options::new(dir.path());
    o.servers = servers;
    o.workloads = vec![WorkloadKind::TwoK];
    o.levels = vec![1, 4];
    o.stop = Stop {
        requests: Some(100_000),
        duration: Some(Duration::from_millis(500)),
    };
    o.warmup = None;
    o.max_users_for.clear();
    o.builtin = Some(PathBuf::from(env!("CARGO_BIN_EXE_webstand")));
    let c = compare::run(&o, &mut Quiet).unwrap();
    let python = &c.servers[0];
    assert_eq!(python.name, "python-http");
    assert_eq!(python.skipped, None);
    assert!(python.version.starts_with("3."), "{}", python.version);
    let w = &python.workloads[0];
    let sweep = w.sweep.as_ref().unwrap_or_else(|| panic!("{:?}", w.note));
    assert_eq!(sweep.levels.len(), 2);
    for l in &sweep.levels {
        assert!(
            l.result.complete > 0 && l.result.errors() == 0,
            "{:?}",
            l.result
        );
        assert_eq!(l.result.keep_alive_share(), 0.0, "a connection per request");
    }
    assert!(
        w.disclosures.contains(&webstand_results::Note::NoKeepAlive),
        "{:?}",
        w.disclosures
    );
    assert!(w.server_cpu.iter().all(|t| t.total() > Duration::ZERO));
    let builtin = &c.servers[1];
    assert!(
        builtin.workloads[0].sweep.is_some(),
        "{:?}",
        builtin.skipped
    );
    assert!(
        common::lab::processes_under(dir.path()).is_empty(),
        "left running: {:?}",
        common::lab::processes_under(dir.path())
    );
}
