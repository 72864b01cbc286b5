//! The chunked transfer coding (RFC 9112 §7.1): one incremental decoder for both directions.
//!
//! It is fed whatever bytes arrived and hands the chunk data to a callback without copying, so the
//! load generator can count a response body read by read and the server can gather a request body.
//! Chunk extensions and trailer fields are skipped. The two roles differ only in [`Policy`]:
//!
//! - a server reading requests is **strict**: every line ends in CRLF (a bare LF or CR is read
//!   differently by different parsers, a smuggling shape), only `;` may follow the size, a size or
//!   trailer line is at most 4 KiB, and the decoded body has a ceiling;
//! - a client reading responses is **lenient**, like curl and ab: bare LF line ends and blanks
//!   before an extension are accepted, and there is no ceiling.

/// Most hex digits a chunk size may have (15: the size fits comfortably in a u64).
const MAX_SIZE_DIGITS: u8 = 15;
/// Longest size or trailer line a strict decoder reads (bytes before the line's CRLF, minus one).
const MAX_LINE: u32 = 4096;

/// How strictly a decoder reads, and how much data it accepts in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub strict: bool,
    /// Most decoded bytes; a chunk that would pass this is [`ChunkError::TooLarge`].
    pub max: u64,
}

impl Policy {
    /// For request bodies: strict, at most `max` decoded bytes.
    pub fn strict(max: u64) -> Policy {
        Policy { strict: true, max }
    }

    /// For response bodies: lenient and unbounded.
    pub const LENIENT: Policy = Policy {
        strict: false,
        max: u64::MAX,
    };
}

/// Why a chunked body cannot be framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkError {
    BadSize,
    SizeTooLong,
    BadSizeLine,
    DataTooLong,
    BadEnd,
    /// A bare LF (strict only).
    BareLf,
    /// A size or trailer line over the limit (strict only).
    LineTooLong,
    /// More data than the policy's ceiling.
    TooLarge,
}

impl ChunkError {
    /// The status a server answers a request body with it: 413 over the ceiling, else 400.
    pub fn status(self) -> u16 {
        match self {
            ChunkError::TooLarge => 413,
            _ => 400,
        }
    }

    /// A short description, as the load generator reports it.
    pub fn message(self) -> &'static str {
        match self {
            ChunkError::BadSize => "bad chunk size",
            ChunkError::SizeTooLong => "chunk size too large",
            ChunkError::BadSizeLine => "bad chunk size line",
            ChunkError::DataTooLong => "chunk data longer than its size",
            ChunkError::BadEnd => "bad end of chunked body",
            ChunkError::BareLf => "bare LF in chunked body",
            ChunkError::LineTooLong => "chunk line too long",
            ChunkError::TooLarge => "chunked body too large",
        }
    }
}

/// Where a [`Decoder::feed`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Every byte was consumed and the body goes on.
    More,
    /// The body ended after this many bytes of the input; the rest belongs to the next message.
    Done(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading hex digits of a chunk size (`digits` so far).
    Size {
        size: u64,
        digits: u8,
    },
    /// Skipping a chunk extension up to the end of the line.
    Ext {
        size: u64,
    },
    /// Saw CR after the size line, expecting LF.
    SizeLf {
        size: u64,
    },
    Data {
        left: u64,
    },
    DataCr,
    DataLf,
    /// At the start of a trailer line (or the final empty line).
    TrailerStart,
    /// Inside a trailer field line.
    TrailerLine,
    /// Saw CR at the end of a trailer field line (strict only).
    TrailerLf,
    /// Saw CR of the final empty line.
    EndLf,
}

/// Decodes one chunked body, fed in pieces.
#[derive(Debug, Clone)]
pub struct Decoder {
    state: State,
    policy: Policy,
    /// Bytes of the current size or trailer line so far.
    line: u32,
    /// Chunk sizes announced so far.
    total: u64,
}

impl Decoder {
    pub fn new(policy: Policy) -> Decoder {
        Decoder {
            state: State::Size { size: 0, digits: 0 },
            policy,
            line: 0,
            total: 0,
        }
    }

    /// Reads `input`, handing every piece of chunk data to `data` in order.
    pub fn feed(
        &mut self,
        input: &[u8],
        mut data: impl FnMut(&[u8]),
    ) -> Result<Progress, ChunkError> {
        let mut pos = 0;
        while pos < input.len() {
            if let State::Data { left } = self.state {
                let take = left.min((input.len() - pos) as u64) as usize;
                data(&input[pos..pos + take]);
                pos += take;
                let left = left - take as u64;
                self.state = if left == 0 {
                    State::DataCr
                } else {
                    State::Data { left }
                };
                continue;
            }
            let b = input[pos];
            pos += 1;
            if !self.step(b)? {
                return Ok(Progress::Done(pos));
            }
        }
        Ok(Progress::More)
    }

    /// One byte of framing (anything but chunk data); false once the body has ended.
    fn step(&mut self, b: u8) -> Result<bool, ChunkError> {
        let strict = self.policy.strict;
        if strict && b != b'\r' && b != b'\n' && self.in_line() {
            if self.line > MAX_LINE {
                return Err(ChunkError::LineTooLong);
            }
            self.line += 1;
        }
        let lf_ends_a_line = matches!(
            self.state,
            State::SizeLf { .. } | State::DataLf | State::TrailerLf | State::EndLf
        );
        if strict && b == b'\n' && !lf_ends_a_line {
            return Err(ChunkError::BareLf);
        }
        self.state = match self.state {
            State::Size { size, digits } => match b {
                b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                    if digits >= MAX_SIZE_DIGITS {
                        return Err(ChunkError::SizeTooLong);
                    }
                    let v = (b as char).to_digit(16).unwrap_or(0) as u64;
                    State::Size {
                        size: size * 16 + v,
                        digits: digits + 1,
                    }
                }
                _ if digits == 0 => return Err(ChunkError::BadSize),
                b';' => State::Ext { size },
                b' ' | b'\t' if !strict => State::Ext { size },
                b'\r' => State::SizeLf { size },
                b'\n' => self.after_size(size)?,
                _ => return Err(ChunkError::BadSize),
            },
            State::Ext { size } => match b {
                b'\r' => State::SizeLf { size },
                b'\n' => self.after_size(size)?,
                _ => State::Ext { size },
            },
            State::SizeLf { size } => match b {
                b'\n' => self.after_size(size)?,
                _ => return Err(ChunkError::BadSizeLine),
            },
            State::Data { .. } => unreachable!("chunk data is consumed in bulk"),
            State::DataCr => match b {
                b'\r' => State::DataLf,
                b'\n' => self.line_start(State::Size { size: 0, digits: 0 }),
                _ => return Err(ChunkError::DataTooLong),
            },
            State::DataLf => match b {
                b'\n' => self.line_start(State::Size { size: 0, digits: 0 }),
                _ => return Err(ChunkError::DataTooLong),
            },
            State::TrailerStart => match b {
                b'\r' => State::EndLf,
                b'\n' => return Ok(false),
                _ => State::TrailerLine,
            },
            State::TrailerLine => match b {
                b'\r' if strict => State::TrailerLf,
                b'\n' => self.line_start(State::TrailerStart),
                _ => State::TrailerLine,
            },
            State::TrailerLf => match b {
                b'\n' => self.line_start(State::TrailerStart),
                _ => return Err(ChunkError::BadEnd),
            },
            State::EndLf => match b {
                b'\n' => return Ok(false),
                _ => return Err(ChunkError::BadEnd),
            },
        };
        Ok(true)
    }

    /// Inside a size or trailer line (where a strict decoder counts the line's length).
    fn in_line(&self) -> bool {
        matches!(
            self.state,
            State::Size { .. } | State::Ext { .. } | State::TrailerStart | State::TrailerLine
        )
    }

    fn line_start(&mut self, state: State) -> State {
        self.line = 0;
        state
    }

    /// The size line is complete: the chunk's data follows, or the trailer after the last chunk.
    fn after_size(&mut self, size: u64) -> Result<State, ChunkError> {
        if size == 0 {
            return Ok(self.line_start(State::TrailerStart));
        }
        self.total = self.total.saturating_add(size);
        if self.total > self.policy.max {
            return Err(ChunkError::TooLarge);
        }
        Ok(self.line_start(State::Data { left: size }))
    }
}

/// Decodes a whole body at the start of `input` into `out`: `Ok(None)` while it is incomplete
/// (`out` left as it was), `Ok(Some(n))` when it took `n` bytes of `input`.
pub fn decode_all(
    input: &[u8],
    policy: Policy,
    out: &mut Vec<u8>,
) -> Result<Option<usize>, ChunkError> {
    let start = out.len();
    let mut decoder = Decoder::new(policy);
    match decoder.feed(input, |d| out.extend_from_slice(d)) {
        Ok(Progress::Done(n)) => Ok(Some(n)),
        Ok(Progress::More) => {
            out.truncate(start);
            Ok(None)
        }
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(input: &[u8], max: u64) -> Result<Option<(usize, Vec<u8>)>, ChunkError> {
        let mut out = Vec::new();
        decode_all(input, Policy::strict(max), &mut out).map(|n| n.map(|n| (n, out)))
    }

    /// Feeds `input` in pieces of `step` bytes to a lenient decoder.
    fn lenient_in_steps(input: &[u8], step: usize) -> Result<Option<(usize, Vec<u8>)>, ChunkError> {
        let mut d = Decoder::new(Policy::LENIENT);
        let mut out = Vec::new();
        for (i, piece) in input.chunks(step).enumerate() {
            if let Progress::Done(n) = d.feed(piece, |b| out.extend_from_slice(b))? {
                return Ok(Some((i * step + n, out)));
            }
        }
        Ok(None)
    }

    #[test]
    fn both_policies_decode_a_plain_body_in_any_pieces() {
        let body = b"5;name=\"v;x\"\r\nhello\r\nA\r\n0123456789\r\n0;last\r\nX-Sum: 1\r\n\r\nNEXT";
        let want = Some((body.len() - 4, b"hello0123456789".to_vec()));
        assert_eq!(strict(body, 100), Ok(want.clone()));
        for step in [1, 2, 3, 7, body.len()] {
            assert_eq!(
                lenient_in_steps(body, step),
                Ok(want.clone()),
                "step {step}"
            );
        }
    }

    #[test]
    fn strict_refuses_what_lenient_accepts() {
        for loose in [
            &b"3\nabc\r\n0\r\n\r\n"[..],
            b"3 ;x\r\nabc\r\n0\r\n\r\n",
            b"3\r\nabc\n0\r\n\r\n",
        ] {
            assert!(lenient_in_steps(loose, 1).unwrap().is_some(), "{loose:?}");
            assert!(strict(loose, 100).is_err(), "{loose:?}");
        }
        let long_ext = format!("1;{}\r\na\r\n0\r\n\r\n", "x".repeat(5000));
        assert_eq!(
            strict(long_ext.as_bytes(), 100),
            Err(ChunkError::LineTooLong)
        );
        assert!(lenient_in_steps(long_ext.as_bytes(), 100)
            .unwrap()
            .is_some());
    }

    #[test]
    fn malformed_bodies_fail_in_both() {
        for bad in [
            &b"x\r\n"[..],
            b"-1\r\n",
            b"0x3\r\nabc\r\n",
            b"3\r\nabcd\r\n",
            b" 3\r\nabc\r\n",
            b"fffffffffffffffff\r\n",
            b"1\r\na\r\n0\r\n\rX",
        ] {
            assert!(strict(bad, 100).is_err(), "{bad:?}");
            assert!(lenient_in_steps(bad, 1).is_err(), "{bad:?}");
        }
        assert_eq!(strict(b"ff\r\n", 100), Err(ChunkError::TooLarge));
        assert_eq!(
            strict(b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\nNEXT", 100),
            Ok(Some((24, b"abcde".to_vec())))
        );
        assert_eq!(strict(b"3\r\nab", 100), Ok(None));
    }
}
