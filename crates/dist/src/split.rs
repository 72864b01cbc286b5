//! How one plan is shared among N ranks: connections, requests and the open-loop rate split exactly
//! (every remainder given to some rank, nothing lost or counted twice), and each rank its own seeded
//! URL stream.
//!
//! Connections are dealt evenly, the first `c % N` ranks taking one more. Requests and rate follow the
//! connections (a rank with 3 of 10 connections gets 3/10 of the requests), because a rank's
//! connections work through its own budget only: an even request split over uneven connections would
//! leave the smaller ranks busy after the others finished. The proportional split telescopes: rank
//! i's share is ⌊n·Cᵢ₊₁/c⌋ − ⌊n·Cᵢ/c⌋ with Cᵢ the connections of the ranks before i, so the shares
//! add up to n exactly.

use anyhow::bail;
use webstand_results::{Pick, Plan, Shape};

/// The engine's smallest per-process rate; a rank's share must not fall below it.
const MIN_RATE: f64 = 0.001;

/// `total` dealt over `n` parts, the first `total % n` parts one larger.
pub fn even(total: u64, n: usize) -> Vec<u64> {
    let n64 = n as u64;
    (0..n64)
        .map(|i| total / n64 + u64::from(i < total % n64))
        .collect()
}

/// `total` split in proportion to `weights`, exactly (the shares add up to `total`).
pub fn proportional(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let mut before = 0u128;
    weights
        .iter()
        .map(|&w| {
            let lo = u128::from(total) * before / sum;
            before += u128::from(w);
            let hi = u128::from(total) * before / sum;
            (hi - lo) as u64
        })
        .collect()
}

/// The seed of rank `rank`'s URL stream: rank 0 keeps the plan's seed (a one-rank run picks what a
/// single process picks), the others get distinct streams (a golden-ratio step apart).
pub fn rank_seed(seed: u64, rank: usize) -> u64 {
    seed.wrapping_add((rank as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Each rank's plan, or `None` for a rank with no connection (more ranks than connections). Errors
/// when a rank's share of `--rate` would fall below what the engine can pace.
pub fn split(plan: &Plan, ranks: usize) -> anyhow::Result<Vec<Option<Plan>>> {
    if ranks == 0 {
        bail!("a distributed run needs at least one rank");
    }
    let clients = even(plan.shape.clients() as u64, ranks);
    let requests = plan.stop.requests.map(|n| proportional(n, &clients));
    let mut out = Vec::with_capacity(ranks);
    let mut before = 0u64;
    let total_clients = plan.shape.clients() as f64;
    for (rank, &c) in clients.iter().enumerate() {
        if c == 0 {
            out.push(None);
            continue;
        }
        let mut p = plan.clone();
        p.shape = match plan.shape {
            Shape::Closed { .. } => Shape::Closed {
                clients: c as usize,
            },
            Shape::Open { rate, jitter, .. } => {
                // Telescoping too: the shares add up to `rate` up to float rounding.
                let share = rate * (before + c) as f64 / total_clients
                    - rate * before as f64 / total_clients;
                if share < MIN_RATE {
                    bail!(
                        "--rate {rate} over {ranks} ranks leaves rank {rank} {share:.6} requests/s, below \
                         the {MIN_RATE} the engine paces: raise the rate or use fewer ranks"
                    );
                }
                Shape::Open {
                    clients: c as usize,
                    rate: share,
                    jitter,
                }
            }
        };
        before += c;
        p.stop.requests = requests.as_ref().map(|r| r[rank]);
        p.pick = match &plan.pick {
            Pick::Single => Pick::Single,
            Pick::Uniform { seed } => Pick::Uniform {
                seed: rank_seed(*seed, rank),
            },
            Pick::Weighted { weights, seed } => Pick::Weighted {
                weights: weights.clone(),
                seed: rank_seed(*seed, rank),
            },
        };
        out.push(Some(p));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_engine::parse_url;
    use webstand_results::Stop;

    fn plan(c: usize, n: Option<u64>, rate: Option<f64>) -> Plan {
        let (target, path) = parse_url("http://127.0.0.1:8080/x").unwrap();
        let mut p = Plan::new(target, &path);
        p.shape = match rate {
            None => Shape::Closed { clients: c },
            Some(rate) => Shape::Open {
                clients: c,
                rate,
                jitter: false,
            },
        };
        p.stop = Stop {
            requests: n,
            duration: None,
        };
        p.pick = Pick::Uniform { seed: 42 };
        p
    }

    #[test]
    fn ten_connections_over_four_ranks_add_up_exactly() {
        let shares = split(&plan(10, Some(40_001), None), 4).unwrap();
        let clients: Vec<usize> = shares
            .iter()
            .map(|p| p.as_ref().unwrap().shape.clients())
            .collect();
        assert_eq!(clients, vec![3, 3, 2, 2]);
        let requests: Vec<u64> = shares
            .iter()
            .map(|p| p.as_ref().unwrap().stop.requests.unwrap())
            .collect();
        assert_eq!(requests.iter().sum::<u64>(), 40_001);
        assert_eq!(requests, vec![12_000, 12_000, 8_000, 8_001]);
        // Every rank has at least one request per connection (ab's n >= c holds per rank).
        for (c, n) in clients.iter().zip(&requests) {
            assert!(*n >= *c as u64);
        }
    }

    #[test]
    fn more_ranks_than_connections_leaves_ranks_idle() {
        let shares = split(&plan(3, Some(7), None), 4).unwrap();
        assert!(shares[3].is_none());
        let n: u64 = shares
            .iter()
            .flatten()
            .map(|p| p.stop.requests.unwrap())
            .sum();
        assert_eq!(n, 7);
    }

    #[test]
    fn rate_splits_with_the_connections() {
        let shares = split(&plan(10, None, Some(1000.0)), 4).unwrap();
        let rates: Vec<f64> = shares
            .iter()
            .map(|p| match p.as_ref().unwrap().shape {
                Shape::Open { rate, .. } => rate,
                _ => unreachable!(),
            })
            .collect();
        assert!((rates.iter().sum::<f64>() - 1000.0).abs() < 1e-9);
        assert!((rates[0] - 300.0).abs() < 1e-9 && (rates[3] - 200.0).abs() < 1e-9);
        assert!(split(&plan(4, None, Some(0.002)), 4).is_err());
    }

    #[test]
    fn each_rank_has_its_own_stream_and_rank_zero_keeps_the_seed() {
        let shares = split(&plan(4, Some(8), None), 4).unwrap();
        let seeds: Vec<u64> = shares
            .iter()
            .map(|p| match p.as_ref().unwrap().pick {
                Pick::Uniform { seed } => seed,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(seeds[0], 42);
        let mut distinct = seeds.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4);
    }

    #[test]
    fn proportional_is_exact_for_awkward_numbers() {
        for total in [0u64, 1, 7, 99, 40_000, u64::MAX / 3] {
            for w in [&[1u64, 1, 1][..], &[3, 3, 2, 2], &[5, 0, 1], &[1]] {
                assert_eq!(proportional(total, w).iter().sum::<u64>(), total);
            }
        }
        assert_eq!(even(10, 4), vec![3, 3, 2, 2]);
    }
}
