//! QPACK (RFC 9204), webstand's own, for both roles. We announce a dynamic table capacity of 0
//! (SETTINGS_QPACK_MAX_TABLE_CAPACITY left at its default), so a peer's field sections may
//! reference the static table only: its Required Insert Count must be 0, and a dynamic or
//! post-base reference is a reference past the table, QPACK_DECOMPRESSION_FAILED (§2.2.3). The
//! same choice makes the peer's encoder stream carry at most a Set Dynamic Table Capacity of 0
//! (anything else is QPACK_ENCODER_STREAM_ERROR) and leaves us no decoder stream to write (§4.2
//! lets an endpoint that gives no capacity omit it). Why 0: a request's fields are few and short,
//! a table costs memory per connection and blocked streams a state machine, and quic-go (Caddy)
//! announces 0 as well. Our encoder ([`qpack_encoder`](crate::qpack_encoder)) uses the static
//! table and literals, never inserting, so the peer's decoder stream may carry only Stream
//! Cancellations (§4.4).
//!
//! Decoding is bounded: the decoded section (names + values + 32 per field, §4.2.2 of RFC 9114)
//! stops being handed out past the size our side allows, and the section is then refused as a
//! whole (`SectionTooLarge`, which the server answers 431), the compression state being intact
//! since there is none. Huffman strings are decoded by `webstand-h2`'s decoder (the code is
//! HPACK's, RFC 9204 §4.1.2), whose `Recent` remembers a connection's repeated strings.

use crate::error::{Error, ErrorCode};
use crate::qpack_table;
use webstand_h2::hpack::HpackError;
use webstand_h2::huffman::{HuffmanError, Recent};

/// Why a field section was not (wholly) decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QpackRefusal {
    /// Not valid QPACK for a decoder without a dynamic table: QPACK_DECOMPRESSION_FAILED, a
    /// connection error.
    Decompression(QpackError),
    /// The decoded section is larger than our side takes: the request is refused (431), the
    /// connection lives on.
    SectionTooLarge { size: usize },
}

impl QpackRefusal {
    /// The HTTP/3 error for this refusal.
    pub fn error(self) -> Error {
        match self {
            QpackRefusal::Decompression(_) => Error::connection(
                ErrorCode::QpackDecompressionFailed,
                "an undecodable field section",
            ),
            QpackRefusal::SectionTooLarge { .. } => Error::stream(
                ErrorCode::ExcessiveLoad,
                "a field section larger than SETTINGS_MAX_FIELD_SECTION_SIZE",
            ),
        }
    }
}

/// Why a field section is not valid QPACK here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QpackError {
    /// The section ends inside a representation (or its prefix).
    Truncated,
    /// An integer does not fit 32 bits: no index or length we take is larger.
    IntegerOverflow,
    /// A Required Insert Count other than 0: the section needs a dynamic table we gave none.
    RequiredInsertCount(usize),
    /// A reference to the dynamic table (relative or post-base) while it is empty.
    DynamicReference,
    /// A static index past the table's 99 entries.
    BadStaticIndex(usize),
    Huffman(HuffmanError),
}

/// A connection's decoder of the field sections the peer sends.
pub struct Decoder {
    max_section: usize,
    /// Scratch for a literal's name and value, kept across sections (no allocation per request).
    name: Vec<u8>,
    value: Vec<u8>,
    recent: Recent,
}

impl Decoder {
    /// `max_section`: the SETTINGS_MAX_FIELD_SECTION_SIZE our side announced.
    pub fn new(max_section: u64) -> Decoder {
        Decoder {
            max_section: usize::try_from(max_section).unwrap_or(usize::MAX),
            name: Vec::new(),
            value: Vec::new(),
            recent: Recent::default(),
        }
    }

    /// Decodes one field section (a HEADERS frame's payload), handing each field to `field` in
    /// order while the section stays within the limit.
    pub fn decode(
        &mut self,
        section: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), QpackRefusal> {
        let mut size = 0usize;
        let limit = self.max_section;
        self.decode_fields(section, &mut |name, value| {
            size = size.saturating_add(name.len() + value.len() + 32);
            if size <= limit {
                field(name, value);
            }
        })
        .map_err(QpackRefusal::Decompression)?;
        if size > limit {
            return Err(QpackRefusal::SectionTooLarge { size });
        }
        Ok(())
    }

    /// §4.5: the prefix, then each representation by its first bits.
    fn decode_fields(
        &mut self,
        section: &[u8],
        field: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), QpackError> {
        let mut at = 0;
        let required = read_integer(section, &mut at, 8)?;
        if required != 0 {
            return Err(QpackError::RequiredInsertCount(required));
        }
        // Sign bit and Delta Base: meaningless with nothing inserted, but present.
        read_integer(section, &mut at, 7)?;
        while let Some(&first) = section.get(at) {
            if first & 0x80 != 0 {
                // Indexed field line: T (0x40) says static.
                let index = read_integer(section, &mut at, 6)?;
                if first & 0x40 == 0 {
                    return Err(QpackError::DynamicReference);
                }
                let (name, value) = static_entry(index)?;
                field(name, value);
            } else if first & 0x40 != 0 {
                // Literal with name reference: N (0x20), T (0x10), a 4-bit index.
                let index = read_integer(section, &mut at, 4)?;
                if first & 0x10 == 0 {
                    return Err(QpackError::DynamicReference);
                }
                self.name.clear();
                self.name.extend_from_slice(static_entry(index)?.0);
                self.literal_value(section, &mut at, field)?;
            } else if first & 0x20 != 0 {
                // Literal with literal name: N (0x10), H (0x08), a 3-bit name length.
                self.name.clear();
                read_string(section, &mut at, 3, &mut self.name, &mut self.recent)?;
                self.literal_value(section, &mut at, field)?;
            } else {
                // 0001: indexed with post-base index; 0000: literal with post-base name
                // reference. Both name entries inserted after the base: there are none.
                return Err(QpackError::DynamicReference);
            }
        }
        Ok(())
    }

    /// A literal's value (a 7-bit-prefixed string), then the field.
    fn literal_value(
        &mut self,
        section: &[u8],
        at: &mut usize,
        field: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<(), QpackError> {
        self.value.clear();
        read_string(section, at, 7, &mut self.value, &mut self.recent)?;
        field(&self.name, &self.value);
        Ok(())
    }
}

fn static_entry(index: usize) -> Result<(&'static [u8], &'static [u8]), QpackError> {
    qpack_table::get(index).ok_or(QpackError::BadStaticIndex(index))
}

/// An integer with an N-bit prefix (RFC 7541 §5.1, which QPACK uses: RFC 9204 §4.1.1), at most
/// `u32::MAX`: HPACK's reader, its errors said in QPACK's terms.
pub fn read_integer(bytes: &[u8], at: &mut usize, prefix_bits: u32) -> Result<usize, QpackError> {
    webstand_h2::hpack::read_integer(bytes, at, prefix_bits).map_err(|e| match e {
        HpackError::IntegerOverflow => QpackError::IntegerOverflow,
        _ => QpackError::Truncated,
    })
}

/// A string literal (RFC 9204 §4.1.2) whose length has an N-bit prefix, the Huffman flag the bit
/// above it; appended to `out`.
fn read_string(
    bytes: &[u8],
    at: &mut usize,
    prefix_bits: u32,
    out: &mut Vec<u8>,
    recent: &mut Recent,
) -> Result<(), QpackError> {
    let huffman = *bytes.get(*at).ok_or(QpackError::Truncated)? & (1 << prefix_bits) != 0;
    let length = read_integer(bytes, at, prefix_bits)?;
    let raw = bytes
        .get(*at..)
        .and_then(|rest| rest.get(..length))
        .ok_or(QpackError::Truncated)?;
    *at += length;
    if huffman {
        recent.decode(raw, out).map_err(QpackError::Huffman)
    } else {
        out.extend_from_slice(raw);
        Ok(())
    }
}

/// Reads the peer's encoder stream (§4.3) for a decoder that gave no table capacity: Set Dynamic
/// Table Capacity 0 is all it may say. Returns the bytes taken (a partial instruction waits for
/// more); any insert, duplicate or larger capacity is QPACK_ENCODER_STREAM_ERROR.
pub fn read_encoder_stream(bytes: &[u8]) -> Result<usize, Error> {
    let refuse = Error::connection(
        ErrorCode::QpackEncoderStreamError,
        "an encoder stream instruction for a table we gave no capacity",
    );
    let mut at = 0;
    while let Some(&first) = bytes.get(at) {
        if first & 0xe0 != 0x20 {
            return Err(refuse);
        }
        let mut next = at;
        match read_integer(bytes, &mut next, 5) {
            Ok(0) => at = next,
            Ok(_) | Err(QpackError::IntegerOverflow) => return Err(refuse),
            Err(_) => break,
        }
    }
    Ok(at)
}

/// Reads the peer's decoder stream (§4.4) for an encoder that never inserts: Stream
/// Cancellations are taken; a Section Acknowledgment (no section of ours needs one) or an Insert
/// Count Increment (nothing was inserted) is QPACK_DECODER_STREAM_ERROR. Returns the bytes taken.
pub fn read_decoder_stream(bytes: &[u8]) -> Result<usize, Error> {
    let refuse = Error::connection(
        ErrorCode::QpackDecoderStreamError,
        "a decoder stream instruction about inserts we never made",
    );
    let mut at = 0;
    while let Some(&first) = bytes.get(at) {
        if first & 0xc0 != 0x40 {
            return Err(refuse);
        }
        let mut next = at;
        match read_integer(bytes, &mut next, 6) {
            Ok(_) => at = next,
            Err(QpackError::IntegerOverflow) => return Err(refuse),
            Err(_) => break,
        }
    }
    Ok(at)
}

#[cfg(test)]
#[path = "qpack_tests.rs"]
mod tests;
