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

use crate::dependents::{DepRows, Dependents};
pub use crate::op_id::OpId;

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
    canonical_index(label.as_bytes()) == Some(index)
}

/// `k` when `label` is `o<k>`, `k` a u32 in decimal without leading zeros (the labels
/// `commodel schedule -o` writes: operation k of its rank), else `None`.
#[inline]
pub(crate) fn canonical_index(label: &[u8]) -> Option<u32> {
    let digits = label.strip_prefix(b"o")?;
    if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') || digits.len() > 10 {
        return None;
    }
    let mut k: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        k = k * 10 + u64::from(c - b'0');
    }
    u32::try_from(k).ok()
}

/// Builds a [`Schedule`]; see the module documentation.
///
/// Readers that finish ranks in order ([`seal`](Self::seal)) hand each one to the
/// compact columns as soon as it is complete and empty its building storage (handed to
/// the next rank), so the builder holds at most one rank beside the frozen schedule.
#[derive(Clone)]
pub struct ScheduleBuilder {
    ranks: Vec<RankBuild>,
    /// First structural error seen while adding (reported by `build`).
    error: Option<BuildError>,
    /// Ranks `0..frozen.ranks_done()`, already in their compact form.
    frozen: Freezer,
}

impl ScheduleBuilder {
    pub fn new(num_ranks: u32) -> Self {
        ScheduleBuilder {
            ranks: vec![RankBuild::default(); num_ranks as usize],
            error: None,
            frozen: Freezer::new(num_ranks),
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
        debug_assert!(rank >= self.frozen.ranks_done(), "rank {rank} is sealed");
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

    /// Declare `rank` complete and move it into the compact columns now, emptying its
    /// building storage. Ranks must be sealed in order (`rank` is the lowest not yet
    /// sealed), and nothing may be added to a sealed rank. Reports the rank's peer and
    /// index errors, and [`BuildError::TooLarge`], at once; a dependency cycle is kept
    /// for [`build`](Self::build), which reports it after the errors of later ranks, as
    /// if the whole schedule had been built at once.
    pub(crate) fn seal(&mut self, rank: u32) -> Result<(), BuildError> {
        debug_assert_eq!(rank, self.frozen.ranks_done(), "ranks are sealed in order");
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let mut r = std::mem::take(&mut self.ranks[rank as usize]);
        self.frozen.check_size(r.ops.len() as u64)?;
        r.check(rank, self.num_ranks())?;
        self.frozen.add(&mut r);
        // The next rank, if nothing was added to it yet, gets the emptied buffers (a
        // reader that seals rank by rank grows them once, not once per rank).
        if let Some(next) = self.ranks.get_mut(rank as usize + 1) {
            if next.ops.capacity() == 0
                && next.deps.capacity() == 0
                && next.labels.capacity() == 0
                && next.label_text.capacity() == 0
            {
                *next = r;
            }
        }
        Ok(())
    }

    /// A builder of `num_ranks` ranks whose ranks `0..first` are sealed empty: a reader of
    /// a part of a file that begins at rank block `first` seals its ranks into it, and
    /// [`append`](Self::append) moves them into the builder of the ranks before.
    pub(crate) fn starting_at(num_ranks: u32, first: u32) -> Self {
        let mut b = ScheduleBuilder::new(num_ranks);
        for _ in 0..first.min(num_ranks) {
            b.frozen.add(&mut RankBuild::default());
        }
        b
    }

    /// Operations in the sealed ranks.
    pub(crate) fn sealed_ops(&self) -> usize {
        self.frozen.s.ops.len()
    }

    /// The sealed ranks alone, for [`append`](Self::append) (the building storage of the
    /// ranks, one empty entry per rank, is dropped).
    pub(crate) fn into_sealed(self) -> Sealed {
        Sealed {
            frozen: self.frozen,
            error: self.error,
        }
    }

    /// Move the ranks sealed in `other` after this builder's sealed ranks, in order, as
    /// if they had been sealed here: the same compact columns (operation records, size
    /// table, dependency rows, labels) as sealing them here from the text. `other`
    /// comes from a builder [`starting_at`](Self::starting_at) the first rank not sealed
    /// here. Its ranks are frozen again one at a time from its columns (no text is read).
    pub(crate) fn append(&mut self, other: Sealed) -> Result<(), BuildError> {
        if let Some(e) = self.error.clone().or(other.error) {
            return Err(e);
        }
        let from = self.frozen.ranks_done();
        let s = &other.frozen.s;
        debug_assert_eq!(s.rank_start.get(from as usize), Some(&0));
        for rank in from..other.frozen.ranks_done() {
            let mut r = s.unfreeze(rank);
            self.frozen.check_size(r.ops.len() as u64)?;
            self.frozen.add(&mut r);
        }
        Ok(())
    }

    /// Move `rank` out as added so far (unchecked), to be sealed into another builder
    /// of as many ranks ([`seal_part`](Self::seal_part)): ranks built on other threads.
    pub(crate) fn take_part(&mut self, rank: u32) -> Result<RankPart, BuildError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        Ok(RankPart(std::mem::take(&mut self.ranks[rank as usize])))
    }

    /// Seal `rank` (see [`seal`](Self::seal)) with `part` as its content, taken
    /// from another builder by [`take_part`](Self::take_part).
    pub(crate) fn seal_part(&mut self, rank: u32, part: RankPart) -> Result<(), BuildError> {
        debug_assert!(self.ranks[rank as usize].ops.is_empty());
        self.ranks[rank as usize] = part.0;
        self.seal(rank)
    }

    /// Check and freeze the schedule.
    ///
    /// Checks: peers in range, dependencies rank-local and pointing at
    /// existing operations, no dependency cycle (a cycle could never start).
    /// Ranks are frozen one at a time and their building storage released;
    /// readers that [`seal`](Self::seal) ranks as they finish them never hold
    /// more than one rank in building form.
    pub fn build(mut self) -> Result<Schedule, BuildError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let (first, p) = (self.frozen.ranks_done(), self.num_ranks());
        let rest = &mut self.ranks[first as usize..];
        self.frozen
            .check_size(rest.iter().map(|r| r.ops.len() as u64).sum())?;
        for (rank, r) in (first..).zip(rest.iter()) {
            r.check(rank, p)?;
        }
        for r in rest {
            self.frozen.add(&mut std::mem::take(r));
        }
        self.frozen.finish()
    }

    /// Check and freeze `rank` alone, and forget it here: the result is a one-rank
    /// schedule whose rank 0 has what was added to `rank` (peers and cycle errors name
    /// the builder's ranks). For writing a schedule rank by rank while it is built.
    pub(crate) fn take_rank(&mut self, rank: u32) -> Result<Schedule, BuildError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let p = self.num_ranks();
        let mut taken = std::mem::take(&mut self.ranks[rank as usize]);
        // A schedule of this rank alone, as its rank 0: its size does not grow with P (a
        // schedule of P ranks, all but one empty, made writing P ranks O(P^2)). Peers are
        // checked against the P ranks here.
        let mut one = Freezer::new(1);
        one.check_size(taken.ops.len() as u64)?;
        taken.check(rank, p)?;
        one.add(&mut taken);
        one.finish().map_err(|e| match e {
            BuildError::Cycle { ops, .. } => BuildError::Cycle { rank, ops },
            other => other,
        })
    }
}

/// Ranks sealed by a [`ScheduleBuilder`], without its building storage; see
/// [`ScheduleBuilder::append`].
pub(crate) struct Sealed {
    frozen: Freezer,
    error: Option<BuildError>,
}

/// One rank of a [`ScheduleBuilder`] moved out of it ([`ScheduleBuilder::take_part`]).
pub(crate) struct RankPart(RankBuild);

impl RankBuild {
    /// Peers in range (of `p` ranks), dependencies between existing operations.
    fn check(&self, rank: u32, p: u32) -> Result<(), BuildError> {
        for op in &self.ops {
            let what = match op.kind {
                OpKind::Send if op.peer >= p => "send",
                OpKind::Recv if op.peer >= p && op.peer != ANY => "recv",
                _ => continue,
            };
            return Err(BuildError::PeerOutOfRange {
                rank,
                what,
                peer: op.peer,
                num_ranks: p,
            });
        }
        let count = self.ops.len() as u32;
        for &(a, b, _) in &self.deps {
            if let Some(&index) = [a, b].iter().find(|&&x| x >= count) {
                return Err(BuildError::NoSuchOp { rank, index, count });
            }
        }
        Ok(())
    }
}

/// A [`Schedule`] growing by whole ranks, in order: each rank is checked for cycles,
/// written into the compact columns and its building storage emptied. Column widths,
/// and whether `cpu`, `nic` and the `irequires` rows exist at all, are decided as the
/// values arrive (a column is widened or created the first time it must be).
#[derive(Clone)]
struct Freezer {
    s: Schedule,
    size_index: rustc_hash::FxHashMap<u64, u32>,
    /// The first rank with a dependency cycle, reported by `finish`.
    cycle: Option<BuildError>,
}

impl Freezer {
    fn new(p: u32) -> Freezer {
        let mut rank_start = Vec::with_capacity(p as usize + 1);
        rank_start.push(0);
        Freezer {
            s: Schedule {
                num_ranks: p,
                rank_start,
                ops: OpTable::Narrow(Vec::new()),
                sizes: Vec::new(),
                cpu: Vec::new(),
                nic: Vec::new(),
                req: DepRows::new(),
                ireq: None,
                labels: Vec::new(),
                label_text: String::new(),
                canonical: Vec::new(),
                canonical_ends: Vec::new(),
                canonical_text: String::new(),
                max_cpu: 0,
                max_nic: 0,
            },
            size_index: Default::default(),
            cycle: None,
        }
    }

    /// Ranks added so far.
    fn ranks_done(&self) -> u32 {
        (self.s.rank_start.len() - 1) as u32
    }

    /// Whether `more` operations still fit in [`OpId`]s.
    fn check_size(&self, more: u64) -> Result<(), BuildError> {
        let total = self.s.ops.len() as u64 + more;
        if total >= u32::MAX as u64 {
            return Err(BuildError::TooLarge {
                count: total,
                max: u32::MAX as u64 - 1,
            });
        }
        Ok(())
    }

    /// Append the next rank (checked by [`RankBuild::check`] and `check_size`); `r` is
    /// left empty, its buffers kept for another rank.
    fn add(&mut self, r: &mut RankBuild) {
        let rank = self.ranks_done();
        let s = &mut self.s;
        let base = s.ops.len() as u32;
        for op in &r.ops {
            let size = *self.size_index.entry(op.size).or_insert_with(|| {
                s.sizes.push(op.size);
                (s.sizes.len() - 1) as u32
            });
            s.ops
                .push(op.kind, op.peer, op.tag, size, s.sizes.len() as u32);
            for (value, max, column) in [
                (op.cpu, &mut s.max_cpu, &mut s.cpu),
                (op.nic, &mut s.max_nic, &mut s.nic),
            ] {
                if value > 0 && column.is_empty() {
                    column.resize(s.ops.len() - 1, 0);
                }
                if *max > 0 || value > 0 {
                    column.push(value);
                }
                *max = (*max).max(value);
            }
        }
        let count = r.ops.len();
        r.ops.clear();
        // The rank's dependents grouped by prerequisite in insertion order (LogGOPSim's
        // DependOnMe and StartDependOnMe), by a counting sort over local indices.
        if s.ireq.is_none() && r.deps.iter().any(|d| d.2 == DepKind::IRequires) {
            let mut rows = DepRows::new();
            rows.push_empty(base as usize);
            s.ireq = Some(rows);
        }
        for (want, rows) in [
            (DepKind::Requires, Some(&mut s.req)),
            (DepKind::IRequires, s.ireq.as_mut()),
        ] {
            let Some(rows) = rows else { continue };
            let edges = r.deps.iter().filter(move |d| d.2 == want);
            rows.push_rank(base, count, edges.map(|&(a, b, _)| (a, b)));
        }
        let has_deps = !r.deps.is_empty();
        r.deps.clear();
        // Labels `o0, o1, ...` counted per rank, their text once for all ranks.
        s.canonical.push(r.canonical);
        let mut k = s.canonical_ends.len() as u32;
        while k < r.canonical {
            s.canonical_text.push('o');
            s.canonical_text.push_str(&k.to_string());
            s.canonical_ends.push(s.canonical_text.len());
            k += 1;
        }
        // Other labels by operation (the first given, if several), their text in one string.
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
        r.labels.clear();
        r.label_text.clear();
        r.canonical = 0;
        s.rank_start.push(s.ops.len() as u32);
        if has_deps && self.cycle.is_none() {
            self.cycle = s.check_acyclic(rank).err();
        }
    }

    /// The schedule, once every rank has been added.
    fn finish(mut self) -> Result<Schedule, BuildError> {
        debug_assert_eq!(self.ranks_done(), self.s.num_ranks);
        if let Some(e) = self.cycle {
            return Err(e);
        }
        let s = &mut self.s;
        if s.canonical_ends.is_empty() {
            s.canonical = Vec::new();
        }
        s.ops.shrink_to_fit();
        s.sizes.shrink_to_fit();
        s.cpu.shrink_to_fit();
        s.nic.shrink_to_fit();
        s.req.shrink_to_fit();
        if let Some(ireq) = &mut s.ireq {
            ireq.shrink_to_fit();
        }
        s.labels.shrink_to_fit();
        s.label_text.shrink_to_fit();
        Ok(self.s)
    }
}

/// An operation's hot fields in one record, so that an engine touching an
/// operation reads one cache line (rarely two): 7 bytes, packed, when peers,
/// tags and size indices fit in 16 bits ([`ANY`] kept as 0xFFFF then); 8 bytes
/// ([`MediumOp`]) when only peers do not, but fit in 24 bits; 16 otherwise.
#[derive(Clone, Copy)]
#[repr(C, packed)]
struct NarrowOp {
    kind: OpKind,
    peer: u16,
    tag: u16,
    size: u16,
}

/// The record of schedules of 2^16 to 2^24 - 1 ranks whose tags and size indices fit in
/// 16 bits (a collective of a million ranks): the peer in 24 bits, little-endian, [`ANY`]
/// kept as [`PEER24_ANY`]. 8 bytes, packed (a 16-byte [`WideOp`] doubled the largest
/// column of a 2^20-rank dissemination barrier, 41.9 M operations).
#[derive(Clone, Copy)]
#[repr(C, packed)]
struct MediumOp {
    kind: OpKind,
    peer: [u8; 3],
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
    Medium(Vec<MediumOp>),
    Wide(Vec<WideOp>),
}

/// [`ANY`] as a [`MediumOp`] peer.
const PEER24_ANY: u32 = 0xFF_FFFF;

#[inline]
fn to_peer24(v: u32) -> [u8; 3] {
    let v = if v == ANY { PEER24_ANY } else { v };
    let [a, b, c, _] = v.to_le_bytes();
    [a, b, c]
}

#[inline]
fn from_peer24([a, b, c]: [u8; 3]) -> u32 {
    match u32::from_le_bytes([a, b, c, 0]) {
        PEER24_ANY => ANY,
        v => v,
    }
}

/// Whether `v` ([`ANY`] or below `limit`) has a place in a field whose top value stands
/// for [`ANY`].
#[inline]
fn fits(v: u32, limit: u32) -> bool {
    v == ANY || v < limit
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
    /// Append an operation; `sizes`: how many distinct sizes there are so far. The
    /// table starts narrow; it becomes medium when a peer (other than [`ANY`]) reaches
    /// `u16::MAX` and wide when a peer reaches [`PEER24_ANY`] or a tag (other than
    /// [`ANY`]) or the number of sizes reaches `u16::MAX`.
    #[inline]
    fn push(&mut self, kind: OpKind, peer: u32, tag: u32, size: u32, sizes: u32) {
        let short = fits(tag, u16::MAX as u32) && sizes < u16::MAX as u32;
        let level = if short && fits(peer, u16::MAX as u32) {
            0
        } else if short && fits(peer, PEER24_ANY) {
            1
        } else {
            2
        };
        if level > self.level() {
            self.widen(level);
        }
        match self {
            OpTable::Narrow(t) => t.push(NarrowOp {
                kind,
                peer: narrow(peer),
                tag: narrow(tag),
                size: size as u16,
            }),
            OpTable::Medium(t) => t.push(MediumOp {
                kind,
                peer: to_peer24(peer),
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
    /// 0 narrow, 1 medium, 2 wide.
    #[inline]
    fn level(&self) -> u8 {
        match self {
            OpTable::Narrow(_) => 0,
            OpTable::Medium(_) => 1,
            OpTable::Wide(_) => 2,
        }
    }
    /// Rewrite the records in the form of `level` (1 medium, 2 wide), with the capacity
    /// they had.
    #[cold]
    fn widen(&mut self, level: u8) {
        let (n, cap) = match self {
            OpTable::Narrow(t) => (t.len(), t.capacity()),
            OpTable::Medium(t) => (t.len(), t.capacity()),
            OpTable::Wide(t) => (t.len(), t.capacity()),
        };
        let cap = cap.max(n + 1);
        let records = (0..n).map(|i| self.get(i));
        *self = if level == 1 {
            let mut m = Vec::with_capacity(cap);
            m.extend(records.map(|(kind, peer, tag, size)| MediumOp {
                kind,
                peer: to_peer24(peer),
                tag: narrow(tag),
                size: size as u16,
            }));
            OpTable::Medium(m)
        } else {
            let mut w = Vec::with_capacity(cap);
            w.extend(records.map(|(kind, peer, tag, size)| WideOp {
                kind,
                peer,
                tag,
                size,
            }));
            OpTable::Wide(w)
        };
    }
    fn shrink_to_fit(&mut self) {
        match self {
            OpTable::Narrow(t) => t.shrink_to_fit(),
            OpTable::Medium(t) => t.shrink_to_fit(),
            OpTable::Wide(t) => t.shrink_to_fit(),
        }
    }
    #[inline]
    fn len(&self) -> usize {
        match self {
            OpTable::Narrow(t) => t.len(),
            OpTable::Medium(t) => t.len(),
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
            OpTable::Medium(t) => {
                let o = t[i];
                (o.kind, from_peer24(o.peer), widen(o.tag), o.size as u32)
            }
            OpTable::Wide(t) => {
                let o = t[i];
                (o.kind, o.peer, o.tag, o.size)
            }
        }
    }
}

/// An immutable, checked schedule. See the module documentation.
///
/// Stored compactly: each operation's kind, peer, tag and size index in one
/// 7-byte record when they fit in 16 bits (8 bytes when only peers need up to
/// 24, 16 bytes otherwise), sizes in a
/// table of distinct values, cpu and nic only when used, and dependents in
/// compressed rows ([`crate::dependents`]). A 4096-rank all-to-all (33.5 M
/// operations) needs about 9 bytes per operation plus 2 per dependency edge.
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
    /// Row i: the operations that require op i (start after it finishes).
    req: DepRows,
    /// Row i: the operations that irequire op i; `None` when the schedule has no
    /// irequires edge.
    ireq: Option<DepRows>,
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
        self.for_each_dependent(|a| c[a as usize] += 1);
        c
    }
    /// Call `f` with the dependent of every requires and irequires edge (an operation
    /// once per edge into it), in one pass over the rows.
    pub fn for_each_dependent(&self, mut f: impl FnMut(OpId)) {
        self.req.for_each(&mut f);
        if let Some(rows) = &self.ireq {
            rows.for_each(&mut f);
        }
    }
    /// Number of requires + irequires edges into `id` (scans its rank; use
    /// [`dep_counts`](Self::dep_counts) for all operations at once).
    pub fn dep_count(&self, id: OpId) -> u32 {
        self.ops_of(self.rank_of(id))
            .flat_map(|b| self.requirers(b).chain(self.irequirers(b)))
            .filter(|&a| a == id)
            .count() as u32
    }
    /// Operations that `require` `id` (may start once it finishes), in the order the edges were added.
    #[inline]
    pub fn requirers(&self, id: OpId) -> Dependents<'_> {
        self.req.row(id)
    }
    /// Operations that `irequire` `id` (may start once it starts), in the order the edges were added.
    #[inline]
    pub fn irequirers(&self, id: OpId) -> Dependents<'_> {
        match &self.ireq {
            Some(rows) => rows.row(id),
            None => Dependents::none(),
        }
    }
    /// All dependency edges `(a, b, kind)` meaning `a kind b`, grouped by b.
    pub fn edges(&self) -> impl Iterator<Item = (OpId, OpId, DepKind)> + '_ {
        (0..self.num_ops() as OpId).flat_map(move |b| {
            self.requirers(b)
                .map(move |a| (a, b, DepKind::Requires))
                .chain(self.irequirers(b).map(move |a| (a, b, DepKind::IRequires)))
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

    /// The building form of `rank` again, which [`Freezer::add`] turns into the same
    /// columns: its operations, its dependencies grouped by prerequisite in row order
    /// (the counting sort of `add` keeps that order), its labels.
    fn unfreeze(&self, rank: u32) -> RankBuild {
        let ops = self.ops_of(rank);
        let base = ops.start;
        let mut r = RankBuild {
            ops: ops.clone().map(|id| self.op(id)).collect(),
            ..RankBuild::default()
        };
        for b in ops.clone() {
            let local = |a: OpId| a - base;
            r.deps.extend(
                self.requirers(b)
                    .map(|a| (local(a), local(b), DepKind::Requires)),
            );
            r.deps.extend(
                self.irequirers(b)
                    .map(|a| (local(a), local(b), DepKind::IRequires)),
            );
        }
        // A rank has counted labels `o0..` or stored ones, never both (see `RankBuild::label`).
        r.canonical = self.canonical.get(rank as usize).copied().unwrap_or(0);
        let first = self.labels.partition_point(|&(id, _)| id < base);
        let last = self.labels.partition_point(|&(id, _)| id < ops.end);
        for k in first..last {
            let from = if k == 0 { 0 } else { self.labels[k - 1].1 };
            let (id, to) = self.labels[k];
            r.label_text.push_str(&self.label_text[from..to]);
            r.labels.push((id - base, r.label_text.len()));
        }
        r
    }

    /// Kahn's algorithm over the last rank added, `rank` (dependencies are rank-local,
    /// so ranks are checked one at a time); reports one cycle's operations on failure.
    fn check_acyclic(&self, rank: u32) -> Result<(), BuildError> {
        let (base, end) = (self.rank_start[rank as usize], self.ops.len() as OpId);
        let n = (end - base) as usize;
        let local = |op: OpId| (op - base) as usize;
        let dependents = |b: OpId| self.requirers(b).chain(self.irequirers(b));
        let mut indeg = vec![0u32; n];
        for b in base..end {
            for a in dependents(b) {
                indeg[local(a)] += 1;
            }
        }
        let mut stack: Vec<OpId> = (base..end).filter(|&i| indeg[local(i)] == 0).collect();
        let mut seen = 0usize;
        while let Some(b) = stack.pop() {
            seen += 1;
            for a in dependents(b) {
                indeg[local(a)] -= 1;
                if indeg[local(a)] == 0 {
                    stack.push(a);
                }
            }
        }
        if seen == n {
            return Ok(());
        }
        // Walk back along unresolved prerequisites to find a cycle.
        let mut prereq: Vec<Option<OpId>> = vec![None; n];
        for b in base..end {
            for a in dependents(b) {
                if indeg[local(a)] > 0 && indeg[local(b)] > 0 {
                    prereq[local(a)] = Some(b);
                }
            }
        }
        let start = (base..end).find(|&i| indeg[local(i)] > 0).unwrap_or(base);
        let mut order = vec![u32::MAX; n];
        let mut path = Vec::new();
        let mut cur = start;
        while order[local(cur)] == u32::MAX {
            order[local(cur)] = path.len() as u32;
            path.push(cur);
            match prereq[local(cur)] {
                Some(next) => cur = next,
                None => break,
            }
        }
        let from = if order[local(cur)] != u32::MAX {
            order[local(cur)] as usize
        } else {
            0
        };
        let mut ops: Vec<u32> = path[from..].iter().map(|&o| o - base).collect();
        ops.reverse();
        Err(BuildError::Cycle { rank, ops })
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
    fn narrow_operation_records_are_seven_bytes() {
        assert_eq!(std::mem::size_of::<NarrowOp>(), 7);
        let mut b = ScheduleBuilder::new(2);
        b.send(0, 1, 70_000, 3);
        b.recv(1, 0, 70_000, ANY);
        let s = b.build().unwrap();
        assert!(matches!(s.ops, OpTable::Narrow(_)));
        assert_eq!((s.peer(1), s.tag(1), s.size(1)), (0, ANY, 70_000));
        assert_eq!((s.peer(0), s.tag(0), s.kind(0)), (1, 3, OpKind::Send));
    }

    /// Peers past 16 bits take the 8-byte record while tags and size indices fit in 16;
    /// a peer past 24 bits, or a tag past 16, the 16-byte one; every value reads back.
    #[test]
    fn records_widen_by_what_they_must_hold() {
        assert_eq!(std::mem::size_of::<MediumOp>(), 8);
        let p = 70_000;
        let mut b = ScheduleBuilder::new(p);
        b.send(0, 1, 8, 7);
        b.recv(1, 0, 8, ANY);
        b.send(0, p - 1, 70_000, 65_534);
        b.recv(p - 1, 0, 70_000, 65_534);
        b.recv(p - 1, ANY, 8, ANY);
        let s = b.build().unwrap();
        assert!(matches!(s.ops, OpTable::Medium(_)));
        let all = |s: &Schedule| -> Vec<(OpKind, u32, u32, u64)> {
            (0..s.num_ops() as OpId)
                .map(|o| (s.kind(o), s.peer(o), s.tag(o), s.size(o)))
                .collect()
        };
        use OpKind::{Recv, Send};
        let want = vec![
            (Send, 1, 7, 8),
            (Send, p - 1, 65_534, 70_000),
            (Recv, 0, ANY, 8),
            (Recv, 0, 65_534, 70_000),
            (Recv, ANY, ANY, 8),
        ];
        assert_eq!(all(&s), want);
        // A tag of 16 bits' top value (not ANY) makes the records wide.
        let mut b = ScheduleBuilder::new(p);
        b.send(0, p - 1, 8, 7);
        b.recv(p - 1, 0, 8, 65_535);
        let s = b.build().unwrap();
        assert!(matches!(s.ops, OpTable::Wide(_)));
        assert_eq!(all(&s), vec![(Send, p - 1, 7, 8), (Recv, 0, 65_535, 8)]);
        // So does a peer of 24 bits' top value (the table alone: a schedule would need
        // 2^24 ranks).
        let mut t = OpTable::Narrow(Vec::new());
        t.push(Send, 70_000, 0, 0, 1);
        assert_eq!(t.level(), 1);
        t.push(Recv, PEER24_ANY, ANY, 0, 1);
        assert_eq!(t.level(), 2);
        assert_eq!(
            (t.get(0), t.get(1)),
            ((Send, 70_000, 0, 0), (Recv, PEER24_ANY, ANY, 0))
        );
    }

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
        assert_eq!(s.requirers(0).collect::<Vec<_>>(), [1]);
        assert_eq!(s.irequirers(2).collect::<Vec<_>>(), [3]);
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

#[cfg(test)]
mod seal_tests {
    use super::*;

    /// Everything a schedule hands out, operation by operation.
    #[allow(clippy::type_complexity)]
    fn dump(s: &Schedule) -> Vec<(Op, u32, Vec<OpId>, Vec<OpId>, Option<String>)> {
        (0..s.num_ops() as OpId)
            .map(|i| {
                (
                    s.op(i),
                    s.rank_of(i),
                    s.requirers(i).collect::<Vec<_>>(),
                    s.irequirers(i).collect::<Vec<_>>(),
                    s.label(i).map(str::to_string),
                )
            })
            .collect()
    }

    /// Rank `r` of a small random-looking schedule: ops with wide and narrow fields,
    /// `o<k>` labels and others, requires and irequires edges.
    fn fill(b: &mut ScheduleBuilder, r: u32, n: u32, seed: u32) {
        let p = b.num_ranks();
        for k in 0..n {
            let x = seed
                .wrapping_mul(2654435761)
                .wrapping_add(k * 40503 + r * 977);
            let mut op = match x % 3 {
                0 => Op::send((x >> 3) % p, u64::from(x % 5), x % 7),
                1 => Op::recv(
                    if x.is_multiple_of(4) {
                        ANY
                    } else {
                        (x >> 5) % p
                    },
                    8,
                    ANY,
                ),
                _ => Op::calc(u64::from(x % 11)),
            };
            if seed % 3 == 1 && x.is_multiple_of(13) {
                op.tag = 70_000 + k; // needs the wide table
            }
            if seed % 4 == 2 && r > 0 && x.is_multiple_of(5) {
                op.cpu = 1;
                op.nic = 2;
            }
            let o = b.push(r, op);
            if !x.is_multiple_of(9) || seed.is_multiple_of(2) {
                b.label(o, &format!("o{k}"));
            } else {
                b.label(o, &format!("l{k}_{r}"));
            }
            if k > 0 {
                let prev = OpRef {
                    rank: r,
                    index: (x >> 7) % k,
                };
                let kind = if seed % 5 == 3 && r == p - 1 && x.is_multiple_of(2) {
                    DepKind::IRequires
                } else {
                    DepKind::Requires
                };
                b.dep(o, prev, kind);
            }
        }
    }

    /// Sealing ranks as they are complete gives the schedule built at once.
    #[test]
    fn sealed_ranks_build_the_same_schedule() {
        for seed in 0..40u32 {
            let p = 1 + seed % 6;
            let (mut whole, mut sealed) = (ScheduleBuilder::new(p), ScheduleBuilder::new(p));
            for r in 0..p {
                let n = (seed * 7 + r * 3) % 9;
                fill(&mut whole, r, n, seed);
                fill(&mut sealed, r, n, seed);
                if r + 1 < p || seed % 2 == 0 {
                    sealed.seal(r).unwrap();
                }
            }
            let (a, b) = (whole.build().unwrap(), sealed.build().unwrap());
            assert_eq!(dump(&a), dump(&b), "seed {seed}");
            assert_eq!((a.max_cpu(), a.max_nic()), (b.max_cpu(), b.max_nic()));
        }
    }

    /// A tag past 16 bits after narrow operations widens the table, values intact.
    #[test]
    fn widening_keeps_earlier_operations() {
        let mut b = ScheduleBuilder::new(2);
        b.send(0, 1, 8, ANY);
        b.recv(0, ANY, 16, 3);
        b.seal(0).unwrap();
        b.send(1, 0, 8, 70_000);
        let s = b.build().unwrap();
        assert_eq!(s.op(0), Op::send(1, 8, ANY));
        assert_eq!(s.op(1), Op::recv(ANY, 16, 3));
        assert_eq!(s.op(2), Op::send(0, 8, 70_000));
    }

    /// Two ranks, rank 0 a two-operation cycle and sealed.
    fn sealed_cycle() -> ScheduleBuilder {
        let mut b = ScheduleBuilder::new(2);
        let (x, y) = (b.calc(0, 1), b.calc(0, 1));
        b.requires(x, y);
        b.requires(y, x);
        b.seal(0).unwrap();
        b
    }

    /// A cycle in a sealed rank is reported after the peer errors of later ranks, as
    /// when the whole schedule is built at once.
    #[test]
    fn a_sealed_cycle_waits_for_later_errors() {
        let mut b = sealed_cycle();
        b.send(1, 5, 1, 0);
        assert!(matches!(
            b.build(),
            Err(BuildError::PeerOutOfRange {
                rank: 1,
                peer: 5,
                ..
            })
        ));
        assert_eq!(
            sealed_cycle().build().unwrap_err(),
            BuildError::Cycle {
                rank: 0,
                ops: vec![1, 0]
            }
        );
    }
}
