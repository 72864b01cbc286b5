//! The TLS settings every lab server gets alike, spelled for each TLS library family: TLS 1.2's
//! cipher suites in one preference order (the server's order wins), TLS 1.3's suites where a server
//! can set them, and the lifetime of resumed sessions. OpenSSL's names serve nginx, lighttpd,
//! apache, h2o and mini_httpd; Go's serve caddy; rustls (the builtin server) keeps its own order.

/// TLS 1.2 suites in the order every server prefers them, as (OpenSSL's name, Go's name): forward
/// secrecy and AEAD only, AES-128-GCM first, as Mozilla's "intermediate" profile. Both key types'
/// suites are listed; the certificate decides which half can be used. Go fixes its TLS 1.3 order
/// itself (AES-128-GCM first on CPUs with AES instructions), which is why AES-128-GCM leads
/// everywhere.
const TLS12: [(&str, &str); 6] = [
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
];

/// TLS 1.3 suites in preference order (OpenSSL's names; OpenSSL's own default puts AES-256 first).
const TLS13: [&str; 3] = [
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

/// The TLS versions a server offers: TLS 1.2 and 1.3 (the lab's default, every comparison's), or one
/// alone (`webstand lab up --tls-version`), for a figure of one version against a client that cannot
/// choose (wrk). Each server kind spells it from `lowest` and `highest`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Versions {
    #[default]
    Both,
    Only12,
    Only13,
}

impl Versions {
    /// "1.2", "1.3" or "both".
    pub fn parse(text: &str) -> Result<Versions, String> {
        match text {
            "1.2" => Ok(Versions::Only12),
            "1.3" => Ok(Versions::Only13),
            "both" => Ok(Versions::Both),
            _ => Err(format!("unknown TLS version {text:?} (1.2, 1.3 or both)")),
        }
    }

    /// The lowest version offered, as its number ("1.2").
    pub fn lowest(self) -> &'static str {
        match self {
            Versions::Only13 => "1.3",
            _ => "1.2",
        }
    }

    /// The highest version offered, as its number ("1.3").
    pub fn highest(self) -> &'static str {
        match self {
            Versions::Only12 => "1.2",
            _ => "1.3",
        }
    }

    /// OpenSSL's names of every version offered, lowest first ("TLSv1.2", "TLSv1.3").
    pub fn openssl_names(self) -> Vec<String> {
        let all = [Versions::Only12, Versions::Only13];
        all.iter()
            .filter(|v| self == Versions::Both || **v == self)
            .map(|v| format!("TLSv{}", v.lowest()))
            .collect()
    }
}

/// Session resumption's lifetime everywhere it can be set, seconds.
pub const SESSION_TIMEOUT_SECS: u64 = 3600;

/// The TLS 1.2 list as an OpenSSL cipher string.
pub fn openssl_ciphers() -> String {
    TLS12.map(|(openssl, _)| openssl).join(":")
}

/// The TLS 1.3 list as OpenSSL's `Ciphersuites` value.
pub fn openssl_suites() -> String {
    TLS13.join(":")
}

/// The TLS 1.2 list under Go's names, space-separated (caddy's `ciphers`).
pub fn go_ciphers() -> String {
    TLS12.map(|(_, go)| go).join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_family_gets_the_same_order() {
        let openssl = super::openssl_ciphers();
        let go = super::go_ciphers();
        assert!(openssl.starts_with("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"));
        assert!(go.starts_with("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 "));
        assert_eq!(openssl.split(':').count(), go.split(' ').count());
        assert!(super::openssl_suites().starts_with("TLS_AES_128_GCM_SHA256:"));
    }

    #[test]
    fn versions_name_what_is_offered() {
        use super::Versions;
        assert_eq!(Versions::Both.openssl_names(), ["TLSv1.2", "TLSv1.3"]);
        assert_eq!(Versions::Only12.openssl_names(), ["TLSv1.2"]);
        assert_eq!(Versions::Only13.openssl_names(), ["TLSv1.3"]);
        assert_eq!(
            (Versions::Only12.lowest(), Versions::Only12.highest()),
            ("1.2", "1.2")
        );
        assert_eq!(
            (Versions::Only13.lowest(), Versions::Only13.highest()),
            ("1.3", "1.3")
        );
        assert_eq!(Versions::parse("both"), Ok(Versions::Both));
        assert!(Versions::parse("1.1")
            .unwrap_err()
            .contains("1.2, 1.3 or both"));
    }
}
