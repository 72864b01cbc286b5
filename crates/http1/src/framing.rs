//! Message framing (RFC 9112 §6): how long a body is, decided once for both directions.
//!
//! A request body is framed by Content-Length or by chunked coding and nothing else; any shape two
//! parsers could read differently is refused (the server answers 400). A response body is framed by
//! the request it answers and its status first (HEAD, 1xx, 204 and 304 never have one), then by
//! Transfer-Encoding (chunked as the final coding, or else read until close), then Content-Length,
//! and otherwise by the end of the connection.

/// How a request body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestBody {
    None,
    Length(u64),
    Chunked,
}

/// The framing of a request from its (already checked) Content-Length and Transfer-Encoding;
/// `None` when both are present, which is the classic smuggling shape.
pub fn request_body(content_length: Option<u64>, chunked: bool) -> Option<RequestBody> {
    Some(match (content_length, chunked) {
        (Some(_), true) => return None,
        (Some(0), false) | (None, false) => RequestBody::None,
        (Some(n), false) => RequestBody::Length(n),
        (None, true) => RequestBody::Chunked,
    })
}

/// How a response body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseBody {
    None,
    Length(u64),
    Chunked,
    /// Read until the server closes the connection (which therefore cannot be reused).
    UntilClose,
}

/// What a response head says about its body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BodyFields {
    pub content_length: Option<u64>,
    /// A Transfer-Encoding field was present …
    pub transfer_encoding: bool,
    /// … and its final coding is chunked.
    pub chunked: bool,
}

/// Whether a response with this status can carry a body at all (RFC 9110 §6.4.1).
pub fn status_has_body(status: u16) -> bool {
    !(status < 200 || status == 204 || status == 304)
}

/// An interim response (1xx other than 101): the final response to the same request follows it.
pub fn is_interim(status: u16) -> bool {
    (100..200).contains(&status) && status != 101
}

/// The framing of a final response to a request that was HEAD (`head_request`) or not.
pub fn response_body(head_request: bool, status: u16, fields: BodyFields) -> ResponseBody {
    if head_request || !status_has_body(status) {
        return ResponseBody::None;
    }
    if fields.transfer_encoding {
        return if fields.chunked {
            ResponseBody::Chunked
        } else {
            ResponseBody::UntilClose
        };
    }
    match fields.content_length {
        Some(0) => ResponseBody::None,
        Some(n) => ResponseBody::Length(n),
        None => ResponseBody::UntilClose,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_bodies_have_one_framing_or_none() {
        assert_eq!(request_body(None, false), Some(RequestBody::None));
        assert_eq!(request_body(Some(0), false), Some(RequestBody::None));
        assert_eq!(request_body(Some(5), false), Some(RequestBody::Length(5)));
        assert_eq!(request_body(None, true), Some(RequestBody::Chunked));
        assert_eq!(request_body(Some(5), true), None);
    }

    #[test]
    fn response_bodies_follow_request_status_coding_length() {
        let cl = |n| BodyFields {
            content_length: Some(n),
            ..BodyFields::default()
        };
        assert_eq!(response_body(true, 200, cl(500)), ResponseBody::None);
        assert_eq!(response_body(false, 204, cl(5)), ResponseBody::None);
        assert_eq!(response_body(false, 304, cl(10)), ResponseBody::None);
        assert_eq!(response_body(false, 200, cl(0)), ResponseBody::None);
        assert_eq!(response_body(false, 200, cl(7)), ResponseBody::Length(7));
        let te = |chunked| BodyFields {
            content_length: Some(3),
            transfer_encoding: true,
            chunked,
        };
        assert_eq!(response_body(false, 200, te(true)), ResponseBody::Chunked);
        assert_eq!(
            response_body(false, 200, te(false)),
            ResponseBody::UntilClose
        );
        let none = BodyFields::default();
        assert_eq!(response_body(false, 200, none), ResponseBody::UntilClose);
        assert!(is_interim(100) && is_interim(103) && !is_interim(101) && !is_interim(200));
    }
}
