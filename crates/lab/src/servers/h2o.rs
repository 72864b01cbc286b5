//! h2o in worker mode (the foreground), one thread; CGI through fcgiwrap like nginx and caddy, PHP
//! through its FastCGI handler.

use std::path::Path;

use super::ask::requires;
use super::config::{cgi_programs, Ctx, Launch};
use super::kind::{Cgi, Configures, Php, ServerKind};
use super::lab_files::THROTTLE_KIB_PER_SEC;
use crate::h2::{self, Mode};
use crate::limits::KEEPALIVE_TIMEOUT_SECS;
use crate::tls::ciphers;
use crate::tls::ciphers::Versions;
use webstand_results::comparison::NO_TLS;
use webstand_results::{H2Note, TlsNote};

pub struct H2o;

impl ServerKind for H2o {
    fn name(&self) -> &'static str {
        "h2o"
    }
    fn package(&self) -> &'static str {
        "h2o"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["h2o"]
    }
    fn model(&self) -> &'static str {
        "epoll, 1 thread"
    }
    fn cgi(&self) -> Cgi {
        Cgi::Fcgiwrap
    }
    fn configures(&self) -> Configures {
        Configures {
            basic_auth: true,
            chroot: false,
            throttling: true,
        }
    }
    fn launch(&self, c: &Ctx) -> Launch {
        launch(c)
    }
    fn tls(&self, program: &Path) -> Result<(), String> {
        requires(program, &["-v"], "OpenSSL", || {
            format!("{NO_TLS}: h2o's build links no OpenSSL")
        })
    }
    fn tls_version_alone(&self, alone: Versions) -> Result<(), String> {
        match alone {
            Versions::Only12 => Err(
                "h2o 2.2 cannot offer TLS 1.2 alone (its maximum-version does not turn TLS 1.3 off)"
                    .into(),
            ),
            _ => Ok(()),
        }
    }
    fn tls_notes(&self) -> Vec<TlsNote> {
        vec![TlsNote::OpenSslTls13Order {
            server: "h2o 2.2".into(),
        }]
    }
    fn h2(&self) -> Result<(), String> {
        Ok(())
    }
    /// Debian's 2.2 predates QUIC (quicly came with 2.3, which the lab has no config for).
    fn h3(&self, _program: &Path) -> Result<(), String> {
        Err(format!(
            "{}: h2o 2.2 has no QUIC (HTTP/3 came with h2o 2.3)",
            crate::h3::NO_H3
        ))
    }
    fn h2_notes(&self, _mode: Mode) -> Vec<H2Note> {
        vec![H2Note::Announces {
            server: "h2o 2.2".into(),
            streams: 100,
            handles: crate::h2::MAX_CONCURRENT_STREAMS,
        }]
    }
    fn php(&self) -> Php {
        Php::Fpm
    }
}

fn launch(c: &Ctx) -> Launch {
    let (d, wd) = (&c.d, &c.wd);
    // As root h2o binds, then runs as the worker user.
    let user = c
        .worker
        .map(|w| format!("user: {}\n", w.name))
        .unwrap_or_default();
    // h2o 2.2 maps FastCGI by path or extension; the docroot's programs have no extension, so each
    // gets its own path, with the file to run in SCRIPT_FILENAME (what fcgiwrap executes).
    let cgi: String = match &c.bridge {
        Some(b) => cgi_programs(c.doc)
            .iter()
            .map(|name| {
                format!(
                    "      /cgi-bin/{name}:\n        setenv:\n          SCRIPT_FILENAME: {d}/cgi-bin/{name}\n        \
                     fastcgi.connect:\n          port: {sock}\n          type: unix\n",
                    sock = b.socket
                )
            })
            .collect(),
        None => String::new(),
    };
    let conf = format!(
        "listen:\n  host: 127.0.0.1\n  port: {port}\n{tls}num-threads: 1\nmax-connections: {conns}\n{user}\
         error-log: {wd}/error.log\npid-file: {wd}/h2o.pid\nhttp1-request-timeout: {KEEPALIVE_TIMEOUT_SECS}\n{h2}\
         hosts:\n  default:\n    paths:\n\
         {cgi}\
         \x20     /lab/private:\n        mruby.handler: |\n          require \"htpasswd.rb\"\n          Htpasswd.new(\"{wd}/htpasswd\", \"lab\")\n        file.dir: {d}/lab/private\n\
         \x20     /lab/throttled:\n        header.add: \"X-Traffic: {bps}\"\n        throttle-response: ON\n        file.dir: {d}/lab/throttled\n\
         \x20     /:\n        file.dir: {d}\n{php}",
        port = c.port,
        conns = c.limits.connections(),
        bps = THROTTLE_KIB_PER_SEC * 1024,
        tls = tls_settings(c),
        // h2o speaks h2 by ALPN and h2c by prior knowledge by default: the lab sets the stream
        // limit and the idle time of every other server (h2o's own is 10 s).
        h2 = if c.h2 {
            format!(
                "http2-max-concurrent-requests-per-connection: {}\nhttp2-idle-timeout: {KEEPALIVE_TIMEOUT_SECS}\n",
                h2::MAX_CONCURRENT_STREAMS
            )
        } else {
            String::new()
        },
        // `.php` to PHP-FPM by a custom handler over `fastcgi.connect`, and `compress` (lines under
        // the default host's `/` path, indented for it).
        php = c
            .php
            .as_ref()
            .map(|p| format!(
                "        file.index: ['index.php', 'index.html']\n        compress: ON\n        \
                 file.custom-handler:\n          extension: .php\n          fastcgi.connect:\n            \
                 port: {sock}\n            type: unix\n",
                sock = p.socket
            ))
            .unwrap_or_default(),
    );
    Launch {
        files: vec![("h2o.conf".into(), conf)],
        args: vec!["-c".into(), format!("{wd}/h2o.conf")],
        ..Default::default()
    }
}

/// The listener's `ssl` block and resumption: the lab's certificate, TLS 1.2 and 1.3 (or 1.3
/// alone), the shared TLS
/// 1.2 preference (h2o 2.2 has no setting for TLS 1.3's suites: OpenSSL's order, AES-256-GCM
/// first), and both resumption kinds in its own session cache and tickets.
fn tls_settings(c: &Ctx) -> String {
    let Some(cert) = c.tls else {
        return String::new();
    };
    format!(
        "  ssl:\n    certificate-file: {crt}\n    key-file: {key}\n    minimum-version: TLSv{min}\n    \
         cipher-suite: {ciphers}\n    cipher-preference: server\n\
         ssl-session-resumption:\n  mode: all\n  cache-store: internal\n  lifetime: {t}\n",
        crt = cert.cert_file().display(),
        key = cert.key_file().display(),
        min = c.tls_versions.lowest(),
        ciphers = ciphers::openssl_ciphers(),
        t = ciphers::SESSION_TIMEOUT_SECS,
    )
}
