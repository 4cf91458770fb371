//! GOAL reader: the examples of the docs, txt2bin's odd corners, our extensions.

use std::path::{Path, PathBuf};

use commodel_engine::goal::{self, GoalErrorKind};
use commodel_engine::{DepKind, Op, OpKind, Schedule, ANY};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/goal")
        .join(name)
}

/// Operations of a rank, in local order.
fn ops(s: &Schedule, rank: u32) -> Vec<Op> {
    s.ops_of(rank).map(|id| s.op(id)).collect()
}

/// Dependency edges of a rank as (dependent label, kind, prerequisite label), in edge order.
fn deps(s: &Schedule, rank: u32) -> Vec<(String, DepKind, String)> {
    let r = s.ops_of(rank);
    s.edges()
        .filter(|(a, _, _)| r.contains(a))
        .map(|(a, b, k)| (s.describe(a), k, s.describe(b)))
        .collect()
}

fn dep(a: &str, kind: DepKind, b: &str) -> (String, DepKind, String) {
    (a.to_string(), kind, b.to_string())
}

fn with(op: Op, cpu: u8, nic: u8) -> Op {
    Op { cpu, nic, ..op }
}

#[test]
fn formats_example_parses() {
    let s = goal::read(&data("formats-example.goal")).unwrap();
    assert_eq!(s.num_ranks(), 2);
    assert_eq!(
        ops(&s, 0),
        vec![Op::calc(500), Op::send(1, 1024, 7), Op::recv(1, 8, 8)]
    );
    assert_eq!(
        ops(&s, 1),
        vec![Op::recv(ANY, 1024, ANY), Op::send(0, 8, 8)]
    );
    assert_eq!(deps(&s, 0), vec![dep("s1", DepKind::Requires, "c1")]);
    assert_eq!(deps(&s, 1), vec![dep("s1", DepKind::Requires, "r1")]);
    let labels: Vec<_> = (0..5).map(|i| s.label(i).unwrap()).collect();
    assert_eq!(labels, ["c1", "s1", "r1", "r1", "s1"]);
}

/// Every GOAL example in docs/formats.md (code blocks starting with `num_ranks`) parses.
#[test]
fn docs_examples_parse() {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/formats.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let mut found = 0;
    for (i, block) in text.split("```").enumerate() {
        let body = block.split_once('\n').map_or("", |(_, b)| b);
        if i % 2 == 1 && body.trim_start().starts_with("num_ranks") {
            goal::parse(body, "formats.md").unwrap_or_else(|e| panic!("{e}\n{body}"));
            found += 1;
        }
    }
    assert!(
        found >= 2,
        "expected the GOAL examples of docs/formats.md, found {found}"
    );
}

/// The schedules shipped in examples/ parse, and what commodel writes of them, txt2bin reads.
#[test]
fn shipped_examples_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/schedules");
    let mut found = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "goal") {
            let s = goal::read(&path).unwrap_or_else(|e| panic!("{e}"));
            let back = goal::parse(&goal::write(&s), "rewritten").unwrap();
            assert_eq!(s.num_ops(), back.num_ops());
            found += 1;
        }
    }
    assert!(found >= 1, "no .goal file in {}", dir.display());
}

/// The extended two-rank LogGOPS example (the golden case checked against LogGOPSim).
#[test]
fn loggops_extended_example() {
    let s = goal::read(&data("loggops-extended.goal")).unwrap();
    assert_eq!(s.num_ops(), 7);
    assert_eq!(
        ops(&s, 0),
        vec![
            Op::send(1, 65536, 7),
            Op::recv(1, 65536, 7),
            Op::calc(10000),
            Op::send(1, 8, 8)
        ]
    );
    assert_eq!(
        ops(&s, 1),
        vec![
            Op::recv(0, 65536, 7),
            Op::send(0, 65536, 7),
            Op::recv(ANY, 8, ANY)
        ]
    );
    assert_eq!(
        deps(&s, 0),
        vec![
            dep("c1", DepKind::Requires, "r1"),
            dep("s2", DepKind::Requires, "c1")
        ]
    );
    // Edge order groups by prerequisite: r1's requirers, then r1's irequirers.
    assert_eq!(
        deps(&s, 1),
        vec![
            dep("r2", DepKind::Requires, "r1"),
            dep("s1", DepKind::IRequires, "r1")
        ]
    );
    assert_eq!(s.dep_count(2), 1);
    assert_eq!(s.requirers(4).collect::<Vec<_>>(), [6]);
    assert_eq!(s.irequirers(4).collect::<Vec<_>>(), [5]);
}

#[test]
fn txt2bin_corners_parse() {
    let s = goal::read(&data("txt2bin-quirks.goal")).unwrap();
    assert_eq!(s.num_ranks(), 3);
    let mut b = Op::recv(2, 32, ANY);
    b.cpu = 1;
    b.nic = 2;
    assert_eq!(
        ops(&s, 0),
        vec![
            Op::send(1, 8, 0),
            Op::send(1, 16, 3),
            b,
            with(Op::calc(7), 2, 0),
            Op::calc(1),
            Op::calc(2)
        ]
    );
    assert_eq!(s.label(0), None);
    assert_eq!(s.label(4), Some("tag"));
    assert_eq!(s.label(5), Some("requires"));
    assert_eq!(
        deps(&s, 0),
        vec![
            dep("a", DepKind::Requires, "b"),
            dep("requires", DepKind::IRequires, "tag")
        ]
    );
    assert_eq!(
        ops(&s, 1),
        vec![
            with(Op::send(2, 1, 0), 3, 0),
            with(Op::recv(0, 4, 5), 0, 1),
            Op::calc(9)
        ]
    );
    assert!(ops(&s, 2).is_empty());
}

#[test]
fn crlf_and_missing_final_newline() {
    let text = std::fs::read_to_string(data("formats-example.goal")).unwrap();
    let lf = goal::parse(&text, "lf").unwrap();
    let crlf = goal::parse(&text.replace('\n', "\r\n"), "crlf").unwrap();
    assert_eq!(goal::write(&lf), goal::write(&crlf));
    let s = goal::read(&data("no-final-newline.goal")).unwrap();
    assert_eq!(ops(&s, 0), vec![Op::calc(1), Op::send(0, 2, 0)]);
    assert_eq!(deps(&s, 0), vec![dep("y", DepKind::Requires, "x")]);
    // A UTF-8 byte order mark (as some Windows editors write) is skipped.
    let bom = goal::parse(&format!("\u{feff}{}", text.replace('\n', "\r\n")), "bom").unwrap();
    assert_eq!(goal::write(&bom), goal::write(&lf));
    let e = goal::parse("\u{feff}rank 0 {\n}\n", "bom").unwrap_err();
    assert_eq!(e.position(), Some((1, 1)));
    // A statement may end the file without a newline.
    let s = goal::parse("num_ranks 1\nrank 0 {\nx: calc 1 }", "t").unwrap_err();
    assert_eq!(
        s.to_string(),
        "t:3:11: \"}\", expected cpu, nic or end of line"
    );
}

#[test]
fn extensions_parse() {
    let s = goal::read(&data("extensions.goal")).unwrap();
    let sizes: Vec<u64> = s.ops_of(0).map(|id| s.size(id)).collect();
    assert_eq!(
        sizes,
        vec![
            65536,
            1 << 20,
            1 << 30,
            2 << 40,
            2000,
            2000,
            1_000_000,
            1_000_000_000,
            3_000_000_000_000,
            1024,
            5 * 1024
        ]
    );
    let tags: Vec<u32> = s.ops_of(0).map(|id| s.tag(id)).collect();
    assert_eq!(tags, (1..=11).collect::<Vec<u32>>());
    assert_eq!(
        deps(&s, 0),
        vec![
            dep("m", DepKind::Requires, "big"),
            dep("g", DepKind::IRequires, "m")
        ]
    );
    assert_eq!(ops(&s, 1), vec![Op::recv(ANY, 1, ANY)]);
}

#[test]
fn sizes_at_the_limit() {
    let one = |size: &str| {
        let text = format!("num_ranks 1\nrank 0 {{\nsend {size} to 0\n}}\n");
        goal::parse(&text, "s").map(|s| s.size(0))
    };
    assert_eq!(one("18446744073709551615b"), Ok(u64::MAX));
    assert_eq!(one("16777215TiB"), Ok(16777215 << 40));
    assert_eq!(one("0b"), Ok(0));
    assert_eq!(one("007b"), Ok(7));
    let e = one("16777216TiB").unwrap_err();
    assert_eq!(e.kind(), GoalErrorKind::Overflow);
    assert_eq!(
        e.to_string(),
        "s:3:6: size 16777216TiB, expected a size of at most 18446744073709551615 bytes"
    );
    let e = one("18446744073709551616b").unwrap_err();
    assert_eq!(
        e.to_string(),
        "s:3:6: size 18446744073709551616, expected a size of at most 18446744073709551615"
    );
    for bad in ["64Kb", "64KiBx", "64k", "1mb", "64", "64 bytes", "64kiB"] {
        assert!(one(bad).is_err(), "{bad} should be rejected");
    }
}

#[test]
fn statements_without_labels_and_tags_any() {
    let s = goal::parse("num_ranks 2\nrank 0 {\nsend 8b to 1 tag -1\n}\nrank 1 {\nrecv 8b from -1 tag 4294967295\n}\n", "t")
        .unwrap();
    assert_eq!(s.op(0), Op::send(1, 8, ANY));
    assert_eq!(s.op(1), Op::recv(ANY, 8, ANY));
    assert_eq!(s.label(0), None);
    assert_eq!(s.op(1).kind, OpKind::Recv);
}

#[test]
fn calc_nic_extension_reads_back() {
    let s = goal::parse(
        "num_ranks 1\nrank 0 {\ncalc 5 cpu 1 nic 2\ncalc 6 nic 3\n}\n",
        "t",
    )
    .unwrap();
    assert_eq!(
        ops(&s, 0),
        vec![with(Op::calc(5), 1, 2), with(Op::calc(6), 0, 3)]
    );
}
