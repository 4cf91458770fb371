//! Open MPI's coll/base algorithms written down call by call ([`Trace`]): the
//! references of `collectives_ompi_trace.rs` (4.1.4) and
//! `collectives_ompi5_trace.rs` (5.0.x). Every function below makes the same
//! calls in 4.1.4 and in 5.0.10 (`git diff v4.1.4 v5.0.10` of
//! `ompi/mca/coll/base/` changes none of them; 5.0's additions, sparbit, live
//! in the 5.0 test). Each takes the communicator size `p`, the byte count
//! (a 1-byte datatype, so elements are bytes) and, for rooted collectives,
//! the root, and returns one trace per real rank.
//!
//! The point-to-point helpers as Open MPI writes them: `ompi_coll_base_sendrecv`
//! is irecv, blocking send, wait ([`Trace::sendrecv`]; with itself as both
//! peers it is a local copy and no call); `ompi_op_reduce` is a calc of 1 ns
//! per byte ([`Trace::reduce`]).

use super::trace::{pof2, traces, Trace};

fn pos(x: i64) -> u64 {
    x.max(0) as u64
}

// --- trees (coll_base_topo.c) -----------------------------------------------------------------

/// A rank's place in an Open MPI tree: its parent and its children in
/// `tree_next` order.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    pub prev: Option<u32>,
    pub next: Vec<u32>,
}

/// `ompi_coll_base_topo_build_tree(fanout)`: level-ordered on shifted ranks;
/// at level l a node s has children s + f^l (i+1), i < fanout.
pub fn build_tree(fanout: u32, p: u32, root: u32, rank: u32) -> Tree {
    let s = (rank + p - root) % p;
    let mut level = 0;
    let mut num = 0u32;
    while num <= s {
        num += fanout.pow(level);
        level += 1;
    }
    let level = level - 1;
    let delta = fanout.pow(level);
    let next = (1..=fanout)
        .map(|i| s + delta * i)
        .take_while(|&c| c < p)
        .map(|c| (c + root) % p)
        .collect();
    let slimit = if fanout == 1 {
        level
    } else {
        (fanout.pow(level) - 1) / (fanout - 1)
    };
    let prev = (s != 0).then(|| {
        let mut sp = s;
        if sp < fanout {
            sp = 0;
        } else {
            while sp >= slimit {
                sp -= delta / fanout;
            }
        }
        (sp + root) % p
    });
    Tree { prev, next }
}

/// `ompi_coll_base_topo_build_bmtree`: index i's parent is i without its top
/// bit; its children i ^ m for m = the powers of two above i, smallest first.
pub fn build_bmtree(p: u32, root: u32, rank: u32) -> Tree {
    let i = (rank + p - root) % p;
    // opal_next_poweroftwo(i): the smallest power of two above i (1 for 0)
    let mut mask = (i + 1).next_power_of_two();
    let prev = (i != 0).then(|| ((i ^ (mask >> 1)) + root) % p);
    let mut next = Vec::new();
    while mask < p {
        let c = i ^ mask;
        if c >= p {
            break;
        }
        next.push((c + root) % p);
        mask <<= 1;
    }
    Tree { prev, next }
}

/// `ompi_coll_base_topo_build_in_order_bmtree`: v's children v ^ m for
/// m = 1, 2, 4, ... until the first m with v ^ m < v, which is the parent.
pub fn build_in_order_bmtree(p: u32, root: u32, rank: u32) -> Tree {
    let v = (rank + p - root) % p;
    let (mut prev, mut next, mut mask) = (None, Vec::new(), 1);
    while mask < p {
        let r = v ^ mask;
        if r < v {
            prev = Some((r + root) % p);
            break;
        } else if r < p {
            next.push((r + root) % p);
        }
        mask <<= 1;
    }
    Tree { prev, next }
}

/// `ompi_coll_base_topo_build_kmtree(radix)`: v's parent is v rounded down to
/// the multiple of radix^(k+1) at its lowest nonzero radix digit k; children
/// v + m r for m = radix^k down to 1, r = 1 .. radix-1.
pub fn build_kmtree(p: u32, root: u32, rank: u32, radix: u32) -> Tree {
    let v = (rank + p - root) % p;
    let (mut prev, mut mask) = (None, 1u32);
    while mask < p {
        if !v.is_multiple_of(radix * mask) {
            prev = Some((v / (radix * mask) * (radix * mask) + root) % p);
            break;
        }
        mask *= radix;
    }
    mask /= radix;
    let mut next = Vec::new();
    while mask > 0 {
        for r in 1..radix {
            let c = v + mask * r;
            if c < p {
                next.push((c + root) % p);
            }
        }
        mask /= radix;
    }
    Tree { prev, next }
}

/// `ompi_coll_base_topo_build_chain(fanout)`: the P-1 non-roots in `fanout`
/// chains of consecutive shifted ranks, the first (P-1) mod fanout chains one
/// longer; the root feeds each chain's head.
pub fn build_chain(fanout: u32, p: u32, root: u32, rank: u32) -> Tree {
    let fanout = fanout.clamp(1, p - 1);
    let s = (rank + p - root) % p;
    let real = |x: u32| (x + root) % p;
    if fanout == 1 {
        return Tree {
            prev: (s != 0).then(|| real(s - 1)),
            next: if s + 1 < p { vec![real(s + 1)] } else { vec![] },
        };
    }
    let mut maxlen = (p - 1) / fanout;
    let mark = if !(p - 1).is_multiple_of(fanout) {
        maxlen += 1;
        (p - 1) % fanout
    } else {
        fanout + 1
    };
    if s == 0 {
        let mut next = vec![real(1)];
        for i in 1..fanout {
            let mut n = next[i as usize - 1] + maxlen;
            if i > mark {
                n -= 1;
            }
            next.push(n % p);
        }
        return Tree { prev: None, next };
    }
    let (head, len) = if s - 1 < mark * maxlen {
        (1 + (s - 1) / maxlen * maxlen, maxlen)
    } else {
        let column = mark + (s - 1 - mark * maxlen) / (maxlen - 1);
        (
            mark * maxlen + 1 + (column - mark) * (maxlen - 1),
            maxlen - 1,
        )
    };
    let prev = Some(if s == head { real(0) } else { real(s - 1) });
    let next = if s == head + len - 1 || s + 1 >= p {
        vec![]
    } else {
        vec![real(s + 1)]
    };
    Tree { prev, next }
}

// --- bcast (coll_base_bcast.c) ---------------------------------------------------------------

/// `ompi_coll_base_bcast_intra_generic` over `tree`, `seg` bytes a segment:
/// the root isends each segment to every child and waits for them all before
/// the next; an inner node keeps two receives in flight (post the next, wait
/// for the previous, isend it to every child, wait for those); a leaf the same
/// without the sends. Receives post a whole segment.
pub fn bcast_generic(
    p: u32,
    count: u64,
    root: u32,
    seg: u64,
    tree: &dyn Fn(u32) -> Tree,
) -> Vec<Trace> {
    let seg = if seg == 0 || seg >= count {
        count.max(1)
    } else {
        seg
    };
    let nseg = count.div_ceil(seg).max(1);
    let len = |s: u64| if s + 1 == nseg { count - seg * s } else { seg };
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let node = tree(rank);
            let forward = |t: &mut Trace, bytes: u64| {
                let reqs: Vec<_> = node.next.iter().map(|&c| t.isend(c, bytes)).collect();
                t.waitall(&reqs);
            };
            if rank == root {
                (0..nseg).for_each(|s| forward(&mut t, len(s)));
            } else {
                let parent = node.prev.expect("a non-root has a parent");
                let mut pending = t.irecv(parent, seg);
                for s in 1..nseg {
                    let cur = t.irecv(parent, seg);
                    t.wait(pending);
                    if !node.next.is_empty() {
                        forward(&mut t, len(s - 1));
                    }
                    pending = cur;
                }
                t.wait(pending);
                if !node.next.is_empty() {
                    forward(&mut t, len(nseg - 1));
                }
            }
            t
        })
        .collect()
}

/// `bcast_intra_basic_linear`: the root isends to every other rank in rank
/// order and waits for all; the others receive.
pub fn bcast_basic_linear(p: u32, count: u64, root: u32) -> Vec<Trace> {
    bcast_generic(p, count, root, 0, &|r| Tree {
        prev: (r != root).then_some(root),
        next: if r == root {
            (0..p).filter(|&d| d != root).collect()
        } else {
            vec![]
        },
    })
}

/// `bcast_intra_split_bintree` (`seg` bytes a segment, 0 = whole halves):
/// the binary tree (`build_tree(2)`) carries the first half (ceil) down the
/// left subtree (odd shifted ranks) and the second down the right, blocking
/// sends; then each non-root swaps halves with its pair (shifted rank +1 on
/// the left, -1 on the right); with P even the root sends the second half to
/// shifted rank P-1. With a half of 0 bytes, or a segment longer than a
/// half, it is the chain of fanout 1 (the pipeline) with `seg`.
pub fn bcast_split_bintree(p: u32, count: u64, root: u32, seg: u64) -> Vec<Trace> {
    let counts = [count.div_ceil(2), count / 2];
    if counts[1] == 0 || seg > counts[1] {
        return bcast_generic(p, count, root, seg, &|r| build_chain(1, p, root, r));
    }
    let segc = |h: usize| if seg > 0 { seg } else { counts[h] };
    let nseg = |h: usize| counts[h].div_ceil(segc(h));
    let len = |h: usize, s: u64| {
        if s + 1 == nseg(h) {
            counts[h] - s * segc(h)
        } else {
            segc(h)
        }
    };
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let node = build_tree(2, p, root, rank);
            let s = (rank + p - root) % p;
            let lr = ((s + 1) % 2) as usize;
            if rank == root {
                for sg in 0..nseg(0) {
                    for (i, &c) in node.next.iter().enumerate().take(2) {
                        if sg < nseg(i) {
                            t.send(c, len(i, sg));
                        }
                    }
                }
            } else {
                let parent = node.prev.unwrap();
                if node.next.is_empty() {
                    (0..nseg(lr)).for_each(|sg| t.recv(parent, len(lr, sg)));
                } else {
                    let mut base = t.irecv(parent, len(lr, 0));
                    for sg in 1..nseg(lr) {
                        let new = t.irecv(parent, len(lr, sg));
                        t.wait(base);
                        node.next.iter().for_each(|&c| t.send(c, segc(lr)));
                        base = new;
                    }
                    t.wait(base);
                    let last = len(lr, nseg(lr) - 1);
                    node.next.iter().for_each(|&c| t.send(c, last));
                }
            }
            let pair = if lr == 0 {
                (rank + 1) % p
            } else {
                (rank + p - 1) % p
            };
            if !p.is_multiple_of(2) && rank != root {
                t.sendrecv(pair, counts[lr], pair, counts[1 - lr]);
            } else if p.is_multiple_of(2) {
                let last = (root + p - 1) % p;
                if rank == root {
                    t.send(last, counts[1]);
                } else if rank == last {
                    t.recv(root, counts[1]);
                } else {
                    t.sendrecv(pair, counts[lr], pair, counts[1 - lr]);
                }
            }
            t
        })
        .collect()
}

/// The binomial scatter both scatter-allgather bcasts start with; returns
/// the traces (by virtual rank) and each virtual rank's `recv_count` as the
/// scatter leaves it.
fn binomial_scatter(p: u32, count: u64, root: u32) -> (Vec<Trace>, Vec<i64>) {
    let real = |v: u32| (v + root) % p;
    let (n, sc) = (count as i64, count.div_ceil(p as u64) as i64);
    let mut t = traces(p);
    let mut got = vec![0i64; p as usize];
    let mut recv_count = vec![0i64; p as usize];
    for v in 0..p {
        let vi = v as usize;
        let mut curr = if v == 0 { n } else { 0 };
        let mut mask = 1;
        while mask < p {
            if v & mask != 0 {
                recv_count[vi] = n - v as i64 * sc;
                if recv_count[vi] > 0 {
                    t[vi].recv(real(v - mask), recv_count[vi] as u64);
                    recv_count[vi] = got[vi];
                    curr = got[vi];
                }
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if v + mask < p {
                let send = curr - sc * mask as i64;
                if send > 0 {
                    t[vi].send(real(v + mask), send as u64);
                    got[(v + mask) as usize] = send;
                    curr -= send;
                }
            }
            mask >>= 1;
        }
    }
    (t, recv_count)
}

fn rounddown(x: i64, f: i64) -> i64 {
    x / f * f
}

/// Traces by virtual rank -> by real rank.
fn unshift(t: Vec<Trace>, p: u32, root: u32) -> Vec<Trace> {
    let mut by_rank = traces(p);
    for (v, tr) in t.into_iter().enumerate() {
        by_rank[(v as u32 + root) as usize % p as usize] = tr;
    }
    by_rank
}

/// `bcast_intra_scatter_allgather` (count >= P): the scatter, then the
/// recursive-doubling allgather with the recursive-halving forwarding for a
/// cut partner group; every rank steps through the masks together.
pub fn bcast_scatter_allgather(p: u32, count: u64, root: u32) -> Vec<Trace> {
    let real = |v: i64| ((v + root as i64) % p as i64) as u32;
    let (n, sc, pp) = (count as i64, count.div_ceil(p as u64) as i64, p as i64);
    let (mut t, mut recv_count) = binomial_scatter(p, count, root);
    let mut curr: Vec<i64> = (0..pp).map(|v| sc.min(n - v * sc).max(0)).collect();
    let mut mask = 1i64;
    while mask < pp {
        let before = curr.clone();
        for v in 0..pp {
            let vr = v ^ mask;
            if vr < pp {
                let bound = pos(n - rounddown(vr, mask) * sc);
                t[v as usize].sendrecv(real(vr), before[v as usize] as u64, real(vr), bound);
                recv_count[v as usize] = before[vr as usize];
                curr[v as usize] += before[vr as usize];
            }
        }
        let mut h = mask >> 1;
        while h > 0 {
            let rc = recv_count.clone();
            for v in 0..pp {
                if rounddown(v ^ mask, mask) + mask <= pp {
                    continue;
                }
                let alldata = pp - rounddown(v, mask) - mask;
                let vr = v ^ h;
                let top = rounddown(v, h << 1) + alldata;
                if vr > v && v < top && vr >= top {
                    t[v as usize].send(real(vr), rc[v as usize] as u64);
                } else if vr < v && vr < top && v >= top {
                    t[v as usize].recv(real(vr), count);
                    recv_count[v as usize] = rc[vr as usize];
                    curr[v as usize] += rc[vr as usize];
                }
            }
            h >>= 1;
        }
        mask <<= 1;
    }
    assert!(curr.iter().all(|&c| c == n), "reference: {curr:?}");
    unshift(t, p, root)
}

/// `bcast_intra_scatter_allgather_ring` (count >= P): the scatter, then P-1
/// ring steps over real-rank neighbours.
pub fn bcast_scatter_allgather_ring(p: u32, count: u64, root: u32) -> Vec<Trace> {
    let (n, sc) = (count as i64, count.div_ceil(p as u64) as i64);
    let (mut t, _) = binomial_scatter(p, count, root);
    let len = |b: u32| pos(sc.min(n - b as i64 * sc));
    for v in 0..p {
        let rank = (v + root) % p;
        let (left, right) = ((rank + p - 1) % p, (rank + 1) % p);
        let (mut send_block, mut recv_block) = (v, (v + p - 1) % p);
        for _ in 1..p {
            t[v as usize].sendrecv(right, len(send_block), left, len(recv_block));
            send_block = recv_block;
            recv_block = (recv_block + p - 1) % p;
        }
    }
    unshift(t, p, root)
}

// --- allreduce (coll_base_allreduce.c) ---------------------------------------------------------

/// `COLL_BASE_COMPUTE_BLOCKCOUNT`: (early, late, split): the first `split`
/// of `n` parts have `early` elements, the others `late`.
fn blockcount(count: u64, n: u64) -> (u64, u64, u64) {
    let late = count / n;
    let split = count % n;
    (late + u64::from(split != 0), late, split)
}

/// The reduce-scatter loop of `allreduce_intra_ring[_segmented]` for one
/// rank: `part(b)` bytes of block b move, receives post `bound`.
fn ring_reduce_scatter(t: &mut Trace, rank: u32, p: u32, part: &dyn Fn(u32) -> u64, bound: u64) {
    let (left, right) = ((rank + p - 1) % p, (rank + 1) % p);
    let mut pending = t.irecv(left, bound);
    t.send(right, part(rank));
    for k in 2..p {
        let prevblock = (rank + p - k + 1) % p;
        let cur = t.irecv(left, bound);
        t.wait(pending);
        t.reduce(part(prevblock));
        t.send(right, part(prevblock));
        pending = cur;
    }
    t.wait(pending);
    t.reduce(part(right));
}

/// The distribution loop (ring allgather shifted by one) of both rings.
fn ring_allgather(t: &mut Trace, rank: u32, p: u32, block: &dyn Fn(u32) -> u64, bound: u64) {
    let (left, right) = ((rank + p - 1) % p, (rank + 1) % p);
    for k in 0..p - 1 {
        let send_from = (rank + 1 + p - k) % p;
        t.sendrecv(right, block(send_from), left, bound);
    }
}

/// `allreduce_intra_ring` (count >= P; below, Open MPI runs recursive doubling).
pub fn allreduce_ring(p: u32, count: u64) -> Vec<Trace> {
    if count < p as u64 {
        return allreduce_recursive_doubling(p, count);
    }
    let (early, late, split) = blockcount(count, p as u64);
    let block = |b: u32| if (b as u64) < split { early } else { late };
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            ring_reduce_scatter(&mut t, rank, p, &block, early);
            ring_allgather(&mut t, rank, p, &block, early);
            t
        })
        .collect()
}

/// `allreduce_intra_ring_segmented` with `segsize` bytes (0: unsegmented);
/// count < P * segcount falls back to the ring.
pub fn allreduce_segmented_ring(p: u32, count: u64, segsize: u64) -> Vec<Trace> {
    let segcount = if segsize >= 1 && segsize < count {
        segsize
    } else {
        count
    };
    let round = p as u64 * segcount;
    if count < round {
        return allreduce_ring(p, count);
    }
    let rest = count % round;
    let phases = count / round + u64::from(rest >= p as u64 && rest > round / 2);
    let (early, late, split) = blockcount(count, p as u64);
    let block = |b: u32| if (b as u64) < split { early } else { late };
    let max_seg = blockcount(early, phases).0;
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            for phase in 0..phases {
                let part = |b: u32| {
                    let (e, l, s) = blockcount(block(b), phases);
                    if phase < s {
                        e
                    } else {
                        l
                    }
                };
                ring_reduce_scatter(&mut t, rank, p, &part, max_seg);
            }
            ring_allgather(&mut t, rank, p, &block, early);
            t
        })
        .collect()
}

/// `allreduce_intra_recursivedoubling`: with p' = pof2(P) and e = P - p',
/// even ranks below 2e send the buffer to the odd rank above and wait for the
/// result; the odd ones reduce it and take part as r/2, the others as r - e;
/// each step a sendrecv of the whole buffer with new rank ^ 2^k and a reduce.
pub fn allreduce_recursive_doubling(p: u32, count: u64) -> Vec<Trace> {
    let (adj, n) = (pof2(p), count);
    let extra = p - adj;
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let newrank = if rank < 2 * extra {
                if rank % 2 == 0 {
                    t.send(rank + 1, n);
                    None
                } else {
                    t.recv(rank - 1, n);
                    t.reduce(n);
                    Some(rank >> 1)
                }
            } else {
                Some(rank - extra)
            };
            if let Some(v) = newrank {
                let mut d = 1;
                while d < adj {
                    let nr = v ^ d;
                    let remote = if nr < extra { nr * 2 + 1 } else { nr + extra };
                    t.sendrecv(remote, n, remote, n);
                    t.reduce(n);
                    d <<= 1;
                }
            }
            if rank < 2 * extra {
                if rank % 2 == 0 {
                    t.recv(rank + 1, n);
                } else {
                    t.send(rank - 1, n);
                }
            }
            t
        })
        .collect()
}

/// `reduce_intra_basic_linear` to rank 0 appended to `t`: the others send;
/// 0 receives from P-1, then from P-2 .. 1 reducing each, and reduces its own.
fn reduce_linear_to_zero(t: &mut [Trace], p: u32, n: u64) {
    t.iter_mut().skip(1).for_each(|tr| tr.send(0, n));
    t[0].recv(p - 1, n);
    for i in (0..p - 1).rev() {
        if i != 0 {
            t[0].recv(i, n);
        }
        t[0].reduce(n);
    }
}

/// `reduce_generic` with one segment (segment size 0) and a commutative
/// operation, to `tree`'s root: a node posts a receive from its first child;
/// for each next child it posts the receive, waits for the previous child's
/// data and reduces (its own data with the first child's, then each child's
/// in turn), waits for the last child, reduces it, and sends the result to its
/// parent (blocking); a leaf sends its buffer.
pub fn reduce_generic(p: u32, count: u64, tree: &dyn Fn(u32) -> Tree) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let node = tree(rank);
            let mut pending = None;
            for &c in &node.next {
                let q = t.irecv(c, count);
                if let Some(prev) = pending.replace(q) {
                    t.wait(prev);
                    t.reduce(count);
                }
            }
            if let Some(last) = pending {
                t.wait(last);
                t.reduce(count);
            }
            if let Some(parent) = node.prev {
                t.send(parent, count);
            }
            t
        })
        .collect()
}

/// `reduce_intra_basic_linear` to rank 0.
pub fn reduce_basic_linear(p: u32, count: u64) -> Vec<Trace> {
    let mut t = traces(p);
    reduce_linear_to_zero(&mut t, p, count);
    t
}

/// `allreduce_intra_basic_linear`: the linear reduce to 0, then the linear
/// bcast from 0.
pub fn allreduce_basic_linear(p: u32, count: u64) -> Vec<Trace> {
    let mut t = reduce_basic_linear(p, count);
    let bcast = bcast_basic_linear(p, count, 0);
    append(&mut t, bcast);
    t
}

/// Each rank's `more` calls after its `t` ones.
pub fn append(t: &mut [Trace], more: Vec<Trace>) {
    for (tr, m) in t.iter_mut().zip(more) {
        tr.extend(m);
    }
}

/// `allreduce_intra_redscat_allgather` (Rabenseifner; count >= p' and a
/// commutative op, else basic_linear): ranks below 2e pair up, the odd one
/// sends its left half and receives the right, reduces and sends the right
/// half back, then drops out; the even one takes part as r/2. Recursive
/// halving (the lower rank of a pair keeps the lower half floor(w/2)), then
/// recursive doubling back; the odd ranks below 2e receive the result.
pub fn allreduce_rabenseifner(p: u32, count: u64) -> Vec<Trace> {
    let pof = pof2(p);
    if count < pof as u64 {
        return allreduce_basic_linear(p, count);
    }
    let (nsteps, rem) = (pof.trailing_zeros(), p - pof);
    let real = |v: u32| if v < rem { v * 2 } else { v + rem };
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let (lh, rh) = (count / 2, count - count / 2);
            let vrank = if rank < 2 * rem {
                if rank % 2 != 0 {
                    t.sendrecv(rank - 1, lh, rank - 1, rh);
                    t.reduce(rh);
                    t.send(rank - 1, rh);
                    None
                } else {
                    t.sendrecv(rank + 1, rh, rank + 1, lh);
                    t.reduce(lh);
                    t.recv(rank + 1, rh);
                    Some(rank / 2)
                }
            } else {
                Some(rank - rem)
            };
            if let Some(v) = vrank {
                let mut wsize = count;
                let mut steps = Vec::new();
                for k in 0..nsteps {
                    let dest = real(v ^ (1 << k));
                    let (rc, sc) = if rank < dest {
                        (wsize / 2, wsize - wsize / 2)
                    } else {
                        (wsize - wsize / 2, wsize / 2)
                    };
                    t.sendrecv(dest, sc, dest, rc);
                    t.reduce(rc);
                    steps.push((dest, rc, sc));
                    wsize = rc;
                }
                for &(dest, rc, sc) in steps.iter().rev() {
                    t.sendrecv(dest, rc, dest, sc);
                }
            }
            if rank < 2 * rem {
                if rank % 2 != 0 {
                    t.recv(rank - 1, count);
                } else {
                    t.send(rank + 1, count);
                }
            }
            t
        })
        .collect()
}

// --- allgather (coll_base_allgather.c); `count` is the block of each rank ----------------------

/// `allgather_intra_bruck`: at distance d = 1, 2, 4, .. a sendrecv of
/// min(d, P-d) blocks to rank - d, from rank + d.
pub fn allgather_bruck(p: u32, count: u64) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let mut d = 1;
            while d < p {
                let blocks = if d <= p >> 1 { d } else { p - d } as u64;
                t.sendrecv(
                    (rank + p - d) % p,
                    blocks * count,
                    (rank + d) % p,
                    blocks * count,
                );
                d <<= 1;
            }
            t
        })
        .collect()
}

/// `allgather_intra_recursivedoubling` (P a power of two, else bruck):
/// sendrecv of d blocks with rank ^ d.
pub fn allgather_recursive_doubling(p: u32, count: u64) -> Vec<Trace> {
    if !p.is_power_of_two() {
        return allgather_bruck(p, count);
    }
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let mut d = 1;
            while d < p {
                t.sendrecv(rank ^ d, d as u64 * count, rank ^ d, d as u64 * count);
                d <<= 1;
            }
            t
        })
        .collect()
}

/// `allgather_intra_ring`: P-1 sendrecvs of one block to the right, from the left.
pub fn allgather_ring(p: u32, count: u64) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            for _ in 0..p - 1 {
                t.sendrecv((rank + 1) % p, count, (rank + p - 1) % p, count);
            }
            t
        })
        .collect()
}

/// `allgather_intra_neighborexchange` (P even, else the ring): one block with
/// neighbour 0 (even ranks: rank+1, odd: rank-1), then P/2 - 1 exchanges of
/// two blocks alternating between neighbour 1 and neighbour 0.
pub fn allgather_neighbor(p: u32, count: u64) -> Vec<Trace> {
    if !p.is_multiple_of(2) {
        return allgather_ring(p, count);
    }
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let (up, down) = ((rank + 1) % p, (rank + p - 1) % p);
            let nb = if rank % 2 == 0 {
                [up, down]
            } else {
                [down, up]
            };
            t.sendrecv(nb[0], count, nb[0], count);
            for i in 1..p / 2 {
                let n = nb[(i % 2) as usize];
                t.sendrecv(n, 2 * count, n, 2 * count);
            }
            t
        })
        .collect()
}

/// The two-process exchanges (allgather, alltoall two_proc): one sendrecv
/// of one block with the other rank.
pub fn two_proc(count: u64) -> Vec<Trace> {
    (0..2u32)
        .map(|rank| {
            let mut t = Trace::default();
            t.sendrecv(rank ^ 1, count, rank ^ 1, count);
            t
        })
        .collect()
}

// --- alltoall (coll_base_alltoall.c) -------------------------------------------------------------

/// `alltoall_intra_basic_linear` and `alltoall_intra_linear_sync` without a
/// request limit: irecvs from rank+1, rank+2, .. then isends to rank-1,
/// rank-2, .., one wait for all.
pub fn alltoall_linear(p: u32, count: u64) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let mut reqs: Vec<_> = (1..p).map(|k| t.irecv((rank + k) % p, count)).collect();
            reqs.extend((1..p).map(|k| t.isend((rank + p - k) % p, count)));
            t.waitall(&reqs);
            t
        })
        .collect()
}

/// `alltoall_intra_pairwise`: step k = 1 .. P-1 a sendrecv to rank+k from
/// rank-k (step P is the rank itself: a copy).
pub fn alltoall_pairwise(p: u32, count: u64) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            for k in 1..p {
                t.sendrecv((rank + k) % p, count, (rank + p - k) % p, count);
            }
            t
        })
        .collect()
}

/// `alltoall_intra_bruck`: at distance d a sendrecv to rank+d from rank-d of
/// the blocks i in 1..P with bit d set.
pub fn alltoall_bruck(p: u32, count: u64) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let mut d = 1;
            while d < p {
                let bytes = (1..p).filter(|i| i & d != 0).count() as u64 * count;
                t.sendrecv((rank + d) % p, bytes, (rank + p - d) % p, bytes);
                d <<= 1;
            }
            t
        })
        .collect()
}

// --- gather and scatter (coll_base_gather.c, coll_base_scatter.c) ------------------------------

/// `gather_intra_basic_linear`: the others send; the root receives from
/// every rank in rank order.
pub fn gather_basic_linear(p: u32, count: u64, root: u32) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            if rank == root {
                (0..p).filter(|&i| i != root).for_each(|i| t.recv(i, count));
            } else {
                t.send(root, count);
            }
            t
        })
        .collect()
}

/// The blocks of the in-order binomial subtree below `child` (of `v`).
fn subtree(v: u32, child_v: u32, p: u32) -> u64 {
    (child_v - v).min(p - child_v) as u64
}

/// `gather_intra_binomial` (in-order binomial tree): an even virtual rank
/// receives from each child in turn (posting what is left of the whole
/// buffer), then every non-root sends what it holds to its parent.
pub fn gather_binomial(p: u32, count: u64, root: u32) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let tree = build_in_order_bmtree(p, root, rank);
            let v = (rank + p - root) % p;
            let mut total = count;
            if v.is_multiple_of(2) {
                for &c in &tree.next {
                    t.recv(c, count * p as u64 - total);
                    total += subtree(v, (c + p - root) % p, p) * count;
                }
            }
            if let Some(parent) = tree.prev {
                t.send(parent, total);
            }
            t
        })
        .collect()
}

/// `gather_intra_linear_sync` with a first segment of `first` bytes (0 or
/// at least the block: the whole block): a non-root receives a 0-byte
/// message from the root, sends the first segment, then the rest; the root,
/// for each other rank in order, posts the first receive, sends the 0-byte
/// message, posts the second receive and waits for the first, then waits for
/// all the second ones.
pub fn gather_linear_sync(p: u32, count: u64, root: u32, first: u64) -> Vec<Trace> {
    let f = if first >= 1 && first < count {
        first
    } else {
        count
    };
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            if rank != root {
                t.recv(root, 0);
                t.send(root, f);
                t.send(root, count - f);
            } else {
                let mut second = Vec::new();
                for i in (0..p).filter(|&i| i != root) {
                    let a = t.irecv(i, f);
                    t.send(i, 0);
                    second.push(t.irecv(i, count - f));
                    t.wait(a);
                }
                t.waitall(&second);
            }
            t
        })
        .collect()
}

/// `scatter_intra_basic_linear`: the root sends to every rank in rank
/// order (blocking); the others receive.
pub fn scatter_basic_linear(p: u32, count: u64, root: u32) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            if rank == root {
                (0..p).filter(|&i| i != root).for_each(|i| t.send(i, count));
            } else {
                t.recv(root, count);
            }
            t
        })
        .collect()
}

/// `scatter_intra_linear_nb` with `max_reqs` (<= 1: every send an isend):
/// the root isends to each rank in rank order, a blocking send to each rank
/// that is a multiple of `max_reqs` > 1, then waits for the isends.
pub fn scatter_linear_nb(p: u32, count: u64, root: u32, max_reqs: u32) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            if rank != root {
                t.recv(root, count);
                return t;
            }
            let mut reqs = Vec::new();
            for i in (0..p).filter(|&i| i != root) {
                if max_reqs <= 1 || i % max_reqs != 0 {
                    reqs.push(t.isend(i, count));
                } else {
                    t.send(i, count);
                }
            }
            t.waitall(&reqs);
            t
        })
        .collect()
}

/// `scatter_intra_binomial` (in-order binomial tree): odd virtual ranks
/// receive their block; the others (but the root) receive their subtree's
/// blocks, then send each child its subtree's, the last child first.
pub fn scatter_binomial(p: u32, count: u64, root: u32) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let tree = build_in_order_bmtree(p, root, rank);
            let v = (rank + p - root) % p;
            if let Some(parent) = tree.prev {
                let vp = (parent + p - root) % p;
                let bound = if v % 2 == 1 { 1 } else { subtree(vp, v, p) };
                t.recv(parent, bound * count);
            }
            if v.is_multiple_of(2) {
                for &c in tree.next.iter().rev() {
                    t.send(c, subtree(v, (c + p - root) % p, p) * count);
                }
            }
            t
        })
        .collect()
}

// --- barrier (coll_base_barrier.c): 0-byte messages ---------------------------------------------

/// `barrier_intra_basic_linear`: the others send to 0 and receive from it;
/// 0 posts a receive from each (MPI_ANY_SOURCE in Open MPI: here from rank
/// 1, 2, .. in order), waits for all, then sends to each in rank order.
pub fn barrier_linear(p: u32) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            if rank > 0 {
                t.send(0, 0);
                t.recv(0, 0);
            } else {
                let reqs: Vec<_> = (1..p).map(|i| t.irecv(i, 0)).collect();
                t.waitall(&reqs);
                (1..p).for_each(|i| t.send(i, 0));
            }
            t
        })
        .collect()
}

/// `barrier_intra_doublering`: twice round the ring from rank 0 (the second
/// time with synchronous sends).
pub fn barrier_double_ring(p: u32) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let (left, right) = ((rank + p - 1) % p, (rank + 1) % p);
            for _ in 0..2 {
                if rank > 0 {
                    t.recv(left, 0);
                }
                t.send(right, 0);
                if rank == 0 {
                    t.recv(left, 0);
                }
            }
            t
        })
        .collect()
}

/// `barrier_intra_recursivedoubling`: ranks >= p' sendrecv with rank - p'
/// first; ranks below P - p' receive from rank + p' first and send to it
/// last (synchronously); ranks below p' sendrecv with rank ^ 2^k.
pub fn barrier_recursive_doubling(p: u32) -> Vec<Trace> {
    let adj = pof2(p);
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            if adj != p {
                if rank >= adj {
                    t.sendrecv(rank - adj, 0, rank - adj, 0);
                } else if rank < p - adj {
                    t.recv(rank + adj, 0);
                }
            }
            if rank < adj {
                let mut mask = 1;
                while mask < adj {
                    let remote = rank ^ mask;
                    mask <<= 1;
                    if remote < adj {
                        t.sendrecv(remote, 0, remote, 0);
                    }
                }
            }
            if adj != p && rank < p - adj {
                t.send(rank + adj, 0);
            }
            t
        })
        .collect()
}

/// `barrier_intra_bruck` (dissemination): at distance d a sendrecv to
/// rank + d from rank - d.
pub fn barrier_bruck(p: u32) -> Vec<Trace> {
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let mut d = 1;
            while d < p {
                t.sendrecv((rank + d) % p, 0, (rank + p - d) % p, 0);
                d <<= 1;
            }
            t
        })
        .collect()
}

/// `barrier_intra_tree`: up a binomial tree (receive from rank ^ jump
/// above, send to it below, jump = 1, 2, ..) and back down in reverse.
pub fn barrier_tree(p: u32) -> Vec<Trace> {
    let depth = p.next_power_of_two();
    (0..p)
        .map(|rank| {
            let mut t = Trace::default();
            let partners = |jump: u32| {
                let partner = rank ^ jump;
                (partner & (jump - 1) == 0 && partner < p).then_some(partner)
            };
            let mut jump = 1;
            while jump < depth {
                match partners(jump) {
                    Some(q) if q > rank => t.recv(q, 0),
                    Some(q) if q < rank => t.send(q, 0),
                    _ => {}
                }
                jump <<= 1;
            }
            let mut jump = depth >> 1;
            while jump > 0 {
                match partners(jump) {
                    Some(q) if q > rank => t.send(q, 0),
                    Some(q) if q < rank => t.recv(q, 0),
                    _ => {}
                }
                jump >>= 1;
            }
            t
        })
        .collect()
}
