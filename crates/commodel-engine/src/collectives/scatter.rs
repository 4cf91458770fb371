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
