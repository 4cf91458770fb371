//! Helpers shared by the `collectives_*` tests: structural checks that do
//! not need the engine (matching, completion under strict rendezvous, a
//! minimal PLogP-like timing).
#![allow(dead_code)]

pub mod ompi;
pub mod trace;

use commodel_engine::collectives::{catalog, generate, CollectiveOptions};
use commodel_engine::{DepKind, OpKind, Schedule, ANY};
use std::collections::HashMap;

pub fn opts() -> CollectiveOptions {
    CollectiveOptions::default()
}

pub fn gen(name: &str, p: u32, size: u64) -> Schedule {
    gen_with(name, p, size, &opts())
}

pub fn gen_with(name: &str, p: u32, size: u64, o: &CollectiveOptions) -> Schedule {
    generate(name, p, size, o).unwrap_or_else(|e| panic!("{name} P={p} size={size}: {e}"))
}

pub fn names() -> Vec<&'static str> {
    catalog().iter().map(|c| c.name).collect()
}

/// Rank counts a collective accepts among `candidates`.
pub fn rank_counts(name: &str, candidates: &[u32]) -> Vec<u32> {
    let pow2_only = name.starts_with("alltoall-xor");
    let two_only = name.ends_with("-two-proc");
    candidates
        .iter()
        .copied()
        .filter(|p| !pow2_only || p.is_power_of_two())
        .filter(|&p| !two_only || p <= 2)
        .collect()
}

/// Bytes sent and received per rank.
pub fn bytes_per_rank(s: &Schedule) -> (Vec<u64>, Vec<u64>) {
    let p = s.num_ranks() as usize;
    let (mut sent, mut recvd) = (vec![0u64; p], vec![0u64; p]);
    for r in 0..s.num_ranks() {
        for id in s.ops_of(r) {
            match s.kind(id) {
                OpKind::Send => sent[r as usize] += s.size(id),
                OpKind::Recv => recvd[r as usize] += s.size(id),
                OpKind::Calc => {}
            }
        }
    }
    (sent, recvd)
}

pub fn count_kind(s: &Schedule, r: u32, kind: OpKind) -> usize {
    s.ops_of(r).filter(|&id| s.kind(id) == kind).count()
}

/// Every send has exactly one receive with the same (src, dst, tag, bytes)
/// and vice versa; no wildcards; no message to self.
pub fn check_matching(s: &Schedule) -> Result<(), String> {
    let mut balance: HashMap<(u32, u32, u32, u64), i64> = HashMap::new();
    for r in 0..s.num_ranks() {
        for id in s.ops_of(r) {
            let (peer, tag, size) = (s.peer(id), s.tag(id), s.size(id));
            match s.kind(id) {
                OpKind::Send | OpKind::Recv if peer == r => {
                    return Err(format!("rank {r}: message to/from itself"))
                }
                OpKind::Send | OpKind::Recv if peer == ANY || tag == ANY => {
                    return Err(format!("rank {r}: wildcard in op #{}", s.local_index(id)))
                }
                OpKind::Send => *balance.entry((r, peer, tag, size)).or_default() += 1,
                OpKind::Recv => *balance.entry((peer, r, tag, size)).or_default() -= 1,
                OpKind::Calc => {}
            }
        }
    }
    match balance.iter().find(|(_, &v)| v != 0) {
        None => Ok(()),
        Some(((src, dst, tag, size), v)) => Err(format!(
            "{src}->{dst} tag {tag} {size}b: {v:+} unmatched (positive: sends without receive)"
        )),
    }
}

/// For each send/recv, the op it matches: the k-th send from s to d with tag
/// t (in local order) matches the k-th receive at d from s with tag t.
pub fn match_ops(s: &Schedule) -> Vec<Option<u32>> {
    let mut sends: HashMap<(u32, u32, u32), Vec<u32>> = HashMap::new();
    let mut recvs: HashMap<(u32, u32, u32), Vec<u32>> = HashMap::new();
    for r in 0..s.num_ranks() {
        for id in s.ops_of(r) {
            match s.kind(id) {
                OpKind::Send => sends
                    .entry((r, s.peer(id), s.tag(id)))
                    .or_default()
                    .push(id),
                OpKind::Recv => recvs
                    .entry((s.peer(id), r, s.tag(id)))
                    .or_default()
                    .push(id),
                OpKind::Calc => {}
            }
        }
    }
    let mut m = vec![None; s.num_ops()];
    for (key, ss) in &sends {
        if let Some(rs) = recvs.get(key) {
            for (&a, &b) in ss.iter().zip(rs) {
                m[a as usize] = Some(b);
                m[b as usize] = Some(a);
            }
        }
    }
    m
}

/// Prerequisites of each op: (prerequisite, kind).
pub fn prerequisites(s: &Schedule) -> Vec<Vec<(u32, DepKind)>> {
    let mut pre = vec![Vec::new(); s.num_ops()];
    for (a, b, k) in s.edges() {
        pre[a as usize].push((b, k));
    }
    pre
}

/// Run the schedule with the strictest semantics (every message is a
/// rendezvous: a send and its receive both finish only once both have
/// started; calc finishes when started). Ok if every operation finishes,
/// else the first stuck operations.
pub fn completes_under_rendezvous(s: &Schedule) -> Result<(), String> {
    let m = match_ops(s);
    let pre = prerequisites(s);
    let n = s.num_ops();
    let (mut started, mut finished) = (vec![false; n], vec![false; n]);
    let mut changed = true;
    while changed {
        changed = false;
        for id in 0..n {
            if !started[id]
                && pre[id].iter().all(|&(b, k)| match k {
                    DepKind::Requires => finished[b as usize],
                    DepKind::IRequires => started[b as usize],
                })
            {
                started[id] = true;
                changed = true;
            }
        }
        for id in 0..n {
            if started[id] && !finished[id] {
                let done = match s.kind(id as u32) {
                    OpKind::Calc => true,
                    _ => m[id].is_some_and(|o| started[o as usize]),
                };
                if done {
                    finished[id] = true;
                    changed = true;
                }
            }
        }
    }
    let stuck: Vec<String> = (0..n)
        .filter(|&i| !finished[i])
        .take(5)
        .map(|i| {
            format!(
                "rank {} op #{}",
                s.rank_of(i as u32),
                s.local_index(i as u32)
            )
        })
        .collect();
    if stuck.is_empty() {
        Ok(())
    } else {
        Err(format!("stuck: {}", stuck.join(", ")))
    }
}

/// Finish time of every rank under a minimal PLogP reading (no contention,
/// no CPU overheads): a send occupies its sender for g and finishes at
/// start + g; a receive finishes at max(its start, matching send's finish + L);
/// calc takes its duration. Sends of one rank do not queue behind each
/// other unless the schedule orders them, so this checks the dependency
/// structure, not a network model.
pub fn plogp_finish(s: &Schedule, g: u64, l: u64) -> Vec<u64> {
    let m = match_ops(s);
    let pre = prerequisites(s);
    let n = s.num_ops();
    let (mut start, mut finish): (Vec<Option<u64>>, Vec<Option<u64>>) =
        (vec![None; n], vec![None; n]);
    let mut changed = true;
    while changed {
        changed = false;
        for id in 0..n {
            if start[id].is_none() {
                let mut t = Some(0u64);
                for &(b, k) in &pre[id] {
                    let dep = match k {
                        DepKind::Requires => finish[b as usize],
                        DepKind::IRequires => start[b as usize],
                    };
                    t = match (t, dep) {
                        (Some(a), Some(d)) => Some(a.max(d)),
                        _ => None,
                    };
                }
                if t.is_some() {
                    start[id] = t;
                    changed = true;
                }
            }
            if let (Some(t0), None) = (start[id], finish[id]) {
                let f = match s.kind(id as u32) {
                    OpKind::Send => Some(t0 + g),
                    OpKind::Calc => Some(t0 + s.size(id as u32)),
                    OpKind::Recv => m[id]
                        .and_then(|o| finish[o as usize])
                        .map(|sf| t0.max(sf + l)),
                };
                if f.is_some() {
                    finish[id] = f;
                    changed = true;
                }
            }
        }
    }
    (0..s.num_ranks())
        .map(|r| {
            s.ops_of(r)
                .map(|id| finish[id as usize].expect("every op finishes"))
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// A rank's operations as text, each with the local indices it requires
/// (sorted), e.g. `"send 8b to 3 tag 0 <- 0"`.
pub fn render(s: &Schedule, r: u32) -> Vec<String> {
    let pre = prerequisites(s);
    s.ops_of(r)
        .map(|id| {
            let mut text = match s.kind(id) {
                OpKind::Send => format!("send {}b to {} tag {}", s.size(id), s.peer(id), s.tag(id)),
                OpKind::Recv => {
                    format!("recv {}b from {} tag {}", s.size(id), s.peer(id), s.tag(id))
                }
                OpKind::Calc => format!("calc {}", s.size(id)),
            };
            let mut deps: Vec<String> = pre[id as usize]
                .iter()
                .map(|&(b, k)| match k {
                    DepKind::Requires => format!("{}", s.local_index(b)),
                    DepKind::IRequires => format!("i{}", s.local_index(b)),
                })
                .collect();
            deps.sort();
            if !deps.is_empty() {
                text.push_str(" <- ");
                text.push_str(&deps.join(","));
            }
            text
        })
        .collect()
}
