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
}
