//! The seed corpora, made by the project's own encoders (the HPACK and QPACK encoders, the
//! HTTP/2 and HTTP/3 frame writers, the server's answer writer) and from its own files (the
//! probe's built-in cases, the WebStone presets): valid messages the fuzzer starts from and
//! mutates. `seeds` writes them out; tests/replay.rs replays them with the committed corpora.

use webstand_h2::frame::{write as h2w, PREFACE};
use webstand_h2::hpack::Encoder;
use webstand_h2::settings::SettingId;
use webstand_h3::frame::{kind, write as h3w};
use webstand_h3::qpack_encoder;

use crate::messages::{encode, h2_client, h2_fields};

const REQUESTS: &[&[u8]] = &[
    b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"HEAD /index.html HTTP/1.1\r\nHost: a\r\nRange: bytes=0-1\r\n\r\n",
    b"POST /later HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
    b"POST /stream HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
    b"PUT /404 HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
    b"GET /a%20b/../c?q=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
];

/// A server's answer blocks, as our encoder writes them, each with its length byte (hpack targets).
fn hpack_blocks(fields: &[Vec<(Vec<u8>, Vec<u8>)>], huffman: bool) -> Vec<u8> {
    let mut enc = Encoder::new();
    enc.set_huffman(huffman);
    let mut out = Vec::new();
    for list in fields {
        let block = encode(&mut enc, list);
        if let Ok(n) = u8::try_from(block.len()) {
            out.push(n);
            out.extend_from_slice(&block);
        }
    }
    out
}

fn response_fields() -> Vec<(Vec<u8>, Vec<u8>)> {
    [
        (":status", "200"),
        ("server", "webstand"),
        ("content-type", "text/html"),
        ("content-length", "1234"),
        ("date", "Sun, 29 Nov 2026 10:00:00 GMT"),
    ]
    .iter()
    .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
    .collect()
}

/// FastCGI records as a responder sends them: STDOUT pieces, STDERR, END_REQUEST.
fn fcgi_record(kind: u8, content: &[u8], padding: u8) -> Vec<u8> {
    let mut out = vec![1, kind, 0, 1];
    out.extend_from_slice(&(content.len() as u16).to_be_bytes());
    out.extend_from_slice(&[padding, 0]);
    out.extend_from_slice(content);
    out.extend(std::iter::repeat_n(0, usize::from(padding)));
    out
}

fn fcgi_answer(stdout: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in stdout {
        out.extend(fcgi_record(6, piece, 3));
    }
    out.extend(fcgi_record(7, b"a warning", 0));
    out.extend(fcgi_record(6, b"", 0));
    out.extend(fcgi_record(3, &[0, 0, 0, 0, 0, 0, 0, 0], 0));
    out
}

const CGI_OUTPUTS: &[&[u8]] = &[
    b"Content-Type: text/plain\n\nhello",
    b"Status: 404 Not Found\r\nContent-Type: text/html\r\nX-A: 1\r\n\r\n<p>no</p>",
    b"Location: /elsewhere\n\n",
    b"Status: 204 No Content\n\n",
];

/// One target's seeds: (file name, bytes).
pub fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut s: Vec<Vec<u8>> = Vec::new();
    match target {
        "http1_request" => s.extend(REQUESTS.iter().map(|r| r.to_vec())),
        "chunked_strict" | "chunked_lenient" => {
            s.push(b"\x10".iter().chain(b"5;a=b\r\nhello\r\n3\r\nabc\r\n0\r\nX: y\r\n\r\n").copied().collect());
            s.push(b"\x00A\r\n0123456789\r\n0\r\n\r\n".to_vec());
        }
        "engine_response" => {
            for out in CGI_OUTPUTS {
                let (_, bytes) = webstand_server::fuzzing::cgi_answer(out, false);
                s.push([&[7u8][..], &bytes].concat());
            }
            s.push(b"\x05HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n".to_vec());
            s.push(b"\x80HTTP/1.0 200 OK\r\nContent-Length: 9\r\n\r\n".to_vec());
        }
        "h2_frames" => {
            s.push(h2_client()[PREFACE.len()..].to_vec());
            let mut out = Vec::new();
            h2w::settings(&mut out, &[(SettingId::MaxConcurrentStreams, 128)]);
            let mut enc = Encoder::new();
            h2w::headers(&mut out, 1, false, &encode(&mut enc, &response_fields()), 16_384);
            h2w::data(&mut out, 1, true, b"hello");
            h2w::priority(&mut out, 3, webstand_h2::frame::Priority { exclusive: true, depends_on: 1, weight: 200 });
            s.push(out);
        }
        "hpack_server" => {
            let reqs = [h2_fields("/", "GET"), h2_fields("/a/b?c", "POST"), h2_fields("/", "GET")];
            s.push(hpack_blocks(&reqs, true));
            s.push(hpack_blocks(&reqs, false));
        }
        "hpack_client" => {
            let resps = [response_fields(), response_fields()];
            s.push(hpack_blocks(&resps, true));
            s.push(hpack_blocks(&resps, false));
        }
        "h3_frames" => {
            let mut out = Vec::new();
            h3w::settings(&mut out, &[(0x01, 0), (0x06, 16_384), (0x07, 0), (0x21, 1)]);
            h3w::goaway(&mut out, 4);
            h3w::single(&mut out, kind::MAX_PUSH_ID, 8);
            h3w::single(&mut out, kind::CANCEL_PUSH, 2);
            let mut block = Vec::new();
            qpack_encoder::encode(h2_fields("/", "GET").iter().map(|(n, v)| (&n[..], &v[..])), &mut block);
            h3w::headers(&mut out, &block);
            h3w::data_head(&mut out, 5);
            out.extend_from_slice(b"hello");
            s.push(out);
        }
        "qpack" => {
            for list in [h2_fields("/", "GET"), response_fields()] {
                let mut block = vec![40u8];
                qpack_encoder::encode(list.iter().map(|(n, v)| (&n[..], &v[..])), &mut block);
                s.push(block);
            }
        }
        "fastcgi" => {
            s.push([&[0x05u8][..], &fcgi_answer(&[b"Content-Type: text/html\r\n\r\n<p>hi</p>"])].concat());
            s.push([&[0x40u8][..], &fcgi_answer(&[b"Status: 404\r\nContent-Type: text/plain\r\n", b"\r\nnot here"])].concat());
            s.push([&[0x85u8][..], &fcgi_answer(&[b"Location: /other\r\n\r\n"])].concat());
        }
        "cgi_output" => s.extend(CGI_OUTPUTS.iter().map(|o| [&[0u8][..], o].concat())),
        "serve_config" => s.push(
            b"listen = [\"127.0.0.1:8080\"]\nroot = \"/srv/www\"\nthreads = 2\nh2c = true\nmax_body = 4096\nheader_timeout = \"5s\"\n[[throttle]]\npattern = \"*.iso\"\nrate = \"1MB\"\n".to_vec(),
        ),
        "url_file" => s.push(b"# pages\n/index.html\nhttp://127.0.0.1:8080/a/b?c=1\n\n/small/001.html\n".to_vec()),
        "webstone_list" => {
            s.push(webstand_workload::webstone::SILICON_SURF.as_bytes().to_vec());
            s.push(webstand_workload::webstone::WEBSTONE2.as_bytes().to_vec());
        }
        "probe_cases" => s.push(webstand_probe::BUILTIN.as_bytes().to_vec()),
        "serve_h1" => {
            s.push([&[0u8][..], &REQUESTS.concat()].concat());
            s.push([&[7u8][..], REQUESTS[2], REQUESTS[3]].concat());
        }
        "serve_h2" => {
            s.push([&[0u8][..], &h2_client()].concat());
            s.push([&[13u8][..], &h2_client()].concat());
        }
        "engine_h2" => s.extend(crate::engine_h2::seeds()),
        "engine_h3" => s.extend(crate::engine_h3::seeds()),
        "probe_response" => s.extend(crate::probe_response::seeds()),
        "wrk_script" => s.extend(crate::wrk_script::seeds()),
        _ => {}
    }
    s.into_iter()
        .enumerate()
        .map(|(i, bytes)| (format!("seed-{i}"), bytes))
        .collect()
}
