//! A schedule's dependency edges as compressed rows: row `b` lists the operations that
//! depend on operation `b` (`requires b`, or `irequires b`), in the order the edges were
//! added.
//!
//! Dependencies stay within a rank (GOAL), so an edge is stored as the distance from `b`
//! to its dependent: 2 bytes while every distance fits in an `i16`, 4 (the dependent's
//! [`OpId`]) otherwise. Row starts are a `u32` every [`BLOCK`] rows and a `u16` per row
//! counted from its block's start, while a block's rows hold fewer than 65 536 edges
//! (one `u32` per row otherwise). About 4.1 bytes per operation plus 2 per edge, where
//! plain rows of `u32`s take 4 plus 4.

use crate::op_id::OpId;

/// Rows per stored absolute start.
const BLOCK: usize = 64;

/// Where each row starts in the edge list (one more entry than there are rows).
#[derive(Clone)]
enum Starts {
    /// Start of row `i`: `block[i / BLOCK] + off[i]`.
    Blocked {
        block: Vec<u32>,
        off: Vec<u16>,
    },
    Flat(Vec<u32>),
}

impl Starts {
    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        match self {
            Starts::Blocked { block, off } => block[i / BLOCK] + off[i] as u32,
            Starts::Flat(v) => v[i],
        }
    }

    fn len(&self) -> usize {
        match self {
            Starts::Blocked { off, .. } => off.len(),
            Starts::Flat(v) => v.len(),
        }
    }

    /// Append the next start (never smaller than the last).
    fn push(&mut self, start: u32) {
        if let Starts::Blocked { block, off } = self {
            if off.len() % BLOCK == 0 {
                block.push(start);
                off.push(0);
                return;
            }
            if let Ok(d) = u16::try_from(start - block[block.len() - 1]) {
                off.push(d);
                return;
            }
            let flat = (0..self.len()).map(|i| self.get(i)).collect();
            *self = Starts::Flat(flat);
        }
        if let Starts::Flat(v) = self {
            v.push(start);
        }
    }

    fn shrink_to_fit(&mut self) {
        match self {
            Starts::Blocked { block, off } => {
                block.shrink_to_fit();
                off.shrink_to_fit();
            }
            Starts::Flat(v) => v.shrink_to_fit(),
        }
    }
}

/// The edges of all rows, one after the other.
#[derive(Clone)]
enum Edges {
    /// Dependent minus row (`a - b`).
    Near(Vec<i16>),
    /// The dependent itself.
    Far(Vec<OpId>),
}

/// Compressed rows of dependents; see the module documentation.
#[derive(Clone)]
pub(crate) struct DepRows {
    starts: Starts,
    edges: Edges,
}

impl DepRows {
    /// Rows for no operation yet.
    pub(crate) fn new() -> DepRows {
        let mut rows = DepRows {
            starts: Starts::Blocked {
                block: Vec::new(),
                off: Vec::new(),
            },
            edges: Edges::Near(Vec::new()),
        };
        rows.starts.push(0);
        rows
    }

    /// Number of rows.
    pub(crate) fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Append `count` empty rows.
    pub(crate) fn push_empty(&mut self, count: usize) {
        let end = self.starts.get(self.len());
        for _ in 0..count {
            self.starts.push(end);
        }
    }

    /// Append the rows of operations `base .. base + count` (one rank), from its edges
    /// `(a, b)` (`a` depends on `b`, both local indices below `count`), each row in the
    /// order the edges come (a counting sort by `b`).
    pub(crate) fn push_rank(
        &mut self,
        base: OpId,
        count: usize,
        edges: impl Iterator<Item = (u32, u32)> + Clone,
    ) {
        debug_assert_eq!(self.len(), base as usize);
        if matches!(self.edges, Edges::Near(_))
            && edges
                .clone()
                .any(|(a, b)| i16::try_from(a as i64 - b as i64).is_err())
        {
            self.widen();
        }
        let mut counts = vec![0u32; count + 1];
        for (_, b) in edges.clone() {
            counts[b as usize + 1] += 1;
        }
        for i in 1..=count {
            counts[i] += counts[i - 1];
        }
        let at = self.starts.get(self.len());
        for &c in &counts[1..] {
            self.starts.push(at + c);
        }
        let total = counts[count] as usize;
        let at = at as usize;
        match &mut self.edges {
            Edges::Near(v) => {
                v.resize(at + total, 0);
                for (a, b) in edges {
                    v[at + counts[b as usize] as usize] = (a as i64 - b as i64) as i16;
                    counts[b as usize] += 1;
                }
            }
            Edges::Far(v) => {
                v.resize(at + total, 0);
                for (a, b) in edges {
                    v[at + counts[b as usize] as usize] = base + a;
                    counts[b as usize] += 1;
                }
            }
        }
    }

    /// Store dependents whole from now on.
    fn widen(&mut self) {
        if let Edges::Near(near) = &self.edges {
            let mut far = Vec::with_capacity(near.capacity());
            for b in 0..self.len() {
                let row = self.starts.get(b) as usize..self.starts.get(b + 1) as usize;
                far.extend(near[row].iter().map(|&d| (b as i64 + d as i64) as OpId));
            }
            self.edges = Edges::Far(far);
        }
    }

    /// Every dependent of every row, row after row (one pass, for counts).
    pub(crate) fn for_each(&self, mut f: impl FnMut(OpId)) {
        match &self.edges {
            Edges::Near(v) => {
                let mut from = 0usize;
                for b in 0..self.len() {
                    let to = self.starts.get(b + 1) as usize;
                    for &d in &v[from..to] {
                        f((b as i64 + d as i64) as OpId);
                    }
                    from = to;
                }
            }
            Edges::Far(v) => v.iter().for_each(|&a| f(a)),
        }
    }

    /// The dependents of operation `b`.
    #[inline(always)]
    pub(crate) fn row(&self, b: OpId) -> Dependents<'_> {
        let i = b as usize;
        let row = self.starts.get(i) as usize..self.starts.get(i + 1) as usize;
        Dependents {
            of: b,
            edges: match &self.edges {
                Edges::Near(v) => EdgesOf::Near(v[row].iter()),
                Edges::Far(v) => EdgesOf::Far(v[row].iter()),
            },
        }
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.starts.shrink_to_fit();
        match &mut self.edges {
            Edges::Near(v) => v.shrink_to_fit(),
            Edges::Far(v) => v.shrink_to_fit(),
        }
    }
}

#[derive(Clone)]
enum EdgesOf<'a> {
    Near(std::slice::Iter<'a, i16>),
    Far(std::slice::Iter<'a, OpId>),
}

/// The operations that depend on one operation, in the order the edges were added
/// ([`Schedule::requirers`](crate::Schedule::requirers),
/// [`Schedule::irequirers`](crate::Schedule::irequirers)).
#[derive(Clone)]
pub struct Dependents<'a> {
    of: OpId,
    edges: EdgesOf<'a>,
}

impl Dependents<'_> {
    /// No operation depends on it this way.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// No dependents (the rows of a schedule without such edges).
    pub(crate) fn none() -> Dependents<'static> {
        Dependents {
            of: 0,
            edges: EdgesOf::Far([].iter()),
        }
    }
}

impl Iterator for Dependents<'_> {
    type Item = OpId;

    #[inline]
    fn next(&mut self) -> Option<OpId> {
        match &mut self.edges {
            EdgesOf::Near(it) => it.next().map(|&d| (self.of as i64 + d as i64) as OpId),
            EdgesOf::Far(it) => it.next().copied(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.edges {
            EdgesOf::Near(it) => it.len(),
            EdgesOf::Far(it) => it.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for Dependents<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(rows: &DepRows) -> Vec<Vec<OpId>> {
        (0..rows.len() as OpId)
            .map(|b| rows.row(b).collect())
            .collect()
    }

    #[test]
    fn near_rows_widen_when_a_distance_does_not_fit() {
        let mut rows = DepRows::new();
        rows.push_rank(0, 3, [(1, 0), (2, 0), (2, 1)].into_iter());
        rows.push_empty(2);
        assert!(matches!(rows.edges, Edges::Near(_)));
        let mut all = Vec::new();
        rows.for_each(|a| all.push(a));
        assert_eq!(all, [1, 2, 2]);
        // one rank of 40 000 operations whose last requires its first
        rows.push_rank(5, 40_000, [(39_999, 0), (0, 39_999)].into_iter());
        assert!(matches!(rows.edges, Edges::Far(_)));
        let got = rows_of(&rows);
        assert_eq!(got[..5], [vec![1, 2], vec![2], vec![], vec![], vec![]]);
        assert_eq!(got[5], vec![40_004]);
        assert_eq!(got[40_004], vec![5]);
        assert_eq!(got.iter().map(Vec::len).sum::<usize>(), 5);
        let mut all = Vec::new();
        rows.for_each(|a| all.push(a));
        assert_eq!(all, got.concat());
        assert_eq!(rows.row(0).len(), 2);
    }

    #[test]
    fn starts_go_flat_when_a_block_holds_too_many_edges() {
        let mut rows = DepRows::new();
        // operation 1 has 70 000 dependents: its block's starts pass u16
        let many: Vec<(u32, u32)> = (2..70_002).map(|a| (a, 1)).collect();
        rows.push_rank(0, 70_002, many.iter().copied());
        assert!(matches!(rows.starts, Starts::Flat(_)));
        assert_eq!(rows.row(0).len(), 0);
        assert_eq!(rows.row(1).len(), 70_000);
        assert_eq!(rows.row(1).last(), Some(70_001));
        assert_eq!(rows.row(2).len(), 0);
        assert_eq!(rows.len(), 70_002);
    }
}
