//! Prose lines fitted to the terminal reports' width: a long line is wrapped at word boundaries,
//! its continuation lines indented under its text, so that no line of a report passes
//! [`REPORT_WIDTH`] columns (tables are laid out to fit it; the sentences around them wrap).

/// The widest line a report prints, in columns.
pub const REPORT_WIDTH: usize = 120;

/// `text` with every line longer than [`REPORT_WIDTH`] wrapped: the continuation lines start under
/// the line's text (past its indent and a leading "- "). A word longer than the width is left
/// whole (a URL or a path is never cut). Shorter lines, and the line ends, are kept as they are.
pub fn wrap(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        if textwrap::core::display_width(body) <= REPORT_WIDTH {
            out.push_str(line);
            continue;
        }
        let indent = body.len() - body.trim_start().len();
        let hang = indent
            + if body[indent..].starts_with("- ") {
                2
            } else {
                4
            };
        let rest = " ".repeat(hang);
        let options = textwrap::Options::new(REPORT_WIDTH)
            .subsequent_indent(&rest)
            .break_words(false);
        out.push_str(&textwrap::fill(body, options));
        out.push_str(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_under_their_text_and_short_ones_stay() {
        let long = format!("    - {}: do this", "evidence ".repeat(30).trim_end());
        let text = format!("short line\n{long}\nlast");
        let wrapped = wrap(&text);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert_eq!(lines[0], "short line");
        assert!(lines[1].starts_with("    - evidence"), "{wrapped}");
        assert!(lines[2].starts_with("      evidence"), "{wrapped}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= REPORT_WIDTH),
            "{wrapped}"
        );
        assert_eq!(*lines.last().unwrap(), "last");
        assert_eq!(
            wrapped.split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>(),
            "no word lost or cut"
        );
        assert_eq!(wrap("a\n"), "a\n");
    }
}
