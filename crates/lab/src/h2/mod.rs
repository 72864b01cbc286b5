//! The lab over HTTP/2 (`compare --h2`): how the servers speak it in a run and the settings every
//! one of them gets alike (128 concurrent streams per connection where the server lets it be set);
//! the check behind thttpd's h2 column is `crate::checks::h2`. Over TLS the servers negotiate `h2` by ALPN beside
//! `http/1.1`; on plain ports they take HTTP/2 by prior knowledge (h2c). Which servers speak it here,
//! and where one's HTTP/2 differs, is each server kind's own knowledge (`crate::servers`).

pub use crate::checks::h2::{check_feature, fetch, Found};

/// How a row or a column without HTTP/2 begins.
pub const NO_H2: &str = "no h2";

/// Concurrent streams per connection every server allows where it can be set (nginx's default).
pub const MAX_CONCURRENT_STREAMS: u32 = 128;

/// How the servers speak HTTP/2 in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Over TLS, `h2` negotiated by ALPN (`http/1.1` offered beside it).
    Alpn,
    /// On a plain port, by prior knowledge (h2c): the client opens with the HTTP/2 preface.
    Cleartext,
}

impl Mode {
    /// The mode of a run over HTTPS (`tls`) or plain HTTP.
    pub fn of(tls: bool) -> Mode {
        if tls {
            Mode::Alpn
        } else {
            Mode::Cleartext
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Mode::Alpn => "HTTP/2 over TLS by ALPN (h2, http/1.1 offered)",
            Mode::Cleartext => "HTTP/2 by prior knowledge (h2c) on plain ports",
        }
    }
}
