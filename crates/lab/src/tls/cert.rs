//! The lab's certificate: a throw-away CA and a server certificate it signs for 127.0.0.1, ::1 and
//! localhost, its key ECDSA P-256 or RSA 2048, generated at run time into PEM files every server
//! reads; and a rustls client that trusts only that CA, for the lab's own checks.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, ProtocolVersion};

/// The server key of the lab's certificate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyType {
    /// ECDSA on P-256 with SHA-256: what a site gets from an ACME CA by default today.
    #[default]
    EcdsaP256,
    /// RSA 2048 with SHA-256: the older default, several times the server's CPU per handshake.
    Rsa2048,
}

impl KeyType {
    pub fn name(self) -> &'static str {
        match self {
            KeyType::EcdsaP256 => "ecdsa-p256",
            KeyType::Rsa2048 => "rsa2048",
        }
    }

    pub fn parse(text: &str) -> Result<KeyType> {
        match text.trim().to_ascii_lowercase().as_str() {
            "ecdsa-p256" | "ecdsa" | "p256" | "p-256" => Ok(KeyType::EcdsaP256),
            "rsa2048" | "rsa-2048" | "rsa" => Ok(KeyType::Rsa2048),
            _ => bail!("unknown TLS key type '{text}' (known: ecdsa-p256, rsa2048)"),
        }
    }
}

/// The lab's certificate and key, written as PEM files in a directory of their own (removed when
/// dropped), readable by the servers' workers' group only (`users::share`): a server that runs as
/// the worker user (caddy, as root) reads them there.
pub struct LabCert {
    pub key_type: KeyType,
    dir: tempfile::TempDir,
    ca_der: Vec<u8>,
}

impl std::fmt::Debug for LabCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LabCert({} in {})",
            self.key_type.name(),
            self.dir.path().display()
        )
    }
}

impl LabCert {
    /// A fresh CA (ECDSA P-256) and a server certificate it signs, with a `key_type` key, valid for
    /// 127.0.0.1, ::1 and localhost.
    pub fn generate(key_type: KeyType) -> Result<LabCert> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SanType};
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "webstand lab CA");
        let ca_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
        let ca = ca_params.self_signed(&ca_key)?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
        params
            .distinguished_name
            .push(DnType::CommonName, "webstand lab");
        for ip in ["127.0.0.1", "::1"] {
            params
                .subject_alt_names
                .push(SanType::IpAddress(ip.parse().expect("an address")));
        }
        let key = server_key(key_type)?;
        let cert = params.signed_by(&key, &ca, &ca_key)?;
        let dir = crate::owner::scratch_dir("tls")
            .context("cannot create a directory for the lab's certificate")?;
        crate::users::share(dir.path(), 0o750)?;
        let lab = LabCert {
            key_type,
            dir,
            ca_der: ca.der().to_vec(),
        };
        let (cert_pem, key_pem) = (cert.pem(), key.serialize_pem());
        lab.write(&lab.cert_file(), &cert_pem)?;
        lab.write(&lab.key_file(), &key_pem)?;
        lab.write(&lab.combined_file(), &format!("{key_pem}{cert_pem}"))?;
        lab.write(&lab.ca_file(), &ca.pem())?;
        Ok(lab)
    }

    fn write(&self, file: &Path, text: &str) -> Result<()> {
        std::fs::write(file, text).with_context(|| format!("cannot write {}", file.display()))?;
        crate::users::share(file, 0o640)?;
        Ok(())
    }

    /// The server certificate, PEM.
    pub fn cert_file(&self) -> PathBuf {
        self.dir.path().join("cert.pem")
    }
    /// Its private key, PKCS#8 PEM.
    pub fn key_file(&self) -> PathBuf {
        self.dir.path().join("key.pem")
    }
    /// Key and certificate in one file (mini_httpd's `-E`).
    pub fn combined_file(&self) -> PathBuf {
        self.dir.path().join("key-and-cert.pem")
    }
    /// The CA that signed the certificate (for clients that verify: `curl --cacert`).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A rustls client trusting only the lab's CA, speaking `version` (both when None), keeping
    /// sessions for resumption (rustls's default store).
    pub fn client(&self, version: Option<ProtocolVersion>) -> Result<Arc<ClientConfig>> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from(self.ca_der.clone()))?;
        let versions: Vec<&'static rustls::SupportedProtocolVersion> = match version {
            Some(ProtocolVersion::TLSv1_2) => vec![&rustls::version::TLS12],
            Some(ProtocolVersion::TLSv1_3) => vec![&rustls::version::TLS13],
            _ => vec![&rustls::version::TLS13, &rustls::version::TLS12],
        };
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }
}

/// The server's key pair, made by aws-lc-rs (RSA keys 2048 bits).
fn server_key(key_type: KeyType) -> Result<rcgen::KeyPair> {
    let algorithm = match key_type {
        KeyType::EcdsaP256 => &rcgen::PKCS_ECDSA_P256_SHA256,
        KeyType::Rsa2048 => &rcgen::PKCS_RSA_SHA256,
    };
    Ok(rcgen::KeyPair::generate_for(algorithm)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::ServerName;

    #[test]
    fn key_types_parse_and_a_bad_one_lists_the_known() {
        assert_eq!(KeyType::parse("ECDSA-P256").unwrap(), KeyType::EcdsaP256);
        assert_eq!(KeyType::parse("rsa2048").unwrap(), KeyType::Rsa2048);
        let e = KeyType::parse("dsa1024").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown TLS key type 'dsa1024' (known: ecdsa-p256, rsa2048)"
        );
    }

    #[test]
    fn the_certificate_is_signed_by_the_ca_for_loopback() {
        for kt in [KeyType::EcdsaP256, KeyType::Rsa2048] {
            let c = LabCert::generate(kt).unwrap();
            let key = std::fs::read_to_string(c.key_file()).unwrap();
            assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"), "{key}");
            let both = std::fs::read_to_string(c.combined_file()).unwrap();
            assert!(both.contains("PRIVATE KEY") && both.contains("CERTIFICATE"));
            // Verified the way the lab's clients verify it: rustls's webpki against the CA.
            let pem = std::fs::read(c.cert_file()).unwrap();
            let der = CertificateDer::from_pem_slice(&pem).unwrap();
            let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new({
                    let mut r = rustls::RootCertStore::empty();
                    r.add(CertificateDer::from(c.ca_der.clone())).unwrap();
                    r
                }),
                Arc::new(rustls::crypto::aws_lc_rs::default_provider()),
            )
            .build()
            .unwrap();
            let now = rustls::pki_types::UnixTime::now();
            for name in ["127.0.0.1", "localhost"] {
                let sn = ServerName::try_from(name).unwrap();
                verifier
                    .verify_server_cert(&der, &[], &sn, &[], now)
                    .unwrap_or_else(|e| panic!("{kt:?} {name}: {e}"));
            }
        }
    }
}
