//! Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2): the variable-length integer that
//! opens each unidirectional stream and says what it carries. Each side opens at most one control
//! stream, one QPACK encoder stream and one QPACK decoder stream; push streams go from server to
//! client only. Unknown and reserved types are to be ignored (the stream's reading is stopped with
//! H3_STREAM_CREATION_ERROR, §6.2).

/// What a peer's unidirectional stream carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UniKind {
    Control,
    Push,
    QpackEncoder,
    QpackDecoder,
    /// Unknown or reserved (0x1f * N + 0x21): ignored.
    Other(u64),
}

pub const CONTROL: u64 = 0x00;
pub const PUSH: u64 = 0x01;
pub const QPACK_ENCODER: u64 = 0x02;
pub const QPACK_DECODER: u64 = 0x03;

impl UniKind {
    pub fn from_u64(value: u64) -> UniKind {
        match value {
            CONTROL => UniKind::Control,
            PUSH => UniKind::Push,
            QPACK_ENCODER => UniKind::QpackEncoder,
            QPACK_DECODER => UniKind::QpackDecoder,
            other => UniKind::Other(other),
        }
    }
}

/// QUIC stream IDs (RFC 9000 §2.1): the two low bits say who opened the stream and whether it is
/// unidirectional.
pub mod id {
    /// A stream the client opened.
    pub fn client_initiated(id: u64) -> bool {
        id & 1 == 0
    }

    pub fn unidirectional(id: u64) -> bool {
        id & 2 != 0
    }

    /// A client's bidirectional stream: a request stream.
    pub fn is_request(id: u64) -> bool {
        id & 3 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_ids_are_told_apart() {
        assert_eq!(UniKind::from_u64(0), UniKind::Control);
        assert_eq!(UniKind::from_u64(3), UniKind::QpackDecoder);
        assert_eq!(UniKind::from_u64(0x21), UniKind::Other(0x21));
        assert!(id::is_request(0) && id::is_request(8));
        assert!(!id::is_request(2) && !id::is_request(1));
        assert!(id::unidirectional(2) && id::unidirectional(3));
        assert!(id::client_initiated(2) && !id::client_initiated(3));
    }
}
