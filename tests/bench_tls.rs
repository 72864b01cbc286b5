//! `webstand bench` over https against Debian's nginx with certificates made at test time (rcgen):
//! counts equal ab's, ab's TLS report lines, and the TLS options (-f, -Z, -E, -I, --cacert,
//! --tls-resume) each doing what it says, with clean failures for a wrong CA, a version the server
//! refuses and a plaintext server.

use crate::common;

use common::*;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedKey, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};
use std::path::Path;
use std::time::Duration;

/// A CA and its key, to sign the server's and the client's certificates. Every certificate gets
/// its own subject name: with rcgen's default one for all, a leaf's subject equals its issuer and
/// OpenSSL (nginx verifying the client) takes it for self-signed (verify error 18).
fn ca() -> CertifiedKey {
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.distinguished_name = named("webstand test CA");
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let key_pair = KeyPair::generate().unwrap();
    CertifiedKey {
        cert: p.self_signed(&key_pair).unwrap(),
        key_pair,
    }
}

fn named(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    dn
}

/// A certificate for `names[0]` (and the other names) signed by `ca`, for `usage` (server or
/// client authentication), with its key.
fn signed(ca: &CertifiedKey, names: &[&str], usage: ExtendedKeyUsagePurpose) -> (String, String) {
    let mut p =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    p.distinguished_name = named(names[0]);
    p.extended_key_usages = vec![usage];
    let key = KeyPair::generate().unwrap();
    let cert = p.signed_by(&key, &ca.cert, &ca.key_pair).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// nginx over https on loopback with `ssl` directives added to its server block (its errors logged
/// from level info, for the failure messages; each request in DIR/access.log, [`served`]); the CA's certificate is at DIR/ca.pem, another CA's
/// at DIR/other-ca.pem, a client certificate and key at DIR/client.pem.
fn start_tls_nginx(ssl: &str) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let ca = ca();
    let (cert, key) = signed(
        &ca,
        &["localhost", "127.0.0.1"],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let (ccert, ckey) = signed(&ca, &["client"], ExtendedKeyUsagePurpose::ClientAuth);
    let w = |name: &str, s: &str| std::fs::write(dir.path().join(name), s).unwrap();
    w("ca.pem", &ca.cert.pem());
    w("cert.pem", &cert);
    w("key.pem", &key);
    w("client.pem", &format!("{ccert}{ckey}"));
    w("other-ca.pem", &self::ca().cert.pem());
    let server = format!(
        "error_log {d}/error.log info; access_log {d}/access.log tests; \
         ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem; \
         ssl_session_cache shared:S:1m; {ssl}"
    );
    start_nginx_in(dir, "ssl", &server)
}

/// The `n` requests `ngx` served next after the `from` first, as its access log has them.
fn served(ngx: &Daemon, from: usize, n: usize) -> Vec<nginx::AccessLine> {
    let lines = nginx::access_lines(Path::new(&ngx.path("access.log")), from, n);
    assert_eq!(lines.len(), n, "{lines:#?}");
    lines
}

fn bench(args: &[&str]) -> std::process::Output {
    let db = scratch().join("bench_tls.db");
    let mut all = vec!["bench", "--db", db.to_str().unwrap()];
    all.extend(args);
    run_with_timeout(&all, Duration::from_secs(60))
}

#[test]
fn https_counts_and_tls_lines_equal_abs() {
    let ngx = start_tls_nginx("ssl_protocols TLSv1.2 TLSv1.3;");
    let u = format!("https://localhost:{}/page.html", ngx.port);
    for extra in [&[][..], &["-k"][..]] {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["-q", "-n", "300", "-c", "5", &u]);
        let ab = ab_report(&args);
        let ws = bench(&args);
        assert!(ws.status.success(), "{}", stderr(&ws));
        let ws = stdout(&ws);
        let names = [
            "Server Software:",
            "Server Port:",
            "Document Length:",
            "Complete requests:",
            "Failed requests:",
            "Total transferred:",
            "HTML transferred:",
            "Server Temp Key:",
            "TLS Server Name:",
        ];
        assert_fields_equal(&ws, &ab, &names, &format!("with {extra:?}"));
        // ab's "TLSv1.x,CIPHER,server key bits,cipher bits": the version and the server key's
        // size are the same whichever suite each client prefers.
        let nth = |r: &str, n: usize| {
            field(r, "SSL/TLS Protocol:")
                .split(',')
                .nth(n)
                .unwrap()
                .to_string()
        };
        assert_eq!(nth(&ws, 0), nth(&ab, 0));
        assert_eq!(nth(&ws, 2), nth(&ab, 2));
        assert_eq!(field(&ws, "SSL/TLS Protocol:").split(',').count(), 4);
        // The lines sit where ab prints them: right after Server Port.
        let after_port = ws.split("Server Port:").nth(1).unwrap();
        assert!(after_port
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("SSL/TLS Protocol:"));
    }
}

#[test]
fn protocol_cipher_sni_and_ca_options() {
    let ngx = start_tls_nginx("ssl_protocols TLSv1.3;");
    let u = format!("https://localhost:{}/page.html", ngx.port);
    let ok = bench(&[
        "-q",
        "-n",
        "20",
        "-c",
        "2",
        "-f",
        "TLS1.3",
        "-Z",
        "TLS_AES_128_GCM_SHA256",
        &u,
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(
        field(&stdout(&ok), "SSL/TLS Protocol:"),
        "TLSv1.3,TLS_AES_128_GCM_SHA256,256,128"
    );
    // TLS 1.2 only against a TLS 1.3-only server: a clean failure with the reason, no hang.
    let bad = bench(&["-q", "-n", "20", "-f", "TLS1.2", &u]);
    assert!(!bad.status.success());
    let all = format!("{}{}", stdout(&bad), stderr(&bad));
    assert!(all.contains("TLS handshake failed"), "{all}");
    assert!(!all.contains("panicked"), "{all}");
    // --cacert: the right CA verifies, another CA fails with a certificate error.
    let good = bench(&["-q", "-n", "5", "--cacert", &ngx.path("ca.pem"), &u]);
    assert!(good.status.success(), "{}", stderr(&good));
    let wrong = bench(&["-q", "-n", "5", "--cacert", &ngx.path("other-ca.pem"), &u]);
    let all = format!("{}{}", stdout(&wrong), stderr(&wrong));
    assert!(
        !wrong.status.success() && all.contains("certificate"),
        "{all}"
    );
    // -I: no SNI sent, so no TLS Server Name line (as ab with -I).
    let no_sni = bench(&["-q", "-n", "5", "-I", &u]);
    assert!(no_sni.status.success(), "{}", stderr(&no_sni));
    assert!(!stdout(&no_sni).contains("TLS Server Name:"));
    // Bad values: one line, non-zero.
    for args in [&["-f", "SSL3"][..], &["-Z", "NO-SUCH-CIPHER"][..]] {
        let mut a = args.to_vec();
        a.push(&u);
        let o = bench(&a);
        assert!(!o.status.success());
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
    let http = bench(&["-f", "TLS1.2", "http://127.0.0.1:1/"]);
    assert!(
        stderr(&http).contains("need an https:// URL"),
        "{}",
        stderr(&http)
    );
}

/// From nginx's side: -I sends no server name (SNI) where a run without it sends the URL's host,
/// and -i's requests are HEAD.
#[test]
fn sni_and_head_as_the_server_saw_them() {
    let ngx = start_tls_nginx("ssl_protocols TLSv1.2 TLSv1.3;");
    let u = format!("https://localhost:{}/page.html", ngx.port);
    let mut logged = 0;
    for (flag, method, server_name) in [
        ("-i", "HEAD", "localhost"),
        ("-I", "GET", "-"),
        ("-k", "GET", "localhost"),
    ] {
        let out = bench(&["-q", "-n", "5", flag, &u]);
        assert!(out.status.success(), "{flag}: {}", stderr(&out));
        for line in served(&ngx, logged, 5) {
            assert_eq!(line.method, method, "{flag}: {line:?}");
            assert_eq!(line.uri, "/page.html", "{flag}: {line:?}");
            assert_eq!(line.server_name, server_name, "{flag}: {line:?}");
        }
        logged += 5;
    }
}

#[test]
fn client_certificate_is_sent_with_e() {
    // nginx requires a client certificate signed by the test CA (and answers 400 without one);
    // the relative path is its prefix directory's ca.pem.
    let ngx = start_tls_nginx("ssl_verify_client on; ssl_client_certificate ca.pem;");
    let u = format!("https://localhost:{}/page.html", ngx.port);
    let without = bench(&["-q", "-n", "5", &u]);
    let text = stdout(&without);
    assert_eq!(field(&text, "Non-2xx responses:"), "5", "{text}");
    let with = bench(&["-q", "-n", "5", "-E", &ngx.path("client.pem"), &u]);
    let log = std::fs::read_to_string(ngx.path("error.log")).unwrap_or_default();
    assert!(with.status.success(), "{}\nnginx: {log}", stderr(&with));
    assert!(!stdout(&with).contains("Non-2xx"), "{}", stdout(&with));
    // ab with the same file and a 128-bit TLS 1.2 suite: also accepted, and its protocol line
    // (the server key's bits, then the cipher's) equals ours.
    let args = [
        "-q",
        "-n",
        "5",
        "-E",
        &ngx.path("client.pem"),
        "-f",
        "TLS1.2",
        "-Z",
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        &u,
    ];
    let ab = ab_report(&args);
    assert!(!ab.contains("Non-2xx"), "{ab}");
    let ws = bench(&args);
    assert!(ws.status.success(), "{}", stderr(&ws));
    let line = "SSL/TLS Protocol:";
    assert_eq!(
        field(&stdout(&ws), line),
        "TLSv1.2,ECDHE-ECDSA-AES128-GCM-SHA256,256,128"
    );
    assert_eq!(field(&stdout(&ws), line), field(&ab, line));
}

#[test]
fn tls_resume_resumes_sessions_and_json_splits_handshakes() {
    let ngx = start_tls_nginx("ssl_protocols TLSv1.2 TLSv1.3;");
    let u = format!("https://127.0.0.1:{}/page.html", ngx.port);
    let tls_of = |args: &[&str]| {
        let o = bench(args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["tls"].clone()
    };
    let full = tls_of(&["--json", "-n", "40", "-c", "2", &u]);
    assert_eq!(full["full_handshakes"], 40, "{full}");
    assert_eq!(full["resumed_handshakes"], 0, "{full}");
    // nginx's side: a connection per request, each a new session ("." in $ssl_session_reused).
    let reused = |lines: &[nginx::AccessLine]| {
        lines.iter().filter(|l| l.session_reused == "r").count() as u64
    };
    assert_eq!(reused(&served(&ngx, 0, 40)), 0);
    assert!(full["tcp_connect_mean_ms"].as_f64().unwrap() >= 0.0);
    assert!(full["full_handshake_mean_ms"].as_f64().unwrap() > 0.0);
    let resumed = tls_of(&["--json", "--tls-resume", "-n", "40", "-c", "2", &u]);
    assert_eq!(resumed["handshakes"], 40, "{resumed}");
    assert!(
        resumed["resumed_handshakes"].as_u64().unwrap() >= 30,
        "{resumed}"
    );
    // The sessions nginx resumed ("r") are the ones we counted as resumed.
    assert_eq!(
        reused(&served(&ngx, 40, 40)),
        resumed["resumed_handshakes"].as_u64().unwrap()
    );
    assert!(resumed["resumed_handshake_mean_ms"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_plaintext_server_on_an_https_url_fails_cleanly() {
    let ngx = start_nginx();
    let u = format!("https://127.0.0.1:{}/page.html", ngx.port);
    let o = bench(&["-n", "10", &u]);
    assert!(!o.status.success());
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("TLS"), "{all}");
    assert!(!all.contains("panicked"), "{all}");
}

#[test]
fn a_server_without_x25519_gets_the_other_groups_offered() {
    // The generator offers X25519, P-256 and P-384 (aws-lc-rs's post-quantum hybrid left out):
    // a server that takes only P-256 or P-384 gets it over TLS 1.3 (after a HelloRetryRequest,
    // since the ClientHello's key share is X25519) and over TLS 1.2, named in the report as ab does.
    for (curve, temp_key) in [
        ("prime256v1", "ECDH prime256v1 256 bits"),
        ("secp384r1", "ECDH secp384r1 384 bits"),
    ] {
        let ngx = start_tls_nginx(&format!(
            "ssl_protocols TLSv1.2 TLSv1.3; ssl_ecdh_curve {curve};"
        ));
        let u = format!("https://127.0.0.1:{}/page.html", ngx.port);
        for version in ["TLS1.2", "TLS1.3"] {
            let o = bench(&["-q", "-n", "20", "-c", "2", "-f", version, &u]);
            assert!(o.status.success(), "{curve} {version}: {}", stderr(&o));
            assert_eq!(
                field(&stdout(&o), "Server Temp Key:"),
                temp_key,
                "{version}"
            );
            assert_eq!(field(&stdout(&o), "Complete requests:"), "20");
        }
        let ab = ab_report(&["-q", "-n", "5", &u]);
        assert_eq!(field(&ab, "Server Temp Key:"), temp_key, "ab: {ab}");
    }
}

#[test]
fn keep_alive_at_32_connections_counts_equal_abs_over_both_versions() {
    // 32 connections on one load thread make the queue `halfway.rs` waits on (32 or more
    // connections waiting on responses): every response is still read, counted and followed by
    // the connection's next request, as with wrk's way of waiting (`--spin off`) and as ab counts.
    let ngx = start_tls_nginx("ssl_protocols TLSv1.2 TLSv1.3;");
    let u = format!("https://127.0.0.1:{}/page.html", ngx.port);
    for version in ["TLS1.2", "TLS1.3"] {
        let args = ["-q", "-k", "-f", version, "-n", "3000", "-c", "32", &u];
        let ab = ab_report(&args);
        for wait in ["auto", "off"] {
            let mut all = vec!["--threads", "1", "--spin", wait];
            all.extend(args);
            let ws = bench(&all);
            assert!(ws.status.success(), "{version} {wait}: {}", stderr(&ws));
            let ws = stdout(&ws);
            let label = format!("{version} --spin {wait}");
            assert_fields_equal(&ws, &ab, &KEEP_ALIVE_COUNTS, &label);
            assert_eq!(field(&ws, "Complete requests:"), "3000");
        }
    }
}

#[test]
fn the_json_says_how_each_thread_waited_halfway() {
    // 64 connections on one load thread keep 32 or more requests waiting at every wait, so under
    // `--spin auto` the thread waits halfway (`halfway.rs`: blocked on one socket, or napped once
    // it knows nginx's pace); `--spin off` never does. The JSON's `load_threads` counts both.
    let ngx = start_tls_nginx("ssl_protocols TLSv1.2 TLSv1.3;");
    let u = format!("https://127.0.0.1:{}/page.html", ngx.port);
    for wait in ["auto", "off"] {
        let args = ["--json", "-k", "--threads", "1", "-c", "64", "-n", "20000"];
        let ws = bench(&[&args[..], &["--spin", wait, &u]].concat());
        assert!(ws.status.success(), "--spin {wait}: {}", stderr(&ws));
        let v = json_stdout(&ws);
        assert_eq!(v["complete"], 20000, "--spin {wait}");
        let (blocks, naps) = halfway_waits(&v);
        let thread = &v["load_threads"][0];
        match wait {
            // Seen here: 2-3 blocks (before the pace is known) and 230-780 naps, quiet or loaded.
            "auto" => assert!(naps > 0, "--spin auto never napped over TLS: {thread}"),
            _ => assert_eq!(blocks + naps, 0, "--spin off waited halfway: {thread}"),
        }
    }
}

/// A self-signed certificate that is a CA's (as `openssl req -x509` makes one by default) used as
/// the server's own: `--cacert` with it fails saying what to do.
#[test]
fn a_ca_certificate_as_the_servers_own_is_refused_saying_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    assert!(run(&["fixtures", www.to_str().unwrap()]).status.success());
    let mut p =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    let cert = p.self_signed(&key).unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let (_server, tls) = serve_tls(&www, &cert_path, &key_path, &[]);
    let db = dir.path().join("h.db");
    let url = format!("https://{tls}/2k.html");
    let out = run(&[
        "bench",
        "-q",
        "-n",
        "5",
        "--cacert",
        cert_path.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        &url,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("CaUsedAsEndEntity") && err.contains("basicConstraints=critical,CA:FALSE"),
        "{err}"
    );
}
