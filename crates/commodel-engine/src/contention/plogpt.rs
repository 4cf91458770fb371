//! `plogpt`: Nomura et al.'s PlogPT on a tree network.
//!
//! * **Gap** (eq. 6-7): a send of m bytes must move b(1)·g(m) "bytes" (b(1) the
//!   capacity of the sender's own link); at time t it moves at
//!   b_c(C, t) = min over the links E of its route of b(h)/c(E), c(E) the number
//!   of flows on E *in the same direction* (links are full duplex: the paper's
//!   Fig. 11 example gives b(2)/2 with two flows each way). b_c is recomputed
//!   whenever any flow starts or ends; unused capacity is not handed to
//!   others (this is not max-min). The send finishes when the integral of b_c
//!   reaches b(1)·g(m): f_noRTO = l + g_c(m) (eq. 13).
//! * **Bidirectional parameters** (III-B.1, our reading): a send whose sender
//!   node is also receiving when it starts (after every start at that instant)
//!   uses the bidirectional g(m) table and b(1); a link direction whose
//!   opposite direction carries a flow has the bidirectional b(h) as
//!   capacity. Without bidirectional tables the unidirectional ones serve.
//! * **Arrival** (eq. 15): the receive's data is there at f + L.
//! * **RTO** (eq. 14, with eq. 5, 8, 9): a send O is delayed by T_RTO when
//!   P_B(O) holds (B(O) = d(h(O))·b_c(O, f_noRTO) < m(O)), and another Isend
//!   O' to the same destination *node* enters within eps_T of f_noRTO(O) with
//!   P_S(h(O), h(O')) (natural logarithms; b(h), d(h) bidirectional when
//!   given). Our reading of "enters within eps_T": O' entered at or before
//!   f_noRTO (less than eps_T before), or enters at that very instant because a
//!   send that finishes then releases it. All sends finishing at one instant are
//!   decided together, each as if the others finished without RTO — as the
//!   paper's Alltoall_B analysis does (Fig. 16). Sends entering after
//!   f_noRTO are not looked at (the prediction would depend on the future).
//!   A delayed send finishes at f_noRTO + T_RTO and its data arrives L later;
//!   the event names the message. Without `d` or `eps_S`, no RTO is predicted.
//!   Messages between ranks of one node (height 0) never time out.
//! * **RTO from measured buffers** (`rto_rule: buffer`, not in the paper): P_B
//!   is replaced by an overflow test: the bytes of the sends on the most
//!   congested link direction of O's route at f_noRTO (the flows in flight
//!   there, those finishing with O included, and the Isends entering within
//!   eps_T that cross it) exceed the measured port buffer of that link's
//!   height ([`PlogptNet::overflows`]); the rest of the rule is as above.

use super::{emit_due, Fluid, OutQueue, Scope};
use crate::engine::{Entering, Lookahead, Network, XferEvent, XferId};
use crate::table::Table;
use crate::time::{add, Overflow, Time, PS_PER_S};
use crate::topology::{Levels, Route, Topology};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::VecDeque;

/// RTO parameters (PlogPT III-B.3, eq. 5, 8, 9, 14).
#[derive(Clone, Debug)]
pub struct Rto {
    /// T_RTO, ps.
    pub t_rto: Time,
    /// eps_S (dimensionless).
    pub eps_s: f64,
    /// eps_T, ps.
    pub eps_t: Time,
    /// Port buffer capacity per height h = 1..D (index h - 1), bytes: the overflow test
    /// replacing P_B (`rto_rule: buffer`); None: P_B.
    pub buffer: Option<Vec<u64>>,
}

/// PlogPT parameters besides the topology.
#[allow(non_snake_case)]
#[derive(Clone, Debug)]
pub struct PlogptParams {
    pub L: Time,
    pub g: Table,
    pub g_bidir: Option<Table>,
    pub rto: Option<Rto>,
}

/// The `plogpt` network.
pub struct PlogptNet {
    topo: Topology,
    node: Vec<u32>,
    p: PlogptParams,
    fluid: Fluid,
    /// Per transfer in flight: height of its route, size, nodes.
    info: FxHashMap<XferId, XferInfo>,
    /// Per flow id: whether it is priced bidirectionally.
    bidir: Vec<bool>,
    /// Per destination node: recent Isend entries.
    entries: Vec<VecDeque<Entry>>,
    out: OutQueue,
    seq: u64,
    route: Route,
    scratch: Vec<(u32, XferId, f64)>,
    rates: Vec<f64>,
    ahead: Vec<Entering>,
    levels: Levels,
    /// A flow started at this instant and has no rate yet.
    started_at: Option<Time>,
    /// The buffer rule's load of the instant being decided.
    instant: Option<InstantLoad>,
}

/// Per link direction (resource): the sends that finish at one instant (flows, bytes) and
/// the bytes of those that enter at it, not yet started (the buffer rule).
#[derive(Default)]
struct InstantLoad {
    done: FxHashMap<u32, (usize, u64)>,
    entering: FxHashMap<u32, u64>,
}

/// An Isend that entered toward a node: when, which, its height, source node and size.
#[derive(Clone, Copy)]
struct Entry {
    t: Time,
    xfer: XferId,
    height: u32,
    src_node: u32,
    bytes: u64,
}

#[derive(Clone, Copy, Default)]
struct XferInfo {
    height: u32,
    bytes: u64,
    dst_node: u32,
    src_node: u32,
}

impl PlogptNet {
    pub fn new(topo: Topology, node: Vec<u32>, p: PlogptParams) -> PlogptNet {
        let fluid = Fluid::new(&topo);
        let levels = topo
            .levels_bidir
            .clone()
            .unwrap_or_else(|| topo.levels.clone());
        let n = topo.nodes() as usize;
        PlogptNet {
            topo,
            node,
            p,
            fluid,
            info: FxHashMap::default(),
            bidir: Vec::new(),
            entries: vec![VecDeque::new(); n],
            out: OutQueue::new(),
            seq: 0,
            route: Route::default(),
            scratch: Vec::new(),
            rates: Vec::new(),
            ahead: Vec::new(),
            levels,
            started_at: None,
            instant: None,
        }
    }

    fn push(&mut self, t: Time, kind: u8, x: XferId) {
        self.out.push(Reverse((t, self.seq, kind, x)));
        self.seq += 1;
    }

    fn height(&self, src: u32, dst: u32) -> u32 {
        let (a, b) = (self.node[src as usize], self.node[dst as usize]);
        if a == b {
            return 0;
        }
        // The height of the lowest common switch: walk both up.
        let mut r = Route::default();
        self.topo.route_into(a, b, &mut r);
        r.height
    }

    /// P_S(h, h') of eq. 5.
    pub fn p_s(levels: &Levels, eps_s: f64, h: u32, h2: u32) -> bool {
        if h == 0 || h2 == 0 {
            return false;
        }
        let (i, j) = ((h - 1) as usize, (h2 - 1) as usize);
        if i >= levels.b.len() || j >= levels.b.len() || i >= levels.d.len() || j >= levels.d.len()
        {
            return false;
        }
        let ratio = 2f64.powi(h2 as i32 - h as i32) * levels.b[i] / levels.b[j];
        let lb = ratio.ln();
        let (di, dj) = (levels.d[i], levels.d[j]);
        let ld2 = if di == dj {
            0.0
        } else if di == 0 || dj == 0 {
            f64::INFINITY
        } else {
            (di as f64 / dj as f64).ln().powi(2)
        };
        lb * lb + ld2 > eps_s
    }

    /// Recompute the rates of the flows a change can affect (eq. 7).
    fn recompute(&mut self, now: Time) -> Result<(), Overflow> {
        self.fluid.collect(Scope::Shared, &self.topo);
        self.fluid.settle(now);
        let work = std::mem::take(&mut self.fluid.work);
        // New flows: choose uni- or bidirectional g(m) and set b(1)·g(m).
        for &id in &work {
            let f = &self.fluid.flows[id as usize];
            if !f.fresh {
                continue;
            }
            let x = f.xfer;
            let inf = self.info[&x];
            let receiving = inf.src_node != inf.dst_node
                && !self.fluid.on[self.topo.node_down(inf.src_node) as usize].is_empty();
            let bidir = receiving && (self.p.g_bidir.is_some() || self.topo.levels_bidir.is_some());
            let g = if bidir {
                self.p.g_bidir.as_ref().unwrap_or(&self.p.g).at(inf.bytes)
            } else {
                self.p.g.at(inf.bytes)
            };
            let g = g.ok_or(Overflow(x))?;
            let b1 = self.topo.node_capacity(inf.src_node, bidir);
            if self.bidir.len() <= id as usize {
                self.bidir.resize(id as usize + 1, false);
            }
            self.bidir[id as usize] = bidir;
            self.fluid.flows[id as usize].remaining = b1 * g as f64 / PS_PER_S as f64;
        }
        self.rates.clear();
        for &id in &work {
            let f = &self.fluid.flows[id as usize];
            let mut rate = f64::INFINITY;
            for &r in &f.route {
                let busy_back = self
                    .topo
                    .reverse(r)
                    .is_some_and(|b| !self.fluid.on[b as usize].is_empty());
                let cap = self.topo.capacity(r, busy_back);
                rate = rate.min(cap / self.fluid.on[r as usize].len() as f64);
            }
            self.rates.push(rate);
        }
        self.fluid.work = work;
        let rates = std::mem::take(&mut self.rates);
        let applied = self.fluid.apply(now, &rates);
        self.rates = rates;
        applied
    }

    /// The buffer rule's [`InstantLoad`] at `now`: the `done` flows per resource of their
    /// routes, and the sends entering now (`ahead`) per resource of theirs, except those
    /// already started or entered.
    fn instant_load(
        &self,
        now: Time,
        done: &[(u32, XferId, f64)],
        ahead: &[Entering],
    ) -> InstantLoad {
        let mut load = InstantLoad::default();
        for &(f, x, _) in done {
            let bytes = self.info.get(&x).map_or(0, |i| i.bytes);
            for &r in &self.fluid.flows[f as usize].route {
                let e = load.done.entry(r).or_default();
                e.0 += 1;
                e.1 += bytes;
            }
        }
        let eps_t = self.p.rto.as_ref().map_or(0, |r| r.eps_t);
        if eps_t == 0 {
            return load;
        }
        let mut path = Route::default();
        for &(o, s, d, m) in ahead {
            let (a, b) = (self.node[s as usize], self.node[d as usize]);
            let entered = self.entries[b as usize]
                .iter()
                .any(|e| e.xfer == o && now - e.t < eps_t);
            if a == b || entered || self.info.contains_key(&o) {
                continue;
            }
            self.topo.route_into(a, b, &mut path);
            for &r in &path.resources {
                *load.entering.entry(r).or_default() += m;
            }
        }
        load
    }

    /// The buffer rule: at `now` (f_noRTO of the finishing flow `id` toward `dst_node`), do
    /// the bytes of the sends on the most congested link direction of its route overflow the
    /// buffer of that link's height? Counted: the flows on it (those finishing now too), the
    /// Isends toward `dst_node` that entered less than eps_T ago and have not started, and
    /// those entering now whose routes cross it (`load`). The sender's own NIC is not a
    /// candidate: its queue holds the socket back rather than dropping.
    fn overflows(
        &self,
        id: u32,
        dst_node: u32,
        now: Time,
        load: &InstantLoad,
        buffer: &[u64],
    ) -> bool {
        let Some(eps_t) = self.p.rto.as_ref().map(|r| r.eps_t) else {
            return false;
        };
        let route = &self.fluid.flows[id as usize].route;
        // The most congested direction: least capacity per flow; ties go to the one nearer
        // the receiver (the switch port where the flows queue).
        let mut best: Option<(f64, u32)> = None;
        for &r in route.iter().skip(1) {
            let finishing = load.done.get(&r).map_or(0, |d| d.0);
            let flows = self.fluid.on[r as usize].len() + finishing;
            let busy_back = self
                .topo
                .reverse(r)
                .is_some_and(|b| !self.fluid.on[b as usize].is_empty());
            let share = self.topo.capacity(r, busy_back) / flows.max(1) as f64;
            if best.is_none_or(|(s, _)| share <= s) {
                best = Some((share, r));
            }
        }
        let Some((_, r)) = best else { return false };
        let h = self.topo.resource_height(r);
        let Some(&cap) = buffer.get((h as usize).saturating_sub(1)) else {
            return false;
        };
        let mut bytes: u64 = self.fluid.on[r as usize]
            .iter()
            .map(|&f| {
                let x = self.fluid.flows[f as usize].xfer;
                self.info.get(&x).map_or(0, |i| i.bytes)
            })
            .sum();
        bytes += load.done.get(&r).map_or(0, |d| d.1);
        bytes += load.entering.get(&r).copied().unwrap_or(0);
        for e in &self.entries[dst_node as usize] {
            if now - e.t < eps_t
                && !self.info.contains_key(&e.xfer)
                && e.src_node != dst_node
                && self.topo.route(e.src_node, dst_node).resources.contains(&r)
            {
                bytes += e.bytes;
            }
        }
        bytes > cap
    }

    fn prune(&mut self, node: u32, now: Time) {
        let Some(rto) = &self.p.rto else { return };
        let q = &mut self.entries[node as usize];
        while let Some(e) = q.front() {
            if e.t.saturating_add(rto.eps_t) <= now {
                q.pop_front();
            } else {
                break;
            }
        }
    }
}

impl Network for PlogptNet {
    fn name(&self) -> &'static str {
        "plogpt"
    }
    fn control_latency(&self, _src: u32, _dst: u32) -> Time {
        self.p.L
    }
    fn late(&self) -> bool {
        true
    }
    fn send_entered(&mut self, now: Time, xfer: XferId, src: u32, dst: u32, bytes: u64) {
        if self.p.rto.is_none() {
            return;
        }
        let height = self.height(src, dst);
        let node = self.node[dst as usize];
        self.prune(node, now);
        self.entries[node as usize].push_back(Entry {
            t: now,
            xfer,
            height,
            src_node: self.node[src as usize],
            bytes,
        });
    }
    fn start(
        &mut self,
        now: Time,
        xfer: XferId,
        src: u32,
        dst: u32,
        bytes: u64,
        _size: u64,
    ) -> Result<(), Overflow> {
        let (a, b) = (self.node[src as usize], self.node[dst as usize]);
        let mut route = std::mem::take(&mut self.route);
        self.topo.route_into(a, b, &mut route);
        self.info.insert(
            xfer,
            XferInfo {
                height: route.height,
                bytes,
                dst_node: b,
                src_node: a,
            },
        );
        // The work is set when the flow first gets a rate (recompute).
        self.fluid.add(now, xfer, &route.resources, 0.0, 1.0);
        self.route = route;
        self.started_at = Some(now);
        Ok(())
    }
    fn next_time(&self) -> Option<Time> {
        let mut t = self.out.peek().map(|Reverse((t, _, _, _))| *t);
        if let Some(f) = self.fluid.next_time() {
            t = Some(t.map_or(f, |x| x.min(f)));
        }
        if let Some(s) = self.started_at {
            // Flows started at this instant wait for their rates.
            t = Some(t.map_or(s, |x| x.min(s)));
        }
        t
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
        let mut done = std::mem::take(&mut self.scratch);
        done.clear();
        self.fluid.pop_finished(now, &mut done);
        self.started_at = None;
        if self.fluid.dirty() {
            self.recompute(now)?;
        }
        if !done.is_empty() {
            // Sends that the completions at this instant let enter now.
            let mut ahead = std::mem::take(&mut self.ahead);
            ahead.clear();
            if self.p.rto.is_some() {
                for &(_, x, _) in &done {
                    lookahead(x, &mut ahead);
                }
            }
            if self.p.rto.as_ref().is_some_and(|r| r.buffer.is_some()) {
                self.instant = Some(self.instant_load(now, &done, &ahead));
            }
            for &(id, x, rate) in &done {
                let inf = self.info[&x];
                let mut delayed = false;
                if let Some(rto) = self.p.rto.clone() {
                    let h = inf.height;
                    let d_h = if h >= 1 {
                        self.levels.d.get((h - 1) as usize).copied()
                    } else {
                        None
                    };
                    // P_B (eq. 8-9): B(O) = d(h(O)) b_c(O, t_f) < m(O); under the buffer
                    // rule the overflow test comes after the cheaper trigger below.
                    let full = match &rto.buffer {
                        None => d_h.is_some_and(|d| {
                            (d as f64) * rate / (PS_PER_S as f64) < inf.bytes as f64
                        }),
                        Some(_) => h >= 1,
                    };
                    if full {
                        self.prune(inf.dst_node, now);
                        let levels = &self.levels;
                        let eps_s = rto.eps_s;
                        let q = &self.entries[inf.dst_node as usize];
                        let past = q.iter().any(|e| {
                            e.xfer != x
                                && now - e.t < rto.eps_t
                                && Self::p_s(levels, eps_s, h, e.height)
                        });
                        let soon = rto.eps_t > 0
                            && ahead.iter().any(|&(o, s, d, _)| {
                                o != x
                                    && self.node[d as usize] == inf.dst_node
                                    && Self::p_s(levels, eps_s, h, self.height(s, d))
                            });
                        delayed = past || soon;
                        if let (true, Some(buffer)) = (delayed, &rto.buffer) {
                            let load = self.instant.as_ref().expect("set with the buffer rule");
                            delayed = self.overflows(id, inf.dst_node, now, load, buffer);
                        }
                    }
                    if delayed {
                        let t_rto = rto.t_rto;
                        out.push(XferEvent::Rto {
                            xfer: x,
                            at: now,
                            delay: t_rto,
                        });
                        let sent = add(now, t_rto, x)?;
                        self.push(sent, 0, x);
                        self.push(add(sent, self.p.L, x)?, 1, x);
                    }
                }
                if !delayed {
                    self.push(now, 0, x);
                    self.push(add(now, self.p.L, x)?, 1, x);
                }
            }
            for &(_, x, _) in &done {
                self.info.remove(&x);
            }
            self.instant = None;
            self.ahead = ahead;
        }
        self.scratch = done;
        emit_due(&mut self.out, now, out);
        Ok(())
    }
}
