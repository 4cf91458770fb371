//! Allgather: Open MPI's algorithms. `size` is the number of bytes each rank
//! contributes; every rank ends with P * size bytes.

use super::patterns::{bruck_exchange, doubling, Toward};
use super::{add, sub, CollectiveError, Ctx};
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
