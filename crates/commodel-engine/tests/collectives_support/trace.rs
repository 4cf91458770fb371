//! Call-by-call references: a rank's MPI calls written down as the operations
//! they post ([`Trace`]), and the check that a generated schedule makes them
//! ([`assert_follows`]). The trace tests of Open MPI and MPICH transcribe each
//! library's loop with these.

use super::{prerequisites, render};
use commodel_engine::collectives::CollectiveOptions;
use commodel_engine::{DepKind, OpKind, Schedule};
use std::collections::BTreeSet;

/// The generator options of the trace tests: `root`, `segment`, and a calc of
/// 1 ns per reduced byte (the references' [`Trace::reduce`]).
pub fn traced(root: u32, segment: Option<u64>) -> CollectiveOptions {
    CollectiveOptions {
        root,
        segment,
        reduce_ns_per_byte: 1.0,
        ..super::opts()
    }
}

/// P = 2..=17: powers of two and the numbers around them.
pub fn ranks() -> impl Iterator<Item = u32> {
    2..=17
}

/// Sizes around P (below, at, just above), uneven and even ones, and large ones.
pub fn sizes(p: u32) -> Vec<u64> {
    let p = p as u64;
    let mut v = vec![
        1,
        3,
        p - 1,
        p,
        p + 1,
        2 * p + 3,
        1000,
        1001,
        4096,
        65_536,
        100_003,
    ];
    v.retain(|&s| s > 0);
    v.sort_unstable();
    v.dedup();
    v
}

/// The largest power of two <= p (MPICH's `MPL_pof2`, Open MPI's
/// `opal_next_poweroftwo(p) >> 1`).
pub fn pof2(p: u32) -> u32 {
    1 << (31 - p.leading_zeros())
}

/// An empty trace per rank.
pub fn traces(p: u32) -> Vec<Trace> {
    (0..p).map(|_| Trace::default()).collect()
}

/// One expected operation of a rank.
#[derive(Debug, Clone, PartialEq)]
pub struct Want {
    pub kind: OpKind,
    pub peer: u32,
    /// Send: its bytes; receive: the count the library posts (an upper bound);
    /// calc: nanoseconds (1 per reduced byte).
    pub bytes: u64,
    /// Local indices of the operations completed before this one is posted.
    pub after: BTreeSet<usize>,
}

/// A rank's calls, recorded as the operations they post.
#[derive(Default)]
pub struct Trace {
    pub ops: Vec<Want>,
    observed: BTreeSet<usize>,
}

impl Trace {
    fn post(&mut self, kind: OpKind, peer: u32, bytes: u64) -> usize {
        self.ops.push(Want {
            kind,
            peer,
            bytes,
            after: self.observed.clone(),
        });
        self.ops.len() - 1
    }
    pub fn isend(&mut self, to: u32, bytes: u64) -> usize {
        self.post(OpKind::Send, to, bytes)
    }
    pub fn irecv(&mut self, from: u32, bound: u64) -> usize {
        self.post(OpKind::Recv, from, bound)
    }
    pub fn wait(&mut self, req: usize) {
        self.observed.insert(req);
    }
    pub fn waitall(&mut self, reqs: &[usize]) {
        reqs.iter().for_each(|&q| self.wait(q));
    }
    pub fn send(&mut self, to: u32, bytes: u64) {
        let s = self.isend(to, bytes);
        self.wait(s);
    }
    pub fn recv(&mut self, from: u32, bound: u64) {
        let r = self.irecv(from, bound);
        self.wait(r);
    }
    /// A send and a receive in flight together, both waited for (Open MPI's
    /// `ompi_coll_base_sendrecv`: irecv, blocking send, wait; MPICH's
    /// `MPIC_Sendrecv`: irecv, isend, wait for both: the same operations).
    pub fn sendrecv(&mut self, to: u32, bytes: u64, from: u32, bound: u64) {
        let r = self.irecv(from, bound);
        self.send(to, bytes);
        self.wait(r);
    }
    /// `more`'s calls made after this trace's: its operations appended, each
    /// waiting for what it waited for there and for all this trace waited for.
    pub fn extend(&mut self, more: Trace) {
        let base = self.ops.len();
        for w in more.ops {
            let mut after = self.observed.clone();
            after.extend(w.after.iter().map(|&j| j + base));
            self.ops.push(Want { after, ..w });
        }
        self.observed
            .extend(more.observed.iter().map(|&j| j + base));
    }
    /// A local reduction of `bytes` bytes (a calc of 1 ns per byte; none for 0 bytes).
    pub fn reduce(&mut self, bytes: u64) {
        if bytes > 0 {
            let c = self.post(OpKind::Calc, 0, bytes);
            self.wait(c);
        }
    }
}

/// The generated schedule against the reference (`lib` names the library in
/// messages), rank by rank and pair by pair: each rank's operations in order
/// (kind, peer, bytes; a receive no larger than the count posted), each
/// waiting for exactly the operations the rank had completed when the library
/// posted it, and between every pair of ranks the i-th send matching the i-th
/// receive (one tag per collective: matching in posting order).
pub fn assert_follows(lib: &str, what: &str, s: &Schedule, want: &[Trace]) {
    if let Some(difference) = first_difference(lib, what, s, want) {
        panic!("{difference}");
    }
}

/// Where the schedule first departs from the reference ([`assert_follows`]'s
/// check), or None.
pub fn first_difference(lib: &str, what: &str, s: &Schedule, want: &[Trace]) -> Option<String> {
    let pre = prerequisites(s);
    for r in 0..s.num_ranks() {
        let ids: Vec<_> = s.ops_of(r).collect();
        let w = &want[r as usize].ops;
        if ids.len() != w.len() {
            return Some(format!(
                "{what}: rank {r} has {} ops, {lib} {}: {:?} vs {w:?}",
                ids.len(),
                w.len(),
                render(s, r)
            ));
        }
        let mut closure: Vec<BTreeSet<usize>> = Vec::with_capacity(ids.len());
        for (i, &id) in ids.iter().enumerate() {
            let mut after = BTreeSet::new();
            for &(b, k) in &pre[id as usize] {
                if k != DepKind::Requires || s.rank_of(b) != r {
                    return Some(format!(
                        "{what}: rank {r} op {i}: a dependency {k:?} on rank {}'s op",
                        s.rank_of(b)
                    ));
                }
                let j = s.local_index(b) as usize;
                after.insert(j);
                after.extend(closure[j].iter().copied());
            }
            closure.push(after);
            let x = &w[i];
            let ctx = || {
                format!(
                    "{what}: rank {r} op {i}: {:?} vs {lib} {x:?}",
                    render(s, r)[i]
                )
            };
            let bytes_ok = if x.kind == OpKind::Recv {
                s.size(id) <= x.bytes
            } else {
                s.size(id) == x.bytes
            };
            if s.kind(id) != x.kind || (x.kind != OpKind::Calc && s.peer(id) != x.peer) || !bytes_ok
            {
                return Some(ctx());
            }
            if closure[i] != x.after {
                return Some(format!("{}: waits for {:?}", ctx(), closure[i]));
            }
        }
    }
    let p = s.num_ranks();
    for a in 0..p {
        for b in 0..p {
            let sends: Vec<_> = s
                .ops_of(a)
                .filter(|&id| s.kind(id) == OpKind::Send && s.peer(id) == b)
                .map(|id| (s.tag(id), s.size(id)))
                .collect();
            let recvs: Vec<_> = s
                .ops_of(b)
                .filter(|&id| s.kind(id) == OpKind::Recv && s.peer(id) == a)
                .map(|id| (s.tag(id), s.size(id)))
                .collect();
            if sends != recvs {
                return Some(format!(
                    "{what}: messages {a} -> {b}: sent {sends:?}, received {recvs:?}"
                ));
            }
        }
    }
    None
}
