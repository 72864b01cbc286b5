//! A response head's field lines (response.rs keeps them as `Name: value` CRLF lines) as the
//! name/value pairs HPACK and QPACK encode: names lower-cased (RFC 9113 §8.2.1, RFC 9114 §4.2),
//! the connection-specific fields neither protocol may carry left out.

/// The field lines of a head as HPACK or QPACK pairs: names lower-cased (in `lower`), connection-specific
/// fields (RFC 9113 §8.2.2) left out.
pub fn pairs(lower: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    lower.split(|&b| b == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = line.iter().position(|&b| b == b':')?;
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        let hop = matches!(
            name,
            b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade"
        );
        (!hop && !name.is_empty()).then_some((name, value))
    })
}

/// A copy of field lines with each name lower-cased.
pub fn lower_names(fields: &[u8], lower: &mut Vec<u8>) {
    lower.clear();
    let mut in_name = true;
    for &b in fields {
        match b {
            b'\n' => in_name = true,
            b':' => in_name = false,
            _ => {}
        }
        lower.push(if in_name { b.to_ascii_lowercase() } else { b });
    }
}
