//! Small cases written out by hand (who sends what to whom, in which order,
//! waiting for what), and the PLogP closed forms of PlogPT eq. 18 and 19.
//! Each op renders as `kind bytes peer tag <- local indices it requires`.

mod collectives_support;
use collectives_support::*;
use commodel_engine::collectives::CollectiveOptions;

fn all_ranks(name: &str, p: u32, size: u64, o: &CollectiveOptions) -> Vec<Vec<String>> {
    let s = gen_with(name, p, size, o);
    (0..p).map(|r| render(&s, r)).collect()
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn bcast_binomial_p8_root0() {
    // Open MPI's bmtree: 0 -> {1, 2, 4}, 1 -> {3, 5}, 2 -> {6}, 3 -> {7};
    // a node posts all its sends together once its receive is done.
    let got = all_ranks("bcast-binomial", 8, 64, &opts());
    let want = vec![
        v(&[
            "send 64b to 1 tag 0",
            "send 64b to 2 tag 0",
            "send 64b to 4 tag 0",
        ]),
        v(&[
            "recv 64b from 0 tag 0",
            "send 64b to 3 tag 0 <- 0",
            "send 64b to 5 tag 0 <- 0",
        ]),
        v(&["recv 64b from 0 tag 0", "send 64b to 6 tag 0 <- 0"]),
        v(&["recv 64b from 1 tag 0", "send 64b to 7 tag 0 <- 0"]),
        v(&["recv 64b from 0 tag 0"]),
        v(&["recv 64b from 1 tag 0"]),
        v(&["recv 64b from 2 tag 0"]),
        v(&["recv 64b from 3 tag 0"]),
    ];
    assert_eq!(got, want);
}

#[test]
fn bcast_binomial_p6_root4_is_the_rotated_tree() {
    // Virtual ranks v = (r - 4) mod 6: real 4,5,0,1,2,3. Tree on v: 0 -> {1,2,4},
    // 1 -> {3,5}, 2 -> {}, ... so real 4 -> {5, 0, 2}, 5 -> {1, 3}.
    let got = all_ranks(
        "bcast-binomial",
        6,
        8,
        &CollectiveOptions { root: 4, ..opts() },
    );
    assert_eq!(
        got[4],
        v(&[
            "send 8b to 5 tag 0",
            "send 8b to 0 tag 0",
            "send 8b to 2 tag 0"
        ])
    );
    assert_eq!(
        got[5],
        v(&[
            "recv 8b from 4 tag 0",
            "send 8b to 1 tag 0 <- 0",
            "send 8b to 3 tag 0 <- 0"
        ])
    );
    assert_eq!(got[3], v(&["recv 8b from 5 tag 0"]));
}

#[test]
fn bcast_pipeline_three_ranks_three_segments() {
    // 20000 bytes in segments of 8192: 8192, 8192, 3616 (tags 0, 1, 2).
    let got = all_ranks("bcast-pipeline", 3, 20000, &opts());
    let want = vec![
        v(&[
            "send 8192b to 1 tag 0",
            "send 8192b to 1 tag 1 <- 0",
            "send 3616b to 1 tag 2 <- 1",
        ]),
        // irecv 0, irecv 1, wait 0, forward 0, wait; irecv 2, wait 1, forward 1; wait 2, forward 2.
        v(&[
            "recv 8192b from 0 tag 0",
            "recv 8192b from 0 tag 1",
            "send 8192b to 2 tag 0 <- 0",
            "recv 3616b from 0 tag 2 <- 2",
            "send 8192b to 2 tag 1 <- 1,2",
            "send 3616b to 2 tag 2 <- 3,4",
        ]),
        // leaf: irecv s+1 is posted after waiting for s-1.
        v(&[
            "recv 8192b from 1 tag 0",
            "recv 8192b from 1 tag 1",
            "recv 3616b from 1 tag 2 <- 0",
        ]),
    ];
    assert_eq!(got, want);
}

#[test]
fn scatter_binomial_p8_sends_largest_subtree_first() {
    let got = all_ranks("scatter-binomial", 8, 8, &opts());
    assert_eq!(
        got[0],
        v(&[
            "send 32b to 4 tag 0",
            "send 16b to 2 tag 0 <- 0",
            "send 8b to 1 tag 0 <- 1"
        ])
    );
    assert_eq!(
        got[4],
        v(&[
            "recv 32b from 0 tag 0",
            "send 16b to 6 tag 0 <- 0",
            "send 8b to 5 tag 0 <- 1"
        ])
    );
    assert_eq!(
        got[6],
        v(&["recv 16b from 4 tag 0", "send 8b to 7 tag 0 <- 0"])
    );
    assert_eq!(
        got[2],
        v(&["recv 16b from 0 tag 0", "send 8b to 3 tag 0 <- 0"])
    );
    for r in [1, 3, 5, 7] {
        assert_eq!(got[r].len(), 1);
    }
}

#[test]
fn gather_binomial_p8_receives_nearest_child_first() {
    let got = all_ranks("gather-binomial", 8, 8, &opts());
    assert_eq!(
        got[0],
        v(&[
            "recv 8b from 1 tag 0",
            "recv 16b from 2 tag 0 <- 0",
            "recv 32b from 4 tag 0 <- 1"
        ])
    );
    assert_eq!(
        got[4],
        v(&[
            "recv 8b from 5 tag 0",
            "recv 16b from 6 tag 0 <- 0",
            "send 32b to 0 tag 0 <- 1"
        ])
    );
    assert_eq!(
        got[6],
        v(&["recv 8b from 7 tag 0", "send 16b to 4 tag 0 <- 0"])
    );
    assert_eq!(got[7], v(&["send 8b to 6 tag 0"]));
}

#[test]
fn gather_linear_sync_root_serves_ranks_one_by_one() {
    let got = all_ranks("gather-linear-sync", 3, 3000, &opts());
    assert_eq!(
        got[0],
        v(&[
            "recv 1024b from 1 tag 1",
            "send 0b to 1 tag 0",
            "recv 1976b from 1 tag 2 <- 1",
            "recv 1024b from 2 tag 1 <- 0,1",
            "send 0b to 2 tag 0 <- 0,1",
            "recv 1976b from 2 tag 2 <- 4",
        ])
    );
}

#[test]
fn alltoall_xor_post_all_p4() {
    // Receives posted in rank order (tag = r xor src), then chained blocking sends.
    let got = all_ranks("alltoall-xor-post-all", 4, 10, &opts());
    assert_eq!(
        got[1],
        v(&[
            "recv 10b from 0 tag 1",
            "recv 10b from 2 tag 3",
            "recv 10b from 3 tag 2",
            "send 10b to 0 tag 1",
            "send 10b to 3 tag 2 <- 3",
            "send 10b to 2 tag 3 <- 4",
        ])
    );
}

#[test]
fn alltoall_xor_pairwise_p4() {
    let got = all_ranks("alltoall-xor-pairwise", 4, 10, &opts());
    assert_eq!(
        got[2],
        v(&[
            "recv 10b from 3 tag 1",
            "send 10b to 3 tag 1",
            "recv 10b from 0 tag 2 <- 0,1",
            "send 10b to 0 tag 2 <- 0,1",
            "recv 10b from 1 tag 3 <- 2,3",
            "send 10b to 1 tag 3 <- 2,3",
        ])
    );
}

#[test]
fn alltoall_basic_linear_and_linear_sync() {
    // Receives from r+1, r+2, ...; sends to r-1, r-2, ...; nothing waits.
    let got = all_ranks("alltoall-basic-linear", 4, 5, &opts());
    assert_eq!(
        got[1],
        v(&[
            "recv 5b from 2 tag 0",
            "recv 5b from 3 tag 0",
            "recv 5b from 0 tag 0",
            "send 5b to 0 tag 0",
            "send 5b to 3 tag 0",
            "send 5b to 2 tag 0"
        ])
    );
    // Open MPI's default (no limit) gives the same schedule.
    assert_eq!(all_ranks("alltoall-linear-sync", 4, 5, &opts()), got);
    // With one request per direction, each refills the slot of the previous one.
    let got = all_ranks(
        "alltoall-linear-sync",
        4,
        5,
        &CollectiveOptions {
            max_requests: 1,
            ..opts()
        },
    );
    assert_eq!(
        got[1],
        v(&[
            "recv 5b from 2 tag 0",
            "recv 5b from 3 tag 0 <- 0",
            "recv 5b from 0 tag 0 <- 1",
            "send 5b to 0 tag 0",
            "send 5b to 3 tag 0 <- 3",
            "send 5b to 2 tag 0 <- 4",
        ])
    );
}

#[test]
fn alltoall_pairwise_and_bruck_p3() {
    let got = all_ranks("alltoall-pairwise", 3, 5, &opts());
    assert_eq!(
        got[0],
        v(&[
            "recv 5b from 2 tag 1",
            "send 5b to 1 tag 1",
            "recv 5b from 1 tag 2 <- 0,1",
            "send 5b to 2 tag 2 <- 0,1"
        ])
    );
    // Bruck P=3: distance 1 carries blocks {1} , distance 2 blocks {2}.
    let got = all_ranks("alltoall-modified-bruck", 3, 5, &opts());
    assert_eq!(
        got[0],
        v(&[
            "recv 5b from 2 tag 0",
            "send 5b to 1 tag 0",
            "recv 5b from 1 tag 1 <- 0,1",
            "send 5b to 2 tag 1 <- 0,1"
        ])
    );
}

#[test]
fn allgather_bruck_p6_block_counts() {
    // distance 1: 1 block, 2: 2 blocks, 4: the remaining 6-4 = 2 blocks.
    let got = all_ranks("allgather-bruck", 6, 10, &opts());
    assert_eq!(
        got[0],
        v(&[
            "recv 10b from 1 tag 0",
            "send 10b to 5 tag 0",
            "recv 20b from 2 tag 1 <- 0,1",
            "send 20b to 4 tag 1 <- 0,1",
            "recv 20b from 4 tag 2 <- 2,3",
            "send 20b to 2 tag 2 <- 2,3",
        ])
    );
}

#[test]
fn allreduce_recursive_doubling_p3_folds_rank_0_into_1() {
    let got = all_ranks("allreduce-recursive-doubling", 3, 8, &opts());
    assert_eq!(
        got[0],
        v(&["send 8b to 1 tag 0", "recv 8b from 1 tag 2 <- 0"])
    );
    assert_eq!(
        got[1],
        v(&[
            "recv 8b from 0 tag 0",
            "recv 8b from 2 tag 1 <- 0",
            "send 8b to 2 tag 1 <- 0",
            "send 8b to 0 tag 2 <- 1,2"
        ])
    );
    assert_eq!(got[2], v(&["recv 8b from 1 tag 1", "send 8b to 1 tag 1"]));
}

#[test]
fn allreduce_rabenseifner_p4_halves() {
    // 1000 bytes, P = 4: step 0 with r xor 1 (500 each way), step 1 with r xor 2
    // (250), then the allgather in reverse: 250 with r xor 2, 500 with r xor 1.
    let got = all_ranks("allreduce-rabenseifner", 4, 1000, &opts());
    assert_eq!(
        got[0],
        v(&[
            "recv 500b from 1 tag 2",
            "send 500b to 1 tag 2",
            "recv 250b from 2 tag 3 <- 0,1",
            "send 250b to 2 tag 3 <- 0,1",
            "recv 250b from 2 tag 4 <- 2,3",
            "send 250b to 2 tag 4 <- 2,3",
            "recv 500b from 1 tag 5 <- 4,5",
            "send 500b to 1 tag 5 <- 4,5",
        ])
    );
}

#[test]
fn barrier_p5() {
    let got = all_ranks("barrier-dissemination", 5, 0, &opts());
    assert_eq!(
        got[0],
        v(&[
            "recv 0b from 4 tag 0",
            "send 0b to 1 tag 0",
            "recv 0b from 3 tag 1 <- 0,1",
            "send 0b to 2 tag 1 <- 0,1",
            "recv 0b from 1 tag 2 <- 2,3",
            "send 0b to 4 tag 2 <- 2,3",
        ])
    );
}

/// PlogPT eq. 18: Alltoall_A under PLogP takes (P-1)(g+L); eq. 19: Alltoall_B
/// takes (P-1)g + L. Checked on the schedules' dependency structure with the
/// minimal PLogP evaluator of the support module.
#[test]
fn plogp_equations_18_and_19() {
    for p in [2u32, 4, 8, 16, 32] {
        for (g, l) in [(100u64, 1000u64), (1000, 100), (7, 7)] {
            let a = plogp_finish(&gen("alltoall-xor-pairwise", p, 1024), g, l);
            assert!(
                a.iter().all(|&t| t == (p as u64 - 1) * (g + l)),
                "eq. 18, P={p} g={g} L={l}: {a:?}"
            );
            let b = plogp_finish(&gen("alltoall-xor-post-all", p, 1024), g, l);
            assert!(
                b.iter().all(|&t| t == (p as u64 - 1) * g + l),
                "eq. 19, P={p} g={g} L={l}: {b:?}"
            );
        }
    }
}
