//! The server's HTTP/2 path for cached files, allocations counted: the server runs in this
//! process under a counting allocator (as tests/serve_alloc.rs does for HTTP/1), and a
//! prior-knowledge h2c client that allocates nothing in the measured window sends batches of 16
//! GETs and 4 conditional GETs (304) for a cached 2 KiB file, each batch in one write, as h2load
//! `-m 16` does, and reads every answer's frames.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{allocations, serve_2k};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const HEADERS: u8 = 1;
const DATA: u8 = 0;
const END_STREAM: u8 = 1;
const END_HEADERS: u8 = 4;

fn frame_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// A GET's header block, HPACK without the dynamic table: :method GET and :scheme http by static
/// index, :path and :authority as literals without indexing, and an If-None-Match when given.
fn request_block(etag: Option<&str>) -> Vec<u8> {
    let mut block = vec![0x82, 0x86, 0x04, 8];
    block.extend_from_slice(b"/2k.html");
    block.extend_from_slice(&[0x01, 1, b'x']);
    if let Some(etag) = etag {
        // if-none-match is static name 41: 4-bit prefix 15, then 26.
        block.extend_from_slice(&[0x0f, 26, etag.len() as u8]);
        block.extend_from_slice(etag.as_bytes());
    }
    block
}

/// A batch of requests as one buffer of HEADERS frames, with where each stream id goes.
struct Batch {
    bytes: Vec<u8>,
    ids: Vec<usize>,
}

impl Batch {
    fn new(blocks: &[Vec<u8>]) -> Batch {
        let (mut bytes, mut ids) = (Vec::new(), Vec::new());
        for block in blocks {
            ids.push(bytes.len() + 5);
            frame_head(
                &mut bytes,
                block.len(),
                HEADERS,
                END_STREAM | END_HEADERS,
                0,
            );
            bytes.extend_from_slice(block);
        }
        Batch { bytes, ids }
    }

    /// Numbers the batch's streams from `first` (odd, rising) without allocating.
    fn number(&mut self, first: u32) -> u32 {
        let mut id = first;
        for &at in &self.ids {
            self.bytes[at..at + 4].copy_from_slice(&id.to_be_bytes());
            id += 2;
        }
        id
    }
}

/// The client's side of the connection: frames read into a fixed buffer.
struct Reader {
    buf: Vec<u8>,
    filled: usize,
}

impl Reader {
    /// Reads frames until `streams` answers have ended; returns (200s with a 2 KiB body, 304s).
    fn answers(&mut self, c: &mut TcpStream, streams: usize) -> (usize, usize) {
        let (mut ended, mut ok, mut not_modified) = (0, 0, 0);
        let mut body = 0usize;
        while ended < streams {
            let n = c.read(&mut self.buf[self.filled..]).unwrap();
            assert!(n > 0, "connection closed early");
            self.filled += n;
            let mut pos = 0;
            while self.filled - pos >= 9 {
                let h = &self.buf[pos..pos + 9];
                let len = u32::from_be_bytes([0, h[0], h[1], h[2]]) as usize;
                if self.filled - pos < 9 + len {
                    break;
                }
                let (kind, flags, first) = (h[3], h[4], self.buf.get(pos + 9).copied());
                if kind == HEADERS && flags & END_STREAM != 0 {
                    // :status 304 by its static index (11).
                    assert_eq!(first, Some(0x80 | 11));
                    (ended, not_modified) = (ended + 1, not_modified + 1);
                } else if kind == HEADERS {
                    // :status 200 by its static index (8).
                    assert_eq!(first, Some(0x80 | 8));
                } else if kind == DATA {
                    body += len;
                    if flags & END_STREAM != 0 {
                        assert_eq!(body, 2048, "one answer's body");
                        (ended, ok, body) = (ended + 1, ok + 1, 0);
                    }
                }
                pos += 9 + len;
            }
            self.buf.copy_within(pos..self.filled, 0);
            self.filled -= pos;
        }
        (ok, not_modified)
    }
}

/// Learns the file's ETag over HTTP/1.1 (the same listener), which also caches the file.
fn etag(addr: SocketAddr) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(b"GET /2k.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    c.read_to_end(&mut answer).unwrap();
    let text = String::from_utf8_lossy(&answer);
    text.lines()
        .find_map(|l| l.strip_prefix("ETag: "))
        .expect("an ETag")
        .to_string()
}

#[test]
fn h2_requests_for_cached_files_allocate_nothing() {
    let (_dir, addr) = serve_2k(true);
    let tag = etag(addr);

    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // Preface, empty SETTINGS, its ACK for the server's, and a connection window of 2^30.
    let mut opening = PREFACE.to_vec();
    frame_head(&mut opening, 0, 4, 0, 0);
    frame_head(&mut opening, 0, 4, 1, 0);
    frame_head(&mut opening, 4, 8, 0, 0);
    opening.extend_from_slice(&(1u32 << 30).to_be_bytes());
    c.write_all(&opening).unwrap();
    let mut blocks = vec![request_block(None); 16];
    blocks.extend(vec![request_block(Some(&tag)); 4]);
    let mut batch = Batch::new(&blocks);
    let mut reader = Reader {
        buf: vec![0u8; 256 << 10],
        filled: 0,
    };
    // Warm-up: the server's tables, buffers and stream map reach their working sizes.
    let mut next = 1;
    for _ in 0..20 {
        next = batch.number(next);
        c.write_all(&batch.bytes).unwrap();
        assert_eq!(reader.answers(&mut c, 20), (16, 4));
    }

    let before = allocations();
    for _ in 0..150 {
        next = batch.number(next);
        c.write_all(&batch.bytes).unwrap();
        let (ok, not_modified) = reader.answers(&mut c, 20);
        assert_eq!((ok, not_modified), (16, 4));
    }
    let during = allocations() - before;
    eprintln!("allocations during 3,000 h2 requests: {during}");
    // A handful may come from the once-a-second timers and the date's new table entry.
    assert!(during < 30, "{during} allocations for 3,000 requests");
}
