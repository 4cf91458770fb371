//! Every collective run through the engine: no deadlock, every message
//! delivered once with its bytes; PlogPT eq. 18/19 under the `plogp` model.

mod collectives_support;
use collectives_support::*;
use commodel_engine::engine;
use commodel_engine::loggops::{self, LogGops};
use commodel_engine::nic::{NicNetwork, PLogP};
use commodel_engine::table::Table;
use commodel_engine::{OpKind, Schedule};

fn sends(s: &Schedule) -> Vec<(u32, u32, u32, u64)> {
    let mut v = Vec::new();
    for r in 0..s.num_ranks() {
        for id in s.ops_of(r) {
            if s.kind(id) == OpKind::Send {
                v.push((r, s.peer(id), s.tag(id), s.size(id)));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn every_collective_runs_under_loggops_and_delivers_every_message() {
    let params = LogGops::loggopsim_defaults();
    for name in names() {
        for p in rank_counts(name, &[2, 3, 5, 8, 16]) {
            // 1000 B is eager, 100 000 B above LogGOPSim's S = 65535 uses rendezvous.
            for size in [1000u64, 100_000] {
                let s = gen(name, p, size);
                let out = loggops::simulate(&s, &params, true)
                    .unwrap_or_else(|e| panic!("{name} P={p} size={size}: {e}"));
                let mut delivered: Vec<_> = out
                    .messages
                    .iter()
                    .map(|m| (m.src, m.dst, m.tag, m.bytes))
                    .collect();
                delivered.sort();
                assert_eq!(delivered, sends(&s), "{name} P={p} size={size}");
                assert!(out.makespan > 0 || s.num_ops() == 0);
            }
        }
    }
}

fn plogp(g_ps: u64, l_ps: u64, p: u32) -> NicNetwork<PLogP> {
    NicNetwork::new(
        PLogP {
            L: l_ps,
            g: Table::constant(g_ps),
        },
        p,
    )
}

#[test]
fn plogp_model_gives_eq_18_and_19() {
    for p in [2u32, 4, 8, 16, 64] {
        for (g, l) in [(3_000_000u64, 40_000_000u64), (40_000_000, 3_000_000)] {
            let a = gen("alltoall-xor-pairwise", p, 65536);
            let out = engine::simulate(&a, &mut plogp(g, l, p), None, false).unwrap();
            assert_eq!(out.makespan, (p as u64 - 1) * (g + l), "eq. 18, P={p}");
            let b = gen("alltoall-xor-post-all", p, 65536);
            let out = engine::simulate(&b, &mut plogp(g, l, p), None, false).unwrap();
            assert_eq!(out.makespan, (p as u64 - 1) * g + l, "eq. 19, P={p}");
        }
    }
}

#[test]
fn every_collective_runs_under_plogp_with_rendezvous() {
    for name in names() {
        for p in rank_counts(name, &[3, 4, 7]) {
            let s = gen(name, p, 50_000);
            let out = engine::simulate(&s, &mut plogp(1_000_000, 5_000_000, p), Some(4096), true)
                .unwrap_or_else(|e| panic!("{name} P={p}: {e}"));
            assert_eq!(out.messages.len(), sends(&s).len(), "{name} P={p}");
        }
    }
}

/// Exact makespans under `plogp` (g = 3 µs, L = 40 µs, no rendezvous) of
/// small cases worked out by hand. The model: a send starting at t occupies
/// its sender's NIC until t + g (a blocking send finishes then) and arrives
/// at max(t + L, the receiving NIC's last arrival) + g.
#[test]
fn plogp_times_of_the_added_open_mpi_algorithms_by_hand() {
    let (g, l) = (3_000_000u64, 40_000_000u64);
    let seg = |s: u64| commodel_engine::collectives::CollectiveOptions {
        segment: Some(s),
        ..opts()
    };
    let reduce = |ns_per_byte: f64| commodel_engine::collectives::CollectiveOptions {
        reduce_ns_per_byte: ns_per_byte,
        ..opts()
    };
    let c = 2_000_000u64; // 2 us in ps
    let cases: Vec<(&str, u32, u64, _, u64)> = vec![
        // 4 chains over 6 ranks: 1-2, 3-4, 5, 6. The root's isends arrive at
        // 1: g+L, 3: 2g+L, 5: 3g+L, 6: 4g+L; 1 -> 2 arrives 2g+2L, 3 -> 4 3g+2L.
        ("bcast-chain", 7, 1000, opts(), 3 * g + 2 * l),
        // 0 -> {1, 2}, 1 -> {3, 5}, 2 -> {4, 6}: 2 has it at 2g+L, its second
        // child at 2g+L + 2g+L.
        ("bcast-binary-tree", 7, 1000, opts(), 4 * g + 2 * l),
        // Halves to 1 (g+L) and 2 (2g+L); 1 -> 3 (2g+2L), 5 (3g+2L); 2 -> 4
        // (3g+2L), 6 (4g+2L). Swaps: 5 -> 6 at 3g+2L, 6 -> 5 at 4g+2L arrives 5g+3L.
        ("bcast-split-binary-tree", 7, 1000, opts(), 5 * g + 3 * l),
        // radix 4, P = 6: root serves 4 first (g+L), which forwards to 5 (2g+2L);
        // the root's last child 3 has it at 4g+L < 2g+2L.
        ("bcast-knomial", 6, 1000, opts(), 2 * g + 2 * l),
        // Scatter: 0 -> 2 (g+L), 0 -> 1 (2g+L), 2 -> 3 (2g+2L). Step 1: 0 <-> 1
        // (1 -> 0 sent at 2g+L arrives 3g+2L), 2 <-> 3 (3 -> 2 arrives 3g+3L).
        // Step 2: 2 -> 0 sent at 3g+3L arrives 4g+4L.
        ("bcast-scatter-allgather", 4, 4000, opts(), 4 * g + 4 * l),
        // Scatter: 0 -> 2 (g+L), 0 -> 1 (2g+L). Ring step 1: 2 -> 0 arrives
        // 2g+2L, 1 -> 2 3g+2L. Step 2: 2 -> 0 sent at 3g+2L arrives 4g+3L.
        (
            "bcast-scatter-allgather-ring",
            3,
            3000,
            opts(),
            4 * g + 3 * l,
        ),
        // Two steps: neighbour 1 block, then the other neighbour 2 blocks.
        ("allgather-neighbor", 4, 1000, opts(), 2 * (g + l)),
        ("allgather-two-proc", 2, 1000, opts(), g + l),
        ("alltoall-two-proc", 2, 1000, opts(), g + l),
        ("barrier-two-proc", 2, 0, opts(), g + l),
        // Two phases of 1000 B parts (each g+L), then one allgather step.
        ("allreduce-segmented-ring", 2, 4000, seg(1000), 3 * (g + l)),
        // Sends from 1 and 2 reach rank 0's NIC at L+g and L+2g; its isends
        // then arrive at 2L+3g and 2L+4g.
        ("allreduce-basic-linear", 3, 1000, opts(), 4 * g + 2 * l),
        ("barrier-linear", 3, 0, opts(), 4 * g + 2 * l),
        // The token goes around 3 ranks twice: 6 hops.
        ("barrier-double-ring", 3, 0, opts(), 6 * (g + l)),
        // 1 -> 0 (exchange) and 2 -> 0 (fold) both start at 0; rank 0's NIC
        // takes rank 1's first (g+L), then rank 2's (2g+L). 0 -> 1 sent at 2g+L
        // finishes at 3g+L; the release 0 -> 2 then arrives 4g+2L.
        ("barrier-recursive-doubling", 3, 0, opts(), 4 * g + 2 * l),
        // In: 1 -> 0, 3 -> 2 (g+L), 2 -> 0 (2g+2L). Out: 0 -> 2 (3g+3L),
        // 0 -> 1 (4g+3L), 2 -> 3 (4g+4L).
        ("barrier-tree", 4, 0, opts(), 4 * g + 4 * l),
        // Gather binomial: 3 -> 2 and 1 -> 0 (g+L), 2 -> 0 (2g+2L); bcast
        // binomial of 4000 B from 2g+2L: 0 -> 1 (3g+3L), 0 -> 2 (4g+3L), 1 -> 3 (4g+4L).
        ("allgather-linear", 4, 1000, opts(), 4 * g + 4 * l),
        // Reduce binary: 3 -> 1 and 2 -> 0 (g+L), 1 -> 0 (2g+2L); bcast binomial
        // from 2g+2L: 0 -> 1 (3g+3L), 0 -> 2 (4g+3L), 1 -> 3 (4g+4L).
        ("allreduce-nonoverlapping", 4, 100, opts(), 4 * g + 4 * l),
        // Two isends back to back.
        ("scatter-linear-nb", 3, 1000, opts(), 2 * g + l),
        // Open MPI's generic bcast down the chain 0 -> 1 -> 2, 3 segments:
        // the root's isends leave at 0, g, 2g (each waited for); rank 1
        // forwards segment s once it has arrived and its previous send is
        // done: at g+L, 2g+L, 3g+L; the last reaches rank 2 at 4g+2L.
        ("bcast-pipeline", 3, 3000, seg(1000), 4 * g + 2 * l),
        // Ring of 3, blocks of 1000 B, reduction c = 2 ns/B * 1000 B = 2 us per
        // received block. Each rank sends its block at 0 (arrives g+L), reduces
        // it (until g+L+c), sends it on (arrives 2g+2L+c), reduces the last
        // (2g+2L+2c); then two sendrecv steps of g+L each.
        ("allreduce-ring", 3, 3000, reduce(2.0), 4 * (g + l) + 2 * c),
    ];
    for (name, p, size, o, want) in cases {
        let s = gen_with(name, p, size, &o);
        let out = engine::simulate(&s, &mut plogp(g, l, p), None, false)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out.makespan, want, "{name} P={p}");
    }
}
