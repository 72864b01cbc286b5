//! Socket errors the generator met, by errno, and what each one means for a benchmark. The engine
//! describes a failure with the OS error's text and number ("… Connection refused (os error 111)").

/// The socket errors that have a known cause worth naming.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketError {
    /// EMFILE / ENFILE: out of file descriptors.
    OpenFiles,
    /// EADDRNOTAVAIL: no free local port for a new connection.
    EphemeralPorts,
    /// ECONNREFUSED: nothing listening, or SYNs refused.
    Refused,
    /// ECONNRESET / EPIPE: the server dropped connections.
    Reset,
    /// ETIMEDOUT.
    TimedOut,
}

/// The socket error named in an engine failure description, if it is one of the known ones.
pub fn classify(description: &str) -> Option<SocketError> {
    let code: i32 = description
        .rsplit_once("(os error ")?
        .1
        .trim_end_matches(')')
        .parse()
        .ok()?;
    of_code(code)
}

/// The kind of error `code` (an errno) is, if it is one of the known ones.
pub fn of_code(code: i32) -> Option<SocketError> {
    Some(match code {
        libc::EMFILE | libc::ENFILE => SocketError::OpenFiles,
        libc::EADDRNOTAVAIL => SocketError::EphemeralPorts,
        libc::ECONNREFUSED => SocketError::Refused,
        libc::ECONNRESET | libc::EPIPE => SocketError::Reset,
        libc::ETIMEDOUT => SocketError::TimedOut,
        _ => return None,
    })
}

/// The C name of an errno the generator meets ("ECONNREFUSED"), or "errno N".
pub fn name(code: i32) -> String {
    let known = [
        (libc::EMFILE, "EMFILE"),
        (libc::ENFILE, "ENFILE"),
        (libc::EADDRNOTAVAIL, "EADDRNOTAVAIL"),
        (libc::ECONNREFUSED, "ECONNREFUSED"),
        (libc::ECONNRESET, "ECONNRESET"),
        (libc::EPIPE, "EPIPE"),
        (libc::ETIMEDOUT, "ETIMEDOUT"),
        (libc::EHOSTUNREACH, "EHOSTUNREACH"),
        (libc::ENETUNREACH, "ENETUNREACH"),
        (libc::ENOBUFS, "ENOBUFS"),
    ];
    known
        .iter()
        .find(|(c, _)| *c == code)
        .map_or(format!("errno {code}"), |(_, n)| n.to_string())
}

/// Failed requests by errno, most first: "37 EADDRNOTAVAIL, 3 ECONNREFUSED".
pub fn counts(by_code: &std::collections::BTreeMap<i32, u64>) -> String {
    let mut all: Vec<(&i32, &u64)> = by_code.iter().collect();
    all.sort_by_key(|k| std::cmp::Reverse(*k.1));
    let parts: Vec<String> = all
        .iter()
        .map(|(c, n)| format!("{n} {}", name(**c)))
        .collect();
    parts.join(", ")
}

/// The known kind of error that failed the most requests.
pub fn most_common(by_code: &std::collections::BTreeMap<i32, u64>) -> Option<SocketError> {
    let mut known: Vec<(SocketError, u64)> = by_code
        .iter()
        .filter_map(|(c, n)| Some((of_code(*c)?, *n)))
        .collect();
    known.sort_by_key(|k| std::cmp::Reverse(k.1));
    known.first().map(|(kind, _)| *kind)
}

impl SocketError {
    pub fn advice(self) -> &'static str {
        match self {
            SocketError::OpenFiles => "the generator ran out of file descriptors (EMFILE): raise the open-files limit (ulimit -n) or lower -c",
            SocketError::EphemeralPorts => "the generator's host ran out of ephemeral ports (EADDRNOTAVAIL), each closed connection holding its port in TIME_WAIT for a minute: use keep-alive (-k), widen the range (sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"), or connect from more source addresses with -B FIRST-LAST",
            SocketError::Refused => "connections were refused (ECONNREFUSED): the server stopped listening, or its full accept queue refuses SYNs (tcp_abort_on_overflow)",
            SocketError::Reset => "the server reset connections (ECONNRESET): it closes them under load (a connection cap, a keep-alive limit, a crash); check its logs",
            SocketError::TimedOut => "connections timed out (ETIMEDOUT): the server or the path to it drops packets",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_known_by_their_number() {
        let e = std::io::Error::from_raw_os_error(libc::EADDRNOTAVAIL);
        assert_eq!(
            classify(&format!("connect to 127.0.0.1:80: {e}")),
            Some(SocketError::EphemeralPorts)
        );
        let e = std::io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(
            classify(&format!("connect: {e}")),
            Some(SocketError::Refused)
        );
        assert_eq!(classify("malformed status line"), None);
        let by_code = [(libc::ECONNREFUSED, 3), (libc::EADDRNOTAVAIL, 37), (2, 1)]
            .into_iter()
            .collect();
        assert_eq!(
            counts(&by_code),
            "37 EADDRNOTAVAIL, 3 ECONNREFUSED, 1 errno 2"
        );
        assert_eq!(most_common(&by_code), Some(SocketError::EphemeralPorts));
        assert_eq!(classify("x (os error 2)"), None);
    }
}
