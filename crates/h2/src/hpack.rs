//! HPACK (RFC 7541) through the `loona-hpack` crate, wrapped for the two limits a side announces:
//! the decoder refuses dynamic-table size updates above the SETTINGS_HEADER_TABLE_SIZE its side
//! announced (a COMPRESSION_ERROR) and stops handing out fields once the decoded header list passes
//! the SETTINGS_MAX_HEADER_LIST_SIZE its side announced (the "HPACK bomb": a few bytes that index
//! one large table entry thousands of times). The encoder signals a smaller table size the peer
//! announced at the start of its next block, which `loona-hpack` leaves to its caller.
//!
//! Cost, measured (perf, `bench --h2 -c 8 -m 16` on nginx over TLS): `loona-hpack` 0.4 builds its
//! Huffman decoding table (a HashMap) anew for every Huffman-coded string, about three quarters of
//! the generator's CPU. A decoder without that cost belongs here, behind this same interface.

use crate::error::{Error, ErrorCode};
use loona_hpack::decoder::DecoderError;

/// RFC 7541 §4.1: each field counts its name, its value and 32 bytes of overhead. The same sum
/// is what SETTINGS_MAX_HEADER_LIST_SIZE bounds (RFC 9113 §6.5.2).
pub fn field_size(name: &[u8], value: &[u8]) -> usize {
    name.len() + value.len() + 32
}

/// Why a header block was not (wholly) decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HpackRefusal {
    /// The block is not valid HPACK, or resizes the table beyond what we announced: the
    /// compression context is lost, a COMPRESSION_ERROR of the connection.
    Compression(DecoderError),
    /// The decoded list is larger than we announced. The whole block was still decoded (the
    /// dynamic table stays in step with the peer's) but fields past the limit were not handed out:
    /// the stream is refused, the connection lives on.
    ListTooLarge { size: usize },
}

impl HpackRefusal {
    /// The RFC 9113 error for this refusal on `stream`.
    pub fn error(self, stream: u32) -> Error {
        match self {
            HpackRefusal::Compression(_) => {
                Error::connection(ErrorCode::CompressionError, "undecodable header block")
            }
            HpackRefusal::ListTooLarge { .. } => Error::stream(
                stream,
                ErrorCode::ProtocolError,
                "header list larger than SETTINGS_MAX_HEADER_LIST_SIZE",
            ),
        }
    }
}

/// A connection's decoding context for the header blocks the peer sends.
pub struct Decoder {
    inner: loona_hpack::Decoder<'static>,
    max_list_size: usize,
}

impl Decoder {
    /// `table_size`: the SETTINGS_HEADER_TABLE_SIZE our side announced (4096 unless it said
    /// otherwise); `max_list_size`: our SETTINGS_MAX_HEADER_LIST_SIZE.
    pub fn new(table_size: u32, max_list_size: u32) -> Decoder {
        let mut inner = loona_hpack::Decoder::new();
        inner.set_max_allowed_table_size(table_size as usize);
        inner.set_max_table_size(table_size as usize);
        Decoder {
            inner,
            max_list_size: max_list_size as usize,
        }
    }

    /// Decodes one whole header block (HEADERS and its CONTINUATIONs joined), handing each field
    /// to `field` in order while the list stays within the limit.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackRefusal> {
        let mut size = 0usize;
        let limit = self.max_list_size;
        self.inner
            .decode_with_cb(block, |name, value| {
                size = size.saturating_add(field_size(&name, &value));
                if size <= limit {
                    field(&name, &value);
                }
            })
            .map_err(HpackRefusal::Compression)?;
        if size > limit {
            return Err(HpackRefusal::ListTooLarge { size });
        }
        Ok(())
    }
}

/// The largest dynamic table our encoder keeps, whatever the peer allows: a bound on memory per
/// connection, and RFC 7541's default.
const ENCODER_TABLE_CAP: u32 = 4096;

/// A connection's encoding context for the header blocks we send.
pub struct Encoder {
    inner: loona_hpack::Encoder<'static>,
    table_size: u32,
    size_update: Option<u32>,
}

impl Default for Encoder {
    fn default() -> Encoder {
        Encoder {
            inner: loona_hpack::Encoder::new(),
            table_size: ENCODER_TABLE_CAP,
            size_update: None,
        }
    }
}

impl Encoder {
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: a table smaller than ours shrinks now and the next
    /// block opens with a dynamic table size update (RFC 7541 §6.3), as §4.2 requires.
    pub fn set_peer_table_size(&mut self, size: u32) {
        let size = size.min(ENCODER_TABLE_CAP);
        if size != self.table_size {
            self.table_size = size;
            self.inner.set_max_table_size(size as usize);
            self.size_update = Some(size);
        }
    }

    /// Appends the block encoding `fields` to `out`.
    pub fn encode<'f>(
        &mut self,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        out: &mut Vec<u8>,
    ) {
        if let Some(size) = self.size_update.take() {
            // Writing into a Vec cannot fail.
            let _ = loona_hpack::encoder::encode_integer_into(size as usize, 5, 0x20, out);
        }
        let _ = self.inner.encode_into(fields, out);
    }
}

#[cfg(test)]
#[path = "hpack_tests.rs"]
mod tests;
