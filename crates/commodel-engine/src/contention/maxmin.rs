//! `maxmin`: weighted max-min sharing by progressive filling.
//!
//! The sharing of SimGrid's CM02 network model with latency and bandwidth
//! factors of 1 and no cross-traffic (our own implementation of the
//! published semantics):
//!
//! * a message first pays its route's latency (the sum of its links'
//!   latencies), consuming no bandwidth; then its bytes flow;
//! * flows get rates by progressive filling: every unfixed flow f grows at
//!   rate λ / w_f; when a link direction fills up, its flows are fixed; repeat.
//!   The weight w_f is the flow's penalty, its route latency in ps (TCP's
//!   round-trip-time unfairness; weight_S = 0), or 1 for every flow with
//!   `rtt_weights: false` (plain max-min). A zero-latency route has weight 1 ps.
//! * the send finishes and the data arrives when the last byte is through.
//!
//! The allocation is recomputed whenever a flow starts or ends, for the
//! connected component of the links it touches (see [`super`]).

use super::{Fluid, Scope};
use crate::engine::{Network, XferEvent, XferId};
use crate::radix::{Keyed, RadixQueue};
use crate::time::{add, Overflow, Time};
use crate::topology::{Route, Topology};

/// Weighted max-min allocation of `flows` (route, weight) on resources with
/// capacities `cap(resource)`; `rates` gets one rate per flow. Scratch
/// vectors are reused across calls (`local` must hold `u32::MAX` for every
/// resource and is restored).
pub struct Filler {
    local: Vec<u32>,
    res: Vec<u32>,
    left: Vec<f64>,
    wsum: Vec<f64>,
    unfixed: Vec<u32>,
    on: Vec<Vec<u32>>,
    fixed: Vec<bool>,
    /// Scratch: each flow's weight, and its route as local resource indices.
    weights: Vec<f64>,
    routes: Vec<u32>,
    route_start: Vec<u32>,
}

impl Filler {
    pub fn new(resources: usize) -> Filler {
        Filler {
            local: vec![u32::MAX; resources],
            res: Vec::new(),
            left: Vec::new(),
            wsum: Vec::new(),
            unfixed: Vec::new(),
            on: Vec::new(),
            fixed: Vec::new(),
            weights: Vec::new(),
            routes: Vec::new(),
            route_start: Vec::new(),
        }
    }

    pub fn allocate<'a>(
        &mut self,
        flows: impl Iterator<Item = (&'a [u32], f64)>,
        cap: impl Fn(u32) -> f64,
        rates: &mut Vec<f64>,
    ) {
        rates.clear();
        for v in &mut self.on[..self.res.len()] {
            v.clear();
        }
        self.res.clear();
        self.left.clear();
        self.wsum.clear();
        self.unfixed.clear();
        let mut weights = std::mem::take(&mut self.weights);
        weights.clear();
        // Each flow's route as local resource indices: flow i's are
        // routes[route_start[i]..route_start[i + 1]].
        let mut routes = std::mem::take(&mut self.routes);
        routes.clear();
        let mut route_start = std::mem::take(&mut self.route_start);
        route_start.clear();
        route_start.push(0);
        for (i, (route, w)) in flows.enumerate() {
            rates.push(f64::INFINITY);
            weights.push(w);
            for &r in route {
                let mut j = self.local[r as usize];
                if j == u32::MAX {
                    j = self.res.len() as u32;
                    self.local[r as usize] = j;
                    self.res.push(r);
                    self.left.push(cap(r));
                    self.wsum.push(0.0);
                    self.unfixed.push(0);
                    if self.on.len() < self.res.len() {
                        self.on.push(Vec::new());
                    }
                }
                routes.push(j);
                let j = j as usize;
                self.wsum[j] += 1.0 / w;
                self.unfixed[j] += 1;
                self.on[j].push(i as u32);
            }
            route_start.push(routes.len() as u32);
        }
        self.fixed.clear();
        self.fixed.resize(rates.len(), false);
        loop {
            let mut lam = f64::INFINITY;
            for j in 0..self.res.len() {
                if self.unfixed[j] > 0 {
                    lam = lam.min(self.left[j].max(0.0) / self.wsum[j]);
                }
            }
            if !lam.is_finite() {
                break;
            }
            let limit = lam * (1.0 + 1e-12);
            for j in 0..self.res.len() {
                if self.unfixed[j] == 0 || self.left[j].max(0.0) / self.wsum[j] > limit {
                    continue;
                }
                for k in 0..self.on[j].len() {
                    let i = self.on[j][k] as usize;
                    if self.fixed[i] {
                        continue;
                    }
                    self.fixed[i] = true;
                    let rate = lam / weights[i];
                    rates[i] = rate;
                    for &q in &routes[route_start[i] as usize..route_start[i + 1] as usize] {
                        let q = q as usize;
                        self.left[q] -= rate;
                        self.wsum[q] -= 1.0 / weights[i];
                        self.unfixed[q] -= 1;
                    }
                }
            }
        }
        for &r in &self.res {
            self.local[r as usize] = u32::MAX;
        }
        self.weights = weights;
        self.routes = routes;
        self.route_start = route_start;
    }
}

/// A transfer in its latency phase, joining the flows at `time`.
struct Joining {
    time: Time,
    xfer: XferId,
    bytes: u64,
    /// Source and destination nodes.
    a: u32,
    b: u32,
}

impl Keyed for Joining {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time, self.xfer as u64)
    }
}

/// The `maxmin` network.
pub struct MaxminNet {
    topo: Topology,
    node: Vec<u32>,
    rtt_weights: bool,
    /// Zhu's Algorithm 1 instead of max-min (Some(asymmetric)).
    zhu: Option<bool>,
    fluid: Fluid,
    filler: Filler,
    /// Transfers in their latency phase, by (join time, transfer).
    joining: RadixQueue<Joining>,
    /// The earliest join time in `joining`.
    next_join: Option<Time>,
    route: Route,
    scratch: Vec<(u32, XferId, f64)>,
    rates: Vec<f64>,
    /// Scratch of Zhu's Algorithm 1.
    given: super::zhu::Given,
    started_at: Option<Time>,
}

impl MaxminNet {
    pub fn new(topo: Topology, node: Vec<u32>, rtt_weights: bool) -> MaxminNet {
        let fluid = Fluid::new(&topo);
        let filler = Filler::new(topo.num_resources());
        MaxminNet {
            topo,
            node,
            rtt_weights,
            zhu: None,
            fluid,
            filler,
            joining: RadixQueue::new(),
            next_join: None,
            route: Route::default(),
            scratch: Vec::new(),
            rates: Vec::new(),
            given: Vec::new(),
            started_at: None,
        }
    }

    /// The same fluid network shared by Zhu et al.'s Algorithm 1 (model `zhu`,
    /// or `zhu-fair` without the asymmetric property); see [`super::zhu`].
    pub fn zhu(topo: Topology, node: Vec<u32>, asymmetric: bool) -> MaxminNet {
        let mut net = MaxminNet::new(topo, node, false);
        net.zhu = Some(asymmetric);
        net
    }

    /// Rate recomputations done so far (flows), for benchmarks.
    pub fn recomputed(&self) -> u64 {
        self.fluid.recomputed
    }

    fn join(&mut self, now: Time, xfer: XferId, bytes: u64, a: u32, b: u32) {
        let mut route = std::mem::take(&mut self.route);
        self.topo.route_into(a, b, &mut route);
        let w = if self.rtt_weights {
            route.latency.max(1) as f64
        } else {
            1.0
        };
        self.fluid.add(now, xfer, &route.resources, bytes as f64, w);
        self.route = route;
        self.started_at = Some(now);
    }

    fn recompute(&mut self, now: Time) -> Result<(), Overflow> {
        if let Some(asymmetric) = self.zhu {
            self.fluid.collect(Scope::ComponentBidir, &self.topo);
            self.fluid.settle(now);
            let (fluid, topo) = (&self.fluid, &self.topo);
            super::zhu::allocate(fluid, topo, asymmetric, &mut self.given, &mut self.rates);
        } else {
            self.fluid.collect(Scope::Component, &self.topo);
            self.fluid.settle(now);
            let flows = &self.fluid.flows;
            let topo = &self.topo;
            let items = self.fluid.work.iter().map(|&id| {
                let f = &flows[id as usize];
                (f.route.as_slice(), f.weight)
            });
            self.filler
                .allocate(items, |r| topo.capacity(r, false), &mut self.rates);
        }
        let rates = std::mem::take(&mut self.rates);
        let applied = self.fluid.apply(now, &rates);
        self.rates = rates;
        applied
    }
}

impl Network for MaxminNet {
    fn name(&self) -> &'static str {
        if let Some(asymmetric) = self.zhu {
            return if asymmetric { "zhu" } else { "zhu-fair" };
        }
        if self.rtt_weights {
            "maxmin"
        } else {
            "maxmin-plain"
        }
    }
    fn control_latency(&self, src: u32, dst: u32) -> Time {
        let (a, b) = (self.node[src as usize], self.node[dst as usize]);
        self.topo.latency(a, b)
    }
    fn late(&self) -> bool {
        true
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
        let lat = self.topo.latency(a, b);
        if lat == 0 {
            self.join(now, xfer, bytes, a, b);
        } else {
            let time = add(now, lat, xfer)?;
            self.joining.push(Joining {
                time,
                xfer,
                bytes,
                a,
                b,
            });
            self.next_join = Some(self.next_join.map_or(time, |n| n.min(time)));
        }
        Ok(())
    }
    fn next_time(&self) -> Option<Time> {
        [self.fluid.next_time(), self.next_join, self.started_at]
            .into_iter()
            .flatten()
            .min()
    }
    fn advance(&mut self, now: Time, out: &mut Vec<XferEvent>) -> Result<(), Overflow> {
        self.started_at = None;
        while self.joining.peek().is_some_and(|j| j.time <= now) {
            let j = self.joining.pop().expect("peeked");
            self.join(now, j.xfer, j.bytes, j.a, j.b);
        }
        self.next_join = self.joining.peek().map(|j| j.time);
        self.started_at = None;
        let mut done = std::mem::take(&mut self.scratch);
        done.clear();
        self.fluid.pop_finished(now, &mut done);
        // Each finished transfer's send is done and its data arrived, now.
        for &(_, x, _) in &done {
            out.push(XferEvent::SendDone(x));
            out.push(XferEvent::Arrived(x));
        }
        self.scratch = done;
        if self.fluid.dirty() {
            self.recompute(now)?;
        }
        Ok(())
    }
}
