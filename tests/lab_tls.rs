//! The lab over HTTPS, for real: `webstand compare --tls` starts every installed server on the
//! certificate the lab generates, its TLS column is checked with real handshakes (TLS 1.3 and 1.2,
//! full and resumed, verifying the lab's CA), the TLS workloads complete over HTTPS without errors
//! and tls-new makes one full handshake per request; a lighttpd without its TLS module says "no TLS";
//! the certificate the servers present has the key asked for (RSA 2048, ECDSA P-256, as OpenSSL
//! reads it); a bad key type is one line; nothing the lab started is left running.

use crate::common;

use common::lab::{compare_json, installed, kinds, names, row, rows};
use webstand_lab::servers::{self, Kind};

/// Every server the lab can put on HTTPS. CI installs them all (scripts/install-deps.sh): a missing
/// one fails the test with the lab's own line on how to install it.
const TLS_SERVERS: &[&str] = &[
    "builtin",
    "nginx",
    "lighttpd",
    "apache",
    "h2o",
    "caddy",
    "mini_httpd",
];

#[test]
fn compare_tls_runs_every_server_over_https_with_a_verified_handshake() {
    installed(&kinds(TLS_SERVERS));
    let (out, doc) = compare_json(
        &common::short_compare(
            &names(&kinds(TLS_SERVERS)),
            "tls-ka,tls-new,tls-resume,small-files",
            "1,4",
            "300ms",
            &["--tls"],
        ),
        &[],
    );
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}\n{doc:#}");
    for wk in ["tls-ka", "tls-new", "tls-resume", "small-files"] {
        for row in rows(&doc, wk) {
            assert_eq!(row["measured"], true, "{wk}: {row}\n{err}");
            assert!(
                row["peak_hits_per_sec"].as_f64().unwrap() > 10.0,
                "{wk}: {row}"
            );
            assert_eq!(row["errors"], 0, "{wk}: {row}");
        }
    }
    for s in doc["servers"].as_array().unwrap() {
        assert_eq!(s["tls"], "yes", "{s}\n{err}");
    }
    // The handshakes the bench made: tls-new one full handshake per request, none resumed;
    // tls-resume one per request too, resumed after each client's first.
    // A level that stops on its duration leaves up to one handshake per client whose request never
    // completed: handshakes are the complete requests plus at most the clients.
    for row in rows(&doc, "tls-new") {
        let (full, resumed, requests) = handshakes(row);
        let in_flight = row["clients_at_peak"].as_u64().unwrap();
        assert!(
            (requests..=requests + in_flight).contains(&full) && resumed == 0,
            "tls-new: {row}"
        );
    }
    for row in rows(&doc, "tls-resume") {
        let (full, resumed, requests) = handshakes(row);
        let in_flight = row["clients_at_peak"].as_u64().unwrap();
        let made = full + resumed;
        assert!(
            (requests..=requests + in_flight).contains(&made),
            "tls-resume: {row}"
        );
        // A TLS 1.3 ticket is used once (RFC 8446 C.4, as browsers do): the bench resumes while it
        // holds one. Servers that send no new ticket on a resumed connection (lighttpd and h2o
        // through OpenSSL's settings) give 2 resumptions per full handshake; builtin (rustls) sends
        // tickets on every connection.
        let server = row["server"].as_str().unwrap();
        let share = if server == "builtin" { 9 } else { 6 };
        assert!(resumed * 10 >= requests * share, "tls-resume: {row}");
    }
    for row in rows(&doc, "tls-ka") {
        let (full, resumed, requests) = handshakes(row);
        let server = row["server"].as_str().unwrap();
        if server != "mini_httpd" {
            assert!(full + resumed <= 4 && requests > 100, "tls-ka: {row}");
        }
    }
}

/// (full handshakes, resumed handshakes, complete requests) at a row's peak level.
fn handshakes(row: &serde_json::Value) -> (u64, u64, u64) {
    let n = |k: &str| row[k].as_u64().unwrap_or_else(|| panic!("no {k} in {row}"));
    (
        n("tls_full_handshakes"),
        n("tls_resumed_handshakes"),
        n("requests_at_peak"),
    )
}

#[test]
fn a_server_without_tls_says_no_tls_and_rsa_keys_work() {
    // lighttpd's TLS is a package of its own (lighttpd-mod-openssl). The real lighttpd, run from a
    // prefix whose module directory has every module but mod_openssl, is lighttpd without it.
    installed(&[
        Kind::parse("builtin").unwrap(),
        Kind::parse("lighttpd").unwrap(),
    ]);
    let real = servers::find_program("lighttpd").unwrap();
    let modules = webstand_lab::servers::lighttpd_modules(&real).expect("lighttpd's modules");
    let prefix = tempfile::tempdir().unwrap();
    let (sbin, lib) = (
        prefix.path().join("sbin"),
        prefix.path().join("lib/lighttpd"),
    );
    std::fs::create_dir_all(&sbin).unwrap();
    std::fs::create_dir_all(&lib).unwrap();
    std::os::unix::fs::symlink(&real, sbin.join("lighttpd")).unwrap();
    for e in std::fs::read_dir(&modules).unwrap().flatten() {
        if e.file_name() != "mod_openssl.so" {
            std::os::unix::fs::symlink(e.path(), lib.join(e.file_name())).unwrap();
        }
    }
    let path = format!(
        "{}:{}",
        sbin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (out, doc) = compare_json(
        &common::short_compare(
            "lighttpd,builtin",
            "tls-ka",
            "2",
            "300ms",
            &["--tls", "--tls-key-type", "rsa2048"],
        ),
        &[("PATH", path)],
    );
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}\n{doc:#}");
    let lighttpd = row(&doc, "tls-ka", "lighttpd");
    assert_eq!(lighttpd["measured"], false, "{lighttpd}");
    let note = lighttpd["note"].as_str().unwrap();
    assert!(
        note.starts_with("no TLS") && note.contains("lighttpd-mod-openssl"),
        "{note}"
    );
    let builtin = row(&doc, "tls-ka", "builtin");
    assert_eq!(
        (builtin["measured"].as_bool(), builtin["errors"].as_u64()),
        (Some(true), Some(0))
    );
    let cells: Vec<(&str, &str)> = doc["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["tls"].as_str().unwrap()))
        .collect();
    assert_eq!(cells, [("lighttpd", "no"), ("builtin", "yes")]);
    assert!(
        doc["settings"].as_str().unwrap().contains("rsa2048"),
        "{doc}"
    );
}

#[test]
fn bad_tls_input_is_one_line_and_a_non_zero_exit() {
    for (args, want) in [
        (
            &["--tls", "--tls-key-type", "dsa1024"][..],
            "unknown TLS key type 'dsa1024' (known: ecdsa-p256, rsa2048)",
        ),
        (
            &["--workloads", "2k,tls-new"][..],
            "workload tls-new runs over HTTPS: add --tls",
        ),
    ] {
        common::lab::compare_refused(&[&["--servers", "builtin"][..], args].concat(), want);
    }
}

/// The certificate the lab's servers present, read by OpenSSL from a handshake with nginx and with
/// the builtin server (what `compare --tls --tls-key-type` gives them): its key's algorithm, size
/// and curve as `openssl x509 -text` prints them.
#[test]
fn the_lab_certificate_has_the_key_type_asked_for() {
    use std::sync::Arc;
    use webstand_lab::servers::{locate, Server, Setup};
    use webstand_lab::tls::{KeyType, LabCert};
    installed(&[
        Kind::parse("builtin").unwrap(),
        Kind::parse("nginx").unwrap(),
    ]);
    let openssl = common::require("openssl");
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("docroot");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    webstand_lab::compare::prepare_docroot(&doc, 1 << 20).unwrap();
    for (key_type, algorithm, size) in [
        (KeyType::Rsa2048, "rsaEncryption", "Public-Key: (2048 bit)"),
        (
            KeyType::EcdsaP256,
            "id-ecPublicKey",
            "Public-Key: (256 bit)",
        ),
    ] {
        let cert = Arc::new(LabCert::generate(key_type).unwrap());
        for kind in [
            Kind::parse("builtin").unwrap(),
            Kind::parse("nginx").unwrap(),
        ] {
            let what = format!("{} with {}", kind.name(), key_type.name());
            let mut setup = Setup::new(&doc);
            setup.tls = Some(Arc::clone(&cert));
            let webstand = std::path::Path::new(env!("CARGO_BIN_EXE_webstand"));
            let binary = locate(kind, Some(webstand)).unwrap();
            let mut server =
                Server::start(&binary, &setup).unwrap_or_else(|e| panic!("{what}: {e:#}"));
            let shown = common::output_within(
                std::process::Command::new(&openssl)
                    .args(["s_client", "-connect", &server.addr.to_string()])
                    .args(["-servername", "localhost", "-CAfile"])
                    .arg(cert.ca_file()),
                std::time::Duration::from_secs(20),
            );
            server.stop().unwrap();
            let shown = common::stdout(&shown);
            assert!(
                shown.contains("Verify return code: 0 (ok)"),
                "{what}: {shown}"
            );
            let pem = shown
                .split_once("-----BEGIN CERTIFICATE-----")
                .and_then(|(_, rest)| rest.split_once("-----END CERTIFICATE-----"))
                .map(|(body, _)| {
                    format!("-----BEGIN CERTIFICATE-----{body}-----END CERTIFICATE-----\n")
                })
                .unwrap_or_else(|| panic!("{what}: no certificate in {shown}"));
            let text = x509_text(&openssl, &pem);
            assert!(
                text.contains(&format!("Public Key Algorithm: {algorithm}")),
                "{what}: {text}"
            );
            assert!(text.contains(size), "{what}: {text}");
            if key_type == KeyType::EcdsaP256 {
                assert!(text.contains("ASN1 OID: prime256v1"), "{what}: {text}");
            }
            assert!(
                text.contains("Subject: CN = webstand lab"),
                "{what}: {text}"
            );
        }
    }
}

/// `openssl x509 -noout -text` of the PEM certificate `pem`.
fn x509_text(openssl: &std::path::Path, pem: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new(openssl)
        .args(["x509", "-noout", "-text"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(pem.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "openssl x509 failed on {pem}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
