//! Alltoall: PlogPT's Alltoall_A / Alltoall_B, Open MPI's and MPICH's algorithms.
//! `size` is the number of bytes each rank sends to each other rank.

use super::patterns::{bruck_exchange, Toward};
use super::{add, sub, CollectiveError, Ctx};
use crate::schedule::Schedule;

/// PlogPT Fig. 14, Alltoall_A: for i = 1..P-1, peer = r xor i: Irecv(peer),
/// Isend(peer), Wait(Irecv), Wait(Isend). Round i uses tag i. Under PLogP
/// each round costs g + L: (P-1)(g+L) in all (eq. 18).
pub(crate) fn xor_pairwise(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    ctx.require_power_of_two()?;
    ctx.check_ops(2 * ctx.p as u64 * (ctx.p as u64 - 1))?;
    let mut mpi = ctx.mpi();
    for r in 0..ctx.p {
        for i in 1..ctx.p {
            let peer = r ^ i;
            mpi.sendrecv(r, peer, ctx.size, i, peer, ctx.size, i);
        }
    }
    mpi.finish()
}

/// PlogPT Fig. 14, Alltoall_B: post Irecv from every other rank (in rank
/// order), then for i = 1..P-1 a blocking send to r xor i (each send waits for
/// the previous one), then Waitall. Tag = the xor distance i = r xor peer, the
/// same on both sides. Under PLogP: (P-1)g + L (eq. 19).
pub(crate) fn xor_post_all(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    ctx.require_power_of_two()?;
    ctx.check_ops(2 * ctx.p as u64 * (ctx.p as u64 - 1))?;
    let mut mpi = ctx.mpi();
    for r in 0..ctx.p {
        for src in (0..ctx.p).filter(|&s| s != r) {
            mpi.irecv(r, src, ctx.size, r ^ src);
        }
        for i in 1..ctx.p {
            mpi.send(r, r ^ i, ctx.size, i);
        }
    }
    mpi.finish()
}

/// Open MPI basic_linear: irecv from r+1, r+2, ..., r-1; isend to r-1, r-2,
/// ..., r+1; waitall. All operations start at once. Tag 0.
pub(crate) fn basic_linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    linear_limited(ctx, 0)
}

/// Open MPI linear_sync with `opts.max_requests` (0 = unlimited).
pub(crate) fn linear_sync(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    linear_limited(ctx, ctx.opts.max_requests)
}

/// Receives from r+1.. and sends to r-1.. with at most `limit` of each kind
/// outstanding (0 or >= P-1: all at once). Request k + limit waits for
/// request k of the same kind (its slot). Tag 0: each (src, dst) pair
/// carries one message.
fn linear_limited(ctx: &Ctx, limit: u32) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    ctx.check_ops(2 * p as u64 * (p as u64 - 1))?;
    let k = if limit == 0 || limit >= p.saturating_sub(1) {
        p.saturating_sub(1)
    } else {
        limit
    } as usize;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let mut recvs = Vec::with_capacity(p as usize);
        for i in 1..p {
            let src = add(r, i, p);
            let n = recvs.len();
            let op = if n < k {
                mpi.irecv(r, src, ctx.size, 0)
            } else {
                mpi.irecv_after(r, src, ctx.size, 0, recvs[n - k])
            };
            recvs.push(op);
        }
        let mut sends = Vec::with_capacity(p as usize);
        for i in 1..p {
            let dst = sub(r, i, p);
            let n = sends.len();
            let op = if n < k {
                mpi.isend(r, dst, ctx.size, 0)
            } else {
                mpi.isend_after(r, dst, ctx.size, 0, sends[n - k])
            };
            sends.push(op);
        }
    }
    mpi.finish()
}

/// Open MPI pairwise: step s = 1..P-1: sendrecv, send to r+s, receive from
/// r-s. Tag s.
pub(crate) fn pairwise(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    ctx.check_ops(2 * p as u64 * (p as u64 - 1))?;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        for s in 1..p {
            mpi.sendrecv(r, add(r, s, p), ctx.size, s, sub(r, s, p), ctx.size, s);
        }
    }
    mpi.finish()
}

/// MPICH's default `MPIR_CVAR_ALLTOALL_THROTTLE`: the peers `scattered` posts
/// operations for at a time.
pub(crate) const MPICH_ALLTOALL_THROTTLE: u32 = 32;

/// MPICH pairwise (`MPIR_Alltoall_intra_pairwise`): P-1 sendrecv steps; for P a
/// power of two step i exchanges with r xor i ([`xor_pairwise`]: PlogPT's
/// Alltoall_A), otherwise it sends to r+i and receives from r-i ([`pairwise`]).
/// Tag i.
pub(crate) fn mpich_pairwise(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    if ctx.p.is_power_of_two() {
        xor_pairwise(ctx)
    } else {
        pairwise(ctx)
    }
}

/// MPICH scattered (`MPIR_Alltoall_intra_scattered`) with its default throttle of
/// [`MPICH_ALLTOALL_THROTTLE`] = 32 peers: the peers at distance i = 0..P-1 (the
/// rank itself at i = 0, a local copy: no operation here) go in blocks of 32
/// distances; for each block a rank posts irecvs from r+i, then isends to r-i, in
/// increasing i, and waits for all of them before the next block. Up to 32 ranks
/// this is [`basic_linear`]. Tag 0: each pair carries one message.
pub(crate) fn mpich_scattered(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    ctx.check_ops(2 * p as u64 * (p as u64 - 1))?;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let mut first = 0;
        while first < p {
            let distances = first..first + (p - first).min(MPICH_ALLTOALL_THROTTLE);
            let mut reqs = Vec::with_capacity(2 * MPICH_ALLTOALL_THROTTLE as usize);
            for i in distances.clone().filter(|&i| i != 0) {
                reqs.push(mpi.irecv(r, add(r, i, p), ctx.size, 0));
            }
            for i in distances.clone().filter(|&i| i != 0) {
                reqs.push(mpi.isend(r, sub(r, i, p), ctx.size, 0));
            }
            mpi.waitall(&reqs);
            first = distances.end;
        }
    }
    mpi.finish()
}

/// Number of blocks j in 0..P with bit `distance` set: what Open MPI's
/// modified Bruck moves in the step at that distance.
pub(crate) fn bruck_blocks(p: u32, distance: u32) -> u64 {
    let (p, d) = (p as u64, distance as u64);
    (p / (2 * d)) * d + (p % (2 * d)).saturating_sub(d)
}

/// Open MPI modified_bruck (`alltoall_intra_bruck`): for distance = 1, 2, 4,
/// ... < P: sendrecv, send to r+distance and receive from r-distance the
/// blocks whose index has that bit set. Tag = step number.
pub(crate) fn modified_bruck(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    bruck_exchange(ctx, Toward::Higher, |distance| {
        bruck_blocks(ctx.p, distance) * ctx.size
    })
}

/// Open MPI two_proc (`ompi_coll_base_alltoall_intra_two_procs`): one
/// sendrecv of a block (size bytes) with the other rank. Tag 0. P must be 2
/// (1: nothing to do).
pub(crate) fn two_proc(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    super::patterns::two_proc_exchange(ctx, ctx.size)
}

#[cfg(test)]
mod tests {
    #[test]
    fn bruck_blocks_counts_set_bits() {
        for p in 1..70u32 {
            let mut d = 1;
            while d < p {
                assert_eq!(
                    super::bruck_blocks(p, d),
                    (0..p).filter(|j| j & d != 0).count() as u64
                );
                d <<= 1;
            }
        }
    }
}
