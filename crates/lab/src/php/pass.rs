//! How each server passes `.php` to the lab's PHP-FPM, and compresses HTML, in its own config
//! language: the lines a server's config adds when a comparison runs a PHP workload. Every server
//! gets the same: `index.php` before `index.html` as the directory index, `*.php` that exist as files
//! to FastCGI on PHP-FPM's Unix socket with SCRIPT_FILENAME under the docroot, and gzip for
//! `text/html` to clients that accept it (the seed's "compression was enabled"). Apache's mod_php
//! row runs PHP inside its prefork children instead (`apache_mod_php`). docs/LAB-CONFIGS.md says
//! which upstream documentation each follows.

/// What a server's config needs to pass PHP on.
#[derive(Clone, Debug)]
pub struct Pass {
    /// PHP-FPM's socket (absolute path).
    pub socket: String,
    /// PHP-FPM's workers: the most connections worth opening to it.
    pub children: usize,
}

impl Pass {
    /// nginx (inside `server {}`): `fastcgi_pass` as Debian's snippets/fastcgi-php.conf does it.
    pub fn nginx(&self) -> String {
        format!(
            "    index index.php index.html;\n    gzip on; gzip_types text/html; gzip_min_length 256;\n    \
             location ~ \\.php$ {{ try_files $uri =404; fastcgi_pass unix:{sock}; \
             include /etc/nginx/fastcgi_params; \
             fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name; }}\n",
            sock = self.socket
        )
    }

    /// lighttpd: mod_fastcgi (built in) and mod_deflate (`lighttpd-mod-deflate`); the modules to
    /// add to `server.modules`, and the settings.
    pub fn lighttpd(&self) -> (&'static [&'static str], String) {
        (
            &["mod_fastcgi", "mod_deflate"],
            format!(
                "index-file.names = (\"index.php\", \"index.html\")\n\
                 fastcgi.server = (\".php\" => ((\"socket\" => \"{sock}\", \"check-local\" => \"enable\", \
                 \"broken-scriptfilename\" => \"enable\")))\n\
                 deflate.mimetypes = (\"text/html\")\ndeflate.allowed-encodings = (\"gzip\")\n",
                sock = self.socket
            ),
        )
    }

    /// apache with the event MPM: mod_proxy_fcgi, the handler set on `.php` files as the Apache
    /// documentation's PHP-FPM example does; mod_deflate for HTML. (Modules, settings.)
    pub fn apache_fcgi(&self) -> (&'static [(&'static str, &'static str)], String) {
        (
            &[
                ("proxy", "mod_proxy"),
                ("proxy_fcgi", "mod_proxy_fcgi"),
                ("filter", "mod_filter"),
                ("deflate", "mod_deflate"),
            ],
            format!(
                "DirectoryIndex index.php index.html\n\
                 <FilesMatch \"\\.php$\">\n  SetHandler \"proxy:unix:{sock}|fcgi://localhost\"\n</FilesMatch>\n\
                 AddOutputFilterByType DEFLATE text/html\n",
                sock = self.socket
            ),
        )
    }

    /// h2o: a custom handler for the `.php` extension over `fastcgi.connect`, and `compress`.
    /// (Lines under the default host's `/` path, indented for it.)
    pub fn h2o(&self) -> String {
        format!(
            "        file.index: ['index.php', 'index.html']\n        compress: ON\n        \
             file.custom-handler:\n          extension: .php\n          fastcgi.connect:\n            \
             port: {sock}\n            type: unix\n",
            sock = self.socket
        )
    }

    /// caddy: `php_fastcgi` (index.php and the try_files it implies) and `encode gzip`.
    pub fn caddy(&self) -> String {
        format!(
            "  encode gzip\n  php_fastcgi unix/{sock}\n",
            sock = self.socket
        )
    }

    /// `webstand serve`: its `fastcgi` rule, index file, a connection per PHP-FPM worker, and gzip
    /// for the pages (TOML keys).
    pub fn builtin(&self) -> String {
        format!(
            "index = \"index.php\"\nfastcgi = [\"*.php=unix:{sock}\"]\nfastcgi_connections = {n}\nfastcgi_gzip = true\n",
            sock = self.socket,
            n = self.children
        )
    }
}

/// Apache's mod_php row: the prefork MPM (mod_php is not thread-safe) with the PHP module, `.php`
/// handled in the children, and mod_deflate for HTML. (Modules, settings.)
pub fn apache_mod_php() -> (&'static [(&'static str, &'static str)], String) {
    (
        &[
            ("php", "libphp8.2"),
            ("filter", "mod_filter"),
            ("deflate", "mod_deflate"),
        ],
        "DirectoryIndex index.php index.html\n\
         <FilesMatch \"\\.php$\">\n  SetHandler application/x-httpd-php\n</FilesMatch>\n\
         AddOutputFilterByType DEFLATE text/html\n"
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_server_names_the_one_socket() {
        let p = Pass {
            socket: "/tmp/lab/php-fpm.sock".into(),
            children: 4,
        };
        for text in [
            p.nginx(),
            p.lighttpd().1,
            p.apache_fcgi().1,
            p.h2o(),
            p.caddy(),
            p.builtin(),
        ] {
            assert!(text.contains("/tmp/lab/php-fpm.sock"), "{text}");
        }
    }
}
