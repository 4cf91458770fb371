//! Properties of every model on random and generated schedules: messages are
//! delivered exactly once, time never runs backwards, and a schedule written
//! as GOAL and read back predicts exactly the same times.

use commodel_engine::collectives::{generate, CollectiveOptions};
use commodel_engine::params::{Common, HockneyParams, LogGopsParams, PlogpParams};
use commodel_engine::{goal, predict, ModelParams, OpKind, Schedule, ScheduleBuilder};
use proptest::prelude::*;

fn models() -> Vec<(&'static str, ModelParams)> {
    vec![
        (
            "loggops",
            ModelParams::LogGops(LogGopsParams {
                L: 5_000_000,
                o: 1_500_000,
                g: 1_000_000,
                G: 8_000.0,
                O: 100.0,
                S: 4096,
                cpu_cores: None,
            }),
        ),
        (
            "plogp",
            ModelParams::Plogp(PlogpParams {
                L: 3_000_000,
                sizes: vec![0, 1024, 65536],
                g: vec![2_000_000, 9_000_000, 500_000_000],
                common: Common {
                    S: Some(8192),
                    ..Common::default()
                },
            }),
        ),
        (
            "hockney",
            ModelParams::Hockney(HockneyParams {
                alpha: 4_000_000,
                beta: 8_000.0,
                common: Common::default(),
            }),
        ),
    ]
}

/// Check the invariants of one prediction.
fn check(s: &Schedule, model: &str, params: &ModelParams) -> Vec<u64> {
    let out = predict::run(s, params, true).unwrap_or_else(|e| panic!("{model}: {e}"));
    let sends = (0..s.num_ops() as u32)
        .filter(|&o| s.kind(o) == OpKind::Send)
        .count();
    assert_eq!(
        out.messages.len(),
        sends,
        "{model}: every message delivered once"
    );
    let mut seen_send = vec![false; s.num_ops()];
    let mut seen_recv = vec![false; s.num_ops()];
    for m in &out.messages {
        assert!(
            !std::mem::replace(&mut seen_send[m.send as usize], true),
            "{model}: send delivered twice"
        );
        assert!(
            !std::mem::replace(&mut seen_recv[m.recv as usize], true),
            "{model}: recv completed twice"
        );
        assert!(m.end >= m.start, "{model}: message ends before it starts");
        assert_eq!(s.size(m.send), m.bytes);
        assert!(m.end <= out.makespan);
    }
    assert_eq!(out.makespan, out.finish.iter().copied().max().unwrap_or(0));
    out.finish
}

/// A random deadlock-free schedule: a random sequence of matched pairs
/// posted in a global order, each rank's operations chained or overlapped.
/// Overlapped messages of one source, destination and tag may match other
/// receives than their own, so each receive holds the largest of them (a
/// smaller one would be an MPI truncation error).
fn random_schedule(p: u32, pairs: &[(u32, u32, u64, bool)]) -> Schedule {
    let mut largest = std::collections::HashMap::new();
    for (k, &(a, c, size, _)) in pairs.iter().enumerate() {
        let m = largest.entry((a % p, c % p, k % 3)).or_insert(0);
        *m = size.max(*m);
    }
    let mut b = ScheduleBuilder::new(p);
    let mut last: Vec<Option<commodel_engine::OpRef>> = vec![None; p as usize];
    for (k, &(a, c, size, chain)) in pairs.iter().enumerate() {
        let (src, dst) = (a % p, c % p);
        if src == dst {
            let op = b.calc(src, size % 5000);
            if let Some(prev) = last[src as usize] {
                b.requires(op, prev);
            }
            last[src as usize] = Some(op);
            continue;
        }
        let tag = (k % 3) as u32;
        let s = b.send(src, dst, size, tag);
        let r = b.recv(dst, src, largest[&(src, dst, k % 3)], tag);
        for (rank, op) in [(src, s), (dst, r)] {
            if let Some(prev) = last[rank as usize] {
                if chain {
                    b.requires(op, prev);
                } else {
                    b.irequires(op, prev);
                }
            }
            last[rank as usize] = Some(op);
        }
    }
    b.build().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_schedules_keep_invariants_and_round_trip(
        p in 2u32..6,
        pairs in proptest::collection::vec((0u32..6, 0u32..6, 0u64..20_000, proptest::bool::ANY), 1..40)
    ) {
        let s = random_schedule(p, &pairs);
        let text = goal::write(&s);
        let back = goal::parse(&text, "roundtrip.goal").unwrap();
        for (model, params) in models() {
            let a = check(&s, model, &params);
            let b = check(&back, model, &params);
            prop_assert_eq!(a, b, "{} differs after a GOAL round trip", model);
        }
    }
}

#[test]
fn generated_collectives_keep_invariants() {
    let opts = CollectiveOptions::default();
    for &(name, p) in &[
        ("alltoall-xor-pairwise", 8u32),
        ("alltoall-xor-post-all", 8),
        ("alltoall-basic-linear", 6),
        ("bcast-binomial", 9),
        ("allreduce-recursive-doubling", 8),
        ("gather-binomial", 7),
        ("barrier-dissemination", 5),
    ] {
        let s = generate(name, p, 100_000, &opts).unwrap();
        for (model, params) in models() {
            check(&s, model, &params);
        }
    }
}

#[test]
fn repeated_runs_are_bit_for_bit_identical() {
    let s = generate(
        "alltoall-basic-linear",
        16,
        3000,
        &CollectiveOptions::default(),
    )
    .unwrap();
    for (_, params) in models() {
        let a = predict::run(&s, &params, true).unwrap();
        let b = predict::run(&s, &params, true).unwrap();
        assert_eq!(a.finish, b.finish);
        assert_eq!(a.messages, b.messages);
    }
}
