//! nginx: master + one worker in the foreground, everything under its own prefix; CGI through
//! fcgiwrap as Debian's fcgiwrap example sets it up.

use super::config::{mime_types, Ctx, Launch};
use super::Profile;
use crate::limits::{KEEPALIVE_TIMEOUT_SECS, OPEN_FILE_CACHE};
use crate::servers::THROTTLE_KIB_PER_SEC;
use crate::{h2, tls};

pub(super) const PROFILE: Profile = Profile {
    name: "nginx",
    aliases: &[],
    package: "nginx-light",
    binaries: &["nginx"],
    version_flag: "-v",
    model: "epoll, master + 1 worker",
    keeps_alive: true,
    cgi_by_fcgiwrap: true,
    configures: (true, false, true),
    launch,
};

fn launch(c: &Ctx) -> Launch {
    let (d, wd, l) = (&c.d, &c.wd, &c.limits);
    let types: String = mime_types().map(|(e, t)| format!("{t} {e}; ")).collect();
    let cgi = match &c.bridge {
        Some(b) => format!(
            "    location /cgi-bin/ {{ fastcgi_pass unix:{sock}; include /etc/nginx/fastcgi_params; \
             fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name; }}\n",
            sock = b.socket
        ),
        None => String::new(),
    };
    let php = c.php.as_ref().map(|p| p.nginx()).unwrap_or_default();
    let conf = format!(
        "worker_processes 1;\ndaemon off;\npid {wd}/nginx.pid;\nerror_log {wd}/error.log warn;\n{user}\
         worker_rlimit_nofile {files};\nevents {{ worker_connections {conns}; }}\n\
         http {{\n  access_log off;\n  sendfile on; tcp_nopush off; tcp_nodelay on;\n  \
         keepalive_requests 4294967295; keepalive_timeout {KEEPALIVE_TIMEOUT_SECS}s;\n  \
         open_file_cache max={OPEN_FILE_CACHE};\n  types {{ {types}}}\n  default_type application/octet-stream;\n  \
         client_body_temp_path {wd}/body; proxy_temp_path {wd}/proxy; fastcgi_temp_path {wd}/fastcgi;\n  \
         uwsgi_temp_path {wd}/uwsgi; scgi_temp_path {wd}/scgi;\n  \
         server {{\n    listen 127.0.0.1:{port}{ssl}{http2} backlog={backlog} deferred;\n{tls}{h2}    root {d};\n    \
         location /lab/private/ {{ auth_basic lab; auth_basic_user_file {wd}/htpasswd; }}\n    \
         location /lab/throttled/ {{ limit_rate {THROTTLE_KIB_PER_SEC}k; }}\n{cgi}{php}  }}\n}}\n",
        // As root the master binds, then its worker drops to the worker user.
        user = c
            .worker
            .map(|w| format!("user {} {};\n", w.name, w.group))
            .unwrap_or_default(),
        files = c.files(),
        conns = l.connections(),
        port = c.port,
        backlog = l.backlog(),
        ssl = if c.tls.is_some() { " ssl" } else { "" },
        tls = tls_settings(c),
        // HTTP/2 on the listener: by ALPN beside HTTP/1.1 with ssl; alone (h2c) without, as 1.22
        // takes no HTTP/1.x on a plain http2 port. keepalive_requests and keepalive_timeout cover
        // HTTP/2 connections too (since 1.19.7).
        http2 = if c.h2 { " http2" } else { "" },
        h2 = if c.h2 {
            format!("    http2_max_concurrent_streams {};\n", h2::MAX_CONCURRENT_STREAMS)
        } else {
            String::new()
        },
    );
    Launch {
        files: vec![("nginx.conf".into(), conf)],
        args: vec![
            "-p".into(),
            wd.clone(),
            "-e".into(),
            format!("{wd}/error.log"),
            "-c".into(),
            format!("{wd}/nginx.conf"),
        ],
        ..Default::default()
    }
}

/// The server block's TLS lines: the lab's certificate, TLS 1.2 and 1.3 with the shared cipher
/// preference, a session cache shared by the workers and session tickets.
fn tls_settings(c: &Ctx) -> String {
    let Some(cert) = c.tls else {
        return String::new();
    };
    format!(
        "    ssl_certificate {crt}; ssl_certificate_key {key};\n    \
         ssl_protocols TLSv1.2 TLSv1.3; ssl_prefer_server_ciphers on;\n    \
         ssl_ciphers {ciphers}; ssl_conf_command Ciphersuites {suites};\n    \
         ssl_session_cache shared:lab:10m; ssl_session_timeout {t}s; ssl_session_tickets on;\n",
        crt = cert.cert_file().display(),
        key = cert.key_file().display(),
        ciphers = tls::openssl_ciphers(),
        suites = tls::openssl_suites(),
        t = tls::SESSION_TIMEOUT_SECS,
    )
}
