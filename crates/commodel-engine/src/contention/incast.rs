//! TCP incast as a stochastic rule (Lastovetsky and O'Flynn, section 4.3.2),
//! usable with any [`Network`]: [`Incast`] wraps it.
//!
//! An *episode* on a receiving node lasts while messages flow into it (from
//! the start of a transfer until its data has arrived). At the end of an
//! instant at which k >= 2 transfers flow into the node, the operation
//! involves n = k + 1 processors (the receiver and k senders, Lastovetsky's
//! n), and the episode escalates to level t_i with probability f_i(n, M) (M
//! the largest message flowing in). Senders that join later raise n: at the
//! end of each instant at which n exceeds that of the episode's last draw,
//! and the episode has not escalated, one more draw is made for what the
//! larger n adds, (f_i(n, M) - F_i)+ / (1 - sum_j F_j), F_i the largest f_i
//! of the episode's draws so far; so an episode that grows to n escalates
//! with f_i(n, M) in all wherever f grows with n (a gather whose senders
//! start one after the other, as Open MPI's linear_sync, reaches n = 16 on
//! 16 ranks, where one draw at its first instant saw n = 3). The probabilities come from the `table` parameter (built by the
//! Python side from the platform's `many_to_one` statistics: f_i is 0 outside
//! [M1(n), M2), and the levels are certain from Mc(n)); a missing (n, M)
//! means no escalation. An escalated episode delivers none of its messages
//! before the episode start + t_i: their arrival is held until then (the
//! senders are not delayed), and each held message is reported as an RTO
//! event naming it, with the delay it got. Draws use a SplitMix64 generator
//! seeded by `seed`, in event order, so a run is repeatable.
//!
//! Parameters ([`IncastParams`], the `incast` of a model's parameters): `levels`
//! (ps, t_1..t_k), `table` (rows n, M, [f_1, ..., f_k]), `seed`; the rank
//! placement is the model's `rank_to_node`.

use crate::engine::{Lookahead, Network, XferEvent, XferId};
use crate::outcome::SimError;
use crate::params::IncastParams;
use crate::time::{add, Overflow, Time};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The rule's parameters, checked, with the table keyed by (n, M).
#[derive(Clone, Debug, Default)]
pub struct IncastRule {
    pub levels: Vec<Time>,
    pub table: FxHashMap<(u32, u64), Vec<f64>>,
    pub seed: u64,
}

impl IncastRule {
    /// Check the `incast` parameters of `model`: each row has one probability in
    /// [0, 1] per level, summing to at most 1.
    pub fn new(p: &IncastParams, model: &'static str) -> Result<IncastRule, SimError> {
        let bad = |field: &str, what: String| SimError::bad(model, format!("incast.{field}"), what);
        let mut table = FxHashMap::default();
        for (i, row) in p.table.iter().enumerate() {
            let field = format!("table[{i}]");
            if let Some(x) = row.f.iter().find(|x| !(0.0..=1.0).contains(*x)) {
                return Err(bad(
                    &field,
                    format!("probabilities must be in [0, 1], got {x}"),
                ));
            }
            if row.f.len() != p.levels.len() {
                return Err(bad(
                    &field,
                    format!(
                        "has {} probabilities for {} levels",
                        row.f.len(),
                        p.levels.len()
                    ),
                ));
            }
            if row.f.iter().sum::<f64>() > 1.0 + 1e-9 {
                return Err(bad(&field, "probabilities sum to more than 1".into()));
            }
            let n = u32::try_from(row.n).map_err(|_| {
                bad(
                    &field,
                    format!("n must be a processor count, got {}", row.n),
                )
            })?;
            table.insert((n, row.m), row.f.clone());
        }
        Ok(IncastRule {
            levels: p.levels.clone(),
            table,
            seed: p.seed,
        })
    }
}

#[derive(Default)]
struct NodeState {
    /// Transfers flowing in: (transfer, its size as scheduled: what the table is keyed by).
    active: Vec<(XferId, u64)>,
    start: Time,
    /// n of the episode's last draw (0: none yet) and, per level, the largest
    /// probability its draws have accounted for.
    drawn_n: u32,
    drawn_f: Vec<f64>,
    deadline: Option<Time>,
}

/// A [`Network`] with the incast rule on top (see the module documentation).
pub struct Incast<N: Network> {
    inner: N,
    p: IncastRule,
    node: Vec<u32>,
    nodes: FxHashMap<u32, NodeState>,
    /// Per transfer: its receiving node.
    dest: FxHashMap<XferId, u32>,
    held: BinaryHeap<Reverse<(Time, XferId)>>,
    rng: u64,
    buf: Vec<XferEvent>,
    /// The instant being advanced (for `filter`) or of the last start.
    now: Time,
    /// Nodes whose episode waits for its draw at the end of this instant.
    pending: Vec<u32>,
}

impl<N: Network> Incast<N> {
    pub fn new(inner: N, p: IncastRule, node: Vec<u32>) -> Self {
        let rng = p.seed;
        Incast {
            inner,
            p,
            node,
            nodes: FxHashMap::default(),
            dest: FxHashMap::default(),
            held: BinaryHeap::new(),
            rng,
            buf: Vec::new(),
            now: 0,
            pending: Vec::new(),
        }
    }

    /// SplitMix64, as a float in [0, 1).
    fn uniform(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn node_of(&self, rank: u32) -> u32 {
        self.node.get(rank as usize).copied().unwrap_or(rank)
    }

    fn filter(&mut self, out: &mut Vec<XferEvent>) {
        for i in 0..self.buf.len() {
            let ev = self.buf[i];
            let XferEvent::Arrived(x) = ev else {
                out.push(ev);
                continue;
            };
            let Some(node) = self.dest.remove(&x) else {
                out.push(ev);
                continue;
            };
            let st = self.nodes.get_mut(&node).expect("node state");
            st.active.retain(|&(y, _)| y != x);
            let deadline = st.deadline;
            if st.active.is_empty() {
                *st = NodeState::default();
            }
            match deadline {
                Some(d) if d > self.now => {
                    out.push(XferEvent::Rto {
                        xfer: x,
                        at: self.now,
                        delay: d - self.now,
                    });
                    self.held.push(Reverse((d, x)));
                }
                _ => out.push(ev),
            }
        }
        self.buf.clear();
    }
}

impl<N: Network> Incast<N> {
    /// A draw for the episode on node `b` (k >= 2 transfers flowing in, n = k + 1
    /// above that of its last draw, not escalated): for what n adds (module text).
    fn draw(&mut self, b: u32) -> Result<(), Overflow> {
        let Some(st) = self.nodes.get(&b) else {
            return Ok(());
        };
        let n = st.active.len() as u32 + 1;
        if st.deadline.is_some() || n < 3 || n <= st.drawn_n {
            return Ok(());
        }
        let last = st.active[st.active.len() - 1].0;
        let m = st.active.iter().map(|&(_, s)| s).max().unwrap_or(0);
        let start = st.start;
        let f = self.p.table.get(&(n, m)).cloned().unwrap_or_default();
        let before = &st.drawn_f;
        let stayed = 1.0 - before.iter().sum::<f64>();
        let added: Vec<f64> = f
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let q = (p - before.get(i).copied().unwrap_or(0.0)).max(0.0);
                if stayed > 0.0 {
                    q / stayed
                } else {
                    0.0
                }
            })
            .collect();
        // what the draws so far have accounted for, level by level (a missing (n, M):
        // none added, none taken back)
        let covered: Vec<f64> = (0..f.len().max(before.len()))
            .map(|i| {
                let x = f.get(i).copied().unwrap_or(0.0);
                x.max(before.get(i).copied().unwrap_or(0.0))
            })
            .collect();
        let mut u = self.uniform();
        let st = self.nodes.get_mut(&b).expect("node state");
        st.drawn_n = n;
        st.drawn_f = covered;
        for (i, &p) in added.iter().enumerate() {
            if u < p {
                st.deadline = Some(add(start, self.p.levels[i], last)?);
                break;
            }
            u -= p;
        }
        Ok(())
    }

    fn release_held(&mut self, now: Time, out: &mut Vec<XferEvent>) {
        while let Some(&Reverse((t, x))) = self.held.peek() {
            if t > now {
                break;
            }
            self.held.pop();
            out.push(XferEvent::Arrived(x));
        }
    }
}

impl<N: Network> Network for Incast<N> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn control_latency(&self, src: u32, dst: u32) -> Time {
        self.inner.control_latency(src, dst)
    }
    fn late(&self) -> bool {
        // Draws are made once every transfer starting at an instant is known.
        true
    }
    fn send_entered(&mut self, now: Time, xfer: XferId, src: u32, dst: u32, bytes: u64) {
        self.inner.send_entered(now, xfer, src, dst, bytes)
    }
    fn start(
        &mut self,
        now: Time,
        xfer: XferId,
        src: u32,
        dst: u32,
        bytes: u64,
        size: u64,
    ) -> Result<(), Overflow> {
        self.inner.start(now, xfer, src, dst, bytes, size)?;
        self.now = now;
        let (a, b) = (self.node_of(src), self.node_of(dst));
        if a == b {
            return Ok(());
        }
        self.dest.insert(xfer, b);
        let st = self.nodes.entry(b).or_default();
        if st.active.is_empty() {
            st.start = now;
        }
        st.active.push((xfer, size));
        let n = st.active.len() as u32 + 1;
        if n >= 3 && n > st.drawn_n && st.deadline.is_none() && !self.pending.contains(&b) {
            self.pending.push(b);
        }
        Ok(())
    }
    fn next_time(&self) -> Option<Time> {
        if !self.pending.is_empty() {
            return Some(self.now);
        }
        let h = self.held.peek().map(|Reverse((t, _))| *t);
        match (self.inner.next_time(), h) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn advance(&mut self, now: Time, out: &mut Vec<XferEvent>) -> Result<(), Overflow> {
        self.advance_with(now, out, &mut |_, _| {})
    }
    fn advance_with(
        &mut self,
        now: Time,
        out: &mut Vec<XferEvent>,
        lookahead: Lookahead<'_>,
    ) -> Result<(), Overflow> {
        self.now = now;
        let pending = std::mem::take(&mut self.pending);
        for b in pending {
            self.draw(b)?;
        }
        let mut buf = std::mem::take(&mut self.buf);
        if self.inner.next_time().is_some_and(|t| t <= now) {
            self.inner.advance_with(now, &mut buf, lookahead)?;
        }
        self.buf = buf;
        self.filter(out);
        self.release_held(now, out);
        Ok(())
    }
}
