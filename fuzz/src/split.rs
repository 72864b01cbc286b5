//! How a target turns one fuzzed input into several reads: the first byte says how long each
//! piece is (0: the rest arrives whole), so the fuzzer explores where reads end as well as what
//! they hold.

/// The input after its first byte, in pieces of the size that byte says.
pub fn pieces(data: &[u8]) -> Vec<&[u8]> {
    match data.split_first() {
        None => vec![],
        Some((0, rest)) => vec![rest],
        Some((&n, rest)) => rest.chunks(usize::from(n)).collect(),
    }
}

/// The engine's reading of one HTTP/1 response from `msg` fed in `pieces`: Ok(Some(bytes it
/// took)) when complete, Ok(None) when it wants more (or the close), Err when it is garbage;
/// with the parser, for its status, length and keep-alive.
pub fn engine_read(
    pieces: &[&[u8]],
    head_request: bool,
) -> (
    Result<Option<usize>, String>,
    webstand_engine::ResponseParser,
) {
    use webstand_engine::{Feed, ResponseParser};
    let mut p = ResponseParser::default();
    p.begin(head_request);
    let mut pos = 0;
    for piece in pieces {
        match p.feed(piece) {
            Ok(Feed::Done(n)) => return (Ok(Some(pos + n)), p),
            Ok(Feed::More) => pos += piece.len(),
            Err(e) => return (Err(e.to_string()), p),
        }
    }
    (Ok(None), p)
}
