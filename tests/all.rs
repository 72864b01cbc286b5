//! Every end-to-end test of the `webstand` binary, as one test binary: each file beside this one is
//! a module here. One binary builds `common` once and links once, where fifty binaries compiled it
//! fifty times (a fresh clone's test build was a quarter of CI's time). Files that install their own
//! global allocator (the allocation counts, the fuzzing) stay binaries of their own: Cargo.toml lists
//! them, and `every_test_file_is_built` below fails when a new file is in neither place.

mod common;

mod ab_options;
mod bench;
mod bench_figures;
mod bench_h2;
mod bench_h2_hpack;
mod bench_h2_refused;
mod bench_h3;
mod bench_h3_cwnd;
mod bench_h3_refused;
mod bench_h3_resume;
mod bench_rate_pool;
mod bench_script;
mod bench_script_mux;
mod bench_syscalls;
mod bench_tls;
mod compare_scale;
mod diagnosis;
mod diagnosis_netns;
mod diagnosis_sampler;
mod durations;
mod frictions;
mod guides;
mod history;
mod history_quic;
mod lab;
mod lab_fair;
mod lab_h2;
mod lab_h3;
mod lab_new_kind;
mod lab_php;
mod lab_probe;
mod lab_signals;
mod lab_tls;
mod lab_up;
mod main_job;
mod max_rate;
mod mpi;
mod outcomes;
mod probe;
mod report;
mod report_labels;
mod report_width;
mod serve;
mod serve_fastcgi;
mod serve_fd_limit;
mod serve_h2;
mod serve_h2_hostile;
mod serve_h2_hpack;
mod serve_h3;
mod serve_h3_hostile;
mod serve_h3_load;
mod serve_h3_oha;
mod serve_hostile;
mod serve_own_files;
mod serve_tls;
mod show_rounds;
mod sweep;
mod sweep_h2;
mod sweep_script;
mod thresholds;
mod users_20k;
mod watch_live;
mod watch_otlp;
mod watch_prometheus;
mod workload;

/// A test file is built only when it is a module above or a `[[test]]` of Cargo.toml (the
/// package sets `autotests = false`): a file in neither would never run, silently.
#[test]
fn every_test_file_is_built() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = std::fs::read_to_string(root.join("tests/all.rs")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        let (Some(stem), Some("rs")) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|s| s.to_str()),
        ) else {
            continue;
        };
        let is_module = modules.lines().any(|l| l == format!("mod {stem};"));
        let is_binary = manifest.contains(&format!("path = \"tests/{stem}.rs\""));
        if !is_module && !is_binary {
            missing.push(format!("tests/{stem}.rs"));
        }
    }
    assert!(
        missing.is_empty(),
        "not built: {missing:?}: add `mod NAME;` to tests/all.rs (or a [[test]] to Cargo.toml)"
    );
}
