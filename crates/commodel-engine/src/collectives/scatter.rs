//! Scatter: Open MPI's algorithms. `size` is the number of bytes each rank
//! gets from the root.

use super::{trees, CollectiveError, Ctx};
use crate::schedule::Schedule;

/// Open MPI basic_linear: the root does blocking sends to ranks 0, 1, ...,
/// P-1 (itself skipped) in that order; every other rank one blocking receive.
/// Tag 0.
pub(crate) fn basic_linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    super::patterns::linear_from_root(ctx, false)
}

/// Open MPI binomial (main branch since 2019): in-order binomial tree. A
/// non-root receives its subtree's blocks from its parent (blocking), then
/// every node does blocking sends of each child's subtree blocks, children in
/// *decreasing* distance (largest subtree first). Tag 0.
pub(crate) fn binomial(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let node = trees::in_order_binomial(r, root, p);
        if let Some(parent) = node.parent {
            let blocks = trees::in_order_subtree_size(r, root, p) as u64;
            mpi.recv(r, parent, blocks * ctx.size, 0);
        }
        for &child in node.children.iter().rev() {
            let blocks = trees::in_order_subtree_size(child, root, p) as u64;
            mpi.send(r, child, blocks * ctx.size, 0);
        }
    }
    mpi.finish()
}

/// Open MPI linear_nb (`ompi_coll_base_scatter_intra_linear_nb`): the root
/// sends each rank its block in rank order (itself skipped), every send an
/// isend, except that with `opts.max_requests` = m > 1 (Open MPI's
/// `coll_tuned_scatter_algorithm_max_requests`, forced default 0) the send
/// to each rank i with i mod m = 0 is blocking; then it waits for all. Every
/// other rank does one blocking receive. Tag 0.
pub(crate) fn linear_nb(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let m = ctx.opts.max_requests;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        if r != root {
            mpi.recv(r, root, ctx.size, 0);
            continue;
        }
        let mut pending = Vec::new();
        for dst in (0..p).filter(|&d| d != root) {
            if m > 1 && dst % m == 0 {
                mpi.send(root, dst, ctx.size, 0);
            } else {
                pending.push(mpi.isend(root, dst, ctx.size, 0));
            }
        }
        mpi.waitall(&pending);
    }
    mpi.finish()
}
