//! Barrier: Open MPI's algorithms. `size` is ignored; every message carries
//! 0 bytes. Open MPI sends some of them in synchronous mode
//! (`MPI_Ssend`); a 0-byte GOAL message has no such mode, so they are
//! plain sends here.

use super::patterns::{bruck_exchange, two_proc_exchange, Toward};
use super::{add, fixed, sub, CollectiveError, Ctx};
use crate::schedule::Schedule;

/// Open MPI bruck (`ompi_coll_base_barrier_intra_bruck`), the dissemination
/// barrier: for distance = 1, 2, 4, ... < P: a zero-byte sendrecv, send to
/// r+distance, receive from r-distance. Tag = step.
pub(crate) fn dissemination(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    bruck_exchange(ctx, Toward::Higher, |_| 0)
}

/// Open MPI linear (`ompi_coll_base_barrier_intra_basic_linear`): every
/// rank r > 0 does a blocking send to 0 (tag 0) then a blocking receive
/// from 0 (tag 1); rank 0 posts receives from all (Open MPI: from
/// MPI_ANY_SOURCE; here from 1, ..., P-1), waits for all, then does
/// blocking sends to 1, ..., P-1 in order.
pub(crate) fn linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    ctx.check_ops(4 * p as u64)?;
    let mut mpi = ctx.mpi();
    if p == 1 {
        return mpi.finish();
    }
    let arrivals: Vec<_> = (1..p).map(|s| mpi.irecv(0, s, 0, 0)).collect();
    mpi.waitall(&arrivals);
    for d in 1..p {
        mpi.send(0, d, 0, 1);
    }
    for r in 1..p {
        mpi.send(r, 0, 0, 0);
        mpi.recv(r, 0, 0, 1);
    }
    mpi.finish()
}

/// Open MPI double_ring (`ompi_coll_base_barrier_intra_doublering`): two
/// rounds of a token around the ring 0 -> 1 -> ... -> P-1 -> 0 (tags 0
/// and 1): in each round a rank r > 0 receives from r-1 (blocking) then
/// sends to r+1 (blocking); rank 0 sends to 1 then receives from P-1.
/// P messages per round.
pub(crate) fn double_ring(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    ctx.check_ops(4 * p as u64)?;
    let mut mpi = ctx.mpi();
    if p == 1 {
        return mpi.finish();
    }
    for r in 0..p {
        let (left, right) = (sub(r, 1, p), add(r, 1, p));
        for round in 0..2 {
            if r > 0 {
                mpi.recv(r, left, 0, round);
            }
            mpi.send(r, right, 0, round);
            if r == 0 {
                mpi.recv(r, left, 0, round);
            }
        }
    }
    mpi.finish()
}

/// Open MPI recursive_doubling
/// (`ompi_coll_base_barrier_intra_recursivedoubling`). With p' the largest
/// power of two <= P: a rank r >= p' first does a zero-byte sendrecv with
/// r - p' (sends tag 0, receives the release, last tag), which receives from
/// it (blocking, tag 0); the p' lower ranks then do log2 p' sendrecvs with
/// r xor 2^k (tag 1 + k); finally each r < P - p' sends the release to r + p'
/// (blocking, tag 1 + log2 p').
pub(crate) fn recursive_doubling(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let adj = 1u32 << (31 - p.leading_zeros());
    let steps = adj.trailing_zeros();
    let release = 1 + steps;
    ctx.check_ops(2 * p as u64 * (steps as u64 + 2))?;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        if r >= adj {
            mpi.sendrecv(r, r - adj, 0, 0, r - adj, 0, release);
            continue;
        }
        if r < p - adj {
            mpi.recv(r, r + adj, 0, 0);
        }
        for k in 0..steps {
            let peer = r ^ (1 << k);
            mpi.sendrecv(r, peer, 0, 1 + k, peer, 0, 1 + k);
        }
        if r < p - adj {
            mpi.send(r, r + adj, 0, release);
        }
    }
    mpi.finish()
}

/// Open MPI tree (`ompi_coll_base_barrier_intra_tree`): with D the smallest
/// power of two >= P, a binomial fan-in then fan-out. Fan-in (tag 0), jump =
/// 1, 2, ..., D/2: a rank whose partner r xor jump is < P and a multiple of
/// jump receives from it when it is higher, sends to it when lower (all
/// blocking). Fan-out (tag 1), jump = D/2, ..., 1: the same pairs with the
/// directions reversed.
pub(crate) fn tree(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    ctx.check_ops(4 * p as u64)?;
    let depth = p.next_power_of_two();
    let jumps: Vec<u32> = std::iter::successors(Some(1u32), |&j| Some(j * 2))
        .take_while(|&j| j < depth)
        .collect();
    let partner = |r: u32, jump: u32| {
        let q = r ^ jump;
        (q.is_multiple_of(jump) && q < p).then_some(q)
    };
    let mut mpi = ctx.mpi();
    for r in 0..p {
        for &jump in &jumps {
            match partner(r, jump) {
                Some(q) if q > r => _ = mpi.recv(r, q, 0, 0),
                Some(q) => _ = mpi.send(r, q, 0, 0),
                None => {}
            }
        }
        for &jump in jumps.iter().rev() {
            match partner(r, jump) {
                Some(q) if q > r => _ = mpi.send(r, q, 0, 1),
                Some(q) => _ = mpi.recv(r, q, 0, 1),
                None => {}
            }
        }
    }
    mpi.finish()
}

/// Open MPI two_proc (`ompi_coll_base_barrier_intra_two_procs`): one
/// zero-byte sendrecv between ranks 0 and 1. Tag 0. P must be 2 (1: nothing).
pub(crate) fn two_proc(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    two_proc_exchange(ctx, 0)
}

/// The barrier Open MPI 4.1.4 runs by its fixed decision rules for P ranks
/// ([`fixed::barrier`]): what a program's `MPI_Barrier` does when only
/// another collective is forced. For a part of a composed schedule: `ctx`
/// records into no stream.
pub(crate) fn fixed_rules(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    debug_assert!(ctx.stream.is_none());
    match fixed::barrier(ctx.p) {
        1 => linear(ctx),
        3 => recursive_doubling(ctx),
        4 => dissemination(ctx),
        _ => tree(ctx),
    }
}
