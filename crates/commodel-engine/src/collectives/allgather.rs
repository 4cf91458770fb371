//! Allgather: Open MPI's algorithms, and MPICH's where they differ. `size` is
//! the number of bytes each rank contributes; every rank ends with P * size
//! bytes.

use super::patterns::{bruck_exchange, doubling, Toward};
use super::{add, bcast, fixed, gather, sequence, sub, CollectiveError, CollectiveOptions, Ctx};
use crate::schedule::Schedule;

/// Open MPI ring: step i = 0..P-2: sendrecv, send one block (size bytes) to
/// r+1, receive one from r-1. Tag i.
pub(crate) fn ring(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    ctx.check_ops(2 * p as u64 * (p as u64 - 1))?;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        for i in 0..p.saturating_sub(1) {
            mpi.sendrecv(r, add(r, 1, p), ctx.size, i, sub(r, 1, p), ctx.size, i);
        }
    }
    mpi.finish()
}

/// Open MPI recursive_doubling: for distance = 1, 2, 4, ... < P: sendrecv
/// with r xor distance, distance blocks each way. Tag = step. For P not a
/// power of two Open MPI switches to radix-2 Bruck, and so do we.
pub(crate) fn recursive_doubling(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    if !p.is_power_of_two() {
        return bruck(ctx);
    }
    let mut mpi = ctx.mpi();
    for r in 0..p {
        for (step, distance) in doubling(p) {
            let bytes = distance as u64 * ctx.size;
            mpi.sendrecv(r, r ^ distance, bytes, step, r ^ distance, bytes, step);
        }
    }
    mpi.finish()
}

/// The bytes gathered (P x size) below which MPICH's default selection
/// (`generic.json` of 5.0) runs brucks on a communicator that is not a power of
/// two, and ring from there (`MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE`'s default).
pub(crate) const MPICH_ALLGATHER_SHORT: u64 = 81920;

/// MPICH recursive_doubling (`MPIR_Allgather_intra_recursive_doubling`): for P a
/// power of two, the exchanges of [`recursive_doubling`]. MPICH restricts it to
/// powers of two: forced on another P it falls back (silently, the default of
/// `MPIR_CVAR_COLLECTIVE_FALLBACK`) to its own selection, whose default tree runs
/// brucks ([`bruck`], the same calls as MPICH's) while P x size <
/// [`MPICH_ALLGATHER_SHORT`] = 81920 bytes and ring ([`ring`]) from there; so do we.
pub(crate) fn mpich_recursive_doubling(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    if ctx.p.is_power_of_two() {
        recursive_doubling(ctx)
    } else if ctx.size * (ctx.p as u64) < MPICH_ALLGATHER_SHORT {
        bruck(ctx)
    } else {
        ring(ctx)
    }
}

/// Blocks exchanged by Bruck's allgather at `distance`: `distance` while
/// that fits, the remaining P - distance in the last step.
pub(crate) fn bruck_blocks(p: u32, distance: u32) -> u64 {
    if distance <= p / 2 {
        distance as u64
    } else {
        (p - distance) as u64
    }
}

/// Open MPI bruck (and k_bruck with radix 2): for distance = 1, 2, 4, ... <
/// P: sendrecv, send to r-distance, receive from r+distance, `bruck_blocks`
/// blocks each way. Tag = step.
pub(crate) fn bruck(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    bruck_exchange(ctx, Toward::Lower, |distance| {
        bruck_blocks(ctx.p, distance) * ctx.size
    })
}

/// Open MPI neighbor (`ompi_coll_base_allgather_intra_neighborexchange`),
/// P even: even ranks talk to r+1 first and r-1 next, odd ranks to r-1
/// first and r+1 next. Step 0: sendrecv of one block (size bytes) with the
/// first neighbour; steps i = 1..P/2-1: sendrecv of two blocks with the
/// first neighbour when i is even, the second when i is odd. Tag = step.
/// For odd P Open MPI runs the ring, and so do we.
pub(crate) fn neighbor(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    if p % 2 == 1 {
        return ring(ctx);
    }
    ctx.check_ops(p as u64 * p as u64)?;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let (up, down) = (add(r, 1, p), sub(r, 1, p));
        let neighbours = if r % 2 == 0 { [up, down] } else { [down, up] };
        mpi.sendrecv(r, neighbours[0], ctx.size, 0, neighbours[0], ctx.size, 0);
        for i in 1..p / 2 {
            let peer = neighbours[(i % 2) as usize];
            let bytes = 2 * ctx.size;
            mpi.sendrecv(r, peer, bytes, i, peer, bytes, i);
        }
    }
    mpi.finish()
}

/// Open MPI two_proc (`ompi_coll_base_allgather_intra_two_procs`): one
/// sendrecv of a block with the other rank. Tag 0. P must be 2 (1: nothing to do).
pub(crate) fn two_proc(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    super::patterns::two_proc_exchange(ctx, ctx.size)
}

/// Open MPI linear (`ompi_coll_base_allgather_intra_basic_linear`): the
/// communicator's gather of every block to rank 0, then its bcast of the P
/// blocks (P * size bytes) from rank 0, one after the other
/// ([`sequence::then`]). With only allgather forced, Open MPI 4.1.4 picks
/// that gather and bcast by its fixed decision rules ([`fixed::gather`],
/// [`bcast::fixed_rules`]) with segment size 0: gather linear_sync then sends
/// each block whole.
pub(crate) fn linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let gather_opts = CollectiveOptions {
        root: 0,
        segment: Some(ctx.size),
        ..ctx.opts.clone()
    };
    let g = Ctx {
        opts: &gather_opts,
        stream: None,
        ..*ctx
    };
    let gathered = match fixed::gather(p, ctx.size) {
        1 => gather::basic_linear(&g),
        2 => gather::binomial(&g),
        _ => gather::linear_sync(&g),
    }?;
    let bcast_opts = CollectiveOptions {
        root: 0,
        ..ctx.opts.clone()
    };
    let b = Ctx {
        size: ctx.size * p as u64,
        opts: &bcast_opts,
        stream: None,
        ..*ctx
    };
    sequence::then(ctx, &gathered, &bcast::fixed_rules(&b)?)
}

/// The number of steps of Open MPI 5.0's sparbit, `ceil(log(P) / log(2))` computed in
/// floating point as `ompi_coll_base_allgather_intra_sparbit` does (0 for P = 1).
fn sparbit_steps(p: u32) -> u32 {
    ((p as f64).ln() / 2f64.ln()).ceil() as u32
}

/// Open MPI 5.0 sparbit (`ompi_coll_base_allgather_intra_sparbit`, "sparse binomial
/// tree"). With L = ceil(log2 P) steps, the distance d starts at 2^(L-1) and halves; the
/// steps whose d is one of the bits Open MPI's `ignore_steps` mask keeps (from the lowest
/// set bit of P up, the bits where P >> ctz(P) is 0, and the lowest) send one block fewer.
/// In a step rank r posts, for t = 0 .. e - x - 1 (e blocks expected, x that exclusion),
/// an isend of block r - 2 t d to r + d and an irecv of block r - (2 t + 1) d from r - d
/// (each block its own tag, the block's number), then waits for all of them; e becomes
/// 2 e - x. Every rank ends with P blocks of `size` bytes.
pub(crate) fn sparbit(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    ctx.check_ops(2 * p as u64 * (p as u64 - 1))?;
    let mut mpi = ctx.mpi();
    let steps = sparbit_steps(p);
    if steps == 0 {
        return mpi.finish();
    }
    let last_ignore = p.trailing_zeros();
    let ignore_steps = (!(p >> last_ignore) | 1).wrapping_shl(last_ignore);
    for r in 0..p {
        let mut distance: u32 = 1u32.wrapping_shl(steps - 1);
        let mut expected: u32 = 1;
        for _ in 0..steps {
            let to = add(r, distance % p, p);
            let from = sub(r, distance % p, p);
            let exclusion = u32::from(distance & ignore_steps == distance);
            let mut reqs = Vec::with_capacity(2 * expected as usize);
            for t in 0..expected - exclusion {
                let back = |k: u64| ((k * distance as u64) % p as u64) as u32;
                let send_block = sub(r, back(2 * t as u64), p);
                let recv_block = sub(r, back(2 * t as u64 + 1), p);
                reqs.push(mpi.isend(r, to, ctx.size, send_block));
                reqs.push(mpi.irecv(r, from, ctx.size, recv_block));
            }
            mpi.waitall(&reqs);
            distance >>= 1;
            expected = (expected << 1) - exclusion;
        }
    }
    mpi.finish()
}
