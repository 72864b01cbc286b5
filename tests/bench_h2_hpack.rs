//! `webstand bench --h2`'s request header blocks, as a server receives them over a real socket
//! (an in-test h2c server that keeps every HEADERS block and decodes them in order with
//! loona-hpack, an independent HPACK decoder): after a connection's first request the repeated
//! fields are sent by dynamic-table index and only `:path` is a literal; a server whose
//! SETTINGS_HEADER_TABLE_SIZE is 0 gets blocks that do not use the table; and a server that shrinks
//! its table during the connection gets the size update §4.2 requires, then blocks without it.

use crate::common;

use common::h2_frames::{frame, h2_server, Frame};
use common::*;
use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PATH: &str = "/some/page.html?q=1";

/// SETTINGS_HEADER_TABLE_SIZE (identifier 1) set to `size`.
fn table_size(size: u32) -> Vec<u8> {
    let mut p = 1u16.to_be_bytes().to_vec();
    p.extend(size.to_be_bytes());
    p
}

/// The server's table: as HPACK starts (4,096), 0 from its first SETTINGS, or 0 from a SETTINGS
/// sent before the third answer.
#[derive(Clone, Copy)]
enum Table {
    Default,
    Zero,
    ShrinksAfterTwo,
}

/// A frame to one connection of the server: every HEADERS block kept in `blocks`, each answered 200
/// with a body.
fn on_frame(s: &mut TcpStream, f: Frame, table: Table, blocks: &Mutex<Vec<Vec<u8>>>) {
    if f.kind != 1 {
        return;
    }
    assert_eq!(
        f.flags & 0x4,
        0x4,
        "one HEADERS frame per block (END_HEADERS)"
    );
    let n = {
        let mut b = blocks.lock().unwrap();
        b.push(f.payload);
        b.len()
    };
    let mut out = Vec::new();
    if n == 2 && matches!(table, Table::ShrinksAfterTwo) {
        out.extend(frame(4, 0, 0, &table_size(0)));
    }
    out.extend(frame(1, 0x4, f.stream, &[0x88])); // :status 200 (static index 8)
    out.extend(frame(0, 0x1, f.stream, b"hello"));
    let _ = s.write_all(&out);
}

/// Runs 6 requests, one at a time on one connection, against a server with `table`; returns the
/// blocks it received and the port.
fn blocks_of_a_run(table: Table) -> (Vec<Vec<u8>>, u16) {
    let blocks = Arc::new(Mutex::new(Vec::new()));
    let kept = blocks.clone();
    let settings = match table {
        Table::Zero => table_size(0),
        _ => Vec::new(),
    };
    let port = h2_server(settings, move |s, f| on_frame(s, f, table, &kept));
    let url = format!("http://127.0.0.1:{port}{PATH}");
    let args = [
        "bench",
        "--h2",
        "-q",
        "-c",
        "1",
        "-m",
        "1",
        "-n",
        "6",
        "-s",
        "5",
        "-H",
        "X-Test: abc",
        &url,
    ];
    let out = run_with_timeout(&args, Duration::from_secs(30));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(text.contains("Complete requests:      6"), "{text}");
    let blocks = blocks.lock().unwrap().clone();
    assert_eq!(blocks.len(), 6);
    (blocks, port)
}

/// Decodes the connection's blocks in order with one decoder, each to the request's fields.
fn decode_all(blocks: &[Vec<u8>], port: u16) {
    let mut decoder = loona_hpack::Decoder::new();
    let authority = format!("127.0.0.1:{port}");
    let agent = format!("webstand/{}", env!("CARGO_PKG_VERSION"));
    let want: Vec<(&str, &str)> = vec![
        (":method", "GET"),
        (":scheme", "http"),
        (":authority", &authority),
        (":path", PATH),
        ("user-agent", &agent),
        ("accept", "*/*"),
        ("x-test", "abc"),
    ];
    for (i, block) in blocks.iter().enumerate() {
        let fields = decoder
            .decode(block)
            .unwrap_or_else(|e| panic!("block {i} {block:02x?}: {e:?}"));
        let text: Vec<(String, String)> = fields
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        let text: Vec<(&str, &str)> = text.iter().map(|(n, v)| (&n[..], &v[..])).collect();
        assert_eq!(text, want, "block {i}");
    }
}

#[test]
fn after_the_first_request_only_the_path_is_a_literal() {
    let (blocks, port) = blocks_of_a_run(Table::Default);
    decode_all(&blocks, port);
    // Six fields of one byte each (an index) and :path as a literal: its one-byte name index, its
    // length byte and at most its bytes (Huffman-coded when shorter).
    let most = 6 + 2 + PATH.len();
    for (i, b) in blocks.iter().enumerate().skip(1) {
        assert!(b.len() <= most, "block {i}: {} bytes: {b:02x?}", b.len());
        assert_eq!(b, &blocks[1], "every later block is the same");
    }
    assert!(
        blocks[0].len() > 2 * blocks[1].len(),
        "the first block carries the literals: {} vs {}",
        blocks[0].len(),
        blocks[1].len()
    );
}

#[test]
fn a_server_without_a_dynamic_table_gets_blocks_that_stand_alone() {
    let (blocks, port) = blocks_of_a_run(Table::Zero);
    decode_all(&blocks, port);
    assert_eq!(blocks[0][0], 0x20, "the first block opens with size 0");
    for (i, b) in blocks.iter().enumerate().skip(1) {
        assert_eq!(
            &b[..],
            &blocks[0][1..],
            "block {i} is the first without the update"
        );
    }
}

#[test]
fn a_table_that_shrinks_mid_connection_is_emptied_then_left_alone() {
    let (blocks, port) = blocks_of_a_run(Table::ShrinksAfterTwo);
    decode_all(&blocks, port);
    assert_ne!(blocks[0][0], 0x20, "indexed at first");
    assert_eq!(
        blocks[2][0], 0x20,
        "the block after the SETTINGS opens with size 0"
    );
    for (i, b) in blocks.iter().enumerate().skip(3) {
        assert_eq!(&b[..], &blocks[2][1..], "block {i} stands alone");
    }
    assert!(blocks[1].len() < blocks[3].len());
}
