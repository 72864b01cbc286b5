//! HPACK encoding (RFC 7541) of the header blocks a side sends, against a dynamic table it keeps
//! in step with the peer's decoder ([`hpack_table`](crate::hpack_table)'s, the decoder's own).
//!
//! Each field is sent in the fewest bytes its kind allows: an index when the static or dynamic
//! table holds the whole field (`:status: 200`, a server's name and content-type from the second
//! response on); otherwise a literal naming the field by index when a table holds the name, its
//! value Huffman-coded unless that is longer. A literal is added to the dynamic table
//! ("incremental indexing") unless its value changes with each message (content-length,
//! content-range, a request's :path), it would take more than half the table, or it is a
//! credential (authorization, short cookies: "never indexed", RFC 7541 §7.1.3). So a server's
//! repeated answers for one file cost a few bytes each: date is indexed too, and repeats within
//! its second.
//!
//! Why our own: `loona-hpack` 0.4's encoder (the one before) never Huffman-codes and indexes
//! every literal, content-length too, so a server's answer for one 2 KiB file took ~124 bytes
//! every time and h2load saw 29 % header space savings (93 % now, `tests/serve_h2_hpack.rs`).
//! `cargo run --release -p webstand-h2 --example hpack_cost` (under load, unrecorded): a steady
//! response block 13 bytes in 687 ns here, 124 bytes in 1 772 ns there.
//!
//! The table is at most [`ENCODER_TABLE_CAP`] bytes whatever the peer allows (memory per
//! connection), and never more than the peer's SETTINGS_HEADER_TABLE_SIZE: when that changes,
//! the next block opens with the dynamic table size updates §4.2 requires (the smallest size
//! reached since the last block, then the final one, when they differ).

use crate::hpack_table::field_size;
use crate::hpack_table::{Found, Table};
use crate::huffman;

/// The largest dynamic table our encoder keeps, whatever the peer allows: a bound on memory per
/// connection, and RFC 7541's default.
pub const ENCODER_TABLE_CAP: u32 = 4096;

/// How a literal field is represented (RFC 7541 §6.2): its first byte's pattern and the prefix
/// its name index is written in.
#[derive(Clone, Copy, PartialEq)]
enum Literal {
    Indexed,
    WithoutIndexing,
    NeverIndexed,
}

/// A connection's encoding context for the header blocks we send.
pub struct Encoder {
    table: Table,
    /// Our table's size, as the peer's decoder knows it after our last block.
    size: u32,
    /// The size updates the next block opens with: the smallest size since the last block, and
    /// the current one.
    pending: Option<(u32, u32)>,
    huffman: bool,
}

impl Default for Encoder {
    fn default() -> Encoder {
        Encoder {
            table: Table::new(ENCODER_TABLE_CAP as usize),
            size: ENCODER_TABLE_CAP,
            pending: None,
            huffman: true,
        }
    }
}

impl Encoder {
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE: our table follows it up to [`ENCODER_TABLE_CAP`];
    /// a smaller one evicts now, and the next block says so (RFC 7541 §6.3).
    pub fn set_peer_table_size(&mut self, size: u32) {
        let size = size.min(ENCODER_TABLE_CAP);
        let current = self.pending.map_or(self.size, |(_, now)| now);
        if size == current {
            return;
        }
        let smallest = self.pending.map_or(self.size, |(low, _)| low).min(size);
        self.pending = Some((smallest, size));
        self.table.resize(size as usize);
    }

    /// Whether literals are Huffman-coded when that is shorter (the default), or always sent as
    /// they are (easier to read on the wire; RFC 7541's C.3 and C.5 examples).
    pub fn set_huffman(&mut self, on: bool) {
        self.huffman = on;
    }

    /// Appends the block encoding `fields` to `out`.
    pub fn encode<'f>(
        &mut self,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        out: &mut Vec<u8>,
    ) {
        if let Some((smallest, size)) = self.pending.take() {
            if smallest < size {
                write_integer(out, smallest as usize, 5, 0x20);
            }
            write_integer(out, size as usize, 5, 0x20);
            self.size = size;
        }
        for (name, value) in fields {
            self.field(name, value, out);
        }
    }

    fn field(&mut self, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
        let name_index = match self.table.find(name, value) {
            Found::Field(index) => return write_integer(out, index, 7, 0x80),
            Found::Name(index) => index,
            Found::Nothing => 0,
        };
        let kind = self.kind(name, value);
        let (prefix, pattern) = match kind {
            Literal::Indexed => (6, 0x40),
            Literal::WithoutIndexing => (4, 0x00),
            Literal::NeverIndexed => (4, 0x10),
        };
        write_integer(out, name_index, prefix, pattern);
        if name_index == 0 {
            self.string(name, out);
        }
        self.string(value, out);
        if kind == Literal::Indexed {
            self.table.insert(name, value);
        }
    }

    /// Which literal a field not wholly in the tables is sent as.
    fn kind(&self, name: &[u8], value: &[u8]) -> Literal {
        match name {
            b"authorization" | b"proxy-authorization" => return Literal::NeverIndexed,
            // Short cookies are guessable one request at a time (nghttp2 draws the line at 20).
            b"cookie" if value.len() < 20 => return Literal::NeverIndexed,
            b"content-length" | b"content-range" | b":path" => return Literal::WithoutIndexing,
            _ => {}
        }
        if field_size(name, value) * 2 > self.size_now() {
            return Literal::WithoutIndexing;
        }
        Literal::Indexed
    }

    /// The table size the next block is encoded against.
    fn size_now(&self) -> usize {
        self.pending.map_or(self.size, |(_, now)| now) as usize
    }

    /// A string literal (RFC 7541 §5.2), Huffman-coded unless that is longer (at equal length
    /// too, as the RFC's examples do).
    fn string(&self, text: &[u8], out: &mut Vec<u8>) {
        let coded = huffman::encoded_len(text);
        if self.huffman && coded <= text.len() {
            write_integer(out, coded, 7, 0x80);
            huffman::encode(text, out);
        } else {
            write_integer(out, text.len(), 7, 0x00);
            out.extend_from_slice(text);
        }
    }
}

/// An integer with an N-bit prefix (RFC 7541 §5.1), the prefix's byte carrying `pattern` above it.
pub fn write_integer(out: &mut Vec<u8>, value: usize, prefix_bits: u32, pattern: u8) {
    let max = (1usize << prefix_bits) - 1;
    if value < max {
        out.push(pattern | value as u8);
        return;
    }
    out.push(pattern | max as u8);
    let mut rest = value - max;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

#[cfg(test)]
#[path = "hpack_encoder_tests.rs"]
mod tests;
