//! `tcpflow` on a saved corpus: every case's prediction, to the picosecond, must equal the
//! digest stored in `tests/data/tcpflow_corpus.txt`, written by the code before the
//! incremental changes of `contention/tcpflow.rs` (docs/benchmarks.md, *tcpflow at the speed
//! of max-min*). A change that moves any finish time, message time or RTO event of any case
//! fails here. `COMMODEL_UPDATE_GOLDEN=1 cargo test --test tcpflow_corpus` rewrites the file
//! (only for a change of the model's semantics, never for a speed-up).
//!
//! The corpus: collectives with many small messages posted at once (the FIFO of posting
//! order and its levels, queues whose deeper flows finish first), exchanges (e_x), one-way streams (e_d), fan-in, token buckets,
//! wire bytes and tail drops, on racks, a binary tree, a crossbar and a leaf-spine, with
//! two ranks per node in some cases (loopback flows).

use commodel_engine::collectives::{generate, CollectiveOptions};
use commodel_engine::params::{Common, Efficiency, FanIn, RtoRule, TcpflowParams, TopologySpec};
use commodel_engine::predict::run;
use commodel_engine::{ModelParams, Outcome};
use std::fmt::Write;

const NIC: f64 = 125e6;
const US: u64 = 1_000_000;

fn racks(nodes: u64) -> TopologySpec {
    TopologySpec::Racks {
        racks: vec![nodes / 2, nodes - nodes / 2],
        members: None,
        nic: NIC,
        nic_bidir: None,
        nic_latency: 10 * US,
        backbone: (nodes / 2) as f64 * NIC / 4.0,
        backbone_latency: 10 * US,
        backbone_saturation: None,
        d: None,
    }
}

fn topology(kind: &str, nodes: u64) -> TopologySpec {
    match kind {
        "racks" => racks(nodes),
        "crossbar" => TopologySpec::crossbar(nodes, NIC),
        "tree" => TopologySpec::BinaryTree {
            nodes: Some(nodes),
            b: (0..nodes.trailing_zeros())
                .map(|h| NIC * (1.0 + 0.5 * h as f64))
                .collect(),
            b_bidir: None,
            d: None,
            d_bidir: None,
            latency: None,
        },
        "leaf-spine" => TopologySpec::LeafSpine {
            leaves: 4,
            nodes_per_leaf: nodes / 4,
            nic: NIC,
            oversubscription: Some(3.0),
            latency: 5 * US,
            backbone_saturation: None,
            d: None,
        },
        other => panic!("no topology {other}"),
    }
}

fn efficiency(fanin: bool) -> Efficiency {
    Efficiency {
        sizes: vec![4096, 16384, 65536, 262144],
        exchange: vec![0.8407, 0.8963, 0.5725, 0.5917],
        duplex: vec![0.9516, 0.885, 0.8137, 0.835],
        fanin: fanin.then(|| FanIn {
            peers: 7,
            sizes: vec![4096, 16384, 65536, 262144],
            e: vec![1.0, 0.9, 0.09, 0.33],
        }),
    }
}

/// The parameter sets of the corpus, by name.
fn params(set: &str, topo: TopologySpec, nodes: u64, ranks: u32) -> TcpflowParams {
    let mut p = TcpflowParams {
        topology: topo,
        L: 30 * US,
        sizes: vec![0, 1024, 65536],
        g: vec![10 * US, 12 * US, 10 * US + 524_288_000],
        efficiency: None,
        fifo_limit: None,
        rto: None,
        rto_rule: RtoRule::Plogpt,
        buffer: None,
        bucket: None,
        overhead: None,
        ack: None,
        timeouts: None,
        port_timeouts: None,
        pair: None,
        common: Common::default(),
    };
    if ranks as u64 > nodes {
        p.common.rank_to_node = Some((0..ranks as u64).map(|r| r % nodes).collect());
    }
    match set {
        "plain" => {}
        "fifo" => p.fifo_limit = Some(16384),
        "eff" => p.efficiency = Some(efficiency(false)),
        "calibrated" => {
            p.efficiency = Some(efficiency(true));
            p.fifo_limit = Some(16384);
        }
        "wire" => {
            p.efficiency = Some(efficiency(true));
            p.fifo_limit = Some(32768);
            p.bucket = Some(2741);
            p.overhead = Some(40);
            p.ack = Some(120);
        }
        "drops" => {
            p.efficiency = Some(efficiency(false));
            p.fifo_limit = Some(16384);
            p.rto_rule = RtoRule::Buffer;
            p.buffer = Some(vec![32768]);
            p.rto = Some(200_000 * US);
        }
        other => panic!("no parameter set {other}"),
    }
    p
}

/// FNV-1a over the outcome: every rank's finish, every message's times and every RTO event.
fn digest(o: &Outcome) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(o.makespan);
    eat(o.events);
    for &f in &o.finish {
        eat(f);
    }
    for m in &o.messages {
        for v in [
            m.src as u64,
            m.dst as u64,
            m.bytes,
            m.start,
            m.end,
            m.send as u64,
        ] {
            eat(v);
        }
        eat(m.recv as u64 | (m.rto as u64) << 32);
    }
    for e in &o.rto_events {
        for v in [e.send as u64, e.at, e.delay] {
            eat(v);
        }
    }
    h
}

/// (collective, ranks, size, nodes, topology, parameter set)
const CASES: &[(&str, u32, u64, u64, &str, &str)] = &[
    ("alltoall-basic-linear", 16, 4096, 16, "racks", "calibrated"),
    ("alltoall-basic-linear", 32, 4096, 32, "racks", "calibrated"),
    ("alltoall-basic-linear", 24, 1024, 24, "racks", "fifo"),
    (
        "alltoall-basic-linear",
        16,
        65536,
        16,
        "racks",
        "calibrated",
    ),
    ("alltoall-basic-linear", 16, 4096, 16, "tree", "calibrated"),
    ("alltoall-basic-linear", 16, 4096, 16, "leaf-spine", "wire"),
    ("alltoall-basic-linear", 32, 4096, 16, "racks", "calibrated"),
    ("alltoall-basic-linear", 16, 8192, 16, "racks", "drops"),
    (
        "alltoall-xor-pairwise",
        32,
        65536,
        32,
        "racks",
        "calibrated",
    ),
    ("alltoall-xor-pairwise", 16, 4096, 16, "crossbar", "eff"),
    (
        "alltoall-xor-post-all",
        32,
        65536,
        32,
        "racks",
        "calibrated",
    ),
    ("alltoall-xor-post-all", 16, 4096, 16, "racks", "wire"),
    ("alltoall-xor-post-all", 16, 2048, 8, "tree", "calibrated"),
    (
        "alltoall-modified-bruck",
        16,
        1024,
        16,
        "racks",
        "calibrated",
    ),
    ("allgather-ring", 16, 16384, 16, "racks", "calibrated"),
    (
        "allreduce-recursive-doubling",
        32,
        8192,
        32,
        "leaf-spine",
        "calibrated",
    ),
    ("bcast-binomial", 32, 65536, 32, "racks", "plain"),
    ("gather-basic-linear", 16, 4096, 16, "racks", "calibrated"),
    ("gather-linear-sync", 16, 4096, 16, "racks", "drops"),
    ("scatter-linear-nb", 16, 4096, 16, "crossbar", "wire"),
    ("barrier-dissemination", 32, 0, 32, "racks", "calibrated"),
    ("random-pairs", 32, 20000, 32, "racks", "calibrated"),
    ("random-pairs", 16, 3000, 8, "crossbar", "fifo"),
    // Queues deep enough that flows behind the oldest finish first, many of them.
    ("alltoall-basic-linear", 48, 4096, 48, "racks", "calibrated"),
];

#[test]
fn tcpflow_predictions_equal_the_saved_corpus() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tcpflow_corpus.txt");
    let mut got = String::new();
    for &(name, ranks, size, nodes, topo, set) in CASES {
        let mut opts = CollectiveOptions::default();
        if name == "random-pairs" {
            opts.degree = 3;
        }
        let s = generate(name, ranks, size, &opts).expect(name);
        let p = ModelParams::Tcpflow(params(set, topology(topo, nodes), nodes, ranks));
        let o = run(&s, &p, true).unwrap_or_else(|e| panic!("{name}: {e}"));
        writeln!(
            got,
            "{name} P={ranks} m={size} nodes={nodes} {topo} {set}: makespan {} digest {:016x}",
            o.makespan,
            digest(&o)
        )
        .unwrap();
    }
    if std::env::var_os("COMMODEL_UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(path).expect("tests/data/tcpflow_corpus.txt");
    for (g, w) in got.lines().zip(want.lines()) {
        assert_eq!(g, w, "tcpflow's prediction moved");
    }
    assert_eq!(got.lines().count(), want.lines().count(), "corpus size");
}
