//! Our generators against the calls Open MPI 4.1.4 makes for five forced
//! algorithms: bcast pipeline (`ompi_coll_base_bcast_intra_generic` on the
//! fanout-1 chain), scatter_allgather, scatter_allgather_ring
//! (`coll_base_bcast.c`), allreduce ring and segmented_ring
//! (`coll_base_allreduce.c`).
//!
//! For each, a reference below writes every rank's calls in the order the
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
//! paths), even and uneven sizes, several roots.

mod collectives_support;
use collectives_support::trace::{self, Trace};
use collectives_support::*;
use commodel_engine::collectives::CollectiveOptions;
use commodel_engine::{OpKind, Schedule};

fn pos(x: i64) -> u64 {
    x.max(0) as u64
}

/// `bcast_intra_generic` over the chain root -> root+1 -> ... (fanout 1),
/// `seg` bytes per segment.
fn ompi_pipeline(p: u32, count: u64, root: u32, seg: u64) -> Vec<Trace> {
    let nseg = count.div_ceil(seg);
    let len = |s: u64| if s + 1 == nseg { count - seg * s } else { seg };
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let v = (rank + p - root) % p;
            let next = (v + 1 < p).then(|| (rank + 1) % p);
            let prev = (rank + p - 1) % p;
            if v == 0 {
                for s in 0..nseg {
                    let reqs: Vec<_> = next.iter().map(|&c| t.isend(c, len(s))).collect();
                    reqs.into_iter().for_each(|q| t.wait(q));
                }
            } else {
                let mut pending = t.irecv(prev, seg);
                for s in 1..nseg {
                    let cur = t.irecv(prev, seg);
                    t.wait(pending);
                    if let Some(c) = next {
                        let q = t.isend(c, len(s - 1));
                        t.wait(q);
                    }
                    pending = cur;
                }
                t.wait(pending);
                if let Some(c) = next {
                    let q = t.isend(c, len(nseg - 1));
                    t.wait(q);
                }
            }
            t
        })
        .collect()
}

/// The binomial scatter both scatter-allgather bcasts start with; returns
/// the traces (by virtual rank) and each virtual rank's `recv_count` as the
/// scatter leaves it.
fn ompi_binomial_scatter(p: u32, count: u64, root: u32) -> (Vec<Trace>, Vec<i64>) {
    let real = |v: u32| (v + root) % p;
    let (n, sc) = (count as i64, count.div_ceil(p as u64) as i64);
    let mut t: Vec<Trace> = (0..p).map(|_| Trace::default()).collect();
    let mut got = vec![0i64; p as usize];
    let mut recv_count = vec![0i64; p as usize];
    for v in 0..p {
        let vi = v as usize;
        let mut curr = if v == 0 { n } else { 0 };
        let mut mask = 1;
        while mask < p {
            if v & mask != 0 {
                recv_count[vi] = n - v as i64 * sc;
                if recv_count[vi] > 0 {
                    t[vi].recv(real(v - mask), recv_count[vi] as u64);
                    recv_count[vi] = got[vi];
                    curr = got[vi];
                }
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if v + mask < p {
                let send = curr - sc * mask as i64;
                if send > 0 {
                    t[vi].send(real(v + mask), send as u64);
                    got[(v + mask) as usize] = send;
                    curr -= send;
                }
            }
            mask >>= 1;
        }
    }
    (t, recv_count)
}

fn rounddown(x: i64, f: i64) -> i64 {
    x / f * f
}

/// `bcast_intra_scatter_allgather` (count >= P): the scatter, then the
/// recursive-doubling allgather with the recursive-halving forwarding for a
/// cut partner group; every rank steps through the masks together.
fn ompi_scatter_allgather(p: u32, count: u64, root: u32) -> Vec<Trace> {
    let real = |v: i64| ((v + root as i64) % p as i64) as u32;
    let (n, sc, pp) = (count as i64, count.div_ceil(p as u64) as i64, p as i64);
    let (mut t, mut recv_count) = ompi_binomial_scatter(p, count, root);
    let mut curr: Vec<i64> = (0..pp).map(|v| sc.min(n - v * sc).max(0)).collect();
    let mut mask = 1i64;
    while mask < pp {
        let before = curr.clone();
        for v in 0..pp {
            let vr = v ^ mask;
            if vr < pp {
                let bound = pos(n - rounddown(vr, mask) * sc);
                t[v as usize].sendrecv(real(vr), before[v as usize] as u64, real(vr), bound);
                recv_count[v as usize] = before[vr as usize];
                curr[v as usize] += before[vr as usize];
            }
        }
        let mut h = mask >> 1;
        while h > 0 {
            let rc = recv_count.clone();
            for v in 0..pp {
                if rounddown(v ^ mask, mask) + mask <= pp {
                    continue;
                }
                let alldata = pp - rounddown(v, mask) - mask;
                let vr = v ^ h;
                let top = rounddown(v, h << 1) + alldata;
                if vr > v && v < top && vr >= top {
                    t[v as usize].send(real(vr), rc[v as usize] as u64);
                } else if vr < v && vr < top && v >= top {
                    t[v as usize].recv(real(vr), count);
                    recv_count[v as usize] = rc[vr as usize];
                    curr[v as usize] += rc[vr as usize];
                }
            }
            h >>= 1;
        }
        mask <<= 1;
    }
    assert!(curr.iter().all(|&c| c == n), "reference: {curr:?}");
    let mut by_rank: Vec<Trace> = (0..p).map(|_| Trace::default()).collect();
    for (v, tr) in t.into_iter().enumerate() {
        by_rank[real(v as i64) as usize] = tr;
    }
    by_rank
}

/// `bcast_intra_scatter_allgather_ring` (count >= P): the scatter, then P-1
/// ring steps over real-rank neighbours.
fn ompi_scatter_allgather_ring(p: u32, count: u64, root: u32) -> Vec<Trace> {
    let (n, sc) = (count as i64, count.div_ceil(p as u64) as i64);
    let (mut t, _) = ompi_binomial_scatter(p, count, root);
    let len = |b: u32| pos(sc.min(n - b as i64 * sc));
    for v in 0..p {
        let rank = (v + root) % p;
        let (left, right) = ((rank + p - 1) % p, (rank + 1) % p);
        let (mut send_block, mut recv_block) = (v, (v + p - 1) % p);
        for _ in 1..p {
            t[v as usize].sendrecv(right, len(send_block), left, len(recv_block));
            send_block = recv_block;
            recv_block = (recv_block + p - 1) % p;
        }
    }
    let mut by_rank: Vec<Trace> = (0..p).map(|_| Trace::default()).collect();
    for (v, tr) in t.into_iter().enumerate() {
        by_rank[(v as u32 + root) as usize % p as usize] = tr;
    }
    by_rank
}

/// `COLL_BASE_COMPUTE_BLOCKCOUNT`: (early, late, split): the first `split`
/// of `n` parts have `early` elements, the others `late`.
fn blockcount(count: u64, n: u64) -> (u64, u64, u64) {
    let late = count / n;
    let split = count % n;
    (late + u64::from(split != 0), late, split)
}

/// The reduce-scatter loop of `allreduce_intra_ring[_segmented]` for one
/// rank: `part(b)` bytes of block b move, receives post `bound`.
fn ompi_ring_reduce_scatter(
    t: &mut Trace,
    rank: u32,
    p: u32,
    part: &dyn Fn(u32) -> u64,
    bound: u64,
) {
    let (left, right) = ((rank + p - 1) % p, (rank + 1) % p);
    let mut pending = t.irecv(left, bound);
    t.send(right, part(rank));
    for k in 2..p {
        let prevblock = (rank + p - k + 1) % p;
        let cur = t.irecv(left, bound);
        t.wait(pending);
        t.reduce(part(prevblock));
        t.send(right, part(prevblock));
        pending = cur;
    }
    t.wait(pending);
    t.reduce(part(right));
}

/// The distribution loop (ring allgather shifted by one) of both rings.
fn ompi_ring_allgather(t: &mut Trace, rank: u32, p: u32, block: &dyn Fn(u32) -> u64, bound: u64) {
    let (left, right) = ((rank + p - 1) % p, (rank + 1) % p);
    for k in 0..p - 1 {
        let send_from = (rank + 1 + p - k) % p;
        t.sendrecv(right, block(send_from), left, bound);
    }
}

/// `allreduce_intra_ring` (count >= P).
fn ompi_allreduce_ring(p: u32, count: u64) -> Vec<Trace> {
    let (early, late, split) = blockcount(count, p as u64);
    let block = |b: u32| if (b as u64) < split { early } else { late };
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            ompi_ring_reduce_scatter(&mut t, rank, p, &block, early);
            ompi_ring_allgather(&mut t, rank, p, &block, early);
            t
        })
        .collect()
}

/// `allreduce_intra_ring_segmented` with `segsize` bytes (1-byte type);
/// count < P * segcount falls back to the ring.
fn ompi_allreduce_segmented_ring(p: u32, count: u64, segsize: u64) -> Vec<Trace> {
    let segcount = if segsize >= 1 && segsize < count {
        segsize
    } else {
        count
    };
    let round = p as u64 * segcount;
    if count < round {
        return ompi_allreduce_ring(p, count);
    }
    let rest = count % round;
    let phases = count / round + u64::from(rest >= p as u64 && rest > round / 2);
    let (early, late, split) = blockcount(count, p as u64);
    let block = |b: u32| if (b as u64) < split { early } else { late };
    let max_seg = blockcount(early, phases).0;
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            for phase in 0..phases {
                let part = |b: u32| {
                    let (e, l, s) = blockcount(block(b), phases);
                    if phase < s {
                        e
                    } else {
                        l
                    }
                };
                ompi_ring_reduce_scatter(&mut t, rank, p, &part, max_seg);
            }
            ompi_ring_allgather(&mut t, rank, p, &block, early);
            t
        })
        .collect()
}

/// The generated schedule against the Open MPI reference ([`trace::assert_follows`]).
fn assert_follows(what: &str, s: &Schedule, want: &[Trace]) {
    trace::assert_follows("Open MPI", what, s, want);
}

fn with(root: u32, segment: Option<u64>) -> CollectiveOptions {
    CollectiveOptions {
        root,
        segment,
        reduce_ns_per_byte: 1.0,
        ..opts()
    }
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
                let s = gen_with("bcast-pipeline", p, size, &with(root, Some(seg)));
                let what = format!("bcast-pipeline P={p} size={size} seg={seg} root={root}");
                assert_follows(&what, &s, &ompi_pipeline(p, size, root, seg.min(size)));
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
                let o = with(root % p, None);
                let what = format!("P={p} size={size} root={root}");
                let s = gen_with("bcast-scatter-allgather", p, size, &o);
                assert_follows(
                    &format!("bcast-scatter-allgather {what}"),
                    &s,
                    &ompi_scatter_allgather(p, size, root % p),
                );
                let s = gen_with("bcast-scatter-allgather-ring", p, size, &o);
                assert_follows(
                    &format!("bcast-scatter-allgather-ring {what}"),
                    &s,
                    &ompi_scatter_allgather_ring(p, size, root % p),
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
            let s = gen_with("allreduce-ring", p, size, &with(0, None));
            assert_follows(&what, &s, &ompi_allreduce_ring(p, size));
            // Forced without a segment size (0), segmented_ring is the ring.
            let s = gen_with("allreduce-segmented-ring", p, size, &with(0, None));
            assert_follows(
                &format!("segmented {what}"),
                &s,
                &ompi_allreduce_ring(p, size),
            );
            // At most a few phases: the check compares whole wait sets (quadratic).
            for seg in [100u64, 1000, 4096, 65_536] {
                if size / (p as u64 * seg) > 16 {
                    continue;
                }
                let s = gen_with("allreduce-segmented-ring", p, size, &with(0, Some(seg)));
                let what = format!("allreduce-segmented-ring P={p} size={size} seg={seg}");
                assert_follows(&what, &s, &ompi_allreduce_segmented_ring(p, size, seg));
            }
        }
    }
}

/// Open MPI 5.0's `ompi_coll_base_allgather_intra_sparbit`, call by call: in each of
/// comm_log = ceil(log(P)/log(2)) steps, `data_expected - exclusion` pairs of isend (to
/// rank + distance) and irecv (from rank - distance), then one wait_all.
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
                for r in reqs {
                    t.wait(r);
                }
                distance >>= 1;
                data_expected = (data_expected << 1) - exclusion;
            }
            t
        })
        .collect()
}

#[test]
fn allgather_sparbit_is_open_mpi_5s() {
    for p in [2u32, 3, 5, 6, 7, 8, 12, 13] {
        for count in [1u64, 1000] {
            let s = gen("allgather-sparbit", p, count);
            assert_follows(&format!("sparbit P={p}"), &s, &ompi5_sparbit(p, count));
            // every rank receives the P - 1 blocks it lacks, once each
            for r in 0..p {
                let got = s.ops_of(r).filter(|&id| s.kind(id) == OpKind::Recv).count();
                assert_eq!(got as u32, p - 1, "P={p} rank {r}");
            }
        }
    }
}
