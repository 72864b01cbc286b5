//! What TLS costs in each rustls crypto provider: the public-key work of a handshake through the
//! calls it makes (an X25519 key share, a key share and its agreement, the ECDSA P-256 SHA-256
//! verification of the server's signature), and a keep-alive exchange on a server's connection (a
//! 100-byte request read and a 2 KiB answer written, TLS 1.3 with AES-128-GCM as `webstand serve`
//! picks it). The figures behind the choice of provider (docs/BENCHMARKS.md, "Findings"); compare
//! them as ratios within one run.
//!
//! `cargo run --release -p webstand-engine --example tls_crypto_cost [ROUNDS] [ring|aws-lc-rs]`

use rustls::crypto::{aws_lc_rs, ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};
use rustls::{NamedGroup, SignatureScheme};
use std::hint::black_box;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Instant;

const OPS: u32 = 20_000;

fn micros_per_op(mut op: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..OPS {
        op();
    }
    t.elapsed().as_secs_f64() * 1e6 / f64::from(OPS)
}

fn measure(name: &str, p: &CryptoProvider, pkcs8: &[u8]) {
    let x25519 = p
        .kx_groups
        .iter()
        .find(|g| g.name() == NamedGroup::X25519)
        .expect("X25519");
    let peer = x25519.start().expect("key share").pub_key().to_vec();
    let keygen = micros_per_op(|| {
        black_box(x25519.start().expect("key share"));
    });
    let agree = micros_per_op(|| {
        let share = x25519.start().expect("key share");
        black_box(share.complete(&peer).expect("agreement"));
    });
    // One signature, verified as a client verifies ServerKeyExchange or CertificateVerify.
    let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8.to_vec()));
    let key = p.key_provider.load_private_key(der).expect("P-256 key");
    let signer = key
        .choose_scheme(&[SignatureScheme::ECDSA_NISTP256_SHA256])
        .expect("ECDSA P-256");
    let message = [7u8; 200];
    let signature = signer.sign(&message).expect("signature");
    let spki = key.public_key().expect("public key");
    let point = &spki.as_ref()[spki.as_ref().len() - 65..]; // the uncompressed point ends the SPKI
    let verifier = p
        .signature_verification_algorithms
        .mapping
        .iter()
        .find(|(scheme, _)| *scheme == SignatureScheme::ECDSA_NISTP256_SHA256)
        .expect("P-256 verification")
        .1[0];
    let verify = micros_per_op(|| {
        verifier
            .verify_signature(point, &message, &signature)
            .expect("valid signature");
    });
    println!("{name:<10} X25519 key {keygen:6.1} µs   key + agreement {agree:6.1} µs   P-256 verify {verify:6.1} µs");
}

/// A server's side of keep-alive exchanges over one TLS 1.3 AES-128-GCM connection made in
/// memory: the microseconds to take in a 100-byte request's record and read it, and to write a
/// 2 KiB answer and take out its record. The client's side is made between the timed parts.
fn exchange(name: &str, p: &CryptoProvider, cert: &CertificateDer<'static>, pkcs8: &[u8]) {
    let mut p = p.clone();
    p.cipher_suites
        .retain(|s| s.suite() == rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    let p = Arc::new(p);
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8.to_vec()));
    let server_config = ServerConfig::builder_with_provider(p.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .expect("certificate");
    let mut roots = RootCertStore::empty();
    roots.add(cert.clone()).expect("root");
    let client_config = ClientConfig::builder_with_provider(p)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let server_name = ServerName::try_from("localhost").expect("name");
    let mut server = ServerConnection::new(Arc::new(server_config)).expect("server");
    let mut client = ClientConnection::new(Arc::new(client_config), server_name).expect("client");
    let mut wire = Vec::new();
    while client.is_handshaking() || server.is_handshaking() {
        move_records(&mut client, &mut server, &mut wire);
        move_records(&mut server, &mut client, &mut wire);
    }
    let (request, answer) = ([b'r'; 100], [b'a'; 2048]);
    let mut buf = [0u8; 4096];
    let (mut read_us, mut write_us) = (0.0, 0.0);
    for _ in 0..OPS {
        client.writer().write_all(&request).expect("request");
        wire.clear();
        client.write_tls(&mut wire).expect("request record");
        let t = Instant::now();
        server.read_tls(&mut &wire[..]).expect("taken in");
        server.process_new_packets().expect("opened");
        let n = server.reader().read(&mut buf).expect("request read");
        read_us += t.elapsed().as_secs_f64();
        assert_eq!(n, request.len());
        wire.clear();
        let t = Instant::now();
        server.writer().write_all(&answer).expect("answer");
        server.write_tls(&mut wire).expect("answer record");
        write_us += t.elapsed().as_secs_f64();
        client.read_tls(&mut &wire[..]).expect("taken in");
        client.process_new_packets().expect("opened");
        while client.reader().read(&mut buf).is_ok_and(|n| n > 0) {}
    }
    let per = |s: f64| s * 1e6 / f64::from(OPS);
    println!(
        "{name:<10} serve's keep-alive, AES-128-GCM: read a request {:5.2} µs   write a 2 KiB answer {:5.2} µs",
        per(read_us),
        per(write_us)
    );
}

/// Whatever `from` has to send, handed to `to` and processed.
fn move_records(
    from: &mut impl std::ops::DerefMut<Target = rustls::ConnectionCommon<impl Sized>>,
    to: &mut impl std::ops::DerefMut<Target = rustls::ConnectionCommon<impl Sized>>,
    wire: &mut Vec<u8>,
) {
    wire.clear();
    while from.wants_write() {
        from.write_tls(wire).expect("records out");
    }
    if !wire.is_empty() {
        to.read_tls(&mut &wire[..]).expect("records in");
        to.process_new_packets().expect("handshake");
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: u32 = args
        .next()
        .map_or(3, |r| r.parse().expect("ROUNDS: a number"));
    // One provider alone, for callgrind's instruction counts: `ring` or `aws-lc-rs`.
    let only = args.next();
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256 key");
    let pkcs8 = key.serialize_der();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .expect("names")
        .self_signed(&key)
        .expect("certificate")
        .der()
        .clone();
    let providers = [
        ("ring", ring::default_provider()),
        ("aws-lc-rs", aws_lc_rs::default_provider()),
    ];
    for _ in 0..rounds {
        for (name, provider) in &providers {
            if only.as_deref().is_none_or(|o| o == *name) {
                measure(name, provider, &pkcs8);
            }
        }
        for (name, provider) in &providers {
            if only.as_deref().is_none_or(|o| o == *name) {
                exchange(name, provider, &cert, &pkcs8);
            }
        }
    }
}
