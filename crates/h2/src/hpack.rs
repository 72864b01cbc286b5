//! HPACK (RFC 7541) for both roles, with the two limits a side announces: the decoder refuses
//! dynamic-table size updates above the SETTINGS_HEADER_TABLE_SIZE its side announced (a
//! COMPRESSION_ERROR) and stops handing out fields once the decoded header list passes the
//! SETTINGS_MAX_HEADER_LIST_SIZE its side announced (the "HPACK bomb": a few bytes that index one
//! large table entry thousands of times). The encoder is ours too, in
//! [`hpack_encoder`](crate::hpack_encoder) (re-exported here).
//!
//! The decoder is our own (a hot path, measured): `loona-hpack` 0.4 builds its Huffman decoding
//! table (a HashMap) anew for every Huffman-coded string, and curl, h2load, nginx and browsers
//! Huffman-code their headers. Ours walks [`huffman`]'s state machine, built once, four bits at a
//! time, keeps its tables in [`hpack_table`](crate::hpack_table) and decodes literals into scratch
//! buffers reused across blocks; the connection's recent Huffman strings are decoded once
//! ([`Recent`]: a static server's responses repeat them). `httlib-hpack` (0.1.3, its only release) decodes into a Vec of
//! owned fields and has no header-list limit: a bomb would be materialised before we could refuse.
//!
//! Measured (`cargo run --release -p webstand-h2 --example hpack_cost`, ns per block, medians of
//! 3 runs under load; ours / loona-hpack): h2load's first request block (44 bytes, 4 Huffman
//! literals indexed) 376 / 70 794; a later one (6 bytes, all indexed) 26 / 51; nginx's 2 KiB
//! response (100 bytes, 7 Huffman literals) 371 / 136 718. Encoding (loona-hpack's then, since
//! replaced): 273 ns per request block, 460 per response block. `bench --h2 -c 8 -m 16 -n 50000` on nginx over TLS (ci-profile
//! builds of w11w and of this, generator on CPU 1, nginx on CPU 0, 3 rounds side by side,
//! unrecorded): generator user+sys per request 154.6 µs before, 10.2 µs after (medians: 0.066×),
//! 5 470 → 32 750 requests/s.

use crate::error::{Error, ErrorCode};
use crate::hpack_table::Table;
use crate::huffman::{HuffmanError, Recent};

pub use crate::hpack_encoder::Encoder;
pub use crate::hpack_table::field_size;

/// Why a header block was not (wholly) decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HpackRefusal {
    /// The block is not valid HPACK, or resizes the table beyond what we announced: the
    /// compression context is lost, a COMPRESSION_ERROR of the connection.
    Compression(HpackError),
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

/// Why a header block is not valid HPACK: the compression context is lost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HpackError {
    /// The block ends inside a representation.
    Truncated,
    /// An integer does not fit 32 bits (RFC 7541 §5.1 leaves the limit to us).
    IntegerOverflow,
    /// An index beyond the static and dynamic tables, or index 0.
    BadIndex(usize),
    /// A Huffman-coded string is malformed.
    Huffman(HuffmanError),
    /// A dynamic table size update above the SETTINGS_HEADER_TABLE_SIZE we announced.
    TableSizeAboveLimit(usize),
    /// A dynamic table size update after a field of the block (RFC 7541 §4.2).
    LateSizeUpdate,
    /// An earlier block failed: the context is lost for good.
    ContextLost,
}

/// A connection's decoding context for the header blocks the peer sends.
pub struct Decoder {
    table: Table,
    max_table_size: usize,
    max_list_size: usize,
    /// Scratch for a literal's name and value, kept across blocks so decoding does not allocate.
    name: Vec<u8>,
    value: Vec<u8>,
    /// The connection's recent Huffman-coded strings, decoded once.
    recent: Recent,
    broken: bool,
}

impl Decoder {
    /// `table_size`: the SETTINGS_HEADER_TABLE_SIZE our side announced (4096 unless it said
    /// otherwise); `max_list_size`: our SETTINGS_MAX_HEADER_LIST_SIZE.
    pub fn new(table_size: u32, max_list_size: u32) -> Decoder {
        Decoder {
            table: Table::new(table_size as usize),
            max_table_size: table_size as usize,
            max_list_size: max_list_size as usize,
            name: Vec::new(),
            value: Vec::new(),
            recent: Recent::default(),
            broken: false,
        }
    }

    /// Decodes one whole header block (HEADERS and its CONTINUATIONs joined), handing each field
    /// to `field` in order while the list stays within the limit.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackRefusal> {
        if self.broken {
            return Err(HpackRefusal::Compression(HpackError::ContextLost));
        }
        let mut size = 0usize;
        let limit = self.max_list_size;
        let decoded = self.decode_fields(block, &mut |name, value| {
            size = size.saturating_add(field_size(name, value));
            if size <= limit {
                field(name, value);
            }
        });
        if let Err(error) = decoded {
            self.broken = true;
            return Err(HpackRefusal::Compression(error));
        }
        if size > limit {
            return Err(HpackRefusal::ListTooLarge { size });
        }
        Ok(())
    }

    /// RFC 7541 §6: each representation by its first bits.
    fn decode_fields(
        &mut self,
        block: &[u8],
        field: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut at = 0;
        let mut fields_seen = false;
        while let Some(&first) = block.get(at) {
            if first & 0x80 != 0 {
                let index = read_integer(block, &mut at, 7)?;
                let (name, value) = self.table.get(index).ok_or(HpackError::BadIndex(index))?;
                field(name, value);
            } else if first & 0x40 != 0 {
                self.literal(block, &mut at, 6, field)?;
                self.table.insert(&self.name, &self.value);
            } else if first & 0x20 != 0 {
                let size = read_integer(block, &mut at, 5)?;
                if fields_seen {
                    return Err(HpackError::LateSizeUpdate);
                }
                if size > self.max_table_size {
                    return Err(HpackError::TableSizeAboveLimit(size));
                }
                self.table.resize(size);
                continue;
            } else {
                // Without indexing (0000) or never indexed (0001): both leave the table alone.
                self.literal(block, &mut at, 4, field)?;
            }
            fields_seen = true;
        }
        Ok(())
    }

    /// A literal field (RFC 7541 §6.2): a name by index or as a string, then a string value,
    /// both left in `self.name` and `self.value` and handed to `field`.
    fn literal(
        &mut self,
        block: &[u8],
        at: &mut usize,
        prefix_bits: u32,
        field: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let index = read_integer(block, at, prefix_bits)?;
        self.name.clear();
        if index == 0 {
            read_string(block, at, &mut self.name, &mut self.recent)?;
        } else {
            let (name, _) = self.table.get(index).ok_or(HpackError::BadIndex(index))?;
            self.name.extend_from_slice(name);
        }
        self.value.clear();
        read_string(block, at, &mut self.value, &mut self.recent)?;
        field(&self.name, &self.value);
        Ok(())
    }
}

/// An integer with an N-bit prefix (RFC 7541 §5.1), at most `u32::MAX`: no size, index or length
/// we accept is larger, and the bound keeps a run of continuation bytes from overflowing.
pub fn read_integer(block: &[u8], at: &mut usize, prefix_bits: u32) -> Result<usize, HpackError> {
    let mask = ((1u16 << prefix_bits) - 1) as u8;
    let first = *block.get(*at).ok_or(HpackError::Truncated)? & mask;
    *at += 1;
    if first < mask {
        return Ok(first as usize);
    }
    let mut value = u64::from(mask);
    let mut shift = 0;
    loop {
        let byte = *block.get(*at).ok_or(HpackError::Truncated)?;
        *at += 1;
        value += u64::from(byte & 0x7f) << shift;
        if value > u64::from(u32::MAX) {
            return Err(HpackError::IntegerOverflow);
        }
        if byte & 0x80 == 0 {
            return Ok(value as usize);
        }
        shift += 7;
        if shift > 28 {
            return Err(HpackError::IntegerOverflow);
        }
    }
}

/// A string literal (RFC 7541 §5.2), raw or Huffman-coded, appended to `out`.
fn read_string(
    block: &[u8],
    at: &mut usize,
    out: &mut Vec<u8>,
    recent: &mut Recent,
) -> Result<(), HpackError> {
    let huffman = *block.get(*at).ok_or(HpackError::Truncated)? & 0x80 != 0;
    let length = read_integer(block, at, 7)?;
    let bytes = block
        .get(*at..)
        .and_then(|rest| rest.get(..length))
        .ok_or(HpackError::Truncated)?;
    *at += length;
    if huffman {
        recent.decode(bytes, out).map_err(HpackError::Huffman)
    } else {
        out.extend_from_slice(bytes);
        Ok(())
    }
}

#[cfg(test)]
#[path = "hpack_tests.rs"]
pub(crate) mod tests;
