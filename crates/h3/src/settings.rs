//! HTTP/3's SETTINGS (RFC 9114 §7.2.4, QPACK's in RFC 9204 §5): what a peer announced, with the
//! defaults of a setting it left out. A SETTINGS payload that names an identifier twice, or one of
//! the HTTP/2 identifiers HTTP/3 reserves (0x00, 0x02-0x05), is H3_SETTINGS_ERROR; unknown
//! identifiers (reserved 0x1f * N + 0x21 ones among them) are ignored.

use crate::error::{Error, ErrorCode};
use crate::varint;

/// Setting identifiers.
pub mod id {
    pub const QPACK_MAX_TABLE_CAPACITY: u64 = 0x01;
    pub const MAX_FIELD_SECTION_SIZE: u64 = 0x06;
    pub const QPACK_BLOCKED_STREAMS: u64 = 0x07;
}

/// A peer's settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// The dynamic table capacity our QPACK encoder may use (default 0: none).
    pub qpack_max_table_capacity: u64,
    /// The largest field section (names + values + 32 per field) the peer takes; None: no limit.
    pub max_field_section_size: Option<u64>,
    /// Streams the peer lets wait on QPACK inserts (default 0).
    pub qpack_blocked_streams: u64,
}

impl Settings {
    /// Reads a SETTINGS frame's payload.
    pub fn parse(mut payload: &[u8]) -> Result<Settings, Error> {
        let refuse = |reason| Err(Error::connection(ErrorCode::SettingsError, reason));
        let mut settings = Settings::default();
        let mut seen: Vec<u64> = Vec::new();
        while !payload.is_empty() {
            let Some((id, a)) = varint::read(payload) else {
                return Err(Error::connection(
                    ErrorCode::FrameError,
                    "a truncated setting",
                ));
            };
            let Some((value, b)) = varint::read(&payload[a..]) else {
                return Err(Error::connection(
                    ErrorCode::FrameError,
                    "a truncated setting",
                ));
            };
            payload = &payload[a + b..];
            if seen.contains(&id) {
                return refuse("a setting named twice");
            }
            seen.push(id);
            match id {
                0x00 | 0x02..=0x05 => return refuse("an HTTP/2 setting HTTP/3 reserves"),
                id::QPACK_MAX_TABLE_CAPACITY => settings.qpack_max_table_capacity = value,
                id::MAX_FIELD_SECTION_SIZE => settings.max_field_section_size = Some(value),
                id::QPACK_BLOCKED_STREAMS => settings.qpack_blocked_streams = value,
                _ => {}
            }
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(pairs: &[(u64, u64)]) -> Vec<u8> {
        let mut out = Vec::new();
        for &(id, value) in pairs {
            varint::write(&mut out, id);
            varint::write(&mut out, value);
        }
        out
    }

    #[test]
    fn known_settings_are_read_and_unknown_ones_skipped() {
        let s = Settings::parse(&payload(&[
            (0x01, 4096),
            (0x21, 7),
            (0x07, 16),
            (0x06, 100),
        ]));
        let s = s.unwrap();
        assert_eq!(s.qpack_max_table_capacity, 4096);
        assert_eq!(s.qpack_blocked_streams, 16);
        assert_eq!(s.max_field_section_size, Some(100));
        assert_eq!(Settings::parse(b""), Ok(Settings::default()));
    }

    #[test]
    fn duplicates_and_http2_settings_are_errors() {
        for bad in [
            vec![(0x06, 1), (0x06, 2)],
            vec![(0x04, 65535)],
            vec![(0x00, 0)],
        ] {
            let error = Settings::parse(&payload(&bad)).unwrap_err();
            assert_eq!(error.code(), ErrorCode::SettingsError, "{bad:?}");
        }
        let mut cut = payload(&[(0x06, 100)]);
        cut.pop();
        assert_eq!(
            Settings::parse(&cut).unwrap_err().code(),
            ErrorCode::FrameError
        );
    }
}
