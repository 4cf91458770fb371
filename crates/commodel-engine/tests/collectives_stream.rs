//! `collectives::write_goal`: GOAL text written rank by rank while generating is
//! byte for byte the text of the whole schedule, and holds one rank at a time.

use commodel_engine::collectives::{
    catalog, generate, write_goal, CollectiveOptions, GoalSummary, WriteGoalError,
};
use commodel_engine::goal;

/// Generators that do not record each rank in one stretch: random-pairs posts
/// each transfer on both its ranks. allgather-linear and
/// allreduce-nonoverlapping are built from two whole schedules (a gather or
/// reduce, then a bcast), gather-split from its sub-gathers and barriers.
const NOT_RANK_BY_RANK: &[&str] = &[
    "gather-split",
    "random-pairs",
    "allgather-linear",
    "allreduce-nonoverlapping",
];

fn option_sets(p: u32) -> Vec<CollectiveOptions> {
    let d = CollectiveOptions::default;
    vec![
        d(),
        CollectiveOptions {
            root: p / 2,
            seed: 7,
            segment: Some(300),
            degree: 3,
            splits: 3,
            max_requests: 2,
            reduce_ns_per_byte: 0.5,
            fanout: Some(3),
        },
    ]
}

/// `write_goal`'s bytes and summary, or its error's message (nothing written then).
fn streamed(
    name: &str,
    p: u32,
    size: u64,
    o: &CollectiveOptions,
) -> Result<(String, GoalSummary), String> {
    let mut out = Vec::new();
    match write_goal(name, p, size, o, &mut out) {
        Ok(summary) => Ok((String::from_utf8(out).unwrap(), summary)),
        Err(e) => {
            assert!(out.is_empty(), "{name} P={p}: wrote before failing: {e}");
            Err(e.to_string())
        }
    }
}

#[test]
fn every_collective_streams_the_bytes_of_the_whole_schedule() {
    let mut cases = 0;
    for c in catalog() {
        for p in [1u32, 2, 5, 8, 16] {
            for size in [1u64, 1000, 65536] {
                for o in option_sets(p) {
                    let whole = generate(c.name, p, size, &o).map_err(|e| e.to_string());
                    let got = streamed(c.name, p, size, &o);
                    let (text, summary) = match (whole, got) {
                        (Ok(s), Ok((text, summary))) => {
                            assert_eq!(summary.num_ranks, p);
                            assert_eq!(summary.num_ops, s.num_ops() as u64, "{}", c.name);
                            assert_eq!(summary.bytes_sent, s.bytes_sent(), "{}", c.name);
                            (text, (summary, goal::write(&s)))
                        }
                        (Err(a), Err(b)) => {
                            assert_eq!(a, b, "{} P={p} size={size}", c.name);
                            continue;
                        }
                        (a, b) => panic!("{} P={p} size={size}: {a:?} vs {b:?}", c.name),
                    };
                    let (summary, want) = summary;
                    assert!(
                        text == want,
                        "{} P={p} size={size} {o:?}: streamed text differs",
                        c.name
                    );
                    if p == 8 {
                        assert_eq!(
                            summary.streamed,
                            !NOT_RANK_BY_RANK.contains(&c.name),
                            "{}: a generator that records rank by rank must stream \
                             (and one that does not must be detected)",
                            c.name
                        );
                    }
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 500, "{cases} cases compared");
}

#[test]
fn streaming_holds_one_rank_at_a_time() {
    // The recorder's count of operations held: the largest rank's, never the
    // schedule's (pairwise at P = 64: 2 * 63 per rank, 2 * 64 * 63 in all).
    let o = CollectiveOptions::default();
    let (_, s) = streamed("alltoall-pairwise", 64, 4096, &o).unwrap();
    assert!(s.streamed);
    assert_eq!(s.num_ops, 2 * 64 * 63);
    assert_eq!(s.peak_ops_held, 2 * 63);
    for c in catalog()
        .iter()
        .filter(|c| !NOT_RANK_BY_RANK.contains(&c.name) && !c.name.ends_with("-two-proc"))
    {
        let whole = generate(c.name, 16, 1000, &o).unwrap();
        let largest = (0..16).map(|r| whole.ops_of(r).len()).max().unwrap() as u64;
        let (_, s) = streamed(c.name, 16, 1000, &o).unwrap();
        assert_eq!(s.peak_ops_held, largest, "{}", c.name);
    }
}

#[test]
fn a_write_error_is_reported() {
    /// Accepts `room` bytes, then fails.
    struct Full {
        room: usize,
    }
    impl std::io::Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let o = CollectiveOptions::default();
    for room in [0, 100, 70_000] {
        match write_goal("alltoall-pairwise", 64, 8, &o, Full { room }) {
            Err(WriteGoalError::Io(e)) => assert_eq!(e.to_string(), "disk full"),
            other => panic!("room {room}: {other:?}"),
        }
    }
}

/// The schedule `generate` seals rank by rank is the one read back from the text
/// `write_goal` streams: same operations, same dependents in the same order.
#[test]
fn generated_schedules_equal_their_streamed_text_read_back() {
    let mut compared = 0;
    for c in catalog() {
        for p in [2u32, 5, 8, 16] {
            for o in option_sets(p) {
                let Ok((text, _)) = streamed(c.name, p, 1000, &o) else {
                    continue;
                };
                let read = goal::parse(&text, "streamed.goal").unwrap();
                let generated = generate(c.name, p, 1000, &o).unwrap();
                assert_eq!(read.num_ops(), generated.num_ops(), "{} P={p}", c.name);
                for id in 0..read.num_ops() as u32 {
                    let deps = |s: &commodel_engine::Schedule| {
                        let req: Vec<u32> = s.requirers(id).collect();
                        (
                            s.op(id),
                            s.rank_of(id),
                            req,
                            s.irequirers(id).collect::<Vec<_>>(),
                        )
                    };
                    assert_eq!(deps(&read), deps(&generated), "{} P={p} op {id}", c.name);
                }
                compared += 1;
            }
        }
    }
    assert!(compared > 250, "{compared} schedules compared");
}
