//! mini_httpd in the foreground (`-D`), configured by flags. No `-l`: without it mini_httpd logs
//! nothing, while `-l /dev/null` would format and write a log line per request.

use std::path::Path;
use std::time::{Duration, Instant};

use super::config::{Ctx, Launch};
use super::kind::{Cgi, Configures, Php, ServerKind};
use crate::tls::ciphers;
use crate::tls::ciphers::Versions;
use webstand_results::comparison::NO_TLS;
use webstand_results::TlsNote;

pub struct MiniHttpd;

impl ServerKind for MiniHttpd {
    fn name(&self) -> &'static str {
        "mini_httpd"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["mini-httpd", "minihttpd"]
    }
    fn package(&self) -> &'static str {
        "mini-httpd"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["mini_httpd"]
    }
    fn version_flag(&self) -> &'static str {
        "-V"
    }
    fn model(&self) -> &'static str {
        "fork per connection"
    }
    /// It answers each request on its own connection, as HTTP/1.0, so the generator does not ask
    /// it to keep one.
    fn keeps_alive(&self) -> bool {
        false
    }
    fn cgi(&self) -> Cgi {
        Cgi::Own
    }
    fn configures(&self) -> Configures {
        Configures {
            basic_auth: true,
            chroot: true,
            throttling: false,
        }
    }
    fn launch(&self, c: &Ctx) -> Launch {
        launch(c)
    }
    fn tls(&self, program: &Path) -> Result<(), String> {
        takes_tls(program)
    }
    fn tls_notes(&self) -> Vec<TlsNote> {
        vec![TlsNote::OpenSslTls13Order {
            server: "mini_httpd".into(),
        }]
    }
    fn tls_version_alone(&self, _alone: Versions) -> Result<(), String> {
        Err("mini_httpd has no setting for its TLS versions (it offers OpenSSL's defaults)".into())
    }
    fn h2(&self) -> Result<(), String> {
        Err(format!(
            "{}: mini_httpd speaks HTTP/1.1 only",
            crate::h2::NO_H2
        ))
    }
    fn h3(&self, _program: &Path) -> Result<(), String> {
        Err(format!(
            "{}: mini_httpd speaks HTTP/1.1 only",
            crate::h3::NO_H3
        ))
    }
    fn php(&self) -> Php {
        Php::No("mini_httpd has no FastCGI (the lab does not run PHP as CGI)")
    }
}

/// mini_httpd has TLS when its build takes `-S`: asked to serve HTTPS with a certificate file that
/// does not exist, a build with TLS fails opening that file, one without refuses `-S`. Bounded: the
/// probe is killed after five seconds.
fn takes_tls(program: &Path) -> Result<(), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("{NO_TLS}: cannot probe mini_httpd: {e}"))?;
    let absent = "/nonexistent/webstand-probe.pem";
    let mut child = std::process::Command::new(program)
        .args(["-D", "-S", "-E", absent, "-h", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{NO_TLS}: cannot run mini_httpd: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stderr);
    if text.contains(absent) || text.contains("No such file") {
        Ok(())
    } else {
        let first = text.lines().next().unwrap_or("no answer");
        Err(format!("{NO_TLS}: mini_httpd's build refuses -S ({first})"))
    }
}

fn launch(c: &Ctx) -> Launch {
    let mut args: Vec<String> = ["-D", "-h", "127.0.0.1", "-p"]
        .into_iter()
        .map(String::from)
        .collect();
    args.extend([
        c.port.to_string(),
        "-d".into(),
        c.d.clone(),
        "-c".into(),
        "cgi-bin/*".into(),
        "-i".into(),
        format!("{}/mini_httpd.pid", c.wd),
    ]);
    if let Some(w) = c.worker {
        args.extend(["-u".into(), w.name.clone()]);
    }
    if c.chroot {
        args.push("-r".into());
    }
    // HTTPS: key and certificate in one file, the shared TLS 1.2 preference (the TLS 1.3 suites and
    // the protocol floor are OpenSSL's defaults: mini_httpd has no setting for them).
    if let Some(cert) = c.tls {
        args.extend([
            "-S".into(),
            "-E".into(),
            cert.combined_file().display().to_string(),
            "-Y".into(),
            ciphers::openssl_ciphers(),
        ]);
    }
    Launch {
        args,
        ..Default::default()
    }
}
