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
//!
//! Memory, where a million receives may be posted at once: each list is a ring
//! (its tail's next is its head) and the hash table holds only its tail's index,
//! 4 bytes a slot, the key being read from that entry; an entry is 24 bytes.

use crate::schedule::{OpKind, Schedule, ANY};
use hashbrown::HashTable;
use std::collections::BTreeMap;
use std::hash::Hasher;

const NIL: u32 = u32::MAX;

/// An entry; a removed one (`payload == NIL`) stays linked until it reaches the head of
/// its list. 24 bytes: a million posted receives take 24 MB here and 4 to 8 in the table.
#[derive(Clone, Copy)]
struct Node {
    /// Posting order within the matcher (at most one entry per operation, so a u32).
    seq: u32,
    payload: u32,
    rank: u32,
    src: u32,
    tag: u32,
    /// The next entry of its list; the list is a ring: the tail's next is the head.
    next: u32,
}

impl Node {
    #[inline]
    fn live(&self) -> bool {
        self.payload != NIL
    }
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
    /// One entry per non-empty list: the index of its tail node, whose (rank, src, tag)
    /// is the list's key (a table of 4-byte entries where a map from keys to lists took
    /// 20 bytes a slot).
    lists: HashTable<u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    counts: Vec<RankCounts>,
    /// Per rank that may be queried with a wildcard, its entries in posting order (seq ->
    /// node): `ordered[ordered_slot[rank]]`. `ordered_slot` holds [`NIL`] for the other
    /// ranks, and is empty when no rank may be (4 bytes a rank at most, where an
    /// `Option<BTreeMap>` per rank took 24).
    ordered_slot: Vec<u32>,
    ordered: Vec<BTreeMap<u32, u32>>,
    next_seq: u32,
}

#[inline]
fn key_hash(rank: u32, src: u32, tag: u32) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write_u32(rank);
    h.write_u32(src);
    h.write_u32(tag);
    h.finish()
}

#[inline]
fn node_hash(n: &Node) -> u64 {
    key_hash(n.rank, n.src, n.tag)
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
            lists: HashTable::new(),
            nodes: Vec::new(),
            free: Vec::new(),
            counts: vec![RankCounts::default(); wildcard_queries.len()],
            ordered_slot: if wildcard_queries.contains(&true) {
                let mut next = 0;
                wildcard_queries
                    .iter()
                    .map(|&w| {
                        next += u32::from(w);
                        if w {
                            next - 1
                        } else {
                            NIL
                        }
                    })
                    .collect()
            } else {
                Vec::new()
            },
            ordered: wildcard_queries
                .iter()
                .filter(|&&w| w)
                .map(|_| BTreeMap::new())
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

    /// Append an entry to `rank`'s queue. `payload` must not be `u32::MAX` (the engines'
    /// payloads are operation ids), and a matcher takes at most `u32::MAX - 1` pushes
    /// (one per operation).
    pub fn push(&mut self, rank: u32, src: u32, tag: u32, payload: u32) {
        debug_assert_ne!(payload, NIL);
        let seq = self.next_seq;
        self.next_seq = seq.checked_add(1).expect("more entries than operations");
        let mut node = Node {
            seq,
            payload,
            rank,
            src,
            tag,
            next: NIL,
        };
        let idx = match self.free.last() {
            Some(&i) => i,
            None => self.nodes.len() as u32,
        };
        let c = &mut self.counts[rank as usize];
        c.live += 1;
        match (src == ANY, tag == ANY) {
            (true, true) => c.any_any += 1,
            (true, false) => c.any_src += 1,
            (false, true) => c.any_tag += 1,
            _ => {}
        }
        let nodes = &mut self.nodes;
        let hash = key_hash(rank, src, tag);
        let same = |&t: &u32| {
            let n = &nodes[t as usize];
            n.rank == rank && n.src == src && n.tag == tag
        };
        match self.lists.find_entry(hash, same) {
            Ok(mut entry) => {
                let tail = entry.get_mut();
                node.next = nodes[*tail as usize].next;
                nodes[*tail as usize].next = idx;
                *tail = idx;
            }
            Err(absent) => {
                node.next = idx;
                absent
                    .into_table()
                    .insert_unique(hash, idx, |&t| node_hash(&nodes[t as usize]));
            }
        }
        if self.free.pop().is_none() {
            nodes.push(node);
        } else {
            nodes[idx as usize] = node;
        }
        if let Some(ord) = self.ordered_mut(rank) {
            ord.insert(seq, idx);
        }
    }

    /// `rank`'s entries in posting order, if it may be queried with a wildcard.
    #[inline]
    fn ordered_of(&self, rank: u32) -> Option<&BTreeMap<u32, u32>> {
        match self.ordered_slot.get(rank as usize) {
            Some(&slot) if slot != NIL => self.ordered.get(slot as usize),
            _ => None,
        }
    }

    #[inline]
    fn ordered_mut(&mut self, rank: u32) -> Option<&mut BTreeMap<u32, u32>> {
        match self.ordered_slot.get(rank as usize) {
            Some(&slot) if slot != NIL => self.ordered.get_mut(slot as usize),
            _ => None,
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
            let ord = self
                .ordered_of(rank)
                .expect("wildcard query on a rank not registered for wildcard queries");
            let nodes = &self.nodes;
            let (_, &idx) = ord.iter().find(|(_, &i)| {
                let n = &nodes[i as usize];
                matches(n.src, n.tag, src, tag)
            })?;
            idx
        } else {
            let mut best: Option<(u32, u32)> = None;
            let keys = [
                (true, src, tag),
                (c.any_src > 0, ANY, tag),
                (c.any_tag > 0, src, ANY),
                (c.any_any > 0, ANY, ANY),
            ];
            for (wanted, ksrc, ktag) in keys {
                if !wanted {
                    continue;
                }
                if let Some(h) = self.live_head(rank, ksrc, ktag) {
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
        let idx = self.front(rank, src, tag, true)?;
        let n = self.nodes[idx as usize];
        self.free.push(idx);
        self.counts[rank as usize].live -= 1;
        if let Some(ord) = self.ordered_mut(rank) {
            ord.remove(&n.seq);
        }
        Some(n.payload)
    }

    /// Head of the list of `(rank, src, tag)` after dropping removed entries from its
    /// front (the list itself, if nothing live is left).
    fn live_head(&mut self, rank: u32, src: u32, tag: u32) -> Option<u32> {
        self.front(rank, src, tag, false)
    }

    /// The first live entry of the list of `(rank, src, tag)`, removed entries before it
    /// dropped (their slots freed); with `unlink`, that entry is unlinked too (its slot is
    /// the caller's to free). The list goes when it is left empty.
    #[inline]
    fn front(&mut self, rank: u32, src: u32, tag: u32, unlink: bool) -> Option<u32> {
        let nodes = &mut self.nodes;
        let same = |&t: &u32| {
            let n = &nodes[t as usize];
            n.rank == rank && n.src == src && n.tag == tag
        };
        let Ok(entry) = self.lists.find_entry(key_hash(rank, src, tag), same) else {
            return None;
        };
        let tail = *entry.get();
        loop {
            let head = nodes[tail as usize].next;
            let live = nodes[head as usize].live();
            if live && !unlink {
                return Some(head);
            }
            if !live {
                self.free.push(head);
            }
            if head == tail {
                entry.remove();
                return live.then_some(head);
            }
            nodes[tail as usize].next = nodes[head as usize].next;
            if live {
                return Some(head);
            }
        }
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
        if let Some(ord) = self.ordered_mut(rank) {
            ord.remove(&n.seq);
        }
        self.nodes[idx as usize].payload = NIL;
        // Unlink at once if it is the head of its list (the common case);
        // otherwise it is dropped when it reaches the head.
        let _ = self.live_head(rank, n.src, n.tag);
        n.payload
    }

    /// Live entries of `rank` in posting order: (src, tag, payload).
    pub fn entries(&self, rank: u32) -> Vec<(u32, u32, u32)> {
        let mut v: Vec<&Node> = Vec::new();
        for &tail in &self.lists {
            if self.nodes[tail as usize].rank != rank {
                continue;
            }
            let mut i = tail;
            loop {
                i = self.nodes[i as usize].next;
                v.push(&self.nodes[i as usize]);
                if i == tail {
                    break;
                }
            }
        }
        v.retain(|n| n.live());
        v.sort_by_key(|n| n.seq);
        v.into_iter().map(|n| (n.src, n.tag, n.payload)).collect()
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

    #[test]
    fn entries_and_table_slots_stay_small() {
        assert_eq!(std::mem::size_of::<Node>(), 24);
        let mut m = Matcher::new(&[false, false]);
        for src in 0..1000 {
            m.push(1, src, 7, src);
        }
        // one slot per list: 2048 buckets of a u32 and a control byte (21 bytes a
        // bucket when the table held the key and the list's ends)
        assert_eq!(m.lists.len(), 1000);
        assert!(m.lists.allocation_size() <= 2048 * 5 + 64);
        for src in (0..1000).rev() {
            assert_eq!(m.take(1, src, 7), Some(src));
        }
        assert_eq!(m.lists.len(), 0);
        assert!(m.is_empty(1));
        // Posting order is kept only for the ranks that can get a wildcard query.
        assert!(m.ordered_slot.is_empty() && m.ordered.is_empty());
        let w = Matcher::new(&[false, true, false, true]);
        assert_eq!(w.ordered_slot, [NIL, 0, NIL, 1]);
        assert_eq!(w.ordered.len(), 2);
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
