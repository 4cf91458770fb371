//! Every collective, at several rank counts and roots: builds, matches,
//! completes, sends nothing to itself, emits no calc by default.

mod collectives_support;
use collectives_support::*;
use commodel_engine::collectives::CollectiveOptions;
use commodel_engine::OpKind;

const PS: &[u32] = &[1, 2, 3, 4, 5, 7, 8, 16];

#[test]
fn every_collective_matches_and_completes() {
    for name in names() {
        for p in rank_counts(name, PS) {
            for size in [1u64, 1000, 65536] {
                if (name == "allreduce-rabenseifner" && size < 16)
                    || (name == "gather-split" && size < 2)
                {
                    continue; // too few bytes to split (errors checked in collectives_errors)
                }
                let s = gen(name, p, size);
                assert_eq!(s.num_ranks(), p);
                check_matching(&s).unwrap_or_else(|e| panic!("{name} P={p} size={size}: {e}"));
                completes_under_rendezvous(&s)
                    .unwrap_or_else(|e| panic!("{name} P={p} size={size}: {e}"));
                for r in 0..p {
                    assert_eq!(
                        count_kind(&s, r, OpKind::Calc),
                        0,
                        "{name}: calc without reduce_ns_per_byte"
                    );
                }
                if p == 1 {
                    assert_eq!(s.num_ops(), 0, "{name}: one rank needs no communication");
                }
            }
        }
    }
}

#[test]
fn rooted_collectives_with_any_root() {
    for name in names()
        .into_iter()
        .filter(|n| n.starts_with("gather") || n.starts_with("scatter") || n.starts_with("bcast"))
    {
        for p in [3u32, 6, 8, 13] {
            for root in [0, 1, p / 2, p - 1] {
                let o = CollectiveOptions { root, ..opts() };
                let s = gen_with(name, p, 3000, &o);
                check_matching(&s).unwrap();
                completes_under_rendezvous(&s)
                    .unwrap_or_else(|e| panic!("{name} P={p} root={root}: {e}"));
                let (sent, recvd) = bytes_per_rank(&s);
                if name.starts_with("gather") {
                    assert_eq!(sent[root as usize], 0, "{name}: the root sends no data");
                    assert_eq!(
                        recvd[root as usize],
                        (p as u64 - 1) * 3000,
                        "{name} P={p} root={root}"
                    );
                } else if name.starts_with("scatter") {
                    assert_eq!(recvd[root as usize], 0);
                    assert_eq!(
                        sent[root as usize],
                        (p as u64 - 1) * 3000,
                        "{name} P={p} root={root}"
                    );
                } else if name.starts_with("bcast-scatter-allgather")
                    || name.starts_with("bcast-mpich-scatter")
                {
                    // The allgather phase (Open MPI's, MPICH's) also sends the
                    // root every block but its own (block 0, ceil(size / P) bytes).
                    assert_eq!(
                        recvd[root as usize],
                        3000 - 3000u64.div_ceil(p as u64),
                        "{name} P={p} root={root}"
                    );
                } else {
                    assert_eq!(recvd[root as usize], 0, "{name}: the root receives nothing");
                }
            }
        }
    }
}

#[test]
fn options_that_change_the_pattern_still_complete() {
    let cases: Vec<(&str, CollectiveOptions)> = vec![
        (
            "alltoall-linear-sync",
            CollectiveOptions {
                max_requests: 1,
                ..opts()
            },
        ),
        (
            "alltoall-linear-sync",
            CollectiveOptions {
                max_requests: 3,
                ..opts()
            },
        ),
        (
            "bcast-binomial",
            CollectiveOptions {
                segment: Some(1000),
                ..opts()
            },
        ),
        (
            "bcast-pipeline",
            CollectiveOptions {
                segment: Some(777),
                root: 1,
                ..opts()
            },
        ),
        (
            "gather-linear-sync",
            CollectiveOptions {
                segment: Some(100),
                ..opts()
            },
        ),
        (
            "gather-split",
            CollectiveOptions {
                splits: 7,
                ..opts()
            },
        ),
        (
            "random-pairs",
            CollectiveOptions {
                degree: 3,
                seed: 99,
                ..opts()
            },
        ),
        (
            "allreduce-ring",
            CollectiveOptions {
                reduce_ns_per_byte: 0.25,
                ..opts()
            },
        ),
    ];
    for (name, o) in cases {
        for p in [2u32, 5, 8, 11] {
            let s = gen_with(name, p, 10_000, &o);
            check_matching(&s).unwrap_or_else(|e| panic!("{name} P={p}: {e}"));
            completes_under_rendezvous(&s).unwrap_or_else(|e| panic!("{name} P={p} {o:?}: {e}"));
        }
    }
}

#[test]
fn large_rank_counts_stay_linear_in_edges() {
    // bcast-binomial at 65536 ranks: one op per tree edge and side, and the
    // few dependency edges the program order needs.
    let s = gen("bcast-binomial", 65536, 8);
    assert_eq!(s.num_ops(), 2 * 65535);
    assert!(s.edges().count() < 65536, "{} edges", s.edges().count());
    let s = gen("allreduce-recursive-doubling", 4096, 8);
    assert_eq!(s.num_ops(), 2 * 12 * 4096);
}

#[test]
fn goal_text_round_trips() {
    // The GOAL writer's output of every collective parses back to the same
    // operations and dependencies.
    for name in names() {
        let p = if name.starts_with("alltoall-xor") {
            4
        } else if name.ends_with("two-proc") {
            2
        } else {
            5
        };
        let o = CollectiveOptions {
            reduce_ns_per_byte: 0.5,
            max_requests: 2,
            degree: 2,
            ..opts()
        };
        let s = gen_with(name, p, 20_000, &o);
        let text = commodel_engine::goal::write(&s);
        let back = commodel_engine::goal::parse(&text, name)
            .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        for r in 0..p {
            assert_eq!(render(&back, r), render(&s, r), "{name} rank {r}");
        }
    }
}
