//! The byte templates that case files write requests in: text with `{…}` placeholders, parsed once
//! when the file is loaded (so a typo is a FILE:LINE error before any traffic) and expanded per run.
//!
//! Placeholders: `{host}` (the Host value of the URL), `{path}` (the URL's path), `{x:HEX}` (raw
//! bytes, e.g. `{x:c0ae}`, for what TOML strings cannot hold), `{repeat:N:TEMPLATE}` (N copies),
//! `{up:TEMPLATE}` (one copy per directory level between the docroot and the leak target) and
//! `{leak}` / `{leak:SEP}` (the leak target's file, its segments joined by `/` or SEP). `{{` and `}}`
//! are literal braces (inside a `{repeat:…}` or `{up:…}` body, `}` closes it: write `{x:7d}`).

/// Largest expansion of one template: a probe sends hostile requests, not floods of gigabytes.
pub const MAX_EXPANDED: usize = 16 << 20;

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Bytes(Vec<u8>),
    Host,
    Path,
    Leak(String),
    Up(Template),
    Repeat(usize, Template),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Template {
    parts: Vec<Part>,
}

/// A file outside the document root that traversal cases try to reach, and what its content
/// contains, so a response carrying it is recognised.
#[derive(Debug, Clone, PartialEq)]
pub struct LeakTarget {
    /// Short name shown after the case name: `traversal-dots@passwd`.
    pub name: String,
    /// Directory levels to climb from the document root.
    pub depth: usize,
    /// The file's path below the directory reached, as segments.
    pub file: Vec<String>,
    /// Byte strings that only the file's content holds.
    pub markers: Vec<Vec<u8>>,
}

/// What placeholders expand to for one run of a case.
pub struct Vars<'a> {
    pub host: &'a str,
    pub path: &'a str,
    pub leak: Option<&'a LeakTarget>,
}

impl Template {
    /// Parses `text`; the error says what is wrong (the caller adds FILE:LINE).
    pub fn parse(text: &str) -> Result<Template, String> {
        let (t, rest) = parse_until(text, false)?;
        debug_assert!(rest.is_empty());
        Ok(t)
    }

    /// Whether it names the leak target (such a case runs once per target).
    pub fn uses_leak(&self) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Leak(_) => true,
            Part::Up(t) | Part::Repeat(_, t) => t.uses_leak(),
            _ => false,
        })
    }

    /// The bytes for `vars`; an error if they would exceed [`MAX_EXPANDED`].
    pub fn expand(&self, vars: &Vars) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.expand_into(vars, &mut out)?;
        Ok(out)
    }

    fn expand_into(&self, vars: &Vars, out: &mut Vec<u8>) -> Result<(), String> {
        for part in &self.parts {
            match part {
                Part::Bytes(b) => out.extend_from_slice(b),
                Part::Host => out.extend_from_slice(vars.host.as_bytes()),
                Part::Path => out.extend_from_slice(vars.path.as_bytes()),
                Part::Leak(sep) => {
                    let leak = vars.leak.ok_or("{leak} used outside a traversal run")?;
                    out.extend_from_slice(leak.file.join(sep.as_str()).as_bytes());
                }
                Part::Up(t) => {
                    let leak = vars.leak.ok_or("{up:…} used outside a traversal run")?;
                    for _ in 0..leak.depth {
                        t.expand_into(vars, out)?;
                    }
                }
                Part::Repeat(n, t) => {
                    for _ in 0..*n {
                        t.expand_into(vars, out)?;
                        if out.len() > MAX_EXPANDED {
                            break;
                        }
                    }
                }
            }
            if out.len() > MAX_EXPANDED {
                return Err(format!("expands to more than {} MiB", MAX_EXPANDED >> 20));
            }
        }
        Ok(())
    }
}

/// Parses up to the end of `text`, or (when `nested`) up to the `}` closing the placeholder whose
/// body this is; returns the template and what follows the closing brace.
fn parse_until(mut text: &str, nested: bool) -> Result<(Template, &str), String> {
    let mut t = Template::default();
    let mut lit = Vec::new();
    loop {
        let Some(i) = text.find(['{', '}']) else {
            if nested {
                return Err("unclosed '{'".into());
            }
            lit.extend_from_slice(text.as_bytes());
            flush(&mut t, &mut lit);
            return Ok((t, ""));
        };
        lit.extend_from_slice(&text.as_bytes()[..i]);
        let (brace, after) = (text.as_bytes()[i], &text[i + 1..]);
        // `{{` is a brace; so is `}}` at the top level (inside `{repeat:…}` a `}` closes it).
        if after.as_bytes().first() == Some(&brace) && !(nested && brace == b'}') {
            lit.push(brace);
            text = &after[1..];
        } else if brace == b'}' {
            if nested {
                flush(&mut t, &mut lit);
                return Ok((t, after));
            }
            return Err("'}' without '{' (write '}}' for a brace)".into());
        } else {
            flush(&mut t, &mut lit);
            let (part, rest) = placeholder(after)?;
            t.parts.push(part);
            text = rest;
        }
    }
}

fn flush(t: &mut Template, lit: &mut Vec<u8>) {
    if !lit.is_empty() {
        t.parts.push(Part::Bytes(std::mem::take(lit)));
    }
}

/// One placeholder, `text` starting just after its `{`.
fn placeholder(text: &str) -> Result<(Part, &str), String> {
    let name_end = text
        .find([':', '}'])
        .ok_or("unclosed '{' (write '{{' for a brace)")?;
    let name = &text[..name_end];
    let has_arg = text.as_bytes()[name_end] == b':';
    let rest = &text[name_end + 1..];
    let simple = |part: Part| -> Result<(Part, &str), String> {
        if has_arg {
            return Err(format!("{{{name}}} takes no argument"));
        }
        Ok((part, rest))
    };
    match name {
        "host" => simple(Part::Host),
        "path" => simple(Part::Path),
        "leak" if !has_arg => Ok((Part::Leak("/".into()), rest)),
        "leak" => {
            let end = rest.find('}').ok_or("unclosed {leak:…}")?;
            Ok((Part::Leak(rest[..end].to_string()), &rest[end + 1..]))
        }
        "x" if has_arg => {
            let end = rest.find('}').ok_or("unclosed {x:…}")?;
            Ok((Part::Bytes(hex(&rest[..end])?), &rest[end + 1..]))
        }
        "up" if has_arg => {
            let (t, after) = parse_until(rest, true)?;
            Ok((Part::Up(t), after))
        }
        "repeat" if has_arg => {
            let colon = rest.find(':').ok_or("expected {repeat:N:TEXT}")?;
            let n: usize = rest[..colon]
                .parse()
                .map_err(|_| format!("bad count '{}' in {{repeat:N:TEXT}}", &rest[..colon]))?;
            let (t, after) = parse_until(&rest[colon + 1..], true)?;
            Ok((Part::Repeat(n, t), after))
        }
        "x" | "up" | "repeat" => Err(format!("{{{name}}} needs an argument: {{{name}:…}}")),
        _ => Err(format!(
            "unknown placeholder {{{name}}} (known: host, path, x, repeat, up, leak; '{{{{' is a brace)"
        )),
    }
}

fn hex(s: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if digits.is_empty() || !digits.len().is_multiple_of(2) {
        return Err(format!("{{x:{s}}} needs pairs of hex digits"));
    }
    digits
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(|| format!("{{x:{s}}}: '{}' is not hex", String::from_utf8_lossy(pair)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(leak: Option<&LeakTarget>) -> Vars<'_> {
        Vars {
            host: "h:1",
            path: "/p",
            leak,
        }
    }

    #[test]
    fn placeholders_expand() {
        let t =
            Template::parse("GET {path} HTTP/1.1\r\nHost: {host}\r\nX: {x:00ff}{{}}\r\n").unwrap();
        assert_eq!(
            t.expand(&vars(None)).unwrap(),
            b"GET /p HTTP/1.1\r\nHost: h:1\r\nX: \x00\xff{}\r\n"
        );
        let t = Template::parse("{repeat:3:a{repeat:2:b}}").unwrap();
        assert_eq!(t.expand(&vars(None)).unwrap(), b"abbabbabb");
        let t = Template::parse("{repeat:2:{{{x:7d}}}}").unwrap();
        assert_eq!(t.expand(&vars(None)).unwrap(), b"{}{}}");
        assert!(!t.uses_leak());
    }

    #[test]
    fn leak_targets_expand_per_depth() {
        let leak = LeakTarget {
            name: "passwd".into(),
            depth: 3,
            file: vec!["etc".into(), "passwd".into()],
            markers: vec![],
        };
        let t = Template::parse("/{up:%2e%2e/}{leak:%2f}").unwrap();
        assert!(t.uses_leak());
        assert_eq!(
            t.expand(&vars(Some(&leak))).unwrap(),
            b"/%2e%2e/%2e%2e/%2e%2e/etc%2fpasswd"
        );
        assert!(t.expand(&vars(None)).is_err());
    }

    #[test]
    fn mistakes_are_explained() {
        for (bad, says) in [
            ("{hots}", "unknown placeholder"),
            ("a}b", "without '{'"),
            ("{repeat:x:a}", "bad count"),
            ("{repeat:2:a", "unclosed"),
            ("{x:zz}", "not hex"),
            ("{x:abc}", "pairs"),
            ("{host:1}", "no argument"),
            ("{up}", "needs an argument"),
        ] {
            let e = Template::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let huge = Template::parse("{repeat:100000:{repeat:1000:a}}").unwrap();
        assert!(huge.expand(&vars(None)).unwrap_err().contains("MiB"));
    }
}
