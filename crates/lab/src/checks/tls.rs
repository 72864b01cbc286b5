//! The check behind thttpd's TLS column: real handshakes by rustls with a server the lab started on
//! its certificate, verifying that certificate, one full and one resumed per protocol version, each
//! carrying a GET whose body must come back whole.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use rustls::{ClientConfig, ProtocolVersion};

use crate::client::{Handshake, Stream};
use crate::servers::process::{Server, Setup};
use crate::tls::cert::LabCert;
use webstand_results::Support;

/// The TLS column of a server started by the lab: checked ([`check`]) when it serves the lab's
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

/// One GET of `path` on a fresh connection with `Host: localhost`: (status, body, handshake).
fn get(
    addr: SocketAddr,
    config: &Arc<ClientConfig>,
    path: &str,
    limit: Duration,
) -> Result<(u16, Vec<u8>, Handshake)> {
    let mut s = Stream::connect(addr, Some(config), limit)?;
    let hs = s.handshake().expect("a TLS stream");
    let r = s.get(path, "localhost", None, true, limit)?;
    Ok((r.status, r.body, hs))
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
