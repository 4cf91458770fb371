//! Contention models: flows share the links of a [`Topology`].
//!
//! A shared fluid-flow engine ([`Fluid`]) keeps every flow's remaining work
//! (bytes), its rate (bytes/s) and the time its rate was last set. Rates change
//! only when a flow starts or ends. All changes at one instant are collected
//! first (the networks ask the event engine to handle them after its own
//! events at that instant, see [`crate::engine::Network::late`]) and rates are
//! then recomputed once, and only for the flows that can be affected:
//!
//! * [`Scope::Shared`] (PlogPT eq. 7): a flow's rate depends on the flow counts
//!   of its own links only, so the flows crossing a link (either direction)
//!   touched by a change are recomputed;
//! * [`Scope::Component`] (max-min): an allocation change propagates through
//!   shared links, so the whole connected component of the touched links is
//!   recomputed (transitively, by a breadth-first walk over links and flows).
//!
//! A flow's finish time is `now + remaining / rate`, rounded to the nearest
//! picosecond (an [`Overflow`] when it is past [`Time`]); superseded finish times stay in the
//! queue (a radix heap on the integer picosecond time, [`crate::radix`]) and are skipped by
//! their version number.
//!
//! Policies: [`plogpt`] (Nomura et al. eq. 6-7, RTO rule eq. 14),
//! [`maxmin`] (weighted max-min by progressive filling, SimGrid CM02's
//! sharing without its TCP factors) and [`zhu`] (Zhu et al.'s Algorithm 1
//! with the asymmetric property; recomputed over [`Scope::ComponentBidir`]) and
//! [`tcpflow`] (PLogP costs, max-min sharing and TCP's measured efficiency
//! both ways; also over [`Scope::ComponentBidir`]).

pub mod burst;
mod fifo;
pub mod incast;
pub mod maxmin;
pub mod plogpt;
pub mod tcpflow;
pub mod zhu;

use crate::engine::XferId;
use crate::radix::{Keyed, RadixQueue};
use crate::time::{Overflow, Time, PS_PER_S};
use crate::topology::Topology;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Which flows a change can affect (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Shared,
    Component,
    /// As `Component`, and the opposite direction of every link reached
    /// belongs to the component too (Zhu's contra-flows).
    ComponentBidir,
}

/// One flow in the fluid engine.
#[derive(Clone, Debug, Default)]
pub struct Flow {
    pub xfer: XferId,
    pub route: Vec<u32>,
    /// Position of this flow in each route resource's flow list.
    pos: Vec<u32>,
    /// Work left, bytes (PlogPT: b(1) g(m) "bytes").
    pub remaining: f64,
    /// Current rate, bytes/s.
    pub rate: f64,
    /// When `remaining` and `rate` were last set.
    pub last: Time,
    version: u32,
    /// The finish time of its entry in the queue that `version` keeps valid (None: no
    /// valid entry).
    due: Option<Time>,
    /// Max-min weight (route latency, or 1).
    pub weight: f64,
    /// Not yet given a rate (policies may initialise it then).
    pub fresh: bool,
    pub live: bool,
}

/// A flow's finish time as scheduled when its rate was set; superseded when
/// the flow's `version` has moved on.
struct Finish {
    time: Time,
    xfer: XferId,
    id: u32,
    version: u32,
}

impl Keyed for Finish {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time, self.xfer as u64)
    }
}

/// The fluid-flow state shared by the contention models.
pub struct Fluid {
    pub flows: Vec<Flow>,
    free: Vec<u32>,
    /// Live flows on each resource.
    pub on: Vec<Vec<u32>>,
    heap: RadixQueue<Finish>,
    /// The earliest time in `heap` (kept for [`Fluid::next_time`]).
    next: Option<Time>,
    touched: Vec<u32>,
    touched_mark: Vec<bool>,
    /// Scratch: flows to recompute.
    pub work: Vec<u32>,
    work_mark: Vec<bool>,
    /// Number of rate recomputations (flows), for benchmarks.
    pub recomputed: u64,
    /// Number of resources that carry a live flow.
    carrying: usize,
}

impl Fluid {
    pub fn new(topo: &Topology) -> Fluid {
        let r = topo.num_resources();
        Fluid {
            flows: Vec::new(),
            free: Vec::new(),
            on: vec![Vec::new(); r],
            heap: RadixQueue::new(),
            next: None,
            touched: Vec::new(),
            touched_mark: vec![false; r],
            work: Vec::new(),
            work_mark: Vec::new(),
            recomputed: 0,
            carrying: 0,
        }
    }

    fn touch(&mut self, r: u32) {
        if !self.touched_mark[r as usize] {
            self.touched_mark[r as usize] = true;
            self.touched.push(r);
        }
    }

    /// Whether rates must be recomputed (a flow started or ended).
    pub fn dirty(&self) -> bool {
        !self.touched.is_empty()
    }

    /// Add a flow of `work` bytes over `route` at `now`; returns its id.
    pub fn add(&mut self, now: Time, xfer: XferId, route: &[u32], work: f64, weight: f64) -> u32 {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.flows.push(Flow::default());
                self.work_mark.push(false);
                (self.flows.len() - 1) as u32
            }
        };
        let mut pos = std::mem::take(&mut self.flows[id as usize].pos);
        pos.clear();
        for &r in route {
            pos.push(self.on[r as usize].len() as u32);
            self.on[r as usize].push(id);
            if self.on[r as usize].len() == 1 {
                self.carrying += 1;
            }
            self.touch(r);
        }
        let f = &mut self.flows[id as usize];
        f.xfer = xfer;
        f.route.clear();
        f.route.extend_from_slice(route);
        f.pos = pos;
        f.remaining = work;
        f.rate = 0.0;
        f.last = now;
        f.version = f.version.wrapping_add(1);
        f.due = None;
        f.weight = weight;
        f.fresh = true;
        f.live = true;
        id
    }

    /// Remove flow `id` (finished) from its resources.
    fn remove(&mut self, id: u32) {
        let route = std::mem::take(&mut self.flows[id as usize].route);
        let pos = std::mem::take(&mut self.flows[id as usize].pos);
        for (&r, &p) in route.iter().zip(&pos) {
            let list = &mut self.on[r as usize];
            list.swap_remove(p as usize);
            if list.is_empty() {
                self.carrying -= 1;
            }
            if let Some(&moved) = list.get(p as usize) {
                let m = &mut self.flows[moved as usize];
                let k = m
                    .route
                    .iter()
                    .position(|&x| x == r)
                    .expect("moved flow uses r");
                m.pos[k] = p;
            }
            self.touch(r);
        }
        let f = &mut self.flows[id as usize];
        f.live = false;
        f.remaining = 0.0;
        f.version = f.version.wrapping_add(1);
        f.due = None;
        f.route = route;
        // Kept for the flow that reuses this id.
        f.pos = pos;
        self.free.push(id);
    }

    /// The earliest pending finish time (possibly a superseded one).
    pub fn next_time(&self) -> Option<Time> {
        self.next
    }

    fn update_next(&mut self) {
        self.next = self.heap.peek().map(|f| f.time);
    }

    /// Remove the flows that finish at `now`; returns (flow id, xfer, rate at
    /// the end) in transfer order. Flow ids stay valid until the next `add`.
    pub fn pop_finished(&mut self, now: Time, out: &mut Vec<(u32, XferId, f64)>) {
        while self.heap.peek().is_some_and(|e| e.time <= now) {
            let e = self.heap.pop().expect("peeked");
            let f = &self.flows[e.id as usize];
            if !f.live || f.version != e.version {
                continue;
            }
            debug_assert_eq!(e.time, now, "a flow finish was skipped");
            out.push((e.id, e.xfer, f.rate));
        }
        self.update_next();
        out.sort_by_key(|&(_, x, _)| x);
        for &(id, _, _) in out.iter() {
            self.remove(id);
        }
    }

    /// Collect the flows to recompute after the touched resources changed.
    /// `partners(r)` lists extra resources whose flows a change on `r` affects
    /// (PlogPT: the opposite direction, whose capacity depends on `r`).
    pub fn collect(&mut self, scope: Scope, topo: &Topology) {
        self.work.clear();
        let mut queue = std::mem::take(&mut self.touched);
        for &r in &queue {
            self.touched_mark[r as usize] = false;
        }
        match scope {
            Scope::Shared => {
                for &r in &queue {
                    let rev = topo.reverse(r);
                    for rr in std::iter::once(r).chain(rev) {
                        for &id in &self.on[rr as usize] {
                            if !self.work_mark[id as usize] {
                                self.work_mark[id as usize] = true;
                                self.work.push(id);
                            }
                        }
                    }
                }
            }
            Scope::Component | Scope::ComponentBidir => {
                let bidir = scope == Scope::ComponentBidir;
                // Breadth-first over resources and flows.
                let mut seen_res = std::mem::take(&mut self.touched_mark);
                for k in 0..queue.len() {
                    seen_res[queue[k] as usize] = true;
                    if let Some(b) = topo.reverse(queue[k]).filter(|_| bidir) {
                        if !seen_res[b as usize] {
                            seen_res[b as usize] = true;
                            queue.push(b);
                        }
                    }
                }
                let mut i = 0;
                while i < queue.len() {
                    let r = queue[i];
                    i += 1;
                    for k in 0..self.on[r as usize].len() {
                        let id = self.on[r as usize][k];
                        if self.work_mark[id as usize] {
                            continue;
                        }
                        self.work_mark[id as usize] = true;
                        self.work.push(id);
                        let route = &self.flows[id as usize].route;
                        reach(route, bidir, topo, &mut seen_res, &mut queue);
                    }
                }
                for &r in &queue {
                    seen_res[r as usize] = false;
                }
                self.touched_mark = seen_res;
            }
        }
        for &id in &self.work {
            self.work_mark[id as usize] = false;
        }
        // Deterministic order.
        self.work.sort_unstable();
        queue.clear();
        self.touched = queue;
    }

    /// The resources of the component that the touched resources belong to (as
    /// [`Fluid::collect`] over [`Scope::Component`], or [`Scope::ComponentBidir`] with
    /// `bidir`), without collecting its flows: into `out`, and `true`, when the component
    /// is not the whole network; `false`, `out` incomplete, once the walk has reached every
    /// resource that carries a live flow (the component is then every live flow). Consumes
    /// the touched resources as `collect` does; `self.work` is left as it was.
    pub fn component(&mut self, bidir: bool, topo: &Topology, out: &mut Vec<u32>) -> bool {
        out.clear();
        let mut seen = std::mem::take(&mut self.touched_mark);
        let mut reached = 0;
        for k in 0..self.touched.len() {
            let r = self.touched[k];
            out.push(r);
            if let Some(b) = topo.reverse(r).filter(|_| bidir) {
                if !seen[b as usize] {
                    seen[b as usize] = true;
                    out.push(b);
                }
            }
        }
        self.touched.clear();
        for &r in out.iter() {
            reached += !self.on[r as usize].is_empty() as usize;
        }
        let mut i = 0;
        while i < out.len() && reached < self.carrying {
            let r = out[i] as usize;
            i += 1;
            for &id in &self.on[r] {
                let new = out.len();
                reach(&self.flows[id as usize].route, bidir, topo, &mut seen, out);
                for &r3 in &out[new..] {
                    reached += !self.on[r3 as usize].is_empty() as usize;
                }
                // Every carrying resource reached: the rest of this list adds nothing
                // the answer needs (the component is every live flow).
                if reached == self.carrying {
                    break;
                }
            }
        }
        for &r in out.iter() {
            seen[r as usize] = false;
        }
        self.touched_mark = seen;
        reached < self.carrying
    }

    /// Bring the flows in `work` up to `now` at their old rates.
    pub fn settle(&mut self, now: Time) {
        for &id in &self.work {
            let f = &mut self.flows[id as usize];
            if now > f.last {
                f.remaining -= f.rate * (now - f.last) as f64 / PS_PER_S as f64;
                if f.remaining < 0.0 {
                    f.remaining = 0.0;
                }
            }
            f.last = now;
        }
    }

    /// Set the new rates of the flows in `work` (one rate per entry) and
    /// schedule their finish times; `Err` names a transfer that would finish
    /// after the end of [`Time`].
    pub fn apply(&mut self, now: Time, rates: &[f64]) -> Result<(), Overflow> {
        self.recomputed += self.work.len() as u64;
        for (k, &id) in self.work.iter().enumerate() {
            let f = &mut self.flows[id as usize];
            f.rate = rates[k];
            f.fresh = false;
            if f.rate > 0.0 {
                let dt = (f.remaining * PS_PER_S as f64 / f.rate).round();
                // `dt < 2^64` (false for NaN), then the sum is checked.
                let t = (dt < u64::MAX as f64)
                    .then(|| now.checked_add(dt as u64))
                    .flatten()
                    .ok_or(Overflow(f.xfer))?;
                // Its valid entry already says `t` (a flow whose rate did not change, as a
                // rule): it stays, and the queue holds one entry fewer to skip.
                if f.due == Some(t) {
                    continue;
                }
                f.version = f.version.wrapping_add(1);
                f.due = Some(t);
                self.heap.push(Finish {
                    time: t,
                    xfer: f.xfer,
                    id,
                    version: f.version,
                });
            } else {
                f.version = f.version.wrapping_add(1);
                f.due = None;
            }
        }
        // Superseded finish times stay in the heap until their time; drop them
        // when they outnumber the flows (keeps memory proportional to flows).
        if self.heap.len() > 4 * (self.flows.len() - self.free.len()) + 1024 {
            let flows = &self.flows;
            self.heap
                .retain(|e| flows[e.id as usize].live && flows[e.id as usize].version == e.version);
        }
        self.update_next();
        Ok(())
    }
}

/// Mark every resource of `route` (with `bidir`, and its reverse) in `seen`, and push the
/// ones not marked before onto `out`.
fn reach(route: &[u32], bidir: bool, topo: &Topology, seen: &mut [bool], out: &mut Vec<u32>) {
    for &r in route {
        let back = topo.reverse(r).filter(|_| bidir);
        for r2 in std::iter::once(r).chain(back) {
            if !seen[r2 as usize] {
                seen[r2 as usize] = true;
                out.push(r2);
            }
        }
    }
}

/// Output events of a contention network: (time, order, kind, transfer).
/// kind: 0 = send done, 1 = arrived.
pub(crate) type OutQueue = BinaryHeap<Reverse<(Time, u64, u8, XferId)>>;

pub(crate) fn emit_due(q: &mut OutQueue, now: Time, out: &mut Vec<crate::engine::XferEvent>) {
    use crate::engine::XferEvent;
    while let Some(&Reverse((t, _, kind, x))) = q.peek() {
        if t > now {
            break;
        }
        q.pop();
        out.push(if kind == 0 {
            XferEvent::SendDone(x)
        } else {
            XferEvent::Arrived(x)
        });
    }
}
