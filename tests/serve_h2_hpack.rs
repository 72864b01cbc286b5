//! The server's HPACK encoding as third-party decoders see it (prior-knowledge h2c): python3-h2's
//! hpack decodes twenty answers for one file on one connection to the same header list, equal
//! field for field to the HTTP/1.1 answer's (so the indexed fields, the dynamic table and the
//! Huffman-coded literals decode to what the server meant), and h2load (nghttp2's decoder)
//! reports at least 90 % header space savings for 2 KiB GETs on one connection: the repeated
//! answers are indexes.

use crate::common;

use common::serve;

fn docroot() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("2k.html"), "a".repeat(2048)).unwrap();
    dir
}

/// The header list of an HTTP/1.1 answer, names lower-cased, connection-specific fields left out.
fn http1_fields(addr: std::net::SocketAddr, path: &str) -> Vec<(String, String)> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let answer = common::raw_exchange(addr, request.as_bytes(), std::time::Duration::from_secs(5));
    let text = String::from_utf8_lossy(&answer);
    let head = text.split("\r\n\r\n").next().unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().to_string();
    let mut fields = vec![(":status".to_string(), status)];
    for line in lines {
        let (name, value) = line.split_once(':').unwrap();
        let name = name.to_ascii_lowercase();
        if name != "connection" && name != "keep-alive" {
            fields.push((name, value.trim().to_string()));
        }
    }
    fields
}

#[test]
fn python_h2_decodes_repeated_answers_to_the_http1_fields() {
    let doc = docroot();
    let s = serve(doc.path(), &["--h2c", "--threads", "1"]);
    let out = common::h2_client::python_h2("responses.py")
        .args([&s.addr.port().to_string(), "/2k.html", "20"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let heads: Vec<Vec<(String, String)>> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(heads.len(), 20, "{text}");
    let mut want = http1_fields(s.addr, "/2k.html");
    let sorted = |mut v: Vec<(String, String)>| {
        // The date may tick between the answers; the other fields may not differ.
        v.retain(|(n, _)| n != "date");
        v.sort();
        v
    };
    assert!(heads
        .iter()
        .all(|h| h.iter().any(|(n, v)| n == "date" && v.ends_with(" GMT"))));
    want = sorted(want);
    assert!(want.iter().any(|(n, _)| n == "etag"), "{want:?}");
    for head in &heads {
        assert_eq!(head[0], (":status".to_string(), "200".to_string()));
        assert_eq!(sorted(head.clone()), want, "{text}");
    }
}

/// h2load's "space savings" is 1 − header block bytes ÷ decoded name and value bytes.
#[test]
fn h2load_reports_ninety_percent_header_space_savings_on_one_connection() {
    let doc = docroot();
    let s = serve(doc.path(), &["--h2c", "--threads", "1"]);
    let url = format!("http://{}/2k.html", s.addr);
    let text = common::h2::h2load_all_succeed(2000, &["-c", "1", "-m", "16", "-n", "2000", &url]);
    let savings: f64 = text
        .split("space savings ")
        .nth(1)
        .and_then(|rest| rest.split('%').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no space savings in {text}"));
    assert!(savings >= 90.0, "space savings {savings} %: {text}");
}
