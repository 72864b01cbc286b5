//! nginx: master + one worker in the foreground, everything under its own prefix; CGI through
//! fcgiwrap as Debian's fcgiwrap example sets it up, PHP through PHP-FPM as Debian's
//! snippets/fastcgi-php.conf does, both with the lab's own FastCGI parameters.

use std::path::Path;

use super::ask::{has, requires};
use super::config::{mime_types, Ctx, Launch};
use super::kind::{Cgi, Configures, Php, ServerKind};
use super::lab_files::THROTTLE_KIB_PER_SEC;
use crate::h2::{self, Mode};
use crate::h3::NO_H3;
use crate::limits::{KEEPALIVE_TIMEOUT_SECS, OPEN_FILE_CACHE};
use crate::tls::ciphers;
use webstand_results::H2Note;

pub struct Nginx;

impl ServerKind for Nginx {
    fn name(&self) -> &'static str {
        "nginx"
    }
    fn package(&self) -> &'static str {
        "nginx-light"
    }
    fn binaries(&self) -> &'static [&'static str] {
        &["nginx"]
    }
    fn model(&self) -> &'static str {
        "epoll, master + 1 worker"
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
        requires(program, &["-V"], "http_ssl_module", || {
            format!(
                "{}: nginx's build has no http_ssl_module",
                webstand_results::comparison::NO_TLS
            )
        })
    }
    fn h2(&self) -> Result<(), String> {
        Ok(())
    }
    fn h2_notes(&self, mode: Mode) -> Vec<H2Note> {
        match mode {
            Mode::Cleartext => vec![H2Note::H2cOnly {
                server: "nginx 1.22".into(),
            }],
            Mode::Alpn => Vec::new(),
        }
    }
    /// Debian's 1.22 predates QUIC (ngx_http_v3_module came in 1.25).
    fn h3(&self, program: &Path) -> Result<(), String> {
        if has(program, &["-V"], "http_v3_module") {
            Err(format!("{NO_H3}: the lab configures no QUIC for nginx"))
        } else {
            Err(format!(
                "{NO_H3}: this nginx has no http_v3_module (HTTP/3 came in nginx 1.25)"
            ))
        }
    }
    fn php(&self) -> Php {
        Php::Fpm
    }
}

/// The FastCGI parameters of CGI and PHP requests: Debian's fastcgi_params but for HTTP_HOST,
/// which Debian's sets to `$host` (the name without its port); here it is the Host field as the
/// client sent it (nginx passes every header field as HTTP_*), as every other server passes it, so
/// pages that build links from it (WordPress) link to the server's own port.
const FASTCGI_PARAMS: &str = "fastcgi_param QUERY_STRING $query_string; \
     fastcgi_param REQUEST_METHOD $request_method; fastcgi_param CONTENT_TYPE $content_type; \
     fastcgi_param CONTENT_LENGTH $content_length; fastcgi_param SCRIPT_NAME $fastcgi_script_name; \
     fastcgi_param REQUEST_URI $request_uri; fastcgi_param DOCUMENT_URI $document_uri; \
     fastcgi_param DOCUMENT_ROOT $document_root; fastcgi_param SERVER_PROTOCOL $server_protocol; \
     fastcgi_param REQUEST_SCHEME $scheme; fastcgi_param HTTPS $https if_not_empty; \
     fastcgi_param GATEWAY_INTERFACE CGI/1.1; fastcgi_param SERVER_SOFTWARE nginx/$nginx_version; \
     fastcgi_param REMOTE_ADDR $remote_addr; fastcgi_param REMOTE_PORT $remote_port; \
     fastcgi_param REMOTE_USER $remote_user; fastcgi_param SERVER_ADDR $server_addr; \
     fastcgi_param SERVER_PORT $server_port; fastcgi_param SERVER_NAME $server_name; \
     fastcgi_param REDIRECT_STATUS 200; \
     fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;";

fn launch(c: &Ctx) -> Launch {
    let (d, wd, l) = (&c.d, &c.wd, &c.limits);
    let types: String = mime_types().map(|(e, t)| format!("{t} {e}; ")).collect();
    let cgi = match &c.bridge {
        Some(b) => format!(
            "    location /cgi-bin/ {{ fastcgi_pass unix:{sock}; {FASTCGI_PARAMS} }}\n",
            sock = b.socket
        ),
        None => String::new(),
    };
    // Inside `server {}`: the index, gzip for HTML, `.php` files that exist to PHP-FPM.
    let php = match &c.php {
        Some(p) => format!(
            "    index index.php index.html;\n    gzip on; gzip_types text/html; gzip_min_length 256;\n    \
             location ~ \\.php$ {{ try_files $uri =404; fastcgi_pass unix:{sock}; {FASTCGI_PARAMS} }}\n",
            sock = p.socket
        ),
        None => String::new(),
    };
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

/// The server block's TLS lines: the lab's certificate, TLS 1.2 and 1.3 (or the one asked for) with the shared cipher
/// preference, a session cache shared by the workers and session tickets.
fn tls_settings(c: &Ctx) -> String {
    let Some(cert) = c.tls else {
        return String::new();
    };
    format!(
        "    ssl_certificate {crt}; ssl_certificate_key {key};\n    \
         ssl_protocols {versions}; ssl_prefer_server_ciphers on;\n    \
         ssl_ciphers {ciphers}; ssl_conf_command Ciphersuites {suites};\n    \
         ssl_session_cache shared:lab:10m; ssl_session_timeout {t}s; ssl_session_tickets on;\n",
        crt = cert.cert_file().display(),
        key = cert.key_file().display(),
        versions = c.tls_versions.openssl_names().join(" "),
        ciphers = ciphers::openssl_ciphers(),
        suites = ciphers::openssl_suites(),
        t = ciphers::SESSION_TIMEOUT_SECS,
    )
}
