//! Our QPACK encoder: the static table and literals, no dynamic table (RFC 9204 lets an encoder
//! never insert, whatever capacity the peer offers), so a field section depends on nothing but its
//! fields and may be encoded once and copied (a cached file's answer). Each field is an indexed
//! line when the static table has it whole, a literal naming a static entry when it has the
//! name, else a literal with its name; values (and literal names) are Huffman-coded when that is
//! shorter (`webstand-h2`'s code, which QPACK shares). Credentials (authorization, cookies) are
//! marked never-indexed (the N bit), so no intermediary's table ever holds them.

use crate::qpack_table::{self, Found};
use webstand_h2::huffman;

/// The field section prefix of a section that references no dynamic entry: Required Insert
/// Count 0 and Delta Base 0 (§4.5.1).
pub const PREFIX: [u8; 2] = [0, 0];

/// Appends one field (`name` in lower case) to a section being encoded.
pub fn field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    let never = matches!(name, b"authorization" | b"cookie" | b"set-cookie");
    match qpack_table::find(name, value) {
        Found::Field(i) if !never => write_integer(out, i, 6, 0xc0),
        Found::Field(i) | Found::Name(i) => {
            // 01 N T(=1, static): the name by index.
            write_integer(out, i, 4, if never { 0x70 } else { 0x50 });
            string(out, value, 7, 0);
        }
        Found::Nothing => {
            // 001 N: the name as a string with a 3-bit length prefix.
            string(out, name, 3, if never { 0x30 } else { 0x20 });
            string(out, value, 7, 0);
        }
    }
}

/// Encodes a whole field section.
pub fn encode<'f>(fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>, out: &mut Vec<u8>) {
    out.extend_from_slice(&PREFIX);
    for (name, value) in fields {
        field(out, name, value);
    }
}

/// A string with an N-bit length prefix, the Huffman flag just above it, `pattern` above that.
fn string(out: &mut Vec<u8>, text: &[u8], prefix_bits: u32, pattern: u8) {
    let coded = huffman::encoded_len(text);
    if coded < text.len() {
        write_integer(out, coded, prefix_bits, pattern | 1 << prefix_bits);
        huffman::encode(text, out);
    } else {
        write_integer(out, text.len(), prefix_bits, pattern);
        out.extend_from_slice(text);
    }
}

/// An integer with an N-bit prefix, the prefix's byte carrying `pattern` above it.
pub fn write_integer(out: &mut Vec<u8>, value: usize, prefix_bits: u32, pattern: u8) {
    webstand_h2::hpack_encoder::write_integer(out, value, prefix_bits, pattern);
}
