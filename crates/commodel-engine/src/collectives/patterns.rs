//! Communication patterns that several collectives share: the distance-doubling
//! (Bruck / dissemination) exchange and the root's linear fan-out.

use super::{add, sub, CollectiveError, Ctx};
use crate::schedule::Schedule;

/// The steps of a distance-doubling exchange: `(step, distance)` for
/// distance = 1, 2, 4, ... < P.
pub(crate) fn doubling(p: u32) -> impl Iterator<Item = (u32, u32)> {
    std::iter::successors(Some(1u32), |&d| d.checked_mul(2))
        .take_while(move |&d| d < p)
        .zip(0u32..)
        .map(|(distance, step)| (step, distance))
}

/// Which way a [`bruck_exchange`] sends.
#[derive(Clone, Copy)]
pub(crate) enum Toward {
    /// Send to r + distance, receive from r - distance.
    Higher,
    /// Send to r - distance, receive from r + distance.
    Lower,
}

/// At each step of [`doubling`], every rank r does a sendrecv of
/// `bytes(distance)` bytes each way with the ranks at that distance
/// (modulo P), in the direction `toward`. Tag = step.
pub(crate) fn bruck_exchange(
    ctx: &Ctx,
    toward: Toward,
    bytes: impl Fn(u32) -> u64,
) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        for (step, distance) in doubling(p) {
            let (up, down) = (add(r, distance, p), sub(r, distance, p));
            let (to, from) = match toward {
                Toward::Higher => (up, down),
                Toward::Lower => (down, up),
            };
            let b = bytes(distance);
            mpi.sendrecv(r, to, b, step, from, b, step);
        }
    }
    mpi.finish()
}

/// Open MPI's basic_linear fan-out: the root sends `size` bytes to every
/// other rank in rank order, all posted at once (`nonblocking`, then waited
/// for together) or one blocking send after another; every other rank does
/// one blocking receive. Tag 0.
pub(crate) fn linear_from_root(ctx: &Ctx, nonblocking: bool) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let mut mpi = ctx.mpi();
    for r in 0..p {
        if r == root {
            for dst in (0..p).filter(|&d| d != root) {
                if nonblocking {
                    mpi.isend(root, dst, ctx.size, 0);
                } else {
                    mpi.send(root, dst, ctx.size, 0);
                }
            }
        } else {
            mpi.recv(r, root, ctx.size, 0);
        }
    }
    mpi.finish()
}

/// Open MPI's two_procs algorithms (allgather, alltoall, barrier): ranks 0
/// and 1 do one sendrecv of `bytes` each way. Tag 0. Open MPI refuses any
/// other communicator size (MPI_ERR_UNSUPPORTED_OPERATION); we refuse P > 2
/// and give P = 1 no operation, like every collective.
pub(crate) fn two_proc_exchange(ctx: &Ctx, bytes: u64) -> Result<Schedule, CollectiveError> {
    if ctx.p > 2 {
        return Err(CollectiveError::NeedsTwoRanks {
            name: ctx.name,
            ranks: ctx.p,
        });
    }
    let mut mpi = ctx.mpi();
    if ctx.p == 2 {
        for r in 0..2 {
            mpi.sendrecv(r, 1 - r, bytes, 0, 1 - r, bytes, 0);
        }
    }
    mpi.finish()
}

#[cfg(test)]
mod tests {
    #[test]
    fn doubling_steps_stop_below_p() {
        let steps = |p| super::doubling(p).collect::<Vec<_>>();
        assert_eq!(steps(0), vec![]);
        assert_eq!(steps(1), vec![]);
        assert_eq!(steps(2), vec![(0, 1)]);
        assert_eq!(steps(5), vec![(0, 1), (1, 2), (2, 4)]);
        assert_eq!(steps(8), vec![(0, 1), (1, 2), (2, 4)]);
        assert_eq!(steps(u32::MAX).len(), 32);
    }
}
