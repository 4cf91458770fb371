//! `tcpflow`: PLogP's per-message costs on a max-min shared tree, with TCP's
//! measured efficiency when traffic runs both ways.
//!
//! A calibrated model of our own (not a paper's), made of what `calibrate`
//! measures on the user's cluster:
//!
//! * **Per message, as PLogP.** A send of m bytes from node a to another
//!   node is a flow of work max(b_a·g(m), m) "bytes" (b_a the capacity of a's
//!   own link, g(m) PLogP's gap); alone it takes max(g(m), m/b_a). Its data
//!   is at the receiver L later (PLogP's latency). So with one flow in the
//!   network the model equals `plogp`, g(m) + L, wherever g(m) >= m/b_a, as
//!   on a link that serializes. Where PLogP's pair is given (`pair`, the two
//!   nodes g(m) was measured between, b_p the narrowest link of their route),
//!   g(m)'s wire part m/b_p is taken at the sender's rate: the work is
//!   b_a·g_a(m), g_a(m) = g(m) - m/b_p + m/b_a (the same where b_p = b_a).
//!   Without it a backbone narrower than the NICs between the pair charged
//!   g(m)'s wire time at b_a/b_p of its bytes on every route. A token-bucket shaper lets an idle port's
//!   burst through at once, so its measured g(m) of a few KiB can be below
//!   m/b_a (0 up to 2 KiB on two-rack-16); a gap below the wire time
//!   would let many such messages into one port faster than its rate.
//!   With token buckets (`bucket`: B bytes at a node's link, and at a link
//!   of capacity c the same time's worth, B_c = B·max(1, c / b_min), b_min
//!   the slowest node link's capacity), the tokens T of its route when it is
//!   posted (the fewest of its links') go through at once: its work is
//!   max(b_a·g(m), m - min(T, m)) (b_a·g(m) or the pair's form above), so a
//!   lone message that fits is charged g(m), as PLogP measured it. A link's tokens are max(0, B_c - V), V what
//!   was posted into it and its rate c has not drained, V(t) = max(0, V -
//!   c·dt) plus every message posted into it: a stream of messages runs at c
//!   once its first B_c bytes are through.
//! * **Bytes on the wire** (`overhead` h and `ack` a, bytes, from the
//!   platform, which `fit` writes from the interfaces' counts of a `wire`
//!   campaign). A message puts m + h bytes into the links of its route (its
//!   frames' headers beyond what the fitted capacity holds: h matters for
//!   one-segment messages, whose headers are a larger share), so
//!   its work's floor is m + h less its tokens; and its acknowledgements put a
//!   bytes into the reverse direction of its route, which take tokens there
//!   (they go into the V of those links; a stream both ways empties its buckets
//!   sooner). In a ring of lone 1 KiB messages on the emulated two-rack-8 each
//!   host's interface sent 1145 bytes a message (its `tx_bytes`), where m
//!   counts 1024: 1112 in one frame and half a 66 B acknowledgement
//!   (docs/models.md, *Bytes on the wire*).
//! * **Sharing, as max-min.** Flows get rates by progressive filling on the
//!   link directions of their routes (every flow weight 1; TCP flows of one
//!   LAN have similar round-trip times), recomputed whenever a flow starts or
//!   ends.
//! * **TCP both ways, measured.** With e a flow a -> b's efficiency at its
//!   message size m:
//!   - e_x(m) (`exchange`) while the reverse flow b -> a is in flight (the
//!     two directions of one pair of hosts): the flow runs at e_x·(its
//!     max-min share);
//!   - otherwise e = 1 - (1 - e_d(m))·u (`duplex`), u the utilisation (max-min
//!     rate over capacity, at most 1) of the busier end of the flow's reverse
//!     path, a's down link or b's up link: e_d(m) when a receives, or b sends,
//!     at its full link rate, 1 for one-way traffic. This loss is a delay,
//!     not a rate: the flow keeps its max-min share, and each byte it moves
//!     adds (1/e - 1)/r_1 to its arrival (r_1 the rate it has alone, the
//!     narrowest link of its route). A message alone, as `measure efficiency`
//!     times it, arrives at its one-way time / e_d; k messages of one flow
//!     posted at once arrive at k one-way times + one message's delay (the
//!     stream rounds of study/tcpflow-history.md, *Why the duplex loss is a delay*).
//!
//!   - **fan-in** (`fanin`, optional): a flow into a node that k >= 2 other
//!     nodes send to (flows not waiting in their sender's FIFO) gets
//!     f = 1 - (1 - e_f(m))·(min(k, K) - 1)/(K - 1). For f <= 1 it adds 1/f - 1
//!     to its delay as above, on top of e_x or e_d: the stalls of TCP windows
//!     overfilling the receiver's port. For f > 1 (e_f up to [`FANIN_MAX`]) it
//!     takes the pair losses back: an exchanging flow runs at min(1, e_x·f) of
//!     its share, a duplex one accrues max(0, 1/(e·f) - 1). e_f(m) is fitted from
//!     all-to-all rounds of K + 1 nodes (K senders into each; docs/models.md,
//!     *Fan-in*).
//!
//!   e is re-evaluated at every change, so a flow speeds up (or stops
//!   accruing delay) when its reverse flow ends or its reverse path empties.
//!   Capacity an exchange leaves unused through e_x < 1 is not handed to
//!   others (TCP loses it to queueing and recovery). Without an efficiency
//!   table e = 1 throughout. The tables are interpolated linearly in m
//!   between measured sizes and held constant above the largest. Below the
//!   smallest, a message of one segment ([`ONE_SEGMENT`] bytes or less)
//!   loses nothing (no acknowledgement or clear-to-send of the other
//!   direction can hold it back), and between one segment and the smallest
//!   measured size e is interpolated from 1; a table measured at one
//!   segment or below is taken as it is.
//! * **Small messages leave a NIC in posting order.** A message of at most
//!   `fifo_limit` bytes goes into its NIC's queue whole when it is posted, so
//!   one node's small messages go out one behind the other: the oldest gets
//!   the capacity it can use (its max-min rate), the next one what is left of
//!   the capacity along its route, and so on (strict priority in posting
//!   order, work-conserving: a message held back downstream does not idle the
//!   NIC). A message that gets no capacity waits and does not count as
//!   traffic. Larger messages share the NIC with the oldest small one.
//!   Without `fifo_limit` every flow shares.
//! * Messages within a node have e = 1 and use the loopback resource.
//! * **Tail drops at full ports** (`tcp.rto_rule: buffer`, with `network.buffer`):
//!   the messages of at most `fifo_limit` bytes are injected open-loop, and a
//!   port that their injections overflow drops the tails of the messages that
//!   end while it is full; those arrive T_RTO late ([`super::burst`]).
//!
//! * **Timeouts of fan-in** (`timeouts`, rules (K, F, M), optional): while K or more
//!   nodes have messages of at least M bytes in flight to one node at once (posted,
//!   whether or not they wait behind older ones in their NIC's queue), a message among
//!   them whose sender has such messages in flight to F or more nodes (F = 1: any)
//!   joins that node's *episode* (it lasts while any message that joined it is in
//!   flight): the port toward the node overflows for longer than TCP's fast
//!   retransmit can repair, and one of these messages waits for a retransmission
//!   timeout. The first of the episode's messages to be delivered is the one: its
//!   sender stops for T_RTO from the instant it joined the episode (t_j), and the
//!   rest of the flows take over its share, so its data arrives at max(its fluid
//!   finish, t_j + T_RTO + m / b), b its receiver's link rate; an RTO event names
//!   it (its delay may be 0 where the others kept the port busy all along). The rules are measured: `measure ports`'
//!   bursts into one node (K = n - 1, F = 1) and all-to-all bursts (K = F = n - 1),
//!   M the size from which on they timed out in most rounds (docs/models.md,
//!   *Timeouts of fan-in*).
//!
//! * **Timeouts at ports between switches** (`port_timeouts`, optional): a message of at
//!   least M bytes that, while it flows, shares a link direction between two switches (a
//!   rack's uplink or downlink, a tree's inner link; never a node's own link) with another
//!   such message (posted and not yet delivered) draws, the first time it does, whether it
//!   loses its tail there: yes with probability q(m), from a SplitMix64 hash of the run's
//!   noise seed and the message's posting order, so a seed gives the same run every time.
//!   A message that lost its tail arrives T_RTO after its fluid finish (nothing behind the
//!   tail tells the receiver; the sender's retransmission timer recovers it), with an RTO
//!   event. q(m) is a table at `sizes` (M the smallest; linear between them, the last value
//!   above). Consecutive steps of a pairwise exchange overlap on these ports. `fit` finds q
//!   at each size from `measure chain`'s exchange: the q with which this model predicts the
//!   timeouts its rounds counted (docs/models.md, *Timeouts at ports between switches*).
//!
//! Rendezvous control messages (sizes above S) cost L each.

use super::burst::{BurstParams, Bursts};
use super::fifo::{Cursor, SenderQueues, Step, NO_KEY};
use super::maxmin::Filler;
use super::{emit_due, Fluid, OutQueue};
use crate::engine::{Network, XferEvent, XferId};
use crate::jitter::{mix64, GOLDEN};
use crate::table::Table;
use crate::time::{add, Overflow, Time, PS_PER_S};
use crate::topology::{Route, Topology};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The TCP payload of one segment at MTU 1500 with timestamps, bytes: a message
/// of at most this size loses nothing both ways (see the module).
pub const ONE_SEGMENT: u64 = 1448;

/// Efficiency tables e_x(m), e_d(m) at `sizes` (each value in (0, 1]), and optionally
/// e_f(m) of fan-in.
#[derive(Clone, Debug, PartialEq)]
pub struct Efficiency {
    pub sizes: Vec<u64>,
    pub exchange: Vec<f64>,
    pub duplex: Vec<f64>,
    pub fanin: Option<FanIn>,
}

/// e_f(m) at `sizes`: the efficiency of a flow into a node that `peers` nodes send to at
/// once (measured in all-to-all rounds, every node sending to all `peers` others). With k
/// senders into the flow's node, e = 1 - (1 - e_f(m))·(min(k, peers) - 1)/(peers - 1).
#[derive(Clone, Debug, PartialEq)]
pub struct FanIn {
    pub peers: u64,
    pub sizes: Vec<u64>,
    pub e: Vec<f64>,
}

/// The largest e_f(m) a fan-in table may hold. Above 1, e_f takes back part of the
/// duplex or exchange delay from flows into a node with k >= 2 senders (the lag never
/// goes below 0): where measured all-to-all rounds run faster than those delays say.
pub const FANIN_MAX: f64 = 8.0;

impl FanIn {
    /// The efficiency of a flow into a node with `k` senders, `e_f` its e_f(m)
    /// (`interpolate(&self.sizes, &self.e, m)`, looked up once per flow).
    fn at(&self, k: u32, e_f: f64) -> f64 {
        if k < 2 || self.peers < 2 {
            return 1.0;
        }
        let w = ((k as u64).min(self.peers) - 1) as f64 / (self.peers - 1) as f64;
        1.0 - (1.0 - e_f) * w
    }
}

/// Linear interpolation of `y` at `m` over `s`, constant above the largest size; below the
/// smallest size s_0, 1 up to [`ONE_SEGMENT`] and linear from there to y(s_0) (y(s_0)
/// itself where s_0 <= [`ONE_SEGMENT`]).
fn interpolate(s: &[u64], y: &[f64], m: u64) -> f64 {
    let i = s.partition_point(|&x| x <= m);
    if i == 0 {
        if s[0] <= ONE_SEGMENT {
            return y[0];
        }
        if m <= ONE_SEGMENT {
            return 1.0;
        }
        let t = (m - ONE_SEGMENT) as f64 / (s[0] - ONE_SEGMENT) as f64;
        return 1.0 + t * (y[0] - 1.0);
    }
    if i == s.len() {
        return y[s.len() - 1];
    }
    let (x0, x1) = (s[i - 1] as f64, s[i] as f64);
    let t = (m as f64 - x0) / (x1 - x0);
    y[i - 1] + t * (y[i] - y[i - 1])
}

impl Efficiency {
    /// `y` (a table of `sizes`) at `m`, as [`interpolate`].
    fn at(&self, y: &[f64], m: u64) -> f64 {
        interpolate(&self.sizes, y, m)
    }
}

/// `tcpflow` parameters besides the topology.
#[allow(non_snake_case)]
#[derive(Clone, Debug)]
pub struct TcpflowParams {
    /// PLogP latency L, ps.
    pub L: Time,
    /// PLogP gap g(m), ps.
    pub g: Table,
    pub efficiency: Option<Efficiency>,
    /// Largest message, bytes, that leaves its sender's NIC in posting order
    /// (measured: `measure efficiency`'s fan-out rounds); None: every flow shares the NIC.
    pub fifo_limit: Option<u64>,
    /// Tail drops at full ports (of the messages up to `fifo_limit`); None: no RTO.
    pub burst: Option<BurstParams>,
    /// B, bytes: the token bucket of a node's link; a link of capacity c holds
    /// B·max(1, c / b_min), b_min the slowest node link's (None: no buckets).
    pub bucket: Option<u64>,
    /// h, bytes: what a message puts on the wire beyond its m bytes (0: none).
    pub overhead: u64,
    /// a, bytes: what a message's acknowledgements put into the reverse direction's
    /// token buckets (0, or no buckets: none).
    pub ack: u64,
    /// Timeouts of fan-in (see the module); None: none.
    pub timeouts: Option<FanInTimeouts>,
    /// Timeouts at ports between switches (see the module); None: none.
    pub port_timeouts: Option<PortTimeouts>,
    /// The two nodes g(m) was measured between (PLogP's pair). Its wire part is then
    /// m / b_p, b_p the narrowest link of their route, and a message's work is
    /// b_a·(g(m) - m/b_p + m/b_a), b_a its sender's link rate. None: b_a·g(m).
    pub pair: Option<[u32; 2]>,
}

/// Timeouts of fan-in: any of `rules` makes a fan-in cost one of its messages T_RTO =
/// `t_rto` (ps).
#[derive(Clone, Debug, PartialEq)]
pub struct FanInTimeouts {
    pub rules: Vec<TimeoutRule>,
    pub t_rto: Time,
}

/// Timeouts at ports between switches: q(m) = `rate` at `sizes` (increasing, M =
/// `sizes[0]`; each q in [0, 1]) per message that shares such a port, T_RTO = `t_rto` (ps),
/// the draws seeded by `seed` (a noisy run's seed, 0 without noise).
#[derive(Clone, Debug, PartialEq)]
pub struct PortTimeouts {
    pub sizes: Vec<u64>,
    pub rate: Vec<f64>,
    pub t_rto: Time,
    pub seed: u64,
}

impl PortTimeouts {
    /// Whether a message of `m` bytes counts: at least M (the smallest size).
    fn covers(&self, m: u64) -> bool {
        self.sizes.first().is_some_and(|&lo| m >= lo)
    }

    /// q(m): 0 below M, linear between the sizes, the last value above.
    fn rate_at(&self, m: u64) -> f64 {
        if !self.covers(m) {
            return 0.0;
        }
        interpolate(&self.sizes, &self.rate, m)
    }

    /// A uniform variate in [0, 1) for the message posted `order`-th (SplitMix64 at the
    /// state seed·φ + order + φ, as [`crate::jitter`] draws).
    fn draw(&self, order: u64) -> f64 {
        let state = self
            .seed
            .wrapping_mul(GOLDEN)
            .wrapping_add(order)
            .wrapping_add(GOLDEN);
        (mix64(state) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// K = `senders` nodes or more, each sending messages of at least M = `size` bytes to F =
/// `fanout` nodes or more (1: any), sending such messages to one node at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeoutRule {
    pub senders: u32,
    pub fanout: u32,
    pub size: u64,
}

/// Per rule, per node: the nodes it has the rule's messages in flight to (`receivers`)
/// and from (`senders`).
#[derive(Clone, Default)]
struct Peers {
    receivers: Vec<u32>,
    senders: Vec<u32>,
}

/// A node's episode of fan-in: the messages that joined it and are not yet delivered,
/// and whether one of them has had the episode's timeout.
#[derive(Clone, Copy, Default)]
struct Episode {
    live: u32,
    taken: bool,
}

/// What the network knows of a flow: its message size and end nodes.
#[derive(Clone, Copy, Default)]
struct Meta {
    /// The work: m bytes, or in a noisy run m scaled by its noise.
    bytes: u64,
    /// m, the message's size as scheduled: what the FIFO of small messages, the efficiency
    /// tables and the timeout rules take it by (a noisy run scales its work, not its kind).
    size: u64,
    src: u32,
    dst: u32,
    /// Posting order (for the FIFO of small messages).
    order: u64,
    /// A small message that got no capacity behind older ones of its sender.
    waiting: bool,
    /// The duplex delay: `lag` seconds of it accrue per second from `since` (the flow's
    /// last recomputation), (1/e - 1)·(its rate / r_1); `debt`, ps, what accrued before.
    lag: f64,
    since: Time,
    debt: f64,
    /// r_1: the rate the flow has alone (its route's narrowest link), bytes/s; set where
    /// there is an efficiency table.
    alone: f64,
    /// The bytes of its message that the buckets of its route's links let through at once
    /// when it was posted: its work's floor is m + h less these.
    credit: u64,
    /// e_x(m), e_d(m) and the interpolated e_f(m) of its size, looked up once when it is
    /// posted (1 without an efficiency table or a fan-in table).
    e_x: f64,
    e_d: f64,
    e_f: f64,
    /// With `timeouts`: when it joined its receiver's episode of fan-in (None: never).
    joined: Option<Time>,
    /// With `port_timeouts`: whether it has drawn (it shared a port between switches),
    /// and whether it lost its tail there.
    port_drawn: bool,
    port_lost: bool,
}

/// The `tcpflow` network.
pub struct TcpflowNet {
    topo: Topology,
    node: Vec<u32>,
    p: TcpflowParams,
    fluid: Fluid,
    filler: Filler,
    /// Per flow id.
    meta: Vec<Meta>,
    out: OutQueue,
    seq: u64,
    route: Route,
    scratch: Vec<(u32, XferId, f64)>,
    rates: Vec<f64>,
    /// Scratch: max-min rate per resource (zero between recomputations).
    load: Vec<f64>,
    started_at: Option<Time>,
    /// Flows started so far (the next flow's `Meta::order`).
    posted: u64,
    /// Per node, its live small flows in posting order (with `fifo_limit`).
    fifo: SenderQueues,
    /// The live flows that are not small flows waiting in their sender's queue (by
    /// position; `tracked_at`: per flow id, its index there or `u32::MAX`). A
    /// recomputation starts from these and reaches the waiting ones through `fifo`.
    tracked: Vec<u32>,
    tracked_at: Vec<u32>,
    /// Scratch: the resources of a recomputation's component (when it is not every live
    /// flow).
    comp: Vec<u32>,
    /// Scratch: per resource, whether it is in `comp` (false between recomputations).
    in_comp: Vec<bool>,
    /// Per resource, its capacity (bytes/s; `topo.capacity(r, false)`, looked up once).
    cap: Vec<f64>,
    /// Scratch: the senders of the component with live small flows, each with its walk
    /// along its queue, and (level, index in `open`, flow) of each one's next flow that
    /// may get capacity, lowest level first.
    open: Vec<Cursor>,
    next: BinaryHeap<Reverse<(u32, u32, u32)>>,
    /// Scratch: the tracked flows of the component, in id order; the waiting flows that get
    /// a rate this time; per flow id, its new rate.
    cand: Vec<u32>,
    got: Vec<u32>,
    rate_of: Vec<f64>,
    /// Scratch: one level's flows, its rates, and the capacity each resource has used so far.
    level: Vec<u32>,
    level_rates: Vec<f64>,
    /// Scratch: the entries of `work` that are not waiting, in order.
    active: Vec<u32>,
    used: Vec<f64>,
    bursts: Option<Bursts>,
    /// b_p, bytes/s: the narrowest link between PLogP's pair (None: no pair given).
    pair_rate: Option<f64>,
    /// Scratch: the RTO events of an instant.
    rtos: Vec<XferEvent>,
    /// Scratch (with a fan-in table): (receiving node, sending node) of the flows of
    /// `work`, once each, and per node of the topology the number of nodes sending to it
    /// (zero between recomputations).
    pairs: Vec<(u32, u32)>,
    senders: Vec<u32>,
    /// With a bucket: per resource (link direction), its token bucket; empty without.
    buckets: Vec<Bucket>,
    /// With `timeouts`: per node, its episode of fan-in; per (rule, sending node,
    /// receiving node) the rule's messages in flight; per rule, every node's peers
    /// ([`Peers`]).
    episodes: Vec<Episode>,
    live_pairs: FxHashMap<(u32, u32, u32), u32>,
    peers: Vec<Peers>,
    /// With `port_timeouts`: per resource, the messages of at least M bytes crossing it
    /// (between switches only).
    port_live: Vec<u32>,
}

/// A link direction's token bucket: it holds `cap` bytes (B_c); `held` bytes (V) were
/// posted into it and its rate has not yet drained them as of `at`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    cap: f64,
    held: f64,
    at: Time,
}

impl Bucket {
    /// What its rate `c` (bytes/s) has drained of V since it was last looked at, up to `now`.
    fn drain(&mut self, c: f64, now: Time) {
        let dt = now.saturating_sub(self.at) as f64 / PS_PER_S as f64;
        self.held = (self.held - c * dt).max(0.0);
        self.at = now;
    }
}

impl TcpflowNet {
    pub fn new(topo: Topology, node: Vec<u32>, p: TcpflowParams) -> TcpflowNet {
        let fluid = Fluid::new(&topo);
        let filler = Filler::new(topo.num_resources());
        let bursts = p.burst.clone().map(|b| Bursts::new(b, &topo));
        let topo_nodes = topo.nodes() as usize;
        let pair_rate = p
            .pair
            .map(|[a, b]| narrowest(&topo, &topo.route(a, b).resources));
        let buckets = match p.bucket {
            Some(b) => {
                let slowest = (0..topo.nodes())
                    .map(|n| topo.node_capacity(n, false))
                    .fold(f64::INFINITY, f64::min);
                (0..topo.num_resources() as u32)
                    .map(|r| Bucket {
                        cap: b as f64 * (topo.capacity(r, false) / slowest).max(1.0),
                        held: 0.0,
                        at: 0,
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        let cap = (0..topo.num_resources() as u32)
            .map(|r| topo.capacity(r, false))
            .collect();
        let ports = p.port_timeouts.is_some();
        let nres = topo.num_resources();
        let (episodes, peers) = match &p.timeouts {
            Some(t) => (
                vec![Episode::default(); topo_nodes],
                vec![
                    Peers {
                        receivers: vec![0; topo_nodes],
                        senders: vec![0; topo_nodes],
                    };
                    t.rules.len()
                ],
            ),
            None => (Vec::new(), Vec::new()),
        };
        TcpflowNet {
            topo,
            node,
            p,
            pair_rate,
            fluid,
            filler,
            meta: Vec::new(),
            out: OutQueue::new(),
            seq: 0,
            route: Route::default(),
            scratch: Vec::new(),
            rates: Vec::new(),
            load: Vec::new(),
            started_at: None,
            posted: 0,
            fifo: SenderQueues::new(topo_nodes),
            tracked: Vec::new(),
            tracked_at: Vec::new(),
            comp: Vec::new(),
            in_comp: Vec::new(),
            cap,
            open: Vec::new(),
            next: BinaryHeap::new(),
            cand: Vec::new(),
            got: Vec::new(),
            rate_of: Vec::new(),
            level: Vec::new(),
            level_rates: Vec::new(),
            active: Vec::new(),
            used: Vec::new(),
            bursts,
            rtos: Vec::new(),
            pairs: Vec::new(),
            senders: vec![0; topo_nodes],
            buckets,
            episodes,
            live_pairs: FxHashMap::default(),
            peers,
            port_live: vec![0; if ports { nres } else { 0 }],
        }
    }

    /// The bytes of a message of `bytes` posted at `now` on `self.route` that the tokens of
    /// its route's link directions let through at once. Each holds what was posted into it
    /// less what its rate c has drained since (a virtual queue V, V(t) = max(0, V - c·dt)),
    /// so its tokens are max(0, B_c - V); the message gets the fewest along its route, at
    /// most its size, and is added to every V of its route.
    fn credit(&mut self, now: Time, bytes: u64) -> u64 {
        if self.buckets.is_empty() {
            return 0;
        }
        let mut tokens = bytes as f64;
        for &r in &self.route.resources {
            let k = &mut self.buckets[r as usize];
            k.drain(self.topo.capacity(r, false), now);
            tokens = tokens.min((k.cap - k.held).max(0.0));
            k.held += bytes as f64;
        }
        tokens as u64
    }

    /// A message from node `a` to node `b` posted at `now`: its acknowledgements' a bytes
    /// go into the buckets of the reverse route, b to a.
    fn acknowledge(&mut self, now: Time, a: u32, b: u32) {
        if self.buckets.is_empty() || self.p.ack == 0 {
            return;
        }
        let mut reverse = std::mem::take(&mut self.route);
        self.topo.route_into(b, a, &mut reverse);
        for &r in &reverse.resources {
            let k = &mut self.buckets[r as usize];
            k.drain(self.topo.capacity(r, false), now);
            k.held += self.p.ack as f64;
        }
        self.route = reverse;
    }

    /// Is flow `id` a message of at most `fifo_limit` bytes between two nodes (served in posting order)?
    fn small(&self, id: u32) -> bool {
        let m = &self.meta[id as usize];
        m.src != m.dst && self.p.fifo_limit.is_some_and(|e| m.size <= e)
    }

    /// Flow `id` into `self.tracked` (if it is not there).
    fn track(&mut self, id: u32) {
        let at = &mut self.tracked_at[id as usize];
        if *at == u32::MAX {
            *at = self.tracked.len() as u32;
            self.tracked.push(id);
        }
    }

    /// Flow `id` out of `self.tracked` (if it is there).
    fn untrack(&mut self, id: u32) {
        let at = std::mem::replace(&mut self.tracked_at[id as usize], u32::MAX);
        if at == u32::MAX {
            return;
        }
        self.tracked.swap_remove(at as usize);
        if let Some(&moved) = self.tracked.get(at as usize) {
            self.tracked_at[moved as usize] = at;
        }
    }

    /// The component of the resources that changed since the last recomputation (its link
    /// directions and their reverses, walked over every live flow): its tracked flows, in
    /// id order, into `self.cand`, and its senders with small flows into `self.open`. The
    /// flows waiting in those senders' queues belong to it too; [`Self::allocate`] reaches
    /// them through the queues. Every small flow of a node shares its up link, so a
    /// sender's queue is in the component whole or not at all.
    fn component(&mut self) {
        let partial = self.fluid.component(true, &self.topo, &mut self.comp);
        self.cand.clear();
        self.open.clear();
        if partial {
            let nodes = self.topo.nodes();
            self.in_comp.resize(self.topo.num_resources(), false);
            for &r in &self.comp {
                self.in_comp[r as usize] = true;
                let n = r / 2;
                if n < nodes && self.topo.node_up(n) == r && self.fifo.live(n) > 0 {
                    self.open.push(self.fifo.cursor(n));
                }
            }
            // Its tracked flows: those whose route starts in it (a flow is in the component
            // with every resource of its route). Over the tracked flows, not over the
            // resources' flow lists, which hold the waiting ones too.
            let (flows, in_comp) = (&self.fluid.flows, &self.in_comp);
            self.cand.extend(self.tracked.iter().copied().filter(|&id| {
                flows[id as usize]
                    .route
                    .first()
                    .is_some_and(|&r| in_comp[r as usize])
            }));
            for &r in &self.comp {
                self.in_comp[r as usize] = false;
            }
        } else {
            // Every live flow.
            self.cand.extend_from_slice(&self.tracked);
            self.fifo.senders(&mut self.open);
        }
        self.cand.sort_unstable();
    }

    /// Max-min rates of the component's flows into `self.rate_of`, level by level: each
    /// level gets what the levels before it left of every resource's capacity. Level 0
    /// holds every flow that is not small and each sender's oldest small flow; level l
    /// each sender's l-th. A flow with a resource already full gets rate 0 (the filling
    /// would fix it first, at 0, which changes nothing of the others'), so each sender's
    /// walk along its queue passes such flows (and whole runs behind a full key, and its
    /// whole queue once its up link is full: resources only fill up as the levels go) and
    /// the levels without a flow that can get capacity are never formed. The flows that
    /// were waiting and are given capacity go into `self.got`, in id order. Returns whether
    /// a flow left without a rate waits: false when no sender has two small flows, where
    /// every flow shares as in plain max-min.
    fn allocate(&mut self) -> bool {
        let flows = &self.fluid.flows;
        let topo = &self.topo;
        let fifo = &self.fifo;
        let tracked_at = &self.tracked_at;
        self.got.clear();
        self.rate_of.resize(flows.len(), 0.0);
        for &id in &self.cand {
            self.rate_of[id as usize] = 0.0;
        }
        if self.open.iter().all(|c| fifo.live(c.node) <= 1) {
            for c in &mut self.open {
                let (id, _) = fifo.next(c, |_, _| Step::Take).expect("a live small flow");
                if tracked_at[id as usize] == u32::MAX {
                    self.got.push(id);
                }
            }
            self.got.sort_unstable();
            merge(&self.cand, &self.got, &mut self.level);
            let items = self
                .level
                .iter()
                .map(|&id| (flows[id as usize].route.as_slice(), 1.0));
            self.filler
                .allocate(items, |r| topo.capacity(r, false), &mut self.level_rates);
            for (&id, &rate) in self.level.iter().zip(&self.level_rates) {
                self.rate_of[id as usize] = rate;
            }
            return false;
        }
        self.used.resize(topo.num_resources(), 0.0);
        // What a level leaves of resource r: its capacity less what the levels before
        // took, 0 once that is within 1e-9 of the capacity.
        let cap = &self.cap;
        let left = |used: &[f64], r: u32| {
            let c = cap[r as usize];
            let left = c - used[r as usize];
            if left > c * 1e-9 {
                left
            } else {
                0.0
            }
        };
        let open_route = |used: &[f64], id: u32| {
            flows[id as usize]
                .route
                .iter()
                .all(|&r| left(used, r) > 0.0)
        };
        // A sender's next flow that can get capacity as the levels before stand: none
        // once its up link is full (`used` does not change during a walk, so that is
        // looked at once); else the next whose key (its route's second link direction)
        // and the rest of its route are open (a small flow's route starts at its
        // sender's up link, and its key is its second resource).
        let walk = |used: &[f64], c: &mut Cursor| {
            if left(used, topo.node_up(c.node)) <= 0.0 {
                return None;
            }
            fifo.next(c, |id, key| {
                if key == NO_KEY {
                    Step::Take
                } else if left(used, key) <= 0.0 {
                    Step::PassRun
                } else if flows[id as usize].route[2..]
                    .iter()
                    .all(|&r| left(used, r) > 0.0)
                {
                    Step::Take
                } else {
                    Step::Pass
                }
            })
        };
        self.next.clear();
        for (i, c) in self.open.iter_mut().enumerate() {
            if let Some((id, l)) = walk(&self.used, c) {
                self.next.push(Reverse((l, i as u32, id)));
            }
        }
        self.level.clear();
        let small = |id: u32| {
            let m = &self.meta[id as usize];
            m.src != m.dst && self.p.fifo_limit.is_some_and(|e| m.size <= e)
        };
        self.level
            .extend(self.cand.iter().copied().filter(|&id| !small(id)));
        let mut at = 0;
        loop {
            // Level `at`: each sender's flow there that can still get capacity, each
            // sender walked on to its next one (which the levels up to this one may still
            // close: it is looked at again at its level).
            while let Some(&Reverse((l, i, id))) = self.next.peek() {
                if l != at {
                    break;
                }
                self.next.pop();
                let c = &mut self.open[i as usize];
                if open_route(&self.used, id) {
                    self.level.push(id);
                }
                if let Some((id, l)) = walk(&self.used, c) {
                    self.next.push(Reverse((l, i, id)));
                }
            }
            if !self.level.is_empty() {
                self.level.sort_unstable();
                let used = &self.used;
                let items = self
                    .level
                    .iter()
                    .map(|&id| (flows[id as usize].route.as_slice(), 1.0));
                self.filler
                    .allocate(items, |r| left(used, r), &mut self.level_rates);
                for (&id, &rate) in self.level.iter().zip(&self.level_rates) {
                    self.rate_of[id as usize] = rate;
                    for &r in &flows[id as usize].route {
                        self.used[r as usize] += rate;
                    }
                    if tracked_at[id as usize] == u32::MAX {
                        self.got.push(id);
                    }
                }
                self.level.clear();
            }
            match self.next.peek() {
                Some(&Reverse((l, _, _))) => at = l,
                None => break,
            }
        }
        self.got.sort_unstable();
        true
    }

    fn push(&mut self, t: Time, kind: u8, x: XferId) {
        self.out.push(Reverse((t, self.seq, kind, x)));
        self.seq += 1;
    }

    /// The efficiency of flow `id` in the network's present state, as (the factor on its
    /// rate, 1/e - 1: the delay its arrival accrues per second of its time alone); `load`:
    /// the max-min rate carried by each resource (bytes/s, before efficiencies). Fan-in
    /// (`self.senders`, per node) adds its 1/e_f - 1 to the delay of either case. The
    /// reverse flow b -> a is in flight when `self.pairs` (every (receiving node, sending
    /// node) of the flows that are not waiting) holds (a, b).
    fn efficiency(&self, id: u32, load: &[f64]) -> (f64, f64) {
        let Some(eff) = &self.p.efficiency else {
            return (1.0, 0.0);
        };
        let m = self.meta[id as usize];
        if m.src == m.dst {
            return (1.0, 0.0);
        }
        // Fan-in's f: above 1 it takes the pair loss back, at most 1 it delays on top of it.
        let f = match &eff.fanin {
            Some(f) => f.at(self.senders[m.dst as usize], m.e_f),
            None => 1.0,
        };
        if self.pairs.binary_search(&(m.src, m.dst)).is_ok() {
            return if f > 1.0 {
                ((m.e_x * f).min(1.0), 0.0)
            } else {
                (m.e_x, 1.0 / f - 1.0)
            };
        }
        // The reverse path's busiest end: a's down link, b's up link.
        let u = [self.topo.node_down(m.src), self.topo.node_up(m.dst)]
            .iter()
            .map(|&r| load[r as usize] / self.cap[r as usize])
            .fold(0.0, f64::max)
            .min(1.0);
        let e = 1.0 - (1.0 - m.e_d) * u;
        let lag = if f > 1.0 {
            (1.0 / (e * f)).max(1.0) - 1.0
        } else {
            1.0 / e - 1.0 + (1.0 / f - 1.0)
        };
        (1.0, lag)
    }

    /// The (receiving node, sending node) pairs of the flows of `work` that are not waiting
    /// (`self.active`),
    /// once each and sorted, into `self.pairs`; with a fan-in table, per node that a flow
    /// of `work` goes to, the number of other nodes sending to it into `self.senders`.
    /// Every flow into a node shares its down link, and every flow out of it its up link
    /// (whose reverse direction the component holds), so they are all in `work`.
    fn count_senders(&mut self, work: &[u32], fanin: bool) {
        self.pairs.clear();
        for &k in &self.active {
            let m = &self.meta[work[k as usize] as usize];
            if m.src != m.dst && !m.waiting {
                self.pairs.push((m.dst, m.src));
            }
        }
        self.pairs.sort_unstable();
        self.pairs.dedup();
        if fanin {
            for &(dst, _) in &self.pairs {
                self.senders[dst as usize] += 1;
            }
        }
    }

    /// Add to flow `id`'s debt what its lag accrued up to `now`.
    fn accrue(&mut self, id: u32, now: Time) {
        let m = &mut self.meta[id as usize];
        if now > m.since {
            m.debt += m.lag * (now - m.since) as f64;
        }
        m.since = now;
    }

    /// Scale the max-min rates of `work` (in `self.rates`) by each flow's efficiency.
    fn apply_efficiency(&mut self, work: &[u32]) {
        let mut load = std::mem::take(&mut self.load);
        load.resize(self.topo.num_resources(), 0.0);
        // The flows that are not waiting (`self.active`, in `work` order); the others have
        // rate 0 and add nothing.
        for &k in &self.active {
            let id = work[k as usize];
            for &r in &self.fluid.flows[id as usize].route {
                load[r as usize] += self.rates[k as usize];
            }
        }
        let fanin = self
            .p
            .efficiency
            .as_ref()
            .is_some_and(|e| e.fanin.is_some());
        self.count_senders(work, fanin);
        for (k, &id) in work.iter().enumerate() {
            if self.rates[k] <= 0.0 {
                // No rate to scale, and no delay accrues at rate 0.
                self.meta[id as usize].lag = 0.0;
            }
        }
        for i in 0..self.active.len() {
            let k = self.active[i] as usize;
            if self.rates[k] <= 0.0 {
                continue;
            }
            let id = work[k];
            let (factor, lag) = self.efficiency(id, &load);
            self.rates[k] *= factor;
            // Per byte: the delay accrues at the flow's rate over the rate it has alone.
            let m = &mut self.meta[id as usize];
            m.lag = if lag > 0.0 {
                lag * self.rates[k] / m.alone
            } else {
                0.0
            };
        }
        for &k in &self.active {
            for &r in &self.fluid.flows[work[k as usize] as usize].route {
                load[r as usize] = 0.0;
            }
        }
        if fanin {
            for &(dst, _) in &self.pairs {
                self.senders[dst as usize] = 0;
            }
        }
        self.load = load;
    }

    /// With `timeouts`: a message of `size` bytes (as scheduled) from node `a` to node `b`
    /// is posted (`live` true) or delivered (false): per rule where it is at least M bytes,
    /// it counts toward the pair (a, b), and a pair that gains its first or loses its last such
    /// message changes a's receivers and b's senders.
    fn count_live(&mut self, a: u32, b: u32, size: u64, live: bool) {
        let Some(t) = self.p.timeouts.as_ref() else {
            return;
        };
        if a == b {
            return;
        }
        for (r, rule) in t.rules.iter().enumerate() {
            if size < rule.size {
                continue;
            }
            let key = (r as u32, a, b);
            let n = self.live_pairs.entry(key).or_insert(0);
            let before = *n;
            if live {
                *n += 1;
            } else {
                *n -= 1;
            }
            let after = *n;
            if after == 0 {
                self.live_pairs.remove(&key);
            }
            let per = &mut self.peers[r];
            match (before, after) {
                (0, _) => {
                    per.receivers[a as usize] += 1;
                    per.senders[b as usize] += 1;
                }
                (_, 0) => {
                    per.receivers[a as usize] -= 1;
                    per.senders[b as usize] -= 1;
                }
                _ => {}
            }
        }
    }

    /// With `timeouts`: the flows of `work` that are not waiting and that a rule (K, F, M)
    /// makes part of a fan-in (at least M bytes between two nodes, from a node with such
    /// messages in flight to F or more nodes, into a node that K or more nodes have such
    /// messages in flight to) join their receiver's episode at `now` (once; see the
    /// module).
    fn join_episodes(&mut self, now: Time, work: &[u32]) {
        let Some(t) = self.p.timeouts.as_ref() else {
            return;
        };
        for &k in &self.active {
            let id = work[k as usize] as usize;
            let m = self.meta[id];
            if m.src == m.dst || m.waiting || m.joined.is_some() {
                continue;
            }
            let joins = t.rules.iter().zip(&self.peers).any(|(rule, per)| {
                m.size >= rule.size
                    && per.receivers[m.src as usize] >= rule.fanout
                    && per.senders[m.dst as usize] >= rule.senders
            });
            if joins {
                self.meta[id].joined = Some(now);
                self.episodes[m.dst as usize].live += 1;
            }
        }
    }

    /// With `timeouts`: flow `id`, delivered by the fluid model at `now`, leaves its
    /// receiver's episode; the first of an episode to leave has its timeout: the instant
    /// its data arrives (max(now, t_j + T_RTO + m / b), see the module), else None.
    fn leave_episode(&mut self, id: u32, now: Time, x: XferId) -> Result<Option<Time>, Overflow> {
        let Some(t_rto) = self.p.timeouts.as_ref().map(|t| t.t_rto) else {
            return Ok(None);
        };
        let m = self.meta[id as usize];
        let Some(joined) = m.joined else {
            return Ok(None);
        };
        let ep = &mut self.episodes[m.dst as usize];
        ep.live -= 1;
        let first = !ep.taken;
        ep.taken = ep.live > 0;
        if !first {
            return Ok(None);
        }
        let b = self.topo.node_capacity(m.dst, false);
        let wire = (m.bytes as f64 / b * PS_PER_S as f64).round() as Time;
        let until = add(add(joined, t_rto, x)?, wire, x)?;
        Ok(Some(until.max(now)))
    }

    /// Whether resource `r` of a route from node `a` to node `b` (a != b) is a link
    /// direction between two switches: not a node's own link.
    fn between_switches(&self, r: u32, a: u32, b: u32) -> bool {
        r != self.topo.node_up(a) && r != self.topo.node_down(b) && self.topo.reverse(r).is_some()
    }

    /// With `port_timeouts`: flow `id` (between two nodes, at least M bytes) is posted
    /// (`live` true) or delivered: it counts on the links between switches of its route.
    fn count_ports(&mut self, id: u32, live: bool) {
        let Some(t) = self.p.port_timeouts.as_ref() else {
            return;
        };
        let m = self.meta[id as usize];
        if m.src == m.dst || !t.covers(m.size) {
            return;
        }
        for &r in &self.fluid.flows[id as usize].route {
            if self.between_switches(r, m.src, m.dst) {
                let n = &mut self.port_live[r as usize];
                *n = if live { *n + 1 } else { *n - 1 };
            }
        }
    }

    /// With `port_timeouts`: the flows of `work` that are not waiting, of at least M bytes,
    /// that share a link between switches on their route with another such message draw
    /// whether they lose their tail there (once).
    fn draw_port_losses(&mut self, work: &[u32]) {
        let Some(t) = self.p.port_timeouts.as_ref() else {
            return;
        };
        for &k in &self.active {
            let id = work[k as usize] as usize;
            let m = self.meta[id];
            if m.src == m.dst || m.waiting || m.port_drawn || !t.covers(m.size) {
                continue;
            }
            let shared = self.fluid.flows[id].route.iter().any(|&r| {
                self.port_live[r as usize] >= 2 && self.between_switches(r, m.src, m.dst)
            });
            if shared {
                self.meta[id].port_drawn = true;
                self.meta[id].port_lost = t.draw(m.order) < t.rate_at(m.size);
            }
        }
    }

    /// With `port_timeouts`: flow `id`, delivered by the fluid model at `now`: where it lost
    /// its tail, the instant its data arrives, now + T_RTO; else None.
    fn port_loss(&self, id: u32, now: Time, x: XferId) -> Result<Option<Time>, Overflow> {
        match self.p.port_timeouts.as_ref() {
            Some(t) if self.meta[id as usize].port_lost => Ok(Some(add(now, t.t_rto, x)?)),
            _ => Ok(None),
        }
    }

    fn recompute(&mut self, now: Time) -> Result<(), Overflow> {
        self.component();
        let waits = self.allocate();
        // The flows to recompute: the component's tracked flows and the waiting ones that
        // got capacity, in id order (those that wait on keep rate 0 and their state).
        let mut work = std::mem::take(&mut self.fluid.work);
        merge(&self.cand, &self.got, &mut work);
        self.rates.clear();
        self.rates
            .extend(work.iter().map(|&id| self.rate_of[id as usize]));
        self.active.clear();
        for (k, &id) in work.iter().enumerate() {
            let waiting = waits && self.rates[k] <= 0.0;
            self.meta[id as usize].waiting = waiting;
            if waiting && self.small(id) {
                self.untrack(id);
            } else {
                self.track(id);
            }
            if !waiting {
                self.active.push(k as u32);
            }
        }
        if waits {
            // Only flows with a rate added to `used`.
            for &k in &self.active {
                for &r in &self.fluid.flows[work[k as usize] as usize].route {
                    self.used[r as usize] = 0.0;
                }
            }
        }
        self.fluid.work = work;
        self.fluid.settle(now);
        let work = std::mem::take(&mut self.fluid.work);
        for &id in &work {
            self.accrue(id, now);
        }
        // New flows: b_a·g_a(m) of work, b_a the sender's link rate, g_a(m) = g(m) - m/b_p
        // + m/b_a where PLogP's pair is known (its wire part at b_a), else g(m).
        for &id in &work {
            let f = &self.fluid.flows[id as usize];
            if !f.fresh {
                continue;
            }
            let x = f.xfer;
            let m = self.meta[id as usize];
            let g = self.p.g.at(m.bytes).ok_or(Overflow(x))?;
            let g = g as f64 / PS_PER_S as f64;
            let b_a = self.topo.node_capacity(m.src, false);
            let mut remaining = match self.pair_rate {
                Some(b_p) if m.src != m.dst => {
                    (b_a * g + m.bytes as f64 * (1.0 - b_a / b_p)).max(0.0)
                }
                _ => b_a * g,
            };
            if m.src != m.dst {
                // No link carries data above its rate: m bytes are at least m + h bytes of
                // work, less what the buckets on its route let through at once.
                remaining =
                    remaining.max((m.bytes.saturating_add(self.p.overhead) - m.credit) as f64);
            }
            self.fluid.flows[id as usize].remaining = remaining;
        }
        if self.p.timeouts.is_some() {
            self.join_episodes(now, &work);
        }
        if self.p.port_timeouts.is_some() {
            self.draw_port_losses(&work);
        }
        if self.p.efficiency.is_some() {
            self.apply_efficiency(&work);
        }
        self.fluid.work = work;
        let rates = std::mem::take(&mut self.rates);
        let applied = self.fluid.apply(now, &rates);
        self.rates = rates;
        applied
    }
}

/// The capacity of the narrowest of `route`'s link directions, bytes/s.
fn narrowest(topo: &Topology, route: &[u32]) -> f64 {
    route
        .iter()
        .map(|&r| topo.capacity(r, false))
        .fold(f64::INFINITY, f64::min)
}

/// The union of the sorted id lists `a` and `b` (no id in both), sorted, into `out`.
fn merge(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

impl Network for TcpflowNet {
    fn name(&self) -> &'static str {
        "tcpflow"
    }
    fn control_latency(&self, _src: u32, _dst: u32) -> Time {
        self.p.L
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
        size: u64,
    ) -> Result<(), Overflow> {
        let (a, b) = (self.node[src as usize], self.node[dst as usize]);
        let mut route = std::mem::take(&mut self.route);
        self.topo.route_into(a, b, &mut route);
        // The work is set when the flow first gets a rate (recompute).
        let id = self.fluid.add(now, xfer, &route.resources, 0.0, 1.0) as usize;
        self.route = route;
        if self.meta.len() <= id {
            self.meta.resize(id + 1, Meta::default());
        }
        let credit = if a != b {
            self.credit(now, bytes.saturating_add(self.p.overhead))
        } else {
            0
        };
        let (e_x, e_d, e_f) = match &self.p.efficiency {
            Some(eff) => (
                eff.at(&eff.exchange, size),
                eff.at(&eff.duplex, size),
                eff.fanin
                    .as_ref()
                    .map_or(1.0, |f| interpolate(&f.sizes, &f.e, size)),
            ),
            None => (1.0, 1.0, 1.0),
        };
        self.meta[id] = Meta {
            e_x,
            e_d,
            e_f,
            credit,
            bytes,
            size,
            src: a,
            dst: b,
            order: self.posted,
            waiting: false,
            lag: 0.0,
            since: now,
            debt: 0.0,
            alone: match self.p.efficiency {
                Some(_) => narrowest(&self.topo, &self.route.resources),
                None => f64::INFINITY,
            },
            joined: None,
            port_drawn: false,
            port_lost: false,
        };
        self.posted += 1;
        self.tracked_at.resize(self.meta.len(), u32::MAX);
        self.track(id as u32);
        if self.small(id as u32) {
            let key = self.route.resources.get(1).copied().unwrap_or(NO_KEY);
            self.fifo.push(a, self.meta[id].order, id as u32, key);
        }
        if a != b && self.p.fifo_limit.is_some_and(|e| size <= e) {
            if let Some(bursts) = &mut self.bursts {
                bursts.post(now, xfer, a, &self.route.resources, bytes, &self.topo);
            }
        }
        if a != b {
            self.acknowledge(now, a, b);
        }
        self.count_live(a, b, size, true);
        self.count_ports(id as u32, true);
        self.started_at = Some(now);
        Ok(())
    }
    fn next_time(&self) -> Option<Time> {
        [
            self.out.peek().map(|Reverse((t, _, _, _))| *t),
            self.fluid.next_time(),
            self.started_at,
        ]
        .into_iter()
        .flatten()
        .min()
    }
    fn advance(&mut self, now: Time, out: &mut Vec<XferEvent>) -> Result<(), Overflow> {
        self.started_at = None;
        let mut done = std::mem::take(&mut self.scratch);
        done.clear();
        self.fluid.pop_finished(now, &mut done);
        for &(id, x, _) in &done {
            self.untrack(id);
            let m = self.meta[id as usize];
            if self.small(id) {
                self.fifo.remove(m.src, m.order);
            }
            self.count_live(m.src, m.dst, m.size, false);
            self.count_ports(id, false);
            self.accrue(id, now);
            let debt = self.meta[id as usize].debt.round() as Time;
            self.push(now, 0, x);
            let dropped = self
                .bursts
                .as_mut()
                .and_then(|b| b.delivered(now, x, &self.topo));
            let timed_out = self.leave_episode(id, now, x)?;
            let port_out = self.port_loss(id, now, x)?;
            // the latest of the three (None: none)
            let held = dropped.max(timed_out).max(port_out);
            if let Some(until) = held {
                self.rtos.push(XferEvent::Rto {
                    xfer: x,
                    at: now,
                    delay: until - now,
                });
            }
            let at = add(held.unwrap_or(now), debt, x)?;
            self.push(add(at, self.p.L, x)?, 1, x);
        }
        self.scratch = done;
        if self.fluid.dirty() {
            self.recompute(now)?;
        }
        out.append(&mut self.rtos);
        emit_due(&mut self.out, now, out);
        Ok(())
    }
}
