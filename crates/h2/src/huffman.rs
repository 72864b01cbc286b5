//! HPACK's Huffman code (RFC 7541 Appendix B): a decoder driven by a table built once, and the
//! encoder that tests and benchmarks use to produce what curl, h2load and nginx send.
//!
//! The code is canonical: sorting the symbols by (code length, symbol) and counting up, shifting
//! left whenever the length grows, yields exactly the RFC's codes. So the 257 code lengths below are
//! the whole table, and the decoder's state machine is derived from them on first use.
//!
//! Decoding reads four bits at a time. A state is an inner node of the code tree (256 of them for
//! 257 leaves); each (state, nibble) entry says the next state and the symbol completed on the way,
//! if any. The shortest code is 5 bits long, so one nibble completes at most one symbol. Padding is
//! valid when the string ends at the root, or on an all-ones path at most 7 bits deep (a prefix of
//! EOS shorter than a byte); reaching EOS itself is an error.

use std::sync::OnceLock;

/// Why a Huffman-coded string was refused (RFC 7541 §5.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HuffmanError {
    /// The EOS symbol appears inside the string.
    EosInString,
    /// The padding is not the most significant bits of EOS (not all ones).
    PaddingNotOnes,
    /// The padding is longer than 7 bits.
    PaddingTooLong,
}

/// The code length of each symbol, 0–255 and EOS (256), in RFC 7541 Appendix B's order.
#[rustfmt::skip]
const CODE_LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
    5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
    13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
    15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
    6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
    30,
];

const EOS: usize = 256;

/// Each symbol's code, right-aligned, assigned canonically from [`CODE_LENGTHS`].
fn codes() -> &'static [u32; 257] {
    static CODES: OnceLock<[u32; 257]> = OnceLock::new();
    CODES.get_or_init(|| {
        let mut order: Vec<usize> = (0..257).collect();
        order.sort_by_key(|&symbol| (CODE_LENGTHS[symbol], symbol));
        let mut codes = [0u32; 257];
        let (mut code, mut length) = (0u32, CODE_LENGTHS[order[0]]);
        for symbol in order {
            code <<= CODE_LENGTHS[symbol] - length;
            length = CODE_LENGTHS[symbol];
            codes[symbol] = code;
            code += 1;
        }
        codes
    })
}

/// Appends the Huffman coding of `input` to `out`, padded with the most significant bits of EOS.
pub fn encode(input: &[u8], out: &mut Vec<u8>) {
    let codes = codes();
    let (mut bits, mut pending) = (0u64, 0u32);
    for &byte in input {
        let length = u32::from(CODE_LENGTHS[byte as usize]);
        bits = (bits << length) | u64::from(codes[byte as usize]);
        pending += length;
        while pending >= 8 {
            pending -= 8;
            out.push((bits >> pending) as u8);
        }
    }
    if pending > 0 {
        let pad = 8 - pending;
        out.push(((bits << pad) as u8) | ((1u8 << pad) - 1));
    }
}

/// The length of `input` once Huffman-coded, in bytes.
pub fn encoded_len(input: &[u8]) -> usize {
    let bits: usize = input
        .iter()
        .map(|&b| CODE_LENGTHS[b as usize] as usize)
        .sum();
    bits.div_ceil(8)
}

const EMITS: u8 = 1;
const HITS_EOS: u8 = 2;

/// One (state, nibble) transition.
#[derive(Clone, Copy, Default)]
struct Step {
    next: u8,
    symbol: u8,
    flags: u8,
}

/// The state machine: 16 steps per state, and for each state whether a string may end there.
struct Machine {
    steps: Vec<Step>,
    end: Vec<Result<(), HuffmanError>>,
}

/// A node of the code tree while the machine is built: a child is an inner node or a symbol.
#[derive(Clone, Copy)]
enum Child {
    Inner(usize),
    Leaf(usize),
}

/// The code tree's inner nodes (0 is the root), each with its two children, depth and whether
/// the path to it is all ones.
fn tree() -> (Vec<[Child; 2]>, Vec<(u8, bool)>) {
    let codes = codes();
    let mut nodes = vec![[Child::Leaf(usize::MAX); 2]];
    let mut shape = vec![(0u8, true)];
    for symbol in 0..257 {
        let length = CODE_LENGTHS[symbol];
        let mut node = 0;
        for depth in 1..=length {
            let bit = (codes[symbol] >> (length - depth) & 1) as usize;
            if depth == length {
                nodes[node][bit] = Child::Leaf(symbol);
                break;
            }
            node = match nodes[node][bit] {
                Child::Inner(next) => next,
                Child::Leaf(_) => {
                    nodes.push([Child::Leaf(usize::MAX); 2]);
                    shape.push((depth, shape[node].1 && bit == 1));
                    nodes[node][bit] = Child::Inner(nodes.len() - 1);
                    nodes.len() - 1
                }
            };
        }
    }
    (nodes, shape)
}

fn machine() -> &'static Machine {
    static MACHINE: OnceLock<Machine> = OnceLock::new();
    MACHINE.get_or_init(|| {
        let (nodes, shape) = tree();
        assert!(nodes.len() <= 256, "a state fits a byte");
        let mut steps = vec![Step::default(); nodes.len() * 16];
        for (state, step) in steps.iter_mut().enumerate() {
            let (mut node, nibble) = (state / 16, state % 16);
            for shift in (0..4).rev() {
                match nodes[node][nibble >> shift & 1] {
                    Child::Inner(next) => node = next,
                    Child::Leaf(EOS) => step.flags |= HITS_EOS,
                    Child::Leaf(symbol) => {
                        (step.symbol, step.flags) = (symbol as u8, step.flags | EMITS);
                        node = 0;
                    }
                }
            }
            step.next = node as u8;
        }
        let end = shape
            .iter()
            .map(|&(depth, ones)| match (depth, ones) {
                (0, _) => Ok(()),
                (_, false) => Err(HuffmanError::PaddingNotOnes),
                (1..=7, true) => Ok(()),
                _ => Err(HuffmanError::PaddingTooLong),
            })
            .collect();
        Machine { steps, end }
    })
}

/// Appends the decoding of the Huffman-coded `input` to `out`.
pub fn decode(input: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
    let machine = machine();
    out.reserve(input.len() * 8 / 5);
    let mut state = 0usize;
    for &byte in input {
        for nibble in [byte >> 4, byte & 0x0f] {
            let step = machine.steps[state * 16 + nibble as usize];
            if step.flags & HITS_EOS != 0 {
                return Err(HuffmanError::EosInString);
            }
            if step.flags & EMITS != 0 {
                out.push(step.symbol);
            }
            state = step.next as usize;
        }
    }
    machine.end[state]
}

/// How many recent strings a [`Recent`] keeps, and the longest (coded) it keeps.
const RECENT: usize = 8;
const RECENT_MAX_LEN: usize = 64;

/// The last few Huffman-coded strings a connection decoded, with their decodings. A server
/// answering the same file sends the same coded values on every response (nginx: `server`,
/// `date`, `content-type`, `last-modified`, `etag`, each Huffman-coded, none indexed), and a client
/// the same coded `:path`: comparing a few bytes costs less than walking the state machine over
/// them (which was 7.5 % of `bench --h2`'s CPU against nginx in a profile). Decoding is a pure
/// function of the coded bytes, so a kept decoding is exact; failures are not kept.
#[derive(Default)]
pub struct Recent {
    /// (coded, decoded) pairs, the oldest replaced first once full.
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    next: usize,
}

impl Recent {
    /// As [`decode`], answering from the kept strings when `input` is one of them.
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), HuffmanError> {
        if input.len() > RECENT_MAX_LEN {
            return decode(input, out);
        }
        if let Some((_, plain)) = self.entries.iter().find(|(coded, _)| coded[..] == *input) {
            out.extend_from_slice(plain);
            return Ok(());
        }
        let start = out.len();
        decode(input, out)?;
        let plain = &out[start..];
        if self.entries.len() < RECENT {
            self.entries.push((input.to_vec(), plain.to_vec()));
            return Ok(());
        }
        let (coded, kept) = &mut self.entries[self.next];
        coded.clear();
        coded.extend_from_slice(input);
        kept.clear();
        kept.extend_from_slice(plain);
        self.next = (self.next + 1) % RECENT;
        Ok(())
    }
}

#[cfg(test)]
#[path = "huffman_tests.rs"]
mod tests;
