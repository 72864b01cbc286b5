//! The lab over HTTP/2 (`compare --h2`): which servers speak it, the settings every one of them gets
//! alike (128 concurrent streams per connection where the server lets it be set), where a server's
//! HTTP/2 differs from the others', and the check behind thttpd's h2 column: a real exchange by curl
//! (an independent HTTP/2 client, nghttp2 inside), which must agree on HTTP/2 and fetch the file
//! whole. Over TLS the servers negotiate `h2` by ALPN beside `http/1.1`; on plain ports they take
//! HTTP/2 by prior knowledge (h2c).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::servers::{find_program, Binary, Kind, Server, Setup, Support};

/// How a row or a column without HTTP/2 begins.
pub const NO_H2: &str = "no h2";

/// Concurrent streams per connection every server allows where it can be set (nginx's default).
pub const MAX_CONCURRENT_STREAMS: u32 = 128;

/// Streams the h2 workloads keep in flight on each connection (h2load's `-m 16`).
pub const STREAMS_PER_CONNECTION: u32 = 16;

/// How the servers speak HTTP/2 in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Over TLS, `h2` negotiated by ALPN (`http/1.1` offered beside it).
    Alpn,
    /// On a plain port, by prior knowledge (h2c): the client opens with the HTTP/2 preface.
    Cleartext,
}

impl Mode {
    /// The mode of a run over HTTPS (`tls`) or plain HTTP.
    pub fn of(tls: bool) -> Mode {
        if tls {
            Mode::Alpn
        } else {
            Mode::Cleartext
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Mode::Alpn => "HTTP/2 over TLS by ALPN (h2, http/1.1 offered)",
            Mode::Cleartext => "HTTP/2 by prior knowledge (h2c) on plain ports",
        }
    }
}

/// Why `kind` never speaks HTTP/2 in the lab, if it never does (known without starting it).
pub fn never(kind: Kind) -> Option<String> {
    match kind {
        Kind::MiniHttpd => Some(format!("{NO_H2}: mini_httpd speaks HTTP/1.1 only")),
        _ => None,
    }
}

/// Why `binary` cannot speak HTTP/2 in `mode` here, if it cannot: never (`never`), or a builtin
/// whose `serve` has no `--h2c`. A server that is configured for HTTP/2 but does not negotiate it
/// is found by the check instead: a builtin whose `serve` has no HTTP/2 yet, or `apache-modphp`,
/// whose mod_http2 answers ALPN h2 with http/1.1 under the prefork MPM (h2c it takes).
pub fn support(binary: &Binary, mode: Mode) -> Result<(), String> {
    if let Some(why) = never(binary.kind) {
        return Err(why);
    }
    let builtin = matches!(binary.kind, Kind::Builtin | Kind::BuiltinNoCache);
    if builtin && mode == Mode::Cleartext {
        let help = Command::new(&binary.path)
            .args(["serve", "--help"])
            .stdin(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        if !help.contains("--h2c") {
            return Err(format!("{NO_H2}: this webstand's serve has no --h2c"));
        }
    }
    Ok(())
}

/// Where a server's HTTP/2 differs from the others' (a note on its h2 rows).
pub fn differences(kind: Kind, mode: Mode) -> Vec<&'static str> {
    let mut out = Vec::new();
    match kind {
        Kind::Lighttpd => out.push(
            "lighttpd 1.4 allows 8 concurrent streams per connection (fixed): 8 in flight, not 16",
        ),
        Kind::H2o => out
            .push("h2o 2.2 announces 100 concurrent streams whatever its setting (it handles 128)"),
        Kind::Caddy => out.push("Go's HTTP/2: 250 concurrent streams (caddy has no setting)"),
        Kind::Nginx if mode == Mode::Cleartext => {
            out.push("nginx 1.22's h2c port speaks HTTP/2 only")
        }
        _ => {}
    }
    out
}

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
