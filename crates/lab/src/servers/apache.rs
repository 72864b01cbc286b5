//! apache2 with a self-contained config: explicit `LoadModule` lines, the event MPM with one child
//! whose threads cover the largest level, CGI by its own mod_cgid.

use super::config::{worker_user, Ctx, Launch, MIME};
use super::Profile;
use crate::limits::KEEPALIVE_TIMEOUT_SECS;
use crate::servers::THROTTLE_KIB_PER_SEC;

const MODULES: &[(&str, &str)] = &[
    ("mpm_event", "mod_mpm_event"),
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

fn launch(c: &Ctx) -> Launch {
    let (d, wd, l) = (&c.d, &c.wd, &c.limits);
    let m = "/usr/lib/apache2/modules";
    let modules: String = MODULES
        .iter()
        .map(|(n, f)| format!("LoadModule {n}_module {m}/{f}.so\n"))
        .collect();
    let types: String = MIME
        .iter()
        .map(|(e, t)| format!("AddType {t} .{e}\n"))
        .collect();
    let user = if c.root {
        let u = worker_user();
        let g = if u == "nobody" { "nogroup" } else { "www-data" };
        format!("User {u}\nGroup {g}\n")
    } else {
        String::new()
    };
    let (docroot, chrootline, cgi_dir) = if c.chroot {
        (
            "/".to_string(),
            format!("ChrootDir {d}\n"),
            "/cgi-bin/".to_string(),
        )
    } else {
        (d.clone(), String::new(), format!("{d}/cgi-bin/"))
    };
    // One child: ThreadsPerChild is every thread it has, and with the event MPM a child takes
    // ThreadsPerChild + AsyncRequestWorkerFactor × idle threads connections, so threads ≥ the largest
    // level leave no connection waiting on the config.
    let threads = l.workers();
    let conf = format!(
        "ServerRoot {wd}\nServerName 127.0.0.1\nListen 127.0.0.1:{port}\nListenBacklog {backlog}\n\
         PidFile {wd}/apache2.pid\nErrorLog {wd}/error.log\nLogLevel warn\nDefaultRuntimeDir {wd}\n\
         ScriptSock {wd}/cgid.sock\n{modules}TypesConfig /dev/null\n{user}{chrootline}\
         StartServers 1\nServerLimit 1\nThreadLimit {threads}\nThreadsPerChild {threads}\n\
         MaxRequestWorkers {threads}\nMinSpareThreads 1\nMaxSpareThreads {threads}\nMaxConnectionsPerChild 0\n\
         KeepAlive On\nMaxKeepAliveRequests 0\nKeepAliveTimeout {KEEPALIVE_TIMEOUT_SECS}\n\
         EnableSendfile On\nEnableMMAP On\n\
         {types}DocumentRoot {docroot}\nDirectoryIndex index.html\n\
         <Directory />\n  Require all granted\n  AllowOverride None\n</Directory>\n\
         ScriptAlias /cgi-bin/ {cgi_dir}\n\
         <Location /lab/private/>\n  AuthType Basic\n  AuthName lab\n  AuthUserFile {wd}/htpasswd\n  Require valid-user\n</Location>\n\
         <Location /lab/throttled/>\n  SetOutputFilter RATE_LIMIT\n  SetEnv rate-limit {THROTTLE_KIB_PER_SEC}\n</Location>\n",
        port = c.port,
        backlog = l.backlog(),
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
