//! lighttpd in the foreground (`-D`), one process, CGI by its own mod_cgi, PHP through mod_fastcgi.

use std::path::{Path, PathBuf};

use super::config::{mime_types, Ctx, Launch};
use super::kind::{Cgi, Configures, Php, ServerKind};
use super::lab_files::THROTTLE_KIB_PER_SEC;
use crate::h2::Mode;
use crate::limits::KEEPALIVE_TIMEOUT_SECS;
use crate::tls::ciphers;
use webstand_results::comparison::NO_TLS;
use webstand_results::{H2Note, TlsNote};

/// lighttpd's keep-alive request limit is a 16-bit setting: this is its largest value.
const MAX_KEEP_ALIVE_REQUESTS: u32 = 65535;

pub struct Lighttpd;

impl ServerKind for Lighttpd {
    fn name(&self) -> &'static str {
        "lighttpd"
    }
    fn package(&self) -> &'static str {
        "lighttpd"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["lighttpd"]
    }
    fn model(&self) -> &'static str {
        "epoll, 1 process"
    }
    fn cgi(&self) -> Cgi {
        Cgi::Own
    }
    fn configures(&self) -> Configures {
        Configures {
            basic_auth: true,
            chroot: true,
            throttling: true,
        }
    }
    fn launch(&self, c: &Ctx) -> Launch {
        launch(c)
    }
    /// mod_openssl is a package of its own.
    fn tls(&self, program: &Path) -> Result<(), String> {
        match modules(program) {
            Some(dir) if dir.join("mod_openssl.so").is_file() => Ok(()),
            dir => Err(format!(
                "{NO_TLS}: no mod_openssl.so in {} (apt-get install lighttpd-mod-openssl)",
                dir.unwrap_or_else(|| PathBuf::from("lighttpd's module directory"))
                    .display()
            )),
        }
    }
    fn tls_notes(&self) -> Vec<TlsNote> {
        vec![TlsNote::TicketsOnly {
            cacheless: Some("lighttpd".into()),
        }]
    }
    fn h2(&self) -> Result<(), String> {
        Ok(())
    }
    fn h3(&self, _program: &Path) -> Result<(), String> {
        Err(format!(
            "{}: lighttpd 1.4 has no QUIC (HTTP/1.1 and HTTP/2 only)",
            crate::h3::NO_H3
        ))
    }
    fn h2_notes(&self, _mode: Mode) -> Vec<H2Note> {
        vec![H2Note::FixedStreams {
            server: "lighttpd 1.4".into(),
            streams: 8,
        }]
    }
    fn php(&self) -> Php {
        Php::Fpm
    }
}

/// lighttpd's module directory beside its binary (PREFIX/sbin/lighttpd → PREFIX/lib/lighttpd, as
/// lighttpd's build installs them): the lab names it in lighttpd's config, so the modules loaded are
/// the binary's own.
pub fn modules(program: &Path) -> Option<PathBuf> {
    let prefix = program.parent()?.parent()?;
    Some(prefix.join("lib/lighttpd")).filter(|d| d.join("mod_auth.so").is_file())
}

fn launch(c: &Ctx) -> Launch {
    let (d, wd, l) = (&c.d, &c.wd, &c.limits);
    let types: String = mime_types()
        .map(|(e, t)| format!("\".{e}\" => \"{t}\", "))
        .collect();
    let (docline, extra) = if c.chroot {
        // lighttpd chroots before opening its error log: errors go to stderr (server.log).
        (format!("server.chroot = \"{d}\"\nserver.document-root = \"/\"\nserver.upload-dirs = (\"/lab\")\n"), String::new())
    } else {
        (
            format!("server.document-root = \"{d}\"\nserver.errorlog = \"{wd}/error.log\"\n"),
            format!(
                "auth.backend = \"htpasswd\"\nauth.backend.htpasswd.userfile = \"{wd}/htpasswd\"\n\
                 auth.require = (\"/lab/private/\" => (\"method\" => \"basic\", \"realm\" => \"lab\", \"require\" => \"valid-user\"))\n\
                 $HTTP[\"url\"] =~ \"^/lab/throttled/\" {{ connection.kbytes-per-second = {THROTTLE_KIB_PER_SEC} }}\n\
                 $HTTP[\"url\"] =~ \"^/cgi-bin/\" {{ cgi.assign = (\"\" => \"\") }}\n"
            ),
        )
    };
    // The modules installed beside the binary (lighttpd's own default on Debian).
    let modules_dir = modules(c.program)
        .map(|d| format!("server.modules-dir = \"{}\"\n", d.display()))
        .unwrap_or_default();
    // With PHP: mod_fastcgi (built in) and mod_deflate (`lighttpd-mod-deflate`), and the PHP lines
    // name the index files themselves.
    let (php_modules, php_lines) = match &c.php {
        Some(p) => (
            ", \"mod_fastcgi\", \"mod_deflate\"".to_string(),
            format!(
                "index-file.names = (\"index.php\", \"index.html\")\n\
                 fastcgi.server = (\".php\" => ((\"socket\" => \"{sock}\", \"check-local\" => \"enable\", \
                 \"broken-scriptfilename\" => \"enable\")))\n\
                 deflate.mimetypes = (\"text/html\")\ndeflate.allowed-encodings = (\"gzip\")\n",
                sock = p.socket
            ),
        ),
        None => (
            String::new(),
            "index-file.names = (\"index.html\")\n".to_string(),
        ),
    };
    // As root lighttpd binds and opens its logs, then runs as the worker user, its CGI programs too.
    let user = c
        .worker
        .map(|w| {
            format!(
                "server.username = \"{}\"\nserver.groupname = \"{}\"\n",
                w.name, w.group
            )
        })
        .unwrap_or_default();
    let conf = format!(
        "{docline}{user}{modules_dir}server.bind = \"127.0.0.1\"\nserver.port = {port}\n\
         server.max-worker = 0\nserver.max-fds = {files}\nserver.max-connections = {conns}\n\
         server.listen-backlog = {backlog}\nserver.defer-accept = 1\n\
         server.max-keep-alive-requests = {MAX_KEEP_ALIVE_REQUESTS}\nserver.max-keep-alive-idle = {KEEPALIVE_TIMEOUT_SECS}\n\
         server.modules = (\"mod_auth\", \"mod_authn_file\", \"mod_cgi\"{openssl}{php_modules})\n\
         {php_lines}mimetype.assign = ({types})\n{extra}{tls}{h2}",
        port = c.port,
        files = c.files(),
        conns = l.connections(),
        backlog = l.backlog(),
        openssl = if c.tls.is_some() { ", \"mod_openssl\"" } else { "" },
        tls = tls_settings(c),
        // HTTP/2: h2 by ALPN with TLS, h2c by prior knowledge on the plain port (its stream limit,
        // 8, is fixed in 1.4); off without --h2, as the other servers' (1.4.59 and later enable it
        // by default).
        h2 = if c.h2 {
            "server.feature-flags += (\"server.h2proto\" => \"enable\", \"server.h2c\" => \"enable\")\n"
        } else {
            "server.feature-flags += (\"server.h2proto\" => \"disable\", \"server.h2c\" => \"disable\")\n"
        },
    );
    Launch {
        files: vec![("lighttpd.conf".into(), conf)],
        args: vec!["-D".into(), "-f".into(), format!("{wd}/lighttpd.conf")],
        ..Default::default()
    }
}

/// mod_openssl on the one socket: the lab's certificate, TLS 1.2 and 1.3 (or the one asked for) with the shared cipher
/// preference. Resumption is lighttpd's own: session tickets with keys it rotates (it keeps no
/// server-side session cache).
fn tls_settings(c: &Ctx) -> String {
    let Some(cert) = c.tls else {
        return String::new();
    };
    format!(
        "ssl.engine = \"enable\"\nssl.pemfile = \"{crt}\"\nssl.privkey = \"{key}\"\n\
         ssl.openssl.ssl-conf-cmd = (\"MinProtocol\" => \"TLSv{min}\", \"MaxProtocol\" => \"TLSv{max}\", \"Options\" => \"ServerPreference\", \
         \"CipherString\" => \"{ciphers}\", \"Ciphersuites\" => \"{suites}\")\n",
        crt = cert.cert_file().display(),
        key = cert.key_file().display(),
        min = c.tls_versions.lowest(),
        max = c.tls_versions.highest(),
        ciphers = ciphers::openssl_ciphers(),
        suites = ciphers::openssl_suites(),
    )
}
