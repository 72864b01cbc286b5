//! `webstand sweep --preset wordpress`: seed 004's experiment, run by the lab rather than against a
//! URL — Debian's WordPress on a private MariaDB behind apache with mod_php, lighttpd, nginx, h2o,
//! caddy, apache with PHP-FPM and builtin, ab's `-n 1000` at each client level with gzip accepted,
//! printed as the seed's table (a column per server) and each server's sweep over clients. It is
//! `webstand compare --workloads wordpress` with the seed's lengths.

use super::compare::{execute, Printing};
use super::presets::{Preset, WORDPRESS_REQUESTS};
use super::sweep_args::Args;
use crate::Global;
use anyhow::{bail, Result};
use std::time::Duration;
use webstand_lab::compare::{self, Options};
use webstand_lab::servers::Kind;
use webstand_lab::sweep::parse_clients;
use webstand_results::Stop;
use webstand_results::WorkloadKind;

/// The seed's servers first (Apache with mod_php, lighttpd, nginx), then the others that run PHP.
pub const SERVERS: &str = "apache-modphp,lighttpd,nginx,h2o,caddy,apache,builtin";
/// Client levels: the seed's 100 last, its table's column.
pub const CLIENTS: &str = "10,50,100";
/// A bound on each level all the same (1000 requests at the seed's 21.94/s took 46 s).
const LEVEL_LIMIT: Duration = Duration::from_secs(300);

/// Whether a sweep's arguments ask for this preset (or give its --servers, refused without it).
pub fn wanted(args: &Args) -> bool {
    args.preset == Some(Preset::Wordpress) || args.servers.is_some()
}

pub fn run(args: &Args, global: &Global) -> Result<i32> {
    if args.preset != Some(Preset::Wordpress) {
        bail!("--servers is for --preset wordpress (the lab runs the servers)");
    }
    if args.url.is_some() || args.workload.chooses_requests() {
        bail!("--preset wordpress runs the lab's own servers on its own WordPress: give no URL or URL list (--servers picks the servers)");
    }
    if args.full || args.rate.is_some() || args.find_max_users {
        bail!("--preset wordpress takes -c, -n, -d, --servers and --warmup, not --full, --rate or --find-max-users");
    }
    let scratch = compare::scratch_dir()?;
    let mut o = Options::new(&scratch.path().join("docroot"));
    o.servers = Kind::parse_list(args.servers.as_deref().unwrap_or(SERVERS))?;
    o.workloads = vec![WorkloadKind::Wordpress];
    o.levels = parse_clients(args.clients.as_deref().unwrap_or(CLIENTS))?;
    if args.requests == Some(0) {
        bail!("-n must be at least 1 request per level");
    }
    let duration = match &args.duration {
        Some(d) => webstand_duration::positive(d)?,
        None => LEVEL_LIMIT,
    };
    o.stop = Stop {
        requests: Some(args.requests.unwrap_or(WORDPRESS_REQUESTS)),
        duration: Some(duration),
    };
    // A few requests before each server's levels, so PHP's opcache is as warm for the first server
    // as for the last (they share one PHP-FPM).
    o.warmup = match args.warmup.trim() {
        "0" => None,
        w => Some(Stop {
            requests: Some(20),
            duration: Some(webstand_duration::positive(w)?),
        }),
    };
    o.max_users_for = Vec::new();
    o.features = false;
    o.keep_alive = args.keep_alive;
    o.spin = args.spin.rule(false)?;
    o.timeout = webstand_duration::positive(&args.timeout)?;
    o.builtin = std::env::current_exe().ok();
    super::session::check_max_error_pct(args.max_error_pct)?;
    o.max_users.bounds.max_error_pct = args.max_error_pct;
    let printing = Printing {
        script: None,
        scale: None,
        json: args.json,
        quiet: args.quiet,
        max_error_pct: args.max_error_pct,
        sweeps: true,
        thresholds: args.thresholds.clone(),
    };
    let status = execute(&o, &printing, global);
    drop(scratch);
    status
}
