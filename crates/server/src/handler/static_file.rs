//! Answering from a cached file: basic auth, conditional GET (304), the whole file (200) or the
//! requested ranges (206, multipart/byteranges, 416), paced when a throttle rule covers it. Small
//! files are copied from memory, larger ones go as file ranges (sendfile where the protocol can).

use super::files::Entry;
use super::{Answered, Handler};
use crate::range::{self, Plan};
use crate::request::{Head, Method};
use crate::response::{self, push_num, Head as Answer, Length, Sink};
use std::sync::Arc;

impl Handler {
    /// Answers from a cache entry: auth, then 304 when the client's copy is current, else the whole
    /// file (200) or the requested ranges (206 / 416), paced when a throttle rule covers it.
    pub(super) fn send_entry(&mut self, e: &Entry, head: &Head, sink: &mut dyn Sink) -> Answered {
        let user = match self.entry_user(e, head, sink) {
            Ok(user) => user,
            Err(answered) => return answered,
        };
        let answered = |status, bytes, user| Answered::new(status, bytes, user);
        let Handler { site, ranges, .. } = self;
        if not_modified(e, head) {
            sink.head(&Answer {
                status: 304,
                fields: &e.fields,
                length: Length::None,
            });
            return answered(304, 0, user);
        }
        let get = head.method == Method::Get;
        let plan = match head.range {
            Some(r) if get && if_range_holds(e, head.if_range) => {
                range::plan(r, e.size, site.config.max_ranges, ranges)
            }
            _ => Plan::Whole,
        };
        if plan == Plan::Unsatisfiable {
            let extra = unsatisfiable_range(e.size);
            let n = response::simple(sink, 416, &extra, false);
            return answered(416, n, user);
        }
        let body_len = match plan {
            Plan::Parts if ranges.len() == 1 => ranges[0].1 - ranges[0].0 + 1,
            Plan::Parts => multipart_len(e, ranges, &site.boundary),
            _ => e.size,
        };
        let mut throttle = None;
        if let (Some(rule), true) = (e.throttle, get) {
            if !site.throttles[rule].admit(body_len) {
                let retry = b"Retry-After: 5\r\n";
                let n = response::simple(sink, 503, retry, false);
                return answered(503, n, user);
            }
            throttle = Some(rule);
        }
        let mut answer = match plan {
            Plan::Parts => {
                self.send_parts(e, body_len, sink);
                answered(206, body_len, user)
            }
            _ => {
                sink.prepared(&e.head_200);
                if !get {
                    return answered(200, 0, user);
                }
                body_part(e, sink, (0, e.size.saturating_sub(1)));
                answered(200, e.size, user)
            }
        };
        answer.throttle = throttle;
        answer
    }

    /// Basic auth when a rule covers the entry: the user, or the 401 answer written.
    fn entry_user(
        &mut self,
        e: &Entry,
        head: &Head,
        sink: &mut dyn Sink,
    ) -> Result<Option<Arc<str>>, Answered> {
        let rule = match self.authorize(e.auth, head) {
            Ok(user) => return Ok(user),
            Err(rule) => rule,
        };
        let challenge = &self.site.auth[rule].challenge;
        Err(super::simple_answer(sink, head, 401, challenge))
    }

    /// A 206 answer for the ranges in `self.ranges`: one as it is, several as
    /// multipart/byteranges.
    fn send_parts(&self, e: &Entry, body_len: u64, sink: &mut dyn Sink) {
        let (ranges, boundary) = (&self.ranges, &self.site.boundary);
        // Not the hot path: the fields are gathered in a buffer of their own.
        let mut fields = b"Accept-Ranges: bytes\r\nLast-Modified: ".to_vec();
        fields.extend_from_slice(&e.last_modified);
        fields.extend_from_slice(b"\r\nETag: ");
        fields.extend_from_slice(&e.etag);
        if ranges.len() == 1 {
            fields.extend_from_slice(b"\r\nContent-Type: ");
            fields.extend_from_slice(e.content_type.as_bytes());
            fields.extend_from_slice(b"\r\n");
            content_range(&mut fields, ranges[0], e.size);
        } else {
            fields.extend_from_slice(b"\r\nContent-Type: multipart/byteranges; boundary=");
            fields.extend_from_slice(boundary.as_bytes());
            fields.extend_from_slice(b"\r\n");
        }
        sink.head(&Answer {
            status: 206,
            fields: &fields,
            length: Length::Known(body_len),
        });
        if ranges.len() == 1 {
            body_part(e, sink, ranges[0]);
        } else {
            for &r in ranges.iter() {
                fields.clear();
                part_head(&mut fields, e, r, boundary);
                sink.body(&fields);
                body_part(e, sink, r);
            }
            fields.clear();
            part_end(&mut fields, boundary);
            sink.body(&fields);
        }
    }
}

/// The Content-Range line of a 416: the size the ranges missed.
fn unsatisfiable_range(size: u64) -> Vec<u8> {
    let mut line = b"Content-Range: bytes */".to_vec();
    push_num(&mut line, size);
    line.extend_from_slice(b"\r\n");
    line
}

/// The inclusive range `r` of the entry's bytes: copied when cached, else as a file range.
fn body_part(e: &Entry, sink: &mut dyn Sink, r: (u64, u64)) {
    if e.size == 0 {
        return;
    }
    match (&e.body, &e.file) {
        (Some(bytes), _) => sink.body(&bytes[r.0 as usize..=r.1 as usize]),
        (None, Some(file)) => sink.file(file, r.0, r.1 + 1),
        (None, None) => {}
    }
}

fn content_range(out: &mut Vec<u8>, r: (u64, u64), size: u64) {
    out.extend_from_slice(b"Content-Range: bytes ");
    push_num(out, r.0);
    out.push(b'-');
    push_num(out, r.1);
    out.push(b'/');
    push_num(out, size);
    out.extend_from_slice(b"\r\n");
}

fn part_head(out: &mut Vec<u8>, e: &Entry, r: (u64, u64), boundary: &str) {
    out.extend_from_slice(b"\r\n--");
    out.extend_from_slice(boundary.as_bytes());
    out.extend_from_slice(b"\r\nContent-Type: ");
    out.extend_from_slice(e.content_type.as_bytes());
    out.extend_from_slice(b"\r\n");
    content_range(out, r, e.size);
    out.extend_from_slice(b"\r\n");
}

fn part_end(out: &mut Vec<u8>, boundary: &str) {
    out.extend_from_slice(b"\r\n--");
    out.extend_from_slice(boundary.as_bytes());
    out.extend_from_slice(b"--\r\n");
}

/// Length of a multipart/byteranges body, computed by writing the part heads once to scratch.
fn multipart_len(e: &Entry, ranges: &[(u64, u64)], boundary: &str) -> u64 {
    let mut scratch = Vec::new();
    let mut data = 0;
    for &r in ranges {
        part_head(&mut scratch, e, r, boundary);
        data += r.1 - r.0 + 1;
    }
    part_end(&mut scratch, boundary);
    scratch.len() as u64 + data
}

/// If-Range: the ranges apply only while the client's validator still matches (strong ETag or the
/// exact Last-Modified date).
fn if_range_holds(e: &Entry, if_range: Option<&[u8]>) -> bool {
    match if_range.map(<[u8]>::trim_ascii) {
        None => true,
        Some(v) if v.starts_with(b"\"") => v == &*e.etag,
        Some(v) => v == &e.last_modified[..],
    }
}

/// RFC 9110 §13.1: If-None-Match wins over If-Modified-Since.
fn not_modified(e: &Entry, head: &Head) -> bool {
    if let Some(inm) = head.if_none_match {
        return etag_list_matches(inm, &e.etag);
    }
    match head.if_modified_since {
        Some(ims) if ims == &e.last_modified[..] => true,
        Some(ims) => crate::date::parse(ims).is_some_and(|t| e.mtime <= t),
        None => false,
    }
}

/// Weak comparison of an entity tag against a list such as `"a", W/"b"` or `*`.
pub fn etag_list_matches(list: &[u8], etag: &[u8]) -> bool {
    let etag = etag.strip_prefix(b"W/").unwrap_or(etag);
    list.split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .any(|t| t == b"*" || t.strip_prefix(b"W/").unwrap_or(t) == etag)
}

#[cfg(test)]
mod tests {
    use super::etag_list_matches;

    #[test]
    fn etag_lists_compare_weakly() {
        assert!(etag_list_matches(b"\"a-1\"", b"\"a-1\""));
        assert!(etag_list_matches(b"\"x\", W/\"a-1\"", b"\"a-1\""));
        assert!(etag_list_matches(b"*", b"\"a-1\""));
        assert!(!etag_list_matches(b"\"a-2\"", b"\"a-1\""));
    }
}
