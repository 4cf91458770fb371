//! The Open MPI 4.1.4 algorithms added after the first set (bcast chain,
//! binary_tree, split_binary_tree, knomial, scatter_allgather[_ring];
//! allgather neighbor, two_proc; allreduce segmented_ring, basic_linear;
//! barrier linear, double_ring, recursive_doubling, tree, two_proc; alltoall
//! two_proc; scatter linear_nb): bytes conservation and the structure each
//! algorithm promises. Exact PLogP times are in `collectives_engine.rs`.

mod collectives_support;
use collectives_support::*;
use commodel_engine::collectives::{generate, CollectiveError, CollectiveOptions};
use commodel_engine::{OpKind, Schedule};

const PS: &[u32] = &[1, 2, 3, 5, 8, 16];

fn sends_to(s: &Schedule, r: u32) -> Vec<u32> {
    s.ops_of(r)
        .filter(|&id| s.kind(id) == OpKind::Send)
        .map(|id| s.peer(id))
        .collect()
}

/// Edges (parent, child) that carry data, each once, sorted.
fn edges(s: &Schedule) -> Vec<(u32, u32)> {
    let mut e: Vec<_> = (0..s.num_ranks())
        .flat_map(|r| sends_to(s, r).into_iter().map(move |d| (r, d)))
        .collect();
    e.sort();
    e.dedup();
    e
}

#[test]
fn tree_bcasts_deliver_the_buffer_once_to_every_non_root() {
    for name in [
        "bcast-chain",
        "bcast-binary-tree",
        "bcast-split-binary-tree",
        "bcast-knomial",
    ] {
        for &p in PS {
            for root in [0, p / 2, p - 1] {
                for size in [1u64, 1001, 100_000] {
                    for segment in [None, Some(4096)] {
                        let o = CollectiveOptions {
                            root,
                            segment,
                            ..opts()
                        };
                        let s = gen_with(name, p, size, &o);
                        let (sent, recvd) = bytes_per_rank(&s);
                        for (r, &got) in recvd.iter().enumerate() {
                            let want = if r == root as usize { 0 } else { size };
                            assert_eq!(
                                got, want,
                                "{name} P={p} root={root} size={size} {segment:?} rank {r}"
                            );
                        }
                        assert_eq!(
                            sent.iter().sum::<u64>(),
                            (p as u64 - 1) * size,
                            "{name} P={p}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bcast_chain_every_rank_but_the_chain_tails_forwards_every_segment() {
    // 100 000 B in 4096 B segments: 25 segments (the last 1696 B).
    let o = CollectiveOptions {
        segment: Some(4096),
        ..opts()
    };
    for &p in &PS[1..] {
        let s = gen_with("bcast-chain", p, 100_000, &o);
        let chains = 4.min(p - 1);
        assert_eq!(sends_to(&s, 0).len(), 25 * chains as usize, "P={p}");
        let tails = (1..p).filter(|&r| sends_to(&s, r).is_empty()).count();
        assert_eq!(tails, chains as usize, "P={p}: one tail per chain");
        for r in 1..p {
            let n = sends_to(&s, r);
            assert!(
                n.is_empty() || (n.len() == 25 && n.iter().all(|&d| d == r + 1)),
                "P={p} rank {r}: {n:?}"
            );
        }
    }
    // fanout 1 is bcast-pipeline's chain.
    let one = CollectiveOptions {
        segment: Some(4096),
        fanout: Some(1),
        ..opts()
    };
    let a = gen_with("bcast-chain", 8, 100_000, &one);
    let b = gen_with("bcast-pipeline", 8, 100_000, &one);
    for r in 0..8 {
        assert_eq!(render(&a, r), render(&b, r));
    }
}

#[test]
fn bcast_knomial_radix_decides_the_root_fanout() {
    // radix 4, P = 16: root children 4, 8, 12, 1, 2, 3 ((radix-1) log4 16).
    let s = gen("bcast-knomial", 16, 1000);
    assert_eq!(sends_to(&s, 0), vec![4, 8, 12, 1, 2, 3]);
    assert_eq!(sends_to(&s, 4), vec![5, 6, 7]);
    // radix 2 is the in-order binomial tree of scatter-binomial (children
    // served largest subtree first), not bcast-binomial's tree.
    let two = CollectiveOptions {
        fanout: Some(2),
        ..opts()
    };
    let k2 = gen_with("bcast-knomial", 16, 1000, &two);
    assert_eq!(sends_to(&k2, 0), vec![8, 4, 2, 1]);
    assert_eq!(edges(&k2), edges(&gen("scatter-binomial", 16, 1000)));
    assert_ne!(edges(&k2), edges(&gen("bcast-binomial", 16, 1000)));
    // radix 3, P = 10 (Open MPI's own example): 0 -> 9, 3, 6, 1, 2.
    let three = CollectiveOptions {
        fanout: Some(3),
        ..opts()
    };
    assert_eq!(
        sends_to(&gen_with("bcast-knomial", 10, 1000, &three), 0),
        vec![9, 3, 6, 1, 2]
    );
}

#[test]
fn bcast_binary_tree_is_level_order() {
    let s = gen("bcast-binary-tree", 7, 1000);
    let want: Vec<(u32, u32)> = vec![(0, 1), (0, 2), (1, 3), (1, 5), (2, 4), (2, 6)];
    assert_eq!(edges(&s), want);
}

#[test]
fn bcast_split_binary_tree_halves_then_swaps() {
    // P = 7, 1001 B: halves 501 (left, odd virtual ranks) and 500 (right).
    let s = gen("bcast-split-binary-tree", 7, 1001);
    assert_eq!(
        render(&s, 0),
        vec!["send 501b to 1 tag 0", "send 500b to 2 tag 0 <- 0"]
    );
    // Rank 1 forwards the left half to 3 and 5, then swaps with 2.
    assert_eq!(
        render(&s, 1),
        vec![
            "recv 501b from 0 tag 0",
            "send 501b to 3 tag 0 <- 0",
            "send 501b to 5 tag 0 <- 1",
            "recv 500b from 2 tag 1 <- 2",
            "send 501b to 2 tag 1 <- 2",
        ]
    );
    // P even: the last rank gets the right half from the root.
    let s = gen("bcast-split-binary-tree", 4, 1000);
    assert_eq!(
        render(&s, 0),
        vec![
            "send 500b to 1 tag 0",
            "send 500b to 2 tag 0 <- 0",
            "send 500b to 3 tag 1 <- 1",
        ]
    );
    assert_eq!(
        render(&s, 3),
        vec!["recv 500b from 1 tag 0", "recv 500b from 0 tag 1 <- 0"]
    );
    // 1 byte cannot be halved: Open MPI's chain of fanout 1 instead.
    let a = gen("bcast-split-binary-tree", 5, 1);
    let b = gen_with("bcast-pipeline", 5, 1, &opts());
    for r in 0..5 {
        assert_eq!(render(&a, r), render(&b, r));
    }
}

/// Bytes of the binomial-scatter subtree of virtual rank v, blocks of
/// ceil(size / P) bytes.
fn subtree_bytes(v: u32, p: u32, size: u64) -> u64 {
    let sc = size.div_ceil(p as u64);
    let low = (v & v.wrapping_neg()) as u64;
    (((v as u64) + low) * sc)
        .min(size)
        .saturating_sub(v as u64 * sc)
}

#[test]
fn scatter_allgather_bcasts_deliver_every_block_once() {
    // Virtual rank v receives its scatter subtree's blocks, then in the
    // allgather every block but its own: subtree(v) + size - block(v).
    for name in ["bcast-scatter-allgather", "bcast-scatter-allgather-ring"] {
        for &p in PS {
            for size in [p as u64, 1000, 65_537] {
                for root in [0, p - 1] {
                    let o = CollectiveOptions { root, ..opts() };
                    let s = gen_with(name, p, size, &o);
                    let (_, recvd) = bytes_per_rank(&s);
                    let sc = size.div_ceil(p as u64);
                    for v in 0..p {
                        let r = ((v + root) % p) as usize;
                        let own = sc.min(size.saturating_sub(v as u64 * sc));
                        let want = if p == 1 {
                            0
                        } else if v == 0 {
                            size - own
                        } else {
                            subtree_bytes(v, p, size) + size - own
                        };
                        assert_eq!(recvd[r], want, "{name} P={p} size={size} root={root} v={v}");
                    }
                }
            }
        }
    }
}

#[test]
fn scatter_allgather_ring_takes_p_minus_1_ring_steps() {
    let s = gen("bcast-scatter-allgather-ring", 8, 8000);
    for r in 0..8 {
        let ring: Vec<_> = s
            .ops_of(r)
            .filter(|&id| s.kind(id) == OpKind::Send && s.tag(id) > 0)
            .map(|id| (s.peer(id), s.size(id)))
            .collect();
        assert_eq!(ring, vec![((r + 1) % 8, 1000); 7], "rank {r}");
    }
    // Fewer bytes than ranks: Open MPI's basic_linear.
    for name in ["bcast-scatter-allgather", "bcast-scatter-allgather-ring"] {
        let a = gen(name, 8, 7);
        let b = gen("bcast-basic-linear", 8, 7);
        for r in 0..8 {
            assert_eq!(render(&a, r), render(&b, r), "{name}");
        }
    }
}

#[test]
fn scatter_allgather_non_power_of_two_forwards_to_ranks_without_partner() {
    // P = 3, 3000 B: step 1 rank 0 <-> 1; step 2 rank 0 <-> 2, and rank 0
    // forwards block 2 (just received from 2) to rank 1, whose partner 3 is missing.
    let s = gen("bcast-scatter-allgather", 3, 3000);
    assert_eq!(
        render(&s, 0),
        vec![
            "send 1000b to 2 tag 0",
            "send 1000b to 1 tag 0 <- 0",
            "recv 1000b from 1 tag 1 <- 1",
            "send 1000b to 1 tag 1 <- 1",
            "recv 1000b from 2 tag 2 <- 2,3",
            "send 2000b to 2 tag 2 <- 2,3",
            "send 1000b to 1 tag 2 <- 4,5",
        ]
    );
    assert_eq!(
        render(&s, 1),
        vec![
            "recv 1000b from 0 tag 0",
            "recv 1000b from 0 tag 1 <- 0",
            "send 1000b to 0 tag 1 <- 0",
            "recv 1000b from 0 tag 2 <- 1,2",
        ]
    );
}

#[test]
fn allgather_neighbor_takes_p_over_2_steps() {
    for &p in PS {
        let s = gen("allgather-neighbor", p, 1000);
        let (sent, recvd) = bytes_per_rank(&s);
        for r in 0..p {
            assert_eq!(sent[r as usize], (p as u64 - 1) * 1000, "P={p}");
            assert_eq!(recvd[r as usize], (p as u64 - 1) * 1000, "P={p}");
            let steps = if p % 2 == 0 { p / 2 } else { p - 1 }; // odd P: the ring
            assert_eq!(sends_to(&s, r).len(), steps as usize, "P={p} rank {r}");
        }
    }
    // P = 8: even ranks go right first, then alternate.
    let s = gen("allgather-neighbor", 8, 10);
    assert_eq!(sends_to(&s, 2), vec![3, 1, 3, 1]);
    assert_eq!(sends_to(&s, 3), vec![2, 4, 2, 4]);
}

#[test]
fn two_proc_algorithms_exchange_once() {
    for (name, size, bytes) in [
        ("allgather-two-proc", 1000u64, 1000u64),
        ("alltoall-two-proc", 1000, 1000),
        ("barrier-two-proc", 0, 0),
    ] {
        let s = gen(name, 2, size);
        assert_eq!(
            bytes_per_rank(&s),
            (vec![bytes; 2], vec![bytes; 2]),
            "{name}"
        );
        assert_eq!(sends_to(&s, 0), vec![1]);
        assert_eq!(sends_to(&s, 1), vec![0]);
        assert_eq!(gen(name, 1, size).num_ops(), 0);
        for p in [3u32, 5, 8, 16] {
            match generate(name, p, size.max(1), &opts()) {
                Err(e @ CollectiveError::NeedsTwoRanks { .. }) => assert_eq!(
                    e.to_string(),
                    format!(
                        "{name}: needs exactly 2 ranks (Open MPI's two_procs algorithm), got {p}"
                    )
                ),
                other => panic!("{name} P={p}: {other:?}"),
            }
        }
    }
}

#[test]
fn allreduce_segmented_ring_phases() {
    // Each rank sends 2 size - block(r+1) - block(r+2), like the ring.
    for &p in &PS[1..] {
        for (size, segment) in [(100_000u64, 1000u64), (100_003, 4096), (65_536, 65_536 / 4)] {
            let o = CollectiveOptions {
                segment: Some(segment),
                ..opts()
            };
            let s = gen_with("allreduce-segmented-ring", p, size, &o);
            let (sent, recvd) = bytes_per_rank(&s);
            let block = |b: u32| size / p as u64 + u64::from((b as u64) < size % p as u64);
            for r in 0..p {
                let want = 2 * size - block((r + 1) % p) - block((r + 2) % p);
                assert_eq!(
                    sent[r as usize], want,
                    "P={p} size={size} seg={segment} rank {r}"
                );
                assert_eq!(recvd[r as usize], 2 * size - block(r) - block((r + 1) % p));
            }
        }
    }
    // P = 4, 100 000 B, 1000 B segments: 100 000 / 4000 = 25 phases of 3
    // reduce-scatter sends, plus 3 allgather sends.
    let o = CollectiveOptions {
        segment: Some(1000),
        ..opts()
    };
    let s = gen_with("allreduce-segmented-ring", 4, 100_000, &o);
    assert_eq!(sends_to(&s, 0).len(), 25 * 3 + 3);
    // 100 999 B: remainder 999 >= P and > 4000 / 2? no: still 25 phases; 102 100 B: 26.
    assert_eq!(
        sends_to(&gen_with("allreduce-segmented-ring", 4, 100_999, &o), 0).len(),
        25 * 3 + 3
    );
    assert_eq!(
        sends_to(&gen_with("allreduce-segmented-ring", 4, 102_100, &o), 0).len(),
        26 * 3 + 3
    );
    // One rank: nothing to do, segment or not.
    assert_eq!(
        gen_with("allreduce-segmented-ring", 1, 100_000, &o).num_ops(),
        0
    );
    // Without a segment (Open MPI's forced default 0), or size < P * segment: the ring.
    for (size, o) in [(100_000u64, opts()), (3999, o.clone())] {
        let a = gen_with("allreduce-segmented-ring", 4, size, &o);
        let b = gen("allreduce-ring", 4, size);
        for r in 0..4 {
            assert_eq!(render(&a, r), render(&b, r), "size {size}");
        }
    }
}

#[test]
fn allreduce_basic_linear_reduces_to_zero_then_broadcasts() {
    for &p in PS {
        let s = gen("allreduce-basic-linear", p, 1000);
        let (sent, recvd) = bytes_per_rank(&s);
        let n = p as u64 - 1;
        assert_eq!((sent[0], recvd[0]), (n * 1000, n * 1000), "P={p}");
        for r in 1..p as usize {
            assert_eq!((sent[r], recvd[r]), (1000, 1000), "P={p}");
        }
    }
    // Rank 0 takes P-1 first, then P-2 .. 1; P-1 reductions (the last on its own buffer).
    let o = CollectiveOptions {
        reduce_ns_per_byte: 1.0,
        ..opts()
    };
    let s = gen_with("allreduce-basic-linear", 4, 1000, &o);
    assert_eq!(
        render(&s, 0),
        vec![
            "recv 1000b from 3 tag 0",
            "recv 1000b from 2 tag 0 <- 0",
            "calc 1000 <- 1",
            "recv 1000b from 1 tag 0 <- 2",
            "calc 1000 <- 3",
            "calc 1000 <- 4",
            "send 1000b to 1 tag 1 <- 5",
            "send 1000b to 2 tag 1 <- 5",
            "send 1000b to 3 tag 1 <- 5",
        ]
    );
}

fn message_counts(s: &Schedule) -> Vec<(usize, usize)> {
    (0..s.num_ranks())
        .map(|r| {
            (
                count_kind(s, r, OpKind::Send),
                count_kind(s, r, OpKind::Recv),
            )
        })
        .collect()
}

#[test]
fn barriers_send_empty_messages_in_their_pattern() {
    for &p in PS {
        for name in [
            "barrier-linear",
            "barrier-double-ring",
            "barrier-recursive-doubling",
            "barrier-tree",
        ] {
            let s = gen(name, p, 0);
            let (sent, recvd) = bytes_per_rank(&s);
            assert!(sent.iter().chain(&recvd).all(|&b| b == 0), "{name}");
            let total: usize = message_counts(&s).iter().map(|c| c.0).sum();
            let want = match name {
                "barrier-double-ring" if p > 1 => 2 * p as usize,
                "barrier-recursive-doubling" => {
                    let adj = 1usize << (31 - p.leading_zeros());
                    adj * adj.trailing_zeros() as usize + 2 * (p as usize - adj)
                }
                _ => 2 * (p as usize - 1),
            };
            assert_eq!(total, want, "{name} P={p}");
        }
    }
    // Double ring: every rank sends twice to its right neighbour.
    let s = gen("barrier-double-ring", 5, 0);
    for r in 0..5 {
        assert_eq!(sends_to(&s, r), vec![(r + 1) % 5; 2]);
    }
    // Recursive doubling, P = 5 (p' = 4): rank 4 folds into rank 0 and is released by it.
    let s = gen("barrier-recursive-doubling", 5, 0);
    assert_eq!(
        render(&s, 4),
        vec!["recv 0b from 0 tag 3", "send 0b to 0 tag 0"]
    );
    assert_eq!(
        render(&s, 0),
        vec![
            "recv 0b from 4 tag 0",
            "recv 0b from 1 tag 1 <- 0",
            "send 0b to 1 tag 1 <- 0",
            "recv 0b from 2 tag 2 <- 1,2",
            "send 0b to 2 tag 2 <- 1,2",
            "send 0b to 4 tag 3 <- 3,4",
        ]
    );
    assert_eq!(message_counts(&s)[1], (2, 2));
    // Tree, P = 8: fan-in 1,2,4 -> 0, fan-out 0 -> 4, 2, 1.
    let s = gen("barrier-tree", 8, 0);
    assert_eq!(sends_to(&s, 0), vec![4, 2, 1]);
    assert_eq!(sends_to(&s, 6), vec![4, 7]);
    // Linear: rank 0 waits for all before releasing anyone.
    let s = gen("barrier-linear", 4, 0);
    assert_eq!(
        render(&s, 0),
        vec![
            "recv 0b from 1 tag 0",
            "recv 0b from 2 tag 0",
            "recv 0b from 3 tag 0",
            "send 0b to 1 tag 1 <- 0,1,2",
            "send 0b to 2 tag 1 <- 3",
            "send 0b to 3 tag 1 <- 4",
        ]
    );
}

#[test]
fn scatter_linear_nb_posts_all_sends_or_blocks_every_mth() {
    for &p in PS {
        let s = gen("scatter-linear-nb", p, 1000);
        let (sent, recvd) = bytes_per_rank(&s);
        assert_eq!(sent[0], (p as u64 - 1) * 1000);
        assert!(recvd[1..].iter().all(|&b| b == 1000));
    }
    let s = gen("scatter-linear-nb", 4, 1000);
    assert_eq!(
        render(&s, 0),
        vec![
            "send 1000b to 1 tag 0",
            "send 1000b to 2 tag 0",
            "send 1000b to 3 tag 0"
        ]
    );
    // max_requests 2: the send to rank 2 is blocking, so the send to 3 waits for it.
    let o = CollectiveOptions {
        max_requests: 2,
        ..opts()
    };
    let s = gen_with("scatter-linear-nb", 4, 1000, &o);
    assert_eq!(
        render(&s, 0),
        vec![
            "send 1000b to 1 tag 0",
            "send 1000b to 2 tag 0",
            "send 1000b to 3 tag 0 <- 1"
        ]
    );
}

#[test]
fn fanout_is_checked() {
    for (name, fanout) in [("bcast-knomial", 1u32), ("bcast-chain", 0)] {
        let o = CollectiveOptions {
            fanout: Some(fanout),
            ..opts()
        };
        match generate(name, 8, 1000, &o) {
            Err(CollectiveError::InvalidOption {
                field: "fanout", ..
            }) => {}
            other => panic!("{name} fanout {fanout}: {other:?}"),
        }
    }
}

#[test]
fn allgather_linear_is_a_gather_then_a_bcast_by_open_mpis_fixed_rules() {
    for &p in PS {
        for size in [1u64, 1000, 70_000] {
            let s = gen("allgather-linear", p, size);
            let (_, recvd) = bytes_per_rank(&s);
            let total = p as u64 * size;
            if p > 1 {
                // rank 0 gathers P-1 blocks (and in a scatter_allgather bcast gets
                // back all but its own block); everyone else gets the whole
                // result (plus, in a binomial gather, the blocks it forwards).
                let again = total - total.div_ceil(p as u64);
                assert!(
                    recvd[0] == total - size || recvd[0] == total - size + again,
                    "P={p} size={size}: {}",
                    recvd[0]
                );
                assert!(
                    recvd[1..].iter().all(|&b| b >= total),
                    "P={p} size={size}: {recvd:?}"
                );
            }
        }
    }
    // P = 4, 1000 B: gather binomial (< 1 KiB per rank), bcast binomial (4000 B < 8 KiB).
    let s = gen("allgather-linear", 4, 1000);
    for r in 0..4 {
        let g = render(&gen("gather-binomial", 4, 1000), r);
        assert_eq!(render(&s, r)[..g.len()], g[..], "rank {r}");
    }
    assert_eq!(
        render(&s, 1),
        vec![
            "send 1000b to 0 tag 0",
            "recv 4000b from 0 tag 1 <- 0",
            "send 4000b to 3 tag 1 <- 1",
        ]
    );
    // P = 8, 1 MiB per rank: gather binomial, bcast of 8 MiB basic_linear.
    let s = gen("allgather-linear", 8, 1 << 20);
    assert_eq!(sends_to(&s, 0), (1..8).collect::<Vec<_>>());
}

#[test]
fn allreduce_nonoverlapping_is_a_reduce_then_a_bcast_by_open_mpis_fixed_rules() {
    for &p in PS {
        for size in [8u64, 1000, 70_000] {
            let s = gen("allreduce-nonoverlapping", p, size);
            let (sent, recvd) = bytes_per_rank(&s);
            // Reduce: every rank but 0 sends its (partial) result once; bcast
            // (not scatter_allgather at these sizes): every rank but 0 gets it once.
            let n = p as u64 - 1;
            assert_eq!(sent.iter().sum::<u64>(), 2 * n * size, "P={p} size={size}");
            for (r, &got) in recvd.iter().enumerate().skip(1) {
                assert!(got >= size, "P={p} size={size} rank {r}");
            }
        }
    }
    // P = 8, 1000 B: reduce binary (P 8..15, < 8 KiB), bcast knomial (< 4 KiB).
    let o = CollectiveOptions {
        reduce_ns_per_byte: 1.0,
        ..opts()
    };
    let s = gen_with("allreduce-nonoverlapping", 8, 1000, &o);
    assert_eq!(
        render(&s, 1),
        vec![
            "recv 1000b from 3 tag 0",
            "recv 1000b from 5 tag 0",
            "calc 1000 <- 0",
            "calc 1000 <- 1,2",
            "send 1000b to 0 tag 0 <- 3",
            "recv 1000b from 0 tag 1 <- 4",
        ]
    );
    assert_eq!(sends_to(&s, 0), vec![4, 1, 2, 3]);
    // The fixed rules' corners we do not model are named.
    match generate("allreduce-nonoverlapping", 3, 5, &opts()) {
        Err(e @ CollectiveError::NotModelled { .. }) => assert_eq!(
            e.to_string(),
            "allreduce-nonoverlapping: at 3 ranks and 5 bytes Open MPI 4.1.4's fixed rules \
             pick reduce redscat_gather, which is not modelled"
        ),
        other => panic!("{other:?}"),
    }
    // redscat_gather below 2 elements is Open MPI's linear reduce.
    assert_eq!(gen("allreduce-nonoverlapping", 3, 1).num_ranks(), 3);
}
