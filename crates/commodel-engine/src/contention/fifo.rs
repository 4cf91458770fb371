//! The queues of small messages at each sender's NIC, in posting order (`tcpflow`'s
//! `fifo_limit`): per node, the live flows of at most `fifo_limit` bytes it sends, oldest
//! first. A flow's level is its place among its sender's live small flows.
//!
//! `tcpflow` walks a queue from the front to find the flows that can get capacity,
//! without keeping the waiting ones in its recomputations. Consecutive flows whose routes
//! share their second link direction (their key: a rack's uplink for the flows that leave
//! the rack) form a run, so that a walk passes a run whose key is full in one step,
//! counting its live flows into the level.

use std::collections::VecDeque;

/// A queue's entry: (posting order, flow id, key), the id [`GONE`] once the flow has
/// finished.
type Entry = (u64, u32, u32);

/// The id of a finished flow's entry (removed from the queue lazily).
const GONE: u32 = u32::MAX;

/// The key of a flow whose route has one link direction (never full for a walk).
pub const NO_KEY: u32 = u32::MAX;

/// Consecutive entries with one key, up to `end` (absolute index, excluded; a run starts
/// where the one before it ends); `live` of them have not finished.
#[derive(Clone, Copy)]
struct Run {
    key: u32,
    end: usize,
    live: u32,
}

#[derive(Clone, Default)]
struct Queue {
    /// Entry i (absolute) is `entries[i - base]`; run j is `runs[j - run_base]`.
    entries: VecDeque<Entry>,
    base: usize,
    runs: VecDeque<Run>,
    run_base: usize,
    /// Entries whose flow has not finished.
    live: u32,
}

impl Queue {
    /// Rebuild without the finished entries (absolute indices start again at 0).
    fn compact(&mut self) {
        self.entries.retain(|e| e.1 != GONE);
        self.base = 0;
        self.run_base = 0;
        self.runs.clear();
        for (i, e) in self.entries.iter().enumerate() {
            match self.runs.back_mut() {
                Some(run) if run.key == e.2 => {
                    run.end = i + 1;
                    run.live += 1;
                }
                _ => self.runs.push_back(Run {
                    key: e.2,
                    end: i + 1,
                    live: 1,
                }),
            }
        }
    }
}

/// A walk along one node's queue: the next entry to look at and the level it would have.
#[derive(Clone, Copy, Debug)]
pub struct Cursor {
    pub node: u32,
    run: usize,
    at: usize,
    /// The live entries before `at`: the level of the next live one.
    pub level: u32,
    /// The live entries of run `run` before `at`.
    passed: u32,
}

/// What a walk does with the entry it looks at.
pub enum Step {
    /// The entry can get capacity: the walk stops on it.
    Take,
    /// The entry cannot: go on to the next.
    Pass,
    /// No entry of this run can (its key is full): pass the rest of the run.
    PassRun,
}

/// Per node, its live small flows in posting order.
pub struct SenderQueues {
    queues: Vec<Queue>,
    /// The nodes whose queue may hold live flows (each once; pruned by [`Self::senders`]).
    busy: Vec<u32>,
    listed: Vec<bool>,
}

impl SenderQueues {
    pub fn new(nodes: usize) -> SenderQueues {
        SenderQueues {
            queues: vec![Queue::default(); nodes],
            busy: Vec::new(),
            listed: vec![false; nodes],
        }
    }

    /// Flow `id` of node `node`, posted `order`-th (larger than every order posted before),
    /// its route's second link direction `key` ([`NO_KEY`]: none).
    pub fn push(&mut self, node: u32, order: u64, id: u32, key: u32) {
        let q = &mut self.queues[node as usize];
        debug_assert!(q.entries.back().is_none_or(|e| e.0 < order));
        let i = q.base + q.entries.len();
        q.entries.push_back((order, id, key));
        match q.runs.back_mut() {
            Some(run) if run.key == key && run.end == i => {
                run.end = i + 1;
                run.live += 1;
            }
            _ => q.runs.push_back(Run {
                key,
                end: i + 1,
                live: 1,
            }),
        }
        q.live += 1;
        if !self.listed[node as usize] {
            self.listed[node as usize] = true;
            self.busy.push(node);
        }
    }

    /// The flow posted `order`-th by `node` has finished.
    pub fn remove(&mut self, node: u32, order: u64) {
        let q = &mut self.queues[node as usize];
        let k = q
            .entries
            .binary_search_by_key(&order, |e| e.0)
            .expect("a small flow is in its sender's queue");
        q.entries[k].1 = GONE;
        let i = q.base + k;
        let j = q.runs.partition_point(|run| run.end <= i);
        q.runs[j].live -= 1;
        q.live -= 1;
        while q.entries.front().is_some_and(|e| e.1 == GONE) {
            q.entries.pop_front();
            q.base += 1;
        }
        while q.runs.front().is_some_and(|run| run.end <= q.base) {
            q.runs.pop_front();
            q.run_base += 1;
        }
        // Finished flows deeper in the queue are dropped once they outnumber the live ones.
        if q.entries.len() > 2 * q.live as usize + 16 {
            q.compact();
        }
    }

    /// The number of live flows in `node`'s queue.
    pub fn live(&self, node: u32) -> u32 {
        self.queues[node as usize].live
    }

    /// A walk from the front of `node`'s queue.
    pub fn cursor(&self, node: u32) -> Cursor {
        let q = &self.queues[node as usize];
        Cursor {
            node,
            run: q.run_base,
            at: q.base,
            level: 0,
            passed: 0,
        }
    }

    /// The nodes with live small flows (any order), each as a walk from its queue's front,
    /// appended to `out`.
    pub fn senders(&mut self, out: &mut Vec<Cursor>) {
        let (queues, listed) = (&self.queues, &mut self.listed);
        self.busy.retain(|&n| {
            let keep = queues[n as usize].live > 0;
            listed[n as usize] = keep;
            keep
        });
        for &n in &self.busy {
            out.push(self.cursor(n));
        }
    }

    /// Walk `c` on to the next live entry that `step(id, key)` takes, and return it with
    /// its level, leaving `c` after it; None at the end of the queue (a walk whose sender's up
    /// link is full is not begun: no entry could get capacity).
    pub fn next(
        &self,
        c: &mut Cursor,
        mut step: impl FnMut(u32, u32) -> Step,
    ) -> Option<(u32, u32)> {
        let q = &self.queues[c.node as usize];
        loop {
            let run = *q.runs.get(c.run - q.run_base)?;
            if c.at >= run.end {
                c.run += 1;
                c.passed = 0;
                continue;
            }
            let (_, id, key) = q.entries[c.at - q.base];
            if id == GONE {
                c.at += 1;
                continue;
            }
            match step(id, key) {
                Step::Take => {
                    let level = c.level;
                    c.at += 1;
                    c.level += 1;
                    c.passed += 1;
                    return Some((id, level));
                }
                Step::Pass => {
                    c.at += 1;
                    c.level += 1;
                    c.passed += 1;
                }
                Step::PassRun => {
                    c.level += run.live - c.passed;
                    c.at = run.end;
                    c.run += 1;
                    c.passed = 0;
                }
            }
        }
    }
}
