//! Per-operation progress in one byte: how many dependencies an operation
//! still waits for, then whether it started and finished.
//!
//! Engines keep this for every operation of a schedule, so it is the largest
//! piece of simulation state: one byte per operation instead of a 32-bit
//! counter and a state byte. Counts of 250 and more (an operation waiting
//! for hundreds of others, as after a large Waitall) live in a side table.

use crate::schedule::{OpId, Schedule};
use rustc_hash::FxHashMap;

const BIG: u8 = 250;
const STARTED: u8 = 251;
const DONE: u8 = 252;

/// Where an operation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Waiting for dependencies, or ready and not started yet.
    Waiting,
    Started,
    Done,
}

pub struct Countdown {
    small: Vec<u8>,
    big: FxHashMap<OpId, u32>,
}

impl Countdown {
    /// Each operation's number of requires + irequires edges.
    pub fn new(s: &Schedule) -> Countdown {
        let mut small = vec![0u8; s.num_ops()];
        let mut big = FxHashMap::default();
        s.for_each_dependent(|a| {
            let c = &mut small[a as usize];
            if *c < BIG - 1 {
                *c += 1;
            } else if *c == BIG - 1 {
                *c = BIG;
                big.insert(a, BIG as u32);
            } else {
                *big.get_mut(&a).expect("big count") += 1;
            }
        });
        Countdown { small, big }
    }

    /// Whether `op` has no dependency left (and has not started).
    #[inline]
    pub fn is_free(&self, op: OpId) -> bool {
        self.small[op as usize] == 0
    }

    /// Whether `op` waits for exactly one more dependency.
    #[inline]
    pub fn waits_for_one(&self, op: OpId) -> bool {
        self.small[op as usize] == 1
    }

    /// One dependency of `op` is satisfied; true if it was the last.
    #[inline]
    pub fn release(&mut self, op: OpId) -> bool {
        let c = &mut self.small[op as usize];
        debug_assert!(*c != 0 && *c < STARTED, "release of op {op} in state {c}");
        if *c == BIG {
            let n = self.big.get_mut(&op).expect("big count");
            *n -= 1;
            if *n == BIG as u32 - 1 {
                self.big.remove(&op);
                *c = BIG - 1;
            }
            return false;
        }
        *c -= 1;
        *c == 0
    }

    #[inline]
    pub fn start(&mut self, op: OpId) {
        self.small[op as usize] = STARTED;
    }

    #[inline]
    pub fn finish(&mut self, op: OpId) {
        self.small[op as usize] = DONE;
    }

    pub fn progress(&self, op: OpId) -> Progress {
        match self.small[op as usize] {
            STARTED => Progress::Started,
            DONE => Progress::Done,
            _ => Progress::Waiting,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScheduleBuilder;

    #[test]
    fn counts_past_the_small_range() {
        let mut b = ScheduleBuilder::new(1);
        let w = b.calc(0, 1);
        let pre: Vec<_> = (0..300).map(|_| b.calc(0, 1)).collect();
        let mut b2 = b.clone();
        for &p in &pre {
            b2.requires(w, p);
        }
        let s = b2.build().unwrap();
        let mut c = Countdown::new(&s);
        assert!(!c.is_free(0));
        for i in 0..300 {
            assert_eq!(c.release(0), i == 299, "release {i}");
        }
        assert!(c.is_free(0));
        c.start(0);
        assert_eq!(c.progress(0), Progress::Started);
        c.finish(0);
        assert_eq!(c.progress(0), Progress::Done);
    }
}
