//! Broadcast: Open MPI's algorithms, and MPICH's where they differ. `size` is
//! the whole buffer in bytes.
//!
//! Open MPI 4.1.4's forced bcast (`coll_tuned_bcast_algorithm` N) passes
//! `coll_tuned_bcast_algorithm_segmentsize` (default 0: no segmentation) and
//! `coll_tuned_bcast_algorithm_chain_fanout` (default 4) to every algorithm;
//! knomial takes `coll_tuned_bcast_algorithm_knomial_radix` (default 4). Here
//! `opts.segment` stands for the segment size (unsegmented when absent,
//! except `bcast-pipeline`) and `opts.fanout` for the chain fanout or the
//! knomial radix.

use super::patterns::linear_from_root;
use super::program::Mpi;
use super::trees::{self, Node};
use super::{
    fixed, CollectiveError, CollectiveOptions, Ctx, DEFAULT_FANOUT, DEFAULT_PIPELINE_SEGMENT,
};
use crate::schedule::Schedule;

/// Open MPI basic_linear: the root posts an isend to every other rank in
/// rank order and waits for all; each other rank does one blocking receive.
/// Tag 0.
pub(crate) fn basic_linear(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    linear_from_root(ctx, true)
}

/// Open MPI binomial: `build_bmtree` tree, segmented only if `opts.segment`
/// is set (Open MPI's forced default is no segmentation).
pub(crate) fn binomial(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    tree_bcast(
        ctx,
        |r| trees::binomial(r, root, p),
        ctx.opts.segment.unwrap_or(ctx.size),
    )
}

/// MPICH binomial (`MPIR_Bcast_intra_binomial`): on virtual ranks, v receives
/// the buffer from v minus its lowest set bit, then sends it with one blocking
/// send after another to v + 2^k for each 2^k below that bit (below P at the
/// root) while < P, largest 2^k first: Open MPI's in-order binomial tree
/// ([`trees::in_order_binomial`], not the tree of [`binomial`]), children
/// served in reverse. Unsegmented (`opts.segment` is not used). Tag 0.
pub(crate) fn mpich_binomial(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    ctx.check_ops(2 * p as u64)?;
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let node = trees::in_order_binomial(r, root, p);
        if let Some(parent) = node.parent {
            mpi.recv(r, parent, ctx.size, 0);
        }
        for &child in node.children.iter().rev() {
            mpi.send(r, child, ctx.size, 0);
        }
    }
    mpi.finish()
}

/// Open MPI pipeline (`ompi_coll_base_bcast_intra_pipeline`):
/// [`tree_bcast`] (`bcast_intra_generic`) on `build_chain(1)`, root -> root+1
/// -> ..., with segments of `opts.segment` bytes (default
/// [`DEFAULT_PIPELINE_SEGMENT`], the 8 KiB `measure collective` forces).
pub(crate) fn pipeline(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    tree_bcast(
        ctx,
        |r| trees::chain(r, root, p),
        ctx.opts.segment.unwrap_or(DEFAULT_PIPELINE_SEGMENT),
    )
}

/// Open MPI chain (`ompi_coll_base_bcast_intra_chain`): `build_chain` with
/// `opts.fanout` chains (default [`DEFAULT_FANOUT`] = 4, Open MPI's
/// `bcast_algorithm_chain_fanout`; cut to P-1), each chain forwarding
/// rank to rank through `bcast_intra_generic`; unsegmented unless
/// `opts.segment` is set (the forced default segment size 0).
pub(crate) fn chain(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let fanout = ctx.opts.fanout.unwrap_or(DEFAULT_FANOUT);
    tree_bcast(
        ctx,
        |r| trees::chains(r, root, p, fanout),
        ctx.opts.segment.unwrap_or(ctx.size),
    )
}

/// Open MPI binary_tree (`ompi_coll_base_bcast_intra_bintree`): `build_tree`
/// with fanout 2 through `bcast_intra_generic`; unsegmented unless
/// `opts.segment` is set (forced default 0). The forced path ignores the
/// fanout parameter here.
pub(crate) fn binary_tree(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    tree_bcast(
        ctx,
        |r| trees::kary(r, root, p, 2),
        ctx.opts.segment.unwrap_or(ctx.size),
    )
}

/// Open MPI knomial (`ompi_coll_base_bcast_intra_knomial`): `build_kmtree`
/// with radix `opts.fanout` (default [`DEFAULT_FANOUT`] = 4, Open MPI's
/// `bcast_algorithm_knomial_radix`) through `bcast_intra_generic`;
/// unsegmented unless `opts.segment` is set (forced default 0).
pub(crate) fn knomial(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let radix = ctx.opts.fanout.unwrap_or(DEFAULT_FANOUT);
    if radix < 2 {
        return Err(ctx.invalid("fanout", radix, "a k-nomial tree needs a radix >= 2"));
    }
    tree_bcast(
        ctx,
        |r| trees::knomial(r, root, p, radix),
        ctx.opts.segment.unwrap_or(ctx.size),
    )
}

/// Open MPI's `bcast_intra_generic` over a tree (`tree(rank)` gives a rank's
/// node), the buffer cut into segments of `segment` bytes (the last one holds
/// the rest); segment s has tag s (Open MPI uses one tag for all: the same
/// matching, since a pair's segments are posted in the same order).
///
/// * root: for each segment, isend it to all children, then wait for all;
/// * inner node: irecv segment 0; for s = 1..n: irecv segment s, wait for
///   segment s-1, isend it to all children, wait for those sends; finally
///   wait for the last segment, isend it to all children, wait;
/// * leaf: irecv segment 0; for s = 1..n: irecv segment s, wait for s-1;
///   wait for the last.
fn tree_bcast(
    ctx: &Ctx,
    tree: impl Fn(u32) -> Node,
    segment: u64,
) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
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
        let node = tree(r);
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

/// Open MPI split_binary_tree (`ompi_coll_base_bcast_intra_split_bintree`).
/// The buffer is cut in halves, ceil(size/2) (left) and floor(size/2)
/// (right); with `opts.segment` s (forced default 0: one segment per half)
/// each half goes in segments of s bytes. On the fanout-2 `build_tree`
/// (virtual ranks; odd ones form the left subtree, even ones the right):
///
/// 1. the root, segment by segment, does a blocking send of the left half's
///    segment to its first child and of the right half's to its second;
///    an inner node pipelines its half: irecv segment 0; for each next
///    segment irecv it, wait for the previous one and forward it with
///    blocking sends to each child; wait for the last and forward it; a leaf
///    does one blocking receive per segment. Tag = segment index;
/// 2. every non-root exchanges its half for the other half with its pair
///    (virtual rank +1 if left, -1 if right) in a sendrecv; with P even the
///    last virtual rank instead gets the right half from the root (blocking
///    send / receive). Tag = number of segments of the left half.
///
/// When a half is empty (size 1) or shorter than a segment, Open MPI runs
/// the chain with fanout 1 instead (`bcast-pipeline` with that segment, or
/// unsegmented); so do we.
pub(crate) fn split_binary_tree(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let halves = [ctx.size.div_ceil(2), ctx.size / 2];
    let segment = ctx.opts.segment;
    if halves[1] == 0 || segment.is_some_and(|s| s > halves[1]) {
        return tree_bcast(
            ctx,
            |r| trees::chain(r, root, p),
            segment.unwrap_or(ctx.size),
        );
    }
    let seg = |half: usize| segment.unwrap_or(halves[half]);
    let nseg = |half: usize| halves[half].div_ceil(seg(half));
    if nseg(0) > u32::MAX as u64 - 1 {
        return Err(ctx.invalid("segment", seg(0), "more segments than tags (2^32)"));
    }
    ctx.check_ops(2 * nseg(0) * p as u64 + 2 * p as u64)?;
    let seg_bytes = |half: usize, s: u64| {
        if s + 1 == nseg(half) {
            halves[half] - seg(half) * (nseg(half) - 1)
        } else {
            seg(half)
        }
    };
    let exchange_tag = nseg(0) as u32;
    let mut mpi = ctx.mpi();
    if p == 1 {
        return mpi.finish();
    }
    let real = |v: u32| super::add(v, root, p);
    for r in 0..p {
        let v = super::sub(r, root, p);
        let node = trees::kary(r, root, p, 2);
        let lr = ((v + 1) % 2) as usize; // 0: left half, 1: right half
        match node.parent {
            None => {
                for s in 0..nseg(0) {
                    for (half, &child) in node.children.iter().enumerate() {
                        if s < nseg(half) {
                            mpi.send(r, child, seg_bytes(half, s), s as u32);
                        }
                    }
                }
            }
            Some(parent) if !node.children.is_empty() => {
                let mut pending = mpi.irecv(r, parent, seg_bytes(lr, 0), 0);
                for s in 1..nseg(lr) {
                    let next = mpi.irecv(r, parent, seg_bytes(lr, s), s as u32);
                    mpi.wait(pending);
                    for &child in &node.children {
                        mpi.send(r, child, seg_bytes(lr, s - 1), s as u32 - 1);
                    }
                    pending = next;
                }
                mpi.wait(pending);
                let last = nseg(lr) - 1;
                for &child in &node.children {
                    mpi.send(r, child, seg_bytes(lr, last), last as u32);
                }
            }
            Some(parent) => {
                for s in 0..nseg(lr) {
                    mpi.recv(r, parent, seg_bytes(lr, s), s as u32);
                }
            }
        }
        let last = p - 1;
        if p % 2 == 0 && v == 0 {
            mpi.send(r, real(last), halves[1], exchange_tag);
        } else if p % 2 == 0 && v == last {
            mpi.recv(r, root, halves[1], exchange_tag);
        } else if v != 0 {
            let pair = if lr == 0 { real(v + 1) } else { real(v - 1) };
            mpi.sendrecv(
                r,
                pair,
                halves[lr],
                exchange_tag,
                pair,
                halves[1 - lr],
                exchange_tag,
            );
        }
    }
    mpi.finish()
}

/// One step of a rank's program in the scatter-allgather broadcasts
/// (virtual ranks).
enum Step {
    Send(u32, u64, u32),
    Recv(u32, u64, u32),
    /// A sendrecv: `send` bytes to `to`, `recv` bytes from `from`.
    Exchange {
        to: u32,
        send: u64,
        from: u32,
        recv: u64,
        tag: u32,
    },
}

/// Open MPI's binomial scatter of `bcast_intra_scatter_allgather[_ring]`:
/// blocks of sc = ceil(size / P) bytes, block v for virtual rank v (the last
/// ones short or empty). Virtual rank v receives from v - lowbit(v) the
/// blocks of its subtree (as many bytes as exist), then sends each child
/// v + m (m = lowbit(v)/2, ..., 1; the root from the largest power of two
/// below P) the blocks of the child's subtree, skipping empty sends. Tag 0.
/// Returns each virtual rank's program so far.
fn binomial_scatter(p: u32, size: u64, sc: u64) -> Vec<Vec<Step>> {
    let mut programs: Vec<Vec<Step>> = (0..p).map(|_| Vec::new()).collect();
    let mut held = vec![0u64; p as usize];
    held[0] = size;
    for v in 0..p {
        let top = if v == 0 {
            p.next_power_of_two()
        } else {
            v & v.wrapping_neg()
        };
        if v != 0 && held[v as usize] > 0 {
            let parent = v - top;
            programs[v as usize].push(Step::Recv(parent, held[v as usize], 0));
        }
        let mut curr = held[v as usize];
        let mut m = top / 2;
        while m > 0 {
            if v + m < p {
                let bytes = curr.saturating_sub(sc * m as u64);
                if bytes > 0 {
                    programs[v as usize].push(Step::Send(v + m, bytes, 0));
                    held[(v + m) as usize] = bytes;
                    curr -= bytes;
                }
            }
            m /= 2;
        }
    }
    programs
}

/// Bytes of the blocks `from..to` (sc bytes each) within a buffer of `size`.
fn blocks(size: u64, sc: u64, from: u64, to: u64) -> u64 {
    (to * sc).min(size).saturating_sub(from * sc)
}

/// Emit the virtual-rank programs as the schedule (real rank = v + root),
/// rank by rank in real-rank order.
fn emit(ctx: &Ctx, programs: &[Vec<Step>]) -> Result<Schedule, CollectiveError> {
    let (p, root) = (ctx.p, ctx.opts.root);
    let real = |v: u32| super::add(v, root, p);
    let mut mpi = ctx.mpi();
    for r in 0..p {
        let v = super::sub(r, root, p);
        for step in &programs[v as usize] {
            match *step {
                Step::Send(to, bytes, tag) => {
                    mpi.send(r, real(to), bytes, tag);
                }
                Step::Recv(from, bytes, tag) => {
                    mpi.recv(r, real(from), bytes, tag);
                }
                Step::Exchange {
                    to,
                    send,
                    from,
                    recv,
                    tag,
                } => mpi.sendrecv(r, real(to), send, tag, real(from), recv, tag),
            }
        }
    }
    mpi.finish()
}

/// Open MPI scatter_allgather (`ompi_coll_base_bcast_intra_scatter_allgather`):
/// [`binomial_scatter`], then a recursive-doubling allgather over virtual
/// ranks: at step k (mask m = 2^k, tag 1 + k) v exchanges in a sendrecv all
/// it holds with v xor m when that exists; when the partner group
/// (v xor m rounded down to m, m ranks) is cut by P, the ranks of the group
/// that got its data forward it by recursive halving (blocking send /
/// receive, same tag) to those whose partner was missing. Needs size >= P
/// bytes; below that Open MPI runs basic_linear, and so do we. Unsegmented
/// (the algorithm takes no segment size).
pub(crate) fn scatter_allgather(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    if ctx.size < ctx.p as u64 {
        return linear_from_root(ctx, true);
    }
    scatter_doubling_allgather(ctx)
}

/// MPICH scatter_recursive_doubling_allgather
/// (`MPIR_Bcast_intra_scatter_recursive_doubling_allgather`, its scatter
/// `MPII_Scatter_for_bcast`): the calls of [`scatter_allgather`] (Open MPI took
/// both parts from MPICH), at every size: below P bytes the blocks are 1 byte,
/// the last ranks' empty, where Open MPI switches to basic_linear.
pub(crate) fn mpich_scatter_recursive_doubling_allgather(
    ctx: &Ctx,
) -> Result<Schedule, CollectiveError> {
    scatter_doubling_allgather(ctx)
}

/// [`scatter_allgather`] at any size >= 1.
fn scatter_doubling_allgather(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, size) = (ctx.p, ctx.size);
    ctx.check_ops(4 * p as u64 * (32 + 1))?;
    let sc = size.div_ceil(p as u64);
    let mut programs = binomial_scatter(p, size, sc);
    let mut held: Vec<u64> = (0..p as u64).map(|v| blocks(size, sc, v, v + 1)).collect();
    let mut last_recv = vec![0u64; p as usize];
    let (mut mask, mut tag) = (1u32, 1u32);
    while mask < p {
        let before = held.clone();
        for v in 0..p {
            let remote = v ^ mask;
            if remote < p {
                let (send, recv) = (before[v as usize], before[remote as usize]);
                programs[v as usize].push(Step::Exchange {
                    to: remote,
                    send,
                    from: remote,
                    recv,
                    tag,
                });
                held[v as usize] += recv;
                last_recv[v as usize] = recv;
            }
        }
        let mut half = mask / 2;
        while half > 0 {
            let mut sends = Vec::new();
            for v in 0..p {
                let own_root = v & !(mask - 1);
                let remote_root = (v ^ mask) & !(mask - 1);
                if (remote_root + mask) as u64 <= p as u64 {
                    continue;
                }
                let alldata = p as i64 - own_root as i64 - mask as i64;
                let sub_root = (v & !(2 * half - 1)) as i64;
                let partner = v ^ half;
                let has = (v as i64) < sub_root + alldata;
                let partner_has = (partner as i64) < sub_root + alldata;
                if partner > v && partner < p && has && !partner_has {
                    sends.push((v, partner));
                }
            }
            for (from, to) in sends {
                let bytes = last_recv[from as usize];
                programs[from as usize].push(Step::Send(to, bytes, tag));
                programs[to as usize].push(Step::Recv(from, bytes, tag));
                held[to as usize] += bytes;
                last_recv[to as usize] = bytes;
            }
            half /= 2;
        }
        mask *= 2;
        tag += 1;
    }
    debug_assert!(held.iter().all(|&h| h == size), "{held:?}");
    emit(ctx, &programs)
}

/// Open MPI scatter_allgather_ring
/// (`ompi_coll_base_bcast_intra_scatter_allgather_ring`): [`binomial_scatter`],
/// then a ring allgather: steps i = 1..P-1 (tag i), a sendrecv sending block
/// v - i + 1 to the right neighbour and receiving block v - i from the left
/// one (virtual ranks; empty blocks go as 0-byte messages). Needs size >= P
/// bytes; below that Open MPI runs basic_linear, and so do we.
pub(crate) fn scatter_allgather_ring(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    if ctx.size < ctx.p as u64 {
        return linear_from_root(ctx, true);
    }
    scatter_ring_allgather(ctx)
}

/// MPICH scatter_ring_allgather (`MPIR_Bcast_intra_scatter_ring_allgather`): the
/// calls of [`scatter_allgather_ring`] at every size: below P bytes the blocks are
/// 1 byte, the last ranks' empty (0-byte messages in the ring), where Open MPI
/// switches to basic_linear.
pub(crate) fn mpich_scatter_ring_allgather(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    scatter_ring_allgather(ctx)
}

/// [`scatter_allgather_ring`] at any size >= 1.
fn scatter_ring_allgather(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let (p, size) = (ctx.p, ctx.size);
    ctx.check_ops(4 * p as u64 * p as u64)?;
    let sc = size.div_ceil(p as u64);
    let mut programs = binomial_scatter(p, size, sc);
    let block = |b: u32| blocks(size, sc, b as u64, b as u64 + 1);
    for v in 0..p {
        for i in 1..p {
            programs[v as usize].push(Step::Exchange {
                to: super::add(v, 1, p),
                send: block(super::sub(v, i - 1, p)),
                from: super::sub(v, 1, p),
                recv: block(super::sub(v, i, p)),
                tag: i,
            });
        }
    }
    emit(ctx, &programs)
}

/// The bcast Open MPI 4.1.4's fixed decision rules pick for P ranks and
/// `size` bytes ([`fixed::bcast`]), run as they run it: segment size 0 and
/// fan-out 0, so chain (fan-out 0 read as 1) and pipeline are one unsegmented
/// chain, and knomial keeps its radix 4. `opts.segment` and `opts.fanout` are
/// not used. For a part of a composed collective: `ctx` records into no stream.
pub(crate) fn fixed_rules(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    debug_assert!(ctx.stream.is_none());
    let alg = fixed::bcast(ctx.p, ctx.size);
    let opts = CollectiveOptions {
        segment: matches!(alg, 2 | 3).then_some(ctx.size),
        fanout: None,
        ..ctx.opts.clone()
    };
    let c = Ctx {
        opts: &opts,
        stream: None,
        ..*ctx
    };
    match alg {
        1 => basic_linear(&c),
        2 | 3 => pipeline(&c),
        4 => split_binary_tree(&c),
        5 => binary_tree(&c),
        6 => binomial(&c),
        7 => knomial(&c),
        8 => scatter_allgather(&c),
        _ => scatter_allgather_ring(&c),
    }
}
