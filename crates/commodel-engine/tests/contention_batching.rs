//! Rates are recomputed once per instant, for the flows a change can affect.

use commodel_engine::collectives::{generate, CollectiveOptions};
use commodel_engine::contention::maxmin::MaxminNet;
use commodel_engine::engine::simulate;
use commodel_engine::params::TopologySpec;
use commodel_engine::topology::Topology;

fn two_racks(p: u32) -> Topology {
    let half = p / 2;
    let spec = TopologySpec::Racks {
        racks: vec![half as u64, half as u64],
        members: None,
        nic: 125e6,
        nic_bidir: None,
        nic_latency: 10_000_000,
        backbone: half as f64 * 125e6 / 4.0,
        backbone_latency: 10_000_000,
        backbone_saturation: None,
        d: None,
    };
    Topology::build(&spec, "maxmin").unwrap()
}

#[test]
fn synchronous_rounds_recompute_each_flow_once() {
    for p in [16u32, 64] {
        let s = generate(
            "alltoall-xor-pairwise",
            p,
            65536,
            &CollectiveOptions::default(),
        )
        .unwrap();
        let mut net = MaxminNet::new(two_racks(p), (0..p).collect(), true);
        simulate(&s, &mut net, None, false).unwrap();
        // Every round starts P flows at one instant and ends them at one instant:
        // one recomputation per flow (when it joins), none when they all end.
        assert_eq!(net.recomputed(), (p * (p - 1)) as u64, "P = {p}");
    }
}
