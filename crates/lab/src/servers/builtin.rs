//! `webstand serve`: one event loop, everything in its TOML config. `cached` off is the
//! `builtin-nocache` row: no file bytes in memory, every file sent from a cached descriptor with
//! sendfile (the path nginx takes with `open_file_cache`).

use super::config::{Ctx, Launch};
use super::Profile;
use crate::limits::KEEPALIVE_TIMEOUT_SECS;
use crate::servers::THROTTLE_KIB_PER_SEC;

/// Files up to this size are served from memory with ready-made headers (`webstand serve`'s
/// default, written out so the saved config shows it).
pub const CACHE_FILE_MAX: u64 = 64 << 10;

pub(super) const PROFILE: Profile = Profile {
    name: "builtin",
    aliases: &["webstand"],
    package: "webstand",
    binaries: &["webstand"],
    version_flag: "--version",
    model: "epoll, 1 thread",
    keeps_alive: true,
    cgi_by_fcgiwrap: false,
    configures: (true, true, true),
    launch: launch_cached,
};

pub(super) const PROFILE_NOCACHE: Profile = Profile {
    name: "builtin-nocache",
    aliases: &[],
    package: "webstand",
    binaries: &["webstand"],
    version_flag: "--version",
    model: "epoll, 1 thread, no file cache",
    keeps_alive: true,
    cgi_by_fcgiwrap: false,
    configures: (true, true, true),
    launch: launch_uncached,
};

fn launch_cached(c: &Ctx) -> Launch {
    launch(c, true)
}

fn launch_uncached(c: &Ctx) -> Launch {
    launch(c, false)
}

fn launch(c: &Ctx, cached: bool) -> Launch {
    let q = |p: &str| p.replace('\\', "\\\\").replace('"', "\\\"");
    // With the lab's certificate the one port is HTTPS (`listen_tls` alone: no plain listener).
    let listen = match c.tls {
        None => format!("listen = \"127.0.0.1:{}\"\n", c.port),
        Some(cert) => format!(
            "listen_tls = \"127.0.0.1:{}\"\ntls_cert = \"{}\"\ntls_key = \"{}\"\n",
            c.port,
            q(&cert.cert_file().display().to_string()),
            q(&cert.key_file().display().to_string())
        ),
    };
    let mut conf = format!(
        "root = \"{root}\"\n{listen}threads = 1\n\
         idle_timeout = \"{KEEPALIVE_TIMEOUT_SECS}s\"\nbacklog = {backlog}\nmax_connections = {conns}\n",
        root = q(&c.d),
        backlog = c.limits.backlog(),
        conns = c.limits.connections(),
    );
    let cache = if cached { CACHE_FILE_MAX } else { 0 };
    conf.push_str(&format!("cache_file_max = {cache}\n"));
    // As root it binds, reads its files, then runs as the worker user, its CGI programs too.
    if let Some(w) = c.worker {
        conf.push_str(&format!("user = \"{}\"\n", q(&w.name)));
    }
    if let Some(p) = &c.php {
        conf.push_str(&p.builtin());
    }
    if c.chroot {
        conf.push_str(&format!("chroot = \"{}\"\n", q(&c.d)));
    } else {
        conf.push_str(&format!(
            "cgi = [\"/cgi-bin/*\"]\nthrottle = [\"/lab/throttled/* {bps}\"]\n\n[[auth]]\nprefix = \"/lab/private/\"\nhtpasswd = \"{file}\"\nrealm = \"lab\"\n",
            bps = THROTTLE_KIB_PER_SEC * 1024,
            file = q(&format!("{}/htpasswd.bcrypt", c.wd)),
        ));
    }
    let mut args = vec![
        "serve".into(),
        "--config".into(),
        format!("{}/serve.toml", c.wd),
    ];
    // HTTP/2: over TLS `serve` negotiates h2 by ALPN itself; on the plain port it takes h2c by
    // prior knowledge when told (`crate::h2::support` checks its build has the flag).
    if c.h2 && c.tls.is_none() {
        args.push("--h2c".into());
    }
    Launch {
        files: vec![("serve.toml".into(), conf)],
        args,
        ..Default::default()
    }
}
