//! `zhu`: Zhu, Lastovetsky et al.'s resource-constrained model of hierarchical
//! Ethernet (congestion factors, fairness with saturation, the asymmetric
//! bidirectional property, Algorithm 1), with the time prediction of the
//! slides: bandwidths are redistributed whenever a flow starts or ends.
//!
//! Our reading on a tree network (the paper has racks of nodes and one
//! backbone; a logical link e(a, b) is a flow):
//!
//! * **With-flow sets** S(a,b) (eq. 1): for every link direction r on the
//!   flow's route, the flows on r. **Contra-flow sets** (eq. 3): the flows on
//!   the opposite direction of each of those links. β[i] = 1/capacity.
//! * **Congestion factors** (eq. 2, 4): k = max_i |S[i]|/cap_i, k̄ likewise on
//!   the contra-flow sets.
//! * **Fairness with saturation** (eq. 5): a link shares its capacity fairly;
//!   an optical backbone with a saturation threshold n_sat (10 in the paper:
//!   9.4 Gbit/s over 940 Mbit/s NICs) is no constraint while it carries at
//!   most n_sat flows (each flow then runs at its NIC rate, β_E).
//! * **Algorithm 1**: flows are taken in descending (max(k, k̄), k, k̄) (eq. 7;
//!   ties by transfer id). If k >= k̄, the flow's rate is the smallest over its
//!   most congested links of (capacity − rates already given there) / flows
//!   not yet given a rate there, at most its NIC rate (fairness, lines 8-10,
//!   26-32). Otherwise, for its most contra-congested links: if the flows
//!   already given rates there saturate the link, the flow gets the largest of
//!   their rates (the asymmetric property, lines 12-17: 2 in + 1 out on one
//!   NIC all get half; 12 in + 1 out give 13/12 of the NIC in total); if not,
//!   that contra set is dropped and the flow goes back to the queue (19-20).
//!   (Lines 22-24 of the paper swap E and Ē; we read them as "move the flow to
//!   the calculated set".) A rate never goes below 1e-9 of the NIC rate, so
//!   every flow finishes.
//! * `asymmetric: false` (`zhu-fair`): contra-flows are ignored (fairness only).

use super::Fluid;
use crate::engine::XferId;
use crate::topology::Topology;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A flow waiting in Algorithm 1's queue: `keys` = (k, k̄) when it was queued.
/// The greatest is taken first: descending max(k, k̄), then k, then k̄, then
/// ascending transfer id (unique, so the order is total).
struct Queued {
    keys: (f64, f64),
    xfer: XferId,
    /// Index in `fluid.work`.
    i: usize,
}

impl Queued {
    fn cmp_keys(&self, o: &Queued) -> Ordering {
        let ((ka, kba), (kb, kbb)) = (self.keys, o.keys);
        let by = |a: f64, b: f64| a.partial_cmp(&b).unwrap_or(Ordering::Equal);
        by(ka.max(kba), kb.max(kbb))
            .then(by(ka, kb))
            .then(by(kba, kbb))
            .then(o.xfer.cmp(&self.xfer))
    }
}

impl PartialEq for Queued {
    fn eq(&self, o: &Queued) -> bool {
        self.cmp_keys(o) == Ordering::Equal
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Queued) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    fn cmp(&self, o: &Queued) -> Ordering {
        self.cmp_keys(o)
    }
}

/// Per resource: (sum of the rates given, flows there still without one, largest
/// rate given); kept between calls of [`allocate`], all zeros between them.
pub type Given = Vec<(f64, usize, f64)>;

/// Rates of the flows `fluid.work` under Zhu's Algorithm 1 (see the module
/// documentation); `rates` gets one rate (bytes/s) per flow in `work`. `used`
/// is scratch (empty, or as the previous call left it).
pub fn allocate(
    fluid: &Fluid,
    topo: &Topology,
    asymmetric: bool,
    used: &mut Given,
    rates: &mut Vec<f64>,
) {
    let work = &fluid.work;
    let n = work.len();
    rates.clear();
    rates.resize(n, f64::NAN);
    // Is resource r a constraint at its current load? (eq. 5 saturation)
    let limits = |r: u32| -> bool {
        let c = fluid.on[r as usize].len() as u32;
        topo.saturation(r).is_none_or(|s| c > s)
    };
    let load = |r: u32| fluid.on[r as usize].len() as f64 / topo.capacity(r, false);
    let factors = |i: usize, dropped: &[u32]| -> (f64, f64) {
        let f = &fluid.flows[work[i] as usize];
        let mut k: f64 = 0.0;
        let mut kb: f64 = 0.0;
        for &r in &f.route {
            if limits(r) {
                k = k.max(load(r));
            }
            if asymmetric {
                if let Some(b) = topo.reverse(r) {
                    if !dropped.contains(&b) && !fluid.on[b as usize].is_empty() && limits(b) {
                        kb = kb.max(load(b));
                    }
                }
            }
        }
        (k, kb)
    };
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    // Per flow: dropped contra resources, factors.
    let mut dropped: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut keys: Vec<(f64, f64)> = (0..n).map(|i| factors(i, &[])).collect();
    used.resize(topo.num_resources(), (0.0, 0, 0.0));
    for &id in work {
        for &r in &fluid.flows[id as usize].route {
            used[r as usize].1 += 1;
        }
    }
    // The most congested flow first: the flows sorted by their first keys, and a
    // heap of the flows sent back with new keys (only a flow taken out gets new
    // keys); the greater of the two heads is taken.
    let entry = |i: usize, keys: &[(f64, f64)]| Queued {
        keys: keys[i],
        xfer: fluid.flows[work[i] as usize].xfer,
        i,
    };
    let mut sorted: Vec<Queued> = (0..n).map(|i| entry(i, &keys)).collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let mut sorted = sorted.into_iter().peekable();
    let mut again: BinaryHeap<Queued> = BinaryHeap::new();
    loop {
        let from_sorted = match (sorted.peek(), again.peek()) {
            (Some(a), Some(b)) => a > b,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let next = if from_sorted {
            sorted.next()
        } else {
            again.pop()
        };
        let Some(Queued { i, .. }) = next else { break };
        let f = &fluid.flows[work[i] as usize];
        let nic = topo.capacity(f.route[0], false);
        let (k, kb) = keys[i];
        let rate;
        if k >= kb || same(k, kb) {
            let mut r_min = nic;
            for &r in &f.route {
                if limits(r) && same(load(r), k) {
                    let (given, left, _) = used[r as usize];
                    let share = (topo.capacity(r, false) - given) / left.max(1) as f64;
                    r_min = r_min.min(share);
                }
            }
            rate = r_min;
        } else {
            let mut decided = false;
            let mut r_contra = f64::INFINITY;
            for &r in &f.route {
                let Some(b) = topo.reverse(r) else { continue };
                if dropped[i].contains(&b) || fluid.on[b as usize].is_empty() || !limits(b) {
                    continue;
                }
                if !same(load(b), kb) {
                    continue;
                }
                let (given, _, best_rate) = used[b as usize];
                if same(given, topo.capacity(b, false)) || given > topo.capacity(b, false) {
                    r_contra = r_contra.min(best_rate);
                    decided = true;
                } else {
                    dropped[i].push(b);
                }
            }
            if decided {
                rate = r_contra.min(nic);
            } else {
                keys[i] = factors(i, &dropped[i]);
                again.push(entry(i, &keys));
                continue;
            }
        }
        let rate = rate.max(nic * 1e-9);
        rates[i] = rate;
        for &r in &f.route {
            let e = &mut used[r as usize];
            e.0 += rate;
            e.1 = e.1.saturating_sub(1);
            e.2 = e.2.max(rate);
        }
    }
    // Only the routes' resources were written.
    for &id in work {
        for &r in &fluid.flows[id as usize].route {
            used[r as usize] = (0.0, 0, 0.0);
        }
    }
}
