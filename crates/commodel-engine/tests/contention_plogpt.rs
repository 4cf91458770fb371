//! `plogpt` golden tests: the worked example of Nomura et al. III-E (Fig. 12),
//! Alltoall A = eq. 23, Alltoall B = eq. 25 (with and without RTOs, eq. 24),
//! and bad input.

use commodel_engine::collectives::{generate, CollectiveOptions};
use commodel_engine::params::{ModelParams, PlogptParams, RtoRule, TopologySpec};
use commodel_engine::{goal, predict, Outcome, Schedule, SimError};

const S: u64 = 1_000_000_000_000; // ps per second

fn example_schedule() -> Schedule {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/schedules/plogpt-example.goal"
    );
    goal::read(std::path::Path::new(path)).expect("example parses")
}

fn run(s: &Schedule, p: &PlogptParams, record: bool) -> Result<Outcome, SimError> {
    predict::run(s, &ModelParams::Plogpt(p.clone()), record)
}

/// The tree of `p` with buffer delays d(h).
fn set_d(p: &mut PlogptParams, delays: &[u64]) {
    if let TopologySpec::BinaryTree { d, .. } = &mut p.topology {
        *d = Some(delays.to_vec());
    }
}

/// b(1) = 3, b(2) = 4 (bytes/s), g(m) = 8 s, L = 3 s, as in Section III-E.
fn example_params(with_rto: bool) -> PlogptParams {
    let mut p = PlogptParams::new(
        TopologySpec::binary_tree(&[3.0, 4.0]),
        3 * S,
        vec![1],
        vec![8 * S],
    );
    if with_rto {
        set_d(&mut p, &[S, 2 * S]);
        p.eps_S = Some(1e-3);
        p.eps_T = Some(S / 2);
        p.rto = Some(200 * S);
    }
    p
}

fn msg(o: &Outcome, src: u32, dst: u32) -> (u64, u64) {
    let m = o
        .messages
        .iter()
        .find(|m| m.src == src && m.dst == dst)
        .expect("message");
    (m.start, m.end)
}

#[test]
fn section_3e_example_finishes_at_26() {
    for with_rto in [false, true] {
        let o = run(&example_schedule(), &example_params(with_rto), true).unwrap();
        assert_eq!(o.makespan, 26 * S);
        // Fig. 12: first Isends 0..12 (b_c = b(2)/2 = 2, eq. 16-17), their Irecvs
        // finish at 12 + L = 15; rank 0's Isend to 3 enters at 15, runs alone at
        // min(b(1), b(2)) = 3: 24/3 = 8, finishes at 23; rank 3's Irecv at 26.
        assert_eq!(o.finish, vec![23 * S, 15 * S, 15 * S, 26 * S]);
        for (a, b) in [(0, 2), (2, 0), (1, 3), (3, 1)] {
            assert_eq!(msg(&o, a, b), (0, 15 * S));
        }
        assert_eq!(msg(&o, 0, 3), (15 * S, 26 * S));
        assert!(o.rto_events.is_empty(), "no Isend enters at 12 (III-E)");
    }
}

fn alltoall(name: &str, p: u32, m: u64) -> Schedule {
    generate(name, p, m, &CollectiveOptions::default()).unwrap()
}

/// A tree whose top heights are bottlenecks: b(h) = 2^(h-1) b1 up to h = 3,
/// then 4 b1, 5 b1 (all quotients exact in binary floating point).
fn bottleneck_b(d: u32) -> Vec<f64> {
    let b1 = 1e8;
    (1..=d)
        .map(|h| match h {
            1..=3 => b1 * (1u64 << (h - 1)) as f64,
            4 => 4.0 * b1,
            _ => 5.0 * b1 * (1u64 << (h - 5)) as f64,
        })
        .collect()
}

/// eq. 23's sum: sum_h 2^(h-1) (2^(h-1) b(1)/b(h) g(m)), in ps.
fn tree_sum(b: &[f64], g: u64) -> u64 {
    (1..=b.len())
        .map(|h| {
            let k = 1u64 << (h - 1);
            let gc = (k as f64 * b[0] / b[h - 1] * g as f64).round() as u64;
            k * gc
        })
        .sum()
}

const G: u64 = 1_000_000_000; // 1 ms
const L: u64 = 50_000_000; // 50 us

fn tree_params(b: &[f64]) -> PlogptParams {
    PlogptParams::new(TopologySpec::binary_tree(b), L, vec![0], vec![G])
}

#[test]
fn alltoall_a_equals_eq_23() {
    for d in 1..=6u32 {
        let p = 1u32 << d;
        let b = bottleneck_b(d);
        let o = run(
            &alltoall("alltoall-xor-pairwise", p, 100_000),
            &tree_params(&b),
            false,
        )
        .unwrap();
        let expect = tree_sum(&b, G) + (p as u64 - 1) * L;
        assert_eq!(o.makespan, expect, "P = {p}");
        assert!(o.finish.iter().all(|&f| f == expect), "symmetric: P = {p}");
    }
}

#[test]
fn alltoall_b_equals_eq_25_without_rto() {
    for d in 1..=6u32 {
        let p = 1u32 << d;
        let b = bottleneck_b(d);
        let o = run(
            &alltoall("alltoall-xor-post-all", p, 100_000),
            &tree_params(&b),
            true,
        )
        .unwrap();
        assert_eq!(o.makespan, tree_sum(&b, G) + L, "P = {p}");
        assert!(o.rto_events.is_empty());
    }
}

/// P_S of eq. 5, written out independently of the engine.
fn p_s(b: &[f64], d: &[u64], eps: f64, h: usize, h2: usize) -> bool {
    let x = (2f64.powi(h2 as i32 - h as i32) * b[h - 1] / b[h2 - 1]).ln();
    let y = (d[h - 1] as f64 / d[h2 - 1] as f64).ln();
    x * x + y * y > eps
}

#[test]
fn alltoall_b_grows_by_n_rto_times_t_rto() {
    let t_rto = 200_000_000_000u64; // 200 ms
    let m = 100_000u64;
    for d_count in 2..=6u32 {
        let p = 1u32 << d_count;
        let b = bottleneck_b(d_count);
        // Buffer delays: equal at h = 2, 3 (with b(h+1) = 2 b(h): no switch
        // there, P_S false), different elsewhere.
        let d: Vec<u64> = (1..=d_count as u64)
            .map(|h| match h {
                1 => 100_000_000,
                2 | 3 => 400_000_000,
                _ => 400_000_000 + 100_000_000 * h,
            })
            .collect();
        let eps = 1e-3;
        let mut params = tree_params(&b);
        set_d(&mut params, &d);
        params.eps_S = Some(eps);
        params.eps_T = Some(10_000_000);
        params.rto = Some(t_rto);
        // N_RTO: heights h < D with P_S(h, h+1) and P_B at height h:
        // B = d(h) b_c = d(h) b(h) / 2^(h-1) < m.
        let n_rto = (1..d_count as usize)
            .filter(|&h| {
                let bc = b[h - 1] / (1u64 << (h - 1)) as f64;
                p_s(&b, &d, eps, h, h + 1) && (d[h - 1] as f64 / S as f64) * bc < m as f64
            })
            .count() as u64;
        let o = run(&alltoall("alltoall-xor-post-all", p, m), &params, true).unwrap();
        assert_eq!(
            o.makespan,
            tree_sum(&b, G) + L + n_rto * t_rto,
            "P = {p}, N_RTO = {n_rto}"
        );
        assert_eq!(
            o.rto_events.len() as u64,
            n_rto * p as u64,
            "every rank, P = {p}"
        );
        assert!(o.rto_events.iter().all(|e| e.delay == t_rto));
        let rto_msgs = o.messages.iter().filter(|x| x.rto).count() as u64;
        assert_eq!(rto_msgs, n_rto * p as u64);
        if d_count >= 4 {
            assert!(n_rto >= 1, "the test must exercise RTOs");
        }
        // Alltoall A never has an Isend entering at another's finish: no RTO.
        let a = run(&alltoall("alltoall-xor-pairwise", p, m), &params, false).unwrap();
        assert_eq!(a.makespan, tree_sum(&b, G) + (p as u64 - 1) * L);
        assert!(a.rto_events.is_empty());
        // A small message fills no buffer (P_B false): no RTO.
        let small = run(&alltoall("alltoall-xor-post-all", p, 10), &params, false).unwrap();
        assert!(small.rto_events.is_empty());
    }
}

#[test]
fn bidirectional_tables_used_when_sender_also_receives() {
    // Two nodes exchange (bidirectional) vs one-way send.
    let exchange = goal::parse(
        "num_ranks 2\nrank 0 {\na: send 1b to 1\nb: recv 1b from 1\n}\nrank 1 {\na: send 1b to 0\nb: recv 1b from 0\n}\n",
        "x.goal",
    )
    .unwrap();
    let one_way = goal::parse(
        "num_ranks 2\nrank 0 {\na: send 1b to 1\n}\nrank 1 {\nb: recv 1b from 0\n}\n",
        "y.goal",
    )
    .unwrap();
    let mut params = PlogptParams::new(
        TopologySpec::BinaryTree {
            nodes: None,
            b: vec![100.0],
            b_bidir: Some(vec![50.0]),
            d: None,
            d_bidir: None,
            latency: None,
        },
        7,
        vec![0],
        vec![1000],
    );
    params.g_bidir = Some(vec![3000]);
    // Bidirectional: work b_bi(1) g_bi = 50 * 3000 ps, rate b_bi(1) = 50: 3000 ps.
    let o = run(&exchange, &params, false).unwrap();
    assert_eq!(o.makespan, 3000 + 7);
    let o = run(&one_way, &params, false).unwrap();
    assert_eq!(o.makespan, 1000 + 7);
}

#[test]
fn bad_input_names_the_field() {
    let s = alltoall("alltoall-xor-pairwise", 8, 10);
    // An unknown `topology.kind` is refused by the bindings (tests/test_engine_params.py).
    let mut short_d = tree_params(&[1.0, 1.0, 1.0]);
    set_d(&mut short_d, &[1]);
    let cases = [
        (tree_params(&[3.0, 4.0]), "8 ranks"),
        (tree_params(&[3.0, 0.0, 1.0]), "topology.b[1]"),
        (tree_params(&[3.0, -4.0, 1.0]), "topology.b[1]"),
        (short_d, "topology.d"),
    ];
    for (p, needle) in cases {
        let e = run(&s, &p, false).unwrap_err().to_string();
        assert!(e.contains(needle), "{e} should name {needle}");
    }
    let mut p = tree_params(&[1.0, 2.0, 4.0]);
    p.common.rank_to_node = Some(vec![0, 1, 2, 3, 4, 5, 6, 9]);
    let e = run(&s, &p, false).unwrap_err().to_string();
    assert!(e.contains("rank_to_node[7]"), "{e}");
    // The paper's clamp: b(h+1) > 2 b(h) acts as 2 b(h).
    let clamped = run(&s, &tree_params(&[1e8, 9e8, 4e8]), false).unwrap();
    let same = run(&s, &tree_params(&[1e8, 2e8, 4e8]), false).unwrap();
    assert_eq!(clamped.makespan, same.makespan);
}

#[test]
fn several_ranks_per_node_share_the_nic() {
    // 4 ranks on 2 nodes: ranks 0,1 on node 0 both send to node 1 at once.
    let s = goal::parse(
        "num_ranks 4\nrank 0 {\na: send 1b to 2\n}\nrank 1 {\na: send 1b to 3\n}\nrank 2 {\nb: recv 1b from 0\n}\nrank 3 {\nb: recv 1b from 1\n}\n",
        "z.goal",
    )
    .unwrap();
    let mut params = PlogptParams::new(TopologySpec::binary_tree(&[100.0]), 0, vec![0], vec![1000]);
    params.common.rank_to_node = Some(vec![0, 0, 1, 1]);
    let o = run(&s, &params, false).unwrap();
    assert_eq!(
        o.makespan, 2000,
        "two flows on one link: half the rate each"
    );
}

/// two-rack-8's shape: 2 racks of 4 nodes, 100 Mbit/s NICs (12.5e6 B/s), 200 Mbit/s rack
/// uplinks; g(m) = m / b(1) at 4 KiB and 64 KiB, L = 50 us; d = 100 us, 200 us (P_S(1, 2):
/// ln(2 b(1)/b(2))^2 + ln(d(1)/d(2))^2 = 0 + 0.48 > eps_S = 1e-3); T_RTO = 200 ms; ports of
/// 32 KiB toward a host, 128 KiB on the rack uplinks.
fn two_rack_params(rule: RtoRule) -> PlogptParams {
    let mut racks = TopologySpec::racks(&[4, 4], 12.5e6, 25e6);
    if let TopologySpec::Racks { d, .. } = &mut racks {
        *d = Some(vec![100_000_000, 200_000_000]);
    }
    let mut p = PlogptParams::new(
        racks,
        L,
        vec![4096, 65536],
        vec![327_680_000, 5_242_880_000],
    );
    p.eps_S = Some(1e-3);
    p.eps_T = Some(10_000_000);
    p.rto = Some(200 * S / 1000);
    p.rto_rule = rule;
    p.buffer = Some(vec![32 * 1024, 128 * 1024]);
    p
}

#[test]
fn buffer_rule_alltoall_b_on_two_racks() {
    // Alltoall B on 8 ranks: rank n sends to n xor i in rounds i = 1..7, one blocking send
    // at a time. Rounds 1-3 stay in the rack (height 1, one flow per NIC: g(m) each), rounds
    // 4-7 cross the uplinks (height 2, 4 flows per uplink direction: b(2)/4 = b(1)/2, 2 g(m)
    // each): 11 g(m) + L without RTOs. Only at the end of round 3 does an Isend of another
    // height (n xor 4 -> n, P_S(1, 2)) enter toward the node a send finishes at.
    let t_rto = 200 * S / 1000;
    for (m, g) in [(4096u64, 327_680_000u64), (65536, 5_242_880_000)] {
        let s = alltoall("alltoall-xor-post-all", 8, m);
        let base = 11 * g + L;
        // eq. 14: B(O) = d(1) b_c = 100 us * 12.5e6 B/s = 1250 B < m at both sizes: every
        // rank's round-3 send times out.
        let o = run(&s, &two_rack_params(RtoRule::Plogpt), true).unwrap();
        assert_eq!(o.rto_events.len(), 8, "eq. 14, m = {m}");
        assert_eq!(o.makespan, base + t_rto, "eq. 14, m = {m}");
        // Buffer rule: O's route is n xor 3's uplink (the sender's own NIC, not a candidate)
        // and n's downlink, where O is the only flow; with the Isend n xor 4 -> n that enters
        // as O finishes, 2m bytes head for n's 32 KiB port: 8 KiB fits, 128 KiB does not.
        let o = run(&s, &two_rack_params(RtoRule::Buffer), true).unwrap();
        if m == 4096 {
            assert!(o.rto_events.is_empty(), "2 x 4 KiB = 8 KiB <= 32 KiB");
            assert_eq!(o.makespan, base);
        } else {
            assert_eq!(
                o.rto_events.len(),
                8,
                "2 x 64 KiB = 128 KiB > 32 KiB, every rank"
            );
            assert!(o.rto_events.iter().all(|e| e.delay == t_rto));
            assert_eq!(o.makespan, base + t_rto);
        }
        // A 256 KiB port holds the 128 KiB: no RTO at either size.
        let mut deep = two_rack_params(RtoRule::Buffer);
        deep.buffer = Some(vec![256 * 1024]);
        let o = run(&s, &deep, true).unwrap();
        assert!(o.rto_events.is_empty(), "m = {m}");
        assert_eq!(o.makespan, base);
    }
}

#[test]
fn buffer_rule_counts_the_flows_sharing_the_port() {
    // Racks [2, 2] (NICs 1e6 B/s, uplinks 1e7 B/s), g(m) = m / b(1), L = 0. Nodes 1 (same
    // rack, height 1), 2 and 3 (height 2) send 8 KiB to node 0 at once; the three flows share
    // node 0's downlink at 1e6/3 B/s (the uplinks carry 2 flows at 5e6 each) and end together
    // at t1 = 3 * 8.192 ms. Node 1 then sends 1 KiB more to node 0 (entering at t1, height
    // 1: P_S(2, 1) holds for the sends of nodes 2 and 3, P_S(1, 1) not for node 1's).
    // Bytes toward node 0's port at t1: 3 * 8192 + 1024 = 25600. A port of 24 KiB (24576)
    // overflows: nodes 2 and 3's sends time out, their ranks finish at t1 + T_RTO. A port of
    // exactly 25600 bytes holds them: node 1's second send, alone, ends at t1 + 1.024 ms.
    let text = "num_ranks 4\nrank 0 {\na: recv 8192b from 1\nb: recv 8192b from 2\n\
c: recv 8192b from 3\nd: recv 1024b from 1\n}\nrank 1 {\na: send 8192b to 0\n\
b: send 1024b to 0\nb requires a\n}\nrank 2 {\na: send 8192b to 0\n}\n\
rank 3 {\na: send 8192b to 0\n}\n";
    let s = goal::parse(text, "incast.goal").unwrap();
    let mut racks = TopologySpec::racks(&[2, 2], 1e6, 1e7);
    if let TopologySpec::Racks { d, .. } = &mut racks {
        *d = Some(vec![S / 1000, 2 * S / 1000]);
    }
    let mut p = PlogptParams::new(
        racks,
        0,
        vec![1024, 8192],
        vec![1_024_000_000, 8_192_000_000],
    );
    p.eps_S = Some(1e-3);
    p.eps_T = Some(1000);
    p.rto = Some(200 * S / 1000);
    p.rto_rule = RtoRule::Buffer;
    let t1 = 3 * 8_192_000_000u64;
    p.buffer = Some(vec![24576, 1 << 20]);
    let o = run(&s, &p, true).unwrap();
    assert_eq!(o.rto_events.len(), 2, "{:?}", o.rto_events);
    let srcs: Vec<u32> = {
        let mut v: Vec<u32> = o.messages.iter().filter(|m| m.rto).map(|m| m.src).collect();
        v.sort();
        v
    };
    assert_eq!(srcs, vec![2, 3]);
    assert_eq!(o.finish[2], t1 + 200 * S / 1000);
    assert_eq!(o.makespan, t1 + 200 * S / 1000);
    p.buffer = Some(vec![25600, 1 << 20]);
    let o = run(&s, &p, true).unwrap();
    assert!(o.rto_events.is_empty());
    assert_eq!(o.makespan, t1 + 1_024_000_000);
}

#[test]
fn buffer_rule_needs_the_buffer() {
    let s = alltoall("alltoall-xor-post-all", 8, 4096);
    let mut p = two_rack_params(RtoRule::Buffer);
    p.buffer = None;
    let e = run(&s, &p, false).unwrap_err().to_string();
    assert!(
        e.contains("`buffer`") && e.contains("rto_rule buffer"),
        "{e}"
    );
    p.buffer = Some(vec![1, 2, 3]);
    let e = run(&s, &p, false).unwrap_err().to_string();
    assert!(e.contains("one per height h = 1..2, got 3"), "{e}");
    p.buffer = Some(vec![0, 2]);
    let e = run(&s, &p, false).unwrap_err().to_string();
    assert!(e.contains("buffer[0]") && e.contains("> 0 bytes"), "{e}");
}

#[test]
fn buffer_rule_ignores_the_senders_own_nic() {
    // Racks [2, 2] as above. Node 0 sends 8 KiB to each of nodes 1, 2, 3 at once: its NIC
    // carries 3 flows (1e6/3 B/s each), they end together at t1 = 24.576 ms. Node 3 sends
    // 12 KiB to node 2, sharing node 2's downlink with node 0's flow (5e5 B/s), so it ends
    // at t1 too, and then 1 KiB to node 1 (height 2, entering at t1: P_S(1, 2) for node 0's
    // send to node 1). That send's route: node 0's uplink (3 flows, 24 KiB, the sender's
    // own queue: not a candidate) and node 1's downlink (1 flow): 8 KiB + the entering
    // 1 KiB = 9 KiB toward node 1's port. A 20 KiB port holds it; an 8 KiB one does not.
    let text = "num_ranks 4\nrank 0 {\na: send 8192b to 1\nb: send 8192b to 2\n\
c: send 8192b to 3\n}\nrank 1 {\na: recv 8192b from 0\nb: recv 1024b from 3\n}\n\
rank 2 {\na: recv 8192b from 0\nb: recv 12288b from 3\n}\n\
rank 3 {\na: send 12288b to 2\nb: send 1024b to 1\nb requires a\nc: recv 8192b from 0\n}\n";
    let s = goal::parse(text, "own-nic.goal").unwrap();
    let mut racks = TopologySpec::racks(&[2, 2], 1e6, 1e7);
    if let TopologySpec::Racks { d, .. } = &mut racks {
        *d = Some(vec![S / 1000, 2 * S / 1000]);
    }
    let mut p = PlogptParams::new(
        racks,
        0,
        vec![1024, 8192, 12288],
        vec![1_024_000_000, 8_192_000_000, 12_288_000_000],
    );
    p.eps_S = Some(1e-3);
    p.eps_T = Some(1000);
    p.rto = Some(200 * S / 1000);
    p.rto_rule = RtoRule::Buffer;
    let t1 = 3 * 8_192_000_000u64;
    p.buffer = Some(vec![20 * 1024, 1 << 20]);
    let o = run(&s, &p, true).unwrap();
    assert!(o.rto_events.is_empty(), "{:?}", o.rto_events);
    assert_eq!(o.makespan, t1 + 1_024_000_000);
    p.buffer = Some(vec![8 * 1024, 1 << 20]);
    let o = run(&s, &p, true).unwrap();
    let late: Vec<(u32, u32)> = o
        .messages
        .iter()
        .filter(|m| m.rto)
        .map(|m| (m.src, m.dst))
        .collect();
    assert_eq!(late, vec![(0, 1)]);
    assert_eq!(o.makespan, t1 + 200 * S / 1000);
}
