//! `webstand sweep`'s command line, as clap reads it.

use super::presets::Preset;
use super::sweep_table::Table;
use super::workload_args::WorkloadArgs;

#[derive(clap::Args)]
#[command(after_help = super::help::measuring("docs/SWEEP.md"))]
pub struct Args {
    /// Target URL, e.g. http://127.0.0.1:8080/2k.html. Without one (and no URL file naming one), the
    /// sweep runs against the embedded server on fresh fixtures, as `webstand` alone does. With
    /// --preset only its host:port is used
    #[arg(value_name = "URL")]
    pub url: Option<String>,

    /// Client levels: a list (1,2,4,8), a range with a step (16..128/16) or a factor (1..1024*2), or a
    /// mix [default: 1,2,4,8,16,32, or the preset's; 16 with --rate]. A client is a connection (with
    /// --h2, carrying up to -m streams)
    #[arg(short = 'c', long, value_name = "LEVELS")]
    pub clients: Option<String>,

    /// Requests per level; with -d as well, the first reached ends the level
    #[arg(short = 'n', long, value_name = "N")]
    pub requests: Option<u64>,

    /// Time per level: 30, 500ms, 10s, 2m [default: 5s when -n is not given]
    #[arg(short = 'd', long, value_name = "DURATION")]
    pub duration: Option<String>,

    /// Warm-up run before each level, not measured; 0 for none
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub warmup: String,

    /// Table: full (every figure per level), tenon (Clients, Hits/Sec, Kbytes/Sec), webstone
    /// (Clients, Conn/second, Errors/second, Latency, Little's Law, Throughput) or ab (ab's report for
    /// each level) [default: full, or the preset's]
    #[arg(long, value_name = "LAYOUT")]
    pub table: Option<Table>,

    /// Print the sweep as one JSON document on stdout instead of tables
    #[arg(long)]
    pub json: bool,

    /// A classic benchmark's experiment, its levels, workload and table (docs/SWEEP.md, Presets)
    #[arg(long, value_enum, value_name = "NAME")]
    pub preset: Option<Preset>,

    /// With --preset wordpress: the lab's servers to run
    /// [default: apache-modphp,lighttpd,nginx,h2o,caddy,apache,builtin]
    #[arg(long, value_name = "LIST", requires = "preset")]
    pub servers: Option<String>,

    /// With --preset: the original benchmark's lengths (tenon 1,000,000 requests per level, webstone1 5 min,
    /// webstone2 10 min, thttpd-small 1 min)
    #[arg(long, requires = "preset")]
    pub full: bool,

    /// Keep connections alive between requests (off by default, as in the classic benchmarks)
    #[arg(short = 'k', long)]
    pub keep_alive: bool,

    /// A duration: the per-request timeout (a request with no progress for this long fails).
    /// Anything not starting with a digit: wrk's -s, a Lua script run with every level
    /// (docs/SCRIPTING.md)
    #[arg(short = 's', long, value_name = "DURATION|FILE", default_value = "30s")]
    pub timeout: String,

    #[command(flatten)]
    pub script: super::script_runs::ScriptArgs,

    /// Load-generator threads (0 = one per CPU the generator may use)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    #[command(flatten)]
    pub spin: super::spin_args::SpinArgs,

    /// Find max users: double the clients from --start-clients until a bound breaks
    /// (--max-error-pct, --max-p99-ms), then bisect; report the largest clean level. With --h2
    /// the clients searched are connections, each with -m streams (fixed)
    #[arg(long, conflicts_with_all = ["rate", "clients"])]
    pub find_max_users: bool,

    /// A level with more errors than this (failed or non-2xx, % of attempted requests) is not clean:
    /// it is never the peak, it ends a max-users search, and it makes the sweep exit with status 3
    #[arg(long, value_name = "PCT", default_value_t = webstand_results::figures::DEFAULT_MAX_ERROR_PCT)]
    pub max_error_pct: f64,

    /// Max users: a level breaks above this 99th-percentile latency in ms [default: no bound]
    #[arg(long, value_name = "MS")]
    pub max_p99_ms: Option<f64>,

    /// Max users: the first level tried
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub start_clients: usize,

    /// Max users: never more clients than this
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_clients: usize,

    /// Open loop: R requests per second in total, paced across the connections (--clients); latency
    /// counts from each request's intended send time, and sends that left late are reported
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub rate: Option<String>,

    /// With --rate: random (exponential) gaps between sends at the same mean rate
    #[arg(long, requires = "rate")]
    pub jitter: bool,

    /// No progress display
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// The server's process, when you started it yourself: its CPU over each level goes into the
    /// Diagnosis (the embedded server's is watched without it)
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<i32>,

    /// The speed of the link to the server when sysfs does not know it (veth, a shaped or remote
    /// link), as tc writes rates: 20mbit, 1gbit. The Diagnosis says "limited by the network" when
    /// a level's bytes/s come near it
    #[arg(long, value_name = "RATE")]
    pub link_speed: Option<String>,

    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// HTTP/2: --h2 and h2load's -m, -w (--window-bits), -W; every level an h2 run
    #[command(flatten)]
    pub h2: super::h2_args::H2Args,

    /// With --h2: streams in flight per connection, as h2load's -m (--max-streams says the same)
    #[arg(short = 'm', value_name = "N")]
    pub streams: Option<String>,

    /// The run watched while it goes: --live, --metrics-listen, --otlp-endpoint
    #[command(flatten)]
    pub watch: super::watch_args::WatchArgs,

    /// --find-max-rate, --slo and the search's bounds
    #[command(flatten)]
    pub max_rate: super::max_rate::MaxRateArgs,

    /// --threshold, --junit, --summary-md: judged on every level (a max-rate search: on its answer)
    #[command(flatten)]
    pub thresholds: super::threshold_args::ThresholdArgs,
}
