//! Error codes (RFC 9113 §7) and the two kinds of error a check can raise: a connection error
//! (GOAWAY, then close) or a stream error (RST_STREAM on one stream, the connection lives on).

use std::fmt;

/// An HTTP/2 error code as carried by RST_STREAM and GOAWAY. Unknown codes are kept, not refused
/// (§7: "Unknown or unsupported error codes MUST NOT trigger any special behavior").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NoError,
    ProtocolError,
    InternalError,
    FlowControlError,
    SettingsTimeout,
    StreamClosed,
    FrameSizeError,
    RefusedStream,
    Cancel,
    CompressionError,
    ConnectError,
    EnhanceYourCalm,
    InadequateSecurity,
    Http11Required,
    Unknown(u32),
}

/// The registered codes in numeric order: `KNOWN[n]` has the value n.
const KNOWN: [ErrorCode; 14] = [
    ErrorCode::NoError,
    ErrorCode::ProtocolError,
    ErrorCode::InternalError,
    ErrorCode::FlowControlError,
    ErrorCode::SettingsTimeout,
    ErrorCode::StreamClosed,
    ErrorCode::FrameSizeError,
    ErrorCode::RefusedStream,
    ErrorCode::Cancel,
    ErrorCode::CompressionError,
    ErrorCode::ConnectError,
    ErrorCode::EnhanceYourCalm,
    ErrorCode::InadequateSecurity,
    ErrorCode::Http11Required,
];

impl ErrorCode {
    pub fn from_u32(value: u32) -> ErrorCode {
        KNOWN
            .get(value as usize)
            .copied()
            .unwrap_or(ErrorCode::Unknown(value))
    }

    pub fn to_u32(self) -> u32 {
        match self {
            ErrorCode::Unknown(value) => value,
            known => KNOWN.iter().position(|&k| k == known).unwrap_or(0) as u32,
        }
    }

    /// The RFC's name (`PROTOCOL_ERROR`), as h2load and nghttp print it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::NoError => "NO_ERROR",
            ErrorCode::ProtocolError => "PROTOCOL_ERROR",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::FlowControlError => "FLOW_CONTROL_ERROR",
            ErrorCode::SettingsTimeout => "SETTINGS_TIMEOUT",
            ErrorCode::StreamClosed => "STREAM_CLOSED",
            ErrorCode::FrameSizeError => "FRAME_SIZE_ERROR",
            ErrorCode::RefusedStream => "REFUSED_STREAM",
            ErrorCode::Cancel => "CANCEL",
            ErrorCode::CompressionError => "COMPRESSION_ERROR",
            ErrorCode::ConnectError => "CONNECT_ERROR",
            ErrorCode::EnhanceYourCalm => "ENHANCE_YOUR_CALM",
            ErrorCode::InadequateSecurity => "INADEQUATE_SECURITY",
            ErrorCode::Http11Required => "HTTP_1_1_REQUIRED",
            ErrorCode::Unknown(_) => "UNKNOWN",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorCode::Unknown(value) => write!(f, "error code 0x{value:x}"),
            known => f.write_str(known.name()),
        }
    }
}

/// What a check found wrong with the peer's bytes, and how wide the damage is (§5.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The whole connection is unusable: send GOAWAY with `code`, then close.
    Connection {
        code: ErrorCode,
        reason: &'static str,
    },
    /// Only `stream` is: send RST_STREAM with `code`; other streams go on.
    Stream {
        stream: u32,
        code: ErrorCode,
        reason: &'static str,
    },
}

impl Error {
    pub fn connection(code: ErrorCode, reason: &'static str) -> Error {
        Error::Connection { code, reason }
    }

    pub fn stream(stream: u32, code: ErrorCode, reason: &'static str) -> Error {
        Error::Stream {
            stream,
            code,
            reason,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match *self {
            Error::Connection { code, .. } | Error::Stream { code, .. } => code,
        }
    }

    pub fn reason(&self) -> &'static str {
        match *self {
            Error::Connection { reason, .. } | Error::Stream { reason, .. } => reason,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connection { code, reason } => write!(f, "{code}: {reason}"),
            Error::Stream {
                stream,
                code,
                reason,
            } => write!(f, "{code} on stream {stream}: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_ones_are_kept() {
        for value in 0..20 {
            assert_eq!(ErrorCode::from_u32(value).to_u32(), value);
        }
        assert_eq!(ErrorCode::from_u32(0xb), ErrorCode::EnhanceYourCalm);
        assert_eq!(ErrorCode::from_u32(0xd).name(), "HTTP_1_1_REQUIRED");
        assert_eq!(ErrorCode::from_u32(0x1234).to_string(), "error code 0x1234");
    }
}
