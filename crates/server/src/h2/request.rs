//! A request as an HTTP/2 HEADERS block carries it: the block decoded by HPACK into a
//! `field_list::Collect`, which checks the list (RFC 9113 §8.2, §8.3; a failure is a stream error,
//! PROTOCOL_ERROR, that leaves the connection alive) and spells it in HTTP/1 text form.

use crate::field_list::{Collect, Meta};
use crate::request::{Head, Version};
use webstand_h2::hpack::{Decoder, HpackRefusal};

/// Decodes a block into `text`, gathering in `c`. The outer error is HPACK's (the connection's
/// or the list's size), the inner one a malformed request.
pub fn decode(
    decoder: &mut Decoder,
    c: &mut Collect,
    block: &[u8],
    text: &mut Vec<u8>,
) -> Result<Result<Meta, &'static str>, HpackRefusal> {
    c.clear();
    decoder.decode(block, |name, value| {
        if c.malformed.is_none() {
            if let Err(why) = c.field(name, value) {
                c.malformed = Some(why);
            }
        }
    })?;
    if let Some(why) = c.malformed {
        return Ok(Err(why));
    }
    Ok(c.finish(text, Version::Http2))
}

/// The handlers' head for a request `decode` spelled.
pub fn head_of(text: &[u8], body: Option<u64>) -> Head<'_> {
    crate::field_list::head_of(text, body, Version::Http2)
}
