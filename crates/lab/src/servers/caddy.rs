//! caddy with a Caddyfile: no admin endpoint, no automatic HTTPS, its state in its own directory,
//! GOMAXPROCS=1 for its one CPU; CGI through fcgiwrap with its FastCGI transport, PHP by its
//! `php_fastcgi`.

use std::path::Path;

use super::config::{cgi_programs, Ctx, Launch};
use super::kind::{Cgi, Configures, Php, ServerKind};
use super::lab_files::{bcrypt_hash, AUTH_USER};
use crate::h2::Mode;
use crate::limits::KEEPALIVE_TIMEOUT_SECS;
use crate::tls::ciphers;
use webstand_results::{H2Note, TlsNote};

pub struct Caddy;

impl ServerKind for Caddy {
    fn name(&self) -> &'static str {
        "caddy"
    }
    fn package(&self) -> &'static str {
        "caddy"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["caddy"]
    }
    fn version_flag(&self) -> &'static str {
        "version"
    }
    fn model(&self) -> &'static str {
        "goroutines, GOMAXPROCS=1"
    }
    fn cgi(&self) -> Cgi {
        Cgi::Fcgiwrap
    }
    fn configures(&self) -> Configures {
        Configures {
            basic_auth: true,
            chroot: false,
            throttling: false,
        }
    }
    fn launch(&self, c: &Ctx) -> Launch {
        launch(c)
    }
    /// Go's TLS is always there.
    fn tls(&self, _program: &Path) -> Result<(), String> {
        Ok(())
    }
    fn tls_notes(&self) -> Vec<TlsNote> {
        vec![
            TlsNote::GoTls13Order,
            TlsNote::TicketsOnly { cacheless: None },
        ]
    }
    fn h2(&self) -> Result<(), String> {
        Ok(())
    }
    fn h2_notes(&self, _mode: Mode) -> Vec<H2Note> {
        vec![H2Note::LibraryStreams {
            library: "Go's HTTP/2".into(),
            server: "caddy".into(),
            streams: 250,
        }]
    }
    /// quic-go is built in; the lab's config turns HTTP/3 on only in an h3 run.
    fn h3(&self, _program: &Path) -> Result<(), String> {
        Ok(())
    }
    fn php(&self) -> Php {
        Php::Fpm
    }
}

fn launch(c: &Ctx) -> Launch {
    // The site answers every Host (`:port`, bound to loopback): a site named 127.0.0.1 answers any
    // other Host (the TLS check's `localhost`) with caddy's empty 200.
    let (d, wd) = (&c.d, &c.wd);
    // Caddy's FastCGI transport takes the script's path up to a `split` match (without one the whole
    // path is PATH_INFO and the script name is empty): each program of cgi-bin is named, as in h2o.
    // A docroot without CGI programs (`lab up --docroot`) gets no CGI route: `split` needs one.
    let programs = cgi_programs(c.doc);
    let cgi = match &c.bridge {
        Some(b) if !programs.is_empty() => {
            let split: Vec<String> = programs.iter().map(|n| format!("/cgi-bin/{n}")).collect();
            format!(
                "  reverse_proxy /cgi-bin/* unix/{sock} {{\n    transport fastcgi {{\n      root {d}\n      \
                 split {split}\n    }}\n  }}\n",
                sock = b.socket,
                split = split.join(" ")
            )
        }
        _ => String::new(),
    };
    let conf = format!(
        "{{\n  admin off\n  auto_https off\n  storage file_system {wd}/data\n  \
         servers {{\n{protocols}    timeouts {{\n      idle {KEEPALIVE_TIMEOUT_SECS}s\n    }}\n  }}\n}}\n\
         {scheme}://:{port} {{\n  bind 127.0.0.1\n{tls}  root * {d}\n  \
         basicauth /lab/private/* {{\n    {AUTH_USER} {hash}\n  }}\n{cgi}{php}  file_server\n}}\n",
        port = c.port,
        hash = bcrypt_hash(),
        scheme = if c.tls.is_some() { "https" } else { "http" },
        protocols = protocols(c),
        tls = tls_settings(c),
        // `php_fastcgi` (index.php and the try_files it implies) and `encode gzip`.
        php = c
            .php
            .as_ref()
            .map(|p| format!("  encode gzip\n  php_fastcgi unix/{}\n", p.socket))
            .unwrap_or_default(),
    );
    let env = vec![
        ("HOME".into(), wd.clone()),
        ("XDG_DATA_HOME".into(), format!("{wd}/data")),
        ("XDG_CONFIG_HOME".into(), format!("{wd}/config")),
        ("GOMAXPROCS".into(), "1".into()),
    ];
    Launch {
        files: vec![("Caddyfile".into(), conf)],
        args: vec![
            "run".into(),
            "--config".into(),
            format!("{wd}/Caddyfile"),
            "--adapter".into(),
            "caddyfile".into(),
        ],
        env,
        // Caddy cannot drop root itself: as root the lab starts it as the worker user (its port is
        // no privileged one).
        as_worker: c.worker.is_some(),
        ..Default::default()
    }
}

/// The servers' `protocols` line. HTTP/2: h2 by ALPN over TLS, h2c on the plain port; Go's fixed
/// 250 streams per connection. HTTP/3 (quic-go, UDP at the HTTPS port), which caddy adds to HTTPS
/// by default, only in an h3 run. Without either, caddy's default.
fn protocols(c: &Ctx) -> String {
    let tls = c.tls.is_some();
    if !c.h2 && !c.h3 {
        return String::new();
    }
    let mut list = vec!["h1"];
    if c.h2 {
        list.push(if tls { "h2" } else { "h2 h2c" });
    }
    if c.h3 && tls {
        list.push("h3");
    }
    format!("    protocols {}\n", list.join(" "))
}

/// The site's `tls` directive: the lab's certificate and key (so no ACME: `auto_https off` already
/// keeps caddy from managing certificates and adding redirects), TLS 1.2 and 1.3 (or the one asked
/// for), the shared TLS 1.2
/// preference. Go's TLS 1.3 order is fixed, and Go resumes by session tickets only.
fn tls_settings(c: &Ctx) -> String {
    let Some(cert) = c.tls else {
        return String::new();
    };
    format!(
        "  tls {crt} {key} {{\n    protocols tls{min} tls{max}\n    ciphers {ciphers}\n  }}\n",
        crt = cert.cert_file().display(),
        key = cert.key_file().display(),
        min = c.tls_versions.lowest(),
        max = c.tls_versions.highest(),
        ciphers = ciphers::go_ciphers(),
    )
}
