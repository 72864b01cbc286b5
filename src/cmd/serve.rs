//! `webstand serve`: flags → `webstand_server::Config` (over the TOML file when one is given), then run.

use crate::Global;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Duration;
use webstand_server::config::{parse_duration, parse_listen, AuthRule};
use webstand_server::Config;

/// Serve a directory with webstand's own event-driven web server (static files, CGI, FastCGI/PHP,
/// basic auth, throttling), over HTTP, HTTPS and HTTP/3. Prints "listening on http://ADDR" (and
/// "listening on https://ADDR", and "listening on https://ADDR (HTTP/3 over QUIC)") to stderr when
/// ready; SIGTERM or Ctrl-C stops accepting, finishes in-flight requests (HTTP/2 and HTTP/3 are
/// told GOAWAY) and exits 0. Flags override the --config file.
#[derive(clap::Args)]
#[command(after_help = super::help::SERVE)]
pub struct Args {
    /// Directory to serve [default: .]
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,

    /// Where to listen for plain HTTP: PORT (on 127.0.0.1), HOST:PORT or [IPv6]:PORT [default:
    /// 127.0.0.1:8080, none when --listen-tls or --listen-quic is given]
    #[arg(long, value_name = "[HOST:]PORT")]
    listen: Option<String>,

    /// Where to listen for HTTPS (TLS 1.3 and 1.2, ALPN h2 and http/1.1, session tickets and a session
    /// cache), alongside or instead of --listen; needs --tls-cert and --tls-key [default: none]
    #[arg(long, value_name = "[HOST:]PORT")]
    listen_tls: Option<String>,

    /// Where to listen for HTTP/3 over QUIC (UDP), with the certificate of --tls-cert and --tls-key;
    /// HTTPS answers then advertise it (Alt-Svc: h3=":PORT") [default: none]
    #[arg(long, value_name = "[HOST:]PORT")]
    listen_quic: Option<String>,

    /// Make every new QUIC client prove its address with a Retry first (one more round trip);
    /// without it Retry engages only under load: while 64 handshakes are under way in an event
    /// loop [default: off]
    #[arg(long)]
    quic_retry: bool,

    /// PEM certificate chain for --listen-tls and --listen-quic: the server's certificate first,
    /// then intermediates
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,

    /// PEM private key of --tls-cert (RSA, ECDSA or Ed25519; PKCS#8, PKCS#1 or SEC1)
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,

    /// TLS versions --listen-tls offers, named as nginx's ssl_protocols: TLSv1.2, TLSv1.3 or both
    /// (space or comma separated) [default: TLSv1.2 TLSv1.3]
    #[arg(long, value_name = "LIST")]
    tls_protocols: Option<String>,

    /// TOML config file: the flags' long names as keys, '_' for '-' (DIR is `root`; docs/SERVE.md
    /// has an example and the renamed keys); flags given too win
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Event loops (threads), each with its own SO_REUSEPORT listener [default: one per CPU]
    #[arg(long, value_name = "N")]
    threads: Option<usize>,

    /// File served for a directory URL [default: index.html]
    #[arg(long, value_name = "NAME")]
    index: Option<String>,

    /// List directories that have no index file (names HTML-escaped) [default: off, 403]
    #[arg(long)]
    listing: bool,

    /// Accept HTTP/2 by prior knowledge (h2c) on the plain listener; HTTPS offers h2 by ALPN
    /// always [default: off]
    #[arg(long)]
    h2c: bool,

    /// Write a Common Log Format access log to FILE ("-" = stderr), buffered [default: off]
    #[arg(long, value_name = "FILE")]
    access_log: Option<PathBuf>,

    /// Require basic auth under URL PREFIX, users from an htpasswd FILE (bcrypt or {SHA});
    /// repeatable [default: none]
    #[arg(long, value_name = "PREFIX=FILE")]
    auth: Vec<String>,

    /// Realm named in the 401 challenge of every --auth rule [default: webstand]
    #[arg(long, value_name = "TEXT")]
    realm: Option<String>,

    /// Run URLs matching PATTERN as CGI/1.1 programs, e.g. '/cgi-bin/*' (`*` one segment, `**` any,
    /// `|` alternatives); repeatable [default: no CGI]
    #[arg(long, value_name = "PATTERN")]
    cgi: Vec<String>,

    /// Wall-clock limit of a CGI program (e.g. 10s, 500ms) [default: 10s]
    #[arg(long, value_name = "TIME")]
    cgi_timeout: Option<String>,

    /// Most bytes a CGI program may output; more = 502 [default: 4194304]
    #[arg(long, value_name = "BYTES")]
    cgi_max_output: Option<u64>,

    /// Pass URLs matching PATTERN to the FastCGI application at ADDRESS (`unix:/path.sock` or
    /// HOST:PORT), e.g. '*.php=unix:/run/php/php8.2-fpm.sock' (a pattern without '/' matches the
    /// script's name at any depth); repeatable [default: none]
    #[arg(long, value_name = "PATTERN=ADDRESS")]
    fastcgi: Vec<String>,

    /// Time a FastCGI backend may stay silent before the request gets 504 [default: 60s]
    #[arg(long, value_name = "TIME")]
    fastcgi_timeout: Option<String>,

    /// Most connections open to each FastCGI backend, kept between requests (FCGI_KEEP_CONN) and
    /// shared out among the event loops; requests beyond wait for one. Keep it at or below the
    /// backend's workers (php-fpm's pm.max_children): each kept connection holds one [default: 5]
    #[arg(long, value_name = "N")]
    fastcgi_connections: Option<usize>,

    /// Most body bytes of one FastCGI answer; more = 502 [default: 1073741824]
    #[arg(long, value_name = "BYTES")]
    fastcgi_max_output: Option<u64>,

    /// gzip FastCGI answers for clients that accept it: 200s of a textual type (text/*, JSON, JS,
    /// XML) of 256 bytes or more, held whole (up to 128 KiB), at level 1 as nginx's `gzip on`
    #[arg(long)]
    fastcgi_gzip: bool,

    /// thttpd throttle file: lines `pattern max-bytes-per-second` (or `pattern min-max`); the rate is
    /// shared by all connections of the pattern, and new requests get 503 while the bytes already
    /// queued on it exceed 20 s at that rate [default: none]
    #[arg(long, value_name = "FILE")]
    throttle: Option<PathBuf>,

    /// chroot(2) into DIR after binding (DIR must contain the served directory) [default: off]
    #[arg(long, value_name = "DIR")]
    chroot: Option<PathBuf>,

    /// Switch to user NAME (and its group) after binding [default: stay]
    #[arg(long, value_name = "NAME")]
    user: Option<String>,

    /// Time from a request's first byte to the end of its headers; then 408 [default: 10s]
    #[arg(long, value_name = "TIME")]
    header_timeout: Option<String>,

    /// Time an idle keep-alive connection is kept open [default: 60s]
    #[arg(long, value_name = "TIME")]
    idle_timeout: Option<String>,

    /// Time a body upload or a stalled response may go without progress [default: 60s]
    #[arg(long, value_name = "TIME")]
    io_timeout: Option<String>,

    /// On SIGTERM, how long to wait for in-flight requests [default: 10s]
    #[arg(long, value_name = "TIME")]
    drain_timeout: Option<String>,

    /// Longest request line; longer = 414 [default: 8192]
    #[arg(long, value_name = "BYTES")]
    max_request_line: Option<usize>,

    /// Most bytes of request line + headers; more = 431 [default: 16384]
    #[arg(long, value_name = "BYTES")]
    max_header_bytes: Option<usize>,

    /// Most header fields in a request; more = 431 [default: 64]
    #[arg(long, value_name = "N")]
    max_headers: Option<usize>,

    /// Largest request body; more = 413 [default: 1048576]
    #[arg(long, value_name = "BYTES")]
    max_body: Option<u64>,

    /// Most ranges in one request after merging overlaps; more = whole file [default: 16]
    #[arg(long, value_name = "N")]
    max_ranges: Option<usize>,

    /// Most open connections per event loop; more = 503 [default: 20000]
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,

    /// Listen backlog: connections the kernel queues before the server accepts them (capped by
    /// net.core.somaxconn) [default: 4096]
    #[arg(long, value_name = "N")]
    backlog: Option<usize>,

    /// Files up to BYTES are served from memory with ready-made headers; larger via sendfile
    /// [default: 65536]
    #[arg(long, value_name = "BYTES")]
    cache_file_max: Option<u64>,
}

pub fn run(args: Args, _global: &Global) -> Result<i32> {
    let config = build_config(args)?;
    webstand_server::run(config, |bound| {
        for b in bound {
            match b.quic {
                true => eprintln!("listening on {} (HTTP/3 over QUIC)", b.url()),
                false => eprintln!("listening on {}", b.url()),
            }
        }
    })?;
    Ok(0)
}

fn build_config(a: Args) -> Result<Config> {
    let mut c = match &a.config {
        Some(path) => Config::from_file(path)?,
        None => Config::default(),
    };
    let dur = |flag: &str, v: &Option<String>| -> Result<Option<Duration>> {
        v.as_deref()
            .map(|s| parse_duration(s).with_context(|| format!("--{flag}")))
            .transpose()
    };
    let set = |dst: &mut usize, v: Option<usize>| {
        if let Some(v) = v {
            *dst = v;
        }
    };
    apply_fastcgi(&mut c, &a)?;
    if let Some(d) = a.dir {
        c.root = d;
    }
    if let Some(l) = &a.listen {
        c.listen = Some(parse_listen(l).context("--listen")?);
    }
    if let Some(l) = &a.listen_tls {
        c.listen_tls = Some(parse_listen(l).context("--listen-tls")?);
    }
    if let Some(l) = &a.listen_quic {
        c.listen_quic = Some(parse_listen(l).context("--listen-quic")?);
    }
    c.quic_retry |= a.quic_retry;
    c.tls_cert = a.tls_cert.or(c.tls_cert.take());
    c.tls_key = a.tls_key.or(c.tls_key.take());
    if let Some(p) = a.tls_protocols {
        c.tls_protocols = p;
    }
    set(&mut c.threads, a.threads);
    if let Some(i) = a.index {
        c.index = i;
    }
    c.listing |= a.listing;
    c.h2c |= a.h2c;
    if a.access_log.is_some() {
        c.access_log = a.access_log;
    }
    apply_auth(&mut c, &a.auth, a.realm.as_deref())?;
    c.cgi.extend(a.cgi);
    if let Some(t) = dur("cgi-timeout", &a.cgi_timeout)? {
        c.cgi_timeout = t;
    }
    if let Some(n) = a.cgi_max_output {
        c.cgi_max_output = n;
    }
    if a.throttle.is_some() {
        c.throttle_file = a.throttle;
    }
    if a.chroot.is_some() {
        c.chroot = a.chroot;
    }
    if a.user.is_some() {
        c.user = a.user;
    }
    for (flag, value, field) in [
        ("header-timeout", &a.header_timeout, &mut c.header_timeout),
        ("idle-timeout", &a.idle_timeout, &mut c.idle_timeout),
        ("io-timeout", &a.io_timeout, &mut c.io_timeout),
        ("drain-timeout", &a.drain_timeout, &mut c.drain_timeout),
    ] {
        if let Some(t) = dur(flag, value)? {
            *field = t;
        }
    }
    set(&mut c.max_request_line, a.max_request_line);
    set(&mut c.max_header_bytes, a.max_header_bytes);
    set(&mut c.max_headers, a.max_headers);
    set(&mut c.max_ranges, a.max_ranges);
    set(&mut c.max_connections, a.max_connections);
    set(&mut c.backlog, a.backlog);
    if let Some(n) = a.max_body {
        c.max_body = n;
    }
    if let Some(n) = a.cache_file_max {
        c.cache_file_max = n;
    }
    Ok(c)
}

/// The `--fastcgi*` flags after the config file's rules and values.
fn apply_fastcgi(c: &mut Config, a: &Args) -> Result<()> {
    for spec in &a.fastcgi {
        webstand_server::config::check_fastcgi_rule(spec).context("--fastcgi")?;
        c.fastcgi.push(spec.clone());
    }
    if let Some(t) = &a.fastcgi_timeout {
        c.fastcgi_timeout = parse_duration(t).context("--fastcgi-timeout")?;
    }
    if let Some(n) = a.fastcgi_connections {
        c.fastcgi_connections = n;
    }
    if let Some(n) = a.fastcgi_max_output {
        c.fastcgi_max_output = n;
    }
    c.fastcgi_gzip |= a.fastcgi_gzip;
    Ok(())
}

/// `--auth PREFIX=FILE` rules after the config file's; `--realm` names every rule's realm.
fn apply_auth(c: &mut Config, specs: &[String], realm: Option<&str>) -> Result<()> {
    for spec in specs {
        let (prefix, file) = spec
            .split_once('=')
            .with_context(|| format!("--auth {spec:?}: expected PREFIX=HTPASSWD-FILE"))?;
        c.auth.push(AuthRule {
            prefix: prefix.to_string(),
            htpasswd: PathBuf::from(file),
            realm: realm.unwrap_or("webstand").to_string(),
        });
    }
    if let Some(r) = realm {
        for rule in &mut c.auth {
            rule.realm = r.to_string();
        }
    }
    Ok(())
}
