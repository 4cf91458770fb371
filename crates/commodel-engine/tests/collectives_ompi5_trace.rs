//! Our generators against the calls Open MPI 5.0 makes for every algorithm
//! `advise --mpi openmpi-5.0` can force (`commodel.mpis.openmpi5`: coll/tuned's
//! `coll_tuned_<coll>_algorithm` tables of alltoall, allgather, allreduce,
//! bcast, gather, scatter and barrier), read at tag v5.0.10
//! (0d48030d410ae8f56790933135b28be1b3920ba1; the v5.0.x branch at b962e8a6,
//! August 2026, differs from it in `coll/base` and `coll/tuned` only in
//! `coll_tags.h`): `ompi/mca/coll/base/coll_base_<coll>.c`, `coll_base_topo.c`
//! (the trees), `coll_base_util.[ch]` (`ompi_coll_base_sendrecv`) and
//! `ompi/mca/coll/tuned/coll_tuned_<coll>_decision.c` (which function each
//! number calls, with which segment size and fan-out) and
//! `coll_tuned_decision_fixed.c` (what the nested collectives of allgather
//! linear run).
//!
//! **What changed from 4.1.4.** `git diff v4.1.4 v5.0.10 -- ompi/mca/coll/base
//! ompi/mca/coll/tuned` changes the calls of none of these algorithms: 5.0 adds
//! allgather 7 sparbit; alltoall modified_bruck builds its per-step datatype
//! differently but sends the same blocks; `build_tree` with fan-out 1 no longer
//! divides by zero (no forced algorithm builds it); the rest is error handling,
//! fault-tolerance hooks and comments. So the references of
//! `collectives_support/ompi.rs`, shared with the 4.1.4 test, are 5.0's too,
//! and every generator `openmpi5.py` maps to is the 4.1.4 one.
//!
//! Each reference writes a rank's calls in the order Open MPI makes them, with
//! its own count arithmetic ([`trace::assert_follows`]: same operations rank by
//! rank and in order, each waiting for what Open MPI had waited for when it
//! posted it, a receive no larger than the count posted, and each pair's i-th
//! send the i-th receive). Cases: P = 2..17, sizes around P and uneven ones,
//! roots 0, 1 and P-1. Where our generator departs from 5.0, the test says so
//! and pins the departure:
//! - allreduce rabenseifner below p' bytes (p' = largest power of two <= P):
//!   Open MPI runs basic_linear; our generator refuses (`SizeTooSmall`).
//! - the two_proc algorithms on P != 2: Open MPI returns
//!   `MPI_ERR_UNSUPPORTED_OPERATION`; our generators refuse.
//! - barrier linear: rank 0's receives are `MPI_ANY_SOURCE`; ours name ranks
//!   1, 2, .. (the same operations once matched). The last ring of double_ring
//!   and the final send of recursive_doubling are synchronous sends of 0 bytes
//!   in Open MPI, plain sends here.
//! - alltoall linear_sync is checked without a request limit (Open MPI's
//!   default, and what a classic rules file passes): with one, Open MPI refills
//!   whichever request completes first (`wait_any`), an order no schedule fixes
//!   in advance.

mod collectives_support;
use collectives_support::ompi::{self, *};
use collectives_support::trace::{self, pof2, ranks, sizes, traced, Trace};
use collectives_support::*;
use commodel_engine::collectives::{generate, CollectiveError, CollectiveOptions};
use commodel_engine::{OpKind, Schedule};

const OMPI5: &str = "Open MPI 5.0";

fn assert_follows(what: &str, s: &Schedule, want: &[Trace]) {
    trace::assert_follows(OMPI5, what, s, want);
}

/// Roots 0, 1 and P-1.
fn roots(p: u32) -> Vec<u32> {
    let mut r = vec![0, 1 % p, p - 1];
    r.dedup();
    r
}

/// Checks generator `name` against `reference` for P = 2..17, every size of
/// [`sizes`] (for which `keep` holds) and each of `roots`.
fn check_all(
    name: &str,
    rooted: bool,
    segment: Option<u64>,
    keep: &dyn Fn(u32, u64) -> bool,
    reference: &dyn Fn(u32, u64, u32) -> Vec<Trace>,
) {
    for p in ranks() {
        let rs = if rooted { roots(p) } else { vec![0] };
        for size in sizes(p).into_iter().filter(|&s| keep(p, s)) {
            for &root in &rs {
                let s = gen_with(name, p, size, &traced(root, segment));
                let what = format!("{name} P={p} size={size} root={root} segment={segment:?}");
                assert_follows(&what, &s, &reference(p, size, root));
            }
        }
    }
}

fn any(_: u32, _: u64) -> bool {
    true
}

// --- alltoall ---------------------------------------------------------------------------------

#[test]
fn alltoall_linear_pairwise_bruck_and_linear_sync_are_open_mpi_5s() {
    check_all("alltoall-basic-linear", false, None, &any, &|p, n, _| {
        alltoall_linear(p, n)
    });
    // forced with coll_tuned_alltoall_algorithm_max_requests 0 (the default,
    // and a classic rules file's): all requests at once, as basic_linear
    check_all("alltoall-linear-sync", false, None, &any, &|p, n, _| {
        alltoall_linear(p, n)
    });
    check_all("alltoall-pairwise", false, None, &any, &|p, n, _| {
        alltoall_pairwise(p, n)
    });
    check_all("alltoall-modified-bruck", false, None, &any, &|p, n, _| {
        alltoall_bruck(p, n)
    });
}

#[test]
fn two_proc_algorithms_are_open_mpi_5s_on_two_ranks_and_refused_elsewhere() {
    for name in ["alltoall-two-proc", "allgather-two-proc"] {
        for size in sizes(2) {
            let s = gen(name, 2, size);
            assert_follows(&format!("{name} size={size}"), &s, &two_proc(size));
        }
        for p in 3..=17 {
            assert!(generate(name, p, 8, &opts()).is_err(), "{name} P={p}");
        }
    }
    let s = gen("barrier-two-proc", 2, 0);
    assert_follows("barrier-two-proc", &s, &two_proc(0));
}

// --- allgather --------------------------------------------------------------------------------

#[test]
fn allgather_bruck_recursive_doubling_ring_and_neighbor_are_open_mpi_5s() {
    check_all("allgather-bruck", false, None, &any, &|p, n, _| {
        allgather_bruck(p, n)
    });
    // not a power of two: Open MPI runs bruck
    check_all(
        "allgather-recursive-doubling",
        false,
        None,
        &any,
        &|p, n, _| allgather_recursive_doubling(p, n),
    );
    check_all("allgather-ring", false, None, &any, &|p, n, _| {
        allgather_ring(p, n)
    });
    // odd P: Open MPI runs the ring
    check_all("allgather-neighbor", false, None, &any, &|p, n, _| {
        allgather_neighbor(p, n)
    });
}

/// `ompi_coll_base_allgather_intra_sparbit`, call by call: in each of
/// comm_log = ceil(log2 P) steps, with distance halving from 2^(comm_log-1),
/// `data_expected - exclusion` pairs of isend (to rank + distance) and irecv
/// (from rank - distance), then one wait for all; a step is cut by one
/// transfer where the distance's bit is set in the `ignore_steps` mask built
/// from P's trailing zeros. Each transfer has its own tag (a block's index),
/// the same on both sides, so the i-th send of a pair is its i-th receive.
fn ompi5_sparbit(p: u32, count: u64) -> Vec<Trace> {
    let comm_log = ((p as f64).ln() / 2f64.ln()).ceil() as u32;
    let last_ignore = p.trailing_zeros();
    let ignore_steps = (!(p >> last_ignore) | 1) << last_ignore;
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let mut distance = if comm_log > 0 {
                1u32 << (comm_log - 1)
            } else {
                0
            };
            let mut data_expected = 1u32;
            for _ in 0..comm_log {
                let sendto = (rank + distance) % p;
                let recvfrom = (rank + p - distance) % p;
                let exclusion = u32::from((distance & ignore_steps) == distance);
                let mut reqs = Vec::new();
                for _transfer in 0..data_expected - exclusion {
                    reqs.push(t.isend(sendto, count));
                    reqs.push(t.irecv(recvfrom, count));
                }
                t.waitall(&reqs);
                distance >>= 1;
                data_expected = (data_expected << 1) - exclusion;
            }
            t
        })
        .collect()
}

#[test]
fn allgather_sparbit_is_open_mpi_5s() {
    check_all("allgather-sparbit", false, None, &any, &|p, n, _| {
        ompi5_sparbit(p, n)
    });
    for p in ranks() {
        // every rank receives the P - 1 blocks it lacks, once each
        let s = gen("allgather-sparbit", p, 1000);
        for r in 0..p {
            let got = s.ops_of(r).filter(|&id| s.kind(id) == OpKind::Recv).count();
            assert_eq!(got as u32, p - 1, "P={p} rank {r}");
        }
    }
}

/// Allgather linear is the communicator's gather to 0, then its bcast of the
/// P blocks from 0, each picked by `coll_tuned_decision_fixed.c` (segment size
/// and fan-out 0) when only allgather is forced. Points (P, block, gather
/// algorithm, bcast algorithm) read from that file's tables, covering each
/// gather algorithm and seven bcast ones.
#[test]
fn allgather_linear_is_open_mpi_5s_gather_then_bcast() {
    let points: [(u32, u64, u32, u32); 16] = [
        (2, 1, 3, 3),
        (3, 2, 1, 3),
        (3, 100, 2, 3),
        (2, 20_000, 2, 5),
        (3, 40_000, 1, 5),
        (2, 100_000, 2, 2),
        (3, 200_000, 3, 6),
        (5, 100, 2, 5),
        (5, 2000, 1, 1),
        (6, 300_000, 3, 2),
        (8, 5000, 2, 1),
        (9, 100, 2, 7),
        (12, 1000, 2, 5),
        (16, 100, 2, 7),
        (17, 1000, 2, 6),
        (16, 100_000, 2, 8),
    ];
    for (p, n, g, b) in points {
        let mut want = match g {
            1 => gather_basic_linear(p, n, 0),
            2 => gather_binomial(p, n, 0),
            _ => gather_linear_sync(p, n, 0, 0),
        };
        let bcast = fixed_bcast(b, p, n * p as u64);
        ompi::append(&mut want, bcast);
        let s = gen("allgather-linear", p, n);
        assert_follows(&format!("allgather-linear P={p} block={n}"), &s, &want);
    }
}

// --- allreduce --------------------------------------------------------------------------------

#[test]
fn allreduce_recursive_doubling_rings_and_basic_linear_are_open_mpi_5s() {
    check_all(
        "allreduce-recursive-doubling",
        false,
        None,
        &any,
        &|p, n, _| allreduce_recursive_doubling(p, n),
    );
    // below P bytes Open MPI's ring runs recursive doubling
    check_all("allreduce-ring", false, None, &any, &|p, n, _| {
        allreduce_ring(p, n)
    });
    // forced without a segment size (0), segmented_ring is the ring
    check_all("allreduce-segmented-ring", false, None, &any, &|p, n, _| {
        allreduce_ring(p, n)
    });
    // with segments, at most a few phases (the check compares whole wait sets)
    for seg in [100u64, 1000, 4096] {
        check_all(
            "allreduce-segmented-ring",
            false,
            Some(seg),
            &|p, n| n / (p as u64 * seg) <= 16,
            &|p, n, _| allreduce_segmented_ring(p, n, seg),
        );
    }
    check_all("allreduce-basic-linear", false, None, &any, &|p, n, _| {
        allreduce_basic_linear(p, n)
    });
}

/// A bcast from 0 as `coll_tuned_decision_fixed.c` runs algorithm `alg`
/// (segment size and fan-out 0; knomial radix 4).
fn fixed_bcast(alg: u32, p: u32, n: u64) -> Vec<Trace> {
    match alg {
        1 => bcast_basic_linear(p, n, 0),
        // chain with fan-out 0: build_chain makes it 1, as pipeline
        2 | 3 => bcast_generic(p, n, 0, 0, &|r| build_chain(1, p, 0, r)),
        5 => bcast_generic(p, n, 0, 0, &|r| build_tree(2, p, 0, r)),
        6 => bcast_generic(p, n, 0, 0, &|r| build_bmtree(p, 0, r)),
        7 => bcast_generic(p, n, 0, 0, &|r| build_kmtree(p, 0, r, 4)),
        _ => bcast_scatter_allgather(p, n, 0),
    }
}

/// Allreduce nonoverlapping is the communicator's reduce to 0, then its bcast
/// from 0, each picked by `coll_tuned_decision_fixed.c` (MPI_SUM: the
/// commutative table; segment size and fan-out 0) when only allreduce is
/// forced. Points (P, bytes, reduce algorithm, bcast algorithm) read from its
/// tables; reduce 7 (redscat_gather) runs basic_linear below p' elements.
#[test]
fn allreduce_nonoverlapping_is_open_mpi_5s_reduce_then_bcast() {
    let points: [(u32, u64, u32, u32); 14] = [
        (2, 1, 1, 3),
        (3, 10, 4, 3),
        (3, 20, 3, 3),
        (3, 1000, 1, 7),
        (2, 300_000, 3, 1),
        (3, 600_000, 2, 6),
        (5, 100, 4, 6),
        (6, 10_000, 2, 1),
        (7, 100_000, 5, 1),
        (5, 300_000, 1, 1),
        (8, 1000, 4, 7),
        (12, 20_000, 5, 6),
        (16, 1000, 4, 7),
        (17, 100_000, 5, 6),
    ];
    for (p, n, red, b) in points {
        let mut want = match red {
            1 => reduce_basic_linear(p, n),
            // chain with fan-in 0: build_chain makes it 1, as pipeline
            2 | 3 => reduce_generic(p, n, &|r| build_chain(1, p, 0, r)),
            4 => reduce_generic(p, n, &|r| build_tree(2, p, 0, r)),
            _ => reduce_generic(p, n, &|r| build_in_order_bmtree(p, 0, r)),
        };
        ompi::append(&mut want, fixed_bcast(b, p, n));
        let s = gen_with("allreduce-nonoverlapping", p, n, &traced(0, None));
        assert_follows(
            &format!("allreduce-nonoverlapping P={p} size={n}"),
            &s,
            &want,
        );
    }
}

#[test]
fn allreduce_rabenseifner_is_open_mpi_5s_from_p_prime_bytes() {
    check_all(
        "allreduce-rabenseifner",
        false,
        None,
        &|p, n| n >= pof2(p) as u64,
        &|p, n, _| allreduce_rabenseifner(p, n),
    );
    // Below p' bytes Open MPI runs basic_linear; our generator refuses.
    for p in ranks() {
        for n in (1..pof2(p) as u64).filter(|n| sizes(p).contains(n)) {
            match generate("allreduce-rabenseifner", p, n, &opts()) {
                Err(CollectiveError::SizeTooSmall { min, .. }) => {
                    assert_eq!(min, pof2(p) as u64)
                }
                other => panic!("P={p} size={n}: {:?}", other.map(|_| ())),
            }
        }
    }
}

// --- bcast ------------------------------------------------------------------------------------

#[test]
fn bcast_tree_algorithms_are_open_mpi_5s_generic_bcast() {
    // forced: segment size 0 (coll_tuned_bcast_algorithm_segmentsize), chain
    // fan-out 4 (what advise's rules file passes), knomial radix 4
    // (coll_tuned_bcast_knomial_radix); and with 1000-byte segments
    for seg in [None, Some(1000u64)] {
        let s0 = seg.unwrap_or(0);
        check_all("bcast-basic-linear", true, seg, &any, &|p, n, root| {
            bcast_basic_linear(p, n, root)
        });
        check_all("bcast-chain", true, seg, &any, &|p, n, root| {
            bcast_generic(p, n, root, s0, &|r| build_chain(4, p, root, r))
        });
        check_all("bcast-binary-tree", true, seg, &any, &|p, n, root| {
            bcast_generic(p, n, root, s0, &|r| build_tree(2, p, root, r))
        });
        check_all("bcast-binomial", true, seg, &any, &|p, n, root| {
            bcast_generic(p, n, root, s0, &|r| build_bmtree(p, root, r))
        });
        check_all("bcast-knomial", true, seg, &any, &|p, n, root| {
            bcast_generic(p, n, root, s0, &|r| build_kmtree(p, root, r, 4))
        });
        check_all("bcast-split-binary-tree", true, seg, &any, &|p, n, root| {
            bcast_split_bintree(p, n, root, s0)
        });
    }
    // pipeline: 8 KiB segments by default (advise's rules file passes them)
    for seg in [8192u64, 1000] {
        check_all("bcast-pipeline", true, Some(seg), &any, &|p, n, root| {
            bcast_generic(p, n, root, seg, &|r| build_chain(1, p, root, r))
        });
    }
}

#[test]
fn bcast_scatter_allgathers_are_open_mpi_5s() {
    // below P bytes Open MPI runs the linear bcast
    check_all(
        "bcast-scatter-allgather",
        true,
        None,
        &any,
        &|p, n, root| {
            if n < p as u64 {
                bcast_basic_linear(p, n, root)
            } else {
                bcast_scatter_allgather(p, n, root)
            }
        },
    );
    check_all(
        "bcast-scatter-allgather-ring",
        true,
        None,
        &any,
        &|p, n, root| {
            if n < p as u64 {
                bcast_basic_linear(p, n, root)
            } else {
                bcast_scatter_allgather_ring(p, n, root)
            }
        },
    );
}

// --- gather and scatter -----------------------------------------------------------------------

#[test]
fn gathers_and_scatters_are_open_mpi_5s() {
    check_all("gather-basic-linear", true, None, &any, &|p, n, root| {
        gather_basic_linear(p, n, root)
    });
    check_all("gather-binomial", true, None, &any, &|p, n, root| {
        gather_binomial(p, n, root)
    });
    // first segment 1 KiB (advise's rules file passes it) and 100 bytes
    for first in [1024u64, 100] {
        check_all(
            "gather-linear-sync",
            true,
            Some(first),
            &any,
            &|p, n, root| gather_linear_sync(p, n, root, first),
        );
    }
    check_all("scatter-basic-linear", true, None, &any, &|p, n, root| {
        scatter_basic_linear(p, n, root)
    });
    check_all("scatter-binomial", true, None, &any, &|p, n, root| {
        scatter_binomial(p, n, root)
    });
    // coll_tuned_scatter_algorithm_max_requests 0: every send an isend
    check_all("scatter-linear-nb", true, None, &any, &|p, n, root| {
        scatter_linear_nb(p, n, root, 0)
    });
    for m in [2u32, 3] {
        for p in ranks() {
            for root in roots(p) {
                let o = CollectiveOptions {
                    max_requests: m,
                    ..traced(root, None)
                };
                let s = gen_with("scatter-linear-nb", p, 1000, &o);
                let what = format!("scatter-linear-nb P={p} root={root} max_requests={m}");
                assert_follows(&what, &s, &scatter_linear_nb(p, 1000, root, m));
            }
        }
    }
}

// --- barrier ----------------------------------------------------------------------------------

#[test]
fn barriers_are_open_mpi_5s() {
    for p in ranks() {
        for (name, want) in [
            ("barrier-linear", barrier_linear(p)),
            ("barrier-double-ring", barrier_double_ring(p)),
            ("barrier-recursive-doubling", barrier_recursive_doubling(p)),
            ("barrier-dissemination", barrier_bruck(p)),
            ("barrier-tree", barrier_tree(p)),
        ] {
            let s = gen(name, p, 0);
            assert_follows(&format!("{name} P={p}"), &s, &want);
        }
    }
}
