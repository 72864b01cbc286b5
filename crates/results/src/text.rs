//! Text fitted to the terminal's reports: renderers write whole lines (a paragraph one line, a
//! table as laid out) and [`wrap`], where the text is printed, wraps the long lines at
//! [`REPORT_WIDTH`] columns, at word boundaries, their continuation lines indented under their
//! text; a table laid out wider than that on purpose (its rule of dashes is wider) is kept whole,
//! since a wrapped row would no longer be a row.

/// The widest line a report prints, in columns.
pub const REPORT_WIDTH: usize = 120;

/// `text` with every line longer than [`REPORT_WIDTH`] wrapped: the continuation lines start under
/// the line's text (past its indent and a leading "- "). A word longer than the width is left
/// whole (a URL or a path is never cut). Shorter lines, the lines of a wide table ([`wide_tables`])
/// and the line ends are kept as they are.
pub fn wrap(text: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let keep = wide_tables(&lines);
    let mut out = String::with_capacity(text.len());
    for (line, keep) in lines.iter().zip(keep) {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (*line, ""),
        };
        if keep || textwrap::core::display_width(body) <= REPORT_WIDTH {
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

/// Whether a line of a text table is one of its rows (cells apart by runs of spaces, three gaps or
/// more) rather than prose.
pub fn is_table_row(line: &str) -> bool {
    line.trim()
        .split("  ")
        .filter(|cell| !cell.is_empty())
        .count()
        > 3
}

/// For each line, whether it belongs to a table laid out wider than [`REPORT_WIDTH`]: its rule (a
/// line of dashes that wide), the header above it and the rows under it (up to the first line that
/// is not a row: the notes under a table are prose).
fn wide_tables(lines: &[&str]) -> Vec<bool> {
    let is_wide_rule = |l: &str| {
        let l = l.trim_end();
        l.contains('-')
            && l.chars().all(|c| c == '-' || c == ' ')
            && l.chars().count() > REPORT_WIDTH
    };
    let mut keep = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        if !is_wide_rule(lines[i]) {
            i += 1;
            continue;
        }
        if i > 0 {
            keep[i - 1] = true;
        }
        keep[i] = true;
        i += 1;
        while i < lines.len() && is_table_row(lines[i]) {
            keep[i] = true;
            i += 1;
        }
    }
    keep
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

    #[test]
    fn a_table_laid_out_wider_is_kept_whole_and_the_prose_around_it_wraps() {
        let cell = |s: &str| format!("{s:>16}");
        let row = |name: &str, v: &str| {
            let cells: Vec<String> = (0..8).map(|_| cell(v)).collect();
            format!("{name:<12}  {}", cells.join("  "))
        };
        let header = row("Metric", "server");
        let rule = "-".repeat(12) + &format!("  {}", "-".repeat(16)).repeat(8);
        let note = format!("  caddy: {}", "not installed ".repeat(12).trim_end());
        let prose = "word ".repeat(30).trim_end().to_string();
        let figures = row("Requests", "1234.56 [#/sec]");
        let text = format!("{prose}\nTitle\n{header}\n{rule}\n{figures}\n{note}\n\n{prose}\n");
        let wrapped = wrap(&text);
        for kept in [&header, &rule, &figures] {
            assert!(kept.chars().count() > REPORT_WIDTH);
            assert!(
                wrapped.lines().any(|l| l == kept),
                "{kept} cut in\n{wrapped}"
            );
        }
        let prose_lines = wrapped
            .lines()
            .filter(|l| l.trim_start().starts_with("word"))
            .count();
        assert_eq!(prose_lines, 4, "both paragraphs wrapped:\n{wrapped}");
        assert!(
            !wrapped.lines().any(|l| l == note),
            "the note wraps:\n{wrapped}"
        );
        // A row of a table that fits (its rule does) wraps like any long line.
        let narrow = format!("A  B  C  D\n-  -  -  -\n{figures}\n");
        assert!(!wrap(&narrow).lines().any(|l| l == figures));
    }
}
