//! The server's hot path allocates nothing per request: the server runs in this process under a
//! counting allocator, and a client that itself allocates nothing in the measured window sends
//! keep-alive, pipelined and conditional requests for a cached file.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::{allocations, serve_2k};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Reads exactly one response of `len` bytes.
fn read_response(c: &mut TcpStream, buf: &mut [u8], len: usize) {
    let mut got = 0;
    while got < len {
        let n = c.read(&mut buf[got..len]).unwrap();
        assert!(n > 0, "connection closed early");
        got += n;
    }
}

#[test]
fn keep_alive_requests_for_cached_files_allocate_nothing() {
    let (_dir, addr) = serve_2k(false);

    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let get: &[u8] = b"GET /2k.html HTTP/1.1\r\nHost: x\r\n\r\n";
    let mut buf = vec![0u8; 64 << 10];
    // Warm-up: the first request loads the file into the cache; learn the response sizes.
    c.write_all(get).unwrap();
    let n = c.read(&mut buf).unwrap();
    let head = String::from_utf8_lossy(&buf[..n]).into_owned();
    let full_len = head.find("\r\n\r\n").unwrap() + 4 + 2048;
    read_response(&mut c, &mut buf[n..], full_len - n);
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("ETag: "))
        .unwrap()
        .to_string();
    let conditional =
        format!("GET /2k.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n").into_bytes();
    c.write_all(&conditional).unwrap();
    let n304 = c.read(&mut buf).unwrap();
    assert!(buf.starts_with(b"HTTP/1.1 304"));
    let pipelined = get.repeat(8);

    let before = allocations();
    for _ in 0..300 {
        c.write_all(get).unwrap();
        read_response(&mut c, &mut buf, full_len);
        c.write_all(&conditional).unwrap();
        read_response(&mut c, &mut buf, n304);
        c.write_all(&pipelined).unwrap();
        read_response(&mut c, &mut buf, 8 * full_len);
    }
    let during = allocations() - before;
    assert!(buf[..full_len].starts_with(b"HTTP/1.1 200"));
    // 3,000 requests; a handful of allocations may come from the once-a-second timers.
    eprintln!("allocations during 3,000 requests: {during}");
    assert!(during < 30, "{during} allocations for 3,000 requests");
}
