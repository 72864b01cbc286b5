//! The check behind thttpd's h2 column: a real exchange by curl (an independent HTTP/2 client,
//! nghttp2 inside) with a server the lab started with HTTP/2 on, which must agree on HTTP/2 and
//! fetch the file whole.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::h2::NO_H2;
use crate::programs::find_program;
use crate::servers::process::{Server, Setup};
use webstand_results::Support;

/// thttpd's h2 column for a server the lab started with HTTP/2 on: checked by fetching `/2k.html`
/// of the docroot. (Support, why not) — `Support::No` with the reason when the server answered with
/// HTTP/1.x (a builtin that does not negotiate h2 yet).
pub fn check_feature(server: &Server, setup: &Setup) -> (Support, Option<String>) {
    let path = webstand_workload::fixtures::TENON_FILE;
    let want = match std::fs::read(setup.docroot.join(&path[1..])) {
        Ok(b) => b,
        Err(e) => return (Support::Failed(format!("cannot read {path}: {e}")), None),
    };
    let ca = setup.tls.as_ref().map(|c| c.ca_file());
    let url = format!(
        "{}://{}{path}",
        if ca.is_some() { "https" } else { "http" },
        server.addr
    );
    match fetch(&url, ca.as_deref(), &want) {
        Ok(()) => (Support::Verified, None),
        Err(Found::Http1(version)) => {
            let asked = if ca.is_some() {
                "ALPN h2"
            } else {
                "the h2c preface"
            };
            let why = format!("{NO_H2}: answered HTTP/{version} to {asked}");
            (Support::No, Some(why))
        }
        Err(Found::Failed(why)) => (Support::Failed(why), None),
    }
}

/// What a fetch that was not a whole HTTP/2 answer found.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// The server answered with this HTTP version (1.1, 1.0) instead.
    Http1(String),
    Failed(String),
}

/// One GET of `url` by curl over HTTP/2 (ALPN h2 for https, prior knowledge for http), verifying the
/// lab's CA when given: Ok when it was HTTP/2, status 200 and the body is `want`.
pub fn fetch(url: &str, ca: Option<&Path>, want: &[u8]) -> Result<(), Found> {
    let curl = find_program("curl").ok_or_else(|| {
        Found::Failed(
            "curl is not installed (apt-get install curl): it checks the h2 column".into(),
        )
    })?;
    let mut cmd = Command::new(curl);
    cmd.args(["-sS", "--max-time", "5", "-o", "-"])
        .args(["-w", "%{stderr}\n%{http_version} %{http_code}\n"]);
    match ca {
        Some(ca) => cmd.arg("--http2").arg("--cacert").arg(ca),
        None => cmd.arg("--http2-prior-knowledge"),
    };
    let out = cmd
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Found::Failed(format!("cannot run curl: {e}")))?;
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or_default().trim().to_string();
    let (version, status) = last.split_once(' ').unwrap_or(("?", "?"));
    if !out.status.success() {
        let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(Found::Failed(format!("curl {url}: {first}")));
    }
    if version != "2" {
        return Err(Found::Http1(version.to_string()));
    }
    if status != "200" || out.stdout != want {
        return Err(Found::Failed(format!(
            "curl {url}: HTTP/2 {status} with {} bytes (want 200, {})",
            out.stdout.len(),
            want.len()
        )));
    }
    Ok(())
}
