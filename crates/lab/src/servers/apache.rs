//! apache2 with a self-contained config: explicit `LoadModule` lines, the event MPM with one child
//! whose threads cover the largest level, CGI by its own mod_cgid, PHP passed to PHP-FPM by
//! mod_proxy_fcgi. `apache-modphp` is the same config on the prefork MPM with mod_php (seed 004's
//! Apache): a child per client of the largest level, PHP run inside them.

use super::config::{mime_types, Ctx, Launch};
use super::Profile;
use crate::limits::KEEPALIVE_TIMEOUT_SECS;
use crate::servers::THROTTLE_KIB_PER_SEC;
use crate::{h2, tls};

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

pub(super) const PROFILE: Profile = Profile {
    name: "apache",
    aliases: &["apache2", "httpd"],
    package: "apache2",
    binaries: &["apache2", "httpd"],
    version_flag: "-v",
    model: "event MPM, 1 child × threads",
    keeps_alive: true,
    cgi_by_fcgiwrap: false,
    configures: (true, true, true),
    launch,
};

/// mod_ssl and the shared-memory session cache it keeps sessions in.
const TLS_MODULES: &[(&str, &str)] = &[("ssl", "mod_ssl"), ("socache_shmcb", "mod_socache_shmcb")];

/// mod_http2, for `compare --h2` (the event MPM's threads serve its streams).
const H2_MODULES: &[(&str, &str)] = &[("http2", "mod_http2")];

/// mod_php's module, from `libapache2-mod-php8.2`.
pub const MOD_PHP: &str = "/usr/lib/apache2/modules/libphp8.2.so";

pub(super) const PROFILE_MOD_PHP: Profile = Profile {
    name: "apache-modphp",
    aliases: &["apache-mod-php", "mod_php"],
    package: "libapache2-mod-php8.2",
    binaries: &["apache2", "httpd"],
    version_flag: "-v",
    model: "prefork MPM + mod_php, a child per client",
    keeps_alive: true,
    cgi_by_fcgiwrap: false,
    configures: (true, true, true),
    launch: launch_mod_php,
};

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
    let php = c.php.as_ref().map(|p| p.apache_fcgi());
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
    config(c, &mpm, Some(crate::php::pass::apache_mod_php()))
}

const MODULE_DIR: &str = "/usr/lib/apache2/modules";

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

/// mod_ssl on the one listener: the lab's certificate, TLS 1.2 and 1.3 with the shared cipher
/// preference, a shared-memory session cache (the one child's threads share it) and tickets.
fn tls_settings(c: &Ctx) -> String {
    let Some(cert) = c.tls else {
        return String::new();
    };
    format!(
        "SSLEngine on\nSSLCertificateFile {crt}\nSSLCertificateKeyFile {key}\n\
         SSLProtocol -all +TLSv1.2 +TLSv1.3\nSSLHonorCipherOrder on\n\
         SSLCipherSuite {ciphers}\nSSLCipherSuite TLSv1.3 {suites}\n\
         SSLSessionCache shmcb:{wd}/ssl_scache(1048576)\nSSLSessionCacheTimeout {t}\nSSLSessionTickets on\n",
        crt = cert.cert_file().display(),
        key = cert.key_file().display(),
        ciphers = tls::openssl_ciphers(),
        suites = tls::openssl_suites(),
        wd = c.wd,
        t = tls::SESSION_TIMEOUT_SECS,
    )
}
