//! What a script hands the server: a FastCGI backend's records and a CGI program's output, read
//! as the server reads them and answered through the server's HTTP/1 writer; whatever answer it
//! writes, the engine's response reader reads back whole, with the same status.

use crate::split::engine_read;
use webstand_server::fuzzing::{cgi_answer, fastcgi_answer, FcgiEnd};

/// The first byte: a HEAD's answer or not, and the size of the reads; the rest, the backend's
/// record stream. An answer the server wrote parses, all of it, with the status it named.
pub fn fastcgi(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let head_only = flags & 0x80 != 0;
    let step = usize::from(flags & 0x7f).max(1);
    let pieces: Vec<&[u8]> = rest.chunks(step).collect();
    let (end, written) = fastcgi_answer(&pieces, head_only, 1 << 16);
    if let FcgiEnd::Answered(status) = end {
        read_back(&written, head_only, status);
    } else {
        // A refused or unfinished answer may have streamed a head and part of a body: it parses
        // as far as it goes.
        let (r, _) = engine_read(&[&written], head_only);
        assert!(r.is_ok(), "a cut answer is still well framed: {r:?}");
    }
}

/// The first byte: a HEAD's answer or not; the rest, the program's output. The answer (the
/// server's own 502 for output it refuses) parses, all of it, with the status it named.
pub fn cgi_output(data: &[u8]) {
    let Some((&flags, output)) = data.split_first() else {
        return;
    };
    let head_only = flags & 1 != 0;
    let (status, written) = cgi_answer(output, head_only);
    read_back(&written, head_only, status);
}

fn read_back(written: &[u8], head_only: bool, status: u16) {
    let (r, p) = engine_read(&[written], head_only);
    assert_eq!(
        r,
        Ok(Some(written.len())),
        "the answer does not read back: {:?}",
        String::from_utf8_lossy(&written[..written.len().min(400)])
    );
    assert_eq!(p.status, status);
}
