//! What a TLS client's public-key work costs in each rustls crypto provider, through the calls a
//! handshake makes: an X25519 key share, a key share and its agreement, and the ECDSA P-256 SHA-256
//! verification of the server's handshake signature. The figures behind the generator's choice of
//! aws-lc-rs (docs/BENCHMARKS.md, "Findings"); compare them as ratios within one run.
//!
//! `cargo run --release -p webstand-engine --example tls_crypto_cost [ROUNDS]`

use rustls::crypto::{aws_lc_rs, ring, CryptoProvider};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{NamedGroup, SignatureScheme};
use std::hint::black_box;
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

fn main() {
    let rounds: u32 = std::env::args()
        .nth(1)
        .map_or(3, |r| r.parse().expect("ROUNDS: a number"));
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("P-256 key");
    let pkcs8 = key.serialize_der();
    let (ring, aws) = (ring::default_provider(), aws_lc_rs::default_provider());
    for _ in 0..rounds {
        measure("ring", &ring, &pkcs8);
        measure("aws-lc-rs", &aws, &pkcs8);
    }
}
