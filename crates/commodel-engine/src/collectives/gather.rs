//! Gather: Open MPI's algorithms and Lastovetsky's split gather.
//! `size` is the number of bytes each rank contributes.

use super::program::Mpi;
use super::{barrier, sequence, trees, CollectiveError, Ctx, DEFAULT_GATHER_SYNC_FIRST_SEGMENT};
use crate::schedule::Schedule;

/// One Open MPI basic_linear gather of `bytes` per rank, tag 0:
/// every non-root does a blocking send to the root; the root does blocking
/// receives from ranks 0, 1, ..., P-1 (itself skipped) in that order.
fn linear_gather(mpi: &mut Mpi, p: u32, root: u32, bytes: u64) {
    for r in 0..p {
        if r == root {
            for src in (0..p).filter(|&s| s != root) {
                mpi.recv(root, src, bytes, 0);
            }
        } else {
            mpi.send(r, root, bytes, 0);
        }
    }
}

/// Open MPI basic_linear. Tag 0.
pub(crate) fn basic_linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let mut mpi = ctx.mpi();
    linear_gather(&mut mpi, ctx.p, ctx.opts.root, ctx.size);
    mpi.finish()
}

/// Lastovetsky et al., section 7: a gather of M = `size` bytes per rank done
/// as k = `opts.splits` linear gathers of floor(M/k) bytes, one after the
/// other with an `MPI_Barrier` between two (Open MPI's fixed decision barrier,
/// [`barrier::fixed_rules`]); the remainder M mod k goes to the last one.
/// The barrier keeps the sub-gathers apart: without it, each sender's eager
/// sub-messages leave back to back and the root's port sees the whole
/// incast again (docs/advise.md, *Gather split*). Parts composed with
/// [`sequence::chain`] (tags shifted part by part).
pub(crate) fn split(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let k = ctx.opts.splits;
    if k == 0 {
        return Err(ctx.invalid("splits", k, "at least one sub-gather is needed"));
    }
    if k as u64 > ctx.size {
        return Err(ctx.invalid(
            "splits",
            k,
            "more sub-gathers than bytes: each must carry at least one byte",
        ));
    }
    let part = ctx.size / k as u64;
    let whole = Ctx {
        stream: None,
        ..*ctx
    };
    let barrier = barrier::fixed_rules(&whole)?;
    ctx.check_ops(k as u64 * 2 * (ctx.p as u64 - 1) + (k as u64 - 1) * barrier.num_ops() as u64)?;
    let mut parts = Vec::with_capacity(2 * k as usize);
    for j in 0..k {
        let bytes = if j + 1 == k {
            ctx.size - part * (k as u64 - 1)
        } else {
            part
        };
        let mut mpi = whole.mpi();
        linear_gather(&mut mpi, ctx.p, ctx.opts.root, bytes);
        parts.push(mpi.finish()?);
    }
    let mut order: Vec<&Schedule> = Vec::with_capacity(2 * k as usize);
    for (j, gather) in parts.iter().enumerate() {
        if j > 0 {
            order.push(&barrier);
        }
        order.push(gather);
    }
    sequence::chain(ctx, &order)
}

/// Open MPI binomial: in-order binomial tree (see `trees`). A node does
/// blocking receives from its children in increasing distance (each child
/// sends its whole subtree's blocks), then a blocking send of everything it
/// holds to its parent. Tag 0 (each edge carries one message).
pub(crate) fn binomial(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let node = trees::in_order_binomial(r, root, p);
        let mut held = 1u64;
        for &child in &node.children {
            let blocks = trees::in_order_subtree_size(child, root, p) as u64;
            mpi.recv(r, child, blocks * ctx.size, 0);
            held += blocks;
        }
        if let Some(parent) = node.parent {
            mpi.send(r, parent, held * ctx.size, 0);
        }
    }
    mpi.finish()
}

/// Open MPI linear_sync with first segment `opts.segment` (default 1 KiB,
/// capped at `size`). Non-root: blocking recv of a 0-byte go (tag 0) from
/// the root, blocking send of the first segment (tag 1), blocking send of the
/// rest (tag 2, possibly 0 bytes). Root, for each rank i in rank order: irecv
/// first segment from i; blocking 0-byte send to i; irecv second segment;
/// wait for the first segment. Then waitall of the second segments.
pub(crate) fn linear_sync(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let first = ctx
        .opts
        .segment
        .unwrap_or(DEFAULT_GATHER_SYNC_FIRST_SEGMENT)
        .min(ctx.size);
    let second = ctx.size - first;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        if r == root {
            for i in (0..p).filter(|&i| i != root) {
                let f = mpi.irecv(root, i, first, 1);
                mpi.send(root, i, 0, 0);
                mpi.irecv(root, i, second, 2);
                mpi.wait(f);
            }
        } else {
            mpi.recv(r, root, 0, 0);
            mpi.send(r, root, first, 1);
            mpi.send(r, root, second, 2);
        }
    }
    mpi.finish()
}
