//! Writing response heads into a loop's output buffer: status lines, the Connection line, and the
//! small generated answers (errors, redirects, 304) that share one shape.

/// The reason phrase of each status the server sends.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        410 => "Gone",
        408 => "Request Timeout",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        416 => "Range Not Satisfiable",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// Whether a connection may carry more requests after answering with `status`: not after the
/// answers that mean the byte stream itself can no longer be trusted.
pub fn keeps_connection(status: u16) -> bool {
    !matches!(status, 400 | 408 | 413 | 414 | 431 | 500 | 503)
}

/// Appends "HTTP/1.1 NNN Reason\r\nServer: webstand\r\n".
pub fn status_line(out: &mut Vec<u8>, status: u16) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_num(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\nServer: webstand\r\n");
}

/// Appends the Connection line an HTTP/1.`minor` client needs for the chosen persistence.
pub fn connection_line(out: &mut Vec<u8>, minor: u8, keep_alive: bool) {
    match (keep_alive, minor) {
        (true, 0) => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        (true, _) => {}
        (false, _) => out.extend_from_slice(b"Connection: close\r\n"),
    }
}

/// Appends a decimal number without allocating.
pub fn push_num(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// A generated answer: status, `extra` header lines (each ending in CRLF), and a small HTML body
/// naming the status (left out for HEAD, 304 and 1xx). Returns the body length.
pub fn simple(
    out: &mut Vec<u8>,
    date_line: &[u8],
    status: u16,
    minor: u8,
    keep_alive: bool,
    extra: &[u8],
    head_only: bool,
) -> u64 {
    status_line(out, status);
    out.extend_from_slice(date_line);
    out.extend_from_slice(extra);
    connection_line(out, minor, keep_alive);
    if status == 304 {
        out.extend_from_slice(b"\r\n");
        return 0;
    }
    // Error paths only: a small allocation here is fine.
    let body = format!(
        "<!DOCTYPE html>\n<html><head><title>{status} {r}</title></head><body><h1>{status} {r}</h1></body></html>\n",
        r = reason(status)
    );
    out.extend_from_slice(b"Content-Type: text/html; charset=utf-8\r\nContent-Length: ");
    push_num(out, body.len() as u64);
    out.extend_from_slice(b"\r\n\r\n");
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    body.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_answers_have_a_correct_length() {
        let mut out = Vec::new();
        let n = simple(&mut out, b"Date: x\r\n", 404, 1, true, b"", false);
        let text = String::from_utf8(out).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 404 Not Found\r\nServer: webstand\r\nDate: x\r\n"));
        assert!(head.contains(&format!("Content-Length: {n}")));
        assert_eq!(body.len() as u64, n);
        assert!(body.contains("<h1>404 Not Found</h1>"));
    }

    #[test]
    fn connection_lines_follow_the_version() {
        let mut out = Vec::new();
        connection_line(&mut out, 1, true);
        assert!(out.is_empty());
        connection_line(&mut out, 0, true);
        assert_eq!(out, b"Connection: keep-alive\r\n");
        out.clear();
        connection_line(&mut out, 1, false);
        assert_eq!(out, b"Connection: close\r\n");
        out.clear();
        push_num(&mut out, 1234567);
        assert_eq!(out, b"1234567");
    }
}
