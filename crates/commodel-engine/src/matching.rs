//! MPI message matching without linear scans.
//!
//! A [`Matcher`] holds, for every rank, one FIFO queue of entries (posted
//! receives, or unexpected messages), each with a source and a tag that may be
//! [`ANY`]. [`Matcher::take`] removes and returns the *first entry in posting
//! order* that matches a query, where a wildcard on either side matches
//! anything — MPI's matching rule, and the rule that keeps messages between
//! one pair of ranks from overtaking each other.
//!
//! Entries live in linked lists keyed by (rank, source, tag), so a query with
//! a concrete source and tag looks at the heads of at most four lists (exact,
//! any-source, any-tag, any-any) and takes the one posted first: O(1). Ranks
//! that may be queried with a wildcard (a receive from any source searching
//! the unexpected messages) also keep an index in posting order, scanned from
//! the oldest entry; only entries that do not match are passed over.

use crate::schedule::{OpKind, Schedule, ANY};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::collections::BTreeMap;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    seq: u64,
    payload: u32,
    src: u32,
    tag: u32,
    next: u32,
    live: bool,
}

#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
}

#[derive(Clone, Copy, Default)]
struct RankCounts {
    live: u32,
    any_src: u32,
    any_tag: u32,
    any_any: u32,
}

/// Matching queues for all ranks; see the module documentation.
pub struct Matcher {
    lists: FxHashMap<(u32, u32, u32), List>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    counts: Vec<RankCounts>,
    /// Per rank, entries in posting order (seq -> node), kept only for ranks
    /// that may be queried with a wildcard.
    ordered: Vec<Option<BTreeMap<u64, u32>>>,
    next_seq: u64,
}

/// The matchers an engine needs for `s`: (posted receives, unexpected
/// messages), each registered for wildcard queries only on the ranks that
/// can get them — a send with a wildcard tag searches its destination's
/// posted receives; a receive with a wildcard source or tag searches its own
/// rank's unexpected messages.
pub fn matchers_for(s: &Schedule) -> (Matcher, Matcher) {
    let p = s.num_ranks() as usize;
    let mut posted_wild = vec![false; p];
    let mut unexpected_wild = vec![false; p];
    for r in 0..p as u32 {
        for op in s.ops_of(r) {
            match s.kind(op) {
                OpKind::Recv if s.peer(op) == ANY || s.tag(op) == ANY => {
                    unexpected_wild[r as usize] = true
                }
                OpKind::Send if s.tag(op) == ANY => posted_wild[s.peer(op) as usize] = true,
                _ => {}
            }
        }
    }
    (Matcher::new(&posted_wild), Matcher::new(&unexpected_wild))
}

#[inline]
fn matches(entry_src: u32, entry_tag: u32, q_src: u32, q_tag: u32) -> bool {
    (q_src == ANY || entry_src == ANY || entry_src == q_src)
        && (q_tag == ANY || entry_tag == ANY || entry_tag == q_tag)
}

impl Matcher {
    /// `wildcard_queries[r]`: rank r may be queried with a wildcard source or tag.
    pub fn new(wildcard_queries: &[bool]) -> Self {
        Matcher {
            lists: FxHashMap::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            counts: vec![RankCounts::default(); wildcard_queries.len()],
            ordered: wildcard_queries
                .iter()
                .map(|&w| if w { Some(BTreeMap::new()) } else { None })
                .collect(),
            next_seq: 0,
        }
    }

    /// Number of live entries of `rank`.
    pub fn len(&self, rank: u32) -> usize {
        self.counts[rank as usize].live as usize
    }

    pub fn is_empty(&self, rank: u32) -> bool {
        self.len(rank) == 0
    }

    /// Append an entry to `rank`'s queue.
    pub fn push(&mut self, rank: u32, src: u32, tag: u32, payload: u32) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let node = Node {
            seq,
            payload,
            src,
            tag,
            next: NIL,
            live: true,
        };
        let idx = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        let c = &mut self.counts[rank as usize];
        c.live += 1;
        match (src == ANY, tag == ANY) {
            (true, true) => c.any_any += 1,
            (true, false) => c.any_src += 1,
            (false, true) => c.any_tag += 1,
            _ => {}
        }
        let list = self.lists.entry((rank, src, tag)).or_insert(List {
            head: NIL,
            tail: NIL,
        });
        if list.tail == NIL {
            list.head = idx;
        } else {
            self.nodes[list.tail as usize].next = idx;
        }
        list.tail = idx;
        if let Some(ord) = &mut self.ordered[rank as usize] {
            ord.insert(seq, idx);
        }
    }

    /// Remove and return the first entry of `rank` (in posting order) that
    /// matches source `src` and tag `tag` (either may be [`ANY`]).
    pub fn take(&mut self, rank: u32, src: u32, tag: u32) -> Option<u32> {
        if self.counts[rank as usize].live == 0 {
            return None;
        }
        let c = self.counts[rank as usize];
        if src != ANY && tag != ANY && c.any_src == 0 && c.any_tag == 0 && c.any_any == 0 {
            return self.take_exact(rank, src, tag);
        }
        let idx = if src == ANY || tag == ANY {
            let ord = self.ordered[rank as usize]
                .as_ref()
                .expect("wildcard query on a rank not registered for wildcard queries");
            let nodes = &self.nodes;
            let (_, &idx) = ord.iter().find(|(_, &i)| {
                let n = &nodes[i as usize];
                matches(n.src, n.tag, src, tag)
            })?;
            idx
        } else {
            let mut best: Option<(u64, u32)> = None;
            let keys = [
                (true, (rank, src, tag)),
                (c.any_src > 0, (rank, ANY, tag)),
                (c.any_tag > 0, (rank, src, ANY)),
                (c.any_any > 0, (rank, ANY, ANY)),
            ];
            for (wanted, key) in keys {
                if !wanted {
                    continue;
                }
                if let Some(h) = self.live_head(key) {
                    let seq = self.nodes[h as usize].seq;
                    if best.is_none_or(|(s, _)| seq < s) {
                        best = Some((seq, h));
                    }
                }
            }
            best?.1
        };
        Some(self.remove(rank, idx))
    }

    /// [`take`](Self::take) when only the list of `(rank, src, tag)` can match (no
    /// wildcard entry in `rank`'s queue, a query without wildcards): its first live
    /// entry, unlinked at once, with one lookup of the list.
    fn take_exact(&mut self, rank: u32, src: u32, tag: u32) -> Option<u32> {
        let Entry::Occupied(mut entry) = self.lists.entry((rank, src, tag)) else {
            return None;
        };
        let list = entry.get_mut();
        drop_dead_front(list, &self.nodes, &mut self.free);
        let idx = list.head;
        if idx == NIL {
            entry.remove();
            return None;
        }
        let n = self.nodes[idx as usize];
        list.head = n.next;
        if list.head == NIL {
            entry.remove();
        }
        self.nodes[idx as usize].live = false;
        self.free.push(idx);
        self.counts[rank as usize].live -= 1;
        if let Some(ord) = &mut self.ordered[rank as usize] {
            ord.remove(&n.seq);
        }
        Some(n.payload)
    }

    /// Head of a list after dropping dead nodes from its front.
    fn live_head(&mut self, key: (u32, u32, u32)) -> Option<u32> {
        let list = self.lists.get_mut(&key)?;
        drop_dead_front(list, &self.nodes, &mut self.free);
        if list.head == NIL {
            self.lists.remove(&key);
            return None;
        }
        Some(list.head)
    }

    fn remove(&mut self, rank: u32, idx: u32) -> u32 {
        let n = self.nodes[idx as usize];
        let c = &mut self.counts[rank as usize];
        c.live -= 1;
        match (n.src == ANY, n.tag == ANY) {
            (true, true) => c.any_any -= 1,
            (true, false) => c.any_src -= 1,
            (false, true) => c.any_tag -= 1,
            _ => {}
        }
        if let Some(ord) = &mut self.ordered[rank as usize] {
            ord.remove(&n.seq);
        }
        self.nodes[idx as usize].live = false;
        // Unlink at once if it is the head of its list (the common case);
        // otherwise it is dropped when it reaches the head.
        let _ = self.live_head((rank, n.src, n.tag));
        n.payload
    }

    /// Live entries of `rank` in posting order: (src, tag, payload).
    pub fn entries(&self, rank: u32) -> Vec<(u32, u32, u32)> {
        let mut v: Vec<&Node> = self
            .lists
            .iter()
            .filter(|((r, _, _), _)| *r == rank)
            .flat_map(|(_, l)| {
                let mut out = Vec::new();
                let mut i = l.head;
                while i != NIL {
                    out.push(&self.nodes[i as usize]);
                    i = self.nodes[i as usize].next;
                }
                out
            })
            .filter(|n| n.live)
            .collect();
        v.sort_by_key(|n| n.seq);
        v.into_iter().map(|n| (n.src, n.tag, n.payload)).collect()
    }
}

/// Unlink the dead nodes at the front of `list` (removed entries are dropped lazily
/// when they reach the head), returning their slots to `free`.
#[inline]
fn drop_dead_front(list: &mut List, nodes: &[Node], free: &mut Vec<u32>) {
    while list.head != NIL && !nodes[list.head as usize].live {
        let dead = list.head;
        list.head = nodes[dead as usize].next;
        free.push(dead);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious linear-scan matcher, as a reference.
    struct Slow(Vec<Vec<(u32, u32, u32)>>);
    impl Slow {
        fn take(&mut self, r: u32, s: u32, t: u32) -> Option<u32> {
            let q = &mut self.0[r as usize];
            let i = q.iter().position(|&(es, et, _)| matches(es, et, s, t))?;
            Some(q.remove(i).2)
        }
    }

    #[test]
    fn first_match_in_posting_order() {
        let mut m = Matcher::new(&[true]);
        m.push(0, 1, 5, 10);
        m.push(0, ANY, 5, 11);
        m.push(0, 1, 5, 12);
        m.push(0, 2, ANY, 13);
        assert_eq!(m.take(0, 1, 5), Some(10));
        assert_eq!(m.take(0, 1, 5), Some(11));
        assert_eq!(m.take(0, 2, 7), Some(13));
        assert_eq!(m.take(0, 2, 7), None);
        assert_eq!(m.take(0, ANY, ANY), Some(12));
        assert!(m.is_empty(0));
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_linear_scan(ops in proptest::collection::vec((0u8..3, 0u32..3, 0u32..3, 0u32..3, proptest::bool::ANY, proptest::bool::ANY), 0..200)) {
            let mut fast = Matcher::new(&[true, true, false]);
            let mut slow = Slow(vec![Vec::new(); 3]);
            let mut next = 0u32;
            for (op, rank, s, t, ws, wt) in ops {
                let s = if ws && rank < 2 { ANY } else { s };
                let t = if wt && rank < 2 { ANY } else { t };
                if op == 0 {
                    fast.push(rank, s, t, next);
                    slow.0[rank as usize].push((s, t, next));
                    next += 1;
                } else {
                    proptest::prop_assert_eq!(fast.take(rank, s, t), slow.take(rank, s, t));
                }
                proptest::prop_assert_eq!(fast.len(rank), slow.0[rank as usize].len());
            }
        }
    }
}
