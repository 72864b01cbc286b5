//! A header block gathered from a HEADERS (or PUSH_PROMISE) frame and the CONTINUATION frames
//! that follow it (RFC 9113 §6.10), bounded in size: a peer that sends CONTINUATION frames without
//! end (CVE-2024-27316) is refused once the block passes the bound, before it costs more memory.
//!
//! §6.10: while a block is open, any frame other than a CONTINUATION on the same stream is a
//! PROTOCOL_ERROR of the connection; [`Pending::check`] says so for each frame header read.

use crate::error::{Error, ErrorCode};
use crate::frame::{Head, Kind};

/// A header block still waiting for END_HEADERS.
#[derive(Debug)]
pub struct Pending {
    pub stream: u32,
    /// The HEADERS frame had END_STREAM: the stream ends with this block.
    pub end_stream: bool,
    block: Vec<u8>,
    limit: usize,
}

impl Pending {
    /// Opens a block with the first fragment; `limit` bounds the joined block in bytes.
    pub fn new(
        stream: u32,
        end_stream: bool,
        fragment: &[u8],
        limit: usize,
    ) -> Result<Pending, Error> {
        Pending::new_in(Vec::new(), stream, end_stream, fragment, limit)
    }

    /// As `new`, gathering the block in `buffer`'s memory (a connection hands back the buffer of
    /// its previous block, `into_buffer`: no allocation per block).
    pub fn new_in(
        mut buffer: Vec<u8>,
        stream: u32,
        end_stream: bool,
        fragment: &[u8],
        limit: usize,
    ) -> Result<Pending, Error> {
        buffer.clear();
        let mut pending = Pending {
            stream,
            end_stream,
            block: buffer,
            limit,
        };
        pending.push(fragment)?;
        Ok(pending)
    }

    /// The block's memory, for the next `new_in`.
    pub fn into_buffer(self) -> Vec<u8> {
        self.block
    }

    /// The frame with header `head` arrives while this block is open: only a CONTINUATION of the
    /// same stream may.
    pub fn check(&self, head: &Head) -> Result<(), Error> {
        if head.kind != Kind::Continuation || head.stream != self.stream {
            return Err(Error::connection(
                ErrorCode::ProtocolError,
                "a header block was interrupted by another frame",
            ));
        }
        Ok(())
    }

    /// Appends a CONTINUATION fragment; past the limit the peer is told to calm down.
    pub fn push(&mut self, fragment: &[u8]) -> Result<(), Error> {
        if self.block.len() + fragment.len() > self.limit {
            return Err(Error::connection(
                ErrorCode::EnhanceYourCalm,
                "header block larger than the limit (CONTINUATION flood)",
            ));
        }
        self.block.extend_from_slice(fragment);
        Ok(())
    }

    /// The whole block, once END_HEADERS has arrived.
    pub fn block(&self) -> &[u8] {
        &self.block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuations_join_and_other_frames_or_too_much_are_refused() {
        let mut p = Pending::new(3, true, b"abc", 8).unwrap();
        let cont = Head::new(Kind::Continuation, 0, 3, 3);
        assert_eq!(p.check(&cont), Ok(()));
        p.push(b"def").unwrap();
        assert_eq!(p.block(), b"abcdef");
        let other_stream = Head::new(Kind::Continuation, 0, 5, 1);
        assert_eq!(
            p.check(&other_stream).unwrap_err().code(),
            ErrorCode::ProtocolError
        );
        let data = Head::new(Kind::Data, 0, 3, 1);
        assert_eq!(p.check(&data).unwrap_err().code(), ErrorCode::ProtocolError);
        assert_eq!(
            p.push(b"ghi").unwrap_err().code(),
            ErrorCode::EnhanceYourCalm
        );
        assert!(Pending::new(1, false, &[0; 9], 8).is_err());
    }
}
