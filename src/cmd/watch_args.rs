//! `--live`, `--metrics-listen ADDR` and `--otlp-endpoint URL`: the run watched while it goes
//! (webstand-watch), one set of flags for bench and sweep, read with a one-line error.

use anyhow::Context;
use std::net::SocketAddr;
use webstand_lab::session::OnRun;
use webstand_watch::{Outputs, Stage, Watch};

#[derive(clap::Args, Clone, Default)]
#[command(next_help_heading = "Watching the run")]
pub struct WatchArgs {
    /// Watch the run in a terminal view: requests/s over time, latency percentiles and histogram,
    /// status codes, errors by class, connections open, the generator's busy share (plain lines on
    /// stderr when stdout is not a terminal); the report prints when it closes
    #[arg(long)]
    pub live: bool,

    /// Listen on ADDR (e.g. 127.0.0.1:9464) while the run goes and serve its metrics in the
    /// Prometheus text format (docs/METRICS.md). It listens on the address given: anyone who can
    /// reach it can read the metrics
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,

    /// Push the run's metrics to an OpenTelemetry collector over OTLP/HTTP (protobuf) every second
    /// and at the end, e.g. http://127.0.0.1:4318 (docs/METRICS.md)
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

impl WatchArgs {
    /// Starts the watcher for `command`, or None when no flag asks for it.
    pub fn start(&self, command: &str) -> anyhow::Result<Option<Watch>> {
        let metrics_listen = self
            .metrics_listen
            .as_deref()
            .map(|a| {
                a.parse::<SocketAddr>().with_context(|| {
                    format!("--metrics-listen {a}: give an address and port, e.g. 127.0.0.1:9464")
                })
            })
            .transpose()?;
        let outputs = Outputs {
            live: self.live,
            metrics_listen,
            otlp_endpoint: self.otlp_endpoint.clone(),
        };
        Watch::start(command, &outputs)
    }
}

/// A sweep's watcher as its session's hook: told of each level (warm-ups shown as they run, not
/// counted as levels), it replaces the progress display when the live view is on. `searching`: a
/// max-users or max-rate search, which prints as it goes, so it takes the metrics but not the view.
pub fn on_run(
    args: &WatchArgs,
    command: &str,
    levels: usize,
    searching: bool,
) -> anyhow::Result<Option<OnRun>> {
    if searching && args.live {
        anyhow::bail!("--live shows a sweep's levels, not a search's (--metrics-listen and --otlp-endpoint do)");
    }
    let Some(watch) = args.start(command)? else {
        return Ok(None);
    };
    let live_view = args.live;
    let mut level = 0;
    Ok(Some(Box::new(move |label, plan, live| {
        let warm_up = label.starts_with("warm-up");
        if !warm_up {
            level += 1;
        }
        let at = (levels > 1).then_some((level.max(1), levels));
        watch.run_starting(live, Stage::of(label, plan, at));
        live_view
    })))
}
