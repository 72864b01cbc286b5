//! A request stream's response as HTTP/3 frames (RFC 9114 §4.1): the stream's bytes as they come
//! from QUIC, cut into HEADERS (a field section, whole) and DATA (its payload handed on as it
//! arrives, never gathered), unknown and reserved frame types skipped. Only an incomplete frame
//! head or field section is held between reads; a frame the stream may not carry (SETTINGS,
//! GOAWAY, HTTP/2's types, PUSH_PROMISE, which we never allowed) is the connection's error.

use webstand_h3::frame::{self, kind, Frame, Place, Sender};
use webstand_h3::{Error, ErrorCode};

/// A part of the response, in order.
pub(crate) enum Part<'a> {
    /// A HEADERS frame's field section: the head, or trailers after DATA.
    Headers(&'a [u8]),
    /// DATA payload bytes.
    Data(&'a [u8]),
}

/// What of a request stream's frames is read so far.
#[derive(Default)]
pub(crate) struct Frames {
    /// Bytes of an incomplete frame head or HEADERS payload.
    held: Vec<u8>,
    /// DATA payload bytes still to come in the current frame.
    data_left: u64,
}

impl Frames {
    /// Takes `input`, handing each part to `on`; `max_section`: the largest field section taken.
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        max_section: u64,
        on: &mut impl FnMut(Part) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if self.held.is_empty() {
            let used = self.parse(input, max_section, on)?;
            self.held.extend_from_slice(&input[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.held);
            buf.extend_from_slice(input);
            let used = self.parse(&buf, max_section, on)?;
            buf.drain(..used);
            self.held = buf;
        }
        Ok(())
    }

    /// Whether the stream ended on a frame boundary (its FIN then ends the response).
    pub(crate) fn whole(&self) -> bool {
        self.held.is_empty() && self.data_left == 0
    }

    /// Acts on every whole frame (and every DATA byte) in `bytes`; returns the bytes used.
    fn parse(
        &mut self,
        bytes: &[u8],
        max_section: u64,
        on: &mut impl FnMut(Part) -> Result<(), Error>,
    ) -> Result<usize, Error> {
        let mut pos = 0;
        loop {
            if self.data_left > 0 {
                let n =
                    (bytes.len() - pos).min(usize::try_from(self.data_left).unwrap_or(usize::MAX));
                if n == 0 {
                    return Ok(pos);
                }
                on(Part::Data(&bytes[pos..pos + n]))?;
                pos += n;
                self.data_left -= n as u64;
                continue;
            }
            let Some(head) = frame::read_head(&bytes[pos..]) else {
                return Ok(pos);
            };
            frame::check(head.kind, Place::Request, Sender::Server)?;
            if head.kind == kind::DATA {
                pos += head.size;
                self.data_left = head.len;
                continue;
            }
            if head.kind == kind::HEADERS && head.len > max_section {
                return Err(Error::stream(
                    ErrorCode::ExcessiveLoad,
                    "a response field section larger than we announced",
                ));
            }
            if head.kind == kind::PUSH_PROMISE {
                return Err(Error::connection(
                    ErrorCode::IdError,
                    "PUSH_PROMISE although we allowed no push",
                ));
            }
            // An unknown type's payload is held until whole (64 KiB at most), then skipped.
            let Ok(len) = usize::try_from(head.len) else {
                return Err(Error::connection(ErrorCode::FrameError, "a frame too long"));
            };
            let end = pos + head.size + len;
            if end > bytes.len() {
                if head.kind != kind::HEADERS && head.len > 64 * 1024 {
                    return Err(Error::connection(
                        ErrorCode::ExcessiveLoad,
                        "an unknown frame type too long to skip",
                    ));
                }
                return Ok(pos);
            }
            if let Frame::Headers(section) = frame::parse(&head, &bytes[pos + head.size..end])? {
                on(Part::Headers(section))?;
            }
            pos = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_h3::frame::write;

    fn parts(chunks: &[&[u8]]) -> Result<Vec<(char, Vec<u8>)>, Error> {
        let mut f = Frames::default();
        let mut got = Vec::new();
        for c in chunks {
            f.feed(c, 1000, &mut |p| {
                got.push(match p {
                    Part::Headers(s) => ('H', s.to_vec()),
                    Part::Data(d) => ('D', d.to_vec()),
                });
                Ok(())
            })?;
        }
        assert!(f.whole());
        Ok(got)
    }

    #[test]
    fn frames_cut_anywhere_give_the_same_parts_and_unknown_types_are_skipped() {
        let mut wire = Vec::new();
        write::headers(&mut wire, b"head");
        write::head(&mut wire, 0x21, 3); // a reserved type
        wire.extend_from_slice(b"xyz");
        write::data_head(&mut wire, 5);
        wire.extend_from_slice(b"hello");
        write::headers(&mut wire, b"trl");
        let whole = parts(&[&wire]).unwrap();
        assert_eq!(
            whole,
            vec![
                ('H', b"head".to_vec()),
                ('D', b"hello".to_vec()),
                ('H', b"trl".to_vec())
            ]
        );
        for cut in 1..wire.len() {
            let got = parts(&[&wire[..cut], &wire[cut..]]).unwrap();
            let data: Vec<u8> = got
                .iter()
                .filter(|(k, _)| *k == 'D')
                .flat_map(|(_, d)| d.clone())
                .collect();
            assert_eq!(data, b"hello", "cut at {cut}");
            assert_eq!(got.iter().filter(|(k, _)| *k == 'H').count(), 2);
        }
    }

    #[test]
    fn frames_a_request_stream_may_not_carry_are_errors() {
        let mut wire = Vec::new();
        write::settings(&mut wire, &[]);
        assert_eq!(
            parts(&[&wire]).unwrap_err().code(),
            ErrorCode::FrameUnexpected
        );
        let mut push = Vec::new();
        write::head(&mut push, kind::PUSH_PROMISE, 2);
        push.extend_from_slice(&[0, 0]);
        assert_eq!(parts(&[&push]).unwrap_err().code(), ErrorCode::IdError);
    }
}
