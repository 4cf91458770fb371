//! Bytes conservation and the closed forms of each family.

mod collectives_support;
use collectives_support::*;
use commodel_engine::collectives::CollectiveOptions;
use commodel_engine::OpKind;

const PS: &[u32] = &[2, 3, 4, 5, 7, 8, 16];

fn ceil_log2(p: u32) -> u32 {
    32 - (p - 1).leading_zeros()
}

#[test]
fn alltoall_each_rank_sends_and_receives_p_minus_1_blocks() {
    for name in [
        "alltoall-xor-pairwise",
        "alltoall-xor-post-all",
        "alltoall-basic-linear",
        "alltoall-pairwise",
        "alltoall-linear-sync",
    ] {
        for p in rank_counts(name, PS) {
            let s = gen(name, p, 1000);
            let (sent, recvd) = bytes_per_rank(&s);
            for r in 0..p as usize {
                assert_eq!(sent[r], (p as u64 - 1) * 1000, "{name} P={p} rank {r}");
                assert_eq!(recvd[r], (p as u64 - 1) * 1000, "{name} P={p} rank {r}");
                assert_eq!(
                    count_kind(&s, r as u32, OpKind::Send),
                    p as usize - 1,
                    "{name}: one message per peer"
                );
            }
        }
    }
}

#[test]
fn alltoall_modified_bruck_moves_blocks_with_bit_k_set() {
    // P = 5: step 1 moves blocks {1,3} (2), step 2 {2,3} (2), step 4 {4} (1).
    let s = gen("alltoall-modified-bruck", 5, 10);
    let (sent, recvd) = bytes_per_rank(&s);
    assert_eq!(sent, vec![50; 5]);
    assert_eq!(recvd, vec![50; 5]);
    for p in PS.iter().copied() {
        let s = gen("alltoall-modified-bruck", p, 10);
        // Every block j != 0 travels once per set bit of j.
        let expected: u64 = (1..p).map(|j| j.count_ones() as u64 * 10).sum();
        let (sent, _) = bytes_per_rank(&s);
        assert!(
            sent.iter().all(|&b| b == expected),
            "P={p}: {sent:?} vs {expected}"
        );
        assert_eq!(count_kind(&s, 0, OpKind::Send), ceil_log2(p) as usize);
    }
}

#[test]
fn gathers_deliver_p_minus_1_blocks_to_the_root() {
    for name in [
        "gather-basic-linear",
        "gather-binomial",
        "gather-linear-sync",
        "gather-split",
    ] {
        for p in PS.iter().copied() {
            for size in [2u64, 1000, 5000] {
                let s = gen(name, p, size);
                let (sent, recvd) = bytes_per_rank(&s);
                assert_eq!(recvd[0], (p as u64 - 1) * size, "{name} P={p} size={size}");
                assert_eq!(sent[0], 0);
                // Every non-root's own block leaves it: sent - received = size.
                for r in 1..p as usize {
                    assert_eq!(sent[r] - recvd[r], size, "{name} P={p} rank {r}");
                }
            }
        }
    }
}

#[test]
fn gather_split_cuts_into_k_sub_gathers_with_the_remainder_last() {
    let o = CollectiveOptions {
        splits: 3,
        ..opts()
    };
    let s = gen_with("gather-split", 4, 1001, &o);
    // Each non-root sends 333, 333, 335 bytes; between two sub-gathers, Open MPI's
    // fixed-decision barrier for 4 ranks (linear: a 0-byte send to the root, then
    // the root's 0-byte release). Each part's tags follow the part before.
    assert_eq!(
        render(&s, 2),
        vec![
            "send 333b to 0 tag 0",
            "send 0b to 0 tag 1 <- 0",
            "recv 0b from 0 tag 2 <- 1",
            "send 333b to 0 tag 3 <- 2",
            "send 0b to 0 tag 4 <- 3",
            "recv 0b from 0 tag 5 <- 4",
            "send 335b to 0 tag 6 <- 5",
        ]
    );
    // The root receives sub-gather j from ranks 1..3 in order; the next sub-gather
    // starts after its last release of the barrier.
    let root = render(&s, 0);
    assert_eq!(root.len(), 21);
    assert_eq!(root[0], "recv 333b from 1 tag 0");
    assert_eq!(root[6], "send 0b to 1 tag 2 <- 3,4,5");
    assert_eq!(root[9], "recv 333b from 1 tag 3 <- 8");
    assert_eq!(root[20], "recv 335b from 3 tag 6 <- 19");
    // 16 ranks: recursive doubling between the sub-gathers, 4 exchanges per rank.
    let s = gen_with("gather-split", 16, 1001, &o);
    let zero_sends = render(&s, 5)
        .iter()
        .filter(|l| l.starts_with("send 0b"))
        .count();
    assert_eq!(zero_sends, 2 * 4);
}

#[test]
fn gather_linear_sync_segments() {
    // Default first segment 1 KiB; the rest in the second; 0-byte go messages.
    let s = gen("gather-linear-sync", 3, 3000);
    assert_eq!(
        render(&s, 1),
        vec![
            "recv 0b from 0 tag 0",
            "send 1024b to 0 tag 1 <- 0",
            "send 1976b to 0 tag 2 <- 1"
        ]
    );
    // Below the first segment the whole message goes first and an empty second follows.
    let s = gen("gather-linear-sync", 2, 100);
    assert_eq!(
        render(&s, 1),
        vec![
            "recv 0b from 0 tag 0",
            "send 100b to 0 tag 1 <- 0",
            "send 0b to 0 tag 2 <- 1"
        ]
    );
}

#[test]
fn scatters_give_every_rank_one_block() {
    for name in ["scatter-basic-linear", "scatter-binomial"] {
        for p in PS.iter().copied() {
            let s = gen(name, p, 777);
            let (sent, recvd) = bytes_per_rank(&s);
            assert_eq!(sent[0], (p as u64 - 1) * 777, "{name} P={p}");
            for r in 1..p as usize {
                assert_eq!(
                    recvd[r] - sent[r],
                    777,
                    "{name} P={p} rank {r} keeps exactly its block"
                );
                assert_eq!(count_kind(&s, r as u32, OpKind::Recv), 1);
            }
        }
    }
}

#[test]
fn bcasts_deliver_the_buffer_once_to_every_non_root() {
    for name in ["bcast-basic-linear", "bcast-binomial", "bcast-pipeline"] {
        for p in PS.iter().copied() {
            for size in [1u64, 8192, 100_000] {
                let s = gen(name, p, size);
                let (sent, recvd) = bytes_per_rank(&s);
                assert_eq!(recvd[0], 0);
                assert!(
                    recvd[1..].iter().all(|&b| b == size),
                    "{name} P={p} size={size}: {recvd:?}"
                );
                assert_eq!(sent.iter().sum::<u64>(), (p as u64 - 1) * size);
            }
        }
    }
}

#[test]
fn bcast_pipeline_segments_sum_to_size() {
    for (seg, size, nseg) in [
        (None, 100_000u64, 13usize),
        (Some(1000), 100_000, 100),
        (Some(30_000), 100_000, 4),
        (Some(1 << 20), 5, 1),
    ] {
        let o = CollectiveOptions {
            segment: seg,
            ..opts()
        };
        let s = gen_with("bcast-pipeline", 4, size, &o);
        for r in 1..4 {
            let sizes: Vec<u64> = s
                .ops_of(r)
                .filter(|&id| s.kind(id) == OpKind::Recv)
                .map(|id| s.size(id))
                .collect();
            assert_eq!(sizes.len(), nseg, "segment {seg:?}");
            assert_eq!(sizes.iter().sum::<u64>(), size);
            let seg = seg.unwrap_or(8192).min(size);
            assert!(sizes[..nseg - 1].iter().all(|&b| b == seg));
        }
        // The chain: rank r receives only from r-1 and sends only to r+1.
        for r in 0..4u32 {
            for id in s.ops_of(r) {
                match s.kind(id) {
                    OpKind::Send => assert_eq!(s.peer(id), r + 1),
                    OpKind::Recv => assert_eq!(s.peer(id), r - 1),
                    OpKind::Calc => unreachable!(),
                }
            }
        }
    }
}

#[test]
fn allgathers_receive_p_minus_1_blocks() {
    for name in [
        "allgather-ring",
        "allgather-recursive-doubling",
        "allgather-bruck",
    ] {
        for p in PS.iter().copied() {
            let s = gen(name, p, 100);
            let (sent, recvd) = bytes_per_rank(&s);
            for r in 0..p as usize {
                assert_eq!(recvd[r], (p as u64 - 1) * 100, "{name} P={p} rank {r}");
                assert_eq!(sent[r], (p as u64 - 1) * 100, "{name} P={p} rank {r}");
            }
            let steps = if name == "allgather-ring" {
                p - 1
            } else {
                ceil_log2(p)
            };
            assert_eq!(
                count_kind(&s, 0, OpKind::Send),
                steps as usize,
                "{name} P={p}"
            );
        }
    }
}

#[test]
fn allreduce_ring_sends_two_p_minus_1_over_p_of_the_buffer() {
    for p in PS.iter().copied() {
        // Divisible: exactly 2 (P-1)/P * size.
        let size = 840 * 16;
        let s = gen("allreduce-ring", p, size);
        let (sent, recvd) = bytes_per_rank(&s);
        if size % p as u64 == 0 {
            assert!(
                sent.iter()
                    .all(|&b| b == 2 * (p as u64 - 1) * size / p as u64),
                "P={p}: {sent:?}"
            );
        }
        assert_eq!(sent, recvd);
        // Uneven blocks (first size % P blocks one byte larger): rank r sends
        // every block but r+1 in phase 1 and every block but r+2 in phase 2.
        let size = 1003u64;
        let s = gen("allreduce-ring", p, size);
        let (sent, _) = bytes_per_rank(&s);
        let block = |b: u32| size / p as u64 + u64::from((b as u64) < size % p as u64);
        for r in 0..p {
            let expected = 2 * size - block((r + 1) % p) - block((r + 2) % p);
            assert_eq!(sent[r as usize], expected, "P={p} rank {r}");
        }
        assert_eq!(count_kind(&s, 0, OpKind::Send), 2 * (p as usize - 1));
    }
}

#[test]
fn allreduce_ring_with_fewer_bytes_than_ranks_is_recursive_doubling() {
    let a = gen("allreduce-ring", 8, 5);
    let b = gen("allreduce-recursive-doubling", 8, 5);
    for r in 0..8 {
        assert_eq!(render(&a, r), render(&b, r));
    }
}

#[test]
fn allreduce_recursive_doubling_sends_log2_p_buffers() {
    for p in PS.iter().copied() {
        let size = 1000u64;
        let s = gen("allreduce-recursive-doubling", p, size);
        let (sent, recvd) = bytes_per_rank(&s);
        let adj = 1u32 << (31 - p.leading_zeros());
        let steps = adj.trailing_zeros() as u64;
        let extra = p - adj;
        for r in 0..p {
            let expected = if r < 2 * extra {
                if r % 2 == 0 {
                    size
                } else {
                    (steps + 1) * size
                }
            } else {
                steps * size
            };
            assert_eq!(sent[r as usize], expected, "P={p} rank {r}");
        }
        assert_eq!(sent.iter().sum::<u64>(), recvd.iter().sum::<u64>());
    }
}

#[test]
fn allreduce_rabenseifner_sends_two_p_minus_1_over_p_of_the_buffer() {
    for p in PS.iter().copied() {
        let pof2 = 1u64 << (31 - p.leading_zeros());
        let rem = p as u64 - pof2;
        let size = 2 * 16 * 105u64; // divisible by 2 * p' for every P here
        let s = gen("allreduce-rabenseifner", p, size);
        let (sent, recvd) = bytes_per_rank(&s);
        let core = 2 * (pof2 - 1) * size / pof2;
        for r in 0..p as u64 {
            let expected = if r < 2 * rem {
                if r % 2 == 0 {
                    size / 2 + core + size
                } else {
                    size
                }
            } else {
                core
            };
            assert_eq!(sent[r as usize], expected, "P={p} rank {r}");
        }
        assert_eq!(sent.iter().sum::<u64>(), recvd.iter().sum::<u64>());
        // Uneven halves: the same total as an exact split, rank by rank,
        // when P is a power of two (each step sends w - kept, keeps the rest).
        if p.is_power_of_two() {
            let s = gen("allreduce-rabenseifner", p, 1001);
            let (sent, recvd) = bytes_per_rank(&s);
            assert_eq!(sent, recvd, "P={p}: pairs exchange complementary halves");
        }
    }
}

#[test]
fn reduce_cost_adds_one_calc_per_received_buffer() {
    let o = CollectiveOptions {
        reduce_ns_per_byte: 0.5,
        ..opts()
    };
    let s = gen_with("allreduce-recursive-doubling", 4, 1001, &o);
    for r in 0..4 {
        let calcs: Vec<u64> = s
            .ops_of(r)
            .filter(|&id| s.kind(id) == OpKind::Calc)
            .map(|id| s.size(id))
            .collect();
        assert_eq!(calcs, vec![501, 501], "ceil(1001 * 0.5) ns per step");
    }
    assert_eq!(
        render(&s, 0),
        vec![
            "recv 1001b from 1 tag 1",
            "send 1001b to 1 tag 1",
            "calc 501 <- 0,1",
            "recv 1001b from 2 tag 2 <- 2",
            "send 1001b to 2 tag 2 <- 2",
            "calc 501 <- 3,4",
        ]
    );
    // ring: P-1 reductions of one block each.
    let s = gen_with("allreduce-ring", 4, 1000, &o);
    assert_eq!(count_kind(&s, 0, OpKind::Calc), 3);
}

#[test]
fn barrier_is_log_steps_of_empty_messages() {
    for p in PS.iter().copied() {
        let s = gen("barrier-dissemination", p, 0);
        let (sent, recvd) = bytes_per_rank(&s);
        assert!(sent.iter().chain(&recvd).all(|&b| b == 0));
        for r in 0..p {
            assert_eq!(count_kind(&s, r, OpKind::Send), ceil_log2(p) as usize);
        }
    }
}
