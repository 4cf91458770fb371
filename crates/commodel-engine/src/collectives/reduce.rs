//! The reduce half of Open MPI's allreduce basic_linear and nonoverlapping:
//! a reduce of the whole buffer (`size` bytes) to rank 0, unsegmented. After
//! each buffer received, a rank runs `Mpi::reduce` (a calc op only when
//! `opts.reduce_ns_per_byte` > 0).

use super::program::Mpi;
use super::trees::{self, Node};
use super::{fixed, CollectiveError, Ctx};
use crate::schedule::Schedule;

/// Open MPI's `reduce_intra_basic_linear` to rank 0 (tag 0): every rank
/// r > 0 does a blocking send of the buffer to 0; rank 0 receives from P-1,
/// then from P-2, ..., 1 in turn, reducing after each of those, and reduces
/// its own buffer last (P-1 reductions).
pub(crate) fn linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, size) = (ctx.p, ctx.size);
    ctx.check_ops(2 * p as u64)?;
    let mut mpi = ctx.mpi();
    if p == 1 {
        return mpi.finish();
    }
    linear_at_zero(&mut mpi, p, size);
    for r in 1..p {
        mpi.send(r, 0, size, 0);
    }
    mpi.finish()
}

/// Rank 0's part of [`linear`]: receive from P-1, then from P-2, ..., 1,
/// reducing after each of those, then reduce its own buffer (tag 0).
pub(crate) fn linear_at_zero(mpi: &mut Mpi, p: u32, size: u64) {
    mpi.recv(0, p - 1, size, 0);
    for i in (1..p - 1).rev() {
        mpi.recv(0, i, size, 0);
        mpi.reduce(0, size);
    }
    mpi.reduce(0, size);
}

/// Open MPI's `reduce_generic` with one segment (segment size 0) over a tree
/// rooted at rank 0 (tag 0): a node with children c0, c1, ... posts an irecv
/// from c0; for each next child it posts the irecv, waits for the previous
/// child's data and reduces it; it waits for the last child's data, reduces
/// it, and (unless it is the root) does a blocking send of the result to its
/// parent. A leaf does one blocking send.
fn tree_reduce(ctx: &Ctx, tree: impl Fn(u32) -> Node) -> Result<Schedule, CollectiveError> {
    let (p, size) = (ctx.p, ctx.size);
    ctx.check_ops(2 * p as u64)?;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let node = tree(r);
        let mut pending = None;
        for &child in &node.children {
            let req = mpi.irecv(r, child, size, 0);
            if let Some(prev) = pending.replace(req) {
                mpi.wait(prev);
                mpi.reduce(r, size);
            }
        }
        if let Some(last) = pending {
            mpi.wait(last);
            mpi.reduce(r, size);
        }
        if let Some(parent) = node.parent {
            mpi.send(r, parent, size, 0);
        }
    }
    mpi.finish()
}

/// The reduce to rank 0 that Open MPI 4.1.4's fixed decision rules pick
/// (commutative operation, segment size 0, fan-in 0): 1 linear ([`linear`]),
/// 2 chain (fan-in 0 read as 1) and 3 pipeline (a chain 0 <- 1 <- ... <- P-1),
/// 4 binary (`build_tree(2)`), 5 binomial (in-order binomial tree), each
/// through [`tree_reduce`]. Rules 6 (in_order_binary, only at P >= 256) and
/// 7 (redscat_gather, only at P < 4 with under 8 bytes) are not modelled: an
/// error names them.
pub(crate) fn fixed_rules(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let mut alg = fixed::reduce(p, ctx.size);
    // redscat_gather runs basic_linear on one rank or when the buffer has
    // fewer elements than the largest power of two <= P.
    let pof2 = 1u64 << (31 - p.leading_zeros());
    if alg == 7 && (p < 2 || ctx.size < pof2) {
        alg = 1;
    }
    match alg {
        1 => linear(ctx),
        2 | 3 => tree_reduce(ctx, |r| trees::chain(r, 0, p)),
        4 => tree_reduce(ctx, |r| trees::kary(r, 0, p, 2)),
        5 => tree_reduce(ctx, |r| trees::in_order_binomial(r, 0, p)),
        6 => Err(CollectiveError::NotModelled {
            name: ctx.name,
            ranks: p,
            size: ctx.size,
            what: "reduce in_order_binary",
        }),
        _ => Err(CollectiveError::NotModelled {
            name: ctx.name,
            ranks: p,
            size: ctx.size,
            what: "reduce redscat_gather",
        }),
    }
}
