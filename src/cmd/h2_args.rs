//! `webstand bench --h2`: HTTP/2 (ALPN `h2` for https:// URLs, prior-knowledge h2c for http://)
//! and h2load's options for it; `--h3`: HTTP/3 over QUIC (https:// only) with the same options
//! (streams per connection, and the receive windows as QUIC's stream and connection windows). h2load's `-m N` (streams per connection) shares its letter with
//! ab's `-m METHOD`: with `--h2` a number there means streams, a word still means the method.
//! h2load's `-w` (stream window bits) is `--window-bits` here, as ab's `-w` is its HTML table.

use anyhow::bail;
use webstand_results::{H2Plan, HttpVersion, Plan};

/// The heading of these options in `--help` (sweep's `-m` goes under it too).
pub const HEADING: &str = "HTTP/2 and HTTP/3 (h2load's options)";

#[derive(clap::Args, Default)]
#[command(next_help_heading = HEADING)]
pub struct H2Args {
    /// Speak HTTP/2: ALPN h2 over TLS for https:// URLs, prior knowledge (h2c) for http:// URLs;
    /// the report adds h2load's summary lines
    #[arg(long)]
    pub h2: bool,

    /// Speak HTTP/3 over QUIC (UDP to the URL's port; https:// URLs only, ALPN h3, TLS 1.3;
    /// --cacert verifies the certificate); -m, --window-bits and -W apply as with --h2 (the
    /// windows are QUIC's); the report adds h2load's summary lines and QUIC's own figures
    #[arg(long, conflicts_with = "h2")]
    pub h3: bool,

    /// Streams in flight per connection (h2load's -m; with --h2, `-m N` with a number means this
    /// too); a server's lower SETTINGS_MAX_CONCURRENT_STREAMS wins [default: 1]
    #[arg(long, value_name = "N")]
    max_streams: Option<u32>,

    /// Each stream's receive window is 2^N-1 bytes, 0 to 30 (h2load's -w) [default: 30]
    #[arg(long, value_name = "N")]
    window_bits: Option<u8>,

    /// The connection's receive window is 2^N-1 bytes, 0 to 30 (h2load's -W) [default: 30]
    #[arg(short = 'W', long, value_name = "N")]
    connection_window_bits: Option<u8>,

    /// With --h3: close each connection after N requests and open a new one, which resumes
    /// the TLS session (and sends 0-RTT where allowed) with --tls-resume [default: connections
    /// last the run]
    #[arg(long, value_name = "N")]
    max_requests_per_connection: Option<u64>,
}

impl H2Args {
    /// Makes `plan` an HTTP/2 one with --h2 (`m`: the -m value; `proxy`: -X was given). HTTP/2
    /// connections are persistent: keep-alive is implied.
    pub fn apply(&self, plan: &mut Plan, m: Option<&str>, proxy: bool) -> anyhow::Result<()> {
        let (h2, _) = self.plan(m)?;
        let flag = if self.h3 { "--h3" } else { "--h2" };
        if h2.is_some() && (plan.pipeline > 1 || plan.http_version == HttpVersion::Http10 || proxy)
        {
            bail!("{flag} runs straight to the server: --pipeline, --http1.0 and -X do not apply");
        }
        if self.h3 && plan.tls.is_none() {
            bail!("--h3 runs HTTP/3 over QUIC, which is always TLS: give an https:// URL");
        }
        plan.keep_alive |= h2.is_some();
        plan.max_conn_requests = match self.max_requests_per_connection {
            Some(_) if !self.h3 => {
                bail!("--max-requests-per-connection is an HTTP/3 option: add --h3")
            }
            Some(0) => bail!("--max-requests-per-connection must be at least 1"),
            n => n,
        };
        match self.h3 {
            true => plan.h3 = h2,
            false => plan.h2 = h2,
        }
        Ok(())
    }

    /// The plan's HTTP/2 (or HTTP/3) settings (None without --h2 or --h3), and what of `-m` is
    /// left for the method.
    pub fn plan<'a>(
        &self,
        m: Option<&'a str>,
    ) -> anyhow::Result<(Option<H2Plan>, Option<&'a str>)> {
        let m_streams = m.and_then(|v| v.parse::<u32>().ok());
        if !self.h2 && !self.h3 {
            if self.max_streams.is_some()
                || self.window_bits.is_some()
                || self.connection_window_bits.is_some()
            {
                bail!("--max-streams, --window-bits and -W are HTTP/2 and HTTP/3 options: add --h2 or --h3");
            }
            if let (Some(v), Some(_)) = (m, m_streams) {
                bail!("-m {v}: a number is h2load's streams per connection, which needs --h2 or --h3 (-m is otherwise the request method)");
            }
            return Ok((None, m));
        }
        let streams = match (m_streams, self.max_streams) {
            (Some(a), Some(b)) if a != b => bail!("-m {a} and --max-streams {b}: give one"),
            (Some(n), _) | (None, Some(n)) => n,
            (None, None) => H2Plan::default().max_streams,
        };
        if streams == 0 {
            bail!("streams per connection (-m/--max-streams) must be at least 1");
        }
        let bits = |v: Option<u8>, what: &str| match v {
            Some(b) if b > 30 => bail!("{what} {b}: window bits go from 0 to 30"),
            Some(b) => Ok(b),
            None => Ok(30),
        };
        let plan = H2Plan {
            max_streams: streams,
            window_bits: bits(self.window_bits, "--window-bits")?,
            connection_window_bits: bits(self.connection_window_bits, "-W")?,
        };
        let method = if m_streams.is_some() { None } else { m };
        Ok((Some(plan), method))
    }
}
