//! `webstand serve`: one event loop, everything in its TOML config. `cached` off is the
//! `builtin-nocache` row: no file bytes in memory, every file sent from a cached descriptor with
//! sendfile (the path nginx takes with `open_file_cache`).

use std::path::{Path, PathBuf};

use super::ask::{has, requires};
use super::config::{Ctx, Launch};
use super::kind::{Cgi, Configures, Php, ServerKind};
use super::lab_files::THROTTLE_KIB_PER_SEC;
use crate::h2::{Mode, NO_H2};
use crate::h3::NO_H3;
use crate::limits::KEEPALIVE_TIMEOUT_SECS;
use webstand_results::comparison::NO_TLS;
use webstand_results::{Note, TlsNote};

/// Files up to this size are served from memory with ready-made headers (`webstand serve`'s
/// default, written out so the saved config shows it).
pub const CACHE_FILE_MAX: u64 = 64 << 10;

/// How the lab asks a webstand binary what its `serve` has: its options.
const SERVE_HELP: &[&str] = &["serve", "--help"];

/// The webstand binary the lab was given, as `serve` with its file cache (`builtin`) or without
/// (`builtin-nocache`).
pub struct Builtin {
    pub cached: bool,
}

impl ServerKind for Builtin {
    fn name(&self) -> &'static str {
        if self.cached {
            "builtin"
        } else {
            "builtin-nocache"
        }
    }
    fn aliases(&self) -> &'static [&'static str] {
        if self.cached {
            &["webstand"]
        } else {
            &[]
        }
    }
    fn package(&self) -> &'static str {
        "webstand"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["webstand"]
    }
    fn program(&self, webstand: Option<&Path>) -> Option<PathBuf> {
        webstand.map(Path::to_path_buf).filter(|p| p.is_file())
    }
    fn not_found(&self) -> String {
        format!("{}: the webstand binary was not found", self.name())
    }
    fn version_flag(&self) -> &'static str {
        "--version"
    }
    fn model(&self) -> &'static str {
        if self.cached {
            "epoll, 1 thread"
        } else {
            "epoll, 1 thread, no file cache"
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
        launch(c, self.cached)
    }
    fn tls(&self, program: &Path) -> Result<(), String> {
        requires(program, SERVE_HELP, "--listen-tls", || {
            format!("{NO_TLS}: {}'s build has no --listen-tls", self.name())
        })
    }
    fn tls_notes(&self) -> Vec<TlsNote> {
        vec![TlsNote::RustlsOrder]
    }
    fn h2(&self) -> Result<(), String> {
        Ok(())
    }
    /// Over TLS `serve` negotiates h2 by ALPN itself; h2c by prior knowledge needs `--h2c`.
    fn h2_here(&self, program: &Path, mode: Mode) -> Result<(), String> {
        if mode == Mode::Cleartext && !has(program, SERVE_HELP, "--h2c") {
            return Err(format!("{NO_H2}: this webstand's serve has no --h2c"));
        }
        Ok(())
    }
    /// `serve --listen-quic` on the HTTPS port's number, same certificate.
    fn h3(&self, program: &Path) -> Result<(), String> {
        requires(program, SERVE_HELP, "--listen-quic", || {
            format!("{NO_H3}: this webstand's serve has no --listen-quic")
        })
    }
    fn php(&self) -> Php {
        Php::Fpm
    }
    fn file_notes(&self) -> Vec<Note> {
        vec![if self.cached {
            Note::FilesFromMemory {
                up_to_kib: CACHE_FILE_MAX / 1024,
            }
        } else {
            Note::NoFileCache
        }]
    }
}

fn launch(c: &Ctx, cached: bool) -> Launch {
    let q = |p: &str| p.replace('\\', "\\\\").replace('"', "\\\"");
    // With the lab's certificate the one port is HTTPS (`listen_tls` alone: no plain listener).
    let listen = match c.tls {
        None => format!("listen = \"127.0.0.1:{}\"\n", c.port),
        Some(cert) => format!(
            "listen_tls = \"127.0.0.1:{}\"\ntls_cert = \"{}\"\ntls_key = \"{}\"\ntls_protocols = \"{}\"\n",
            c.port,
            q(&cert.cert_file().display().to_string()),
            q(&cert.key_file().display().to_string()),
            c.tls_versions.openssl_names().join(" ")
        ),
    };
    // HTTP/3: QUIC on UDP at the HTTPS port's number, the same certificate.
    let listen = match c.h3 {
        true => format!("{listen}listen_quic = \"127.0.0.1:{}\"\n", c.port),
        false => listen,
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
    // PHP: its `fastcgi` rule, index file, a connection per PHP-FPM worker, gzip for the pages.
    if let Some(p) = &c.php {
        conf.push_str(&format!(
            "index = \"index.php\"\nfastcgi = [\"*.php=unix:{sock}\"]\nfastcgi_connections = {n}\nfastcgi_gzip = true\n",
            sock = p.socket,
            n = p.children
        ));
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
