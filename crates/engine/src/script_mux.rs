//! A script's requests as HTTP/2 and HTTP/3 send them. wrk's scripts write HTTP/1 requests
//! (`wrk.format()`, or the request built from `wrk.method/path/headers/body`); over a multiplexed
//! protocol each becomes its own stream: the request line and header fields turned into the
//! protocol's fields (`Host` into `:authority`, the connection-specific fields dropped, names in
//! lower case), its header block encoded by the protocol (HPACK or QPACK, without a dynamic table),
//! and its body sent as DATA.
//!
//! A script that only sets `wrk.*` has its request turned and encoded once per thread; one that
//! defines `request()` has each call's requests turned and encoded as they are sent, several
//! from one call (wrk's pipelined requests) going out as consecutive streams.

use crate::h2::prepared::CONNECTION_SPECIFIC;
use crate::target::{authority, scheme_of};
use anyhow::{anyhow, bail};
use std::collections::VecDeque;
use std::sync::Arc;
use webstand_results::plan::Plan;
use webstand_results::script::ThreadScript;

/// A protocol's header block for a request's fields (HTTP/2's HPACK block, HTTP/3's HEADERS frame).
pub(crate) type Encode = fn(&[(String, String)]) -> Vec<u8>;

/// One request ready to go out as a stream. The stream that sends it keeps a copy (two shared
/// pointers): HTTP/2 sends its body as the windows allow, and a request the server did not take
/// (above its GOAWAY's last stream, or refused 0-RTT) goes out again as it was built.
#[derive(Clone)]
pub(crate) struct Encoded {
    pub block: Arc<[u8]>,
    pub body: Option<Arc<[u8]>>,
}

/// A thread's script requests for a multiplexed protocol: the fixed one encoded once, or the
/// requests of `request()`'s latest call still to send.
#[derive(Default)]
pub(crate) struct ScriptMux {
    fixed: Option<Encoded>,
    queue: VecDeque<Encoded>,
    /// The request being sent (taken from the queue, or sent again).
    current: Option<Encoded>,
    /// One call's bytes, reused from call to call.
    raw: Vec<u8>,
}

impl ScriptMux {
    /// Moves to the next request: the script's fixed one, or (when it defines `request()`) the
    /// next of its latest call's, calling it again when none is left.
    pub(crate) fn advance(
        &mut self,
        script: &mut dyn ThreadScript,
        calls_request: bool,
        plan: &Plan,
        encode: Encode,
    ) -> anyhow::Result<()> {
        if !calls_request {
            self.current = None;
            if self.fixed.is_none() {
                let mut all = streams(script.fixed_request(), plan, encode)?;
                self.fixed = Some(all.swap_remove(0));
            }
            return Ok(());
        }
        if self.queue.is_empty() {
            self.raw.clear();
            script.request(&mut self.raw)?;
            self.queue = streams(&self.raw, plan, encode)?.into();
        }
        self.current = self.queue.pop_front();
        Ok(())
    }

    /// Moves to a request the server did not take, as it was built: `request()` is not called
    /// for it again (wrk's scripts count their calls).
    pub(crate) fn resume(&mut self, e: Encoded) {
        self.current = Some(e);
    }

    /// The request [`ScriptMux::advance`] or [`ScriptMux::resume`] moved to.
    pub(crate) fn current(&self) -> &Encoded {
        let current = self.current.as_ref().or(self.fixed.as_ref());
        current.expect("advance() succeeded before")
    }
}

/// The HTTP/1 requests in `bytes`, one after another, each as a stream's block and body.
fn streams(mut bytes: &[u8], plan: &Plan, encode: Encode) -> anyhow::Result<Vec<Encoded>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let (fields, body, used) = fields(bytes, plan)?;
        out.push(Encoded {
            block: encode(&fields).into(),
            body: body.map(Arc::from),
        });
        bytes = &bytes[used..];
    }
    if out.is_empty() {
        bail!("request(): an empty request");
    }
    Ok(out)
}

/// A request's fields, its body, and the bytes it took.
type Turned<'b> = (Vec<(String, String)>, Option<&'b [u8]>, usize);

/// The first HTTP/1 request of `bytes` as header fields (RFC 9113 §8.3.1, RFC 9114 §4.3.1), its
/// body, and how many bytes it took.
fn fields<'b>(bytes: &'b [u8], plan: &Plan) -> anyhow::Result<Turned<'b>> {
    let mut storage = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut storage);
    let head = match req.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => bail!("request(): an incomplete HTTP/1 request"),
        Err(e) => bail!("request(): not an HTTP/1 request ({e})"),
    };
    let text = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
    let host = req
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("host"));
    let mut fields = vec![
        (
            ":method".to_string(),
            req.method.unwrap_or("GET").to_string(),
        ),
        (":scheme".to_string(), scheme_of(plan).name().to_string()),
        (
            ":authority".to_string(),
            host.map_or_else(|| authority(plan), |h| text(h.value)),
        ),
        (":path".to_string(), req.path.unwrap_or("/").to_string()),
    ];
    let mut length = 0;
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if name == "content-length" {
            length = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .ok_or_else(|| anyhow!("request(): a Content-Length that is not a number"))?;
        }
        if !CONNECTION_SPECIFIC.contains(&name.as_str()) {
            fields.push((name, text(h.value)));
        }
    }
    let Some(body) = bytes.get(head..head + length) else {
        bail!("request(): a body shorter than its Content-Length");
    };
    let body = (length > 0).then_some(body);
    Ok((fields, body, head + length))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        let t = webstand_results::plan::Target {
            host: "127.0.0.1".into(),
            port: 8443,
            addrs: vec![],
        };
        let mut plan = Plan::new(t, "/");
        plan.tls = Some(Default::default());
        plan
    }

    #[test]
    fn an_http1_request_becomes_fields_and_a_body() {
        let raw = b"POST /form?a=1 HTTP/1.1\r\nHost: example.test\r\nConnection: keep-alive\r\n\
                    Content-Type: text/plain\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\n\r\n";
        let (f, body, used) = fields(raw, &plan()).unwrap();
        let f: Vec<(&str, &str)> = f.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert_eq!(
            f,
            [
                (":method", "POST"),
                (":scheme", "https"),
                (":authority", "example.test"),
                (":path", "/form?a=1"),
                ("content-type", "text/plain"),
                ("content-length", "3"),
            ]
        );
        assert_eq!(body, Some(&b"abc"[..]));
        let (f, body, _) = fields(&raw[used..], &plan()).unwrap();
        assert_eq!(f[2].1, "127.0.0.1:8443", "no Host: the target's authority");
        assert_eq!((f[3].1.as_str(), body), ("/b", None));
        let all = streams(raw, &plan(), |f| f[3].1.as_bytes().to_vec()).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(&all[1].block[..], b"/b");
    }

    #[test]
    fn a_short_body_or_a_broken_request_is_an_error() {
        let short = b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nab";
        assert!(fields(short, &plan()).is_err());
        assert!(fields(b"\x01\x02\r\n\r\n", &plan()).is_err());
        assert!(fields(b"GET / HTTP/1.1\r\n", &plan()).is_err());
    }
}
