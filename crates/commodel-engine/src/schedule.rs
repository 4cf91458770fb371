//! Communication schedules: per-rank operations (send, recv, calc) and the
//! dependencies between them, as in LogGOPSim's GOAL format.
//!
//! A [`Schedule`] is immutable and stored compactly (structure of arrays, one
//! entry per operation, dependencies in compressed rows). Build one with a
//! [`ScheduleBuilder`]: operations may be added to ranks in any order; within a
//! rank, an operation's *local index* is its position in that rank's list, the
//! same order GOAL text gives it and the order LogGOPSim's `offset` counts.
//!
//! Dependencies are rank-local, as in GOAL:
//! * `a requires b`  — `a` cannot start before `b` has finished;
//! * `a irequires b` — `a` cannot start before `b` has started.
//!
//! Units: message sizes in bytes; `calc` durations in nanoseconds (GOAL's and
//! LogGOPSim's time unit).

use std::fmt;

/// Wildcard peer (receive from any source) or tag (any tag): GOAL's `-1`.
pub const ANY: u32 = u32::MAX;

/// What an operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum OpKind {
    /// Send `size` bytes to `peer` with `tag`.
    Send = 1,
    /// Receive `size` bytes from `peer` (or [`ANY`]) with `tag` (or [`ANY`]).
    Recv = 2,
    /// Compute for `size` nanoseconds on the rank's CPU `cpu`.
    Calc = 3,
}

impl OpKind {
    /// The GOAL keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            OpKind::Send => "send",
            OpKind::Recv => "recv",
            OpKind::Calc => "calc",
        }
    }
}

/// One operation, as the builder takes it and the schedule hands it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    /// Destination (send), source or [`ANY`] (recv); 0 for calc.
    pub peer: u32,
    /// Message tag or [`ANY`]; 0 for calc.
    pub tag: u32,
    /// Bytes (send, recv) or nanoseconds (calc).
    pub size: u64,
    /// CPU (LogGOPSim's `cpu`), default 0.
    pub cpu: u8,
    /// NIC (LogGOPSim's `nic`), default 0.
    pub nic: u8,
}

impl Op {
    pub fn send(dst: u32, bytes: u64, tag: u32) -> Op {
        Op {
            kind: OpKind::Send,
            peer: dst,
            tag,
            size: bytes,
            cpu: 0,
            nic: 0,
        }
    }
    pub fn recv(src: u32, bytes: u64, tag: u32) -> Op {
        Op {
            kind: OpKind::Recv,
            peer: src,
            tag,
            size: bytes,
            cpu: 0,
            nic: 0,
        }
    }
    pub fn calc(nanoseconds: u64) -> Op {
        Op {
            kind: OpKind::Calc,
            peer: 0,
            tag: 0,
            size: nanoseconds,
            cpu: 0,
            nic: 0,
        }
    }
}

/// Reference to an operation while building: its rank and local index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OpRef {
    pub rank: u32,
    pub index: u32,
}

/// The kind of a dependency edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepKind {
    /// `a requires b`: a starts after b finishes.
    Requires,
    /// `a irequires b`: a starts after b starts.
    IRequires,
}

/// A structural problem found when a schedule is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("rank {rank}: operation {index} does not exist (the rank has {count})")]
    NoSuchOp { rank: u32, index: u32, count: u32 },
    #[error("rank {rank} is out of range: the schedule has {num_ranks} ranks")]
    RankOutOfRange { rank: u32, num_ranks: u32 },
    #[error("a dependency links rank {a} to rank {b}: dependencies are local to a rank")]
    CrossRankDependency { a: u32, b: u32 },
    #[error("rank {rank}: {what} peer {peer} is out of range: the schedule has {num_ranks} ranks")]
    PeerOutOfRange {
        rank: u32,
        what: &'static str,
        peer: u32,
        num_ranks: u32,
    },
    #[error("rank {rank}: dependency cycle through operations {ops:?}")]
    Cycle { rank: u32, ops: Vec<u32> },
    #[error("the schedule has {count} operations; at most {max} fit")]
    TooLarge { count: u64, max: u64 },
}

#[derive(Default, Clone)]
struct RankBuild {
    ops: Vec<Op>,
    /// (dependent a, prerequisite b, kind) in insertion order.
    deps: Vec<(u32, u32, DepKind)>,
    labels: Vec<(u32, Box<str>)>,
}

/// Builds a [`Schedule`]; see the module documentation.
#[derive(Clone)]
pub struct ScheduleBuilder {
    ranks: Vec<RankBuild>,
    /// First structural error seen while adding (reported by `build`).
    error: Option<BuildError>,
}

impl ScheduleBuilder {
    pub fn new(num_ranks: u32) -> Self {
        ScheduleBuilder {
            ranks: vec![RankBuild::default(); num_ranks as usize],
            error: None,
        }
    }

    pub fn num_ranks(&self) -> u32 {
        self.ranks.len() as u32
    }

    /// Number of operations added to `rank` so far.
    pub fn len_of(&self, rank: u32) -> u32 {
        self.ranks[rank as usize].ops.len() as u32
    }

    /// Append an operation to `rank`. Panics if `rank` is out of range (a
    /// programming error; the GOAL parser checks ranks before calling).
    pub fn push(&mut self, rank: u32, op: Op) -> OpRef {
        let r = &mut self.ranks[rank as usize];
        r.ops.push(op);
        OpRef {
            rank,
            index: (r.ops.len() - 1) as u32,
        }
    }

    pub fn send(&mut self, rank: u32, dst: u32, bytes: u64, tag: u32) -> OpRef {
        self.push(rank, Op::send(dst, bytes, tag))
    }

    pub fn recv(&mut self, rank: u32, src: u32, bytes: u64, tag: u32) -> OpRef {
        self.push(rank, Op::recv(src, bytes, tag))
    }

    pub fn calc(&mut self, rank: u32, nanoseconds: u64) -> OpRef {
        self.push(rank, Op::calc(nanoseconds))
    }

    /// `a requires b`: a cannot start before b has finished. Same rank only.
    pub fn requires(&mut self, a: OpRef, b: OpRef) {
        self.dep(a, b, DepKind::Requires)
    }

    /// `a irequires b`: a cannot start before b has started. Same rank only.
    pub fn irequires(&mut self, a: OpRef, b: OpRef) {
        self.dep(a, b, DepKind::IRequires)
    }

    /// Add a dependency; checked (same rank, indices exist) in [`build`](Self::build).
    pub fn dep(&mut self, a: OpRef, b: OpRef, kind: DepKind) {
        if a.rank != b.rank {
            self.error.get_or_insert(BuildError::CrossRankDependency {
                a: a.rank,
                b: b.rank,
            });
            return;
        }
        self.ranks[a.rank as usize]
            .deps
            .push((a.index, b.index, kind));
    }

    /// Give an operation a label (kept for error messages and the GOAL writer).
    pub fn label(&mut self, op: OpRef, label: &str) {
        self.ranks[op.rank as usize]
            .labels
            .push((op.index, label.into()));
    }

    /// Check and freeze the schedule.
    ///
    /// Checks: peers in range, dependencies rank-local and pointing at
    /// existing operations, no dependency cycle (a cycle could never start).
    pub fn build(self) -> Result<Schedule, BuildError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let p = self.ranks.len() as u32;
        let total: u64 = self.ranks.iter().map(|r| r.ops.len() as u64).sum();
        if total >= u32::MAX as u64 {
            return Err(BuildError::TooLarge {
                count: total,
                max: u32::MAX as u64 - 1,
            });
        }
        let n = total as usize;
        let mut s = Schedule {
            num_ranks: p,
            rank_start: Vec::with_capacity(p as usize + 1),
            kind: Vec::with_capacity(n),
            peer: Vec::with_capacity(n),
            tag: Vec::with_capacity(n),
            size: Vec::with_capacity(n),
            cpu: Vec::with_capacity(n),
            nic: Vec::with_capacity(n),
            dep_count: vec![0; n],
            dependents_start: Vec::with_capacity(n + 1),
            dependents: Vec::new(),
            labels: Vec::new(),
            max_cpu: 0,
            max_nic: 0,
        };
        // Per-op lists of (dependent, kind), grouped so that for each op the
        // requires-dependents come first, then the irequires-dependents, each
        // in insertion order (LogGOPSim's DependOnMe / StartDependOnMe).
        let mut base = 0u32;
        for (rank, r) in self.ranks.iter().enumerate() {
            let rank = rank as u32;
            s.rank_start.push(base);
            for op in &r.ops {
                match op.kind {
                    OpKind::Send if op.peer >= p => {
                        return Err(BuildError::PeerOutOfRange {
                            rank,
                            what: "send",
                            peer: op.peer,
                            num_ranks: p,
                        })
                    }
                    OpKind::Recv if op.peer >= p && op.peer != ANY => {
                        return Err(BuildError::PeerOutOfRange {
                            rank,
                            what: "recv",
                            peer: op.peer,
                            num_ranks: p,
                        })
                    }
                    _ => {}
                }
                s.kind.push(op.kind);
                s.peer.push(op.peer);
                s.tag.push(op.tag);
                s.size.push(op.size);
                s.cpu.push(op.cpu);
                s.nic.push(op.nic);
                s.max_cpu = s.max_cpu.max(op.cpu);
                s.max_nic = s.max_nic.max(op.nic);
            }
            let count = r.ops.len() as u32;
            for &(a, b, _) in &r.deps {
                for x in [a, b] {
                    if x >= count {
                        return Err(BuildError::NoSuchOp {
                            rank,
                            index: x,
                            count,
                        });
                    }
                }
            }
            for (idx, label) in &r.labels {
                s.labels.push((base + idx, label.clone()));
            }
            base += count;
        }
        s.rank_start.push(base);
        s.labels.sort_by_key(|(i, _)| *i);
        s.labels.dedup_by_key(|(i, _)| *i);

        // Count dependents per prerequisite, then fill (counting sort keeps
        // insertion order within each group).
        let mut counts = vec![0u32; 2 * n + 1];
        for (rank, r) in self.ranks.iter().enumerate() {
            let off = s.rank_start[rank];
            for &(a, b, kind) in &r.deps {
                let slot = 2 * (off + b) as usize + (kind == DepKind::IRequires) as usize;
                counts[slot + 1] += 1;
                s.dep_count[(off + a) as usize] += 1;
            }
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        s.dependents = vec![0; counts[2 * n] as usize];
        // Use the starts as cursors; afterwards each holds its slot's end,
        // which is the next slot's start: shift right by one to restore.
        for (rank, r) in self.ranks.iter().enumerate() {
            let off = s.rank_start[rank];
            for &(a, b, kind) in &r.deps {
                let slot = 2 * (off + b) as usize + (kind == DepKind::IRequires) as usize;
                s.dependents[counts[slot] as usize] = off + a;
                counts[slot] += 1;
            }
        }
        counts.rotate_right(1);
        counts[0] = 0;
        drop(self.ranks);
        s.dependents_start = counts;
        s.check_acyclic()?;
        Ok(s)
    }
}

/// Global operation index (rank-major: rank 0's operations first).
pub type OpId = u32;

/// An immutable, checked schedule. See the module documentation.
#[derive(Clone)]
pub struct Schedule {
    num_ranks: u32,
    rank_start: Vec<u32>,
    kind: Vec<OpKind>,
    peer: Vec<u32>,
    tag: Vec<u32>,
    size: Vec<u64>,
    cpu: Vec<u8>,
    nic: Vec<u8>,
    /// Number of requires + irequires edges into each op.
    dep_count: Vec<u32>,
    /// For op i: dependents[ds[2i]..ds[2i+1]] require i (start after i
    /// finishes); dependents[ds[2i+1]..ds[2i+2]] irequire i.
    dependents_start: Vec<u32>,
    dependents: Vec<OpId>,
    labels: Vec<(OpId, Box<str>)>,
    max_cpu: u8,
    max_nic: u8,
}

impl Schedule {
    pub fn num_ranks(&self) -> u32 {
        self.num_ranks
    }
    pub fn num_ops(&self) -> usize {
        self.kind.len()
    }
    /// Global ids of `rank`'s operations, in local order.
    pub fn ops_of(&self, rank: u32) -> std::ops::Range<OpId> {
        self.rank_start[rank as usize]..self.rank_start[rank as usize + 1]
    }
    /// The rank an operation belongs to.
    pub fn rank_of(&self, op: OpId) -> u32 {
        (self.rank_start.partition_point(|&s| s <= op) - 1) as u32
    }
    /// Local index of `op` within its rank.
    pub fn local_index(&self, op: OpId) -> u32 {
        op - self.rank_start[self.rank_of(op) as usize]
    }
    pub fn op(&self, id: OpId) -> Op {
        let i = id as usize;
        Op {
            kind: self.kind[i],
            peer: self.peer[i],
            tag: self.tag[i],
            size: self.size[i],
            cpu: self.cpu[i],
            nic: self.nic[i],
        }
    }
    #[inline]
    pub fn kind(&self, id: OpId) -> OpKind {
        self.kind[id as usize]
    }
    #[inline]
    pub fn peer(&self, id: OpId) -> u32 {
        self.peer[id as usize]
    }
    #[inline]
    pub fn tag(&self, id: OpId) -> u32 {
        self.tag[id as usize]
    }
    #[inline]
    pub fn size(&self, id: OpId) -> u64 {
        self.size[id as usize]
    }
    #[inline]
    pub fn cpu(&self, id: OpId) -> u8 {
        self.cpu[id as usize]
    }
    #[inline]
    pub fn nic(&self, id: OpId) -> u8 {
        self.nic[id as usize]
    }
    /// Number of requires + irequires edges into `id`.
    #[inline]
    pub fn dep_count(&self, id: OpId) -> u32 {
        self.dep_count[id as usize]
    }
    /// Operations that `require` `id` (may start once it finishes), in the order the edges were added.
    #[inline]
    pub fn requirers(&self, id: OpId) -> &[OpId] {
        let i = 2 * id as usize;
        &self.dependents[self.dependents_start[i] as usize..self.dependents_start[i + 1] as usize]
    }
    /// Operations that `irequire` `id` (may start once it starts), in the order the edges were added.
    #[inline]
    pub fn irequirers(&self, id: OpId) -> &[OpId] {
        let i = 2 * id as usize + 1;
        &self.dependents[self.dependents_start[i] as usize..self.dependents_start[i + 1] as usize]
    }
    /// All dependency edges `(a, b, kind)` meaning `a kind b`, grouped by b.
    pub fn edges(&self) -> impl Iterator<Item = (OpId, OpId, DepKind)> + '_ {
        (0..self.num_ops() as OpId).flat_map(move |b| {
            self.requirers(b)
                .iter()
                .map(move |&a| (a, b, DepKind::Requires))
                .chain(
                    self.irequirers(b)
                        .iter()
                        .map(move |&a| (a, b, DepKind::IRequires)),
                )
        })
    }
    /// The label given to `id`, if any.
    pub fn label(&self, id: OpId) -> Option<&str> {
        self.labels
            .binary_search_by_key(&id, |(i, _)| *i)
            .ok()
            .map(|k| &*self.labels[k].1)
    }
    /// A name for `id` in messages: its label, or `#<local index>`.
    pub fn describe(&self, id: OpId) -> String {
        match self.label(id) {
            Some(l) => l.to_string(),
            None => format!("#{}", self.local_index(id)),
        }
    }
    /// Highest `cpu` index used by any operation.
    pub fn max_cpu(&self) -> u8 {
        self.max_cpu
    }
    /// Highest `nic` index used by any operation.
    pub fn max_nic(&self) -> u8 {
        self.max_nic
    }
    /// Total bytes sent by all send operations.
    pub fn bytes_sent(&self) -> u64 {
        (0..self.num_ops())
            .filter(|&i| self.kind[i] == OpKind::Send)
            .map(|i| self.size[i])
            .sum()
    }

    /// Kahn's algorithm per rank; reports one cycle's operations on failure.
    fn check_acyclic(&self) -> Result<(), BuildError> {
        let mut indeg: Vec<u32> = self.dep_count.clone();
        let mut stack: Vec<OpId> = (0..self.num_ops() as OpId)
            .filter(|&i| indeg[i as usize] == 0)
            .collect();
        let mut seen = 0usize;
        while let Some(b) = stack.pop() {
            seen += 1;
            for &a in self.requirers(b).iter().chain(self.irequirers(b)) {
                indeg[a as usize] -= 1;
                if indeg[a as usize] == 0 {
                    stack.push(a);
                }
            }
        }
        if seen == self.num_ops() {
            return Ok(());
        }
        // Walk back along unresolved prerequisites to find a cycle.
        let mut prereq: Vec<Option<OpId>> = vec![None; self.num_ops()];
        for (a, b, _) in self.edges() {
            if indeg[a as usize] > 0 && indeg[b as usize] > 0 {
                prereq[a as usize] = Some(b);
            }
        }
        let start = (0..self.num_ops() as OpId)
            .find(|&i| indeg[i as usize] > 0)
            .unwrap_or(0);
        let mut order = vec![u32::MAX; self.num_ops()];
        let mut path = Vec::new();
        let mut cur = start;
        while order[cur as usize] == u32::MAX {
            order[cur as usize] = path.len() as u32;
            path.push(cur);
            match prereq[cur as usize] {
                Some(n) => cur = n,
                None => break,
            }
        }
        let from = if order[cur as usize] != u32::MAX {
            order[cur as usize] as usize
        } else {
            0
        };
        let mut ops: Vec<u32> = path[from..].iter().map(|&o| self.local_index(o)).collect();
        ops.reverse();
        Err(BuildError::Cycle {
            rank: self.rank_of(start),
            ops,
        })
    }
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schedule")
            .field("num_ranks", &self.num_ranks)
            .field("num_ops", &self.num_ops())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_orders_dependents() {
        let mut b = ScheduleBuilder::new(2);
        let s0 = b.send(0, 1, 8, 0);
        let c0 = b.calc(0, 10);
        let r1 = b.recv(1, 0, 8, 0);
        let c1 = b.calc(1, 5);
        b.requires(c0, s0);
        b.irequires(c1, r1);
        let s = b.build().unwrap();
        assert_eq!(s.num_ops(), 4);
        assert_eq!(s.ops_of(1), 2..4);
        assert_eq!(s.requirers(0), &[1]);
        assert_eq!(s.irequirers(2), &[3]);
        assert_eq!(s.dep_count(1), 1);
        assert_eq!(s.rank_of(3), 1);
        assert_eq!(s.local_index(3), 1);
    }

    #[test]
    fn rejects_cycle_and_cross_rank() {
        let mut b = ScheduleBuilder::new(2);
        let a = b.calc(0, 1);
        let c = b.calc(0, 1);
        b.requires(a, c);
        b.requires(c, a);
        assert!(matches!(b.build(), Err(BuildError::Cycle { rank: 0, .. })));
        let mut b = ScheduleBuilder::new(2);
        let a = b.calc(0, 1);
        let c = b.calc(1, 1);
        b.requires(a, c);
        assert!(matches!(
            b.build(),
            Err(BuildError::CrossRankDependency { a: 0, b: 1 })
        ));
    }

    #[test]
    fn rejects_peer_out_of_range() {
        let mut b = ScheduleBuilder::new(2);
        b.send(0, 2, 1, 0);
        assert!(matches!(
            b.build(),
            Err(BuildError::PeerOutOfRange { peer: 2, .. })
        ));
    }
}
