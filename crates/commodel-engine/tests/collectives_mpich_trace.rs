//! Our generators against the calls MPICH 5.0 makes for each algorithm
//! `commodel.mpis.mpich` maps to a generator (a value of
//! `MPIR_CVAR_<COLL>_INTRA_ALGORITHM`), read in MPICH's 5.0.x branch at commit
//! f5694eb900925f663c8fb017cdf1e4c953ca5a18 (v5.0.1 + 85; the files read are
//! the same on main at 6a79bf65, August 2026): `src/mpi/coll/<coll>/
//! <coll>_intra_<algorithm>.c`, `bcast_utils.c` (the scatter of the bcasts),
//! `allgatherv_intra_ring.c` (the ring allreduce's second phase),
//! `helper_fns.c` (the point-to-point calls) and `coll_algorithms.txt` with
//! `maint/gen_coll.py` (the restrictions a forced algorithm falls back on).
//!
//! Each reference below writes a rank's calls in the order MPICH makes them,
//! with MPICH's own count arithmetic: `MPIC_Send` / `MPIC_Recv` post one
//! request and wait for it, `MPIC_Sendrecv` posts the receive, then the send,
//! and waits for both, `MPIR_Reduce_local` is a calc of 1 ns per byte. The
//! generated schedule must make the same operations rank by rank and in order,
//! each waiting for what MPICH had waited for when it posted it, and each pair's
//! i-th send must be the i-th receive (MPICH uses one tag per collective)
//! ([`trace::assert_follows`]). A rank's message to itself (scattered posts one)
//! is a local copy and no operation.
//!
//! Where the generator `mpich.py` named before this check sends otherwise, an
//! MPICH generator (`<coll>-mpich-<algorithm>`) now stands for MPICH's, and
//! [`open_mpis_generators_differ_where_mpich_has_its_own`] pins down where the
//! Open MPI one departs.

mod collectives_support;
use collectives_support::trace::{self, pof2, ranks, sizes, traced, traces, Trace};
use collectives_support::*;
use commodel_engine::Schedule;

const MPICH: &str = "MPICH 5.0";

fn assert_follows(what: &str, s: &Schedule, want: &[Trace]) {
    trace::assert_follows(MPICH, what, s, want);
}

// --- allreduce -------------------------------------------------------------------------------

/// The non-power-of-two fold both allreduces start with: ranks below 2 rem
/// pair up, the even one's whole buffer goes to the odd one, which reduces it.
/// Returns the rank's new rank (None: it waits for the end).
fn fold_in(t: &mut Trace, rank: u32, rem: u32, n: u64) -> Option<u32> {
    if rank >= 2 * rem {
        return Some(rank - rem);
    }
    if rank.is_multiple_of(2) {
        t.send(rank + 1, n);
        None
    } else {
        t.recv(rank - 1, n);
        t.reduce(n);
        Some(rank / 2)
    }
}

/// The end of both: the odd ranks below 2 rem hand the result to the even ones.
fn fold_out(t: &mut Trace, rank: u32, rem: u32, n: u64) {
    if rank < 2 * rem {
        if rank % 2 == 1 {
            t.send(rank - 1, n);
        } else {
            t.recv(rank + 1, n);
        }
    }
}

/// A new rank's real rank in both.
fn real_of(newrank: u32, rem: u32) -> u32 {
    if newrank < rem {
        2 * newrank + 1
    } else {
        newrank + rem
    }
}

/// `MPIR_Allreduce_intra_recursive_doubling`.
fn mpich_allreduce_recursive_doubling(p: u32, n: u64) -> Vec<Trace> {
    let rem = p - pof2(p);
    let mut t = traces(p);
    for rank in 0..p {
        let tr = &mut t[rank as usize];
        if let Some(newrank) = fold_in(tr, rank, rem, n) {
            let mut mask = 1;
            while mask < pof2(p) {
                let dst = real_of(newrank ^ mask, rem);
                tr.sendrecv(dst, n, dst, n);
                tr.reduce(n);
                mask <<= 1;
            }
        }
        fold_out(tr, rank, rem, n);
    }
    t
}

/// `MPIR_Allreduce_intra_reduce_scatter_allgather` (n >= pof2), with MPICH's
/// index bookkeeping (send_idx, recv_idx, last_idx over the pof2 counts).
fn mpich_allreduce_reduce_scatter_allgather(p: u32, n: u64) -> Vec<Trace> {
    let (pof2, rem) = (pof2(p) as usize, p - pof2(p));
    assert!(n >= pof2 as u64);
    let cnts: Vec<u64> = (0..pof2)
        .map(|i| n / pof2 as u64 + u64::from((i as u64) < n % pof2 as u64))
        .collect();
    let sum = |a: usize, b: usize| cnts[a..b].iter().sum::<u64>();
    let mut t = traces(p);
    for rank in 0..p {
        let tr = &mut t[rank as usize];
        if let Some(newrank) = fold_in(tr, rank, rem, n) {
            let newrank = newrank as usize;
            let (mut send_idx, mut recv_idx, mut last_idx) = (0usize, 0usize, pof2);
            let mut mask = 1usize;
            while mask < pof2 {
                let newdst = newrank ^ mask;
                let dst = real_of(newdst as u32, rem);
                let (send_cnt, recv_cnt);
                if newrank < newdst {
                    send_idx = recv_idx + pof2 / (mask * 2);
                    send_cnt = sum(send_idx, last_idx);
                    recv_cnt = sum(recv_idx, send_idx);
                } else {
                    recv_idx = send_idx + pof2 / (mask * 2);
                    send_cnt = sum(send_idx, recv_idx);
                    recv_cnt = sum(recv_idx, last_idx);
                }
                tr.sendrecv(dst, send_cnt, dst, recv_cnt);
                tr.reduce(recv_cnt);
                send_idx = recv_idx;
                mask <<= 1;
                if mask < pof2 {
                    last_idx = recv_idx + pof2 / mask;
                }
            }
            mask >>= 1;
            while mask > 0 {
                let newdst = newrank ^ mask;
                let dst = real_of(newdst as u32, rem);
                let (send_cnt, recv_cnt);
                if newrank < newdst {
                    if mask != pof2 / 2 {
                        last_idx += pof2 / (mask * 2);
                    }
                    recv_idx = send_idx + pof2 / (mask * 2);
                    send_cnt = sum(send_idx, recv_idx);
                    recv_cnt = sum(recv_idx, last_idx);
                } else {
                    recv_idx = send_idx - pof2 / (mask * 2);
                    send_cnt = sum(send_idx, last_idx);
                    recv_cnt = sum(recv_idx, send_idx);
                }
                tr.sendrecv(dst, send_cnt, dst, recv_cnt);
                if newrank > newdst {
                    send_idx = recv_idx;
                }
                mask >>= 1;
            }
        }
        fold_out(tr, rank, rem, n);
    }
    t
}

/// `MPIR_Allreduce_intra_ring`, its allgather `MPIR_Allgatherv_intra_ring` with
/// the default `MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE` (32768).
fn mpich_allreduce_ring(p: u32, n: u64) -> Vec<Trace> {
    let pu = p as usize;
    // ceil(n / P) per block until the next would pass n: the rest, then empty blocks
    let mut cnts = vec![0u64; pu];
    let mut total = 0;
    for c in cnts.iter_mut() {
        let each = n.div_ceil(p as u64);
        if total + each > n {
            *c = n - total;
            break;
        }
        *c = each;
        total += each;
    }
    let mut t = traces(p);
    for rank in 0..pu {
        let tr = &mut t[rank];
        let (left, right) = ((rank + pu - 1) % pu, (rank + 1) % pu);
        for i in 0..pu - 1 {
            let recv_block = (pu + rank - 2 - i) % pu;
            let send_block = (pu + rank - 1 - i) % pu;
            let r = tr.irecv(left as u32, cnts[recv_block]);
            let s = tr.isend(right as u32, cnts[send_block]);
            tr.waitall(&[r, s]);
            tr.reduce(cnts[recv_block]);
        }
        // the allgatherv ring, as its loop walks the blocks
        let largest = *cnts.iter().max().unwrap();
        let chunk = if largest > 32768 { 32768 } else { largest };
        let (mut torecv, mut tosend) = (n - cnts[rank], n - cnts[right]);
        let (mut sidx, mut ridx, mut soff, mut roff) = (rank, left, 0u64, 0u64);
        while tosend > 0 || torecv > 0 {
            let sendnow = if tosend == 0 {
                0
            } else {
                (cnts[sidx] - soff).min(chunk)
            };
            let recvnow = if torecv == 0 {
                0
            } else {
                (cnts[ridx] - roff).min(chunk)
            };
            match (sendnow, recvnow) {
                (0, 0) => {}
                (0, got) => tr.recv(left as u32, got),
                (gave, 0) => tr.send(right as u32, gave),
                (gave, got) => tr.sendrecv(right as u32, gave, left as u32, got),
            }
            tosend -= sendnow;
            torecv -= recvnow;
            soff += sendnow;
            roff += recvnow;
            if soff == cnts[sidx] {
                soff = 0;
                sidx = (sidx + pu - 1) % pu;
            }
            if roff == cnts[ridx] {
                roff = 0;
                ridx = (ridx + pu - 1) % pu;
            }
        }
    }
    t
}

#[test]
fn allreduce_recursive_doubling_is_mpichs() {
    for p in ranks() {
        for n in sizes(p) {
            let s = gen_with("allreduce-recursive-doubling", p, n, &traced(0, None));
            let what = format!("recursive_doubling P={p} size={n}");
            assert_follows(&what, &s, &mpich_allreduce_recursive_doubling(p, n));
        }
    }
}

#[test]
fn allreduce_reduce_scatter_allgather_is_mpichs() {
    for p in ranks() {
        for n in sizes(p) {
            let s = gen_with(
                "allreduce-mpich-reduce-scatter-allgather",
                p,
                n,
                &traced(0, None),
            );
            let what = format!("reduce_scatter_allgather P={p} size={n}");
            // below pof2 bytes MPICH's restriction (size-ge-pof2) fails and the forced
            // call falls back to its selection: recursive_doubling at those sizes
            let want = if n < pof2(p) as u64 {
                mpich_allreduce_recursive_doubling(p, n)
            } else {
                mpich_allreduce_reduce_scatter_allgather(p, n)
            };
            assert_follows(&what, &s, &want);
        }
    }
}

#[test]
fn allreduce_ring_is_mpichs_with_its_allgatherv_chunks() {
    for p in ranks() {
        // up to 32 KiB blocks whole, above that in 32 KiB chunks and a short one
        let mut all = sizes(p);
        all.extend([32_768 * p as u64, 32_768 * p as u64 + 1, 300_007]);
        for n in all {
            let s = gen_with("allreduce-mpich-ring", p, n, &traced(0, None));
            let what = format!("ring P={p} size={n}");
            assert_follows(&what, &s, &mpich_allreduce_ring(p, n));
        }
    }
}

// --- bcast -----------------------------------------------------------------------------------

/// `MPIR_Bcast_intra_binomial`.
fn mpich_bcast_binomial(p: u32, n: u64, root: u32) -> Vec<Trace> {
    let mut t = traces(p);
    for rank in 0..p {
        let tr = &mut t[rank as usize];
        let relative = (rank + p - root) % p;
        let mut mask = 1;
        while mask < p {
            if relative & mask != 0 {
                tr.recv((rank + p - mask) % p, n);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if relative + mask < p {
                tr.send((rank + mask) % p, n);
            }
            mask >>= 1;
        }
    }
    t
}

/// `MPII_Scatter_for_bcast`: traces by real rank. Relative ranks are visited in
/// increasing order so a parent's sends are known before its children receive.
fn mpich_scatter_for_bcast(p: u32, n: u64, root: u32) -> Vec<Trace> {
    let sc = n.div_ceil(p as u64) as i64;
    let mut t = traces(p);
    let mut sent_to = vec![0i64; p as usize];
    for relative in 0..p {
        let rank = (relative + root) % p;
        let tr = &mut t[rank as usize];
        let mut curr = if relative == 0 { n as i64 } else { 0 };
        let mut mask = 1;
        while mask < p {
            if relative & mask != 0 {
                let bound = n as i64 - relative as i64 * sc;
                if bound > 0 {
                    tr.recv((rank + p - mask) % p, bound as u64);
                    curr = sent_to[relative as usize];
                }
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if relative + mask < p {
                let send = curr - sc * mask as i64;
                if send > 0 {
                    tr.send((rank + mask) % p, send as u64);
                    sent_to[(relative + mask) as usize] = send;
                    curr -= send;
                }
            }
            mask >>= 1;
        }
    }
    t
}

/// `MPIR_Bcast_intra_scatter_recursive_doubling_allgather`: the scatter, then
/// every rank steps through the masks together (the counts a rank receives are
/// what its partner holds, `curr_size`); groups cut by P get the missing data
/// down a halving tree (the part MPICH marks experimental, run whenever P is
/// not a power of two).
fn mpich_bcast_scatter_recursive_doubling_allgather(p: u32, n: u64, root: u32) -> Vec<Trace> {
    let mut t = mpich_scatter_for_bcast(p, n, root);
    let (pi, ni) = (p as i64, n as i64);
    let sc = n.div_ceil(p as u64) as i64;
    let real = |relative: i64| ((relative + root as i64) % pi) as u32;
    let at = |relative: i64| real(relative) as usize;
    let mut curr: Vec<i64> = (0..pi).map(|v| sc.min(ni - v * sc).max(0)).collect();
    let mut recv_size = vec![0i64; p as usize];
    let (mut mask, mut i) = (1i64, 0);
    while mask < pi {
        let held = curr.clone();
        for v in 0..pi {
            let vd = v ^ mask;
            if vd < pi {
                let recv_offset = (vd >> i << i) * sc;
                let bound = (ni - recv_offset).max(0) as u64;
                t[at(v)].sendrecv(real(vd), held[v as usize] as u64, real(vd), bound);
                recv_size[v as usize] = held[vd as usize];
                curr[v as usize] += held[vd as usize];
            }
        }
        let mut k = 63 - (mask as u64).leading_zeros() as i64;
        let mut tmp_mask = mask >> 1;
        while tmp_mask > 0 {
            let last = recv_size.clone();
            for v in 0..pi {
                let dst_tree_root = (v ^ mask) >> i << i;
                if dst_tree_root + mask <= pi {
                    continue;
                }
                let my_tree_root = v >> i << i;
                let completed = pi - my_tree_root - mask;
                let offset = sc * (my_tree_root + mask);
                let tree_root = v >> k << k;
                let vd = v ^ tmp_mask;
                let split = tree_root + completed;
                if vd > v && v < split && vd >= split {
                    t[at(v)].send(real(vd), last[v as usize] as u64);
                } else if vd < v && vd < split && v >= split {
                    t[at(v)].recv(real(vd), (ni - offset).max(0) as u64);
                    recv_size[v as usize] = last[vd as usize];
                    curr[v as usize] += last[vd as usize];
                }
            }
            tmp_mask >>= 1;
            k -= 1;
        }
        mask <<= 1;
        i += 1;
    }
    assert!(curr.iter().all(|&c| c == ni), "reference: {curr:?}");
    t
}

/// `MPIR_Bcast_intra_scatter_ring_allgather`: the scatter, then P-1 ring steps
/// over real-rank neighbours, block j of the relative numbering going right.
fn mpich_bcast_scatter_ring_allgather(p: u32, n: u64, root: u32) -> Vec<Trace> {
    let mut t = mpich_scatter_for_bcast(p, n, root);
    let sc = n.div_ceil(p as u64);
    let count = |rank: u32| sc.min(n.saturating_sub((rank + p - root) as u64 % p as u64 * sc));
    for rank in 0..p {
        let (left, right) = ((rank + p - 1) % p, (rank + 1) % p);
        let (mut j, mut jnext) = (rank, left);
        for _ in 1..p {
            t[rank as usize].sendrecv(right, count(j), left, count(jnext));
            j = jnext;
            jnext = (jnext + p - 1) % p;
        }
    }
    t
}

#[test]
fn bcast_binomial_is_mpichs() {
    for p in ranks() {
        for n in [1u64, 1000, 65_536] {
            for root in [0, 1, p - 1] {
                let s = gen_with("bcast-mpich-binomial", p, n, &traced(root, None));
                let what = format!("binomial P={p} size={n} root={root}");
                assert_follows(&what, &s, &mpich_bcast_binomial(p, n, root));
            }
        }
    }
}

#[test]
fn bcast_scatter_allgathers_are_mpichs_at_every_size() {
    for p in ranks() {
        for n in sizes(p) {
            for root in [0, 1, p - 1] {
                let what = format!("P={p} size={n} root={root}");
                let s = gen_with(
                    "bcast-mpich-scatter-recursive-doubling-allgather",
                    p,
                    n,
                    &traced(root, None),
                );
                assert_follows(
                    &format!("scatter_recursive_doubling_allgather {what}"),
                    &s,
                    &mpich_bcast_scatter_recursive_doubling_allgather(p, n, root),
                );
                let s = gen_with(
                    "bcast-mpich-scatter-ring-allgather",
                    p,
                    n,
                    &traced(root, None),
                );
                assert_follows(
                    &format!("scatter_ring_allgather {what}"),
                    &s,
                    &mpich_bcast_scatter_ring_allgather(p, n, root),
                );
                // from P bytes on, Open MPI's generators (MPICH's algorithms, carried over)
                if n >= p as u64 {
                    let s = gen_with("bcast-scatter-allgather", p, n, &traced(root, None));
                    assert_follows(
                        &format!("bcast-scatter-allgather {what}"),
                        &s,
                        &mpich_bcast_scatter_recursive_doubling_allgather(p, n, root),
                    );
                    let s = gen_with("bcast-scatter-allgather-ring", p, n, &traced(root, None));
                    assert_follows(
                        &format!("bcast-scatter-allgather-ring {what}"),
                        &s,
                        &mpich_bcast_scatter_ring_allgather(p, n, root),
                    );
                }
            }
        }
    }
}

// --- allgather -------------------------------------------------------------------------------

/// `MPIR_Allgather_intra_brucks` (n bytes per rank).
fn mpich_allgather_brucks(p: u32, n: u64) -> Vec<Trace> {
    let mut t = traces(p);
    for rank in 0..p {
        let tr = &mut t[rank as usize];
        let (mut blocks, mut pof2) = (1u64, 1u32);
        while pof2 <= p / 2 {
            tr.sendrecv(
                (rank + p - pof2) % p,
                blocks * n,
                (rank + pof2) % p,
                blocks * n,
            );
            blocks *= 2;
            pof2 *= 2;
        }
        let rem = (p - pof2) as u64;
        if rem > 0 {
            tr.sendrecv((rank + p - pof2) % p, rem * n, (rank + pof2) % p, rem * n);
        }
    }
    t
}

/// `MPIR_Allgather_intra_recursive_doubling` on a power of two (its restriction).
fn mpich_allgather_recursive_doubling(p: u32, n: u64) -> Vec<Trace> {
    assert!(p.is_power_of_two());
    let mut t = traces(p);
    for rank in 0..p {
        let tr = &mut t[rank as usize];
        let (mut mask, mut i, mut held) = (1u32, 0, n);
        while mask < p {
            let dst = rank ^ mask;
            let dst_tree_root = dst >> i << i;
            // on a power of two every partner exists and holds as much as this rank
            tr.sendrecv(dst, held, dst, (p - dst_tree_root) as u64 * n);
            held *= 2;
            mask <<= 1;
            i += 1;
        }
    }
    t
}

/// `MPIR_Allgather_intra_ring`.
fn mpich_allgather_ring(p: u32, n: u64) -> Vec<Trace> {
    let mut t = traces(p);
    for rank in 0..p {
        for _ in 1..p {
            t[rank as usize].sendrecv((rank + 1) % p, n, (rank + p - 1) % p, n);
        }
    }
    t
}

#[test]
fn allgather_brucks_and_ring_are_mpichs() {
    for p in ranks() {
        for n in sizes(p) {
            let s = gen("allgather-bruck", p, n);
            assert_follows(
                &format!("brucks P={p} size={n}"),
                &s,
                &mpich_allgather_brucks(p, n),
            );
            let s = gen("allgather-ring", p, n);
            assert_follows(
                &format!("ring P={p} size={n}"),
                &s,
                &mpich_allgather_ring(p, n),
            );
        }
    }
}

#[test]
fn allgather_recursive_doubling_is_mpichs_and_its_fallback() {
    for p in ranks() {
        let mut all = sizes(p);
        // around the 81920 bytes gathered where MPICH's own selection turns to the ring
        all.extend([
            81_920 / p as u64 - 1,
            81_920 / p as u64,
            81_920_u64.div_ceil(p as u64),
        ]);
        for n in all {
            let s = gen("allgather-mpich-recursive-doubling", p, n);
            let what = format!("recursive_doubling P={p} size={n}");
            // on other P the restriction (power-of-two) fails: MPICH's generic.json for
            // a flat communicator that is not a power of two
            let want = if p.is_power_of_two() {
                mpich_allgather_recursive_doubling(p, n)
            } else if n * (p as u64) < 81_920 {
                mpich_allgather_brucks(p, n)
            } else {
                mpich_allgather_ring(p, n)
            };
            assert_follows(&what, &s, &want);
        }
    }
}

// --- alltoall --------------------------------------------------------------------------------

/// `MPIR_Alltoall_intra_brucks` (n bytes to each rank).
fn mpich_alltoall_brucks(p: u32, n: u64) -> Vec<Trace> {
    let mut t = traces(p);
    for rank in 0..p {
        let mut pof2 = 1;
        while pof2 < p {
            let blocks = (1..p).filter(|b| b & pof2 != 0).count() as u64;
            t[rank as usize].sendrecv(
                (rank + pof2) % p,
                blocks * n,
                (rank + p - pof2) % p,
                blocks * n,
            );
            pof2 *= 2;
        }
    }
    t
}

/// `MPIR_Alltoall_intra_pairwise`.
fn mpich_alltoall_pairwise(p: u32, n: u64) -> Vec<Trace> {
    let mut t = traces(p);
    for rank in 0..p {
        for i in 1..p {
            let (src, dst) = if p.is_power_of_two() {
                (rank ^ i, rank ^ i)
            } else {
                ((rank + p - i) % p, (rank + i) % p)
            };
            t[rank as usize].sendrecv(dst, n, src, n);
        }
    }
    t
}

/// `MPIR_Alltoall_intra_scattered` with throttle `bblock`.
fn mpich_alltoall_scattered(p: u32, n: u64, bblock: u32) -> Vec<Trace> {
    let mut t = traces(p);
    for rank in 0..p {
        let tr = &mut t[rank as usize];
        let mut ii = 0;
        while ii < p {
            let ss = (p - ii).min(bblock);
            let mut reqs = Vec::new();
            for i in 0..ss {
                let src = (rank + i + ii) % p;
                if src != rank {
                    reqs.push(tr.irecv(src, n));
                }
            }
            for i in 0..ss {
                let dst = (rank + 2 * p - i - ii) % p;
                if dst != rank {
                    reqs.push(tr.isend(dst, n));
                }
            }
            tr.waitall(&reqs);
            ii += bblock;
        }
    }
    t
}

#[test]
fn alltoall_brucks_pairwise_and_scattered_are_mpichs() {
    for p in ranks() {
        for n in [1u64, 100, 4096] {
            let s = gen("alltoall-modified-bruck", p, n);
            assert_follows(
                &format!("brucks P={p} size={n}"),
                &s,
                &mpich_alltoall_brucks(p, n),
            );
            let s = gen("alltoall-mpich-pairwise", p, n);
            assert_follows(
                &format!("pairwise P={p} size={n}"),
                &s,
                &mpich_alltoall_pairwise(p, n),
            );
            let s = gen("alltoall-mpich-scattered", p, n);
            let what = format!("scattered P={p} size={n}");
            assert_follows(&what, &s, &mpich_alltoall_scattered(p, n, 32));
        }
    }
    // past MPIR_CVAR_ALLTOALL_THROTTLE's 32 peers: blocks, each waited for
    for p in [31u32, 32, 33, 40, 64, 65, 97] {
        let s = gen("alltoall-mpich-scattered", p, 8);
        assert_follows(
            &format!("scattered P={p}"),
            &s,
            &mpich_alltoall_scattered(p, 8, 32),
        );
    }
}

// --- where Open MPI's generators (mapped before this check) depart from MPICH ---------------

fn differs(name: &str, p: u32, n: u64, root: u32, want: &[Trace]) -> bool {
    let s = gen_with(name, p, n, &traced(root, None));
    trace::first_difference(MPICH, name, &s, want).is_some()
}

#[test]
fn open_mpis_generators_differ_where_mpich_has_its_own() {
    for p in ranks() {
        let pow2 = p.is_power_of_two();
        for n in sizes(p) {
            // Rabenseifner: the same calls only on a power of two with p' dividing the
            // buffer (MPICH cuts p' blocks, the first ones a byte longer, where Open MPI
            // halves the bytes; MPICH folds whole buffers even -> odd, Open MPI halves)
            if n >= pof2(p) as u64 {
                let want = mpich_allreduce_reduce_scatter_allgather(p, n);
                let same = pow2 && n.is_multiple_of(p as u64);
                assert_eq!(
                    !differs("allreduce-rabenseifner", p, n, 0, &want),
                    same,
                    "P={p} size={n}"
                );
            }
            // ring: MPICH starts each rank on block r-1, waits for each step's send
            // and receive together, cuts ceil(size/P)-byte blocks (the last ones
            // short), and sends blocks above 32 KiB in chunks; only 2 ranks with
            // two equal blocks of at most 32 KiB make the same calls
            let want = mpich_allreduce_ring(p, n);
            let same = p == 2 && n.is_multiple_of(2) && n <= 65_536;
            assert_eq!(
                !differs("allreduce-ring", p, n, 0, &want),
                same,
                "ring P={p} size={n}"
            );
            // scatter-allgather bcasts below P bytes: Open MPI switches to basic_linear
            if n < p as u64 {
                let want = mpich_bcast_scatter_ring_allgather(p, n, 0);
                assert!(differs("bcast-scatter-allgather-ring", p, n, 0, &want));
                let want = mpich_bcast_scatter_recursive_doubling_allgather(p, n, 0);
                assert!(differs("bcast-scatter-allgather", p, n, 0, &want));
            }
            // allgather recursive doubling: Bruck on every other P where MPICH's
            // fallback picks the ring from 81920 bytes gathered on
            if !pow2 && n * p as u64 >= 81_920 {
                let want = mpich_allgather_ring(p, n);
                assert!(differs("allgather-recursive-doubling", p, n, 0, &want));
            }
        }
        // binomial: MPICH's tree is the in-order one, children served largest first
        // by blocking sends; Open MPI's build_bmtree differs from 3 ranks on, and its
        // root posts all sends at once
        let want = mpich_bcast_binomial(p, 1000, 0);
        assert_eq!(
            differs("bcast-binomial", p, 1000, 0, &want),
            p > 2,
            "binomial P={p}"
        );
        // pairwise: MPICH pairs by xor on a power of two (from 4 ranks on it differs)
        let want = mpich_alltoall_pairwise(p, 100);
        assert_eq!(
            differs("alltoall-pairwise", p, 100, 0, &want),
            pow2 && p > 2,
            "pairwise P={p}"
        );
    }
    // scattered: the same as Open MPI's basic_linear up to 32 ranks, not beyond
    for p in [32u32, 33] {
        let want = mpich_alltoall_scattered(p, 8, 32);
        assert_eq!(
            differs("alltoall-basic-linear", p, 8, 0, &want),
            p > 32,
            "P={p}"
        );
    }
}
