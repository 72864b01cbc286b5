//! Whether a QUIC connection's handshake was resumed from a session ticket. quinn-proto keeps
//! rustls' connection to itself (no `handshake_kind` through it), but rustls verifies the server's
//! certificate on a full handshake only (a resumed TLS 1.3 handshake carries none): the run's
//! verifier is wrapped in a [`Witness`] that counts its verifications on the thread that makes
//! them, which is the thread reading the connection's datagrams, so a connection that reads its
//! handshake without the count moving was resumed.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::cell::Cell;
use std::sync::Arc;

thread_local! {
    /// Server certificates verified on this thread: full handshakes read here.
    static VERIFIED: Cell<u64> = const { Cell::new(0) };
}

/// Certificates verified on this thread so far; a connection compares it around its reads.
pub(crate) fn verified() -> u64 {
    VERIFIED.with(Cell::get)
}

/// The run's own verifier, its verdicts unchanged, each call counted.
#[derive(Debug)]
pub(crate) struct Witness(pub Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for Witness {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        VERIFIED.with(|v| v.set(v.get() + 1));
        self.0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.0.requires_raw_public_keys()
    }

    fn root_hint_subjects(&self) -> Option<&[rustls::DistinguishedName]> {
        self.0.root_hint_subjects()
    }
}
