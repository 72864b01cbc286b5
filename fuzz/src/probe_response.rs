//! The robustness probe's response reader (`probe_response`): what the probe makes of a server's
//! answers to its hostile cases, read by read (its `reader.rs`, the reading half of a probe
//! connection). Whatever the server sends, read whole or in pieces of any size the reader sees the
//! same responses with the same statuses, the same garbage or none, and the same leak: a marker is
//! found exactly when the bytes hold one, wherever the reads cut it; what it holds stays within the
//! longest marker and the response parser's head limit.

use crate::alloc::peak_during;
use crate::split::pieces;
use webstand_probe::reader::{Reader, STATUSES_KEPT};
use webstand_probe::result::Seen;
use webstand_probe::LeakTarget;

/// The leak targets the probe looks for by default (/etc/passwd's root line) and one of a user's.
fn markers() -> Vec<LeakTarget> {
    vec![
        webstand_probe::passwd(),
        webstand_probe::secret("../secret.txt", "s3cr3t-m4rk3r").expect("a valid secret"),
    ]
}

/// What the reader saw of `reads`, the server closing after the last if `closed`.
fn read(reads: &[&[u8]], markers: &[LeakTarget], closed: bool) -> Seen {
    let mut reader = Reader::default();
    let mut seen = Seen::default();
    for (i, r) in reads.iter().enumerate() {
        reader.absorb(&mut seen, r, markers, i as u64);
    }
    if closed {
        reader.closed(&mut seen);
    }
    seen
}

/// The first byte the size of the reads (as `split.rs`), its top bit whether the server closes
/// after the last; the rest the server's bytes.
pub fn target(data: &[u8]) {
    let markers = markers();
    let closed = data.first().is_some_and(|b| b & 0x80 != 0);
    let reads = pieces(data);
    let bytes = reads.concat();
    let (seen, peak) = peak_during(|| read(&reads, &markers, closed));
    // The parser's head limit (64 KiB), and what it holds of a body: nothing, it only counts.
    assert!(
        peak <= 2 * bytes.len() + (128 << 10),
        "held {peak} bytes for {}",
        bytes.len()
    );
    let whole = read(&[&bytes], &markers, closed);
    assert_eq!(seen.bytes, bytes.len() as u64);
    assert_eq!(
        (seen.responses, &seen.statuses, seen.garbage.is_some()),
        (whole.responses, &whole.statuses, whole.garbage.is_some()),
        "in pieces and whole the reader sees other responses"
    );
    assert_eq!(
        seen.statuses.len() as u64,
        seen.responses.min(STATUSES_KEPT as u64)
    );
    let held = markers.iter().find(|t| {
        t.markers
            .iter()
            .any(|m| bytes.windows(m.len()).any(|w| w == &m[..]))
    });
    assert_eq!(
        seen.leaked.as_deref(),
        held.map(|t| t.name.as_str()),
        "a leak marker found where the bytes hold none, or missed"
    );
}

/// Seeds: answers our own server writes (through its CGI answer path), pipelined, with a leak.
pub fn seeds() -> Vec<Vec<u8>> {
    let ok = webstand_server::fuzzing::cgi_answer(b"Content-Type: text/plain\n\nhello", false).1;
    let not = webstand_server::fuzzing::cgi_answer(b"Status: 404 Not Found\n\n<p>no</p>", false).1;
    let leak = webstand_server::fuzzing::cgi_answer(
        b"Content-Type: text/plain\n\nroot:x:0:0:root:/root:/bin/sh\n",
        false,
    )
    .1;
    vec![
        [&[0u8][..], &ok, &not].concat(),
        [&[7u8][..], &ok, &leak].concat(),
        [
            &[0x85u8][..],
            b"HTTP/1.0 200 OK\r\n\r\nruns to the close s3cr3t-m4rk3r".as_slice(),
        ]
        .concat(),
        [
            &[3u8][..],
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\nnoHTTP/9 garbage\r\n\r\n"
                .as_slice(),
        ]
        .concat(),
    ]
}
