//! A radix heap: a priority queue for items ordered by (time, tie-breaker) whose times
//! are mostly pushed no earlier than the last time popped, as events in a discrete-event
//! simulation.
//!
//! Items later than `now`, the time of the last item popped, live in buckets by the
//! highest bit in which their time differs from `now`: bucket `b` (1 to 64) holds times
//! that agree with `now` above bit `b - 1`. Items at `now` (or, rarely, earlier) are
//! popped in (time, tie-breaker) order: from a queue when they come in that order (a
//! split sorts its items; a push at `now` usually has a fresh, larger tie-breaker),
//! from a small binary heap otherwise. When both are empty, the lowest non-empty bucket
//! is split: its earliest time becomes `now`, its items at that time go to the queue and
//! the others to lower buckets. Each item moves at most once per bit of time, so most
//! pushes and pops cost a few instructions where a binary heap of all items pays a
//! comparison and a move per level. `peek` splits as `pop` does; an item pushed after
//! that with a time earlier than the new `now` waits in the small heap.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// An item with its priority: (time, tie-breaker), smallest first.
pub(crate) trait Keyed {
    fn key(&self) -> (u64, u64);
}

/// Orders a [`Keyed`] item by its key in the heap of current items.
struct ByKey<T>(T);

impl<T: Keyed> PartialEq for ByKey<T> {
    fn eq(&self, o: &Self) -> bool {
        self.0.key() == o.0.key()
    }
}
impl<T: Keyed> Eq for ByKey<T> {}
impl<T: Keyed> PartialOrd for ByKey<T> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<T: Keyed> Ord for ByKey<T> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.key().cmp(&o.0.key())
    }
}

pub(crate) struct RadixQueue<T> {
    /// The time of the last bucket split (0 at first).
    now: u64,
    /// Items at `now` or earlier, in key order: those pushed in order (the usual case,
    /// a fresh tie-breaker at the current time) and the others in a heap.
    current: VecDeque<T>,
    out_of_order: BinaryHeap<Reverse<ByKey<T>>>,
    /// An empty buffer kept for the next split.
    spare: Vec<T>,
    /// Buckets 1..=64 (index 0 unused).
    buckets: Vec<Vec<T>>,
    /// Bit `b - 1` set when bucket `b` is not empty.
    full: u64,
    /// Number of items.
    len: usize,
}

/// The bucket of `time` relative to `now` (`time > now`).
#[inline]
fn bucket(time: u64, now: u64) -> usize {
    (64 - (time ^ now).leading_zeros()) as usize
}

impl<T: Keyed> RadixQueue<T> {
    pub(crate) fn new() -> Self {
        RadixQueue {
            now: 0,
            current: VecDeque::new(),
            out_of_order: BinaryHeap::new(),
            spare: Vec::new(),
            buckets: (0..=64).map(|_| Vec::new()).collect(),
            full: 0,
            len: 0,
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, item: T) {
        self.len += 1;
        let key = item.key();
        if key.0 > self.now {
            let b = bucket(key.0, self.now);
            self.full |= 1 << (b - 1);
            self.buckets[b].push(item);
        } else if self.current.back().is_none_or(|last| last.key() < key) {
            self.current.push_back(item);
        } else {
            self.out_of_order.push(Reverse(ByKey(item)));
        }
    }

    /// The item with the smallest key, if any.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        let from_heap = self.next_from_heap()?;
        self.len -= 1;
        if from_heap {
            self.out_of_order.pop().map(|Reverse(ByKey(item))| item)
        } else {
            self.current.pop_front()
        }
    }

    /// Number of items.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Keep only the items for which `keep` holds (their order is unchanged).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.current.retain(|i| keep(i));
        self.out_of_order.retain(|Reverse(ByKey(i))| keep(i));
        self.len = self.current.len() + self.out_of_order.len();
        for b in 1..=64 {
            self.buckets[b].retain(|i| keep(i));
            self.len += self.buckets[b].len();
            if self.buckets[b].is_empty() {
                self.full &= !(1 << (b - 1));
            }
        }
    }

    /// The item with the smallest key, if any, left in the queue. Items pushed after
    /// it with an earlier time are still popped first (they come out of order).
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<&T> {
        if self.next_from_heap()? {
            self.out_of_order.peek().map(|Reverse(ByKey(item))| item)
        } else {
            self.current.front()
        }
    }

    /// Whether the smallest item is in `out_of_order` (else `current`), after
    /// splitting a bucket if both are empty; None when the queue is empty.
    #[inline]
    fn next_from_heap(&mut self) -> Option<bool> {
        if self.current.is_empty() && self.out_of_order.is_empty() {
            if self.full == 0 {
                return None;
            }
            self.split((self.full.trailing_zeros() + 1) as usize);
        }
        Some(match (self.current.front(), self.out_of_order.peek()) {
            (Some(a), Some(Reverse(ByKey(b)))) => b.key() < a.key(),
            (None, _) => true,
            (Some(_), None) => false,
        })
    }

    /// Move bucket `b`'s items below it, its earliest time becoming `now` (only when
    /// no item is at `now`).
    fn split(&mut self, b: usize) {
        let mut items = std::mem::take(&mut self.buckets[b]);
        self.full &= !(1 << (b - 1));
        self.now = items.iter().map(|i| i.key().0).min().unwrap_or(self.now);
        let mut at_now = std::mem::take(&mut self.spare);
        for item in items.drain(..) {
            let time = item.key().0;
            if time == self.now {
                at_now.push(item);
            } else {
                let to = bucket(time, self.now);
                self.full |= 1 << (to - 1);
                self.buckets[to].push(item);
            }
        }
        at_now.sort_unstable_by_key(|i| i.key());
        // `current` is empty: it takes `at_now`'s buffer, and `at_now` its (no copy).
        let empty = std::mem::replace(&mut self.current, VecDeque::from(at_now));
        self.spare = Vec::from(empty);
        // Keep the allocation for the next time this bucket fills.
        self.buckets[b] = items;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (time, tie-breaker).
    impl Keyed for (u64, u64) {
        fn key(&self) -> (u64, u64) {
            *self
        }
    }

    proptest::proptest! {
        /// Pops (and peeks) come out in key order, as from a binary heap, with items
        /// pushed at the current time, later (near and far) and, rarely, earlier, and
        /// some dropped by `retain`.
        #[test]
        fn pops_in_key_order(steps in proptest::collection::vec((0u8..6, 0u64..1000, 0u8..3), 1..300)) {
            let mut radix = RadixQueue::new();
            let mut heap = BinaryHeap::new();
            let mut last = 0u64;
            for (id, (what, delta, shift)) in (0u64..).zip(steps) {
                if what == 5 {
                    // Drop the items whose tie-breaker is odd.
                    radix.retain(|&(_, tie)| tie % 2 == 0);
                    heap.retain(|Reverse((_, tie))| tie % 2 == 0);
                    proptest::prop_assert_eq!(radix.len(), heap.len());
                } else if what == 4 {
                    proptest::prop_assert_eq!(radix.peek().copied(), heap.peek().map(|Reverse(k)| *k));
                } else if what == 0 {
                    let (a, b) = (radix.pop(), heap.pop().map(|Reverse(k)| k));
                    proptest::prop_assert_eq!(a, b);
                    if let Some((time, _)) = b {
                        last = time;
                    }
                } else {
                    let time = if what == 3 {
                        last.saturating_sub(delta)
                    } else {
                        last + (delta << (20 * u32::from(shift)))
                    };
                    // Ties broken by a number that does not follow the order of pushes.
                    let item = (time, id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    radix.push(item);
                    heap.push(Reverse(item));
                }
            }
            while let Some(Reverse(k)) = heap.pop() {
                proptest::prop_assert_eq!(radix.pop(), Some(k));
            }
            proptest::prop_assert!(radix.pop().is_none());
        }
    }
}
