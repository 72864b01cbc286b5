//! QUIC's variable-length integers (RFC 9000 §16), which HTTP/3 uses for frame types and lengths,
//! stream types, settings and error codes: the two high bits of the first byte give the length
//! (1, 2, 4 or 8 bytes), the rest is the value, big-endian, at most 2^62 - 1.

/// The largest value a variable-length integer holds.
pub const MAX: u64 = (1 << 62) - 1;

/// Reads an integer at the start of `bytes`: Some((value, bytes used)), None when `bytes` ends
/// before the integer does.
pub fn read(bytes: &[u8]) -> Option<(u64, usize)> {
    let first = *bytes.first()?;
    let len = 1usize << (first >> 6);
    let raw = bytes.get(..len)?;
    let mut value = u64::from(first & 0x3f);
    for &b in &raw[1..] {
        value = (value << 8) | u64::from(b);
    }
    Some((value, len))
}

/// The bytes `value` takes when written in its shortest form.
pub fn size(value: u64) -> usize {
    match value {
        0..=63 => 1,
        64..=16_383 => 2,
        16_384..=1_073_741_823 => 4,
        _ => 8,
    }
}

/// Appends `value` (at most [`MAX`]; larger values are clamped, which no caller sends) in its
/// shortest form.
pub fn write(out: &mut Vec<u8>, value: u64) {
    let value = value.min(MAX);
    match size(value) {
        1 => out.push(value as u8),
        2 => out.extend_from_slice(&(value as u16 | 0x4000).to_be_bytes()),
        4 => out.extend_from_slice(&(value as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(value | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9000 Appendix A.1's examples, and the non-shortest two-byte 37 it gives too.
    #[test]
    fn the_rfc_examples_decode() {
        let cases: [(&[u8], u64); 5] = [
            (
                &[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c],
                151_288_809_941_952_652,
            ),
            (&[0x9d, 0x7f, 0x3e, 0x7d], 494_878_333),
            (&[0x7b, 0xbd], 15_293),
            (&[0x25], 37),
            (&[0x40, 0x25], 37),
        ];
        for (bytes, value) in cases {
            assert_eq!(read(bytes), Some((value, bytes.len())));
        }
        for (bytes, value) in &cases[..4] {
            let mut out = Vec::new();
            write(&mut out, *value);
            assert_eq!(&out[..], *bytes);
        }
    }

    #[test]
    fn a_short_input_is_not_an_integer_yet() {
        assert_eq!(read(&[]), None);
        assert_eq!(read(&[0x7b]), None);
        assert_eq!(read(&[0xc2, 0x19, 0x7c]), None);
    }

    #[test]
    fn every_length_round_trips_at_its_edges() {
        for value in [0, 63, 64, 16_383, 16_384, 1_073_741_823, 1_073_741_824, MAX] {
            let mut out = Vec::new();
            write(&mut out, value);
            assert_eq!(out.len(), size(value));
            assert_eq!(read(&out), Some((value, out.len())));
        }
    }
}
