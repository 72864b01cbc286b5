//! apache2 with a self-contained config: explicit `LoadModule` lines, the event MPM with one child
//! whose threads cover the largest level, CGI by its own mod_cgid, PHP passed to PHP-FPM by
//! mod_proxy_fcgi. `apache-modphp` is the same config on the prefork MPM with mod_php (seed 004's
//! Apache): a child per client of the largest level, PHP run inside them.

use std::path::{Path, PathBuf};

use super::config::{mime_types, Ctx, Launch};
use super::kind::{Cgi, Configures, Php, ServerKind};
use super::lab_files::THROTTLE_KIB_PER_SEC;
use crate::h2;
use crate::limits::KEEPALIVE_TIMEOUT_SECS;
use crate::tls::ciphers;
use webstand_results::comparison::NO_TLS;

const MODULES: &[(&str, &str)] = &[
    ("authz_core", "mod_authz_core"),
    ("authz_user", "mod_authz_user"),
    ("authn_core", "mod_authn_core"),
    ("authn_file", "mod_authn_file"),
    ("auth_basic", "mod_auth_basic"),
    ("mime", "mod_mime"),
    ("dir", "mod_dir"),
    ("alias", "mod_alias"),
    ("cgid", "mod_cgid"),
    ("env", "mod_env"),
    ("ratelimit", "mod_ratelimit"),
];

/// mod_ssl and the shared-memory session cache it keeps sessions in.
const TLS_MODULES: &[(&str, &str)] = &[("ssl", "mod_ssl"), ("socache_shmcb", "mod_socache_shmcb")];

/// mod_http2, for `compare --h2` (the event MPM's threads serve its streams).
const H2_MODULES: &[(&str, &str)] = &[("http2", "mod_http2")];

/// mod_proxy_fcgi, as the Apache documentation's PHP-FPM example sets it up, and mod_deflate for
/// HTML.
const FPM_MODULES: &[(&str, &str)] = &[
    ("proxy", "mod_proxy"),
    ("proxy_fcgi", "mod_proxy_fcgi"),
    ("filter", "mod_filter"),
    ("deflate", "mod_deflate"),
];

/// mod_php (from `libapache2-mod-php8.2`) and mod_deflate for HTML.
const MOD_PHP_MODULES: &[(&str, &str)] = &[
    ("php", "libphp8.2"),
    ("filter", "mod_filter"),
    ("deflate", "mod_deflate"),
];

/// Where Debian puts apache2's modules.
const MODULE_DIR: &str = "/usr/lib/apache2/modules";

/// mod_php's module, from `libapache2-mod-php8.2`.
pub const MOD_PHP: &str = "/usr/lib/apache2/modules/libphp8.2.so";

/// apache2 with the event MPM (`mod_php: false`: the `apache` row) or the prefork MPM and mod_php
/// (the `apache-modphp` row).
pub struct Apache {
    pub mod_php: bool,
}

impl ServerKind for Apache {
    fn name(&self) -> &'static str {
        if self.mod_php {
            "apache-modphp"
        } else {
            "apache"
        }
    }
    fn aliases(&self) -> &'static [&'static str] {
        if self.mod_php {
            &["apache-mod-php", "mod_php"]
        } else {
            &["apache2", "httpd"]
        }
    }
    fn package(&self) -> &'static str {
        if self.mod_php {
            "libapache2-mod-php8.2"
        } else {
            "apache2"
        }
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["apache2", "httpd"]
    }
    /// apache-modphp needs mod_php's module as well as apache2.
    fn program(&self, _webstand: Option<&Path>) -> Option<PathBuf> {
        if self.mod_php && !Path::new(MOD_PHP).is_file() {
            return None;
        }
        self.binaries()
            .iter()
            .find_map(|b| crate::programs::find_program(b))
    }
    fn model(&self) -> &'static str {
        if self.mod_php {
            "prefork MPM + mod_php, a child per client"
        } else {
            "event MPM, 1 child × threads"
        }
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
        if self.mod_php {
            launch_mod_php(c)
        } else {
            launch(c)
        }
    }
    fn tls(&self, _program: &Path) -> Result<(), String> {
        let ssl = Path::new(MODULE_DIR).join("mod_ssl.so");
        if ssl.is_file() {
            Ok(())
        } else {
            Err(format!("{NO_TLS}: {MODULE_DIR} has no mod_ssl.so"))
        }
    }
    /// mod_http2 under both MPMs; under prefork (apache-modphp) it answers ALPN h2 with http/1.1
    /// (h2c it takes), which the h2 check finds.
    fn h2(&self) -> Result<(), String> {
        Ok(())
    }
    fn h3(&self, _program: &Path) -> Result<(), String> {
        Err(format!(
            "{}: Apache httpd has no HTTP/3 module (HTTP/1.1 and HTTP/2 only)",
            crate::h3::NO_H3
        ))
    }
    fn php(&self) -> Php {
        if self.mod_php {
            Php::InProcess {
                inside: "apache's prefork children (mod_php)",
            }
        } else {
            Php::Fpm
        }
    }
}

fn launch(c: &Ctx) -> Launch {
    // One child: ThreadsPerChild is every thread it has, and with the event MPM a child takes
    // ThreadsPerChild + AsyncRequestWorkerFactor × idle threads connections, so threads ≥ the largest
    // level leave no connection waiting on the config.
    let threads = c.limits.workers();
    let mpm = format!(
        "LoadModule mpm_event_module {MODULE_DIR}/mod_mpm_event.so\n\
         StartServers 1\nServerLimit 1\nThreadLimit {threads}\nThreadsPerChild {threads}\n\
         MaxRequestWorkers {threads}\nMinSpareThreads 1\nMaxSpareThreads {threads}\n"
    );
    // `.php` files to PHP-FPM: the handler set on them, as the Apache documentation's example does.
    let php = c.php.as_ref().map(|p| {
        let lines = format!(
            "DirectoryIndex index.php index.html\n\
             <FilesMatch \"\\.php$\">\n  SetHandler \"proxy:unix:{sock}|fcgi://localhost\"\n</FilesMatch>\n\
             AddOutputFilterByType DEFLATE text/html\n",
            sock = p.socket
        );
        (FPM_MODULES, lines)
    });
    config(c, &mpm, php)
}

/// Prefork: mod_php is not thread-safe. Every child is started at once and kept, one per client of
/// the largest level (as the event row's threads), so no child is forked under load.
fn launch_mod_php(c: &Ctx) -> Launch {
    let n = c.limits.workers();
    let mpm = format!(
        "LoadModule mpm_prefork_module {MODULE_DIR}/mod_mpm_prefork.so\n\
         StartServers {n}\nServerLimit {n}\nMaxRequestWorkers {n}\n\
         MinSpareServers {n}\nMaxSpareServers {n}\n"
    );
    let php = "DirectoryIndex index.php index.html\n\
               <FilesMatch \"\\.php$\">\n  SetHandler application/x-httpd-php\n</FilesMatch>\n\
               AddOutputFilterByType DEFLATE text/html\n";
    config(c, &mpm, Some((MOD_PHP_MODULES, php.to_string())))
}

/// The config shared by both rows: `mpm` loads and sizes the MPM; `php` adds modules and lines.
fn config(
    c: &Ctx,
    mpm: &str,
    php: Option<(&'static [(&'static str, &'static str)], String)>,
) -> Launch {
    let (d, wd, l) = (&c.d, &c.wd, &c.limits);
    let (php_modules, php_lines) = php.unwrap_or((&[], String::new()));
    let modules: String = MODULES
        .iter()
        .chain(c.tls.map_or(&[][..], |_| TLS_MODULES))
        .chain(if c.h2 { H2_MODULES } else { &[] })
        .chain(php_modules)
        .map(|(n, f)| format!("LoadModule {n}_module {MODULE_DIR}/{f}.so\n"))
        .collect();
    let types: String = mime_types()
        .map(|(e, t)| format!("AddType {t} .{e}\n"))
        .collect();
    let user = c
        .worker
        .map(|w| format!("User {}\nGroup {}\n", w.name, w.group))
        .unwrap_or_default();
    let (docroot, chrootline, cgi_dir) = if c.chroot {
        (
            "/".to_string(),
            format!("ChrootDir {d}\n"),
            "/cgi-bin/".to_string(),
        )
    } else {
        (d.clone(), String::new(), format!("{d}/cgi-bin/"))
    };
    let index = if php_lines.is_empty() {
        "DirectoryIndex index.html\n"
    } else {
        ""
    };
    let conf = format!(
        "ServerRoot {wd}\nServerName 127.0.0.1\nListen 127.0.0.1:{port}\nListenBacklog {backlog}\n\
         PidFile {wd}/apache2.pid\nErrorLog {wd}/error.log\nLogLevel warn\nDefaultRuntimeDir {wd}\n\
         ScriptSock {wd}/cgid.sock\n{mpm}{modules}TypesConfig /dev/null\n{user}{chrootline}\
         MaxConnectionsPerChild 0\n\
         KeepAlive On\nMaxKeepAliveRequests 0\nKeepAliveTimeout {KEEPALIVE_TIMEOUT_SECS}\n\
         EnableSendfile On\nEnableMMAP On\n\
         {tls}{h2}{types}DocumentRoot {docroot}\n{index}{php_lines}\
         <Directory />\n  Require all granted\n  AllowOverride None\n</Directory>\n\
         ScriptAlias /cgi-bin/ {cgi_dir}\n\
         <Location /lab/private/>\n  AuthType Basic\n  AuthName lab\n  AuthUserFile {wd}/htpasswd\n  Require valid-user\n</Location>\n\
         <Location /lab/throttled/>\n  SetOutputFilter RATE_LIMIT\n  SetEnv rate-limit {THROTTLE_KIB_PER_SEC}\n</Location>\n",
        port = c.port,
        backlog = l.backlog(),
        tls = tls_settings(c),
        h2 = h2_settings(c),
    );
    Launch {
        files: vec![("apache2.conf".into(), conf)],
        args: vec![
            "-f".into(),
            format!("{wd}/apache2.conf"),
            "-DFOREGROUND".into(),
        ],
        ..Default::default()
    }
}

/// mod_http2 on the one listener: h2 by ALPN over TLS, or h2c by prior knowledge (`H2Direct`) on
/// the plain port, HTTP/1.1 beside it either way; the shared stream limit.
fn h2_settings(c: &Ctx) -> String {
    if !c.h2 {
        return String::new();
    }
    let protocols = if c.tls.is_some() {
        "h2 http/1.1"
    } else {
        "h2c http/1.1\nH2Direct on"
    };
    format!(
        "Protocols {protocols}\nH2MaxSessionStreams {}\n",
        h2::MAX_CONCURRENT_STREAMS
    )
}

/// mod_ssl on the one listener: the lab's certificate, TLS 1.2 and 1.3 (or the one asked for) with the shared cipher
/// preference, a shared-memory session cache (the one child's threads share it) and tickets.
fn tls_settings(c: &Ctx) -> String {
    let Some(cert) = c.tls else {
        return String::new();
    };
    format!(
        "SSLEngine on\nSSLCertificateFile {crt}\nSSLCertificateKeyFile {key}\n\
         SSLProtocol -all {versions}\nSSLHonorCipherOrder on\n\
         SSLCipherSuite {ciphers}\nSSLCipherSuite TLSv1.3 {suites}\n\
         SSLSessionCache shmcb:{wd}/ssl_scache(1048576)\nSSLSessionCacheTimeout {t}\nSSLSessionTickets on\n",
        crt = cert.cert_file().display(),
        key = cert.key_file().display(),
        versions = c
            .tls_versions
            .openssl_names()
            .iter()
            .map(|v| format!("+{v}"))
            .collect::<Vec<_>>()
            .join(" "),
        ciphers = ciphers::openssl_ciphers(),
        suites = ciphers::openssl_suites(),
        wd = c.wd,
        t = ciphers::SESSION_TIMEOUT_SECS,
    )
}
