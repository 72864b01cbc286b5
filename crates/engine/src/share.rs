//! A load thread's share of a run: its connections, and its requests and rate in proportion to
//! them, so the threads finish together.

use webstand_results::plan::{Plan, Shape};

/// A thread's part of the load.
pub(crate) struct Share {
    pub clients: usize,
    pub requests: Option<u64>,
    pub rate: f64,
}

impl Share {
    /// Thread `i`'s clients, and its requests and rate in proportion to them, so threads finish together.
    pub(crate) fn of(i: usize, threads: usize, clients: usize, plan: &Plan) -> Share {
        let (t, c) = (threads as u64, clients as u64);
        let first_client = |i: u64| i * (c / t) + i.min(c % t);
        let (lo, hi) = (first_client(i as u64), first_client(i as u64 + 1));
        let my_clients = (hi - lo) as usize;
        let rate = match plan.shape {
            Shape::Open { rate, .. } => rate * my_clients as f64 / clients as f64,
            Shape::Closed { .. } => 0.0,
        };
        let portion = |n: u64| {
            ((n as u128 * hi as u128) / c as u128 - (n as u128 * lo as u128) / c as u128) as u64
        };
        Share {
            clients: my_clients,
            requests: plan.stop.requests.map(portion),
            rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_and_follow_clients() {
        let t = webstand_results::plan::Target {
            host: "h".into(),
            port: 1,
            addrs: vec![],
        };
        let mut p = Plan::new(t, "/");
        for (n, c, threads) in [
            (1000u64, 3usize, 2usize),
            (7, 7, 3),
            (10, 1, 1),
            (100_000, 32, 2),
            (5, 5, 5),
        ] {
            p.stop.requests = Some(n);
            p.shape = Shape::Closed { clients: c };
            let shares: Vec<Share> = (0..threads).map(|i| Share::of(i, threads, c, &p)).collect();
            assert_eq!(shares.iter().map(|s| s.clients).sum::<usize>(), c);
            assert_eq!(shares.iter().map(|s| s.requests.unwrap()).sum::<u64>(), n);
            assert!(shares
                .iter()
                .all(|s| s.requests.unwrap() >= s.clients as u64));
        }
    }
}
