//! `webstand`: the command line. Clap definitions and wiring only; the work is done by the crates in
//! crates/ (engine, workload, lab, server, report, store).

mod cmd;
mod ranks;

use clap::{Parser, Subcommand};

/// Exit statuses: 0 complete; 1 the command could not run (bad input, unreachable database …);
/// 2 a bad command line; 3, 4, 5 and 130 a run's outcome (docs/EXIT-STATUS.md).
use std::path::PathBuf;

/// A test stand for web servers: an ab/wrk-compatible load generator, concurrency sweeps, a lab of
/// real servers side by side, and an embedded event-driven web server.
///
/// With no subcommand, runs the main job: fixtures in a temporary directory, the embedded server on a
/// free loopback port, Tenon's sweep on the 2 KiB file and the small-file run.
#[derive(Parser)]
#[command(name = "webstand", version, after_help = cmd::help::main())]
struct Cli {
    /// History database [default: $XDG_DATA_HOME/webstand/history.db]
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,

    #[command(subcommand)]
    cmd: Option<Cmd>,

    #[command(flatten)]
    main_job: cmd::main_job::Args,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
enum Cmd {
    /// One load run against a URL, reported in ab's layout (ab- and wrk-compatible options)
    Bench(cmd::bench::Args),
    /// Serve a directory with webstand's own web server
    Serve(cmd::serve::Args),
    /// Write the deterministic benchmark docroot (2k.html, small/, WebStone files, large files, CGI)
    Fixtures(cmd::fixtures::Args),
    /// Run a workload at rising concurrency and print the classic benchmarks' tables
    Sweep(cmd::sweep_args::Args),
    /// Start real web servers on one docroot and compare them side by side
    Compare(cmd::compare::Args),
    /// List saved runs
    History(cmd::history::HistoryArgs),
    /// Print a saved run's tables again
    Show(cmd::history::ShowArgs),
    /// Compare two saved runs metric by metric
    Diff(cmd::history::DiffArgs),
    /// Export a saved run as JSON, CSV or HdrHistogram percentile text
    Export(cmd::history::ExportArgs),
    /// Write a self-contained HTML report with charts for saved runs
    Report(cmd::history::ReportArgs),
    /// Send hostile and edge-case requests to a server and judge each answer: safe, lenient, unsafe
    Probe(cmd::probe::Args),
    /// The lab's servers one at a time: `lab up SERVER` starts one on the lab's own config
    Lab(cmd::lab::Args),
}

/// Options every subcommand sees.
pub struct Global {
    pub db: Option<PathBuf>,
}

/// A panic is a bug, but the user still gets one line, not a backtrace. The one panic that is not a
/// bug is `println!` into a pipe whose reader left (`webstand history | head`): that ends quietly,
/// with the shell's usual status for SIGPIPE. (SIGPIPE itself stays ignored: the engine and the
/// server write to sockets whose peers may vanish.) Either way the process ends at once, so
/// everything the lab started is stopped first.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        webstand_lab::leftovers::stop_everything();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if msg.contains("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("webstand: internal error: {msg}{at}");
        std::process::exit(101);
    }));
}

fn main() {
    install_panic_hook();
    // Under mpirun: ranks other than 0 serve rank 0's plans and end inside this call.
    ranks::start();
    let cli = Cli::try_parse().unwrap_or_else(|e| {
        let code = cmd::usage::clap_error(e);
        ranks::finish();
        std::process::exit(code)
    });
    let global = Global { db: cli.db };
    // The measuring commands stop in order on SIGINT, SIGTERM and SIGHUP (`serve` drains on its
    // own); those that start processes first clean up after a webstand that was killed outright.
    if !matches!(
        cli.cmd,
        Some(
            Cmd::Serve(_)
                | Cmd::Fixtures(_)
                | Cmd::History(_)
                | Cmd::Show(_)
                | Cmd::Diff(_)
                | Cmd::Export(_)
                | Cmd::Report(_)
        )
    ) {
        webstand_lab::interrupt::install();
    }
    if matches!(
        cli.cmd,
        None | Some(Cmd::Sweep(_) | Cmd::Compare(_) | Cmd::Lab(_))
    ) {
        webstand_lab::leftovers::clean_up_after_the_dead();
    }
    if cli.cmd.is_some() && cli.main_job.full {
        // Not a clap conflict rule: that would also refuse the global --db before a subcommand.
        eprintln!("webstand: error: --full belongs to the main job (`webstand --full`), not to a subcommand");
        ranks::finish();
        std::process::exit(2);
    }
    let outcome = match cli.cmd {
        None => cmd::main_job::run(cli.main_job, &global),
        Some(Cmd::Bench(a)) => cmd::bench::run(a, &global),
        Some(Cmd::Serve(a)) => cmd::serve::run(a, &global),
        Some(Cmd::Fixtures(a)) => cmd::fixtures::run(a, &global),
        Some(Cmd::Sweep(a)) if cmd::wordpress::wanted(&a) => cmd::wordpress::run(&a, &global),
        Some(Cmd::Sweep(a)) => cmd::sweep::run(a, &global),
        Some(Cmd::Compare(a)) => cmd::compare::run(a, &global),
        Some(Cmd::History(a)) => cmd::history::history(a, &global),
        Some(Cmd::Show(a)) => cmd::history::show(a, &global),
        Some(Cmd::Diff(a)) => cmd::history::diff(a, &global),
        Some(Cmd::Export(a)) => cmd::history::export(a, &global),
        Some(Cmd::Report(a)) => cmd::history::report(a, &global),
        Some(Cmd::Probe(a)) => cmd::probe::run(a, &global),
        Some(Cmd::Lab(a)) => cmd::lab::run(a),
    };
    let code = match outcome {
        Ok(code) => code,
        Err(e) => {
            // One line, with the context chain, never a backtrace.
            eprintln!("webstand: error: {e:#}");
            1
        }
    };
    ranks::finish();
    webstand_lab::interrupt::exit(code);
}
