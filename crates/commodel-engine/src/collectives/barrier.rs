//! Barrier: the dissemination barrier (Open MPI's `barrier_intra_bruck`).

use super::{add, sub, CollectiveError, Ctx};
use crate::schedule::Schedule;

/// For distance = 1, 2, 4, ... < P: a zero-byte sendrecv, send to
/// r+distance, receive from r-distance. Tag = step. `size` is ignored.
pub(crate) fn dissemination(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let (mut distance, mut step) = (1u32, 0u32);
        while distance < p {
            mpi.sendrecv(
                r,
                add(r, distance, p),
                0,
                step,
                sub(r, distance, p),
                0,
                step,
            );
            if distance > p / 2 {
                break;
            }
            distance <<= 1;
            step += 1;
        }
    }
    mpi.finish()
}
