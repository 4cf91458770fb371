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
    let v = to_virtual(rank, root, p);
    let parent = if v == 0 {
        None
    } else {
        Some(to_real(v - 1, root, p))
    };
    let children = if v + 1 < p {
        vec![to_real(v + 1, root, p)]
    } else {
        Vec::new()
    };
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
                for f in [binomial, in_order_binomial, chain] {
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
}
