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
    /// Labels, in the order given: the operation of each, and its text's end in `label_text`.
    labels: Vec<(u32, usize)>,
    label_text: String,
    /// Operations `0..canonical` were labelled `o0`, `o1`, ... in order (the names the
    /// GOAL writer gives): counted, not stored. Zero once any other label is given.
    canonical: u32,
}

impl RankBuild {
    /// Store the counted labels `o0..` like any other.
    fn store_canonical(&mut self) {
        for k in 0..std::mem::take(&mut self.canonical) {
            self.label_text.push('o');
            self.label_text.push_str(&k.to_string());
            self.labels.push((k, self.label_text.len()));
        }
    }
}

/// Whether `label` is `o<index>`, `index` in decimal without leading zeros.
fn is_canonical(label: &str, index: u32) -> bool {
    label.strip_prefix('o').is_some_and(|d| {
        d.bytes().all(|c| c.is_ascii_digit())
            && (d == "0" || !d.starts_with('0'))
            && d.parse::<u32>() == Ok(index)
    })
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

    /// Forget everything added to `rank` (a reader that must parse a rank again).
    pub(crate) fn clear_rank(&mut self, rank: u32) {
        let r = &mut self.ranks[rank as usize];
        r.ops.clear();
        r.deps.clear();
        r.labels.clear();
        r.label_text.clear();
        r.canonical = 0;
    }

    /// Give an operation a label (kept for error messages and the GOAL writer).
    pub fn label(&mut self, op: OpRef, label: &str) {
        let r = &mut self.ranks[op.rank as usize];
        if r.labels.is_empty() && op.index == r.canonical && is_canonical(label, op.index) {
            r.canonical += 1;
            return;
        }
        r.store_canonical();
        r.label_text.push_str(label);
        r.labels.push((op.index, r.label_text.len()));
    }

    /// Check and freeze the schedule.
    ///
    /// Checks: peers in range, dependencies rank-local and pointing at
    /// existing operations, no dependency cycle (a cycle could never start).
    /// Ranks are frozen one at a time and their building storage released,
    /// so peak memory stays near the larger of the two forms.
    pub fn build(self) -> Result<Schedule, BuildError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let p = self.ranks.len() as u32;
        freeze(p, 0, self.ranks)
    }

    /// Check and freeze `rank` alone, and forget it here: the result has the
    /// builder's ranks, all empty but `rank`, which has what was added to it.
    /// For writing a schedule rank by rank while it is built.
    pub(crate) fn take_rank(&mut self, rank: u32) -> Result<Schedule, BuildError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let taken = std::mem::take(&mut self.ranks[rank as usize]);
        freeze(self.num_ranks(), rank, vec![taken])
    }
}

/// The [`Schedule`] of `p` ranks in which ranks `first..first + ranks.len()`
/// hold `ranks` and all others are empty; see [`ScheduleBuilder::build`].
fn freeze(p: u32, first: u32, ranks: Vec<RankBuild>) -> Result<Schedule, BuildError> {
    let total: u64 = ranks.iter().map(|r| r.ops.len() as u64).sum();
    if total >= u32::MAX as u64 {
        return Err(BuildError::TooLarge {
            count: total,
            max: u32::MAX as u64 - 1,
        });
    }
    let n = total as usize;
    // First pass: value ranges (to pick column widths), sizes, edge counts.
    let (mut max_peer, mut max_tag, mut max_cpu, mut max_nic) = (0u32, 0u32, 0u8, 0u8);
    let (mut n_req, mut n_ireq) = (0usize, 0usize);
    let mut size_index: rustc_hash::FxHashMap<u64, u32> = Default::default();
    let mut sizes: Vec<u64> = Vec::new();
    for (rank, r) in (first..).zip(&ranks) {
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
            if op.peer != ANY {
                max_peer = max_peer.max(op.peer);
            }
            if op.tag != ANY {
                max_tag = max_tag.max(op.tag);
            }
            max_cpu = max_cpu.max(op.cpu);
            max_nic = max_nic.max(op.nic);
            size_index.entry(op.size).or_insert_with(|| {
                sizes.push(op.size);
                (sizes.len() - 1) as u32
            });
        }
        let count = r.ops.len() as u32;
        for &(a, b, kind) in &r.deps {
            for x in [a, b] {
                if x >= count {
                    return Err(BuildError::NoSuchOp {
                        rank,
                        index: x,
                        count,
                    });
                }
            }
            match kind {
                DepKind::Requires => n_req += 1,
                DepKind::IRequires => n_ireq += 1,
            }
        }
    }
    let mut s = Schedule {
        num_ranks: p,
        rank_start: Vec::with_capacity(p as usize + 1),
        ops: OpTable::with_capacity(n, max_peer.max(max_tag).max(sizes.len() as u32)),
        sizes,
        cpu: if max_cpu > 0 {
            Vec::with_capacity(n)
        } else {
            Vec::new()
        },
        nic: if max_nic > 0 {
            Vec::with_capacity(n)
        } else {
            Vec::new()
        },
        req_start: Vec::with_capacity(n + 1),
        req: Vec::with_capacity(n_req),
        ireq_start: if n_ireq > 0 {
            Vec::with_capacity(n + 1)
        } else {
            Vec::new()
        },
        ireq: Vec::with_capacity(n_ireq),
        labels: Vec::new(),
        label_text: String::new(),
        canonical: Vec::new(),
        canonical_ends: Vec::new(),
        canonical_text: String::new(),
        max_cpu,
        max_nic,
    };
    s.labels
        .reserve_exact(ranks.iter().map(|r| r.labels.len()).sum());
    let most_canonical = ranks.iter().map(|r| r.canonical).max().unwrap_or(0);
    if most_canonical > 0 {
        s.canonical.reserve_exact(p as usize);
        for k in 0..most_canonical {
            s.canonical_text.push('o');
            s.canonical_text.push_str(&k.to_string());
            s.canonical_ends.push(s.canonical_text.len());
        }
    }
    s.label_text
        .reserve_exact(ranks.iter().map(|r| r.label_text.len()).sum());
    s.req_start.push(0);
    if n_ireq > 0 {
        s.ireq_start.push(0);
    }
    // Second pass, one rank at a time: columns, then the rank's dependents
    // grouped by prerequisite in insertion order (LogGOPSim's DependOnMe
    // and StartDependOnMe), by a counting sort over local indices.
    let mut base = 0u32;
    let empty = |s: &mut Schedule, base: u32| {
        s.rank_start.push(base);
        if most_canonical > 0 {
            s.canonical.push(0);
        }
    };
    let after = first + ranks.len() as u32;
    for _ in 0..first {
        empty(&mut s, base);
    }
    for r in ranks {
        s.rank_start.push(base);
        for op in &r.ops {
            s.ops.push(op.kind, op.peer, op.tag, size_index[&op.size]);
            if max_cpu > 0 {
                s.cpu.push(op.cpu);
            }
            if max_nic > 0 {
                s.nic.push(op.nic);
            }
        }
        let count = r.ops.len();
        for (want, starts, list) in [
            (DepKind::Requires, &mut s.req_start, &mut s.req),
            (DepKind::IRequires, &mut s.ireq_start, &mut s.ireq),
        ] {
            if want == DepKind::IRequires && n_ireq == 0 {
                continue;
            }
            let mut counts = vec![0u32; count + 1];
            for &(_, b, kind) in &r.deps {
                if kind == want {
                    counts[b as usize + 1] += 1;
                }
            }
            for i in 1..=count {
                counts[i] += counts[i - 1];
            }
            let at = list.len();
            list.resize(at + counts[count] as usize, 0);
            let offset = at as u32;
            starts.extend(counts[1..].iter().map(|c| offset + c));
            for &(a, b, kind) in &r.deps {
                if kind == want {
                    list[at + counts[b as usize] as usize] = base + a;
                    counts[b as usize] += 1;
                }
            }
        }
        if most_canonical > 0 {
            s.canonical.push(r.canonical);
        }
        // Labels by operation (the first given, if several), their text in one string.
        let mut order: Vec<usize> = (0..r.labels.len()).collect();
        if !r.labels.is_sorted_by_key(|&(i, _)| i) {
            order.sort_by_key(|&k| r.labels[k].0);
        }
        order.dedup_by_key(|k| r.labels[*k].0);
        for k in order {
            let from = if k == 0 { 0 } else { r.labels[k - 1].1 };
            let (idx, to) = r.labels[k];
            s.label_text.push_str(&r.label_text[from..to]);
            s.labels.push((base + idx, s.label_text.len()));
        }
        base += count as u32;
    }
    for _ in after..p {
        empty(&mut s, base);
    }
    s.rank_start.push(base);
    s.check_acyclic()?;
    Ok(s)
}

/// An operation's hot fields in one record, so that an engine touching an
/// operation reads one cache line: 8 bytes when peers, tags and size
/// indices fit in 16 bits ([`ANY`] kept as 0xFFFF then), 16 otherwise.
#[derive(Clone, Copy)]
struct NarrowOp {
    kind: OpKind,
    peer: u16,
    tag: u16,
    size: u16,
}

#[derive(Clone, Copy)]
struct WideOp {
    kind: OpKind,
    peer: u32,
    tag: u32,
    size: u32,
}

#[derive(Clone)]
enum OpTable {
    Narrow(Vec<NarrowOp>),
    Wide(Vec<WideOp>),
}

#[inline]
fn narrow(v: u32) -> u16 {
    if v == ANY {
        u16::MAX
    } else {
        v as u16
    }
}

#[inline]
fn widen(v: u16) -> u32 {
    if v == u16::MAX {
        ANY
    } else {
        v as u32
    }
}

impl OpTable {
    /// `max`: the largest peer, tag (other than [`ANY`]) or size index.
    fn with_capacity(n: usize, max: u32) -> OpTable {
        if max < u16::MAX as u32 {
            OpTable::Narrow(Vec::with_capacity(n))
        } else {
            OpTable::Wide(Vec::with_capacity(n))
        }
    }
    #[inline]
    fn push(&mut self, kind: OpKind, peer: u32, tag: u32, size: u32) {
        match self {
            OpTable::Narrow(t) => t.push(NarrowOp {
                kind,
                peer: narrow(peer),
                tag: narrow(tag),
                size: size as u16,
            }),
            OpTable::Wide(t) => t.push(WideOp {
                kind,
                peer,
                tag,
                size,
            }),
        }
    }
    #[inline]
    fn len(&self) -> usize {
        match self {
            OpTable::Narrow(t) => t.len(),
            OpTable::Wide(t) => t.len(),
        }
    }
    /// (kind, peer, tag, size index) of operation `i`.
    #[inline]
    fn get(&self, i: usize) -> (OpKind, u32, u32, u32) {
        match self {
            OpTable::Narrow(t) => {
                let o = t[i];
                (o.kind, widen(o.peer), widen(o.tag), o.size as u32)
            }
            OpTable::Wide(t) => {
                let o = t[i];
                (o.kind, o.peer, o.tag, o.size)
            }
        }
    }
}

/// Global operation index (rank-major: rank 0's operations first).
pub type OpId = u32;

/// An immutable, checked schedule. See the module documentation.
///
/// Stored compactly: each operation's kind, peer, tag and size index in one
/// 8-byte record when they fit in 16 bits (16 bytes otherwise), sizes in a
/// table of distinct values, cpu and nic only when used, and dependents in
/// compressed rows. A 4096-rank all-to-all (33.5 M operations) needs about
/// 12 bytes per operation plus 4 per dependency edge.
#[derive(Clone)]
pub struct Schedule {
    num_ranks: u32,
    rank_start: Vec<u32>,
    /// Kind, peer, tag and index into `sizes` of each operation.
    ops: OpTable,
    sizes: Vec<u64>,
    /// Empty when every operation uses cpu 0 (likewise `nic`).
    cpu: Vec<u8>,
    nic: Vec<u8>,
    /// req[req_start[i]..req_start[i+1]] require op i (start after it finishes).
    req_start: Vec<u32>,
    req: Vec<OpId>,
    /// ireq[ireq_start[i]..ireq_start[i+1]] irequire op i; both empty when
    /// the schedule has no irequires edge.
    ireq_start: Vec<u32>,
    ireq: Vec<OpId>,
    /// Labelled operations, ascending, each with the end of its label in `label_text`
    /// (it starts where the previous one ends).
    labels: Vec<(OpId, usize)>,
    label_text: String,
    /// Per rank, how many of its first operations are labelled `o0`, `o1`, ... (empty if
    /// none is): their labels are slices of `canonical_text`, ending at `canonical_ends`.
    canonical: Vec<u32>,
    canonical_ends: Vec<usize>,
    canonical_text: String,
    max_cpu: u8,
    max_nic: u8,
}

impl Schedule {
    pub fn num_ranks(&self) -> u32 {
        self.num_ranks
    }
    pub fn num_ops(&self) -> usize {
        self.ops.len()
    }
    /// Global ids of `rank`'s operations, in local order.
    pub fn ops_of(&self, rank: u32) -> std::ops::Range<OpId> {
        self.rank_start[rank as usize]..self.rank_start[rank as usize + 1]
    }
    /// The rank an operation belongs to.
    ///
    /// Engines ask this for every event, so it first guesses by proportion
    /// (exact or next door when ranks have similar operation counts, as in
    /// collectives) and falls back to a binary search.
    #[inline]
    pub fn rank_of(&self, op: OpId) -> u32 {
        let p = self.num_ranks as usize;
        let n = self.ops.len().max(1) as u64;
        let mut r = ((op as u64 * p as u64) / n).min(p as u64 - 1) as usize;
        for _ in 0..4 {
            if self.rank_start[r] > op {
                r -= 1; // rank_start[0] = 0 <= op, so r > 0 here
            } else if self.rank_start[r + 1] <= op {
                r += 1; // rank_start[p] = n > op, so r + 1 < p here
            } else {
                return r as u32;
            }
        }
        (self.rank_start.partition_point(|&s| s <= op) - 1) as u32
    }
    /// Local index of `op` within its rank.
    pub fn local_index(&self, op: OpId) -> u32 {
        op - self.rank_start[self.rank_of(op) as usize]
    }
    pub fn op(&self, id: OpId) -> Op {
        Op {
            kind: self.kind(id),
            peer: self.peer(id),
            tag: self.tag(id),
            size: self.size(id),
            cpu: self.cpu(id),
            nic: self.nic(id),
        }
    }
    #[inline]
    pub fn kind(&self, id: OpId) -> OpKind {
        self.ops.get(id as usize).0
    }
    #[inline]
    pub fn peer(&self, id: OpId) -> u32 {
        self.ops.get(id as usize).1
    }
    #[inline]
    pub fn tag(&self, id: OpId) -> u32 {
        self.ops.get(id as usize).2
    }
    #[inline]
    pub fn size(&self, id: OpId) -> u64 {
        self.sizes[self.ops.get(id as usize).3 as usize]
    }
    #[inline]
    pub fn cpu(&self, id: OpId) -> u8 {
        self.cpu.get(id as usize).copied().unwrap_or(0)
    }
    #[inline]
    pub fn nic(&self, id: OpId) -> u8 {
        self.nic.get(id as usize).copied().unwrap_or(0)
    }
    /// Number of requires + irequires edges into each operation.
    pub fn dep_counts(&self) -> Vec<u32> {
        let mut c = vec![0u32; self.num_ops()];
        for &a in self.req.iter().chain(&self.ireq) {
            c[a as usize] += 1;
        }
        c
    }
    /// Number of requires + irequires edges into `id` (scans its rank; use
    /// [`dep_counts`](Self::dep_counts) for all operations at once).
    pub fn dep_count(&self, id: OpId) -> u32 {
        self.ops_of(self.rank_of(id))
            .flat_map(|b| self.requirers(b).iter().chain(self.irequirers(b)))
            .filter(|&&a| a == id)
            .count() as u32
    }
    /// Operations that `require` `id` (may start once it finishes), in the order the edges were added.
    #[inline]
    pub fn requirers(&self, id: OpId) -> &[OpId] {
        let i = id as usize;
        &self.req[self.req_start[i] as usize..self.req_start[i + 1] as usize]
    }
    /// Operations that `irequire` `id` (may start once it starts), in the order the edges were added.
    #[inline]
    pub fn irequirers(&self, id: OpId) -> &[OpId] {
        if self.ireq_start.is_empty() {
            return &[];
        }
        let i = id as usize;
        &self.ireq[self.ireq_start[i] as usize..self.ireq_start[i + 1] as usize]
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
        if !self.canonical.is_empty() {
            let rank = self.rank_of(id);
            let k = (id - self.rank_start[rank as usize]) as usize;
            if k < self.canonical[rank as usize] as usize {
                let from = if k == 0 {
                    0
                } else {
                    self.canonical_ends[k - 1]
                };
                return self.canonical_text.get(from..self.canonical_ends[k]);
            }
        }
        let k = self.labels.binary_search_by_key(&id, |(i, _)| *i).ok()?;
        let from = if k == 0 { 0 } else { self.labels[k - 1].1 };
        self.label_text.get(from..self.labels[k].1)
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
        (0..self.num_ops() as OpId)
            .filter(|&i| self.kind(i) == OpKind::Send)
            .map(|i| self.size(i))
            .sum()
    }

    /// Kahn's algorithm; reports one cycle's operations on failure.
    fn check_acyclic(&self) -> Result<(), BuildError> {
        let mut indeg: Vec<u32> = self.dep_counts();
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
        assert_eq!(s.dep_counts()[1], 1);
        assert_eq!(s.rank_of(3), 1);
        assert_eq!(
            (0..4).map(|o| s.rank_of(o)).collect::<Vec<_>>(),
            vec![0, 0, 1, 1]
        );
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

#[cfg(test)]
mod rank_of_tests {
    use super::*;

    proptest::proptest! {
        /// The proportional guess agrees with a plain search, empty ranks included.
        #[test]
        fn rank_of_agrees_with_search(counts in proptest::collection::vec(0u32..9, 1..40)) {
            let mut b = ScheduleBuilder::new(counts.len() as u32);
            for (r, &c) in counts.iter().enumerate() {
                for _ in 0..c {
                    b.calc(r as u32, 1);
                }
            }
            let s = b.build().unwrap();
            for op in 0..s.num_ops() as OpId {
                let expect = (0..s.num_ranks()).find(|&r| s.ops_of(r).contains(&op)).unwrap();
                proptest::prop_assert_eq!(s.rank_of(op), expect);
            }
        }
    }
}
