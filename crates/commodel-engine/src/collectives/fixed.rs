//! Open MPI 4.1.4's fixed decision rules (`coll_tuned_decision_fixed.c`) for
//! the collectives that other algorithms call through the communicator:
//! allgather linear runs a gather and a bcast, allreduce nonoverlapping a
//! reduce and a bcast, and with only allgather (allreduce) forced Open MPI
//! picks those by these rules (segment size 0, fan-in/out 0).

/// Gather algorithm number (1 basic_linear, 2 binomial, 3 linear_sync) for
/// `p` ranks and `block` bytes per rank.
pub(crate) fn gather(p: u32, block: u64) -> u32 {
    let below = |limits: &[(u64, u32)], last: u32| first_below(block, limits, last);
    match p {
        0..=3 => below(&[(2, 3), (4, 1), (32_768, 2), (65_536, 1), (131_072, 2)], 3),
        4..=7 => below(&[(1024, 2), (8192, 1), (32_768, 2), (262_144, 1)], 3),
        8..=255 => 2,
        256..=511 => below(&[(2048, 2), (8192, 1)], 2),
        _ => 2,
    }
}

/// Bcast algorithm number (1 basic_linear ... 9 scatter_allgather_ring, as
/// in `coll_tuned_bcast_algorithm`) for `p` ranks and a buffer of `bytes`.
pub(crate) fn bcast(p: u32, bytes: u64) -> u32 {
    let below = |limits: &[(u64, u32)], last: u32| first_below(bytes, limits, last);
    const K: u64 = 1024;
    match p {
        0..=3 => below(
            &[
                (32, 3),
                (256, 5),
                (512, 3),
                (K, 7),
                (32 * K, 1),
                (128 * K, 5),
                (256 * K, 2),
                (512 * K, 1),
                (K * K, 6),
            ],
            5,
        ),
        4..=7 => below(&[(64, 5), (128, 6), (2 * K, 5), (8 * K, 6), (K * K, 1)], 2),
        8..=15 => below(&[(8, 7), (64, 5), (4 * K, 7), (16 * K, 5), (32 * K, 6)], 1),
        16..=31 => below(&[(4 * K, 7), (K * K, 6)], 8),
        32..=63 => below(&[(2 * K, 6)], 7),
        64..=127 => 7,
        128..=255 => below(&[(2, 6), (16 * K, 5), (32 * K, 1), (64 * K, 5)], 7),
        256..=1023 => below(&[(16 * K, 7), (32 * K, 4)], 7),
        1024..=2047 => below(&[(512 * K, 7)], 8),
        2048..=4095 => below(&[(256 * K, 7)], 8),
        _ => below(&[(8 * K, 7), (16 * K, 5), (256 * K, 7)], 8),
    }
}

/// Reduce algorithm number (1 linear, 2 chain, 3 pipeline, 4 binary,
/// 5 binomial, 6 in_order_binary, 7 redscat_gather) for `p` ranks, a buffer of
/// `bytes` and a commutative operation.
pub(crate) fn reduce(p: u32, bytes: u64) -> u32 {
    let below = |limits: &[(u64, u32)], last: u32| first_below(bytes, limits, last);
    const K: u64 = 1024;
    match p {
        0..=3 => below(
            &[
                (8, 7),
                (16, 4),
                (32, 3),
                (256 * K, 1),
                (512 * K, 3),
                (K * K, 2),
            ],
            3,
        ),
        4..=7 => below(
            &[
                (4 * K, 4),
                (64 * K, 2),
                (256 * K, 5),
                (512 * K, 1),
                (K * K, 5),
            ],
            1,
        ),
        8..=15 => below(&[(8 * K, 4)], 5),
        16..=31 => below(&[(4 * K, 4)], 5),
        32..=255 => 5,
        256..=511 => below(&[(8 * K, 5), (16 * K, 6)], 5),
        512..=2047 => 5,
        2048..=4095 => below(&[(512, 5), (K, 6), (8 * K, 5), (16 * K, 6)], 5),
        _ => below(
            &[
                (16, 5),
                (32, 6),
                (K, 5),
                (2 * K, 6),
                (8 * K, 5),
                (16 * K, 6),
            ],
            5,
        ),
    }
}

/// The algorithm of the first `(limit, algorithm)` with `x < limit`, else `last`.
/// Barrier algorithm number (1 linear, 3 recursive_doubling, 4 bruck, 6
/// tree, as in `coll_tuned_barrier_algorithm`) for `p` ranks.
pub(crate) fn barrier(p: u32) -> u32 {
    match p {
        0..=3 => 3,
        4..=7 => 1,
        8..=63 => 3,
        64..=255 => 4,
        256..=511 => 6,
        512..=1023 => 4,
        1024..=4095 => 6,
        _ => 4,
    }
}

fn first_below(x: u64, limits: &[(u64, u32)], last: u32) -> u32 {
    limits
        .iter()
        .find(|&&(limit, _)| x < limit)
        .map_or(last, |&(_, alg)| alg)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rule_edges() {
        assert_eq!(super::gather(2, 1), 3);
        assert_eq!(super::gather(2, 3), 1);
        assert_eq!(super::gather(3, 32_767), 2);
        assert_eq!(super::gather(3, 200_000), 3);
        assert_eq!(super::gather(5, 8192), 2);
        assert_eq!(super::gather(16, 1 << 20), 2);
        assert_eq!(super::bcast(2, 31), 3);
        assert_eq!(super::bcast(2, 1 << 20), 5);
        assert_eq!(super::bcast(4, 8191), 6);
        assert_eq!(super::bcast(4, 1 << 20), 2);
        assert_eq!(super::bcast(8, 32 * 1024), 1);
        assert_eq!(super::bcast(16, 4096), 6);
        assert_eq!(super::bcast(16, 1 << 20), 8);
        assert_eq!(super::bcast(100, 1), 7);
        assert_eq!(super::reduce(2, 7), 7);
        assert_eq!(super::reduce(3, 100), 1);
        assert_eq!(super::reduce(3, 2 << 20), 3);
        assert_eq!(super::reduce(4, 4095), 4);
        assert_eq!(super::reduce(4, 4096), 2);
        assert_eq!(super::reduce(7, 1 << 20), 1);
        assert_eq!(super::reduce(16, 4096), 5);
        assert_eq!(super::reduce(300, 10_000), 6);
        assert_eq!(super::barrier(3), 3);
        assert_eq!(super::barrier(4), 1);
        assert_eq!(super::barrier(7), 1);
        assert_eq!(super::barrier(8), 3);
        assert_eq!(super::barrier(16), 3);
        assert_eq!(super::barrier(64), 4);
        assert_eq!(super::barrier(300), 6);
        assert_eq!(super::barrier(5000), 4);
    }
}
