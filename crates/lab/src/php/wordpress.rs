//! The `wordpress` workload's site: Debian's `wordpress` package laid out in the lab's docroot (its
//! top-level scripts copied, so WordPress finds the lab's own `wp-config.php` beside them; `wp-admin`
//! and `wp-includes` linked to the package; a `wp-content` of the lab's with the package's
//! twentytwentyone theme linked in, and `lean.php` as a must-use plugin), installed without a browser by php-cli (`wp.php`), then filled
//! with generated posts until the index page is about `TARGET_BYTES`.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::mariadb::{DATABASE, PASSWORD, USER};
use crate::programs::require;

/// Where Debian's package puts WordPress, and the theme the lab uses (a classic PHP theme, as the
/// seed's WordPress 2.7 default was).
pub const PACKAGE_DIR: &str = "/usr/share/wordpress";
pub const THEME: &str = "twentytwentyone";
pub const THEME_PACKAGE: &str = "wordpress-theme-twentytwentyone";
/// The seed's index page: "approximately a 20k index page".
pub const TARGET_BYTES: usize = 20 * 1024;

const SCRIPT: &str = include_str!("wp.php");
/// The lab's must-use plugin: the page without WordPress 6's inline styles, SVG filters and emoji.
const LEAN: &str = include_str!("lean.php");

/// The installed site.
#[derive(Clone, Debug)]
pub struct Site {
    /// Posts generated, all on the index page.
    pub posts: usize,
    /// The index page's size as php-cli rendered it for `127.0.0.1:PORT` (five digits).
    pub page_bytes: usize,
}

/// The lab's `wp-config.php`: the private MariaDB's socket, fixed keys (a lab site, rebuilt every
/// run), the site's URL from the request's Host (each server has its own port), and nothing that
/// makes a page load reach out: no WP-Cron spawned by visits, no updates, no outside HTTP.
fn config(db_socket: &Path) -> String {
    let keys: String = [
        "AUTH_KEY",
        "SECURE_AUTH_KEY",
        "LOGGED_IN_KEY",
        "NONCE_KEY",
        "AUTH_SALT",
        "SECURE_AUTH_SALT",
        "LOGGED_IN_SALT",
        "NONCE_SALT",
    ]
    .iter()
    .map(|k| format!("define('{k}', 'webstand-lab-{k}');\n"))
    .collect();
    format!(
        "<?php\n// Written by webstand's lab for its private WordPress.\n\
         define('DB_NAME', '{DATABASE}');\ndefine('DB_USER', '{USER}');\ndefine('DB_PASSWORD', '{PASSWORD}');\n\
         define('DB_HOST', 'localhost:{sock}');\ndefine('DB_CHARSET', 'utf8mb4');\ndefine('DB_COLLATE', '');\n\
         {keys}$table_prefix = 'wp_';\n\
         $lab_host = preg_replace('/[^0-9A-Za-z.:\\[\\]-]/', '', $_SERVER['HTTP_HOST'] ?? '127.0.0.1');\n\
         define('WP_HOME', 'http://' . $lab_host);\ndefine('WP_SITEURL', 'http://' . $lab_host);\n\
         define('DISABLE_WP_CRON', true);\ndefine('AUTOMATIC_UPDATER_DISABLED', true);\n\
         define('WP_HTTP_BLOCK_EXTERNAL', true);\ndefine('WP_DEBUG', false);\n\
         if (!defined('ABSPATH')) {{ define('ABSPATH', __DIR__ . '/'); }}\n\
         require_once ABSPATH . 'wp-settings.php';\n",
        sock = db_socket.display()
    )
}

/// Lays the site out in `docroot` (see the module's doc). Missing packages are one line each.
pub fn lay_out(docroot: &Path, db_socket: &Path) -> Result<()> {
    let package = Path::new(PACKAGE_DIR);
    let theme = package.join("wp-content/themes").join(THEME);
    if !package.join("wp-settings.php").is_file() {
        bail!("wordpress: not installed (apt-get install wordpress, or scripts/install-deps.sh)");
    }
    if !theme.join("style.css").is_file() {
        bail!("wordpress theme {THEME}: not installed (apt-get install {THEME_PACKAGE}, or scripts/install-deps.sh)");
    }
    let io = |what: &Path| format!("cannot lay out WordPress at {}", what.display());
    for entry in std::fs::read_dir(package).with_context(|| io(package))? {
        let entry = entry?;
        let name = entry.file_name();
        let to = docroot.join(&name);
        match name.to_str() {
            Some("wp-config.php" | ".htaccess" | "wp-content") => {}
            Some("wp-admin" | "wp-includes") => {
                std::os::unix::fs::symlink(entry.path(), &to).with_context(|| io(&to))?
            }
            _ if entry.file_type()?.is_file() => {
                std::fs::copy(entry.path(), &to).with_context(|| io(&to))?;
            }
            _ => {}
        }
    }
    let content = docroot.join("wp-content");
    for sub in ["themes", "plugins", "uploads", "mu-plugins"] {
        std::fs::create_dir_all(content.join(sub)).with_context(|| io(&content))?;
    }
    std::fs::write(content.join("mu-plugins/webstand-lab.php"), LEAN)
        .with_context(|| io(&content))?;
    let link = content.join("themes").join(THEME);
    std::os::unix::fs::symlink(&theme, &link).with_context(|| io(&link))?;
    std::fs::write(docroot.join("wp-config.php"), config(db_socket))
        .with_context(|| io(docroot))?;
    Ok(())
}

/// php-cli running the lab's script on the site, as the servers' worker user when the lab is root
/// (WordPress's code needs no more than its pages get).
struct Cli {
    php: PathBuf,
    script: PathBuf,
    site: PathBuf,
}

impl Cli {
    fn run(&self, args: &[&str]) -> Result<Vec<u8>> {
        let mut cmd = Command::new(&self.php);
        if let Some(w) = crate::users::worker() {
            std::os::unix::process::CommandExt::uid(&mut cmd, w.uid);
            std::os::unix::process::CommandExt::gid(&mut cmd, w.gid);
        }
        let out = cmd
            .arg(&self.script)
            .arg(&self.site)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", self.php.display()))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let why = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            bail!("WordPress {}: php exited {}: {why}", args[0], out.status);
        }
        Ok(out.stdout)
    }

    fn page_bytes(&self) -> Result<usize> {
        let page = self.run(&["render", "127.0.0.1:65535"])?;
        if !page.windows(7).any(|w| w == b"</html>") {
            bail!(
                "WordPress's index page is not a whole page ({} bytes)",
                page.len()
            );
        }
        Ok(page.len())
    }
}

/// Installs WordPress on the site `lay_out` wrote (its database must be up), then adds posts until
/// the index page is about `target` bytes: it renders the page with one post and with two, and adds
/// as many as the difference says are needed, all shown on the index page.
pub fn install(docroot: &Path, labdir: &Path, target: usize) -> Result<Site> {
    let php = require("php", "php8.2-cli")?;
    let script = labdir.join("wp.php");
    std::fs::write(&script, SCRIPT)?;
    let cli = Cli {
        php,
        script,
        site: docroot.to_path_buf(),
    };
    cli.run(&["install", THEME])?;
    cli.run(&["posts", "0", "1"])?;
    let one = cli.page_bytes()?;
    cli.run(&["posts", "1", "1"])?;
    let two = cli.page_bytes()?;
    let per_post = two.saturating_sub(one).max(1);
    let base = one.saturating_sub(per_post);
    let posts = (target.saturating_sub(base))
        .div_ceil(per_post)
        .clamp(2, 200);
    cli.run(&["posts", "2", &(posts - 2).to_string()])?;
    cli.run(&["per-page", &posts.to_string()])?;
    let page_bytes = cli.page_bytes()?;
    Ok(Site { posts, page_bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_points_at_the_private_socket_and_blocks_outside_http() {
        let c = config(Path::new("/tmp/lab/mariadb.sock"));
        assert!(
            c.contains("define('DB_HOST', 'localhost:/tmp/lab/mariadb.sock');"),
            "{c}"
        );
        assert!(c.contains("define('WP_HTTP_BLOCK_EXTERNAL', true);"), "{c}");
        assert!(c.contains("define('DISABLE_WP_CRON', true);"), "{c}");
    }
}
