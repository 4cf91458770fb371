//! Tail drops of open-loop bursts: `tcpflow`'s retransmission timeouts from
//! the switches' port buffers (`tcp.rto_rule: buffer`, `network.buffer`).
//!
//! A message of at most `fifo_limit` bytes goes into its sender's NIC queue
//! whole when it is posted, and TCP sends its first window without waiting
//! for acknowledgements: the NIC puts w = min(m, [`INITIAL_WINDOW`]) bytes on
//! the wire at its full rate b_a, after the windows of the messages its node
//! posted before it (injection from max(post, the end of the previous one)
//! for w / b_a); the rest follows as acknowledgements return, at the rate the
//! network delivers, and queues nowhere here. So what reaches a switch port
//! is not the fluid share the flows are delivered at: the port gets the bytes
//! as the senders inject them. Each port — a link direction other than a
//! sender's own up link — is a drop-tail fluid queue:
//!
//! * it fills at its arrival rate A, the injections crossing it at b_a each,
//!   summed per upstream link (the resource before it on each route) and
//!   capped there at that link's capacity, and drains at its capacity c;
//! * it holds B(h) bytes: `network.buffer` of its height, a capacity in
//!   Ethernet frames of 1514 bytes that carry 1448 bytes of TCP payload
//!   ([`PAYLOAD_PER_FRAME_BYTE`]), so B(h) · 1448 / 1514 message bytes;
//!   what arrives while it is full and A > c is dropped.
//!
//! A message whose injection ends while a port on its route is full and still
//! overflowing has lost its last packets: nothing after them tells its
//! receiver, and its sender waits for a retransmission timeout (the tail loss
//! of PlogPT III-B.3), counted from the last acknowledgement, which comes when
//! the rest of the message is through: its data arrives at its fluid finish +
//! T_RTO + L (PlogPT's f_noRTO + T_RTO), with an RTO event naming it; its
//! sender is not delayed (the data was handed over). Losses before the tail
//! are recovered by fast retransmit and cost nothing here. A message
//! delivered by the fluid model before its injection ends (a small one that
//! got capacity its node's older messages could not use) is judged by its
//! ports at delivery.
//!
//! The queues follow the injections only: they are exact for piecewise
//! constant arrivals between the injections' starts and ends, processed in
//! time order when a flow is delivered (every injection that starts before
//! that instant is known by then).

use crate::engine::XferId;
use crate::time::{Time, PS_PER_S};
use crate::topology::Topology;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// TCP payload per byte of an Ethernet frame at MTU 1500 with TCP timestamps: 1448 of 1514.
/// Port buffers hold frames; the queues count message bytes.
pub const PAYLOAD_PER_FRAME_BYTE: f64 = 1448.0 / 1514.0;

/// The bytes TCP sends before its first acknowledgement: Linux's initial congestion window,
/// 10 segments of 1448 bytes (RFC 6928).
pub const INITIAL_WINDOW: u64 = 10 * 1448;

/// The rule's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BurstParams {
    /// T_RTO, ps.
    pub t_rto: Time,
    /// Port buffer per height h = 1..D (index h - 1), bytes of frames.
    pub buffer: Vec<u64>,
}

/// One message's injection: from `start` to `end` at `rate` over `hops`
/// (port, the resource before it on the route).
#[derive(Clone, Debug, Default)]
struct Injection {
    end: Time,
    rate: f64,
    hops: Vec<(u32, u32)>,
    /// Its last packets were dropped.
    lossy: bool,
    /// Its end was processed (its rate is off the ports).
    ended: bool,
    /// The fluid model delivered it.
    delivered: bool,
}

/// A port's queue (message bytes) at `last`, and what flows into it.
#[derive(Clone, Debug, Default)]
struct Port {
    queue: f64,
    last: Time,
    /// Per upstream resource: injections crossing it into this port, and their summed rate.
    inflow: Vec<(u32, u32, f64)>,
    /// A: the inflows, each capped at its upstream capacity (bytes/s).
    arrival: f64,
}

/// The queues of every port and the injections in progress.
pub struct Bursts {
    p: BurstParams,
    /// Per node: when its NIC has injected every small message posted so far.
    nic_free: Vec<Time>,
    injections: Vec<Injection>,
    free: Vec<u32>,
    by_xfer: FxHashMap<XferId, u32>,
    /// Injection starts and ends: (time, 0 = end / 1 = start, sequence, injection).
    bounds: BinaryHeap<Reverse<(Time, u8, u64, u32)>>,
    /// Scratch: the bounds of one instant (kind, injection).
    batch: Vec<(u8, u32)>,
    seq: u64,
    ports: Vec<Port>,
    /// Per resource: its buffer in message bytes.
    capacity_bytes: Vec<f64>,
}

impl Bursts {
    /// `p.buffer` has one value per height of `topo` (checked by the caller).
    pub fn new(p: BurstParams, topo: &Topology) -> Bursts {
        let n = topo.num_resources();
        let capacity_bytes = (0..n as u32)
            .map(|r| {
                let h = topo.resource_height(r) as usize;
                p.buffer
                    .get(h.wrapping_sub(1))
                    .map_or(f64::INFINITY, |&b| b as f64 * PAYLOAD_PER_FRAME_BYTE)
            })
            .collect();
        Bursts {
            p,
            nic_free: vec![0; topo.nodes() as usize],
            injections: Vec::new(),
            free: Vec::new(),
            by_xfer: FxHashMap::default(),
            bounds: BinaryHeap::new(),
            batch: Vec::new(),
            seq: 0,
            ports: vec![Port::default(); n],
            capacity_bytes,
        }
    }

    /// A message of `bytes` from node `a`, sent whole (open loop) over `route`
    /// (its resources from `a`'s up link on), is posted at `now`.
    pub fn post(
        &mut self,
        now: Time,
        xfer: XferId,
        a: u32,
        route: &[u32],
        bytes: u64,
        topo: &Topology,
    ) {
        if route.len() < 2 {
            return; // within a node: no port
        }
        let rate = topo.node_capacity(a, false);
        let start = now.max(self.nic_free[a as usize]);
        let window = bytes.min(INITIAL_WINDOW);
        // `as` saturates: a wire time beyond 2^64 ps ends at Time::MAX
        let wire = (window as f64 * PS_PER_S as f64 / rate).round() as Time;
        let end = start.saturating_add(wire);
        self.nic_free[a as usize] = end;
        let id = self.free.pop().unwrap_or_else(|| {
            self.injections.push(Injection::default());
            (self.injections.len() - 1) as u32
        });
        let inj = &mut self.injections[id as usize];
        inj.end = end;
        inj.rate = rate;
        inj.hops.clear();
        inj.hops.extend(route.windows(2).map(|w| (w[1], w[0])));
        inj.lossy = false;
        inj.ended = false;
        inj.delivered = false;
        self.by_xfer.insert(xfer, id);
        for (t, kind) in [(start, 1), (end, 0)] {
            self.bounds.push(Reverse((t, kind, self.seq, id)));
            self.seq += 1;
        }
    }

    /// The message of `xfer` is delivered by the fluid model at `now`: the
    /// time its data is held until (past `now`) when its tail was dropped.
    /// Forgets it; None for a message that was not posted here.
    pub fn delivered(&mut self, now: Time, xfer: XferId, topo: &Topology) -> Option<Time> {
        self.settle(now, topo);
        let id = self.by_xfer.remove(&xfer)?;
        if !self.injections[id as usize].ended {
            // still injecting in this model: judged by its ports now
            self.judge(id, now, topo);
            self.injections[id as usize].delivered = true;
        }
        let inj = &self.injections[id as usize];
        let until = inj.lossy.then(|| now.saturating_add(self.p.t_rto));
        if inj.ended {
            self.free.push(id);
        }
        until
    }

    /// Process the injections' starts and ends up to `now`, in time order. The
    /// injections ending at one instant are judged together, by the ports as they
    /// are before any of them ends or any other starts then.
    fn settle(&mut self, now: Time, topo: &Topology) {
        while let Some(&Reverse((t, _, _, _))) = self.bounds.peek() {
            if t > now {
                break;
            }
            let mut batch = std::mem::take(&mut self.batch);
            while let Some(&Reverse((u, kind, _, id))) = self.bounds.peek() {
                if u != t {
                    break;
                }
                self.bounds.pop();
                batch.push((kind, id));
            }
            for &(kind, id) in &batch {
                if kind == 0 && !self.injections[id as usize].delivered {
                    self.judge(id, t, topo);
                }
            }
            for &(kind, id) in &batch {
                let hops = std::mem::take(&mut self.injections[id as usize].hops);
                let (count, rate) = match kind {
                    0 => (-1, -self.injections[id as usize].rate),
                    _ => (1, self.injections[id as usize].rate),
                };
                for &(r, up) in &hops {
                    self.integrate(r, t, topo);
                    self.change(r, up, count, rate, topo);
                }
                let inj = &mut self.injections[id as usize];
                inj.hops = hops;
                if kind == 0 {
                    inj.ended = true;
                    if inj.delivered {
                        self.free.push(id);
                    }
                }
            }
            batch.clear();
            self.batch = batch;
        }
    }

    /// Injection `id` loses its tail if a port on its route is full and overflowing at `t`.
    fn judge(&mut self, id: u32, t: Time, topo: &Topology) {
        let hops = std::mem::take(&mut self.injections[id as usize].hops);
        let lossy = hops.iter().any(|&(r, _)| {
            self.integrate(r, t, topo);
            self.full(r, topo)
        });
        let inj = &mut self.injections[id as usize];
        inj.hops = hops;
        inj.lossy |= lossy;
    }

    /// Bring port `r`'s queue to `t` at its present arrival rate.
    fn integrate(&mut self, r: u32, t: Time, topo: &Topology) {
        let cap = self.capacity_bytes[r as usize];
        let port = &mut self.ports[r as usize];
        if t > port.last {
            if port.arrival > 0.0 || port.queue > 0.0 {
                let dt = (t - port.last) as f64 / PS_PER_S as f64;
                let c = topo.capacity(r, false);
                port.queue = (port.queue + (port.arrival - c) * dt).clamp(0.0, cap);
            }
            port.last = t;
        }
    }

    /// Is port `r` full and still receiving more than it sends?
    fn full(&self, r: u32, topo: &Topology) -> bool {
        let port = &self.ports[r as usize];
        let cap = self.capacity_bytes[r as usize];
        port.arrival > topo.capacity(r, false) && port.queue >= cap * (1.0 - 1e-9)
    }

    /// An injection of `rate` into port `r` from upstream resource `up` starts (+1) or ends (-1).
    fn change(&mut self, r: u32, up: u32, count: i32, rate: f64, topo: &Topology) {
        let port = &mut self.ports[r as usize];
        match port.inflow.iter().position(|&(u, _, _)| u == up) {
            Some(k) => {
                let e = &mut port.inflow[k];
                e.1 = (e.1 as i32 + count) as u32;
                e.2 += rate;
                if e.1 == 0 {
                    port.inflow.swap_remove(k);
                }
            }
            None => port.inflow.push((up, count as u32, rate)),
        }
        port.arrival = port
            .inflow
            .iter()
            .map(|&(u, _, sum)| sum.min(topo.capacity(u, false)))
            .sum();
    }
}
