//! `maxmin`: properties of the weighted max-min allocation on random trees and
//! flow sets (capacity, bottleneck, equality with a slow reference), and
//! end-to-end times of small schedules.

use commodel_engine::contention::maxmin::Filler;
use commodel_engine::goal;
use commodel_engine::params::{MaxminParams, TopologySpec};
use commodel_engine::predict::run;
use commodel_engine::topology::Topology;
use commodel_engine::ModelParams;
use proptest::prelude::*;
use std::collections::HashMap;

/// A random tree: a binary tree with random b(h), or racks of random sizes.
fn topo_strategy() -> impl Strategy<Value = TopologySpec> {
    prop_oneof![
        (1u32..5, prop::collection::vec(1.0f64..1000.0, 5)).prop_map(|(d, b)| {
            TopologySpec::BinaryTree {
                nodes: None,
                b: b[..d as usize].to_vec(),
                b_bidir: None,
                d: None,
                d_bidir: None,
                latency: Some((1..=d).map(|h| h as u64 * 1000).collect()),
            }
        }),
        (
            prop::collection::vec(1u64..5, 1..5),
            1.0f64..1000.0,
            1.0f64..1000.0,
            0u64..5000,
            0u64..5000
        )
            .prop_map(|(racks, nic, bb, nl, bl)| TopologySpec::Racks {
                racks,
                members: None,
                nic,
                nic_bidir: None,
                nic_latency: nl,
                backbone: bb,
                backbone_latency: bl,
                backbone_saturation: None,
                d: None,
            }),
    ]
}

/// Slow reference: weighted progressive filling from scratch, fixing the
/// flows of one bottleneck link (the lowest-numbered one) per round.
fn reference(routes: &[Vec<u32>], w: &[f64], cap: impl Fn(u32) -> f64) -> Vec<f64> {
    let mut rate = vec![f64::NAN; routes.len()];
    loop {
        let mut load: HashMap<u32, (f64, f64, usize)> = HashMap::new();
        for (i, r) in routes.iter().enumerate() {
            for &res in r {
                let e = load.entry(res).or_insert((0.0, 0.0, 0));
                if rate[i].is_nan() {
                    e.1 += 1.0 / w[i];
                    e.2 += 1;
                } else {
                    e.0 += rate[i];
                }
            }
        }
        let mut best: Option<(f64, u32)> = None;
        let mut keys: Vec<_> = load.keys().copied().collect();
        keys.sort_unstable();
        for res in keys {
            let (fixed, ws, n) = load[&res];
            if n == 0 {
                continue;
            }
            let lam = (cap(res) - fixed).max(0.0) / ws;
            if best.is_none_or(|(b, _)| lam < b) {
                best = Some((lam, res));
            }
        }
        let Some((lam, res)) = best else { break };
        for (i, r) in routes.iter().enumerate() {
            if rate[i].is_nan() && r.contains(&res) {
                rate[i] = lam / w[i];
            }
        }
    }
    rate
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-7 * a.abs().max(b.abs()).max(1e-9)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn allocation_is_weighted_max_min(
        spec in topo_strategy(),
        pairs in prop::collection::vec((0u32..64, 0u32..64), 1..40),
        rtt in any::<bool>(),
    ) {
        let topo = Topology::build(&spec, "maxmin").unwrap();
        let n = topo.nodes();
        let routes: Vec<Vec<u32>> = pairs
            .iter()
            .map(|&(a, b)| topo.route(a % n, b % n).resources)
            .collect();
        let w: Vec<f64> = pairs
            .iter()
            .map(|&(a, b)| if rtt { topo.route(a % n, b % n).latency.max(1) as f64 } else { 1.0 })
            .collect();
        let cap = |r: u32| topo.capacity(r, false);
        let mut filler = Filler::new(topo.num_resources());
        let mut rates = Vec::new();
        filler.allocate(routes.iter().map(|r| r.as_slice()).zip(w.iter().copied()), cap, &mut rates);
        // 1. No link direction over its capacity.
        let mut load: HashMap<u32, f64> = HashMap::new();
        for (i, r) in routes.iter().enumerate() {
            prop_assert!(rates[i] > 0.0 && rates[i].is_finite());
            for &res in r {
                *load.entry(res).or_default() += rates[i];
            }
        }
        for (&res, &l) in &load {
            prop_assert!(l <= cap(res) * (1.0 + 1e-9), "resource {} carries {} > {}", res, l, cap(res));
        }
        // 2. Every flow has a saturated link where its weighted rate is the largest.
        for (i, r) in routes.iter().enumerate() {
            let ok = r.iter().any(|&res| {
                let saturated = load[&res] >= cap(res) * (1.0 - 1e-9);
                let largest = routes.iter().enumerate().filter(|(_, q)| q.contains(&res)).all(
                    |(j, _)| rates[j] * w[j] <= rates[i] * w[i] * (1.0 + 1e-9),
                );
                saturated && largest
            });
            prop_assert!(ok, "flow {} ({:?}) has no bottleneck", i, pairs[i]);
        }
        // 3. Same allocation as the slow reference.
        let slow = reference(&routes, &w, cap);
        for i in 0..routes.len() {
            prop_assert!(close(rates[i], slow[i]), "flow {}: {} vs reference {}", i, rates[i], slow[i]);
        }
    }
}

const S: u64 = 1_000_000_000_000;

fn two_into_one() -> commodel_engine::Schedule {
    // Rank 0 (rack 0) and rank 2 (rack 1) both send 3000 B to rank 3 (rack 1).
    goal::parse(
        "num_ranks 4\nrank 0 {\na: send 3000b to 3 tag 1\n}\nrank 1 {\n}\nrank 2 {\na: send 3000b to 3 tag 2\n}\nrank 3 {\nx: recv 3000b from 0 tag 1\ny: recv 3000b from 2 tag 2\n}\n",
        "two.goal",
    )
    .unwrap()
}

fn racks(rtt: bool) -> ModelParams {
    let topo = TopologySpec::Racks {
        racks: vec![2, 2],
        members: None,
        nic: 1000.0,
        nic_bidir: None,
        nic_latency: 1_000_000_000,
        backbone: 1.0e6,
        backbone_latency: 1_000_000_000,
        backbone_saturation: None,
        d: None,
    };
    ModelParams::Maxmin(MaxminParams::new(topo, rtt))
}

#[test]
fn latency_first_then_weighted_sharing() {
    let ms = 1_000_000_000u64; // ps
                               // Flow B (2 -> 3, latency 2 ms) joins at 2 ms alone at 1000 B/s; flow A
                               // (0 -> 3, latency 4 ms) joins at 4 ms. Weighted by latency, B gets twice
                               // A's rate on node 3's link: 2000/3 and 1000/3 B/s.
    let o = run(&two_into_one(), &racks(true), true).unwrap();
    let b_left = 3000.0 - 2.0;
    let t_b = 4.0 * ms as f64 + b_left / (2000.0 / 3.0) * S as f64;
    let a_sent = (t_b - 4.0 * ms as f64) / S as f64 * (1000.0 / 3.0);
    let t_a = t_b + (3000.0 - a_sent) / 1000.0 * S as f64;
    let end = |src: u32| o.messages.iter().find(|m| m.src == src).unwrap().end as f64;
    assert!((end(2) - t_b).abs() <= 2.0, "{} vs {}", end(2), t_b);
    assert!((end(0) - t_a).abs() <= 2.0, "{} vs {}", end(0), t_a);
    // Plain max-min: equal shares (500 B/s) once both are in.
    let o = run(&two_into_one(), &racks(false), true).unwrap();
    let end = |src: u32| o.messages.iter().find(|m| m.src == src).unwrap().end as f64;
    let t_b = 4.0 * ms as f64 + b_left / 500.0 * S as f64;
    let t_a = t_b + (3000.0 - b_left) / 1000.0 * S as f64;
    assert!((end(2) - t_b).abs() <= 2.0, "{} vs {}", end(2), t_b);
    assert!((end(0) - t_a).abs() <= 2.0, "{} vs {}", end(0), t_a);
}

#[test]
fn unused_capacity_goes_to_others() {
    // Crossbar, no latency: 0 -> 2 and 1 -> 2 share node 2's link (50 each);
    // 1 -> 3 is limited by node 1's link (shared with 1 -> 2): max-min gives
    // 1 -> 2 and 1 -> 3 50 each, 0 -> 2 50. Then 100 B at 50 B/s: 2 s each.
    let s = goal::parse(
        "num_ranks 4\nrank 0 {\na: send 100b to 2\n}\nrank 1 {\na: send 100b to 2\nb: send 100b to 3\n}\nrank 2 {\nx: recv 100b from 0\ny: recv 100b from 1\n}\nrank 3 {\nz: recv 100b from 1\n}\n",
        "c.goal",
    )
    .unwrap();
    let p = ModelParams::Maxmin(MaxminParams::new(TopologySpec::crossbar(4, 100.0), true));
    let o = run(&s, &p, false).unwrap();
    assert_eq!(o.makespan, 2 * S);
    // Backbone bottleneck: 2 racks of 2, backbone 50 B/s: two cross-rack flows
    // share it (25 each), an intra-rack flow takes the rest of its NIC.
    let s = goal::parse(
        "num_ranks 4\nrank 0 {\na: send 100b to 2\nb: send 300b to 1\n}\nrank 1 {\na: send 100b to 3\nr: recv 300b from 0\n}\nrank 2 {\nx: recv 100b from 0\n}\nrank 3 {\nz: recv 100b from 1\n}\n",
        "r.goal",
    )
    .unwrap();
    let p = ModelParams::Maxmin(MaxminParams::new(
        TopologySpec::racks(&[2, 2], 100.0, 50.0),
        false,
    ));
    let o = run(&s, &p, true).unwrap();
    // Cross-rack flows: 25 B/s for 4 s. 0 -> 1 gets 75 B/s while they run
    // (300 B done after 4 s), then ends at once: 300 = 75 * 4.
    for m in &o.messages {
        assert_eq!(m.end, 4 * S, "{m:?}");
    }
}

// A flag that is not true or false is refused by the bindings (tests/test_engine_params.py).
