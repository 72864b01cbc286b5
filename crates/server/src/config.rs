//! The server's configuration: one struct that the TOML file and the command-line flags both fill.
//! Defaults live here and only here (`Config::default`), so `--help` and the file agree.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Deserializer};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything `webstand serve` can be told, from a TOML file (`--config`) or from flags.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The directory served.
    pub root: PathBuf,
    /// Address and port to listen on for plain HTTP (written as `PORT`, `HOST:PORT` or
    /// `[IPv6]:PORT`); unset = 127.0.0.1:8080, unless `listen_tls` or `listen_quic` is given.
    #[serde(deserialize_with = "some_listen")]
    pub listen: Option<SocketAddr>,
    /// Address and port to listen on for HTTPS (needs `tls_cert` and `tls_key`).
    #[serde(deserialize_with = "some_listen")]
    pub listen_tls: Option<SocketAddr>,
    /// Address and port to listen on for HTTP/3 over QUIC (UDP; needs `tls_cert` and `tls_key`).
    #[serde(deserialize_with = "some_listen")]
    pub listen_quic: Option<SocketAddr>,
    /// Answer every new QUIC connection with a Retry (address validation before any state is
    /// kept); without it Retry engages only under load.
    pub quic_retry: bool,
    /// PEM certificate chain for HTTPS: the server's certificate first, then intermediates.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of `tls_cert` (RSA, ECDSA or Ed25519; PKCS#8, PKCS#1 or SEC1).
    pub tls_key: Option<PathBuf>,
    /// TLS versions offered on `listen_tls`, as nginx's `ssl_protocols` names them: `TLSv1.2`,
    /// `TLSv1.3` or both (space or comma separated).
    pub tls_protocols: String,
    /// Event loops (one thread and one SO_REUSEPORT listener each); 0 = one per CPU.
    pub threads: usize,
    /// File served for a directory URL.
    pub index: String,
    /// Whether a directory without an index file gets an HTML listing (else 403).
    pub listing: bool,
    /// Whether plain listeners accept HTTP/2 by prior knowledge (h2c); TLS listeners offer `h2`
    /// by ALPN regardless.
    pub h2c: bool,
    /// Common Log Format access log file ("-" = stderr); none = no log.
    pub access_log: Option<PathBuf>,
    /// chroot(2) into this directory after binding; `root` must be inside it.
    pub chroot: Option<PathBuf>,
    /// Switch to this user (and its group) after binding.
    pub user: Option<String>,
    /// A thttpd throttle file: lines `pattern max-bytes-per-second`.
    pub throttle_file: Option<PathBuf>,
    /// Throttle rules written inline (same form as the file's lines).
    pub throttle: Vec<String>,
    /// URL patterns run as CGI/1.1 programs (e.g. "/cgi-bin/*"); empty = no CGI.
    pub cgi: Vec<String>,
    /// Wall-clock limit of one CGI program.
    #[serde(deserialize_with = "duration")]
    pub cgi_timeout: Duration,
    /// Most bytes a CGI program may write (headers + body); more = 502.
    pub cgi_max_output: u64,
    /// FastCGI rules `PATTERN=ADDRESS` (ADDRESS `unix:/path` or `HOST:PORT`); empty = none.
    pub fastcgi: Vec<String>,
    /// Time a FastCGI backend may stay silent (no connection, no bytes) before a 504.
    #[serde(deserialize_with = "duration")]
    pub fastcgi_timeout: Duration,
    /// Most connections open to each FastCGI backend, shared by the event loops (at most the
    /// backend's workers, e.g. php-fpm's pm.max_children).
    pub fastcgi_connections: usize,
    /// Most body bytes a FastCGI answer may have; more = 502 (or a cut answer once streaming).
    pub fastcgi_max_output: u64,
    /// gzip FastCGI answers of a textual type for clients that accept it (fastcgi/gzip.rs).
    pub fastcgi_gzip: bool,
    /// Basic-auth rules: URL prefix, htpasswd file, realm.
    pub auth: Vec<AuthRule>,
    /// Time from the first byte of a request to the end of its headers (slowloris guard).
    #[serde(deserialize_with = "duration")]
    pub header_timeout: Duration,
    /// Time an idle keep-alive connection is kept.
    #[serde(deserialize_with = "duration")]
    pub idle_timeout: Duration,
    /// Time a request body or a stalled response may take between two progress steps.
    #[serde(deserialize_with = "duration")]
    pub io_timeout: Duration,
    /// How long SIGTERM waits for in-flight requests before exiting anyway.
    #[serde(deserialize_with = "duration")]
    pub drain_timeout: Duration,
    /// Longest request line in bytes (longer = 414).
    pub max_request_line: usize,
    /// Most bytes of request line + headers (more = 431).
    pub max_header_bytes: usize,
    /// Most header fields in a request (more = 431).
    pub max_headers: usize,
    /// Largest request body accepted (more = 413).
    pub max_body: u64,
    /// Most ranges in one Range header after merging overlaps; more = the whole file (200).
    pub max_ranges: usize,
    /// Most open connections per event loop; more = 503.
    pub max_connections: usize,
    /// Listen backlog of each listener (the kernel caps it at net.core.somaxconn).
    pub backlog: usize,
    /// Files up to this size are kept in memory with ready-made headers; larger ones use sendfile.
    pub cache_file_max: u64,
    /// Memory for the small-file cache of each event loop.
    pub cache_total_max: u64,
    /// The TOML file this config was read from (never served, like every file the server uses).
    #[serde(skip)]
    pub config_file: Option<PathBuf>,
}

/// One basic-auth rule: requests whose path starts with `prefix` need a user from `htpasswd`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthRule {
    pub prefix: String,
    pub htpasswd: PathBuf,
    #[serde(default = "default_realm")]
    pub realm: String,
}

fn default_realm() -> String {
    "webstand".into()
}

impl Default for Config {
    fn default() -> Self {
        Config {
            root: PathBuf::from("."),
            listen: None,
            listen_tls: None,
            listen_quic: None,
            quic_retry: false,
            tls_cert: None,
            tls_key: None,
            tls_protocols: "TLSv1.2 TLSv1.3".into(),
            threads: 0,
            index: "index.html".into(),
            listing: false,
            h2c: false,
            access_log: None,
            chroot: None,
            user: None,
            throttle_file: None,
            throttle: Vec::new(),
            cgi: Vec::new(),
            cgi_timeout: Duration::from_secs(10),
            cgi_max_output: 4 << 20,
            fastcgi: Vec::new(),
            fastcgi_timeout: Duration::from_secs(60),
            fastcgi_connections: 5,
            fastcgi_max_output: 1 << 30,
            fastcgi_gzip: false,
            auth: Vec::new(),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            io_timeout: Duration::from_secs(60),
            drain_timeout: Duration::from_secs(10),
            max_request_line: 8192,
            max_header_bytes: 16384,
            max_headers: 64,
            max_body: 1 << 20,
            max_ranges: 16,
            max_connections: 20000,
            backlog: 4096,
            cache_file_max: 64 << 10,
            cache_total_max: 64 << 20,
            config_file: None,
        }
    }
}

/// Header fields above this count are never needed; it bounds the parser's fixed array.
pub const HEADERS_HARD_MAX: usize = webstand_http1::request::HEADERS_HARD_MAX;

/// Where plain HTTP is served when nothing says otherwise.
pub const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8080);

impl Config {
    /// The plain HTTP address: `listen`, or the default when no listener at all is named.
    pub fn plain_listen(&self) -> Option<SocketAddr> {
        match (self.listen, self.listen_tls.or(self.listen_quic)) {
            (Some(a), _) => Some(a),
            (None, Some(_)) => None,
            (None, None) => Some(DEFAULT_LISTEN),
        }
    }

    /// Reads a TOML config file; unknown keys and bad values are errors naming the file.
    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let mut config: Config = toml::from_str(&text).map_err(|e| {
            // toml's message spans several lines; keep the first one for a one-line error.
            let msg = e.to_string();
            let first = msg
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            anyhow::anyhow!(
                "config file {}: {} ({})",
                path.display(),
                e.message(),
                first
            )
        })?;
        config.config_file = Some(path.to_path_buf());
        Ok(config)
    }

    /// The request parser's limits.
    pub fn limits(&self) -> webstand_http1::request::Limits {
        webstand_http1::request::Limits {
            max_request_line: self.max_request_line,
            max_header_bytes: self.max_header_bytes,
            max_headers: self.max_headers,
        }
    }

    /// Checks values that serde cannot.
    pub fn validate(&self) -> Result<()> {
        if !self.root.is_dir() {
            bail!("document root {} is not a directory", self.root.display());
        }
        let encrypted = self.listen_tls.is_some() || self.listen_quic.is_some();
        match (encrypted, &self.tls_cert, &self.tls_key) {
            (true, Some(_), Some(_)) | (false, None, None) => {}
            (true, _, _) if self.listen_tls.is_none() => {
                bail!("listen_quic needs both tls_cert and tls_key")
            }
            (true, _, _) => bail!("listen_tls needs both tls_cert and tls_key"),
            (false, _, _) => {
                bail!("tls_cert and tls_key need listen_tls or listen_quic (where to serve HTTPS)")
            }
        }
        if self.threads > 1024 {
            bail!("threads must be at most 1024");
        }
        if self.max_headers == 0 || self.max_headers > HEADERS_HARD_MAX {
            bail!("max_headers must be between 1 and {HEADERS_HARD_MAX}");
        }
        if self.max_request_line < 16 || self.max_header_bytes < self.max_request_line {
            bail!("max_request_line must be at least 16 and at most max_header_bytes");
        }
        if self.max_connections == 0 {
            bail!("max_connections must be at least 1");
        }
        if self.backlog == 0 || self.backlog > i32::MAX as usize {
            bail!("backlog must be between 1 and {}", i32::MAX);
        }
        for p in &self.cgi {
            if !p.starts_with('/') {
                bail!("CGI pattern {p:?} must start with '/'");
            }
        }
        for f in &self.fastcgi {
            parse_fastcgi_rule(f)?;
        }
        if self.fastcgi_connections == 0 {
            bail!("fastcgi_connections must be at least 1");
        }
        for a in &self.auth {
            if !a.prefix.starts_with('/') {
                bail!("auth prefix {:?} must start with '/'", a.prefix);
            }
        }
        for t in [
            self.header_timeout,
            self.idle_timeout,
            self.io_timeout,
            self.cgi_timeout,
            self.fastcgi_timeout,
        ] {
            if t.is_zero() {
                bail!("timeouts must be greater than zero");
            }
        }
        Ok(())
    }
}

/// Checks a `PATTERN=ADDRESS` FastCGI rule (the error names the accepted forms).
pub fn check_fastcgi_rule(spec: &str) -> Result<()> {
    parse_fastcgi_rule(spec).map(|_| ())
}

/// Where a FastCGI backend listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendAddress {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

impl std::fmt::Display for BackendAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BackendAddress::Unix(p) => write!(f, "unix:{}", p.display()),
            BackendAddress::Tcp(a) => write!(f, "{a}"),
        }
    }
}

/// One `--fastcgi PATTERN=ADDRESS` rule.
#[derive(Debug, Clone)]
pub struct FastCgiRule {
    pub pattern: String,
    pub address: BackendAddress,
}

/// Parses `PATTERN=ADDRESS`, ADDRESS being `unix:/path/to.sock` or `HOST:PORT` (a bare PORT is on
/// 127.0.0.1).
pub fn parse_fastcgi_rule(spec: &str) -> Result<FastCgiRule> {
    let form = "expected PATTERN=ADDRESS, e.g. '**.php=unix:/run/php/php8.2-fpm.sock' or '**.php=127.0.0.1:9000'";
    let Some((pattern, address)) = spec.split_once('=') else {
        bail!("fastcgi rule {spec:?}: {form}");
    };
    if pattern.is_empty() {
        bail!("fastcgi rule {spec:?}: empty pattern ({form})");
    }
    let address = match address.strip_prefix("unix:") {
        Some(path) if path.starts_with('/') => BackendAddress::Unix(PathBuf::from(path)),
        Some(_) => bail!("fastcgi rule {spec:?}: a unix socket needs an absolute path ({form})"),
        None => BackendAddress::Tcp(
            parse_listen(address).map_err(|e| anyhow::anyhow!("fastcgi rule {spec:?}: {e:#}"))?,
        ),
    };
    Ok(FastCgiRule {
        pattern: pattern.to_string(),
        address,
    })
}

/// Reads a timeout in webstand's one duration grammar (`webstand_duration`: "10", "1.5", "250ms",
/// "2m", "1h 30m" …), at most a week. Zero passes here and is refused by `Config::validate`.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let d = webstand_duration::parse(s)?;
    seconds(d.as_secs_f64()).ok_or_else(|| {
        anyhow::anyhow!(
            "bad duration '{}': at most {} days",
            s.trim(),
            MAX_DURATION_SECS / 86_400.0
        )
    })
}

/// The longest timeout accepted: a week (far beyond any sensible value, far from overflowing a clock).
const MAX_DURATION_SECS: f64 = 7.0 * 86_400.0;

fn seconds(secs: f64) -> Option<Duration> {
    (secs.is_finite() && (0.0..=MAX_DURATION_SECS).contains(&secs))
        .then(|| Duration::from_secs_f64(secs))
}

/// Serde adapter: a duration written as seconds (number) or as a string with a unit.
fn duration<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Duration, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Num(f64),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Num(n) => {
            seconds(n).ok_or_else(|| serde::de::Error::custom(format!("bad duration {n}")))
        }
        Raw::Text(t) => parse_duration(&t).map_err(serde::de::Error::custom),
    }
}

/// Parses where to listen: `PORT` (on 127.0.0.1, the default host), `HOST:PORT` with an IP address
/// or a name (resolved; its first IPv4 address preferred, so `localhost` is 127.0.0.1), or
/// `[IPv6]:PORT`. Anything else is refused with the accepted forms.
pub fn parse_listen(text: &str) -> Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    let t = text.trim();
    let forms = "expected PORT, HOST:PORT or [IPv6]:PORT, e.g. 8090, 127.0.0.1:8090, localhost:8090, [::1]:8090";
    if let Ok(port) = t.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(addr) = t.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let Some((host, port)) = t.rsplit_once(':') else {
        bail!("bad listen address {text:?}: {forms}");
    };
    if host.is_empty() || port.parse::<u16>().is_err() {
        bail!("bad listen address {text:?}: {forms}");
    }
    let addrs: Vec<SocketAddr> = (host, port.parse::<u16>()?)
        .to_socket_addrs()
        .with_context(|| format!("bad listen address {text:?}: unknown host {host:?} ({forms})"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .with_context(|| format!("bad listen address {text:?}: {host:?} has no address"))
}

/// Serde adapter: a listen address in any form [`parse_listen`] takes.
fn some_listen<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<SocketAddr>, D::Error> {
    parse_listen(&String::deserialize(d)?)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(format!("{e:#}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_take_a_port_a_host_and_port_or_a_name() {
        let ok = |s: &str| parse_listen(s).unwrap().to_string();
        assert_eq!(ok("8090"), "127.0.0.1:8090");
        assert_eq!(ok("0.0.0.0:80"), "0.0.0.0:80");
        assert_eq!(ok("[::1]:8090"), "[::1]:8090");
        assert_eq!(ok("localhost:8090"), "127.0.0.1:8090");
        for bad in [
            "",
            "http://x:1",
            "localhost",
            ":8090",
            "1.2.3.4:99999",
            "99999",
        ] {
            let e = format!("{:#}", parse_listen(bad).unwrap_err());
            assert!(e.contains("expected PORT, HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn durations_parse_with_and_without_units() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("5h").unwrap(), Duration::from_secs(5 * 3600));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("8days").is_err());
        assert!(parse_duration("1e30").is_err());
        assert!(parse_duration("99999999999999999999s").is_err());
        assert!(toml::from_str::<Config>("idle_timeout = 1e300").is_err());
    }

    #[test]
    fn toml_fills_fields_and_rejects_unknown_keys() {
        let c: Config = toml::from_str(
            "listen = \"127.0.0.1:9000\"\nheader_timeout = \"300ms\"\nidle_timeout = 2\ncgi = [\"/cgi-bin/*\"]\n\
             [[auth]]\nprefix = \"/private/\"\nhtpasswd = \"/tmp/pw\"\n",
        )
        .unwrap();
        assert_eq!(c.plain_listen().unwrap().port(), 9000);
        let tls: Config = toml::from_str(
            "listen_tls = \"127.0.0.1:8443\"\ntls_cert = \"c.pem\"\ntls_key = \"k.pem\"\n",
        )
        .unwrap();
        assert_eq!(tls.plain_listen(), None);
        assert_eq!(tls.listen_tls.unwrap().port(), 8443);
        assert_eq!(Config::default().plain_listen(), Some(DEFAULT_LISTEN));
        assert_eq!(c.header_timeout, Duration::from_millis(300));
        assert_eq!(c.idle_timeout, Duration::from_secs(2));
        assert_eq!(c.auth[0].realm, "webstand");
        assert_eq!(c.index, "index.html");
        assert!(toml::from_str::<Config>("no_such_key = 1").is_err());
        assert!(toml::from_str::<Config>("header_timeout = \"soon\"").is_err());
    }

    #[test]
    fn quic_needs_the_certificate_and_replaces_the_default_listener() {
        let quic: Config = toml::from_str("listen_quic = \"127.0.0.1:8443\"\n").unwrap();
        assert_eq!(quic.plain_listen(), None);
        let mut quic = quic;
        quic.root = std::env::temp_dir();
        let e = quic.validate().unwrap_err().to_string();
        assert_eq!(e, "listen_quic needs both tls_cert and tls_key");
        quic.tls_cert = Some("c.pem".into());
        quic.tls_key = Some("k.pem".into());
        assert!(quic.validate().is_ok());
        quic.listen_quic = None;
        let e = quic.validate().unwrap_err().to_string();
        assert!(e.contains("need listen_tls or listen_quic"), "{e}");
    }

    #[test]
    fn the_guide_s_example_parses() {
        let readme = include_str!("../../../docs/SERVE.md");
        let start = readme
            .find("```toml\nroot = ")
            .expect("docs/SERVE.md has the config example")
            + 8;
        let end = start + readme[start..].find("```").unwrap();
        let c: Config = toml::from_str(&readme[start..end]).unwrap();
        assert_eq!(c.threads, 2);
        assert_eq!(c.auth.len(), 1);
        assert_eq!(c.listen_tls.unwrap().port(), 9443);
        assert_eq!(c.listen_quic.unwrap().port(), 9443);
        assert_eq!(c.throttle, vec!["/big/* 100000".to_string()]);
    }
}
