//! Bad input gives errors that name the problem; random-pairs is seeded.

mod collectives_support;
use collectives_support::*;
use commodel_engine::collectives::{generate, CollectiveError, CollectiveOptions};
use commodel_engine::OpKind;

fn err(name: &str, p: u32, size: u64, o: &CollectiveOptions) -> CollectiveError {
    match generate(name, p, size, o) {
        Err(e) => e,
        Ok(_) => panic!("{name} P={p} size={size} {o:?} should fail"),
    }
}

#[test]
fn unknown_name_lists_valid_names_and_suggests() {
    let e = err("alltoall-xor-pairwse", 4, 8, &opts());
    let msg = e.to_string();
    assert!(
        msg.contains("unknown collective 'alltoall-xor-pairwse'"),
        "{msg}"
    );
    assert!(
        msg.contains("did you mean 'alltoall-xor-pairwise'"),
        "{msg}"
    );
    for name in names() {
        assert!(msg.contains(name), "{msg} lacks {name}");
    }
}

#[test]
fn ranks_root_and_size_are_checked() {
    assert!(matches!(
        err("bcast-binomial", 0, 8, &opts()),
        CollectiveError::NoRanks { .. }
    ));
    let e = err(
        "gather-binomial",
        4,
        8,
        &CollectiveOptions { root: 4, ..opts() },
    );
    assert_eq!(
        e.to_string(),
        "gather-binomial: root 4 is out of range: ranks are 0..3"
    );
    let e = err("alltoall-xor-post-all", 6, 8, &opts());
    assert_eq!(
        e.to_string(),
        "alltoall-xor-post-all: needs a power-of-two number of ranks, got 6 (nearest: 4 or 8)"
    );
    assert!(matches!(
        err("alltoall-xor-pairwise", 12, 8, &opts()),
        CollectiveError::NeedsPowerOfTwo { ranks: 12, .. }
    ));
    assert!(matches!(
        err("allgather-ring", 4, 0, &opts()),
        CollectiveError::SizeTooSmall { size: 0, .. }
    ));
    let e = err("allreduce-rabenseifner", 12, 7, &opts());
    assert!(
        matches!(
            e,
            CollectiveError::SizeTooSmall {
                size: 7,
                min: 8,
                ..
            }
        ),
        "{e}"
    );
    assert!(matches!(
        err("bcast-basic-linear", 3, u64::MAX / 2, &opts()),
        CollectiveError::SizeTooLarge { .. }
    ));
    // barrier ignores size, root is not an option of unrooted collectives.
    assert!(generate("barrier-dissemination", 4, 0, &opts()).is_ok());
    assert!(generate(
        "allgather-ring",
        4,
        8,
        &CollectiveOptions { root: 9, ..opts() }
    )
    .is_ok());
}

#[test]
fn options_are_checked() {
    let e = err(
        "gather-split",
        4,
        100,
        &CollectiveOptions {
            splits: 0,
            ..opts()
        },
    );
    assert!(
        e.to_string()
            .starts_with("gather-split: option splits = 0 is invalid"),
        "{e}"
    );
    assert!(matches!(
        err(
            "gather-split",
            4,
            3,
            &CollectiveOptions {
                splits: 4,
                ..opts()
            }
        ),
        CollectiveError::InvalidOption {
            field: "splits",
            ..
        }
    ));
    assert!(matches!(
        err(
            "random-pairs",
            4,
            3,
            &CollectiveOptions {
                degree: 0,
                ..opts()
            }
        ),
        CollectiveError::InvalidOption {
            field: "degree",
            ..
        }
    ));
    assert!(matches!(
        err(
            "bcast-pipeline",
            4,
            3,
            &CollectiveOptions {
                segment: Some(0),
                ..opts()
            }
        ),
        CollectiveError::InvalidOption {
            field: "segment",
            ..
        }
    ));
    for rate in [-1.0, f64::NAN, f64::INFINITY] {
        let o = CollectiveOptions {
            reduce_ns_per_byte: rate,
            ..opts()
        };
        assert!(matches!(
            err("allreduce-ring", 4, 64, &o),
            CollectiveError::InvalidOption {
                field: "reduce_ns_per_byte",
                ..
            }
        ));
    }
}

#[test]
fn schedules_too_large_are_refused_before_building() {
    // 2^17 ranks all-to-all would need 2 * 2^17 * (2^17 - 1) > 2^32 operations.
    let e = err("alltoall-basic-linear", 1 << 17, 1, &opts());
    assert!(
        matches!(
            e,
            CollectiveError::Build {
                name: "alltoall-basic-linear",
                ..
            }
        ),
        "{e}"
    );
}

fn transfers(name_seed: u64, p: u32, d: u32) -> Vec<(u32, u32, u32)> {
    let o = CollectiveOptions {
        seed: name_seed,
        degree: d,
        ..opts()
    };
    let s = gen_with("random-pairs", p, 4096, &o);
    let mut t = Vec::new();
    for r in 0..p {
        for id in s.ops_of(r) {
            if s.kind(id) == OpKind::Send {
                t.push((r, s.peer(id), s.tag(id)));
            }
        }
    }
    t
}

#[test]
fn random_pairs_is_reproducible_per_seed_and_varies_across_seeds() {
    assert_eq!(transfers(42, 16, 3), transfers(42, 16, 3));
    assert_ne!(transfers(42, 16, 3), transfers(43, 16, 3));
    assert_ne!(transfers(1, 16, 1), transfers(2, 16, 1));
    // Each node sends at most once per pass, never to itself; about half the
    // P * d draws are kept (64 * 8 = 512 draws; 5 sigma is about 57).
    let t = transfers(7, 64, 8);
    assert!(t.iter().all(|&(i, j, _)| i != j));
    for pass in 0..8 {
        let mut senders: Vec<u32> = t.iter().filter(|x| x.2 == pass).map(|x| x.0).collect();
        let n = senders.len();
        senders.dedup();
        assert_eq!(senders.len(), n, "pass {pass}: a node sent twice");
    }
    assert!(
        (256 - 57..=256 + 57).contains(&t.len()),
        "{} transfers",
        t.len()
    );
    // Every destination is reached over many draws (uniform among the others).
    let mut hit = [0u32; 64];
    for &(_, j, _) in &transfers(11, 64, 64) {
        hit[j as usize] += 1;
    }
    assert!(hit.iter().all(|&h| h > 0), "{hit:?}");
}

#[test]
fn random_pairs_passes_are_sequential_per_rank() {
    let o = CollectiveOptions {
        seed: 5,
        degree: 4,
        ..opts()
    };
    let s = gen_with("random-pairs", 8, 100, &o);
    let pre = prerequisites(&s);
    for r in 0..8 {
        let ops: Vec<u32> = s.ops_of(r).collect();
        for &id in &ops {
            let tag = s.tag(id);
            // An op of pass k > 0 requires ops of an earlier pass (the most
            // recent pass this rank took part in), all of them, and nothing else.
            let earlier: Vec<u32> = ops.iter().copied().filter(|&o| s.tag(o) < tag).collect();
            let reqs: Vec<u32> = pre[id as usize].iter().map(|&(b, _)| b).collect();
            if let Some(last) = earlier.iter().map(|&o| s.tag(o)).max() {
                let mut want: Vec<u32> = earlier
                    .iter()
                    .copied()
                    .filter(|&o| s.tag(o) == last)
                    .collect();
                let mut got = reqs.clone();
                want.sort();
                got.sort();
                assert_eq!(got, want, "rank {r} op #{}", s.local_index(id));
            } else {
                assert!(reqs.is_empty());
            }
        }
    }
}
