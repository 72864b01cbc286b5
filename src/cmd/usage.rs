//! Command-line mistakes answered in one line of our own. An unknown option names itself, the
//! subcommand whose options were read, where they are listed and, for ab's and wrk's options that
//! webstand spells differently or lacks, what to use instead. (clap's own message would suggest
//! `-- -A`, which only turns the option into a URL.) Every other parse error keeps clap's text.

use clap::error::{ContextKind, ContextValue, ErrorKind};

const SUBCOMMANDS: [&str; 11] = [
    "bench", "serve", "fixtures", "sweep", "compare", "probe", "history", "show", "diff", "export",
    "report",
];

/// Prints the error for `e` and returns the exit status (2, as for every usage error); help and
/// version requests print and exit 0 as clap does.
pub fn clap_error(e: clap::Error) -> i32 {
    if e.kind() != ErrorKind::UnknownArgument {
        e.exit();
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        e.exit();
    };
    let arg = arg.split('=').next().unwrap_or(arg).to_string();
    let sub = std::env::args()
        .skip(1)
        .find(|w| SUBCOMMANDS.contains(&w.as_str()));
    let (name, help) = match &sub {
        Some(s) => (format!("`webstand {s}`"), format!("webstand {s} --help")),
        None => ("webstand".to_string(), "webstand --help".to_string()),
    };
    let hint = match sub.as_deref() {
        Some("bench") => bench_hint(&arg).map(|h| format!(" ({h})")),
        _ => None,
    }
    .unwrap_or_default();
    eprintln!(
        "webstand: error: unknown option '{arg}' for {name}{hint}; `{help}` lists the options"
    );
    2
}

/// What to use for an ab or wrk option webstand does not have.
fn bench_hint(arg: &str) -> Option<&'static str> {
    Some(match arg {
        "-f" | "-Z" | "-E" => "ab's TLS options: webstand's load generator speaks http:// only",
        "-G" => "an ab option webstand does not have",
        "--timeout" => "wrk's --timeout: use -s SECONDS",
        "--connections" => "wrk's --connections: use -c N",
        "--header" => "wrk's --header: use -H 'Name: value'",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::bench_hint;

    #[test]
    fn abs_and_wrks_options_point_to_webstands() {
        assert!(bench_hint("-f").unwrap().contains("TLS"));
        assert!(bench_hint("--timeout").unwrap().contains("-s"));
        assert_eq!(bench_hint("--frobnicate"), None);
    }
}
