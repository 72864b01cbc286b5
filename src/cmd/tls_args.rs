//! `webstand bench`'s TLS options for `https://` URLs: ab's `-f`, `-Z`, `-E`, `-I`, and `--cacert`,
//! `--tls-resume`.

use anyhow::bail;
use std::path::PathBuf;
use webstand_engine::Scheme;
use webstand_results::{TlsPlan, TlsVersions};

#[derive(clap::Args, Default)]
#[command(next_help_heading = "TLS (https:// URLs)")]
pub struct TlsArgs {
    /// TLS versions to offer: TLS1.2, TLS1.3 or ALL [default: ALL]
    #[arg(short = 'f', value_name = "PROTOCOL")]
    protocol: Option<String>,

    /// Cipher suites to offer, ':'-separated OpenSSL names (ECDHE-ECDSA-AES128-GCM-SHA256,
    /// TLS_AES_256_GCM_SHA384) or IANA names [default: all that rustls supports]
    #[arg(short = 'Z', value_name = "CIPHERSUITE")]
    ciphers: Option<String>,

    /// Client certificate: a PEM file holding the certificate chain and its private key
    #[arg(short = 'E', value_name = "CERTFILE")]
    client_cert: Option<PathBuf>,

    /// Do not send the host name as SNI (server name indication)
    #[arg(short = 'I')]
    no_sni: bool,

    /// Verify the server's certificate against the CA certificates in this PEM file
    /// [default: no verification, like ab, wrk and h2load]
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,

    /// Resume TLS sessions on new connections, as a browser does; with --h3 their first requests
    /// go as 0-RTT where the server's ticket allows it [default: a full handshake on every new
    /// connection, as ab does]
    #[arg(long)]
    tls_resume: bool,
}

impl TlsArgs {
    /// The plan's TLS setup for a URL of `scheme`; TLS options on an http:// URL are refused.
    pub fn plan(&self, scheme: Scheme) -> anyhow::Result<Option<TlsPlan>> {
        let versions = match self.protocol.as_deref().map(str::to_ascii_uppercase).as_deref() {
            None | Some("ALL") => TlsVersions::All,
            Some("TLS1.2") => TlsVersions::Tls12,
            Some("TLS1.3") => TlsVersions::Tls13,
            Some(_) => bail!(
                "-f {}: unsupported protocol (TLS1.2, TLS1.3 or ALL; rustls has no SSL3, TLS1 or TLS1.1)",
                self.protocol.as_deref().unwrap_or_default()
            ),
        };
        let tls = TlsPlan {
            versions,
            ciphers: self.ciphers.clone(),
            client_cert: self.client_cert.clone(),
            ca_cert: self.cacert.clone(),
            sni: !self.no_sni,
            resume: self.tls_resume,
        };
        match scheme {
            Scheme::Https => Ok(Some(tls)),
            Scheme::Http
                if tls
                    != TlsPlan {
                        sni: true,
                        ..TlsPlan::default()
                    } =>
            {
                bail!("TLS options (-f -Z -E -I --cacert --tls-resume) need an https:// URL")
            }
            Scheme::Http => Ok(None),
        }
    }
}
