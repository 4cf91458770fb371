//! GOAL reader errors: each kind, with its exact `file:line:column` and wording.

use commodel_engine::goal::{self, GoalError, GoalErrorKind};

fn err(text: &str) -> GoalError {
    match goal::parse(text, "e.goal") {
        Ok(s) => panic!(
            "expected an error, parsed {} operations from:\n{text}",
            s.num_ops()
        ),
        Err(e) => e,
    }
}

/// Assert the kind and the full message of the error `text` gives.
#[track_caller]
fn check(text: &str, kind: GoalErrorKind, message: &str) {
    let e = err(text);
    assert_eq!(e.to_string(), message, "for:\n{text}");
    assert_eq!(e.kind(), kind, "for:\n{text}");
}

/// A one-rank file with `body` as the statements of rank 0 (they start on line 3).
fn one(body: &str) -> String {
    format!("num_ranks 1\nrank 0 {{\n{body}\n}}\n")
}

#[test]
fn unknown_keywords() {
    use GoalErrorKind::UnknownKeyword as K;
    check(
        &one("sned 8b to 0"),
        K,
        "e.goal:3:1: unknown keyword \"sned\", expected send, recv, calc, \"label: ...\" or \"label requires label\"",
    );
    check(
        &one("a: sned 8b to 0"),
        K,
        "e.goal:3:4: unknown keyword \"sned\", expected send, recv or calc",
    );
    check(
        &one("a: send 8b to 0 tga 3"),
        K,
        "e.goal:3:17: unknown keyword \"tga\", expected tag, cpu, nic or end of line",
    );
    check(&one("a: calc 1\nb: calc 2\na requries b"), K, "e.goal:5:3: unknown keyword \"requries\", expected \":\" after a label, or requires or irequires");
    check(
        &one("a: send 8b too 0"),
        K,
        "e.goal:3:12: unknown keyword \"too\", expected to",
    );
    check(&one("a: send 8 kb to 0"), K, "e.goal:3:11: unknown keyword \"kb\", expected a unit: b (bytes), KiB, MiB, GiB, TiB, kB, KB, MB, GB or TB");
    check(
        "nmu_ranks 1\n",
        GoalErrorKind::NumRanks,
        "e.goal:1:1: \"nmu_ranks\", expected \"num_ranks P\" (the first line of a GOAL file)",
    );
    check(
        "num_ranks 1\nrnak 0 {\n}\n",
        K,
        "e.goal:2:1: unknown keyword \"rnak\", expected \"rank 0 {\"",
    );
}

#[test]
fn misplaced_keywords_and_characters() {
    use GoalErrorKind::Syntax as S;
    // A known keyword in the wrong place is a syntax error, not an unknown keyword.
    check(
        &one("a: send 8b from 0"),
        S,
        "e.goal:3:12: \"from\", expected to",
    );
    check(
        &one("a: send 8b to 0 cpu 1 tag 2"),
        S,
        "e.goal:3:23: \"tag\", expected nic or end of line",
    );
    check(
        &one("a: calc 5 tag 2"),
        S,
        "e.goal:3:11: \"tag\", expected cpu, nic or end of line",
    );
    check(
        &one("a: calc 5 nic 1 nic 2"),
        S,
        "e.goal:3:17: \"nic\", expected end of line",
    );
    check(
        &one("a: send to 0"),
        S,
        "e.goal:3:9: \"to\", expected a size in bytes (a number followed by b)",
    );
    check(
        &one("a: recv 8b from 0 tag x"),
        GoalErrorKind::UnknownKeyword,
        "e.goal:3:23: unknown keyword \"x\", expected a tag or -1 (any tag)",
    );
    check(
        &one("a: calc 1\n2 requires a"),
        S,
        "e.goal:4:1: \"2\", expected a statement or \"}\" closing rank block 0",
    );
    check(
        &one("a: calc 1 }"),
        S,
        "e.goal:3:11: \"}\", expected cpu, nic or end of line",
    );
    check(
        &one("a: calc 1\rb: calc 2"),
        S,
        "e.goal:3:10: \"\\r\", expected cpu, nic or end of line",
    );
    check(
        &one("a: calc 1\na requires"),
        S,
        "e.goal:4:11: end of line, expected a label",
    );
    check(
        &one("a: calc 1\na requires a a"),
        S,
        "e.goal:4:14: \"a\", expected end of line",
    );
    check(&one("rank 1 {"), S, "e.goal:3:1: \"rank\" inside rank block 0, expected a statement or \"}\" closing rank block 0");
    check(
        "num_ranks 1\nrank 0 {\n}\n}\n",
        S,
        "e.goal:4:1: \"}\", expected end of file",
    );
    check(
        "num_ranks 1\nrank 0 {\n}\nx\n",
        GoalErrorKind::UnknownKeyword,
        "e.goal:4:1: unknown keyword \"x\", expected end of file",
    );
    check(
        "num_ranks 1\nrank 0\n{\n}\n",
        S,
        "e.goal:2:7: end of line, expected \"{\"",
    );
    check(
        &one("a: calc -1"),
        S,
        "e.goal:3:9: \"-1\", expected a duration in ns",
    );
    // Positions count characters, not bytes; bytes that are not UTF-8 are named.
    check(
        &one("/* é ü */ a: calc x"),
        GoalErrorKind::UnknownKeyword,
        "e.goal:3:19: unknown keyword \"x\", expected a duration in ns",
    );
    let e = goal::parse_bytes(b"num_ranks 1\nrank 0 {\n\xff\n}\n", "e.goal").unwrap_err();
    assert_eq!(
        e.to_string(),
        "e.goal:3:1: byte 0xFF, expected a statement or \"}\" closing rank block 0"
    );
    // Bytes that are not UTF-8 are fine inside comments.
    assert!(goal::parse_bytes(
        b"num_ranks 1 // \xff\xfe\nrank 0 { /* \xc3 */\n}\n",
        "e.goal"
    )
    .is_ok());
}

#[test]
fn end_of_file_inside_a_block_or_comment() {
    use GoalErrorKind::Syntax as S;
    check(
        "num_ranks 2\nrank 0 {\n}\nrank 1 {\na: calc 1\n",
        S,
        "e.goal:6:1: end of file, expected \"}\" to close rank block 1 (opened on line 4)",
    );
    check(
        "num_ranks 1\nrank 0 {\na: calc 1",
        S,
        "e.goal:3:10: end of file, expected \"}\" to close rank block 0 (opened on line 2)",
    );
    check(
        "num_ranks 1\n/* no end\n\nrank 0 {\n}\n",
        S,
        "e.goal:6:1: end of file, expected \"*/\" to close the comment opened on line 2",
    );
    check(
        "num_ranks 1\nrank 0 {\n} /*/",
        S,
        "e.goal:3:6: end of file, expected \"*/\" to close the comment opened on line 3",
    );
}

#[test]
fn undefined_labels() {
    use GoalErrorKind::UndefinedLabel as U;
    check(
        &one("a: calc 1\na requires b"),
        U,
        "e.goal:4:12: undefined label \"b\" in rank 0, expected a label defined earlier in rank 0",
    );
    check(
        &one("a: calc 1\nb requires a"),
        U,
        "e.goal:4:1: undefined label \"b\" in rank 0, expected a label defined earlier in rank 0",
    );
    // Defined later is not defined.
    check(
        &one("a: calc 1\na irequires b\nb: calc 2"),
        U,
        "e.goal:4:13: undefined label \"b\" in rank 0, expected a label defined earlier in rank 0",
    );
    // Labels are local to a rank.
    check(
        "num_ranks 2\nrank 0 {\na: calc 1\n}\nrank 1 {\nb: calc 1\nb requires a\n}\n",
        U,
        "e.goal:7:12: undefined label \"a\" in rank 1, expected a label defined earlier in rank 1",
    );
    // A keyword can never be defined as a label.
    check(&one("a: calc 1\na requires send"), U, "e.goal:4:12: undefined label \"send\" in rank 0, expected a label defined earlier in rank 0");
}

#[test]
fn duplicate_labels() {
    check(
        &one("a: calc 1\nb: calc 2\n  a: send 1b to 0"),
        GoalErrorKind::DuplicateLabel,
        "e.goal:5:3: duplicate label \"a\" in rank 0 (first defined on line 3), expected a label not yet used in rank 0",
    );
    // The same label in two ranks is fine.
    assert!(goal::parse(
        "num_ranks 2\nrank 0 {\na: calc 1\n}\nrank 1 {\na: calc 1\n}\n",
        "e.goal"
    )
    .is_ok());
}

/// Labels of the form `commodel schedule -o` writes (`o<k>` on operation k) are found
/// without the label table; one of that form on another operation is an ordinary label.
/// A repeated label is an error whichever of the two it is, first or second.
#[test]
fn canonical_and_other_labels_are_one_namespace() {
    use GoalErrorKind::{DuplicateLabel as D, UndefinedLabel as U};
    let dup = |label: &str, line: u32, col: u32, first: u32| {
        format!("e.goal:{line}:{col}: duplicate label \"{label}\" in rank 0 (first defined on line {first}), expected a label not yet used in rank 0")
    };
    // o1 on operation 0 (an ordinary label), then on operation 1 (its canonical place).
    check(&one("o1: calc 1\no1: calc 2"), D, &dup("o1", 4, 1, 3));
    // o0 canonical, then o0 on operation 1.
    check(&one("o0: calc 1\no0: calc 2"), D, &dup("o0", 4, 1, 3));
    // o0 canonical, then on operation 2 after an unlabelled one.
    check(
        &one("o0: calc 1\ncalc 2\n o0: calc 3"),
        D,
        &dup("o0", 5, 2, 3),
    );
    // Leading zeros and signs are other labels: o01 is not o1.
    check(&one("o0: calc 1\no1: calc 1\no1 requires o01"), U,
        "e.goal:5:13: undefined label \"o01\" in rank 0, expected a label defined earlier in rank 0");
    check(
        &one("o0: calc 1\no1 requires o0"),
        U,
        "e.goal:4:1: undefined label \"o1\" in rank 0, expected a label defined earlier in rank 0",
    );
    // Both kinds resolve: o1 on operation 2 (ordinary), o0 and o3 canonical, o01 on
    // operation 4 (ordinary): operation 2 requires 0, and 3 requires 2.
    let s = goal::parse(
        "num_ranks 1\nrank 0 {\no0: calc 1\ncalc 8\no1: calc 2\no3: calc 4\no1 requires o0\no3 requires o1\no01: calc 0\n}\n",
        "e.goal",
    )
    .expect("valid");
    assert_eq!(
        (s.label(0), s.label(1), s.label(2), s.label(3), s.label(4)),
        (Some("o0"), None, Some("o1"), Some("o3"), Some("o01"))
    );
    let requirers: Vec<Vec<u32>> = (0..5).map(|op| s.requirers(op).collect()).collect();
    assert_eq!(requirers, vec![vec![2], vec![], vec![3], vec![], vec![]]);
}

#[test]
fn ranks_out_of_range() {
    use GoalErrorKind::RankOutOfRange as R;
    let two = |body: &str| format!("num_ranks 2\nrank 0 {{\n{body}\n}}\nrank 1 {{\n}}\n");
    check(&two("s: send 8b to 2"), R, "e.goal:3:15: send to rank 2 out of range, expected a destination rank from 0 to 1 (num_ranks 2)");
    check(
        &two("recv 8b from 7 tag 1"),
        R,
        "e.goal:3:14: recv from rank 7 out of range, expected a source rank from 0 to 1 (num_ranks 2) or -1 (any source)",
    );
    check(
        &two("s: send 8b to -1"),
        R,
        "e.goal:3:15: send to -1, expected a destination rank from 0 to 1 (num_ranks 2)",
    );
    // 4294967295 is a number here, not -1.
    check(&two("recv 8b from 4294967295"), R, "e.goal:3:14: recv from rank 4294967295 out of range, expected a source rank from 0 to 1 (num_ranks 2) or -1 (any source)");
    check(
        &two("recv 8b from -12"),
        GoalErrorKind::Syntax,
        "e.goal:3:14: \"-12\", expected a source rank from 0 to 1 (num_ranks 2) or -1 (any source)",
    );
    check(
        &two("s: send 8b to x"),
        GoalErrorKind::UnknownKeyword,
        "e.goal:3:15: unknown keyword \"x\", expected a destination rank from 0 to 1 (num_ranks 2)",
    );
}

#[test]
fn rank_blocks_out_of_order_missing_or_extra() {
    use GoalErrorKind::RankBlock as B;
    check(
        "num_ranks 3\nrank 0 {\n}\nrank 2 {\n}\nrank 1 {\n}\n",
        B,
        "e.goal:4:6: rank block 2, expected rank block 1 (num_ranks 3 needs blocks 0 to 2, in order)",
    );
    check("num_ranks 2\nrank 1 {\n}\n", B, "e.goal:2:6: rank block 1, expected rank block 0 (num_ranks 2 needs blocks 0 to 1, in order)");
    check("num_ranks 2\nrank 0 {\n}\nrank 0 {\n}\n", B, "e.goal:4:6: rank block 0, expected rank block 1 (num_ranks 2 needs blocks 0 to 1, in order)");
    check(
        "num_ranks 3\nrank 0 {\n}\nrank 1 {\n}\n// the end\n",
        B,
        "e.goal:7:1: end of file after 2 rank blocks, expected rank block 2 (num_ranks 3 needs blocks 0 to 2, in order)",
    );
    check("num_ranks 2\n", B, "e.goal:2:1: end of file after 0 rank blocks, expected rank block 0 (num_ranks 2 needs blocks 0 to 1, in order)");
    check(
        "num_ranks 1\nrank 0 {\n}\nrank 1 {\n}\n",
        B,
        "e.goal:4:1: rank block 1, expected end of file (num_ranks 1 needs exactly one block, rank 0)",
    );
}

#[test]
fn num_ranks_missing_or_zero() {
    use GoalErrorKind::NumRanks as N;
    check(
        "rank 0 {\n}\n",
        N,
        "e.goal:1:1: \"rank\", expected \"num_ranks P\" (the first line of a GOAL file)",
    );
    check(
        "",
        N,
        "e.goal:1:1: end of file, expected \"num_ranks P\" (the first line of a GOAL file)",
    );
    check(
        "// only a comment\n",
        N,
        "e.goal:2:1: end of file, expected \"num_ranks P\" (the first line of a GOAL file)",
    );
    check(
        "num_ranks 0\n",
        N,
        "e.goal:1:11: num_ranks 0, expected at least 1 rank",
    );
    check(
        "num_ranks 100\nrank 0 {\n}\n",
        N,
        "e.goal:1:11: num_ranks 100, expected at most 4 for a file of 25 bytes (every rank needs a \"rank N { }\" block)",
    );
    check(
        "num_ranks x\n",
        GoalErrorKind::UnknownKeyword,
        "e.goal:1:11: unknown keyword \"x\", expected the number of ranks",
    );
    check(
        "num_ranks 1\nrank 0 {\n}\nnum_ranks 1\n",
        GoalErrorKind::Syntax,
        "e.goal:4:1: \"num_ranks\", expected end of file",
    );
}

#[test]
fn numbers_that_overflow() {
    use GoalErrorKind::Overflow as O;
    check(
        &one("send 8b to 0 tag 4294967296"),
        O,
        "e.goal:3:18: tag 4294967296, expected a tag of at most 4294967295",
    );
    check(
        &one("send 8b to 0 cpu 256"),
        O,
        "e.goal:3:18: cpu 256, expected a cpu of at most 255",
    );
    check(
        &one("send 8b to 0 nic 1000"),
        O,
        "e.goal:3:18: nic 1000, expected a nic of at most 255",
    );
    check(
        &one("recv 8b from 4294967296"),
        O,
        "e.goal:3:14: source 4294967296, expected a source of at most 4294967295",
    );
    check(&one("send 8b to 99999999999999999999999"), O, "e.goal:3:12: destination 99999999999999999999999, expected a destination of at most 4294967295");
    check(
        &one("calc 18446744073709551616"),
        O,
        "e.goal:3:6: calc duration 18446744073709551616, expected a calc duration of at most 18446744073709551615",
    );
    check(
        &one("send 18446744073709551616b to 0"),
        O,
        "e.goal:3:6: size 18446744073709551616, expected a size of at most 18446744073709551615",
    );
    check(
        &one("send 17179869184GiB to 0"),
        O,
        "e.goal:3:6: size 17179869184GiB, expected a size of at most 18446744073709551615 bytes",
    );
    check(
        "num_ranks 4294967295\n",
        O,
        "e.goal:1:11: num_ranks 4294967295, expected a num_ranks of at most 4294967294",
    );
    check(
        "num_ranks 1\nrank 99999999999999999999 {\n}\n",
        O,
        "e.goal:2:6: rank 99999999999999999999, expected a rank of at most 18446744073709551615",
    );
    // The largest values that fit are fine.
    let s = goal::parse(
        &one("send 18446744073709551615b to 0 tag 4294967294 cpu 255 nic 255"),
        "e.goal",
    )
    .unwrap();
    assert_eq!(
        (s.size(0), s.tag(0), s.cpu(0), s.nic(0)),
        (u64::MAX, u32::MAX - 1, 255, 255)
    );
}

#[test]
fn dependency_cycles() {
    use GoalErrorKind::Cycle as C;
    check(
        &one("a: calc 1\nb: calc 2\nc: calc 3\na requires b\nb irequires c\nc requires a"),
        C,
        "e.goal:8:1: dependency cycle in rank 0: c requires a, a requires b, b irequires c, expected dependencies without a cycle",
    );
    check(&one("a: calc 1\na requires a"), C, "e.goal:4:1: dependency cycle in rank 0: a requires a, expected dependencies without a cycle");
    // The cycle is found in the rank it is in, among operations outside it.
    check(
        "num_ranks 2\nrank 0 {\na: calc 1\n}\nrank 1 {\nx: calc 1\ny: calc 2\nz: calc 3\nz requires x\nx requires y\ny irequires x\n}\n",
        C,
        "e.goal:11:1: dependency cycle in rank 1: y irequires x, x requires y, expected dependencies without a cycle",
    );
    // A diamond is not a cycle.
    assert!(goal::parse(&one("a: calc 1\nb: calc 1\nc: calc 1\nd: calc 1\nb requires a\nc requires a\nd requires b\nd requires c"), "e.goal").is_ok());
}

#[test]
fn io_errors_name_the_file() {
    let e = goal::read(std::path::Path::new("/nonexistent/x.goal")).unwrap_err();
    assert_eq!(e.kind(), GoalErrorKind::Io);
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.goal: cannot read the file: "),
        "{e}"
    );
    assert_eq!(e.position(), None);
    assert_eq!(err(&one("x")).position(), Some((3, 1)));
}
