//! Our generators against the calls Open MPI 4.1.4 makes for five forced
//! algorithms: bcast pipeline (`ompi_coll_base_bcast_intra_generic` on the
//! fanout-1 chain), scatter_allgather, scatter_allgather_ring
//! (`coll_base_bcast.c`), allreduce ring and segmented_ring
//! (`coll_base_allreduce.c`).
//!
//! For each, a reference (`collectives_support/ompi.rs`) writes every rank's calls in the order the
//! 4.1.4 function makes them (isend, irecv, send, recv, wait, sendrecv =
//! irecv + send + wait, and `ompi_op_reduce` as a calc of 1 ns per byte),
//! worked out from the Open MPI source with its own count arithmetic
//! (upper-bound receives, `curr_count`, `recv_count` carried between
//! phases, early / late blocks). The generated schedule must have, rank by
//! rank and in order, the same operations (kind, peer, bytes; a receive no
//! larger than the count Open MPI posts), each waiting for exactly the
//! operations the rank had completed (waited for) when Open MPI posted it,
//! and between every pair of ranks the i-th send must match the i-th
//! receive (Open MPI uses one tag per collective: its matching is in
//! posting order). Cases: P = 8 and 6 (and 5, 7 for the non-power-of-two
//! paths), even and uneven sizes, several roots. The references are shared
//! with the 5.0 test, `collectives_ompi5_trace.rs` (the calls are the
//! same in both versions).

mod collectives_support;
use collectives_support::ompi::{self, build_chain};
use collectives_support::trace::{self, traced, Trace};
use collectives_support::*;
use commodel_engine::Schedule;

/// The generated schedule against the Open MPI reference ([`trace::assert_follows`]).
fn assert_follows(what: &str, s: &Schedule, want: &[Trace]) {
    trace::assert_follows("Open MPI", what, s, want);
}

#[test]
fn bcast_pipeline_is_open_mpis_generic_bcast_on_a_chain() {
    // 8 KiB segments as `measure collective` forces them; sizes with a short
    // last segment, one segment, and fewer bytes than a segment.
    for p in [2u32, 5, 6, 8] {
        for (size, seg) in [
            (65_536u64, 8192u64),
            (100_000, 8192),
            (8192, 8192),
            (3000, 8192),
            (10_001, 1000),
        ] {
            for root in [0, p - 1] {
                let s = gen_with("bcast-pipeline", p, size, &traced(root, Some(seg)));
                let what = format!("bcast-pipeline P={p} size={size} seg={seg} root={root}");
                assert_follows(
                    &what,
                    &s,
                    &ompi::bcast_generic(p, size, root, seg, &|r| build_chain(1, p, root, r)),
                );
            }
        }
    }
}

#[test]
fn bcast_scatter_allgathers_are_open_mpis() {
    // Uneven sizes leave short and empty last blocks (9 B over 8 ranks:
    // blocks 2,2,2,2,1,0,0,0).
    for p in [2u32, 3, 5, 6, 7, 8] {
        for size in [p as u64, 9, 1000, 1001, 65_536, 1_048_576 + 5] {
            if size < p as u64 {
                continue;
            }
            for root in [0, 1, p - 1] {
                let o = traced(root % p, None);
                let what = format!("P={p} size={size} root={root}");
                let s = gen_with("bcast-scatter-allgather", p, size, &o);
                assert_follows(
                    &format!("bcast-scatter-allgather {what}"),
                    &s,
                    &ompi::bcast_scatter_allgather(p, size, root % p),
                );
                let s = gen_with("bcast-scatter-allgather-ring", p, size, &o);
                assert_follows(
                    &format!("bcast-scatter-allgather-ring {what}"),
                    &s,
                    &ompi::bcast_scatter_allgather_ring(p, size, root % p),
                );
            }
        }
    }
}

#[test]
fn allreduce_rings_are_open_mpis_with_a_reduction_per_received_block() {
    for p in [2u32, 3, 6, 8] {
        for size in [p as u64, 1001, 65_536, 1_048_576 + 3] {
            let what = format!("allreduce-ring P={p} size={size}");
            let s = gen_with("allreduce-ring", p, size, &traced(0, None));
            assert_follows(&what, &s, &ompi::allreduce_ring(p, size));
            // Forced without a segment size (0), segmented_ring is the ring.
            let s = gen_with("allreduce-segmented-ring", p, size, &traced(0, None));
            assert_follows(
                &format!("segmented {what}"),
                &s,
                &ompi::allreduce_ring(p, size),
            );
            // At most a few phases: the check compares whole wait sets (quadratic).
            for seg in [100u64, 1000, 4096, 65_536] {
                if size / (p as u64 * seg) > 16 {
                    continue;
                }
                let s = gen_with("allreduce-segmented-ring", p, size, &traced(0, Some(seg)));
                let what = format!("allreduce-segmented-ring P={p} size={size} seg={seg}");
                assert_follows(&what, &s, &ompi::allreduce_segmented_ring(p, size, seg));
            }
        }
    }
}
