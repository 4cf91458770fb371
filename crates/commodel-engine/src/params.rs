//! Typed model parameters: what [`crate::predict::run`] takes, one struct per model.
//!
//! Units: times are integer picoseconds ([`Time`]), sizes bytes, rates bytes/s,
//! per-byte costs picoseconds per byte ([`PsPerByte`]). The structs hold values
//! as given; [`crate::predict::run`] checks them and names the model and the
//! field at fault (``model plogpt: parameter `topology.b[1]` must be ...``).
//!
//! | model | struct | parameters (literature symbols) |
//! |---|---|---|
//! | `loggops` | [`LogGopsParams`] | L, o, g (ps), G, O (ps/B), S (B) |
//! | `plogp` | [`PlogpParams`] | L (ps), g(m) at `sizes` (ps), S |
//! | `hockney` | [`HockneyParams`] | alpha (ps), beta (ps/B), S |
//! | `plogpt` | [`PlogptParams`] | topology with b(h), d(h); L, g(m), optional g_bidir(m); RTO rule from eps_S, eps_T (ps) and T_RTO (ps, default 200 ms) when the topology has d(h); `rto_rule` picks eq. 14's P_B or the measured port buffers `buffer` (bytes per height) |
//! | `maxmin`, `maxmin-plain` | [`MaxminParams`] | topology; `rtt_weights` (false: plain) |
//! | `zhu`, `zhu-fair` | [`ZhuParams`] | topology; `asymmetric` (false: fairness only) |
//! | `tcpflow` | [`TcpflowParams`] | topology; L (ps), g(m) at `sizes` (ps); optional efficiency e_x(m), e_d(m) and fan-in e_f(m) with its `peers` (dimensionless, in (0, 1]); optional FIFO limit (bytes); optional token bucket `bucket`, wire overhead `overhead` h and acknowledgement bytes `ack` a (bytes); `rto_rule` buffer: tail drops at full ports from `buffer` (bytes per height), T_RTO `rto` (ps, default 200 ms); optional `timeouts` [K, F, M, ...]: one retransmission timeout per fan-in of K or more senders, each sending messages of at least M bytes to F or more nodes; optional `port_timeouts` q(m) at `sizes` (dimensionless in [0, 1]): the chance that a message of at least M (the smallest size) bytes sharing a link between switches with another loses its tail (T_RTO late) |
//!
//! Every message-level model (all but `loggops`) has [`Common`] fields: the
//! rendezvous threshold S, the rank placement `rank_to_node`, the optional
//! many-to-one rule `incast` ([`crate::contention::incast`]) and the optional
//! sharing of C cores by every rank, `cpu` ([`CpuParams`]: C, o_s(m), o_r(m)).

#![allow(non_snake_case)]

use crate::time::Time;

/// A per-byte cost as given, in picoseconds per byte (G, O of LogGOPS; beta of Hockney);
/// [`crate::predict::run`] turns it into a [`crate::time::PerByte`].
pub type PsPerByte = f64;

/// The parameters of one model run; [`ModelParams::name`] is the model's name.
// One value per prediction, built once: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
#[derive(Clone, Debug)]
pub enum ModelParams {
    LogGops(LogGopsParams),
    Plogp(PlogpParams),
    Hockney(HockneyParams),
    Plogpt(PlogptParams),
    Maxmin(MaxminParams),
    Zhu(ZhuParams),
    Tcpflow(TcpflowParams),
}

/// Names of the models, as [`ModelParams::name`] gives them.
pub const MODELS: &[&str] = &[
    "loggops",
    "plogp",
    "hockney",
    "plogpt",
    "maxmin",
    "maxmin-plain",
    "zhu",
    "zhu-fair",
    "tcpflow",
];

impl ModelParams {
    /// The model's name (one of [`MODELS`]); the flags pick the `-plain` / `-fair` variants.
    pub fn name(&self) -> &'static str {
        match self {
            ModelParams::LogGops(_) => "loggops",
            ModelParams::Plogp(_) => "plogp",
            ModelParams::Hockney(_) => "hockney",
            ModelParams::Plogpt(_) => "plogpt",
            ModelParams::Maxmin(p) if p.rtt_weights => "maxmin",
            ModelParams::Maxmin(_) => "maxmin-plain",
            ModelParams::Zhu(p) if p.asymmetric => "zhu",
            ModelParams::Zhu(_) => "zhu-fair",
            ModelParams::Tcpflow(_) => "tcpflow",
        }
    }
}

/// LogGOPS (LogGOPSim's semantics).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogGopsParams {
    /// Latency L, ps.
    pub L: Time,
    /// CPU overhead o per message, ps.
    pub o: Time,
    /// NIC gap g between messages, ps.
    pub g: Time,
    /// Gap per byte G, ps/B.
    pub G: PsPerByte,
    /// CPU overhead per byte O, ps/B.
    pub O: PsPerByte,
    /// Rendezvous threshold S, bytes: messages larger than S wait for their receive.
    pub S: u64,
    /// C, the cores every rank shares ([`CpuParams`]): with P > C ranks, o, O and
    /// every calc are P / C times as large. None: a core per rank (LogGOPSim).
    pub cpu_cores: Option<u64>,
}

/// Fields of every message-level model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Common {
    /// Rendezvous threshold S, bytes (None: every message is eager).
    pub S: Option<u64>,
    /// Node of each rank (None: rank i on node i).
    pub rank_to_node: Option<Vec<u64>>,
    /// The stochastic many-to-one rule, if any.
    pub incast: Option<IncastParams>,
    /// Cores shared by every rank, with the per-message CPU overheads; None: a core per rank.
    pub cpu: Option<CpuParams>,
    /// Per-message noise for a prediction's spread ([`crate::jitter`]); None: none.
    pub jitter: Option<JitterParams>,
}

/// Each message's bytes times exp(σ Z - σ^2 / 2), Z drawn from `seed`'s stream; σ is
/// `sigma`, or where `sizes` is given σ(m) at the message's size m as scheduled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JitterParams {
    /// σ, the spread of the log of a flow's time (>= 0).
    pub sigma: f64,
    /// Seed of the draws.
    pub seed: u64,
    /// Message sizes (bytes, increasing) of σ(m) `sigmas`: linear between them, the end
    /// values beyond; empty: `sigma` at every size.
    pub sizes: Vec<u64>,
    /// σ(m) at `sizes` (each in [0, 10]).
    pub sigmas: Vec<f64>,
}

/// Ranks that share `cores` cores (every rank of a run on one machine, busy-polling as
/// MPI ranks do) each get `cores / P` of a core when P > `cores`: their CPU work takes
/// s = P / `cores` times as long ([`crate::engine::CpuShare`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuParams {
    /// C, the cores every rank shares (>= 1).
    pub cores: u64,
    /// Message sizes m of the overhead tables, bytes, increasing.
    pub sizes: Vec<u64>,
    /// The sender's CPU overhead o_s(m) on a core of its own, ps.
    pub o_s: Vec<Time>,
    /// The receiver's CPU overhead o_r(m) on a core of its own, ps.
    pub o_r: Vec<Time>,
}

/// Kielmann's PLogP: g(m) and L; the overheads o_s(m), o_r(m) are only reported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlogpParams {
    /// End-to-end latency L, ps.
    pub L: Time,
    /// Message sizes m of the g(m) table, bytes, increasing.
    pub sizes: Vec<u64>,
    /// Gap g(m) at each size, ps.
    pub g: Vec<Time>,
    pub common: Common,
}

/// Hockney: alpha + beta m per message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HockneyParams {
    /// Start-up time alpha, ps.
    pub alpha: Time,
    /// Time per byte beta, ps/B.
    pub beta: PsPerByte,
    pub common: Common,
}

/// PlogPT (Nomura et al.): PLogP on a tree with bottleneck sharing and the RTO rule.
#[derive(Clone, Debug, PartialEq)]
pub struct PlogptParams {
    pub topology: TopologySpec,
    /// Latency L, ps.
    pub L: Time,
    /// Message sizes m of the g(m) tables, bytes.
    pub sizes: Vec<u64>,
    /// Unidirectional gap g(m), ps.
    pub g: Vec<Time>,
    /// Bidirectional gap g_bidir(m), ps, at the same sizes.
    pub g_bidir: Option<Vec<Time>>,
    /// eps_S of the RTO rule (dimensionless).
    pub eps_S: Option<f64>,
    /// eps_T of the RTO rule, ps.
    pub eps_T: Option<Time>,
    /// T_RTO, ps (None: 200 ms).
    pub rto: Option<Time>,
    /// Which test decides that a finishing send overflows a buffer (default: eq. 14's P_B).
    pub rto_rule: RtoRule,
    /// Measured buffer capacity of the switch port feeding a link of height h, bytes, for
    /// h = 1..D (index h - 1), or one value for every height; required by [`RtoRule::Buffer`].
    pub buffer: Option<Vec<u64>>,
    pub common: Common,
}

/// How `plogpt` decides that a finishing send O overflowed a buffer; the rest of the RTO rule
/// (another Isend to O's destination node entering within eps_T with P_S, T_RTO) is the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RtoRule {
    /// PlogPT eq. 8-9: P_B(O) holds, B(O) = d(h(O)) b_c(O, f_noRTO) < m(O).
    #[default]
    Plogpt,
    /// The bytes of the sends in flight at f_noRTO (O among them, and the Isends entering
    /// within eps_T) on the most congested link direction of O's route exceed the `buffer` of
    /// that link's height.
    Buffer,
}

impl RtoRule {
    /// The names, as the platform's `tcp.rto_rule` spells them.
    pub const NAMES: &'static [&'static str] = &["plogpt", "buffer"];

    /// The rule named `name` (one of [`RtoRule::NAMES`]).
    pub fn from_name(name: &str) -> Option<RtoRule> {
        match name {
            "plogpt" => Some(RtoRule::Plogpt),
            "buffer" => Some(RtoRule::Buffer),
            _ => None,
        }
    }
}

/// Max-min sharing, weighted by route latency unless `rtt_weights` is false (`maxmin-plain`).
#[derive(Clone, Debug, PartialEq)]
pub struct MaxminParams {
    pub topology: TopologySpec,
    pub rtt_weights: bool,
    pub common: Common,
}

/// Zhu et al.'s NIC and backbone contention; `asymmetric` false is `zhu-fair`.
#[derive(Clone, Debug, PartialEq)]
pub struct ZhuParams {
    pub topology: TopologySpec,
    pub asymmetric: bool,
    pub common: Common,
}

/// PLogP costs on a max-min shared tree, with TCP's measured efficiency both ways
/// (see [`crate::contention::tcpflow`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpflowParams {
    pub topology: TopologySpec,
    /// PLogP latency L, ps.
    pub L: Time,
    /// Message sizes m of the g(m) table, bytes, increasing.
    pub sizes: Vec<u64>,
    /// PLogP gap g(m) at each size, ps.
    pub g: Vec<Time>,
    /// e_x(m) and e_d(m); None: every flow at its full max-min share.
    pub efficiency: Option<Efficiency>,
    /// Largest message, bytes: one node's messages of at most this size
    /// leave its NIC in the order they were posted; None: every flow shares.
    pub fifo_limit: Option<u64>,
    /// T_RTO, ps (None: 200 ms), for [`RtoRule::Buffer`].
    pub rto: Option<Time>,
    /// [`RtoRule::Buffer`]: messages of at most `fifo_limit` bytes whose last packets a full
    /// port drops wait T_RTO ([`crate::contention::burst`]); [`RtoRule::Plogpt`]: no RTO.
    pub rto_rule: RtoRule,
    /// Port buffer per height h = 1..D (index h - 1) or one for all, bytes; required by
    /// [`RtoRule::Buffer`].
    pub buffer: Option<Vec<u64>>,
    /// B, bytes: the token bucket of a node's link (a faster link holds B·c / b_min);
    /// None (or 0): none.
    pub bucket: Option<u64>,
    /// h, bytes: what a message puts on the wire beyond its m bytes (None: 0).
    pub overhead: Option<u64>,
    /// a, bytes: what a message's acknowledgements put into the reverse direction's token
    /// buckets (None: 0).
    pub ack: Option<u64>,
    /// [K, F, M, ...]: rules of timeouts of fan-in ([`crate::contention::tcpflow`],
    /// *Timeouts of fan-in*): a node that K or more nodes, each sending messages of at
    /// least M bytes to F or more nodes, send such messages to at once loses one of them
    /// to a retransmission timeout of T_RTO (`rto`). None: no such rule.
    pub timeouts: Option<Vec<u64>>,
    /// Timeouts at ports between switches ([`crate::contention::tcpflow`]): q(m), the
    /// chance that a message of at least M bytes sharing a link between switches with
    /// another loses its tail and arrives T_RTO (`rto`) late, at `sizes` (M the smallest).
    /// None: no such rule.
    pub port_timeouts: Option<PortTimeoutTable>,
    /// The two nodes PLogP's g(m) was measured between: a message from a node of link
    /// rate b_a is then b_a·(g(m) - m/b_p + m/b_a) of work, b_p their route's narrowest
    /// link (g(m)'s wire part at b_a). None: b_a·g(m).
    pub pair: Option<Vec<u64>>,
    pub common: Common,
}

pub use crate::contention::tcpflow::{Efficiency, FanIn};

/// q(m) of timeouts at ports between switches: `rate` (each in [0, 1]) at `sizes` (bytes,
/// increasing, at least 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PortTimeoutTable {
    pub sizes: Vec<u64>,
    pub rate: Vec<f64>,
}

impl PlogptParams {
    /// PlogPT with g(m) at `sizes` only: no g_bidir, no RTO rule, no common fields.
    pub fn new(topology: TopologySpec, L: Time, sizes: Vec<u64>, g: Vec<Time>) -> Self {
        PlogptParams {
            topology,
            L,
            sizes,
            g,
            g_bidir: None,
            eps_S: None,
            eps_T: None,
            rto: None,
            rto_rule: RtoRule::Plogpt,
            buffer: None,
            common: Common::default(),
        }
    }
}

impl MaxminParams {
    /// Max-min on `topology` without common fields.
    pub fn new(topology: TopologySpec, rtt_weights: bool) -> Self {
        MaxminParams {
            topology,
            rtt_weights,
            common: Common::default(),
        }
    }
}

impl ZhuParams {
    /// Zhu's model on `topology` without common fields.
    pub fn new(topology: TopologySpec, asymmetric: bool) -> Self {
        ZhuParams {
            topology,
            asymmetric,
            common: Common::default(),
        }
    }
}

/// The tree a contention model runs on (see [`crate::topology`]); rates bytes/s, times ps.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub enum TopologySpec {
    /// Every node on one switch.
    Crossbar {
        nodes: u64,
        nic: f64,
        nic_bidir: Option<f64>,
        latency: Time,
        d: Option<Vec<Time>>,
    },
    /// PlogPT's binary tree: b(h), d(h) per height h = 1..D, 2^D nodes.
    BinaryTree {
        nodes: Option<u64>,
        b: Vec<f64>,
        b_bidir: Option<Vec<f64>>,
        d: Option<Vec<Time>>,
        d_bidir: Option<Vec<Time>>,
        latency: Option<Vec<Time>>,
    },
    /// Racks of nodes, each rack's switch linked to one backbone switch.
    Racks {
        racks: Vec<u64>,
        /// The nodes of the racks in rack order (a permutation of 0..N-1; None: 0..N-1,
        /// each rack a run of consecutive nodes).
        members: Option<Vec<u64>>,
        nic: f64,
        nic_bidir: Option<f64>,
        nic_latency: Time,
        backbone: f64,
        backbone_latency: Time,
        /// Zhu's optical saturation threshold, flows.
        backbone_saturation: Option<u64>,
        d: Option<Vec<Time>>,
    },
    /// Leaves of `nodes_per_leaf` nodes under folded spines (alias `fat-tree`).
    LeafSpine {
        leaves: u64,
        nodes_per_leaf: u64,
        nic: f64,
        /// >= 1 (None: 1).
        oversubscription: Option<f64>,
        latency: Time,
        backbone_saturation: Option<u64>,
        d: Option<Vec<Time>>,
    },
}

impl TopologySpec {
    /// The `kind` names, as the platform's engine parameters spell them.
    pub const KINDS: &'static [&'static str] =
        &["crossbar", "binary-tree", "racks", "leaf-spine", "fat-tree"];

    /// A binary tree with b(h) only.
    pub fn binary_tree(b: &[f64]) -> TopologySpec {
        TopologySpec::BinaryTree {
            nodes: None,
            b: b.to_vec(),
            b_bidir: None,
            d: None,
            d_bidir: None,
            latency: None,
        }
    }

    /// A crossbar of `nodes` nodes with NIC rate `nic` and no latency.
    pub fn crossbar(nodes: u64, nic: f64) -> TopologySpec {
        TopologySpec::Crossbar {
            nodes,
            nic,
            nic_bidir: None,
            latency: 0,
            d: None,
        }
    }

    /// Two racks-style levels: `racks` node counts, NIC rate `nic`, backbone rate `backbone`.
    pub fn racks(racks: &[u64], nic: f64, backbone: f64) -> TopologySpec {
        TopologySpec::Racks {
            racks: racks.to_vec(),
            members: None,
            nic,
            nic_bidir: None,
            nic_latency: 0,
            backbone,
            backbone_latency: 0,
            backbone_saturation: None,
            d: None,
        }
    }
}

/// The many-to-one (incast) rule's parameters; see [`crate::contention::incast`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IncastParams {
    /// Escalation levels t_1..t_k, ps.
    pub levels: Vec<Time>,
    /// Escalation probabilities f_i(n, M) by processors n and message size M.
    pub table: Vec<IncastRow>,
    /// Seed of the draws.
    pub seed: u64,
}

/// One row of the incast table: with `n` processors and largest message `m`
/// bytes, the episode escalates to level t_i with probability `f[i]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IncastRow {
    pub n: u64,
    pub m: u64,
    pub f: Vec<f64>,
}
