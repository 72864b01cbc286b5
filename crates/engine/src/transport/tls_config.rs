//! From a [`TlsPlan`] to the rustls client configuration every TLS connection of a run shares: the
//! versions and cipher suites offered (ab's `-f`, `-Z`), the client certificate (`-E`), SNI (`-I`),
//! ALPN `http/1.1`, session resumption (`--tls-resume`) and certificate verification (`--cacert`;
//! none by default, as ab, wrk and h2load do, since benchmark targets are usually self-signed).
//!
//! The crypto provider is aws-lc-rs, the binary's one (docs/ARCHITECTURE.md says why): a new
//! connection's X25519 key and agreement cost the generator about half of ring's.

use anyhow::{bail, Context};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::crypto::{aws_lc_rs, CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CipherSuite, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;
use webstand_results::plan::{TlsPlan, TlsVersions};

/// What each TLS connection of a run is made with.
pub(crate) struct TlsSetup {
    pub config: Arc<ClientConfig>,
    pub name: ServerName<'static>,
    /// The SNI name sent, for the report (none for an IP address or with `-I`).
    pub sni: Option<String>,
    /// What checks the server's certificate (`--cacert`'s roots, or nothing but the signatures):
    /// QUIC's configuration wraps it to tell full handshakes from resumed ones.
    pub verifier: Arc<dyn ServerCertVerifier>,
}

impl TlsSetup {
    /// Reads the plan's files and builds the configuration; `host` is the URL's host.
    pub(crate) fn new(plan: &TlsPlan, host: &str) -> anyhow::Result<TlsSetup> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| anyhow::anyhow!("'{host}' is not a valid TLS server name"))?;
        let provider = Arc::new(provider(plan.ciphers.as_deref())?);
        let versions: &[&rustls::SupportedProtocolVersion] = match plan.versions {
            TlsVersions::All => rustls::ALL_VERSIONS,
            TlsVersions::Tls12 => &[&rustls::version::TLS12],
            TlsVersions::Tls13 => &[&rustls::version::TLS13],
        };
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions)
            .map_err(|e| anyhow::anyhow!("-f/-Z: {e} (no cipher suite of -Z fits -f)"))?;
        let verifier: Arc<dyn ServerCertVerifier> = match &plan.ca_cert {
            Some(path) => {
                let mut roots = RootCertStore::empty();
                for cert in CertificateDer::pem_file_iter(path)
                    .with_context(|| format!("--cacert {}", path.display()))?
                {
                    let cert = cert.with_context(|| format!("--cacert {}", path.display()))?;
                    roots
                        .add(cert)
                        .with_context(|| format!("--cacert {}", path.display()))?;
                }
                if roots.is_empty() {
                    bail!("--cacert {}: no certificate in the file", path.display());
                }
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .with_context(|| format!("--cacert {}", path.display()))?
            }
            None => Arc::new(NoVerification(provider.signature_verification_algorithms)),
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone());
        let mut config = match &plan.client_cert {
            Some(path) => {
                let what = || format!("-E {}", path.display());
                let certs = CertificateDer::pem_file_iter(path)
                    .with_context(what)?
                    .collect::<Result<Vec<_>, _>>()
                    .with_context(what)?;
                if certs.is_empty() {
                    bail!("-E {}: no certificate in the file", path.display());
                }
                let key = PrivateKeyDer::from_pem_file(path)
                    .with_context(|| format!("-E {}: no private key", path.display()))?;
                builder
                    .with_client_auth_cert(certs, key)
                    .with_context(what)?
            }
            None => builder.with_no_client_auth(),
        };
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config.enable_sni = plan.sni;
        if !plan.resume {
            config.resumption = Resumption::disabled();
        }
        let sni = match &name {
            ServerName::DnsName(d) if plan.sni => Some(d.as_ref().to_string()),
            _ => None,
        };
        Ok(TlsSetup {
            config: Arc::new(config),
            name,
            sni,
            verifier,
        })
    }
}

/// The provider every connection of a run uses: aws-lc-rs with the classical groups only, X25519
/// first, as wrk, curl and ring offer them (the post-quantum hybrid would grow every ClientHello and
/// measure a different handshake than theirs), and the suites of `-Z` or AES-128-GCM first.
fn provider(ciphers: Option<&str>) -> anyhow::Result<CryptoProvider> {
    let mut provider = aws_lc_rs::default_provider();
    provider.kx_groups = vec![
        aws_lc_rs::kx_group::X25519,
        aws_lc_rs::kx_group::SECP256R1,
        aws_lc_rs::kx_group::SECP384R1,
    ];
    match ciphers {
        Some(list) => provider.cipher_suites = pick_suites(&provider, list)?,
        None => aes128_gcm_first(&mut provider),
    }
    Ok(provider)
}

/// Offers the AES-128-GCM suites first, as Chrome and Firefox do (the providers list AES-256-GCM
/// first, as OpenSSL clients such as wrk and curl do): a server that follows the client's order
/// (nginx's default) then runs the SHA-256 key schedule, which the CPU's SHA extensions speed up,
/// and AES-128's ten rounds; a new connection costs the generator less (BENCHMARKS.md).
fn aes128_gcm_first(provider: &mut CryptoProvider) {
    provider.cipher_suites.sort_by_key(|s| {
        !matches!(
            s.suite(),
            CipherSuite::TLS13_AES_128_GCM_SHA256
                | CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                | CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        )
    });
}

/// The provider's suites named in `list` (`:`, `,` or space separated; OpenSSL or IANA names).
fn pick_suites(
    provider: &CryptoProvider,
    list: &str,
) -> anyhow::Result<Vec<rustls::SupportedCipherSuite>> {
    let mut picked = Vec::new();
    for want in list.split([':', ',', ' ']).filter(|w| !w.is_empty()) {
        let found = provider.cipher_suites.iter().find(|s| {
            let id = s.suite();
            openssl_name(id).eq_ignore_ascii_case(want)
                || id.as_str().is_some_and(|n| n.eq_ignore_ascii_case(want))
        });
        match found {
            Some(s) => picked.push(*s),
            None => {
                let known: Vec<&str> = provider
                    .cipher_suites
                    .iter()
                    .map(|s| openssl_name(s.suite()))
                    .collect();
                bail!(
                    "-Z: unknown cipher suite '{want}' (known: {})",
                    known.join(" ")
                );
            }
        }
    }
    if picked.is_empty() {
        bail!("-Z: no cipher suite given");
    }
    Ok(picked)
}

/// A suite's OpenSSL name (what ab prints and `-Z` takes) and its key bits.
pub(crate) fn openssl_name(suite: CipherSuite) -> &'static str {
    suite_facts(suite).0
}

pub(crate) fn suite_facts(suite: CipherSuite) -> (&'static str, u32) {
    match suite {
        CipherSuite::TLS13_AES_256_GCM_SHA384 => ("TLS_AES_256_GCM_SHA384", 256),
        CipherSuite::TLS13_AES_128_GCM_SHA256 => ("TLS_AES_128_GCM_SHA256", 128),
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => ("TLS_CHACHA20_POLY1305_SHA256", 256),
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => {
            ("ECDHE-ECDSA-AES256-GCM-SHA384", 256)
        }
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => {
            ("ECDHE-ECDSA-AES128-GCM-SHA256", 128)
        }
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
            ("ECDHE-ECDSA-CHACHA20-POLY1305", 256)
        }
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => ("ECDHE-RSA-AES256-GCM-SHA384", 256),
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => ("ECDHE-RSA-AES128-GCM-SHA256", 128),
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => {
            ("ECDHE-RSA-CHACHA20-POLY1305", 256)
        }
        _ => ("unknown", 0),
    }
}

/// Accepts any server certificate (the default, as ab's), but still checks the handshake's
/// signatures, so the connection is a real TLS connection with the server's key.
#[derive(Debug)]
struct NoVerification(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}
