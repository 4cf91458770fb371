//! Broadcast: Open MPI's algorithms. `size` is the whole buffer in bytes.

use super::program::Mpi;
use super::trees::{self, Node};
use super::{CollectiveError, Ctx, DEFAULT_PIPELINE_SEGMENT};
use crate::schedule::Schedule;

/// Open MPI basic_linear: the root posts an isend to every other rank in
/// rank order and waits for all; each other rank does one blocking receive.
/// Tag 0.
pub(crate) fn basic_linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    super::patterns::linear_from_root(ctx, true)
}

/// Open MPI binomial: `build_bmtree` tree, segmented only if `opts.segment`
/// is set (Open MPI's forced default is no segmentation).
pub(crate) fn binomial(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    tree_bcast(ctx, trees::binomial, ctx.opts.segment.unwrap_or(ctx.size))
}

/// Open MPI pipeline: a chain (fanout 1) with segments of `opts.segment`
/// bytes (default [`DEFAULT_PIPELINE_SEGMENT`]).
pub(crate) fn pipeline(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    tree_bcast(
        ctx,
        trees::chain,
        ctx.opts.segment.unwrap_or(DEFAULT_PIPELINE_SEGMENT),
    )
}

/// Open MPI's `bcast_intra_generic` over a tree, the buffer cut into
/// segments of `segment` bytes (the last one holds the rest); segment s has
/// tag s.
///
/// * root: for each segment, isend it to all children, then wait for all;
/// * inner node: irecv segment 0; for s = 1..n: irecv segment s, wait for
///   segment s-1, isend it to all children, wait for those sends; finally
///   wait for the last segment, isend it to all children, wait;
/// * leaf: irecv segment 0; for s = 1..n: irecv segment s, wait for s-1;
///   wait for the last.
fn tree_bcast(
    ctx: &Ctx,
    tree: fn(u32, u32, u32) -> Node,
    segment: u64,
) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let segment = segment.min(ctx.size);
    let nseg = ctx.size.div_ceil(segment);
    if nseg > u32::MAX as u64 {
        return Err(ctx.invalid("segment", segment, "more segments than tags (2^32)"));
    }
    ctx.check_ops(2 * nseg * (p as u64 - 1))?;
    let seg_bytes = |s: u64| {
        if s + 1 == nseg {
            ctx.size - segment * (nseg - 1)
        } else {
            segment
        }
    };
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let node = tree(r, root, p);
        let forward = |mpi: &mut Mpi, s: u64| {
            let sends: Vec<_> = node
                .children
                .iter()
                .map(|&c| mpi.isend(r, c, seg_bytes(s), s as u32))
                .collect();
            mpi.waitall(&sends);
        };
        match node.parent {
            None => {
                for s in 0..nseg {
                    forward(&mut mpi, s);
                }
            }
            Some(parent) => {
                let mut pending = mpi.irecv(r, parent, seg_bytes(0), 0);
                for s in 1..nseg {
                    let next = mpi.irecv(r, parent, seg_bytes(s), s as u32);
                    mpi.wait(pending);
                    forward(&mut mpi, s - 1);
                    pending = next;
                }
                mpi.wait(pending);
                forward(&mut mpi, nseg - 1);
            }
        }
    }
    mpi.finish()
}
