//! WebStone's weighted file lists, parsed from text: WebStone 2.0.1's `/path weight #size` lines and
//! WebStone 1.1's page classes (a count of classes, then per class `weight nfiles` and its files). The
//! two lists of seed 002 ship as the presets [`SILICON_SURF`] and [`WEBSTONE2`].
//!
//! Both formats flatten to one [`FileList`]: every file with a weight. A WebStone 1.1 page fetches each
//! of its files once, so a file's share of all fetches is its class's weight; drawing files one by one
//! with those weights gives the same mix (the order within a page is not kept).

use anyhow::{bail, Context, Result};
use std::path::Path;

/// WebStone 1.1's "Silicon Surf" page classes, as distributed by SGI (seed 002).
pub const SILICON_SURF: &str = "\
#Silicon Surf model: pages and files to be tested for
8
40 2
/file2k.html
/file3k.html
25 2
/file1k.html
/file5k.html
15 2
/file4k.html
/file6k.html
5 1
/file7k.html
4 4
/file8k.html
/file9k.html
/file10k.html
/file11k.html
4 5
/file12k.html
/file14k.html
/file15k.html
/file17k.html
/file18k.html
6 1
/file33k.html
1 1
/file200k.html
";

/// WebStone 2.0.1's standard file list (seed 002): path, weight, `#size` in bytes.
pub const WEBSTONE2: &str = "\
#The standard filelist distributed with WebStone 2.0.1
/file500.html\t350\t#500
/file5k.html\t500\t#5125
/file50k.html\t140\t#51250
/file500k.html\t9\t#512500
/file5m.html\t1\t#5248000
";

/// The shipped lists by name: `webstone1` (Silicon Surf page classes) and `webstone2`.
pub fn preset(name: &str) -> Option<FileList> {
    let text = match name {
        "webstone1" => SILICON_SURF,
        "webstone2" => WEBSTONE2,
        _ => return None,
    };
    Some(parse(text, name).expect("the shipped lists parse"))
}

/// One file of a list with its weight and, when the list gives it, its size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedFile {
    pub path: String,
    pub weight: u32,
    pub size: Option<u64>,
}

/// Which of the two formats a list was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// WebStone 1.1 page classes.
    PageClasses,
    /// WebStone 2.0.1 `/path weight #size` lines.
    Weighted,
}

/// A weighted file list, flattened: one entry per file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileList {
    pub format: Format,
    pub files: Vec<WeightedFile>,
}

impl FileList {
    pub fn total_weight(&self) -> u64 {
        self.files.iter().map(|f| f.weight as u64).sum()
    }
}

/// Reads and parses a list file; the format is told by its first line (a lone number: page classes).
pub fn load(path: &Path) -> Result<FileList> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read file list {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Parses either format; `source` names the list in errors (`source:line: expected …`).
pub fn parse(text: &str, source: &str) -> Result<FileList> {
    let lines: Vec<(usize, &str)> = significant_lines(text).collect();
    let Some(&(_, first)) = lines.first() else {
        bail!("{source}: the file list is empty (no files listed)");
    };
    let list = if first.parse::<u64>().is_ok() {
        parse_page_classes(&lines, source)?
    } else {
        parse_weighted(&lines, source)?
    };
    if list.total_weight() == 0 {
        bail!(
            "{source}: the total weight of the file list is zero (no file would ever be fetched)"
        );
    }
    Ok(list)
}

/// Non-blank lines that are not whole-line `#` comments, with their 1-based line numbers.
fn significant_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn parse_weighted(lines: &[(usize, &str)], source: &str) -> Result<FileList> {
    let expected = "expected '/PATH WEIGHT [#SIZE]' (WebStone 2.0.1 file list)";
    let mut files = Vec::new();
    for &(n, line) in lines {
        let mut fields = line.split_whitespace();
        let path = fields.next().unwrap_or("");
        let weight = fields.next();
        if !path.starts_with('/') {
            bail!("{source}:{n}: {expected}, found {line:?}");
        }
        let Some(weight) = weight.and_then(|w| w.parse::<u32>().ok()) else {
            bail!("{source}:{n}: {expected}, found {line:?} (the weight must be a whole number)");
        };
        // A third field `#digits` is the size; any other `#…` starts a comment.
        let size = match fields.next() {
            Some(s) if s.starts_with('#') => s[1..].parse::<u64>().ok(),
            Some(_) => bail!("{source}:{n}: {expected}, found {line:?}"),
            None => None,
        };
        files.push(WeightedFile {
            path: path.to_string(),
            weight,
            size,
        });
    }
    Ok(FileList {
        format: Format::Weighted,
        files,
    })
}

fn parse_page_classes(lines: &[(usize, &str)], source: &str) -> Result<FileList> {
    let mut rest = lines.iter().copied();
    let (_, count) = rest.next().expect("caller checked the list is not empty");
    let classes: usize = count.parse().expect("caller checked it is a number");
    if classes == 0 {
        bail!("{source}: the file list is empty (0 page classes)");
    }
    let mut files = Vec::new();
    for class in 1..=classes {
        let Some((n, header)) = rest.next() else {
            bail!("{source}: the list ended before page class {class} of {classes} (expected 'WEIGHT NFILES')");
        };
        let numbers: Vec<Option<u32>> = header.split_whitespace().map(|f| f.parse().ok()).collect();
        let (weight, nfiles) = match numbers[..] {
            [Some(w), Some(k)] if k > 0 => (w, k),
            _ => bail!(
                "{source}:{n}: expected 'WEIGHT NFILES' for page class {class} of {classes} (WebStone 1.1 page classes, NFILES ≥ 1), found {header:?}"
            ),
        };
        for i in 1..=nfiles {
            let Some((n, path)) = rest.next() else {
                bail!("{source}: the list ended inside page class {class} (expected file {i} of {nfiles}, a path starting with '/')");
            };
            if !path.starts_with('/') || path.split_whitespace().count() != 1 {
                bail!("{source}:{n}: expected a path starting with '/' (file {i} of {nfiles} in page class {class}), found {path:?}");
            }
            files.push(WeightedFile {
                path: path.to_string(),
                weight,
                size: None,
            });
        }
    }
    if let Some((n, extra)) = rest.next() {
        bail!("{source}:{n}: expected the end of the list after {classes} page classes, found {extra:?}");
    }
    Ok(FileList {
        format: Format::PageClasses,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silicon_surf_flattens_to_eighteen_files_with_class_weights() {
        let l = preset("webstone1").unwrap();
        assert_eq!(l.format, Format::PageClasses);
        assert_eq!(l.files.len(), 18);
        assert_eq!(
            l.files[0],
            WeightedFile {
                path: "/file2k.html".into(),
                weight: 40,
                size: None
            }
        );
        assert_eq!(l.files.last().unwrap().path, "/file200k.html");
        // 40·2 + 25·2 + 15·2 + 5 + 4·4 + 4·5 + 6 + 1
        assert_eq!(l.total_weight(), 80 + 50 + 30 + 5 + 16 + 20 + 6 + 1);
    }

    #[test]
    fn webstone2_reads_sizes() {
        let l = preset("webstone2").unwrap();
        assert_eq!(l.format, Format::Weighted);
        let sizes: Vec<_> = l.files.iter().map(|f| f.size.unwrap()).collect();
        assert_eq!(sizes, [500, 5125, 51250, 512500, 5248000]);
        assert_eq!(l.total_weight(), 1000);
    }

    #[test]
    fn errors_name_source_line_and_expectation() {
        let e = parse("/a 1\n\n/b x\n", "list.txt").unwrap_err().to_string();
        assert!(
            e.starts_with("list.txt:3: expected '/PATH WEIGHT [#SIZE]'"),
            "{e}"
        );
        let e = parse("2\n1 1\n/a\n3 2\n/b\n", "pc")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ended inside page class 2"), "{e}");
        let e = parse("1\n1 x\n/a\n", "pc").unwrap_err().to_string();
        assert!(
            e.starts_with("pc:2: expected 'WEIGHT NFILES' for page class 1"),
            "{e}"
        );
        let e = parse("1\n1 1\n/a\n/b\n", "pc").unwrap_err().to_string();
        assert!(e.starts_with("pc:4: expected the end of the list"), "{e}");
        let e = parse("1\n1 1\nfile.html\n", "pc").unwrap_err().to_string();
        assert!(
            e.starts_with("pc:3: expected a path starting with '/'"),
            "{e}"
        );
    }

    #[test]
    fn empty_and_zero_weight_lists_are_refused() {
        assert!(parse("# nothing\n\n", "e")
            .unwrap_err()
            .to_string()
            .contains("empty"));
        assert!(parse("/a 0\n/b 0 #10\n", "z")
            .unwrap_err()
            .to_string()
            .contains("total weight"));
        assert!(parse("1\n0 1\n/a\n", "z")
            .unwrap_err()
            .to_string()
            .contains("total weight"));
    }
}
