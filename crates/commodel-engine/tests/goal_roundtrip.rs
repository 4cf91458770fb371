//! GOAL writer: output that txt2bin's grammar accepts, and parse(write(s)) == s.

use commodel_engine::goal;
use commodel_engine::{Op, OpKind, OpRef, Schedule, ScheduleBuilder, ANY};
use proptest::prelude::*;

// ------------------------------------------------------------------ a strict txt2bin checker

/// Checks text against the grammar of LogGOPSim's `txt2bin` (docs/formats.md), in its
/// narrowest reading (single spaces, no comments, no indentation, no suffixes). Independent of the parser under test. Returns the first
/// offending line.
fn strict_txt2bin(text: &str) -> Result<(), String> {
    fn int(s: &str) -> bool {
        !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
    }
    fn label(s: &str) -> bool {
        let b = s.as_bytes();
        b.first().is_some_and(u8::is_ascii_alphabetic)
            && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
            && !["send", "recv", "calc", "rank", "num_ranks"].contains(&s)
    }
    /// `[tag T] [cpu C] [nic N]` in this order, each optional.
    fn options(mut t: &[&str], allowed: &[&str]) -> bool {
        let mut allowed = allowed;
        while let [key, value, rest @ ..] = t {
            let Some(k) = allowed.iter().position(|a| a == key) else {
                return false;
            };
            let ok = if *key == "tag" {
                int(value) || *value == "-1"
            } else {
                int(value)
            };
            if !ok {
                return false;
            }
            allowed = &allowed[k + 1..];
            t = rest;
        }
        t.is_empty()
    }
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or("");
    let p: u32 = first
        .strip_prefix("num_ranks ")
        .and_then(|n| n.parse().ok())
        .ok_or(first.to_string())?;
    let mut rank = 0;
    let mut in_block = false;
    for line in lines {
        let t: Vec<&str> = line.split(' ').collect();
        let ok = if !in_block {
            if line.is_empty() && rank == p {
                continue;
            }
            in_block = t.len() == 3 && t[0] == "rank" && t[1] == rank.to_string() && t[2] == "{";
            in_block
        } else if line == "}" {
            in_block = false;
            rank += 1;
            true
        } else {
            match t.as_slice() {
                [a, "requires" | "irequires", b] => label(a) && label(b),
                [l, "send", size, "to", dst, rest @ ..] => {
                    l.strip_suffix(':').is_some_and(label)
                        && size.strip_suffix('b').is_some_and(int)
                        && int(dst)
                        && options(rest, &["tag", "cpu", "nic"])
                }
                [l, "recv", size, "from", src, rest @ ..] => {
                    l.strip_suffix(':').is_some_and(label)
                        && size.strip_suffix('b').is_some_and(int)
                        && (int(src) || *src == "-1")
                        && options(rest, &["tag", "cpu", "nic"])
                }
                [l, "calc", n, rest @ ..] => {
                    l.strip_suffix(':').is_some_and(label) && int(n) && options(rest, &["cpu"])
                }
                _ => false,
            }
        };
        if !ok {
            return Err(line.to_string());
        }
    }
    if rank != p || in_block {
        return Err(format!("{rank} blocks for num_ranks {p}"));
    }
    Ok(())
}

// ------------------------------------------------------------------ structural equality

/// Assert that `b` has the operations and edges of `a`, in the same order, and keeps
/// every label of `a` that the writer can keep (valid and first of its name in the rank).
fn assert_same(a: &Schedule, b: &Schedule) {
    assert_eq!(a.num_ranks(), b.num_ranks());
    assert_eq!(a.num_ops(), b.num_ops());
    for r in 0..a.num_ranks() {
        assert_eq!(a.ops_of(r), b.ops_of(r));
        let mut seen = std::collections::HashSet::new();
        for id in a.ops_of(r) {
            assert_eq!(a.op(id), b.op(id), "operation {id}");
            if let Some(l) = a.label(id) {
                if goal::is_valid_label(l) && seen.insert(l) {
                    assert_eq!(b.label(id), Some(l));
                }
            }
            assert!(b.label(id).is_some_and(goal::is_valid_label));
        }
    }
    let ea: Vec<_> = a.edges().collect();
    let eb: Vec<_> = b.edges().collect();
    assert_eq!(ea, eb);
}

// ------------------------------------------------------------------ random schedules

#[derive(Clone, Debug)]
struct RankSpec {
    ops: Vec<(Op, Option<String>)>,
    /// (x, y, irequires): an edge between operations x % n and y % n, oriented by `order`.
    edges: Vec<(usize, usize, bool)>,
    /// Random keys: an edge always points from the higher key to the lower, so no cycle.
    order: Vec<u32>,
}

fn label_strategy() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        3 => Just(None),
        // Few names, so that labels repeat within a rank and clash with generated ones.
        3 => prop::sample::select(vec!["a", "b", "o0", "o1", "o2", "o1_1", "tag", "requires", "x_9"]).prop_map(|s| Some(s.to_string())),
        2 => "[a-zA-Z][a-zA-Z0-9_]{0,12}".prop_map(Some),
        // Labels the writer cannot use as they are.
        1 => prop::sample::select(vec!["send", "rank", "9x", "a b", "", "é"]).prop_map(|s| Some(s.to_string())),
    ]
}

fn size_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 0u64..100_000, Just(u64::MAX), any::<u64>()]
}

fn tag_strategy() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), 0u32..100, Just(ANY), any::<u32>()]
}

fn op_strategy(p: u32) -> impl Strategy<Value = Op> {
    let peer = 0..p;
    prop_oneof![
        (
            peer.clone(),
            size_strategy(),
            tag_strategy(),
            any::<u8>(),
            any::<u8>()
        )
            .prop_map(|(dst, size, tag, cpu, nic)| Op {
                cpu,
                nic,
                ..Op::send(dst, size, tag)
            }),
        (
            prop_oneof![3 => peer.prop_map(Some), 1 => Just(None)],
            size_strategy(),
            tag_strategy(),
            any::<u8>(),
            any::<u8>()
        )
            .prop_map(|(src, size, tag, cpu, nic)| Op {
                cpu,
                nic,
                ..Op::recv(src.unwrap_or(ANY), size, tag)
            }),
        (size_strategy(), any::<u8>()).prop_map(|(ns, cpu)| Op {
            cpu,
            ..Op::calc(ns)
        }),
    ]
}

fn rank_strategy(p: u32) -> impl Strategy<Value = RankSpec> {
    (
        prop::collection::vec((op_strategy(p), label_strategy()), 0..12),
        prop::collection::vec((any::<usize>(), any::<usize>(), any::<bool>()), 0..16),
        prop::collection::vec(any::<u32>(), 12),
    )
        .prop_map(|(ops, edges, order)| RankSpec { ops, edges, order })
}

fn schedule_strategy() -> impl Strategy<Value = Schedule> {
    (1u32..6)
        .prop_flat_map(|p| prop::collection::vec(rank_strategy(p), p as usize))
        .prop_map(|ranks| {
            let mut b = ScheduleBuilder::new(ranks.len() as u32);
            for (r, spec) in ranks.iter().enumerate() {
                let r = r as u32;
                for (op, label) in &spec.ops {
                    let id = b.push(r, *op);
                    if let Some(l) = label {
                        b.label(id, l);
                    }
                }
                let n = spec.ops.len();
                if n == 0 {
                    continue;
                }
                for &(x, y, irequires) in &spec.edges {
                    let (x, y) = (x % n, y % n);
                    if x == y {
                        continue;
                    }
                    let (a, c) = if (spec.order[x], x) > (spec.order[y], y) {
                        (x, y)
                    } else {
                        (y, x)
                    };
                    let (a, c) = (
                        OpRef {
                            rank: r,
                            index: a as u32,
                        },
                        OpRef {
                            rank: r,
                            index: c as u32,
                        },
                    );
                    if irequires {
                        b.irequires(a, c)
                    } else {
                        b.requires(a, c)
                    }
                }
            }
            b.build().expect("random schedules are acyclic")
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn write_then_parse_gives_the_same_schedule(s in schedule_strategy()) {
        let text = goal::write(&s);
        let back = goal::parse(&text, "written.goal").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        assert_same(&s, &back);
        // Writing is deterministic and stable: the text read back writes the same text.
        prop_assert_eq!(goal::write(&back), text.clone());
        // What we write, txt2bin reads (no calc here carries a nic): plain `<n>b` sizes,
        // single spaces, no comments, no indentation.
        if let Err(line) = strict_txt2bin(&text) {
            return Err(TestCaseError::fail(format!("not txt2bin's grammar: {line:?}\n{text}")));
        }
        prop_assert!(!text.contains("//") && !text.contains("/*"));
        prop_assert!(text.lines().all(|l| !l.starts_with([' ', '\t'])));
        // The streaming writer gives the same bytes.
        let mut streamed = Vec::new();
        goal::write_to(&s, &mut streamed).unwrap();
        prop_assert_eq!(streamed, text.into_bytes());
    }
}

// ------------------------------------------------------------------ fixed cases

#[test]
fn writes_the_formats_example_as_txt2bin_reads_it() {
    let text = "num_ranks 2\nrank 0 {\nc1: calc 500\ns1: send 1024b to 1 tag 7\nr1: recv 8b from 1 tag 8\ns1 requires c1\n}\n\
                rank 1 {\nr1: recv 1024b from -1 tag -1\ns1: send 8b to 0 tag 8\ns1 requires r1\n}\n";
    let s = goal::parse(text, "f").unwrap();
    assert_eq!(goal::write(&s), text);
}

#[test]
fn writer_normalises_extensions() {
    let s = goal::parse(
        "num_ranks 2 // c\nrank 0 {\n   big: send 64KiB to 1 tag 1 // x\n  send 1 kB to 1 cpu 2 nic 3\n\tcalc 7 cpu 1\n}\nrank 1 {\n}\n",
        "f",
    )
    .unwrap();
    assert_eq!(
        goal::write(&s),
        "num_ranks 2\nrank 0 {\nbig: send 65536b to 1 tag 1\no1: send 1000b to 1 cpu 2 nic 3\no2: calc 7 cpu 1\n}\nrank 1 {\n}\n"
    );
}

#[test]
fn generated_labels_do_not_clash() {
    let mut b = ScheduleBuilder::new(1);
    let x = b.calc(0, 1); // unlabeled: would be o0, but o0 is taken
    let y = b.calc(0, 2);
    b.label(y, "o0");
    let z = b.calc(0, 3); // takes o0_1 too, so x becomes o0_2
    b.label(z, "o0_1");
    let w = b.calc(0, 4); // a second "o0": the first op keeps the name, this one gets o3
    b.label(w, "o0");
    let v = b.calc(0, 5);
    b.label(v, "send"); // a keyword cannot be a label
    b.requires(y, x);
    b.irequires(w, x);
    b.requires(v, z);
    let s = b.build().unwrap();
    let text = goal::write(&s);
    assert_eq!(
        text,
        "num_ranks 1\nrank 0 {\no0_2: calc 1\no0: calc 2\no0_1: calc 3\no3: calc 4\no4: calc 5\n\
         o0 requires o0_2\no3 irequires o0_2\no4 requires o0_1\n}\n"
    );
    assert_same(&s, &goal::parse(&text, "f").unwrap());
}

#[test]
fn dependency_order_is_the_schedules_edge_order() {
    // Edges added out of prerequisite order come out grouped by prerequisite:
    // requires before irequires, each in the order added.
    let text = "num_ranks 1\nrank 0 {\na: calc 1\nb: calc 2\nc: calc 3\nd: calc 4\n\
                d irequires b\nc requires b\nd requires a\nc irequires a\nb requires a\n}\n";
    let s = goal::parse(text, "f").unwrap();
    let out = goal::write(&s);
    assert!(
        out.ends_with(
            "d requires a\nb requires a\nc irequires a\nc requires b\nd irequires b\n}\n"
        ),
        "{out}"
    );
    let back = goal::parse(&out, "f").unwrap();
    assert_same(&s, &back);
}

#[test]
fn any_source_and_tag_and_limits_are_written() {
    let mut b = ScheduleBuilder::new(2);
    b.push(
        0,
        Op {
            cpu: 255,
            nic: 255,
            ..Op::send(1, u64::MAX, ANY)
        },
    );
    b.push(1, Op::recv(ANY, 0, u32::MAX - 1));
    b.push(
        1,
        Op {
            nic: 9,
            ..Op::calc(u64::MAX)
        },
    );
    let s = b.build().unwrap();
    let text = goal::write(&s);
    assert_eq!(
        text,
        "num_ranks 2\nrank 0 {\no0: send 18446744073709551615b to 1 tag -1 cpu 255 nic 255\n}\n\
         rank 1 {\no0: recv 0b from -1 tag 4294967294\no1: calc 18446744073709551615 nic 9\n}\n"
    );
    assert_same(&s, &goal::parse(&text, "f").unwrap());
    assert_eq!(s.op(2).kind, OpKind::Calc);
}

#[test]
fn strict_checker_rejects_what_txt2bin_rejects() {
    // The checker used above must be able to fail.
    for bad in [
        "num_ranks 1\nrank 0 {\n  a: calc 1\n}\n",
        "num_ranks 1\nrank 0 {\na: calc 1 // c\n}\n",
        "num_ranks 1\nrank 0 {\na: send 1KiB to 0\n}\n",
        "num_ranks 1\nrank 0 {\na: send 1b to 0 cpu 1 tag 2\n}\n",
        "num_ranks 1\nrank 0 {\na: calc 1 nic 1\n}\n",
        "num_ranks 2\nrank 0 {\n}\n",
        "num_ranks 1\nrank 0 {\nsend: calc 1\n}\n",
    ] {
        assert!(strict_txt2bin(bad).is_err(), "{bad}");
    }
    assert!(strict_txt2bin(
        "num_ranks 1\nrank 0 {\na: send 1b to 0 tag -1 nic 1\na requires a\n}\n"
    )
    .is_ok());
}
