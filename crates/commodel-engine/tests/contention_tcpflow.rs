//! `tcpflow`: PLogP's per-message costs on max-min sharing, with TCP's
//! measured efficiency for exchanges and duplex traffic. Hand-computed cases.

use commodel_engine::params::{
    Common, Efficiency, FanIn, JitterParams, PlogpParams, PortTimeoutTable, RtoRule, TcpflowParams,
    TopologySpec,
};
use commodel_engine::predict::run;
use commodel_engine::ModelParams;
use commodel_engine::{Outcome, Schedule, ScheduleBuilder};

const NIC: f64 = 1e8; // B/s
const M: u64 = 1_000_000; // bytes: 10 ms at the NIC rate
const MS: u64 = 1_000_000_000; // ps
const US: u64 = 1_000_000; // ps
const L: u64 = 50 * US;

/// g(M) = 10 ms (one point: the table is constant), L = 50 us.
fn params(nodes: u64, eff: Option<(f64, f64)>) -> ModelParams {
    ModelParams::Tcpflow(TcpflowParams {
        efficiency: eff.map(|(x, d)| Efficiency {
            sizes: vec![M],
            exchange: vec![x],
            duplex: vec![d],
            fanin: None,
        }),
        ..bare(TopologySpec::crossbar(nodes, NIC), vec![M], vec![10 * MS])
    })
}

/// Transfers (src, dst) of M bytes, all posted at t = 0.
fn flows(nodes: u32, pairs: &[(u32, u32)]) -> Schedule {
    let mut b = ScheduleBuilder::new(nodes);
    for (k, &(s, d)) in pairs.iter().enumerate() {
        b.send(s, d, M, k as u32);
        b.recv(d, s, M, k as u32);
    }
    b.build().unwrap()
}

fn end_of(o: &Outcome, src: u32, dst: u32) -> u64 {
    o.messages
        .iter()
        .find(|m| m.src == src && m.dst == dst)
        .unwrap()
        .end
}

#[test]
fn one_flow_equals_plogp() {
    // Alone a message takes g(m) + L, as in plogp, whatever the efficiency
    // tables say (one-way traffic has e = 1).
    let s = flows(2, &[(0, 1)]);
    let plogp = ModelParams::Plogp(PlogpParams {
        L,
        sizes: vec![M],
        g: vec![10 * MS],
        common: Common::default(),
    });
    let p = run(&s, &plogp, true).unwrap();
    for eff in [None, Some((0.5, 0.8))] {
        let o = run(&s, &params(2, eff), true).unwrap();
        assert_eq!(end_of(&o, 0, 1), 10 * MS + L);
        assert_eq!(o.makespan, p.makespan);
    }
}

#[test]
fn one_flow_across_racks_equals_plogp_or_the_wire_at_every_size() {
    // Racks of 2 nodes, backbone 4x the NIC: a lone cross-rack flow is NIC-bound. It
    // takes plogp's g(m) + L where g(m) >= m/NIC (up to 64 KiB here), and m/NIC + L
    // where the table's gap is below the wire time (100 kB: g 991 us, wire 1 ms; 1 MiB:
    // g 9 ms, wire 10.5 ms): no link carries data above its rate.
    let sizes = vec![1024, 65536, 1 << 20];
    let g = vec![100 * US, 700 * US, 9 * MS];
    let topo = TopologySpec::racks(&[2, 2], NIC, 4.0 * NIC);
    for m in [1u64, 1000, 4096, 100_000, 1 << 20, 3 << 20] {
        let mut b = ScheduleBuilder::new(4);
        b.send(0, 3, m, 0);
        b.recv(3, 0, m, 0);
        let s = b.build().unwrap();
        let t = ModelParams::Tcpflow(bare(topo.clone(), sizes.clone(), g.clone()));
        let p = ModelParams::Plogp(PlogpParams {
            L,
            sizes: sizes.clone(),
            g: g.clone(),
            common: Common::default(),
        });
        let (t, p) = (run(&s, &t, true).unwrap(), run(&s, &p, true).unwrap());
        let wire = (m as f64 / NIC * 1e12) as u64 + L;
        if m <= 65536 {
            assert!(wire < p.makespan, "m = {m}");
            assert_eq!(t.makespan, p.makespan, "m = {m}");
        } else {
            assert!(wire > p.makespan, "m = {m}");
            assert!(
                t.makespan.abs_diff(wire) <= 1,
                "m = {m}: {} {}",
                t.makespan,
                wire
            );
        }
    }
}

/// `tcpflow` with PLogP's L and g(m) only: no efficiency, order, drops, buckets or pair.
fn bare(topology: TopologySpec, sizes: Vec<u64>, g: Vec<u64>) -> TcpflowParams {
    TcpflowParams {
        topology,
        L,
        sizes,
        g,
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
    }
}

/// Racks [1, 1, 2], a backbone at 0.8x the NIC, g(M) = M/0.8·NIC + 1 ms = 13.5 ms measured
/// between nodes 0 and 1 (so across the backbone); `pair` as given.
fn narrow_backbone(pair: Option<Vec<u64>>) -> ModelParams {
    let topology = TopologySpec::racks(&[1, 1, 2], NIC, 0.8 * NIC);
    ModelParams::Tcpflow(TcpflowParams {
        pair,
        ..bare(topology, vec![M], vec![13_500 * US])
    })
}

#[test]
fn g_s_wire_part_is_taken_at_the_sender_s_rate() {
    // g(M) = 13.5 ms holds 12.5 ms of wire time at the pair's 80 MB/s backbone; at a
    // sender's 100 MB/s NIC, g_a(M) = 13.5 - 12.5 + 10 = 11 ms, 1.1 MB of work. Within a
    // rack that is 11 ms; across the backbone 1.1 MB at 80 MB/s, 13.75 ms. Without the
    // pair the work is b_a·g(M) = 1.35 MB: 16.875 ms across the backbone.
    let t = narrow_backbone(Some(vec![0, 1]));
    let within = run(&flows(4, &[(2, 3)]), &t, true).unwrap();
    assert!(end_of(&within, 2, 3).abs_diff(11 * MS + L) <= 1);
    let across = run(&flows(4, &[(0, 1)]), &t, true).unwrap();
    assert!(end_of(&across, 0, 1).abs_diff(13_750 * US + L) <= 1);
    let legacy = run(&flows(4, &[(0, 1)]), &narrow_backbone(None), true).unwrap();
    assert!(end_of(&legacy, 0, 1).abs_diff(16_875 * US + L) <= 1);
    // Node 0 sends to the three others at once (a linear bcast): 3 x 1.1 MB through
    // rack 0's 80 MB/s uplink, 41.25 ms.
    let bcast = run(&flows(4, &[(0, 1), (0, 2), (0, 3)]), &t, true).unwrap();
    for d in 1..4 {
        assert!(
            end_of(&bcast, 0, d).abs_diff(41_250 * US + L) <= 2,
            "to {d}"
        );
    }
}

#[test]
fn a_pair_outside_the_topology_is_refused_naming_the_field() {
    for pair in [vec![0, 4], vec![1, 1], vec![0], vec![0, 1, 2]] {
        let e = run(
            &flows(4, &[(0, 1)]),
            &narrow_backbone(Some(pair.clone())),
            true,
        )
        .err()
        .unwrap_or_else(|| panic!("{pair:?} accepted"));
        assert!(e.to_string().contains("pair"), "{pair:?}: {e}");
    }
}

#[test]
fn an_exchange_runs_at_e_x() {
    // 0 <-> 1: each direction has its own link direction (max-min share B),
    // times e_x = 0.5: 20 ms each, + L. Without tables: 10 ms, as plogp.
    let s = flows(2, &[(0, 1), (1, 0)]);
    let o = run(&s, &params(2, Some((0.5, 0.8))), true).unwrap();
    assert_eq!(end_of(&o, 0, 1), 20 * MS + L);
    assert_eq!(end_of(&o, 1, 0), 20 * MS + L);
    let o = run(&s, &params(2, None), true).unwrap();
    assert_eq!(end_of(&o, 1, 0), 10 * MS + L);
}

#[test]
fn an_exchange_plus_a_third_flow_into_one_of_them() {
    // 0 <-> 1 and 2 -> 0, e_x = 0.5, e_d = 0.8, work B g(M) = 1e6 B each.
    // Max-min gives 0 -> 1 the whole B, 1 -> 0 and 2 -> 0 half of 0's down
    // link each. The exchange runs at e_x: 0 -> 1 at 0.5 B, 1 -> 0 at 0.25 B.
    // 2 -> 0 is duplex (0 sends at B: u = 1): it keeps its 0.5 B, and each of
    // its bytes adds (1/e_d - 1)/B = 2.5 ns to its arrival.
    // 0 -> 1 and 2 -> 0 end on the wire at 20 ms; 2 -> 0 arrives 2.5 ms
    // later. 1 -> 0 has 5e5 B left, alone at B: 5 ms more (25 ms).
    let s = flows(3, &[(0, 1), (1, 0), (2, 0)]);
    let o = run(&s, &params(3, Some((0.5, 0.8))), true).unwrap();
    assert_eq!(end_of(&o, 0, 1), 20 * MS + L);
    assert_eq!(end_of(&o, 2, 0), 22_500 * US + L);
    assert_eq!(end_of(&o, 1, 0), 25 * MS + L);
}

#[test]
fn rounds_of_four_nodes_xor_and_shifted() {
    // XOR round (0 <-> 1, 2 <-> 3): every flow is an exchange: 10 ms / 0.5.
    let o = run(
        &flows(4, &[(0, 1), (1, 0), (2, 3), (3, 2)]),
        &params(4, Some((0.5, 0.8))),
        true,
    )
    .unwrap();
    assert!(o.messages.iter().all(|m| m.end == 20 * MS + L));
    // Shifted round (i -> i+1): every node sends and receives, with
    // different peers: duplex, 10 ms / 0.8.
    let o = run(
        &flows(4, &[(0, 1), (1, 2), (2, 3), (3, 0)]),
        &params(4, Some((0.5, 0.8))),
        true,
    )
    .unwrap();
    assert!(
        o.messages.iter().all(|m| m.end == 12_500 * US + L),
        "{:?}",
        o.messages
    );
}

#[test]
fn efficiency_is_interpolated_between_sizes() {
    // e_x = 0.5 at 0.5 MB and 1.0 at 1.5 MB: 0.75 at 1 MB, 10 ms / 0.75.
    let mut p = params(2, None);
    if let ModelParams::Tcpflow(t) = &mut p {
        t.efficiency = Some(Efficiency {
            sizes: vec![M / 2, 3 * M / 2],
            exchange: vec![0.5, 1.0],
            duplex: vec![1.0, 1.0],
            fanin: None,
        });
    }
    let o = run(&flows(2, &[(0, 1), (1, 0)]), &p, true).unwrap();
    let want = (10.0 * MS as f64 / 0.75).round() as u64 + L;
    assert!(end_of(&o, 0, 1).abs_diff(want) <= 1, "{}", end_of(&o, 0, 1));
}

#[test]
fn one_segment_loses_nothing_below_the_smallest_measured_size() {
    // e_x = 0.5 measured from 4096 B; g(m) = 10 ms at every size (one point), so
    // an exchange takes 10 ms / e_x(m) + L. One segment (1448 B) or less: e = 1;
    // 2772 B, halfway from 1448 to 4096: e = 0.75; 4096 B and beyond: 0.5.
    let table = |first: u64| {
        let mut p = params(2, None);
        if let ModelParams::Tcpflow(t) = &mut p {
            t.efficiency = Some(Efficiency {
                sizes: vec![first, M],
                exchange: vec![0.5, 0.5],
                duplex: vec![1.0, 1.0],
                fanin: None,
            });
        }
        p
    };
    let exchange = |m: u64, p: &ModelParams| {
        let o = run(&sized(2, m, &[(0, 1), (1, 0)]), p, true).unwrap();
        end_of(&o, 0, 1)
    };
    let p = table(4096);
    for (m, e) in [
        (1, 1.0),
        (1024, 1.0),
        (1448, 1.0),
        (2772, 0.75),
        (4096, 0.5),
        (8192, 0.5),
    ] {
        let want = (10.0 * MS as f64 / e).round() as u64 + L;
        assert!(
            exchange(m, &p).abs_diff(want) <= 1,
            "{m} B: {}",
            exchange(m, &p)
        );
    }
    // A table measured at one segment or below is taken as it is: 0.5 at 1 KiB.
    assert_eq!(exchange(1024, &table(1024)), 20 * MS + L);
}

#[test]
fn bad_efficiency_is_refused_naming_the_field() {
    for (eff, field) in [
        (Some((0.0, 0.8)), "efficiency.exchange"),
        (Some((0.5, 1.5)), "efficiency.duplex"),
        (Some((f64::NAN, 0.8)), "efficiency.exchange"),
    ] {
        let e = run(&flows(2, &[(0, 1)]), &params(2, eff), true).unwrap_err();
        assert!(e.to_string().contains(field), "{e}");
    }
}

#[test]
fn duplex_penalty_scales_with_the_load_on_the_reverse_path() {
    // 0 -> 1, 2 -> 0, 2 -> 3 (e_x 0.5, e_d 0.8). Max-min: 2's up link is shared, 0.5 B
    // each for 2 -> 0 and 2 -> 3; 0 -> 1 gets B. Reverse paths (where ACKs queue):
    // 0 -> 1: 0's down link carries 0.5 B, u = 0.5, e = 1 - 0.2 * 0.5 = 0.9: its 1e6 B
    // cross in 10 ms and arrive (1/0.9 - 1) * 10 ms later, at 11.111 ms;
    // 2 -> 0: 0's up link carries B, u = 1, e = e_d: until 10 ms each of its bytes adds
    // (1/0.8 - 1)/B (5e5 B: 1.25 ms), then nothing (0's up link is idle);
    // 2 -> 3: nothing back. Both of 2's flows end on the wire at 20 ms; 2 -> 0 arrives
    // at 21.25 ms.
    let s = flows(4, &[(0, 1), (2, 0), (2, 3)]);
    let o = run(&s, &params(4, Some((0.5, 0.8))), true).unwrap();
    let near = |got: u64, ps: f64| got.abs_diff(ps.round() as u64 + L) <= 2;
    assert!(near(end_of(&o, 0, 1), 1e12 / 90.0), "{}", end_of(&o, 0, 1));
    assert!(near(end_of(&o, 2, 3), 20e9), "{}", end_of(&o, 2, 3));
    assert!(near(end_of(&o, 2, 0), 21.25e9), "{}", end_of(&o, 2, 0));
}

#[test]
fn duplex_delays_each_message_without_slowing_a_stream() {
    // Shifted round on 4 nodes (i -> i+1), k = 4 messages per flow posted at once,
    // e_d = 0.8. Each node's 4 messages share its NIC: B/4 each, all on the wire until
    // 40 ms. Each byte adds (1/0.8 - 1)/B, 2.5 ms per message: all arrive at 42.5 ms,
    // where a loss of rate would give 4 * 10 ms / 0.8 = 50 ms (what `measure efficiency`
    // times, one message per flow, is 12.5 ms either way). Measured on two-rack-8
    // (study/tcpflow-history.md, *Why the duplex loss is a delay*): e_d of 128 KiB 0.86, 0.93, 0.97 at k = 1,
    // 4, 16. With FIFO order the messages go one by one: 12.5, 22.5, 32.5, 42.5 ms.
    let ring: Vec<(u32, u32)> = (0..4)
        .flat_map(|_| (0..4u32).map(|i| (i, (i + 1) % 4)))
        .collect();
    let s = flows(4, &ring);
    let o = run(&s, &params(4, Some((0.5, 0.8))), true).unwrap();
    assert!(
        o.messages.iter().all(|m| m.end == 42_500 * US + L),
        "{:?}",
        o.messages
    );
    let o = run(&s, &fifo(4, Some((0.5, 0.8)), M), true).unwrap();
    let mut ends: Vec<u64> = o
        .messages
        .iter()
        .filter(|m| m.src == 0)
        .map(|m| m.end)
        .collect();
    ends.sort_unstable();
    let want: Vec<u64> = [12_500, 22_500, 32_500, 42_500]
        .iter()
        .map(|t| t * US + L)
        .collect();
    assert_eq!(ends, want);
}

/// `params` with the FIFO limit `limit`.
fn fifo(nodes: u64, eff: Option<(f64, f64)>, limit: u64) -> ModelParams {
    let mut p = params(nodes, eff);
    if let ModelParams::Tcpflow(t) = &mut p {
        t.fifo_limit = Some(limit);
    }
    p
}

#[test]
fn small_messages_of_one_sender_leave_in_posting_order() {
    // 0 posts M to 1, 2, 3 at once (tags 0, 1, 2: that order). At most the limit:
    // the NIC sends them one after the other, each alone at B: 10, 20, 30 ms (+ L).
    let s = flows(4, &[(0, 1), (0, 2), (0, 3)]);
    let o = run(&s, &fifo(4, None, M), true).unwrap();
    assert_eq!(end_of(&o, 0, 1), 10 * MS + L);
    assert_eq!(end_of(&o, 0, 2), 20 * MS + L);
    assert_eq!(end_of(&o, 0, 3), 30 * MS + L);
    // Above the limit they share the NIC: all three at 30 ms,
    // as without a limit.
    for p in [fifo(4, None, M - 1), params(4, None)] {
        let o = run(&s, &p, true).unwrap();
        assert!(
            o.messages.iter().all(|m| m.end == 30 * MS + L),
            "{:?}",
            o.messages
        );
    }
}

#[test]
fn a_waiting_small_message_is_no_traffic() {
    // 0 posts M to 1 then to 2; 1 posts M to 0. FIFO limit M, e_x 0.5, e_d 0.8.
    // 0 -> 1 and 1 -> 0 are an exchange: each at 0.5 B until 0 -> 1 ends at 20 ms
    // (1 -> 0 ends then too). 0 -> 2 waited: it is not an exchange partner and not
    // load on anyone's reverse path; from 20 ms it runs alone, one-way, at B: 30 ms.
    let s = flows(3, &[(0, 1), (0, 2), (1, 0)]);
    let o = run(&s, &fifo(3, Some((0.5, 0.8)), M), true).unwrap();
    assert_eq!(end_of(&o, 0, 1), 20 * MS + L);
    assert_eq!(end_of(&o, 1, 0), 20 * MS + L);
    assert_eq!(end_of(&o, 0, 2), 30 * MS + L);
}

#[test]
fn a_small_message_held_back_downstream_leaves_the_nic_to_the_next() {
    // 0 -> 2 and 1 -> 2 share 2's down link: B/2 each, 20 ms. 0's second message,
    // to 3, is behind 0 -> 2 in 0's queue, but 0 -> 2 uses only half of 0's NIC:
    // 0 -> 3 gets the other half (strict priority, work-conserving), 20 ms too.
    let s = flows(4, &[(0, 2), (1, 2), (0, 3)]);
    let o = run(&s, &fifo(4, None, M), true).unwrap();
    assert_eq!(end_of(&o, 0, 2), 20 * MS + L);
    assert_eq!(end_of(&o, 1, 2), 20 * MS + L);
    assert_eq!(end_of(&o, 0, 3), 20 * MS + L);
    // Three in 0's queue: 0 -> 2 gets B/2 at level 0 beside 1 -> 2; 0 -> 2' (level 1)
    // finds 2's link full and waits; 0 -> 3 (level 2) takes the B/2 left of 0's NIC. At 20 ms 0 -> 2 and 1 -> 2 end
    // and 0 -> 3 ends (1e6 B at B/2); then 0 -> 2' alone at B: 30 ms.
    let s = flows(4, &[(0, 2), (1, 2), (0, 2), (0, 3)]);
    let o = run(&s, &fifo(4, None, M), true).unwrap();
    let mut ends: Vec<(u32, u32, u64)> = o.messages.iter().map(|m| (m.src, m.dst, m.end)).collect();
    ends.sort();
    assert_eq!(
        ends,
        vec![
            (0, 2, 20 * MS + L),
            (0, 2, 30 * MS + L),
            (0, 3, 20 * MS + L),
            (1, 2, 20 * MS + L)
        ]
    );
}

#[test]
fn small_messages_into_one_port_take_their_bytes_at_its_rate() {
    // A token-bucket PLogP table: g = 1 ps up to 2 KiB (an idle shaper's burst
    // passes at once). Seven 2 KiB messages into node 0 at once still cross its
    // down link at the NIC rate: 7 * 2048 B / NIC, each finishing then + L
    // (max-min: each gets NIC / 7); without the floor they took g + L.
    let mut b = ScheduleBuilder::new(8);
    for s in 1..8 {
        b.send(s, 0, 2048, 0);
        b.recv(0, s, 2048, 0);
    }
    let s = b.build().unwrap();
    let t = bucketed(None);
    let o = run(&s, &t, true).unwrap();
    let wire = (7.0 * 2048.0 / NIC * 1e12) as u64;
    for m in &o.messages {
        assert!(
            m.end.abs_diff(wire + L) <= 1,
            "{} -> {}: {}",
            m.src,
            m.dst,
            m.end
        );
    }
    // One alone: its own bytes at the NIC rate, 20.48 us + L.
    let mut b = ScheduleBuilder::new(8);
    b.send(1, 0, 2048, 0);
    b.recv(0, 1, 2048, 0);
    let o = run(&b.build().unwrap(), &t, true).unwrap();
    assert!(o.makespan.abs_diff(20_480_000 + L) <= 1, "{}", o.makespan);
}

/// The token-bucket table above (g = 1 ps up to 2 KiB) with a bucket of `bucket` bytes
/// at the nodes' links, on a crossbar of 8 nodes.
fn bucketed(bucket: Option<u64>) -> ModelParams {
    bucketed_on(TopologySpec::crossbar(8, NIC), bucket)
}

/// [`bucketed`] on `topology`.
fn bucketed_on(topology: TopologySpec, bucket: Option<u64>) -> ModelParams {
    ModelParams::Tcpflow(TcpflowParams {
        topology,
        L,
        sizes: vec![2048, 65536],
        g: vec![1, 655_360 * US / 1000],
        efficiency: None,
        fifo_limit: None,
        rto: None,
        rto_rule: RtoRule::Plogpt,
        buffer: None,
        bucket,
        overhead: None,
        ack: None,
        timeouts: None,
        port_timeouts: None,
        pair: None,
        common: Common::default(),
    })
}

#[test]
fn a_token_bucket_lets_what_fits_through_at_once() {
    let t = bucketed(Some(3000));
    // One 2 KiB message alone fits: g(m) + L, as PLogP measured it (20.48 us + L without).
    let mut b = ScheduleBuilder::new(8);
    b.send(1, 0, 2048, 0);
    b.recv(0, 1, 2048, 0);
    let one = b.build().unwrap();
    assert_eq!(run(&one, &t, true).unwrap().makespan, 1 + L);
    let o = run(&one, &bucketed(None), true).unwrap();
    assert!(o.makespan.abs_diff(20_480_000 + L) <= 1, "{}", o.makespan);
    // Seven into node 0 at once: its down link passes its 3000 bytes at once and the rest
    // at its rate, so the last ends at (7 * 2048 - 3000) B / NIC + L = 113.36 us + L (the
    // first gets 2048 B, the second the 952 left, the others none).
    let mut b = ScheduleBuilder::new(8);
    for s in 1..8 {
        b.send(s, 0, 2048, 0);
        b.recv(0, s, 2048, 0);
    }
    let o = run(&b.build().unwrap(), &t, true).unwrap();
    assert!(o.makespan.abs_diff(113_360_000 + L) <= 2, "{}", o.makespan);
    // The bucket refills at the link's rate: a second message 10 us after the first (which
    // took 1 ps) finds 2048 - 1000 B still held, gets 1952 B through at once and sends the
    // other 96 B in 0.96 us, ending at 10.96 us + 1 ps + L.
    let mut b = ScheduleBuilder::new(8);
    let s1 = b.send(1, 0, 2048, 0);
    let c = b.calc(1, 10_000);
    b.requires(c, s1);
    let s2 = b.send(1, 0, 2048, 1);
    b.requires(s2, c);
    b.recv(0, 1, 2048, 0);
    b.recv(0, 1, 2048, 1);
    let o = run(&b.build().unwrap(), &t, true).unwrap();
    assert!(o.makespan.abs_diff(10_960_001 + L) <= 2, "{}", o.makespan);
}

#[test]
fn a_faster_link_holds_its_rate_s_worth_of_tokens() {
    // Racks of 3, backbone twice the NIC: B = 3000 at the nodes' links, 6000 at the
    // backbone's. Three 2 KiB messages across at once: the first two fit (the backbone
    // has 6000 - 2048 left for the second), the third gets the 1904 B left and sends
    // 144 B at the NIC's rate: 1.44 us + L (with 3000 B at the backbone too, the second
    // would get 952 B and the third none).
    let p = bucketed_on(TopologySpec::racks(&[3, 3], NIC, 2.0 * NIC), Some(3000));
    let mut b = ScheduleBuilder::new(6);
    for s in 0..3 {
        b.send(s, s + 3, 2048, 0);
        b.recv(s + 3, s, 2048, 0);
    }
    let s = b.build().unwrap();
    let o = run(&s, &p, true).unwrap();
    assert!(o.makespan.abs_diff(1_440_000 + L) <= 2, "{}", o.makespan);
    let ends: Vec<u64> = o.messages.iter().map(|m| m.end).collect();
    assert_eq!(ends.iter().filter(|&&e| e <= 2 + L).count(), 2, "{ends:?}");
}

/// [`bucketed`] with each message's wire overhead h and acknowledgement bytes a.
fn wired(bucket: Option<u64>, h: u64, a: u64) -> ModelParams {
    match bucketed(bucket) {
        ModelParams::Tcpflow(mut p) => {
            p.overhead = Some(h);
            p.ack = Some(a);
            ModelParams::Tcpflow(p)
        }
        _ => unreachable!(),
    }
}

#[test]
fn a_message_puts_its_headers_on_the_wire() {
    // h = 100 B: seven 2 KiB messages into node 0 put 7 * 2148 B into its down link, which
    // passes 3000 at once: the last ends at (15036 - 3000) B / NIC + L = 120.36 us + L
    // (113.36 us without h).
    let mut b = ScheduleBuilder::new(8);
    for s in 1..8 {
        b.send(s, 0, 2048, 0);
        b.recv(0, s, 2048, 0);
    }
    let seven = b.build().unwrap();
    let o = run(&seven, &wired(Some(3000), 100, 0), true).unwrap();
    assert!(o.makespan.abs_diff(120_360_000 + L) <= 2, "{}", o.makespan);
    // A lone message that fits with its headers still costs g(m): 1 ps + L.
    let mut b = ScheduleBuilder::new(8);
    b.send(1, 0, 2048, 0);
    b.recv(0, 1, 2048, 0);
    let one = b.build().unwrap();
    assert_eq!(
        run(&one, &wired(Some(3000), 100, 0), true)
            .unwrap()
            .makespan,
        1 + L
    );
    // Without buckets every byte goes at the rate: (2048 + 100) B / NIC = 21.48 us + L.
    let o = run(&one, &wired(None, 100, 0), true).unwrap();
    assert!(o.makespan.abs_diff(21_480_000 + L) <= 1, "{}", o.makespan);
}

#[test]
fn acknowledgements_take_tokens_in_the_reverse_direction() {
    // a = 1000 B: node 1 sends 2 KiB to node 0, and node 0 (posted next, at the same
    // instant) 2 KiB to node 2. The first's acknowledgements hold 1000 B of node 0's up
    // link, so the second gets 2000 B through at once and sends 48 B at the rate: it ends
    // at 0.48 us + L, the first at 1 ps + L (without a, both at 1 ps + L).
    let mut b = ScheduleBuilder::new(8);
    b.send(1, 0, 2048, 0);
    b.recv(0, 1, 2048, 0);
    b.send(0, 2, 2048, 1);
    b.recv(2, 0, 2048, 1);
    let s = b.build().unwrap();
    let o = run(&s, &wired(Some(3000), 0, 1000), true).unwrap();
    assert!(o.makespan.abs_diff(480_000 + L) <= 2, "{}", o.makespan);
    assert_eq!(
        run(&s, &wired(Some(3000), 0, 0), true).unwrap().makespan,
        1 + L
    );
    // They go the other way only: a message from node 3 into node 0, on node 0's down
    // link as the first one's data, gets the 952 B left there with a or without, and ends
    // at (2048 - 952) B / NIC + L = 10.96 us + L.
    let mut b = ScheduleBuilder::new(8);
    b.send(1, 0, 2048, 0);
    b.recv(0, 1, 2048, 0);
    b.send(3, 0, 2048, 1);
    b.recv(0, 3, 2048, 1);
    let s = b.build().unwrap();
    let with = run(&s, &wired(Some(3000), 0, 1000), true).unwrap();
    let without = run(&s, &wired(Some(3000), 0, 0), true).unwrap();
    assert_eq!(with.makespan, without.makespan);
    assert!(
        with.makespan.abs_diff(10_960_000 + L) <= 2,
        "{}",
        with.makespan
    );
}

/// A message that fits TCP's initial window (10 segments of 1448 bytes): sent whole
/// without waiting for acknowledgements. 100 us on the wire at B.
const W: u64 = 10_000;

/// tcpflow with the FIFO limit W, tail drops at ports of `buffer` bytes per height (one
/// value: every height), T_RTO 200 ms, on `topology`; g(W) = 100 us = W / B.
fn burst(topology: TopologySpec, buffer: Vec<u64>) -> ModelParams {
    ModelParams::Tcpflow(TcpflowParams {
        topology,
        L,
        sizes: vec![W],
        g: vec![100 * US],
        efficiency: None,
        fifo_limit: Some(W),
        rto: Some(200 * MS),
        rto_rule: RtoRule::Buffer,
        buffer: Some(buffer),
        bucket: None,
        overhead: None,
        ack: None,
        timeouts: None,
        port_timeouts: None,
        pair: None,
        common: Common::default(),
    })
}

/// Transfers (src, dst) of `m` bytes, all posted at t = 0 in this order.
fn sized(nodes: u32, m: u64, pairs: &[(u32, u32)]) -> Schedule {
    let mut b = ScheduleBuilder::new(nodes);
    for (k, &(s, d)) in pairs.iter().enumerate() {
        b.send(s, d, m, k as u32);
        b.recv(d, s, m, k as u32);
    }
    b.build().unwrap()
}

/// The buffer, in bytes of 1514-byte frames, that holds `payload` bytes of TCP payload
/// (1448 per frame), rounded down.
fn frames_holding(payload: u64) -> u64 {
    payload * 1514 / 1448
}

#[test]
fn a_full_port_drops_the_tails_that_end_while_it_overflows() {
    // Crossbar at B = 1e8 B/s. 1 posts A then B' to 0, 2 posts C to 0, each W = 10 kB
    // (100 us on the wire), all at t = 0 and sent whole. Injections: A and C in
    // [0, 100 us], B' in [100, 200 us]. 0's port gets 2B and drains B until 100 us (its
    // queue grows at B: 9 kB at 90 us, where the buffer holding 9 kB of payload is full),
    // then B (B' alone): it stays full but no longer overflows. A and C end at 100 us
    // while it overflows: their tails are lost. B' ends at 200 us with arrivals equal to
    // the drain: no loss. Fluid: A and C share 0's down link (B/2 each) to 200 us; B'
    // waits, then alone: 300 us. A and C arrive T_RTO after their fluid finish.
    let s = sized(3, W, &[(1, 0), (1, 0), (2, 0)]);
    let topo = || TopologySpec::crossbar(3, NIC);
    let o = run(&s, &burst(topo(), vec![frames_holding(9_000)]), true).unwrap();
    let mut ends: Vec<(u32, u32, u64)> = o.messages.iter().map(|m| (m.src, m.dst, m.end)).collect();
    ends.sort();
    let rto = 200 * MS;
    assert_eq!(
        ends,
        vec![
            (1, 0, 300 * US + L),
            (1, 0, 200 * US + rto + L),
            (2, 0, 200 * US + rto + L)
        ]
    );
    let mut rtos: Vec<(u32, u64, u64)> = o
        .rto_events
        .iter()
        .map(|r| (r.src, r.at, r.delay))
        .collect();
    rtos.sort();
    assert_eq!(rtos, vec![(1, 200 * US, rto), (2, 200 * US, rto)]);
    // A buffer that holds the 10 kB the queue reaches at 100 us: no loss, the fluid times.
    let o = run(&s, &burst(topo(), vec![frames_holding(10_000) + 2]), true).unwrap();
    assert!(o.rto_events.is_empty(), "{:?}", o.rto_events);
    assert_eq!(o.makespan, 300 * US + L);
    // Messages above the FIFO limit are sent as the window allows (closed loop): no tail drop.
    let mut p = burst(topo(), vec![frames_holding(9_000)]);
    if let ModelParams::Tcpflow(t) = &mut p {
        t.fifo_limit = Some(W - 1);
    }
    assert!(run(&s, &p, true).unwrap().rto_events.is_empty());
}

#[test]
fn only_the_initial_window_of_a_message_is_a_burst() {
    // 1 and 2 post 100 kB each to 0 at once (FIFO limit 1 MB). Only their first windows,
    // 14480 B each (145 us at B), leave open loop: 0's port queues 14480 B by 145 us. A
    // buffer holding 14 kB overflows then: both tails are lost (each arrives T_RTO after
    // its fluid finish, 2 ms: 200 kB at B); one holding 14.5 kB never fills.
    let s = sized(3, 100_000, &[(1, 0), (2, 0)]);
    let with = |buffer: u64| {
        let mut p = burst(TopologySpec::crossbar(3, NIC), vec![buffer]);
        if let ModelParams::Tcpflow(t) = &mut p {
            t.fifo_limit = Some(1_000_000);
        }
        run(&s, &p, true).unwrap()
    };
    let o = with(frames_holding(14_000));
    assert_eq!(o.rto_events.len(), 2);
    assert_eq!(o.makespan, 2 * MS + 200 * MS + L);
    let o = with(frames_holding(14_500));
    assert!(o.rto_events.is_empty(), "{:?}", o.rto_events);
    assert_eq!(o.makespan, 2 * MS + L);
}

#[test]
fn a_port_behind_a_narrower_link_gets_no_more_than_that_link_carries() {
    // Racks of 2 nodes, backbone B (as narrow as a NIC). 0 and 1 post W to 2 at t = 0.
    // The backbone port out of rack 0 (height 2) gets 2B and drains B: it queues W by
    // 100 us. 2's port (height 1) gets what the backbone carries, at most B: never a queue.
    let s = sized(4, W, &[(0, 2), (1, 2)]);
    let topo = || TopologySpec::racks(&[2, 2], NIC, NIC);
    // tiny host ports, a backbone port that holds W: no loss
    let o = run(&s, &burst(topo(), vec![1514, frames_holding(W) + 2]), true).unwrap();
    assert!(o.rto_events.is_empty(), "{:?}", o.rto_events);
    assert_eq!(o.makespan, 200 * US + L);
    // a backbone port that holds W / 2: both tails lost at 100 us; the fluid finish is
    // 200 us (B/2 each on the backbone), the data arrives T_RTO later
    let o = run(
        &s,
        &burst(topo(), vec![1 << 30, frames_holding(W / 2)]),
        true,
    )
    .unwrap();
    assert_eq!(o.rto_events.len(), 2);
    assert!(o.messages.iter().all(|m| m.end == 200 * US + 200 * MS + L));
}

#[test]
fn tail_drops_need_the_port_buffers() {
    let s = sized(2, W, &[(0, 1)]);
    let mut p = burst(TopologySpec::crossbar(2, NIC), vec![1514]);
    if let ModelParams::Tcpflow(t) = &mut p {
        t.buffer = None;
    }
    let e = run(&s, &p, true).unwrap_err();
    assert!(e.to_string().contains("buffer"), "{e}");
    let p = burst(
        TopologySpec::racks(&[1, 1], NIC, NIC),
        vec![1514, 1514, 1514],
    );
    let e = run(&s, &p, true).unwrap_err();
    assert!(e.to_string().contains("one per height h = 1..2"), "{e}");
}

/// `params(nodes, (1, 1))` with a fan-in table e_f = `e` at M, measured with `peers`.
fn fanin(nodes: u64, peers: u64, e: f64) -> ModelParams {
    fanin_on(nodes, (1.0, 1.0), peers, e)
}

/// `params(nodes, (e_x, e_d))` with a fan-in table e_f = `e` at M, measured with `peers`.
fn fanin_on(nodes: u64, pair: (f64, f64), peers: u64, e: f64) -> ModelParams {
    let mut p = params(nodes, Some(pair));
    if let ModelParams::Tcpflow(t) = &mut p {
        if let Some(eff) = &mut t.efficiency {
            eff.fanin = Some(FanIn {
                peers,
                sizes: vec![M],
                e: vec![e],
            });
        }
    }
    p
}

#[test]
fn fan_in_delays_the_flows_into_a_node_that_several_nodes_send_to() {
    // 1 -> 0 and 2 -> 0 at once share 0's down link: each moves its 10 ms of work at
    // NIC/2 and ends at 20 ms. With e_f = 0.5 measured with 2 senders, each second at
    // NIC/2 adds (1/0.5 - 1)·(1/2) s: 10 ms more, 30 ms + L. Measured with 3 senders,
    // 2 of them count half: e = 1 - 0.5·(2 - 1)/(3 - 1) = 0.75, 20 ms·(1/3)·(1/2) =
    // 3.333 ms more.
    let s = flows(3, &[(1, 0), (2, 0)]);
    let o = run(&s, &fanin(3, 2, 0.5), true).unwrap();
    for src in [1, 2] {
        assert_eq!(end_of(&o, src, 0), 30 * MS + L);
    }
    let o = run(&s, &fanin(3, 3, 0.5), true).unwrap();
    let want = 20 * MS + (20.0 * MS as f64 / 6.0).round() as u64 + L;
    for src in [1, 2] {
        assert!(
            end_of(&o, src, 0).abs_diff(want) <= 1,
            "{}",
            end_of(&o, src, 0)
        );
    }
    // Without the table, 20 ms + L.
    let o = run(&s, &params(3, Some((1.0, 1.0))), true).unwrap();
    assert_eq!(end_of(&o, 1, 0), 20 * MS + L);
}

#[test]
fn one_sender_is_no_fan_in() {
    // Two messages 1 -> 0 at once (one sender) and a lone message: no fan-in delay,
    // 20 ms + L and 10 ms + L as without the table.
    let o = run(&flows(2, &[(1, 0), (1, 0)]), &fanin(2, 2, 0.5), true).unwrap();
    assert_eq!(
        o.makespan,
        run(&flows(2, &[(1, 0), (1, 0)]), &params(2, None), true)
            .unwrap()
            .makespan
    );
    let o1 = run(&flows(2, &[(1, 0)]), &fanin(2, 2, 0.5), true).unwrap();
    assert_eq!(end_of(&o1, 1, 0), 10 * MS + L);
}

#[test]
fn fan_in_above_1_takes_the_pair_losses_back() {
    // As an_exchange_plus_a_third_flow_into_one_of_them (0 <-> 1 and 2 -> 0, e_x = 0.5,
    // e_d = 0.8), with e_f = 1.5 measured with 2 senders. Node 0 has 2 senders: f = 1.5;
    // node 1 one: f = 1. 0 -> 1 keeps e_x: 0.5 B, ends on the wire at 20 ms. 1 -> 0 runs
    // at min(1, 0.5·1.5) = 0.75 of its half share: 0.375 B, 7.5e5 B moved by 20 ms. 2 -> 0
    // (duplex, u = 1, e = 0.8) accrues max(0, 1/(0.8·1.5) - 1) = 0: 20 ms, not 22.5 ms.
    // From 20 ms 1 -> 0 is alone (one sender, reverse path idle): 2.5e5 B at B, 2.5 ms.
    let s = flows(3, &[(0, 1), (1, 0), (2, 0)]);
    let o = run(&s, &fanin_on(3, (0.5, 0.8), 2, 1.5), true).unwrap();
    for (src, dst, want) in [(0, 1, 20 * MS), (2, 0, 20 * MS), (1, 0, 22_500 * US)] {
        let end = end_of(&o, src, dst);
        assert!(end.abs_diff(want + L) <= 1, "{src} -> {dst}: {end}");
    }
    // e_f = 8 (FANIN_MAX): 1 -> 0 at min(1, 0.5·8) = its whole half share, 20 ms; never
    // faster than max-min.
    let o = run(&s, &fanin_on(3, (0.5, 0.8), 2, 8.0), true).unwrap();
    assert!(
        end_of(&o, 1, 0).abs_diff(20 * MS + L) <= 1,
        "{:?}",
        o.messages
    );
    // Where the pair rules lose nothing (e_x = e_d = 1) there is nothing to take back.
    let o = run(&s, &fanin_on(3, (1.0, 1.0), 2, 8.0), true).unwrap();
    let plain = run(&s, &params(3, Some((1.0, 1.0))), true).unwrap();
    assert_eq!(o.makespan, plain.makespan);
}

#[test]
fn a_fan_in_table_out_of_range_is_refused_naming_it() {
    for (p, field) in [
        (fanin(3, 1, 0.5), "efficiency.fanin.peers"),
        (fanin(3, 2, 0.0), "efficiency.fanin.e"),
        (fanin(3, 2, 8.5), "efficiency.fanin.e"),
    ] {
        let err = run(&flows(3, &[(1, 0), (2, 0)]), &p, true).unwrap_err();
        assert!(err.to_string().contains(field), "{err}");
    }
}

/// `params` with timeouts of fan-in: one rule K = `senders`, F = 1, M = `size`; T_RTO =
/// `rto`.
fn fanin_timeouts(nodes: u64, senders: u64, size: u64, rto: u64) -> ModelParams {
    with_rules(nodes, vec![senders, 1, size], rto)
}

fn with_rules(nodes: u64, rules: Vec<u64>, rto: u64) -> ModelParams {
    let mut p = params(nodes, None);
    if let ModelParams::Tcpflow(t) = &mut p {
        t.timeouts = Some(rules);
        t.rto = Some(rto);
    }
    p
}

fn sorted_ends(o: &Outcome) -> Vec<(u32, u32, u64)> {
    let mut ends: Vec<(u32, u32, u64)> = o.messages.iter().map(|m| (m.src, m.dst, m.end)).collect();
    ends.sort_by_key(|&(s, d, e)| (d, e, s));
    ends
}

#[test]
fn a_fan_in_of_k_senders_costs_one_of_them_a_timeout() {
    // 1, 2, 3 send M to 0 at once: B/3 each, all delivered at 30 ms. With K = 3 and M the
    // episode's first delivered message stops for T_RTO = 200 ms from t_j = 0, then needs
    // M / B = 10 ms: it arrives at max(30, 0 + 200 + 10) = 210 ms; the others at 30 ms.
    let s = flows(4, &[(1, 0), (2, 0), (3, 0)]);
    let o = run(&s, &fanin_timeouts(4, 3, M, 200 * MS), true).unwrap();
    let ends: Vec<u64> = sorted_ends(&o).iter().map(|e| e.2).collect();
    assert_eq!(ends, vec![30 * MS + L, 30 * MS + L, 210 * MS + L]);
    assert_eq!(o.rto_events.len(), 1, "{:?}", o.rto_events);
    assert_eq!(
        (o.rto_events[0].at, o.rto_events[0].delay),
        (30 * MS, 180 * MS)
    );
    // Fewer senders than K, or messages below M: no timeout, the fluid times.
    for p in [
        fanin_timeouts(4, 4, M, 200 * MS),
        fanin_timeouts(4, 3, M + 1, 200 * MS),
    ] {
        let o = run(&s, &p, true).unwrap();
        assert!(o.rto_events.is_empty(), "{:?}", o.rto_events);
        assert_eq!(o.makespan, 30 * MS + L);
    }
    // T_RTO = 5 ms: the others keep the port busy past t_j + T_RTO + M / B = 15 ms; the
    // timeout is counted and costs nothing.
    let o = run(&s, &fanin_timeouts(4, 3, M, 5 * MS), true).unwrap();
    assert_eq!(o.makespan, 30 * MS + L);
    assert_eq!(o.rto_events.len(), 1);
    assert_eq!(o.rto_events[0].delay, 0);
}

#[test]
fn every_node_receiving_from_k_senders_has_its_own_episode() {
    // 2, 3, 4 each send M to 0 and to 1: every sender's NIC carries two flows (2B/3 used),
    // every receiver's port three: B/3 each, all delivered at 30 ms. Two episodes (0, 1):
    // one timeout each, 210 ms.
    let s = flows(5, &[(2, 0), (3, 0), (4, 0), (2, 1), (3, 1), (4, 1)]);
    let o = run(&s, &fanin_timeouts(5, 3, M, 200 * MS), true).unwrap();
    let ends = sorted_ends(&o);
    let late: Vec<u32> = ends
        .iter()
        .filter(|e| e.2 == 210 * MS + L)
        .map(|e| e.1)
        .collect();
    assert_eq!(late, vec![0, 1], "{ends:?}");
    assert_eq!(
        ends.iter().filter(|e| e.2 == 30 * MS + L).count(),
        4,
        "{ends:?}"
    );
    let mut to: Vec<u32> = o.rto_events.iter().map(|r| r.dst).collect();
    to.sort();
    assert_eq!(to, vec![0, 1]);
}

#[test]
fn a_rule_with_a_fan_out_needs_senders_that_send_to_as_many() {
    // 2, 3, 4 send M to 0 and nothing else: a rule (K = 3, F = 2) needs the message's
    // sender to have messages in flight to 2 nodes or more: no episode; with F = 1, one:
    // 0's port takes three flows at B/3 (30 ms), the timeout costs 210 ms.
    let s = flows(5, &[(2, 0), (3, 0), (4, 0)]);
    let o = run(&s, &with_rules(5, vec![3, 2, M], 200 * MS), true).unwrap();
    assert!(o.rto_events.is_empty(), "{:?}", o.rto_events);
    let o = run(&s, &with_rules(5, vec![3, 2, M, 3, 1, M], 200 * MS), true).unwrap();
    assert_eq!(o.rto_events.len(), 1, "{:?}", o.rto_events);
    assert_eq!((o.rto_events[0].dst, o.makespan), (0, 210 * MS + L));
    // every sender of an all-to-all of 4 nodes sends to 3: (K = 3, F = 3) fires at each node
    let a2a: Vec<(u32, u32)> = (0..4)
        .flat_map(|i| (0..4).filter(move |&j| j != i).map(move |j| (i, j)))
        .collect();
    let o = run(
        &flows(4, &a2a),
        &with_rules(4, vec![3, 3, M], 200 * MS),
        true,
    )
    .unwrap();
    assert_eq!(o.rto_events.len(), 4, "{:?}", o.rto_events);
    // and not where it asks for more receivers than there are
    let o = run(
        &flows(4, &a2a),
        &with_rules(4, vec![3, 4, M], 200 * MS),
        true,
    )
    .unwrap();
    assert!(o.rto_events.is_empty(), "{:?}", o.rto_events);
}

#[test]
fn messages_waiting_in_their_nic_s_queue_count_toward_a_fan_in() {
    // Small messages leave a NIC in posting order (FIFO limit M): 1 posts to 0 and then to
    // 2, 2 to 0 and then 1, 3 to 0 then 1: the messages in flight to 0 come from 1, 2, 3 at
    // once though each NIC sends one at a time. K = 3 into 0: one timeout.
    let s = flows(4, &[(1, 0), (1, 2), (2, 0), (2, 1), (3, 0), (3, 1)]);
    let mut p = with_rules(4, vec![3, 1, M], 200 * MS);
    if let ModelParams::Tcpflow(t) = &mut p {
        t.fifo_limit = Some(M);
    }
    let o = run(&s, &p, true).unwrap();
    let to: Vec<u32> = o.rto_events.iter().map(|r| r.dst).collect();
    assert_eq!(to, vec![0], "{:?}", o.rto_events);
}

#[test]
fn a_noisy_run_classifies_messages_by_their_size_as_scheduled() {
    // The fan-in of the first test (K = 3 senders of M into 0) in runs with per-message
    // noise: the noise scales each message's work (half of them fall below M bytes at
    // sigma = 0.5), not what the rules take it for: every run has its timeout at node 0.
    let s = flows(4, &[(1, 0), (2, 0), (3, 0)]);
    let mut late = 0;
    for seed in 1..=40 {
        let mut p = fanin_timeouts(4, 3, M, 200 * MS);
        if let ModelParams::Tcpflow(t) = &mut p {
            t.common.jitter = Some(JitterParams {
                sigma: 0.5,
                seed,
                ..Default::default()
            });
        }
        let o = run(&s, &p, true).unwrap();
        let to: Vec<u32> = o.rto_events.iter().map(|r| r.dst).collect();
        assert_eq!(to, vec![0], "seed {seed}: {:?}", o.rto_events);
        late += usize::from(o.makespan > 200 * MS);
    }
    assert_eq!(late, 40);
}

#[test]
fn bad_timeouts_are_refused_naming_the_field() {
    let s = flows(4, &[(1, 0), (2, 0), (3, 0)]);
    for p in [
        fanin_timeouts(4, 1, M, 200 * MS),
        fanin_timeouts(4, 3, 0, 200 * MS),
        with_rules(4, vec![3, 0, M], 200 * MS),
        with_rules(4, vec![3, 1], 200 * MS),
        with_rules(4, vec![], 200 * MS),
    ] {
        let err = run(&s, &p, true).unwrap_err().to_string();
        assert!(err.contains("timeouts"), "{err}");
    }
}

/// Racks [2, 2] (nodes 0, 1 | 2, 3) joined at the NIC rate, g(M) = 10 ms, T_RTO = 200 ms, and
/// timeouts at ports between switches with q = `q` from `size` bytes on.
fn ported(q: f64, size: u64) -> ModelParams {
    ModelParams::Tcpflow(TcpflowParams {
        rto: Some(200 * MS),
        port_timeouts: Some(PortTimeoutTable {
            sizes: vec![size],
            rate: vec![q],
        }),
        ..bare(
            TopologySpec::racks(&[2, 2], NIC, NIC),
            vec![M],
            vec![10 * MS],
        )
    })
}

#[test]
fn messages_sharing_a_port_between_switches_draw_a_lost_tail() {
    // 0 -> 2 and 1 -> 3 share rack 0's uplink (and rack 1's downlink): B/2 each, both
    // delivered by the fluid at 20 ms. With q = 1 both lose their tails: each arrives
    // T_RTO = 200 ms after its fluid finish, at 220 ms, with an RTO event of 200 ms.
    let s = flows(4, &[(0, 2), (1, 3)]);
    let o = run(&s, &ported(1.0, M), true).unwrap();
    let ends: Vec<u64> = o.messages.iter().map(|m| m.end).collect();
    assert_eq!(ends, vec![220 * MS + L, 220 * MS + L]);
    assert_eq!(o.rto_events.len(), 2, "{:?}", o.rto_events);
    assert!(o
        .rto_events
        .iter()
        .all(|e| (e.at, e.delay) == (20 * MS, 200 * MS)));
    // q = 0, or messages below M: the fluid times, no timeout
    for p in [ported(0.0, M), ported(1.0, M + 1)] {
        let o = run(&s, &p, true).unwrap();
        assert!(o.rto_events.is_empty(), "{:?}", o.rto_events);
        assert_eq!(o.makespan, 20 * MS + L);
    }
}

#[test]
fn a_message_alone_on_a_port_between_switches_draws_nothing() {
    // 0 -> 2 and 3 -> 1 cross between the racks in opposite directions, and 1 -> 0 stays
    // in its rack: no link direction between switches carries two; no timeout at q = 1.
    for pairs in [&[(0, 2), (3, 1)][..], &[(0, 2), (1, 0)][..]] {
        let o = run(&flows(4, pairs), &ported(1.0, M), true).unwrap();
        assert!(o.rto_events.is_empty(), "{pairs:?}: {:?}", o.rto_events);
        assert_eq!(o.makespan, 10 * MS + L, "{pairs:?}");
    }
}

#[test]
fn a_message_draws_its_lost_tail_from_the_run_s_seed() {
    // q = 1/2: over 200 noisy runs of the two messages about half of the 400 draws lose
    // (binomial: 160-240 at 4 sigma); the same seed gives the same run.
    let s = flows(4, &[(0, 2), (1, 3)]);
    let noisy = |seed: u64| {
        let mut p = ported(0.5, M);
        if let ModelParams::Tcpflow(t) = &mut p {
            t.common.jitter = Some(JitterParams {
                sigma: 0.1,
                seed,
                ..Default::default()
            });
        }
        run(&s, &p, false).unwrap()
    };
    let lost: usize = (1..=200).map(|k| noisy(k).rto_events.len()).sum();
    assert!((160..=240).contains(&lost), "{lost} of 400");
    for k in [3, 17] {
        let (a, b) = (noisy(k), noisy(k));
        assert_eq!(
            (a.makespan, a.rto_events.len()),
            (b.makespan, b.rto_events.len())
        );
    }
}

#[test]
fn bad_port_timeouts_are_refused_naming_the_field() {
    let s = flows(4, &[(0, 2)]);
    for (sizes, rate) in [
        (vec![], vec![]),
        (vec![M], vec![0.5, 0.5]),
        (vec![0], vec![0.5]),
        (vec![M, M], vec![0.1, 0.2]),
        (vec![M], vec![1.5]),
        (vec![M], vec![f64::NAN]),
    ] {
        let mut p = ported(0.5, M);
        if let ModelParams::Tcpflow(t) = &mut p {
            t.port_timeouts = Some(PortTimeoutTable { sizes, rate });
        }
        let err = run(&s, &p, false).unwrap_err();
        assert!(err.to_string().contains("port_timeouts"), "{err}");
    }
}
