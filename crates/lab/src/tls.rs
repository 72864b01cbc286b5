//! The lab over HTTPS: one certificate every server presents, generated at run time (a throw-away CA
//! and a server certificate for 127.0.0.1, ::1 and localhost, its key ECDSA P-256 or RSA 2048), the
//! TLS settings every server gets alike (TLS 1.3 and 1.2, resumption on, one cipher preference),
//! and the check behind thttpd's TLS column: real handshakes by rustls, verifying the lab's
//! certificate, one full and one resumed per protocol version, each carrying a GET.
//! Which servers' packages have TLS at all is `support`.

use anyhow::{anyhow, bail, Context, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, HandshakeKind, ProtocolVersion, StreamOwned};

use crate::servers::{Binary, Kind, Server, Setup, Support};

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

/// TLS 1.2 suites in the order every server prefers them (OpenSSL's names; the server's order wins):
/// forward secrecy and AEAD only, AES-128-GCM first, as Mozilla's "intermediate" profile. Both key
/// types' suites are listed; the certificate decides which half can be used.
pub const TLS12_CIPHERS: &[&str] = &[
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-CHACHA20-POLY1305",
];

/// The same suites under Go's names, for caddy. Go fixes its TLS 1.3 order itself (AES-128-GCM first
/// on CPUs with AES instructions), which is why AES-128-GCM leads everywhere.
pub const GO_TLS12_CIPHERS: &[&str] = &[
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
];

/// TLS 1.3 suites in preference order (OpenSSL's names; OpenSSL's own default puts AES-256 first).
pub const TLS13_SUITES: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

/// The TLS 1.2 list as an OpenSSL cipher string.
pub fn openssl_ciphers() -> String {
    TLS12_CIPHERS.join(":")
}

/// The TLS 1.3 list as OpenSSL's `Ciphersuites` value.
pub fn openssl_suites() -> String {
    TLS13_SUITES.join(":")
}

/// Session resumption's lifetime everywhere it can be set, seconds.
pub const SESSION_TIMEOUT_SECS: u64 = 3600;

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
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }
}

/// The server's key pair: ring makes ECDSA keys; RSA keys come from the rsa crate.
fn server_key(key_type: KeyType) -> Result<rcgen::KeyPair> {
    match key_type {
        KeyType::EcdsaP256 => Ok(rcgen::KeyPair::generate_for(
            &rcgen::PKCS_ECDSA_P256_SHA256,
        )?),
        KeyType::Rsa2048 => {
            use rsa::pkcs8::EncodePrivateKey;
            let key = rsa::RsaPrivateKey::new(&mut rand::thread_rng(), 2048)?;
            let pem = key.to_pkcs8_pem(rsa::pkcs8::LineEnding::LF)?;
            Ok(rcgen::KeyPair::from_pem_and_sign_algo(
                &pem,
                &rcgen::PKCS_RSA_SHA256,
            )?)
        }
    }
}

/// A connection to a lab server: plain TCP, or TLS over it.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    /// Connects to `addr` (with TLS when `tls` is given), reads and writes bounded by `limit`.
    pub fn connect(
        addr: SocketAddr,
        tls: Option<&Arc<ClientConfig>>,
        limit: Duration,
    ) -> Result<Stream> {
        let tcp =
            TcpStream::connect_timeout(&addr, limit).with_context(|| format!("connect {addr}"))?;
        tcp.set_read_timeout(Some(limit))?;
        tcp.set_write_timeout(Some(limit))?;
        let Some(config) = tls else {
            return Ok(Stream::Plain(tcp));
        };
        let conn = ClientConnection::new(Arc::clone(config), ServerName::from(addr.ip()))?;
        let mut s = StreamOwned::new(conn, tcp);
        while s.conn.is_handshaking() {
            s.conn
                .complete_io(&mut s.sock)
                .with_context(|| format!("TLS handshake with {addr}"))?;
        }
        Ok(Stream::Tls(Box::new(s)))
    }

    /// Reads to the end of the stream; a TLS peer that closes without close_notify (most servers
    /// after an HTTP/1.0 response) ends it too.
    pub fn read_to_close(&mut self, limit: Duration) -> Result<Vec<u8>> {
        let started = Instant::now();
        let mut raw = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            if started.elapsed() > limit {
                bail!("no complete response within {limit:?}");
            }
            match self.read(&mut buf) {
                Ok(0) => return Ok(raw),
                Ok(n) => raw.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(raw),
                Err(e) => return Err(anyhow!(e)),
            }
        }
    }

    /// What the handshake agreed, for TLS connections.
    pub fn handshake(&self) -> Option<Handshake> {
        let Stream::Tls(s) = self else {
            return None;
        };
        Some(Handshake {
            version: s.conn.protocol_version(),
            suite: s
                .conn
                .negotiated_cipher_suite()
                .map(|c| format!("{:?}", c.suite())),
            resumed: s.conn.handshake_kind() == Some(HandshakeKind::Resumed),
        })
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The TLS column of a server started by the lab: checked (`check`) when it serves the lab's
/// certificate, on `/2k.html` of the docroot; None when it was started for plain HTTP.
pub fn check_feature(server: &Server, setup: &Setup) -> Option<Support> {
    let cert = setup.tls.as_deref()?;
    let path = webstand_workload::fixtures::TENON_FILE;
    let want = match std::fs::read(setup.docroot.join(&path[1..])) {
        Ok(b) => b,
        Err(e) => return Some(Support::Failed(format!("cannot read {path}: {e}"))),
    };
    Some(match check(server.addr, cert, path, &want) {
        Ok(_) => Support::Verified,
        Err(why) => Support::Failed(why),
    })
}

/// Where a server's TLS settings differ from the others' (a row's note under `--tls`).
pub fn differences(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::H2o => Some("TLS 1.3 suites in OpenSSL's order (h2o 2.2 cannot set them)"),
        Kind::Caddy => Some("Go's TLS: its own TLS 1.3 order; resumption by tickets only"),
        Kind::Lighttpd => Some("resumption by tickets only (lighttpd keeps no session cache)"),
        Kind::MiniHttpd => Some("TLS 1.3 suites in OpenSSL's order (mini_httpd cannot set them)"),
        Kind::Builtin | Kind::BuiltinNoCache => Some("rustls: its own suite order"),
        _ => None,
    }
}

/// How a row without TLS begins.
pub const NO_TLS: &str = "no TLS";

/// Why `binary` cannot serve HTTPS here, if it cannot: its package was built without TLS, or the
/// TLS module is a package of its own that is not installed. One line, saying what to install.
pub fn support(binary: &Binary) -> std::result::Result<(), String> {
    let output = |args: &[&str]| {
        std::process::Command::new(&binary.path)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map(|o| {
                let mut t = String::from_utf8_lossy(&o.stdout).into_owned();
                t.push_str(&String::from_utf8_lossy(&o.stderr));
                t
            })
            .unwrap_or_default()
    };
    let name = binary.kind.name();
    let missing = |what: &str| Err(format!("{NO_TLS}: {name}'s build {what}"));
    match binary.kind {
        Kind::Nginx if !output(&["-V"]).contains("http_ssl_module") => {
            missing("has no http_ssl_module")
        }
        Kind::H2o if !output(&["-v"]).contains("OpenSSL") => missing("links no OpenSSL"),
        Kind::Builtin | Kind::BuiltinNoCache
            if !output(&["serve", "--help"]).contains("--listen-tls") =>
        {
            missing("has no --listen-tls")
        }
        Kind::Apache if !apache_modules(binary).join("mod_ssl.so").is_file() => Err(format!(
            "{NO_TLS}: {} has no mod_ssl.so",
            apache_modules(binary).display()
        )),
        Kind::Lighttpd => match lighttpd_modules(&binary.path) {
            Some(dir) if dir.join("mod_openssl.so").is_file() => Ok(()),
            dir => Err(format!(
                "{NO_TLS}: no mod_openssl.so in {} (apt-get install lighttpd-mod-openssl)",
                dir.unwrap_or_else(|| PathBuf::from("lighttpd's module directory"))
                    .display()
            )),
        },
        Kind::MiniHttpd => mini_httpd_tls(binary),
        _ => Ok(()),
    }
}

/// apache2's modules, where Debian puts them.
fn apache_modules(_binary: &Binary) -> PathBuf {
    PathBuf::from("/usr/lib/apache2/modules")
}

/// lighttpd's module directory beside its binary (PREFIX/sbin/lighttpd → PREFIX/lib/lighttpd, as
/// lighttpd's build installs them): the lab names it in lighttpd's config, so the modules loaded are
/// the binary's own.
pub fn lighttpd_modules(program: &Path) -> Option<PathBuf> {
    let prefix = program.parent()?.parent()?;
    Some(prefix.join("lib/lighttpd")).filter(|d| d.join("mod_auth.so").is_file())
}

/// mini_httpd has TLS when its build takes `-S`: asked to serve HTTPS with a certificate file that
/// does not exist, a build with TLS fails opening that file, one without refuses `-S`. Bounded: the
/// probe is killed after five seconds.
fn mini_httpd_tls(binary: &Binary) -> std::result::Result<(), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("{NO_TLS}: cannot probe mini_httpd: {e}"))?;
    let absent = "/nonexistent/webstand-probe.pem";
    let mut child = std::process::Command::new(&binary.path)
        .args(["-D", "-S", "-E", absent, "-h", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{NO_TLS}: cannot run mini_httpd: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stderr);
    if text.contains(absent) || text.contains("No such file") {
        Ok(())
    } else {
        let first = text.lines().next().unwrap_or("no answer");
        Err(format!("{NO_TLS}: mini_httpd's build refuses -S ({first})"))
    }
}

/// What one handshake agreed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handshake {
    pub version: Option<ProtocolVersion>,
    pub suite: Option<String>,
    pub resumed: bool,
}

/// One HTTP/1.0 GET of `path` on a fresh connection, read to the close: (status, body, handshake).
fn get(
    addr: SocketAddr,
    config: &Arc<ClientConfig>,
    path: &str,
    limit: Duration,
) -> Result<(u16, Vec<u8>, Handshake)> {
    let mut s = Stream::connect(addr, Some(config), limit)?;
    let hs = s.handshake().expect("a TLS stream");
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: localhost\r\nUser-Agent: webstand-lab\r\n\r\n"
    )?;
    s.flush()?;
    let raw = s.read_to_close(limit)?;
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| anyhow!("GET {path}: no header end in {} bytes", raw.len()))?;
    let status = String::from_utf8_lossy(&raw[..end])
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| anyhow!("GET {path}: bad status line"))?;
    Ok((status, raw[end + 4..].to_vec(), hs))
}

/// thttpd's TLS column, checked over the wire: for TLS 1.3 and for TLS 1.2, a full handshake that
/// verifies the lab's certificate and fetches `path` whole (`want`), then a second connection that
/// resumes the session and fetches it again. Ok: one line on what was agreed; Err: what went wrong.
pub fn check(
    addr: SocketAddr,
    cert: &LabCert,
    path: &str,
    want: &[u8],
) -> std::result::Result<String, String> {
    let limit = Duration::from_secs(5);
    let mut seen = Vec::new();
    for version in [ProtocolVersion::TLSv1_3, ProtocolVersion::TLSv1_2] {
        let name = if version == ProtocolVersion::TLSv1_3 {
            "TLS 1.3"
        } else {
            "TLS 1.2"
        };
        let config = cert.client(Some(version)).map_err(|e| e.to_string())?;
        let mut suite = String::new();
        for (round, want_resumed) in [(1, false), (2, true)] {
            let (status, body, hs) =
                get(addr, &config, path, limit).map_err(|e| format!("{name}: {e:#}"))?;
            if status != 200 || body != want {
                return Err(format!(
                    "{name}: {path} answered {status} with {} bytes (want 200, {})",
                    body.len(),
                    want.len()
                ));
            }
            if hs.version != Some(version) {
                return Err(format!("{name}: the server agreed {:?}", hs.version));
            }
            if hs.resumed != want_resumed {
                let what = if want_resumed {
                    "the second connection did not resume the session"
                } else {
                    "the first connection claimed a resumed session"
                };
                return Err(format!("{name}: {what} (connection {round})"));
            }
            suite = hs.suite.unwrap_or_default();
        }
        seen.push(format!("{name} {suite}"));
    }
    Ok(format!("{}, both resumed", seen.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::pem::PemObject;

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
                Arc::new(rustls::crypto::ring::default_provider()),
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
