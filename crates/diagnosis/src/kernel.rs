//! The kernel's TCP counters (`/proc/net/netstat`, `/proc/net/snmp`) and their deltas over a run.
//!
//! Both files hold pairs of lines, a header naming the counters and a line of values with the same
//! prefix ("TcpExt: ListenOverflows …" / "TcpExt: 12 …"). The counters belong to the network
//! namespace, so they count every program on the host, not only this run: findings built on them say
//! "host-wide".

use std::collections::BTreeMap;

/// Counters by "Prefix.Name" ("TcpExt.ListenOverflows", "Tcp.RetransSegs").
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TcpCounters(pub BTreeMap<String, u64>);

/// The counters the rules read, and the ones shown as evidence in `--json`.
pub const WATCHED: [&str; 9] = [
    "TcpExt.ListenOverflows",
    "TcpExt.ListenDrops",
    "TcpExt.TCPTimeouts",
    "TcpExt.TCPSynRetrans",
    "Tcp.RetransSegs",
    "Tcp.OutSegs",
    "Tcp.OutRsts",
    "Tcp.EstabResets",
    "Tcp.AttemptFails",
];

impl TcpCounters {
    /// The current counters, or empty ones where /proc/net is not readable (then no finding uses them).
    pub fn read() -> TcpCounters {
        let mut all = BTreeMap::new();
        for file in ["/proc/net/netstat", "/proc/net/snmp"] {
            if let Ok(text) = std::fs::read_to_string(file) {
                all.extend(parse(&text));
            }
        }
        TcpCounters(all)
    }

    /// What happened between `before` and `self`, for the watched counters present in both.
    pub fn since(&self, before: &TcpCounters) -> TcpCounters {
        let mut out = BTreeMap::new();
        for name in WATCHED {
            if let (Some(a), Some(b)) = (before.0.get(name), self.0.get(name)) {
                out.insert(name.to_string(), b.saturating_sub(*a));
            }
        }
        TcpCounters(out)
    }

    /// A counter's value, 0 when it is absent.
    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    /// True when the counters were readable at all.
    pub fn present(&self) -> bool {
        !self.0.is_empty()
    }
}

/// Parses the header/value line pairs of /proc/net/netstat or /proc/net/snmp. Negative values
/// (snmp's "MaxConn -1": no limit) and malformed pairs are left out.
pub fn parse(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks(2) {
        let [names, values] = pair else { continue };
        let (Some((p1, names)), Some((p2, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        if p1 != p2 {
            continue;
        }
        for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = value.parse::<u64>() {
                out.insert(format!("{p1}.{name}"), v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NETSTAT: &str = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\n\
TcpExt: 0 7 9\n\
IpExt: InNoRoutes InOctets\n\
IpExt: 0 123456\n";
    const SNMP: &str = "Tcp: RtoAlgorithm MaxConn RetransSegs OutSegs\n\
Tcp: 1 -1 40 1000\n";

    #[test]
    fn pairs_of_lines_become_named_counters() {
        let c = parse(NETSTAT);
        assert_eq!(c["TcpExt.ListenOverflows"], 7);
        assert_eq!(c["TcpExt.ListenDrops"], 9);
        assert_eq!(c["IpExt.InOctets"], 123456);
        let s = parse(SNMP);
        assert_eq!(s["Tcp.RetransSegs"], 40);
        assert!(
            !s.contains_key("Tcp.MaxConn"),
            "negative values are left out"
        );
    }

    #[test]
    fn deltas_cover_the_watched_counters_and_never_go_negative() {
        let before = TcpCounters(parse(NETSTAT).into_iter().chain(parse(SNMP)).collect());
        let mut after = before.clone();
        *after.0.get_mut("TcpExt.ListenOverflows").unwrap() += 3214;
        *after.0.get_mut("Tcp.RetransSegs").unwrap() = 0; // a counter that wrapped or was reset
        let d = after.since(&before);
        assert_eq!(d.get("TcpExt.ListenOverflows"), 3214);
        assert_eq!(d.get("Tcp.RetransSegs"), 0);
        assert!(!d.0.contains_key("IpExt.InOctets"), "only watched counters");
    }

    #[test]
    fn this_machine_has_the_counters_the_rules_read() {
        let c = TcpCounters::read();
        for name in [
            "TcpExt.ListenOverflows",
            "Tcp.RetransSegs",
            "TcpExt.TCPSynRetrans",
        ] {
            assert!(c.0.contains_key(name), "{name} missing from /proc/net");
        }
    }
}
