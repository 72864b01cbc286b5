//! `webstand lab`: the lab's servers one at a time, outside a comparison. `lab up` starts one on the
//! lab's own config (`webstand_lab::up`) and keeps it until a signal.

use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;
use webstand_lab::servers::Kind;
use webstand_lab::tls::ciphers::Versions;
use webstand_lab::up::{Up, UpOptions};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: LabCmd,
}

#[derive(clap::Subcommand)]
pub enum LabCmd {
    /// Start one lab server as `compare` starts it, on loopback, until Ctrl-C, SIGTERM or SIGHUP;
    /// prints `key=value` lines (url, port, pid…) ending in `ready=1` (docs/COMPARE.md)
    #[command(after_help = super::help::LAB_UP)]
    Up(UpArgs),
}

#[derive(clap::Args)]
pub struct UpArgs {
    /// The server: builtin, builtin-nocache, nginx, lighttpd, apache, apache-modphp, h2o, caddy,
    /// mini_httpd
    pub server: String,
    /// HTTPS only, with a certificate the lab generates (its CA's file printed as `ca=`)
    #[arg(long)]
    pub tls: bool,
    /// With --tls: offer TLS 1.2 or 1.3 alone, for a figure of one version against a client that
    /// cannot choose (wrk) [default: both, as every comparison]
    #[arg(long, value_name = "1.2|1.3", value_parser = Versions::parse)]
    pub tls_version: Option<Versions>,
    /// HTTP/2 too: by ALPN with --tls, by prior knowledge (h2c) on the plain port without
    #[arg(long)]
    pub h2: bool,
    /// HTTP/3 too, over QUIC on UDP at the HTTPS port (needs --tls); ready once it answers
    #[arg(long)]
    pub h3: bool,
    /// PHP-FPM behind the server, `.php` passed to it (its pid printed as `php_fpm_pid=`)
    #[arg(long)]
    pub php: bool,
    /// The port on 127.0.0.1 [default: a free one]
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// The directory to serve [default: the lab's own docroot, made afresh and removed after]
    #[arg(long, value_name = "DIR")]
    pub docroot: Option<PathBuf>,
    /// CPUs to pin the server (and PHP-FPM) to, e.g. 0 or 0,2 [default: CPU 0 where this process
    /// may use it and another one, as `compare` pins its servers]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub cpus: Option<Vec<usize>>,
}

pub fn run(args: Args) -> Result<i32> {
    match args.cmd {
        LabCmd::Up(a) => up(a),
    }
}

fn up(a: UpArgs) -> Result<i32> {
    let opts = UpOptions {
        kind: Kind::parse(&a.server)?,
        tls: a.tls,
        tls_versions: a.tls_version.unwrap_or_default(),
        h2: a.h2,
        h3: a.h3,
        php: a.php,
        port: a.port,
        docroot: a.docroot,
        cpus: a.cpus,
        webstand: std::env::current_exe().ok(),
    };
    let mut up = Up::start(&opts)?;
    let mut out = std::io::stdout().lock();
    for (key, value) in up.lines() {
        writeln!(out, "{key}={value}")?;
    }
    out.flush()?;
    drop(out);
    let waited = up.wait();
    let stopped = up.stop();
    waited.and(stopped)?;
    Ok(0)
}
