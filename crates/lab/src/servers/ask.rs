//! Asking a server's binary about its build: what `program ARGS` answers (its version banner, its
//! modules, its options), and whether that answer names what a feature needs. Every kind asks
//! through here: for its version (`binary.rs`) and for TLS, HTTP/2 or HTTP/3 (its own file).

use std::path::Path;
use std::process::{Command, Stdio};

/// What `program ARGS` prints on stdout and stderr (empty when it cannot run).
pub fn output_of(program: &Path, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map(|o| {
            let mut t = String::from_utf8_lossy(&o.stdout).into_owned();
            t.push_str(&String::from_utf8_lossy(&o.stderr));
            t
        })
        .unwrap_or_default()
}

/// Whether the build at `program` names `marker` (a module, an option, a library) when asked
/// with `args` ("-V" for nginx's modules, "serve --help" for webstand's options).
pub fn has(program: &Path, args: &[&str], marker: &str) -> bool {
    output_of(program, args).contains(marker)
}

/// Ok when the build at `program` names `marker` when asked with `args`; else `refusal`, the one
/// line saying why not ("no TLS: nginx's build has no http_ssl_module").
pub fn requires(
    program: &Path,
    args: &[&str],
    marker: &str,
    refusal: impl FnOnce() -> String,
) -> Result<(), String> {
    if has(program, args, marker) {
        Ok(())
    } else {
        Err(refusal())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::find_program;

    #[test]
    fn a_build_is_asked_by_what_it_prints() {
        let sh = find_program("sh").expect("sh");
        let args = ["-c", "echo built with http_ssl_module >&2"];
        assert!(has(&sh, &args, "http_ssl_module"));
        assert_eq!(
            requires(&sh, &args, "http_ssl_module", || "no".into()),
            Ok(())
        );
        assert_eq!(
            requires(&sh, &args, "http_v3_module", || "no TLS: none".into()),
            Err("no TLS: none".to_string())
        );
        // A program that cannot run answers nothing: the refusal, not a panic.
        let missing = Path::new("/nonexistent/server");
        assert_eq!(output_of(missing, &["-V"]), "");
        assert_eq!(
            requires(missing, &["-V"], "nginx", || "no TLS: not here".into()),
            Err("no TLS: not here".to_string())
        );
    }
}
