//! The `php` workload's page: a PHP script that builds about 20 KiB of HTML from loops (no database,
//! no state), and the same bytes built here independently of PHP, so every response's length and
//! SHA-256 are checked against what the script must print.

use sha2::{Digest, Sha256};
use std::path::Path;
use webstand_results::BodyCheck;

/// Where the page is in the docroot, and its URL path.
pub const PATH: &str = "/php/page.php";
/// Rows of the table the script prints (about 20 KiB in all).
const ROWS: u32 = 300;

/// The script: a table of `ROWS` rows, each a number, a multiplicative hash of it and a run of one
/// letter whose length varies, then the sum of the hashes.
pub fn script() -> String {
    format!(
        "<?php\n// webstand's php workload: about 20 KiB of HTML from loops, the same on every request.\n\
         $sum = 0;\n\
         echo \"<!DOCTYPE html>\\n<html><head><title>webstand php page</title></head><body>\\n<table>\\n\";\n\
         for ($i = 0; $i < {ROWS}; $i++) {{\n    \
         $v = ($i * 7919) % 10007;\n    $sum += $v;\n    \
         echo '<tr><td>', $i, '</td><td>', $v, '</td><td>', str_repeat(chr(97 + $i % 26), 8 + $i % 32), \"</td></tr>\\n\";\n\
         }}\n\
         echo \"</table>\\n<p>sum \", $sum, \"</p>\\n</body></html>\\n\";\n"
    )
}

/// What the script prints, built without PHP.
pub fn expected() -> Vec<u8> {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html><head><title>webstand php page</title></head><body>\n<table>\n",
    );
    let mut sum = 0u64;
    for i in 0..ROWS {
        let v = (i as u64 * 7919) % 10007;
        sum += v;
        let letter = char::from(b'a' + (i % 26) as u8);
        let run: String = std::iter::repeat_n(letter, 8 + (i % 32) as usize).collect();
        out.push_str(&format!(
            "<tr><td>{i}</td><td>{v}</td><td>{run}</td></tr>\n"
        ));
    }
    out.push_str(&format!("</table>\n<p>sum {sum}</p>\n</body></html>\n"));
    out.into_bytes()
}

/// The check every response of the page must pass.
pub fn body_check() -> BodyCheck {
    let bytes = expected();
    BodyCheck::Digest {
        len: bytes.len() as u64,
        sha256: Sha256::digest(&bytes).into(),
    }
}

/// Writes the script into `docroot`.
pub fn write(docroot: &Path) -> std::io::Result<()> {
    let file = docroot.join(&PATH[1..]);
    std::fs::create_dir_all(file.parent().expect("PATH has a directory"))?;
    std::fs::write(file, script())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_about_20_kib() {
        let n = expected().len();
        assert!((19 * 1024..=21 * 1024).contains(&n), "{n} bytes");
    }

    #[test]
    fn php_prints_exactly_the_expected_bytes() {
        // php-cli is installed wherever php-fpm is (scripts/install-deps.sh); it must agree.
        let dir = tempfile::tempdir().unwrap();
        write(dir.path()).unwrap();
        let out = std::process::Command::new("php")
            .arg(dir.path().join(&PATH[1..]))
            .output()
            .expect("php (php8.2-cli) must be installed: scripts/install-deps.sh");
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&expected())
        );
    }
}
