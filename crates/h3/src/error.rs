//! HTTP/3's error codes (RFC 9114 §8.1) and QPACK's (RFC 9204 §6), and the two reaches of an
//! error: the connection (CONNECTION_CLOSE with the code) or one request stream (reset and
//! STOP_SENDING with the code; the connection goes on). Unknown codes are kept, not refused
//! (§9: an unknown code means nothing special).

use std::fmt;

/// An HTTP/3 or QPACK application error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NoError,
    GeneralProtocolError,
    InternalError,
    StreamCreationError,
    ClosedCriticalStream,
    FrameUnexpected,
    FrameError,
    ExcessiveLoad,
    IdError,
    SettingsError,
    MissingSettings,
    RequestRejected,
    RequestCancelled,
    RequestIncomplete,
    MessageError,
    ConnectError,
    VersionFallback,
    QpackDecompressionFailed,
    QpackEncoderStreamError,
    QpackDecoderStreamError,
    Unknown(u64),
}

/// HTTP/3's codes from 0x100 on, in numeric order: `HTTP3[n]` is 0x100 + n.
const HTTP3: [ErrorCode; 17] = [
    ErrorCode::NoError,
    ErrorCode::GeneralProtocolError,
    ErrorCode::InternalError,
    ErrorCode::StreamCreationError,
    ErrorCode::ClosedCriticalStream,
    ErrorCode::FrameUnexpected,
    ErrorCode::FrameError,
    ErrorCode::ExcessiveLoad,
    ErrorCode::IdError,
    ErrorCode::SettingsError,
    ErrorCode::MissingSettings,
    ErrorCode::RequestRejected,
    ErrorCode::RequestCancelled,
    ErrorCode::RequestIncomplete,
    ErrorCode::MessageError,
    ErrorCode::ConnectError,
    ErrorCode::VersionFallback,
];

/// QPACK's codes from 0x200 on.
const QPACK: [ErrorCode; 3] = [
    ErrorCode::QpackDecompressionFailed,
    ErrorCode::QpackEncoderStreamError,
    ErrorCode::QpackDecoderStreamError,
];

impl ErrorCode {
    pub fn from_u64(value: u64) -> ErrorCode {
        let known = match value {
            0x100..=0x1ff => HTTP3.get((value - 0x100) as usize),
            0x200..=0x2ff => QPACK.get((value - 0x200) as usize),
            _ => None,
        };
        known.copied().unwrap_or(ErrorCode::Unknown(value))
    }

    pub fn to_u64(self) -> u64 {
        if let ErrorCode::Unknown(value) = self {
            return value;
        }
        match HTTP3.iter().position(|&k| k == self) {
            Some(n) => 0x100 + n as u64,
            None => 0x200 + QPACK.iter().position(|&k| k == self).unwrap_or(0) as u64,
        }
    }

    /// The RFC's name (`H3_FRAME_UNEXPECTED`), as clients and servers print it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::NoError => "H3_NO_ERROR",
            ErrorCode::GeneralProtocolError => "H3_GENERAL_PROTOCOL_ERROR",
            ErrorCode::InternalError => "H3_INTERNAL_ERROR",
            ErrorCode::StreamCreationError => "H3_STREAM_CREATION_ERROR",
            ErrorCode::ClosedCriticalStream => "H3_CLOSED_CRITICAL_STREAM",
            ErrorCode::FrameUnexpected => "H3_FRAME_UNEXPECTED",
            ErrorCode::FrameError => "H3_FRAME_ERROR",
            ErrorCode::ExcessiveLoad => "H3_EXCESSIVE_LOAD",
            ErrorCode::IdError => "H3_ID_ERROR",
            ErrorCode::SettingsError => "H3_SETTINGS_ERROR",
            ErrorCode::MissingSettings => "H3_MISSING_SETTINGS",
            ErrorCode::RequestRejected => "H3_REQUEST_REJECTED",
            ErrorCode::RequestCancelled => "H3_REQUEST_CANCELLED",
            ErrorCode::RequestIncomplete => "H3_REQUEST_INCOMPLETE",
            ErrorCode::MessageError => "H3_MESSAGE_ERROR",
            ErrorCode::ConnectError => "H3_CONNECT_ERROR",
            ErrorCode::VersionFallback => "H3_VERSION_FALLBACK",
            ErrorCode::QpackDecompressionFailed => "QPACK_DECOMPRESSION_FAILED",
            ErrorCode::QpackEncoderStreamError => "QPACK_ENCODER_STREAM_ERROR",
            ErrorCode::QpackDecoderStreamError => "QPACK_DECODER_STREAM_ERROR",
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

/// What a check found wrong with the peer's bytes, and how far the damage reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The connection is unusable: close it with `code`.
    Connection {
        code: ErrorCode,
        reason: &'static str,
    },
    /// Only this request is: reset its stream (and stop its sending) with `code`.
    Stream {
        code: ErrorCode,
        reason: &'static str,
    },
}

impl Error {
    pub fn connection(code: ErrorCode, reason: &'static str) -> Error {
        Error::Connection { code, reason }
    }

    pub fn stream(code: ErrorCode, reason: &'static str) -> Error {
        Error::Stream { code, reason }
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
            Error::Stream { code, reason } => write!(f, "{code} on a request stream: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_ones_are_kept() {
        for value in (0x100..0x111).chain(0x200..0x203) {
            let code = ErrorCode::from_u64(value);
            assert!(!matches!(code, ErrorCode::Unknown(_)), "{value:#x}");
            assert_eq!(code.to_u64(), value);
        }
        assert_eq!(ErrorCode::from_u64(0x10e), ErrorCode::MessageError);
        assert_eq!(
            ErrorCode::from_u64(0x200).name(),
            "QPACK_DECOMPRESSION_FAILED"
        );
        // A reserved code (0x1f * N + 0x21) is unknown and kept as it came.
        assert_eq!(ErrorCode::from_u64(0x21), ErrorCode::Unknown(0x21));
        assert_eq!(ErrorCode::from_u64(0x111).to_string(), "error code 0x111");
    }
}
