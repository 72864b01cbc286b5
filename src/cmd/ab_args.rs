//! ab's options that `webstand bench` takes as ApacheBench 2.3 does and that the core of bench does
//! not need: credentials and cookies, HEAD and PUT, a proxy, socket buffers and the source address,
//! verbosity, the report's variants (`-d`, `-S`, `-w` with `-x/-y/-z`) and the data files (`-g`,
//! `-e`). Each is checked before the run (a bad one is one line, exit 1), applied to the plan, and
//! its output written after the run.

use anyhow::{bail, Context};
use base64::Engine as _;
use std::fs::File;
use std::io::Write;
use std::net::{IpAddr, ToSocketAddrs};
use std::path::PathBuf;
use webstand_engine::Scheme;
use webstand_report::ab_html::Attributes;
use webstand_results::{Plan, RunResult, SourceAddrs, Target};

#[derive(clap::Args, Default)]
pub struct AbArgs {
    /// Basic authentication: send 'Authorization: Basic BASE64(USER:PASSWORD)' (ab's -A)
    #[arg(short = 'A', value_name = "USER:PASSWORD")]
    auth: Option<String>,

    /// Proxy authentication: send 'Proxy-Authorization: Basic BASE64(USER:PASSWORD)' (ab's -P)
    #[arg(short = 'P', value_name = "USER:PASSWORD")]
    proxy_auth: Option<String>,

    /// Send the requests through this HTTP proxy: connect to it and ask for the absolute URL
    /// (ab's -X)
    #[arg(short = 'X', value_name = "PROXY:PORT")]
    proxy: Option<String>,

    /// A cookie to send, 'name=value' (repeatable: all go in one Cookie header, '; '-separated)
    #[arg(short = 'C', value_name = "NAME=VALUE")]
    cookies: Vec<String>,

    /// HEAD requests instead of GET (ab's -i)
    #[arg(short = 'i')]
    pub head: bool,

    /// PUT this file's contents as the request body, with -T for its type (ab's -u)
    #[arg(short = 'u', value_name = "FILE")]
    pub put_file: Option<PathBuf>,

    /// Size of each connection's TCP send and receive buffers, in bytes (ab's -b)
    #[arg(short = 'b', value_name = "BYTES")]
    window: Option<String>,

    /// Local address each connection is bound to before it connects (ab's -B), or a range of them
    /// (127.0.0.2-127.0.0.254) taken in turn, so that more connections than one address's ephemeral
    /// ports (~28,000) can go to one server
    #[arg(short = 'B', value_name = "ADDRESS")]
    bind: Option<String>,

    /// ab's verbosity: 2 prints the request and each response head as it arrives (and a warning
    /// for a status outside 2xx), 3 also each status code. Slow: for looking, not for measuring
    #[arg(short = 'v', value_name = "LEVEL")]
    verbosity: Option<String>,

    /// Do not show ab's confidence figures: the Connection Times table as min, avg and max only
    #[arg(short = 'S')]
    pub no_confidence: bool,

    /// Write every request's times to FILE as gnuplot's tab-separated table (ab's -g: starttime,
    /// seconds, ctime, dtime, ttime, wait)
    #[arg(short = 'g', value_name = "FILE")]
    gnuplot: Option<PathBuf>,

    /// Write the time within which each percentage (0 to 100) of the requests was served to FILE as
    /// CSV (ab's -e)
    #[arg(short = 'e', value_name = "FILE")]
    csv: Option<PathBuf>,

    /// Print the report as an HTML table (ab's -w)
    #[arg(short = 'w')]
    pub html: bool,

    /// With -w: attributes of the <table> tag (ignored without -w, as by ab)
    #[arg(short = 'x', value_name = "ATTRIBUTES")]
    table_attrs: Option<String>,

    /// With -w: attributes of the <tr> tags
    #[arg(short = 'y', value_name = "ATTRIBUTES")]
    tr_attrs: Option<String>,

    /// With -w: attributes of the <td> and <th> tags [default: bgcolor=white]
    #[arg(short = 'z', value_name = "ATTRIBUTES")]
    td_attrs: Option<String>,

    /// Print the version and exit (ab's -V)
    #[arg(short = 'V')]
    pub version: bool,
}

/// The files ab's -g and -e write, created before the run (a path that cannot be written is found
/// before the load, not after it) and filled after it.
#[derive(Default)]
pub struct DataFiles {
    gnuplot: Option<(PathBuf, File)>,
    csv: Option<(PathBuf, File)>,
}

fn create(p: &Option<PathBuf>, flag: &str) -> anyhow::Result<Option<(PathBuf, File)>> {
    p.as_ref()
        .map(|p| {
            let f =
                File::create(p).with_context(|| format!("{flag}: cannot write {}", p.display()))?;
            Ok((p.clone(), f))
        })
        .transpose()
}

impl DataFiles {
    /// Writes what the run measured (nothing when no request completed, as ab).
    pub fn write(self, r: &RunResult) -> anyhow::Result<()> {
        let texts = [
            (self.gnuplot, webstand_report::ab_files::gnuplot_tsv(r)),
            (self.csv, webstand_report::ab_files::percentages_csv(r)),
        ];
        for (file, text) in texts {
            if let (Some((path, mut f)), Some(text)) = (file, text) {
                f.write_all(text.as_bytes())
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        Ok(())
    }
}

fn basic(credentials: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(credentials);
    format!("Basic {encoded}")
}

impl AbArgs {
    /// The request's method when ab's -i or -u chose it.
    pub fn method(&self) -> Option<&'static str> {
        match (self.head, &self.put_file) {
            (true, _) => Some("HEAD"),
            (false, Some(_)) => Some("PUT"),
            _ => None,
        }
    }

    /// The headers -A, -P and -C add, before the user's -H ones.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut h = Vec::new();
        if let Some(a) = &self.auth {
            h.push(("Authorization".to_string(), basic(a)));
        }
        if let Some(a) = &self.proxy_auth {
            h.push(("Proxy-Authorization".to_string(), basic(a)));
        }
        if !self.cookies.is_empty() {
            h.push(("Cookie".to_string(), self.cookies.join("; ")));
        }
        h
    }

    /// The -x/-y/-z attributes of the -w table.
    pub fn html_attributes(&self) -> Attributes {
        let d = Attributes::default();
        Attributes {
            table: self.table_attrs.clone().unwrap_or(d.table),
            tr: self.tr_attrs.clone().unwrap_or(d.tr),
            td: self.td_attrs.clone().unwrap_or(d.td),
        }
    }

    /// The -v level (0 without -v).
    pub fn verbosity(&self) -> anyhow::Result<u8> {
        match &self.verbosity {
            None => Ok(0),
            Some(v) => v
                .trim()
                .parse::<u8>()
                .map_err(|_| anyhow::anyhow!("-v: '{v}' is not a verbosity level (0 to 255)")),
        }
    }

    /// Opens the -g and -e files.
    pub fn data_files(&self) -> anyhow::Result<DataFiles> {
        Ok(DataFiles {
            gnuplot: create(&self.gnuplot, "-g")?,
            csv: create(&self.csv, "-e")?,
        })
    }

    /// The target of `url`: its host resolved, or with -X the proxy's addresses (the proxy resolves
    /// the target's name; ours only names it in the request).
    pub fn target(&self, url: &str) -> anyhow::Result<(Target, String, Scheme)> {
        let Some(proxy) = &self.proxy else {
            return webstand_engine::parse_web_url(url);
        };
        let (host, port) = proxy_address(proxy)?;
        let addrs = webstand_engine::resolve(&host, port, "proxy host")
            .map_err(|e| anyhow::anyhow!("-X: {e:#}"))?;
        let (host, port, path, scheme) = webstand_engine::split_url(url)?;
        if scheme == Scheme::Https {
            bail!("-X with an https:// URL: a tunnel through the proxy (CONNECT) is not supported");
        }
        Ok((Target { host, port, addrs }, path, scheme))
    }

    /// The proxy as ab's banner names it (`host:port`), with -X.
    pub fn proxy(&self) -> Option<&str> {
        self.proxy.as_deref()
    }

    /// Applies -b, -B, -v, -X (each request's absolute form) and -g/-e to a plan whose target came
    /// from [`AbArgs::target`].
    pub fn apply(&self, plan: &mut Plan) -> anyhow::Result<()> {
        plan.verbosity = self.verbosity()?;
        plan.keep_samples = self.gnuplot.is_some() || self.csv.is_some();
        plan.socket_buffer = self.window.as_deref().map(window).transpose()?;
        if let Some(b) = &self.bind {
            plan.bind = Some(source_addrs(b, plan)?);
        }
        if self.proxy.is_some() {
            let t = &plan.target;
            let origin = match t.port {
                80 => format!("http://{}", t.host),
                p => format!("http://{}:{p}", t.host),
            };
            for r in &mut plan.requests {
                r.path = format!("{origin}{}", r.path);
            }
        }
        Ok(())
    }
}

/// -b: a positive number of bytes that fits the kernel's int.
fn window(v: &str) -> anyhow::Result<u32> {
    match v.trim().parse::<u32>() {
        Ok(n) if n > 0 && n <= i32::MAX as u32 => Ok(n),
        _ => bail!("-b: '{v}' is not a buffer size (a positive number of bytes)"),
    }
}

/// -X: `host:port` (an IPv6 address in brackets), the port required.
fn proxy_address(v: &str) -> anyhow::Result<(String, u16)> {
    let bad = || anyhow::anyhow!("-X: '{v}' is not PROXY:PORT (e.g. -X 127.0.0.1:3128)");
    let (host, port) = webstand_engine::split_authority(v, None).map_err(|_| bad())?;
    if host.is_empty() || host.contains(['/', ' ']) {
        return Err(bad());
    }
    Ok((host.to_string(), port))
}

/// -B: one address as `bind_address` takes it, or a range `FIRST-LAST` of addresses of the target's
/// family (127.0.0.2-127.0.0.254), whose ends are proven bindable now.
fn source_addrs(v: &str, plan: &Plan) -> anyhow::Result<SourceAddrs> {
    let range = v.split_once('-').and_then(|(a, b)| {
        let ip = |s: &str| {
            s.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
        };
        Some((ip(a).ok()?, ip(b).ok()?))
    });
    let Some((first, last)) = range else {
        return Ok(SourceAddrs::one(bind_address(v, plan)?));
    };
    let count = match (first, last) {
        (IpAddr::V4(a), IpAddr::V4(b)) => u128::from(u32::from(b)).checked_sub(u32::from(a).into()),
        (IpAddr::V6(a), IpAddr::V6(b)) => u128::from(b).checked_sub(u128::from(a)),
        _ => bail!("-B {v}: both ends of a range must be IPv4, or both IPv6"),
    };
    let count = count
        .and_then(|c| u32::try_from(c + 1).ok())
        .ok_or_else(|| anyhow::anyhow!("-B {v}: the range must go up, at most 2^32 addresses"))?;
    bind_address(&first.to_string(), plan)?;
    bind_address(&last.to_string(), plan)?;
    Ok(SourceAddrs { first, count })
}

/// -B: an address (or a name resolving to one) of this machine, of the target's address family,
/// proven by binding a socket to it now.
fn bind_address(v: &str, plan: &Plan) -> anyhow::Result<IpAddr> {
    let name = v.trim_start_matches('[').trim_end_matches(']');
    let want_v6 = plan.target.addrs.first().is_some_and(|a| a.is_ipv6());
    let candidates: Vec<IpAddr> = match name.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => (name, 0)
            .to_socket_addrs()
            .map_err(|e| anyhow::anyhow!("-B: unknown address '{v}': {e}"))?
            .map(|a| a.ip())
            .collect(),
    };
    let Some(ip) = candidates.into_iter().find(|ip| ip.is_ipv6() == want_v6) else {
        bail!(
            "-B: '{v}' has no {} address, the target's family",
            if want_v6 { "IPv6" } else { "IPv4" }
        );
    };
    std::net::TcpListener::bind((ip, 0)).map_err(|e| {
        anyhow::anyhow!("-B: cannot bind to {ip}: {e} (not an address of this machine?)")
    })?;
    Ok(ip)
}
