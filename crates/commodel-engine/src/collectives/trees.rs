//! Communication trees of Open MPI's `coll/base` (our own code, same shapes).
//!
//! All trees are built on *virtual ranks* `v = (rank - root) mod P`, so the
//! root is virtual rank 0, and translated back with `(v + root) mod P`.

/// A rank's place in a tree: its parent (None at the root) and its children
/// in the order the algorithm serves them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub parent: Option<u32>,
    pub children: Vec<u32>,
}

fn to_real(v: u32, root: u32, p: u32) -> u32 {
    ((v as u64 + root as u64) % p as u64) as u32
}

fn to_virtual(rank: u32, root: u32, p: u32) -> u32 {
    ((rank as u64 + p as u64 - root as u64) % p as u64) as u32
}

/// Open MPI's `build_bmtree` (binomial tree used by bcast): the children of
/// virtual rank v are v + 2^k for every 2^k above v's highest set bit (and
/// below P), in increasing k; the parent clears v's highest set bit.
///
/// P = 8, root 0: 0 -> {1, 2, 4}, 1 -> {3, 5}, 2 -> {6}, 3 -> {7}.
pub(crate) fn binomial(rank: u32, root: u32, p: u32) -> Node {
    let v = to_virtual(rank, root, p) as u64;
    let parent = if v == 0 {
        None
    } else {
        Some(to_real(
            (v ^ (1 << (63 - v.leading_zeros()))) as u32,
            root,
            p,
        ))
    };
    let mut mask: u64 = if v == 0 {
        1
    } else {
        1 << (64 - v.leading_zeros())
    };
    let mut children = Vec::new();
    while mask < p as u64 {
        let child = v | mask;
        if child >= p as u64 {
            break;
        }
        children.push(to_real(child as u32, root, p));
        mask <<= 1;
    }
    Node { parent, children }
}

/// Open MPI's `build_in_order_bmtree` (gather and scatter): the children of
/// virtual rank v are v + 2^k for every 2^k below v's lowest set bit (all k
/// at the root) while < P, in increasing k; the parent clears the lowest set bit.
///
/// P = 8, root 0: 0 -> {1, 2, 4}, 2 -> {3}, 4 -> {5, 6}, 6 -> {7}.
pub(crate) fn in_order_binomial(rank: u32, root: u32, p: u32) -> Node {
    let v = to_virtual(rank, root, p) as u64;
    let parent = if v == 0 {
        None
    } else {
        Some(to_real((v & (v - 1)) as u32, root, p))
    };
    let mut children = Vec::new();
    let mut mask: u64 = 1;
    while mask < p as u64 {
        if v & mask != 0 {
            break;
        }
        let child = v | mask;
        if child < p as u64 {
            children.push(to_real(child as u32, root, p));
        }
        mask <<= 1;
    }
    Node { parent, children }
}

/// Size of the in-order binomial subtree rooted at `child` (a real rank),
/// that is the number of blocks that travel over the edge to it.
pub(crate) fn in_order_subtree_size(child: u32, root: u32, p: u32) -> u32 {
    let v = to_virtual(child, root, p) as u64;
    debug_assert!(v != 0);
    let span = v & v.wrapping_neg(); // lowest set bit
    (span.min(p as u64 - v)) as u32
}

/// Open MPI's `build_chain` with fanout 1 (bcast pipeline): virtual rank v
/// forwards to v + 1.
pub(crate) fn chain(rank: u32, root: u32, p: u32) -> Node {
    chains(rank, root, p, 1)
}

/// Open MPI's `build_tree(fanout)` (the bintree of bcast with fanout 2): the
/// virtual ranks fill the tree level by level, level l holding fanout^l
/// ranks; the children of v on level l are v + k * fanout^l for k = 1..=fanout
/// (while < P), in that order.
///
/// fanout 2, P = 7, root 0: 0 -> {1, 2}, 1 -> {3, 5}, 2 -> {4, 6}.
pub(crate) fn kary(rank: u32, root: u32, p: u32, fanout: u32) -> Node {
    let v = to_virtual(rank, root, p) as u64;
    let f = fanout as u64;
    // First virtual rank of v's level, and the level's width fanout^l.
    let (mut first, mut width) = (0u64, 1u64);
    while first + width <= v {
        first += width;
        width *= f;
    }
    let children = (1..=f)
        .map(|k| v + k * width)
        .take_while(|&c| c < p as u64)
        .map(|c| to_real(c as u32, root, p))
        .collect();
    let parent = if v == 0 {
        None
    } else {
        // v = parent + k * (width / fanout) with the parent on the level above.
        let step = width / f;
        let mut par = v;
        while par >= first {
            par -= step;
        }
        Some(to_real(par as u32, root, p))
    };
    Node { parent, children }
}

/// Open MPI's `build_chain(fanout)`: the P-1 non-root virtual ranks are cut
/// into min(fanout, P-1) chains of consecutive ranks, the first (P-1) mod
/// chains one rank longer; the root sends to each chain's head (in order),
/// every other rank to the next rank of its chain. `fanout` 1 is the
/// pipeline's single chain ([`chain`]).
///
/// fanout 4, P = 8, root 0: 0 -> {1, 3, 5, 7}, 1 -> {2}, 3 -> {4}, 5 -> {6}.
pub(crate) fn chains(rank: u32, root: u32, p: u32, fanout: u32) -> Node {
    let v = to_virtual(rank, root, p);
    let n = p - 1;
    let count = fanout.clamp(1, n.max(1));
    let (short, long_chains) = (n / count, n % count);
    // Head of chain c (virtual rank).
    let head = |c: u32| 1 + c * short + c.min(long_chains);
    if v == 0 {
        let children = (0..count.min(n))
            .map(|c| to_real(head(c), root, p))
            .collect();
        return Node {
            parent: None,
            children,
        };
    }
    let c = (0..count).rev().find(|&c| head(c) <= v).unwrap_or(0);
    let end = head(c) + short + u32::from(c < long_chains); // one past the chain's last rank
    let parent = Some(if v == head(c) {
        root
    } else {
        to_real(v - 1, root, p)
    });
    let children = if v + 1 < end {
        vec![to_real(v + 1, root, p)]
    } else {
        Vec::new()
    };
    Node { parent, children }
}

/// Open MPI's `build_kmtree(radix)` (bcast knomial): with m the first of
/// 1, radix, radix^2, ... such that radix * m does not divide v (at the root:
/// the first m >= P), the parent of v is v - v mod (radix * m) and the children
/// are v + j * m' for m' = m / radix, m / radix^2, ..., 1 (largest first) and
/// j = 1..radix-1, while < P.
///
/// radix 4, P = 10, root 0: 0 -> {4, 8, 1, 2, 3}, 4 -> {5, 6, 7}, 8 -> {9}.
pub(crate) fn knomial(rank: u32, root: u32, p: u32, radix: u32) -> Node {
    let v = to_virtual(rank, root, p) as u64;
    let (k, p64) = (radix as u64, p as u64);
    let mut m = 1u64;
    let mut parent = None;
    while m < p64 {
        if !v.is_multiple_of(k * m) {
            parent = Some(to_real((v - v % (k * m)) as u32, root, p));
            break;
        }
        m *= k;
    }
    let mut children = Vec::new();
    m /= k;
    while m > 0 {
        for j in 1..k {
            let c = v + m * j;
            if c < p64 {
                children.push(to_real(c as u32, root, p));
            }
        }
        m /= k;
    }
    Node { parent, children }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kids(f: fn(u32, u32, u32) -> Node, p: u32, root: u32) -> Vec<Vec<u32>> {
        (0..p).map(|r| f(r, root, p).children).collect()
    }

    #[test]
    fn binomial_p8() {
        assert_eq!(
            kids(binomial, 8, 0),
            vec![
                vec![1, 2, 4],
                vec![3, 5],
                vec![6],
                vec![7],
                vec![],
                vec![],
                vec![],
                vec![]
            ]
        );
        assert_eq!(binomial(5, 0, 8).parent, Some(1));
        assert_eq!(binomial(0, 0, 8).parent, None);
    }

    #[test]
    fn in_order_p8_and_subtrees() {
        assert_eq!(
            kids(in_order_binomial, 8, 0),
            vec![
                vec![1, 2, 4],
                vec![],
                vec![3],
                vec![],
                vec![5, 6],
                vec![],
                vec![7],
                vec![]
            ]
        );
        assert_eq!(in_order_binomial(7, 0, 8).parent, Some(6));
        assert_eq!(in_order_subtree_size(4, 0, 8), 4);
        assert_eq!(in_order_subtree_size(4, 0, 6), 2);
    }

    #[test]
    fn rooted_elsewhere_is_a_rotation() {
        // root 3, P = 5: virtual ranks 0..5 are real 3,4,0,1,2.
        assert_eq!(binomial(3, 3, 5).children, vec![4, 0, 2]);
        assert_eq!(in_order_binomial(0, 3, 5).children, vec![1]);
        assert_eq!(chain(2, 3, 5).children, Vec::<u32>::new());
        assert_eq!(chain(2, 3, 5).parent, Some(1));
    }

    #[test]
    fn every_non_root_has_one_parent_listing_it() {
        for p in 1..40 {
            for root in [0, p / 2, p - 1] {
                let shapes: [&dyn Fn(u32, u32, u32) -> Node; 8] = [
                    &binomial,
                    &in_order_binomial,
                    &chain,
                    &|r, root, p| kary(r, root, p, 2),
                    &|r, root, p| kary(r, root, p, 3),
                    &|r, root, p| chains(r, root, p, 4),
                    &|r, root, p| knomial(r, root, p, 4),
                    &|r, root, p| knomial(r, root, p, 3),
                ];
                for f in shapes {
                    for r in 0..p {
                        let n = f(r, root, p);
                        match n.parent {
                            None => assert_eq!(r, root),
                            Some(par) => assert!(
                                f(par, root, p).children.contains(&r),
                                "p={p} root={root} r={r}"
                            ),
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn kary_chains_knomial_shapes() {
        let all = |f: &dyn Fn(u32) -> Node, p: u32| (0..p).map(f).collect::<Vec<_>>();
        let b: Vec<_> = all(&|r| kary(r, 0, 7, 2), 7)
            .into_iter()
            .map(|n| n.children)
            .collect();
        assert_eq!(
            b,
            vec![
                vec![1, 2],
                vec![3, 5],
                vec![4, 6],
                vec![],
                vec![],
                vec![],
                vec![]
            ]
        );
        assert_eq!(kary(5, 0, 7, 2).parent, Some(1));
        assert_eq!(kary(6, 0, 7, 2).parent, Some(2));
        // fanout 3, P = 13: level 1 = 1..3 (step 1), level 2 = 4..12 (step 3).
        assert_eq!(kary(2, 0, 13, 3).children, vec![5, 8, 11]);
        assert_eq!(kary(11, 0, 13, 3).parent, Some(2));
        // 7 non-root ranks in 4 chains: 1-2, 3-4, 5-6, 7.
        assert_eq!(chains(0, 0, 8, 4).children, vec![1, 3, 5, 7]);
        assert_eq!(chains(3, 0, 8, 4).parent, Some(0));
        assert_eq!(chains(4, 0, 8, 4).parent, Some(3));
        assert_eq!(chains(4, 0, 8, 4).children, Vec::<u32>::new());
        assert_eq!(chains(7, 0, 8, 4).children, Vec::<u32>::new());
        // 8 non-root ranks, all chains of 2; fanout above P-1 is cut to P-1.
        assert_eq!(chains(0, 0, 9, 4).children, vec![1, 3, 5, 7]);
        assert_eq!(chains(0, 0, 3, 4).children, vec![1, 2]);
        // Open MPI's own example, radix 4, P = 10.
        assert_eq!(knomial(0, 0, 10, 4).children, vec![4, 8, 1, 2, 3]);
        assert_eq!(knomial(4, 0, 10, 4).children, vec![5, 6, 7]);
        assert_eq!(knomial(8, 0, 10, 4).children, vec![9]);
        assert_eq!(knomial(7, 0, 10, 4).parent, Some(4));
        // radix 3, P = 10: 0 -> {9, 3, 6, 1, 2}, 3 -> {4, 5}.
        assert_eq!(knomial(0, 0, 10, 3).children, vec![9, 3, 6, 1, 2]);
        assert_eq!(knomial(3, 0, 10, 3).children, vec![4, 5]);
    }
}
