//! Allreduce: Open MPI's algorithms, and MPICH's where they differ. `size` is
//! the whole buffer in bytes. After each receive of data to reduce, a rank runs `Mpi::reduce` (a calc
//! op only when `opts.reduce_ns_per_byte` > 0).

use super::program::Mpi;
use super::{
    add, bcast, block_bytes, reduce, sequence, sub, CollectiveError, CollectiveOptions, Ctx,
};
use crate::schedule::Schedule;

/// Largest power of two <= p (p >= 1).
fn pow2_floor(p: u32) -> u32 {
    1 << (31 - p.leading_zeros())
}

/// Open MPI ring (`ompi_coll_base_allreduce_intra_ring`). The buffer is cut
/// into P blocks (`block_bytes`: Open MPI's early / late blocks). Phase 1
/// (reduce-scatter, tags 0..P-2): irecv from r-1; blocking send of block r to
/// r+1; for k = 2..P-1: irecv the next block, wait for the previous one,
/// reduce it, blocking send of it (block r-k+1) to r+1; wait for the last
/// block (r+1) and reduce it. Phase 2 (allgather, tags P-1..2P-3): k =
/// 0..P-2: sendrecv, send block r+1-k to r+1, receive block r-k from r-1.
/// Each rank sends 2*size - block(r+1) - block(r+2) bytes and reduces P-1
/// blocks (Open MPI's `ompi_op_reduce` on one block per step; a calc only
/// with `opts.reduce_ns_per_byte` > 0). Open MPI's one tag for all steps
/// matches as our tag per step does (each pair posts in the same order).
///
/// With size < P bytes Open MPI switches to recursive doubling; so do we.
pub(crate) fn ring(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    if ctx.size < p as u64 {
        return recursive_doubling(ctx);
    }
    ctx.check_ops(4 * p as u64 * (p as u64 - 1))?;
    let block = |b: u32| block_bytes(ctx.size, p as u64, b as u64);
    let mut mpi = ctx.mpi();
    if p == 1 {
        return mpi.finish();
    }
    for r in 0..p {
        ring_reduce_scatter(&mut mpi, r, p, &block, 0);
        ring_allgather(&mut mpi, r, p, &block, p - 1);
    }
    mpi.finish()
}

/// Rank r's reduce-scatter ring over P blocks of `block(b)` bytes, tags
/// `tag0`..`tag0`+P-2 (phase 1 of [`ring`]).
fn ring_reduce_scatter(mpi: &mut Mpi, r: u32, p: u32, block: &dyn Fn(u32) -> u64, tag0: u32) {
    let (left, right) = (sub(r, 1, p), add(r, 1, p));
    let mut pending = mpi.irecv(r, left, block(sub(r, 1, p)), tag0);
    mpi.send(r, right, block(r), tag0);
    for k in 2..p {
        let next = mpi.irecv(r, left, block(sub(r, k, p)), tag0 + k - 1);
        mpi.wait(pending);
        let prev = add(sub(r, k, p), 1, p);
        mpi.reduce(r, block(prev));
        mpi.send(r, right, block(prev), tag0 + k - 1);
        pending = next;
    }
    mpi.wait(pending);
    mpi.reduce(r, block(right));
}

/// Rank r's allgather ring (phase 2 of [`ring`]): k = 0..P-2, sendrecv,
/// send block r+1-k to r+1, receive block r-k from r-1; tags `tag0`+k.
fn ring_allgather(mpi: &mut Mpi, r: u32, p: u32, block: &dyn Fn(u32) -> u64, tag0: u32) {
    let (left, right) = (sub(r, 1, p), add(r, 1, p));
    for k in 0..p - 1 {
        let send_block = sub(add(r, 1, p), k, p);
        let recv_block = sub(r, k, p);
        let tag = tag0 + k;
        mpi.sendrecv(
            r,
            right,
            block(send_block),
            tag,
            left,
            block(recv_block),
            tag,
        );
    }
}

/// MPICH's default `MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE`: [`mpich_ring`]'s
/// allgatherv sends blocks larger than this in chunks of this many bytes.
pub(crate) const MPICH_ALLGATHERV_PIPELINE: u64 = 32768;

/// MPICH ring (`MPIR_Allreduce_intra_ring`). The buffer is cut into P blocks of
/// c = ceil(size / P) bytes, the last ones short or empty (block b holds
/// min(c, size - b c) bytes, at least 0).
///
/// 1. Reduce-scatter, steps i = 0..P-2 (tag i): a sendrecv (irecv, isend, wait
///    for both) receiving block r-2-i from r-1 and sending block r-1-i to r+1,
///    then the reduction of the block received; rank r ends with block r.
/// 2. `MPIR_Allgatherv_intra_ring` of those blocks: rank r sends blocks r, r-1,
///    ..., r+2 to r+1 and receives blocks r-1, r-2, ..., r+1 from r-1, each
///    block as chunks of [`MPICH_ALLGATHERV_PIPELINE`] = 32 KiB (the last one
///    shorter) when c is larger than that, else whole; an empty block is one
///    empty slot. Step k (tag P-1+k) moves the k-th slot of each side: a
///    sendrecv, a blocking send or receive when one side's slot is empty or
///    its list has run out, nothing when both are.
///
/// Any size >= 1: below P bytes the last blocks are empty and phase 1 sends
/// them as 0-byte messages (MPICH restricts the ring to commutative operations
/// only). Each rank reduces P-1 blocks (a calc when `opts.reduce_ns_per_byte` > 0).
pub(crate) fn mpich_ring(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, size) = (ctx.p, ctx.size);
    let c = size.div_ceil(p as u64);
    let block = |b: u32| c.min(size.saturating_sub(b as u64 * c));
    let chunk = c.min(MPICH_ALLGATHERV_PIPELINE);
    let slots = |b: u32| {
        let bytes = block(b);
        let n = bytes.div_ceil(chunk).max(1);
        (0..n).map(move |k| chunk.min(bytes - k * chunk))
    };
    let steps = (p as u64 - 1) * c.div_ceil(chunk).max(1);
    ctx.check_ops(3 * p as u64 * (p as u64 - 1) + 2 * p as u64 * steps)?;
    let mut mpi = ctx.mpi();
    if p == 1 {
        return mpi.finish();
    }
    for r in 0..p {
        let (left, right) = (sub(r, 1, p), add(r, 1, p));
        for i in 0..p - 1 {
            let (got, gave) = (block(sub(r, 2 + i, p)), block(sub(r, 1 + i, p)));
            mpi.sendrecv(r, right, gave, i, left, got, i);
            mpi.reduce(r, got);
        }
        let sends: Vec<u64> = (0..p - 1).flat_map(|k| slots(sub(r, k, p))).collect();
        let recvs: Vec<u64> = (1..p).flat_map(|k| slots(sub(r, k, p))).collect();
        for k in 0..sends.len().max(recvs.len()) {
            let out = sends.get(k).copied().unwrap_or(0);
            let inc = recvs.get(k).copied().unwrap_or(0);
            let tag = p - 1 + k as u32;
            match (out > 0, inc > 0) {
                (true, true) => mpi.sendrecv(r, right, out, tag, left, inc, tag),
                (true, false) => {
                    mpi.send(r, right, out, tag);
                }
                (false, true) => {
                    mpi.recv(r, left, inc, tag);
                }
                (false, false) => {}
            }
        }
    }
    mpi.finish()
}

/// Open MPI segmented_ring (`ompi_coll_base_allreduce_intra_ring_segmented`)
/// with segment s = `opts.segment` bytes. Open MPI's forced path passes
/// `coll_tuned_allreduce_algorithm_segmentsize`, 0 by default, and then (as
/// whenever size < P * s) runs [`ring`]: so without `opts.segment`, and when
/// size < P * s, this is [`ring`]. Otherwise the P blocks of [`ring`] are cut
/// into n = floor(size / (P s)) phases (one more when size mod (P s) is at
/// least P and above P s / 2), block b's part in phase j being `block_bytes` of
/// block b over n; phase j runs [`ring`]'s reduce-scatter on those parts
/// (tags j (P-1)..), and one allgather ring of whole blocks follows (tags
/// n (P-1)..).
pub(crate) fn segmented_ring(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p as u64;
    let Some(segment) = ctx.opts.segment.filter(|_| p > 1) else {
        return ring(ctx);
    };
    let Some(round) = segment.checked_mul(p).filter(|&w| ctx.size >= w) else {
        return ring(ctx);
    };
    let rest = ctx.size % round;
    let phases = ctx.size / round + u64::from(rest >= p && rest > round / 2);
    ctx.check_ops(2 * (phases + 1) * p * (p - 1) + 2 * p)?;
    if (phases + 1) * p > u32::MAX as u64 {
        return Err(ctx.invalid("segment", segment, "more ring steps than tags (2^32)"));
    }
    let block = |b: u32| block_bytes(ctx.size, p, b as u64);
    let mut mpi = ctx.mpi();
    for r in 0..ctx.p {
        for phase in 0..phases {
            let part = |b: u32| block_bytes(block(b), phases, phase);
            ring_reduce_scatter(&mut mpi, r, ctx.p, &part, (phase * (p - 1)) as u32);
        }
        ring_allgather(&mut mpi, r, ctx.p, &block, (phases * (p - 1)) as u32);
    }
    mpi.finish()
}

/// Open MPI basic_linear (`ompi_coll_base_allreduce_intra_basic_linear`):
/// `reduce_intra_basic_linear` to rank 0 ([`reduce::linear`], tag 0), then
/// `bcast_intra_basic_linear` from rank 0 (tag 1): rank 0 posts isends to
/// 1..P-1 and waits; the others receive.
pub(crate) fn basic_linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, size) = (ctx.p, ctx.size);
    ctx.check_ops(4 * p as u64)?;
    let mut mpi = ctx.mpi();
    if p == 1 {
        return mpi.finish();
    }
    reduce::linear_at_zero(&mut mpi, p, size);
    let sends: Vec<_> = (1..p).map(|d| mpi.isend(0, d, size, 1)).collect();
    mpi.waitall(&sends);
    for r in 1..p {
        mpi.send(r, 0, size, 0);
        mpi.recv(r, 0, size, 1);
    }
    mpi.finish()
}

/// Open MPI nonoverlapping (`ompi_coll_base_allreduce_intra_nonoverlapping`):
/// the communicator's reduce to rank 0, then its bcast from rank 0. With
/// only allreduce forced, Open MPI 4.1.4 picks both by its fixed decision
/// rules ([`reduce::fixed_rules`] for a commutative operation,
/// [`bcast::fixed_rules`]).
pub(crate) fn nonoverlapping(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let at_zero = CollectiveOptions {
        root: 0,
        ..ctx.opts.clone()
    };
    let c = Ctx {
        opts: &at_zero,
        stream: None,
        ..*ctx
    };
    sequence::then(ctx, &reduce::fixed_rules(&c)?, &bcast::fixed_rules(&c)?)
}

/// Open MPI recursive_doubling. With p' the largest power of two <= P and
/// e = P - p': ranks r < 2e fold first (even r: blocking send of the buffer
/// to r+1, tag 0; odd r: blocking receive from r-1 and reduce); the p'
/// remaining ranks (odd r < 2e as r/2, others as r-e) exchange the whole
/// buffer with new rank xor 2^k (sendrecv, tag k+1) and reduce; finally odd
/// r < 2e send the result to r-1 (tag log2 p' + 1). Each of the p' ranks
/// sends log2(p') * size bytes in the exchange steps.
pub(crate) fn recursive_doubling(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let adj = pow2_floor(p);
    let extra = p - adj;
    let steps = adj.trailing_zeros();
    let last_tag = steps + 1;
    let size = ctx.size;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let newrank = if r < 2 * extra {
            if r % 2 == 0 {
                mpi.send(r, r + 1, size, 0);
                None
            } else {
                mpi.recv(r, r - 1, size, 0);
                mpi.reduce(r, size);
                Some(r / 2)
            }
        } else {
            Some(r - extra)
        };
        if let Some(v) = newrank {
            for k in 0..steps {
                let vremote = v ^ (1 << k);
                let remote = if vremote < extra {
                    vremote * 2 + 1
                } else {
                    vremote + extra
                };
                mpi.sendrecv(r, remote, size, k + 1, remote, size, k + 1);
                mpi.reduce(r, size);
            }
        }
        if r < 2 * extra {
            if r % 2 == 0 {
                mpi.recv(r, r + 1, size, last_tag);
            } else {
                mpi.send(r, r - 1, size, last_tag);
            }
        }
    }
    mpi.finish()
}

/// Open MPI Rabenseifner (`allreduce_intra_redscat_allgather`). With p',
/// e = P - p' as in recursive doubling:
///
/// 1. ranks r < 2e: even r sendrecv with r+1 (send the right half, receive
///    the left half; tag 0), reduce, then a blocking receive of the reduced
///    right half from r+1 (tag 1); odd r sendrecv with r-1 (send left, receive
///    right), reduce, blocking send of the right half to r-1 (tag 1), and
///    drop out;
/// 2. reduce-scatter by recursive halving: at step k (tag 2+k) exchange with
///    new rank xor 2^k: the lower rank keeps (receives) the left half
///    floor(w/2) of its window w and sends the rest, the higher one the
///    other way round; reduce what was received;
/// 3. allgather by recursive doubling, steps in reverse order (tags
///    2+log2 p'..): send what was kept, receive what was sent;
/// 4. odd r < 2e receive the whole result from r-1 (tag 2 + 2 log2 p').
///
/// Each of the p' ranks sends the sum of its windows: 2 (p'-1)/p' * size
/// bytes when p' divides size. Needs size >= p' (Open MPI's documented
/// limitation count >= p').
pub(crate) fn rabenseifner(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let pof2 = pow2_floor(p);
    if ctx.size < pof2 as u64 {
        return Err(CollectiveError::SizeTooSmall {
            name: ctx.name,
            size: ctx.size,
            min: pof2 as u64,
            why:
                "Rabenseifner halves the buffer log2(p') times; p' = largest power of two <= ranks",
        });
    }
    let nsteps = pof2.trailing_zeros();
    let rem = p - pof2;
    let size = ctx.size;
    let real = |v: u32| if v < rem { v * 2 } else { v + rem };
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let lhalf = size / 2;
        let rhalf = size - lhalf;
        let vrank = if r < 2 * rem {
            if r % 2 == 1 {
                mpi.sendrecv(r, r - 1, lhalf, 0, r - 1, rhalf, 0);
                mpi.reduce(r, rhalf);
                mpi.send(r, r - 1, rhalf, 1);
                None
            } else {
                mpi.sendrecv(r, r + 1, rhalf, 0, r + 1, lhalf, 0);
                mpi.reduce(r, lhalf);
                mpi.recv(r, r + 1, rhalf, 1);
                Some(r / 2)
            }
        } else {
            Some(r - rem)
        };
        if let Some(v) = vrank {
            let mut window = size;
            let mut kept_sent = Vec::with_capacity(nsteps as usize);
            for k in 0..nsteps {
                let dest = real(v ^ (1 << k));
                let (recv_bytes, send_bytes) = if r < dest {
                    (window / 2, window - window / 2)
                } else {
                    (window - window / 2, window / 2)
                };
                mpi.sendrecv(r, dest, send_bytes, 2 + k, dest, recv_bytes, 2 + k);
                mpi.reduce(r, recv_bytes);
                kept_sent.push((recv_bytes, send_bytes));
                window = recv_bytes;
            }
            for (i, k) in (0..nsteps).rev().enumerate() {
                let dest = real(v ^ (1 << k));
                let (kept, sent) = kept_sent[k as usize];
                let tag = 2 + nsteps + i as u32;
                mpi.sendrecv(r, dest, kept, tag, dest, sent, tag);
            }
        }
        if r < 2 * rem {
            let tag = 2 + 2 * nsteps;
            if r % 2 == 1 {
                mpi.recv(r, r - 1, size, tag);
            } else {
                mpi.send(r, r + 1, size, tag);
            }
        }
    }
    mpi.finish()
}

/// MPICH reduce_scatter_allgather
/// (`MPIR_Allreduce_intra_reduce_scatter_allgather`): Rabenseifner's algorithm
/// as MPICH cuts it. With p' the largest power of two <= P and e = P - p':
///
/// 1. ranks r < 2e: even r sends the whole buffer to r+1 (blocking, tag 0) and
///    sits out until step 4; odd r receives it (blocking), reduces, and takes
///    part as new rank r/2; ranks r >= 2e take part as r - e (new rank v is
///    real rank 2v+1 for v < e, v+e otherwise);
/// 2. the buffer is p' blocks, the first size mod p' of them one byte longer
///    ([`block_bytes`]); reduce-scatter by recursive halving over block
///    indices: at step k (tag 1+k) with new rank v xor 2^k, of the current
///    window of blocks the lower new rank keeps the first half and the higher
///    the second; a sendrecv sends the other half and receives the kept one,
///    which is reduced;
/// 3. allgather by recursive doubling, the steps in reverse (tags 1+log2 p'..):
///    a sendrecv sends what was kept and receives what was sent;
/// 4. odd r < 2e send the whole result to r-1 (blocking, tag 1+2 log2 p').
///
/// MPICH restricts it to size >= p' (and built-in operations); forced below
/// that it falls back to its own selection, whose default tree runs
/// recursive_doubling at every size of 1 to p'-1 bytes ([`recursive_doubling`],
/// the same calls as MPICH's); so do we.
pub(crate) fn mpich_reduce_scatter_allgather(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let pof2 = pow2_floor(p);
    if ctx.size < pof2 as u64 {
        return recursive_doubling(ctx);
    }
    let nsteps = pof2.trailing_zeros();
    ctx.check_ops(p as u64 * (6 * nsteps as u64 + 6))?;
    let (rem, size) = (p - pof2, ctx.size);
    let (each, longer) = (size / pof2 as u64, size % pof2 as u64);
    // bytes of blocks lo..hi
    let bytes = |lo: u32, hi: u32| {
        let (lo, hi) = (lo as u64, hi as u64);
        (hi - lo) * each + hi.min(longer) - lo.min(longer)
    };
    let real = |v: u32| if v < rem { 2 * v + 1 } else { v + rem };
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let vrank = if r >= 2 * rem {
            Some(r - rem)
        } else if r % 2 == 0 {
            mpi.send(r, r + 1, size, 0);
            None
        } else {
            mpi.recv(r, r - 1, size, 0);
            mpi.reduce(r, size);
            Some(r / 2)
        };
        if let Some(v) = vrank {
            let (mut lo, mut hi) = (0, pof2);
            let mut kept_sent = Vec::with_capacity(nsteps as usize);
            for k in 0..nsteps {
                let partner = v ^ (1 << k);
                let dest = real(partner);
                let mid = lo + (hi - lo) / 2;
                let (kept, sent) = if v < partner {
                    (bytes(lo, mid), bytes(mid, hi))
                } else {
                    (bytes(mid, hi), bytes(lo, mid))
                };
                mpi.sendrecv(r, dest, sent, 1 + k, dest, kept, 1 + k);
                mpi.reduce(r, kept);
                kept_sent.push((dest, kept, sent));
                (lo, hi) = if v < partner { (lo, mid) } else { (mid, hi) };
            }
            for (i, &(dest, kept, sent)) in kept_sent.iter().rev().enumerate() {
                let tag = 1 + nsteps + i as u32;
                mpi.sendrecv(r, dest, kept, tag, dest, sent, tag);
            }
        }
        if r < 2 * rem {
            let tag = 1 + 2 * nsteps;
            if r % 2 == 1 {
                mpi.send(r, r - 1, size, tag);
            } else {
                mpi.recv(r, r + 1, size, tag);
            }
        }
    }
    mpi.finish()
}
