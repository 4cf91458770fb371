//! `zhu`: the asymmetric property of Zhu et al. section 5.2 (golden), the
//! fairness-only variant, optical saturation (eq. 5) and redistribution.

use commodel_engine::params::{TopologySpec, ZhuParams};
use commodel_engine::predict::run;
use commodel_engine::ModelParams;
use commodel_engine::{Schedule, ScheduleBuilder};

const NIC: f64 = 940e6 / 8.0; // B/s: 940 Mbit/s
const M: u64 = 1_175_000; // bytes: 10 ms at 940 Mbit/s
const MS: u64 = 1_000_000_000; // ps

/// `ins` nodes send M bytes to node 0 while node 0 sends M bytes to node `ins + 1`.
fn in_out(ins: u32) -> Schedule {
    let p = ins + 2;
    let mut b = ScheduleBuilder::new(p);
    for src in 1..=ins {
        b.send(src, 0, M, src);
        b.recv(0, src, M, src);
    }
    b.send(0, p - 1, M, 0);
    b.recv(p - 1, 0, M, 0);
    b.build().unwrap()
}

/// `model` (zhu, zhu-fair or maxmin-plain) on a crossbar of `nodes` nodes.
fn crossbar(model: &str, nodes: u64) -> ModelParams {
    let topo = TopologySpec::crossbar(nodes, NIC);
    match model {
        "zhu" => ModelParams::Zhu(ZhuParams::new(topo, true)),
        "zhu-fair" => ModelParams::Zhu(ZhuParams::new(topo, false)),
        _ => ModelParams::Maxmin(commodel_engine::params::MaxminParams::new(topo, false)),
    }
}

fn end_of(o: &commodel_engine::Outcome, src: u32, dst: u32) -> u64 {
    o.messages
        .iter()
        .find(|m| m.src == src && m.dst == dst)
        .unwrap()
        .end
}

#[test]
fn two_in_one_out_each_get_470() {
    let o = run(&in_out(2), &crossbar("zhu", 4), true).unwrap();
    // 470 Mbit/s each: M bytes take 20 ms, for all three flows.
    for (s, d) in [(1, 0), (2, 0), (0, 3)] {
        assert_eq!(end_of(&o, s, d), 20 * MS, "{s} -> {d}");
    }
    // Fairness only (and max-min): the outgoing flow keeps the full 940.
    for model in ["zhu-fair", "maxmin-plain"] {
        let o = run(&in_out(2), &crossbar(model, 4), true).unwrap();
        assert_eq!(end_of(&o, 0, 3), 10 * MS, "{model}");
        assert_eq!(end_of(&o, 1, 0), 20 * MS, "{model}");
    }
}

#[test]
fn twelve_in_one_out_total_is_13_12_of_940() {
    let o = run(&in_out(12), &crossbar("zhu", 14), true).unwrap();
    // Each of the 13 flows runs at 940/12 Mbit/s: M bytes take 120 ms; the
    // NIC carries 13 x 940/12 Mbit/s in total.
    for m in &o.messages {
        assert_eq!(m.end, 120 * MS, "{m:?}");
    }
    let total_rate = 13.0 * M as f64 / (120.0 * MS as f64 / 1e12);
    assert!((total_rate - 13.0 / 12.0 * NIC).abs() < 1e-6 * NIC);
}

#[test]
fn bandwidth_is_redistributed_when_flows_end() {
    // 2 in (M and M/2 bytes) + 1 out: all at 470 until the short one ends at
    // 10 ms; then 1 in + 1 out on the NIC: 940 each (symmetric). The long
    // incoming flow has M/2 left: 5 ms more; the outgoing too.
    let mut b = ScheduleBuilder::new(4);
    b.send(1, 0, M, 1);
    b.recv(0, 1, M, 1);
    b.send(2, 0, M / 2, 2);
    b.recv(0, 2, M / 2, 2);
    b.send(0, 3, M, 0);
    b.recv(3, 0, M, 0);
    let s = b.build().unwrap();
    let o = run(&s, &crossbar("zhu", 4), true).unwrap();
    assert_eq!(end_of(&o, 2, 0), 10 * MS);
    assert_eq!(end_of(&o, 1, 0), 15 * MS);
    assert_eq!(end_of(&o, 0, 3), 15 * MS);
}

#[test]
fn optical_backbone_saturates_beyond_threshold() {
    // Two racks of 15, backbone 9.4 Gbit/s with saturation threshold 10 flows.
    let mut topo = TopologySpec::racks(&[15, 15], NIC, 10.0 * NIC);
    if let TopologySpec::Racks {
        backbone_saturation,
        ..
    } = &mut topo
    {
        *backbone_saturation = Some(10);
    }
    let params = ModelParams::Zhu(ZhuParams::new(topo, true));
    for flows in [10u32, 15] {
        let mut b = ScheduleBuilder::new(30);
        for i in 0..flows {
            b.send(i, 15 + i, M, 0);
            b.recv(15 + i, i, M, 0);
        }
        let o = run(&b.build().unwrap(), &params, false).unwrap();
        let expect = if flows <= 10 {
            10 * MS
        } else {
            (M as f64 / (10.0 * NIC / flows as f64) * 1e12).round() as u64
        };
        assert_eq!(o.makespan, expect, "{flows} flows");
    }
}
