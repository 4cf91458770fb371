//! The GOAL reader on several threads: cut into parts at rank blocks, it gives the
//! schedule, or the error (kind, file:line:column, wording), of reading on one thread.

mod collectives_support;
use collectives_support::*;
use commodel_engine::goal::{self, GoalError, GoalErrorKind};
use commodel_engine::loggops::{self, LogGops};
use commodel_engine::schedule::Schedule;

/// Part counts the tests cut texts into.
const PARTS: [usize; 4] = [2, 3, 4, 7];

fn outcome(r: Result<Schedule, GoalError>) -> Result<String, GoalError> {
    r.map(|s| goal::write(&s))
}

/// Read `text` in every part count of [`PARTS`], through large and small windows: the
/// same schedule or error as on one thread. Returns the most parts joined for any count.
fn same_in_parts(text: &[u8]) -> usize {
    let whole = outcome(goal::parse_bytes(text, "s.goal"));
    let mut most = 0;
    for parts in PARTS {
        // Large windows and whole parts, small windows and segments of a few operations.
        for (chunk, segment) in [(1 << 20, 1 << 17), (16, 3)] {
            let got = goal::parse_bytes_in_parts(text, "s.goal", parts, chunk, segment);
            if let Ok((_, joined)) = &got {
                most = most.max(*joined);
            }
            assert_eq!(
                outcome(got.map(|(s, _)| s)),
                whole,
                "{parts} parts, chunk {chunk}, segments of {segment}, for:\n{}",
                String::from_utf8_lossy(text)
            );
        }
    }
    most
}

/// A text of `p` ranks, each with a few labelled operations and dependencies.
fn ring(p: u32) -> String {
    let mut t = format!("num_ranks {p}\n");
    for r in 0..p {
        t.push_str(&format!(
            "rank {r} {{\nc: calc 10\ns: send 8b to {} tag 1\nr: recv 8b from {} tag 1\ns requires c\nr irequires s\n}}\n",
            (r + 1) % p,
            (r + p - 1) % p
        ));
    }
    t
}

#[test]
fn every_collective_reads_the_same_in_parts_and_simulates_bit_for_bit() {
    let params = LogGops::loggopsim_defaults();
    for name in names() {
        for p in rank_counts(name, &[3, 8, 17]) {
            let s = gen(name, p, 100_000);
            let text = goal::write(&s);
            let joined = same_in_parts(text.as_bytes());
            assert!(joined >= 2, "{name} P={p}: the text was never cut");
            let seq = goal::parse(&text, "s.goal").unwrap();
            for parts in [2, 3, 7] {
                let (par, _) =
                    goal::parse_bytes_in_parts(text.as_bytes(), "s.goal", parts, 1 << 20, 5)
                        .unwrap();
                let a = loggops::simulate(&seq, &params, true).unwrap();
                let b = loggops::simulate(&par, &params, true).unwrap();
                assert_eq!(
                    (a.finish, a.makespan, a.events),
                    (b.finish, b.makespan, b.events)
                );
                assert_eq!(par.num_ops(), seq.num_ops());
                assert_eq!(
                    par.edges().collect::<Vec<_>>(),
                    seq.edges().collect::<Vec<_>>(),
                    "{name} P={p}"
                );
            }
        }
    }
}

#[test]
fn comments_blank_lines_spacing_and_shared_lines_read_the_same() {
    let base = ring(9);
    // Indented statements, comments after them and between blocks, blank lines.
    let decorated = base
        .replace("\nc:", "\n   c:")
        .replace("tag 1\n", "tag 1   // reply\n")
        .replace(
            "}\n",
            "}\n\n// between blocks\n/* a comment\n   over lines */\n",
        );
    assert!(same_in_parts(decorated.as_bytes()) >= 2);
    // CRLF line ends and a byte order mark.
    let crlf = format!("\u{feff}{}", base.replace('\n', "\r\n"));
    assert!(same_in_parts(crlf.as_bytes()) >= 2);
    // A block that begins on the line where the previous one ends is not a boundary.
    let shared = base.replace("}\nrank 4 {", "} rank 4 {");
    assert!(same_in_parts(shared.as_bytes()) >= 2);
    // Every block on one line: nothing to cut at.
    let one_line = base
        .replace('\n', " ")
        .replace("num_ranks 9 ", "num_ranks 9\n");
    assert_eq!(same_in_parts(one_line.as_bytes()), 0);
    // Lines that look like block starts inside comments.
    let fake = base.replace(
        "}\nrank 5 {",
        "}\n/*\nrank 6 {\nrank 7 {\nrank 8 {\n*/\nrank 5 {",
    );
    same_in_parts(fake.as_bytes());
    // Many sizes, tags, cpu and nic only in later ranks (columns created late).
    let mut varied = String::from("num_ranks 12\n");
    for r in 0..12 {
        varied.push_str(&format!("rank {r} {{\n"));
        for k in 0..5 {
            let extra = if r >= 8 { " cpu 2 nic 1" } else { "" };
            varied.push_str(&format!(
                "x{k}: send {}b to {} tag {}{extra}\n",
                100 + r * 7 + k,
                (r + 1) % 12,
                70000 * (r / 10)
            ));
        }
        varied.push_str("x4 requires x0\nx3 irequires x1\n}\n");
    }
    assert!(same_in_parts(varied.as_bytes()) >= 2);
}

/// Every truncation and every one-byte deletion: errors at every place, in every part.
#[test]
fn errors_are_those_of_one_thread_wherever_they_are() {
    let t = ring(6);
    let t = t.as_bytes();
    for i in 0..=t.len() {
        same_in_parts(&t[..i]);
        if i < t.len() {
            let mut d = t.to_vec();
            d.remove(i);
            same_in_parts(&d);
        }
    }
}

fn error_in_parts(text: &str) -> GoalError {
    let whole = goal::parse(text, "s.goal").unwrap_err();
    for parts in PARTS {
        let got = goal::parse_bytes_in_parts(text.as_bytes(), "s.goal", parts, 1 << 20, 5)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(got, whole, "{parts} parts");
    }
    whole
}

#[test]
fn of_two_errors_in_two_parts_the_first_in_the_file_is_reported() {
    let t = ring(8)
        .replace("send 8b to 3 tag 1", "send 8b to 30 tag 1")
        .replace("recv 8b from 6 tag 1", "recv 8b from 6 tga 1");
    let e = error_in_parts(&t);
    assert_eq!(
        e.to_string(),
        "s.goal:18:15: send to rank 30 out of range, expected a destination rank from 0 to 7 (num_ranks 8)"
    );
    // The second error alone, late in the file: lines counted over the parts before it.
    let t = ring(8).replace("recv 8b from 6 tag 1", "recv 8b from 6 tga 1");
    let e = error_in_parts(&t);
    assert_eq!(e.kind(), GoalErrorKind::UnknownKeyword);
    assert_eq!(e.position(), Some((54, 19)));
}

#[test]
fn errors_across_parts_are_found() {
    let t = ring(8);
    // A rank block twice.
    let dup = t.replace("rank 5 {", "rank 4 {");
    let e = error_in_parts(&dup);
    assert_eq!(e.kind(), GoalErrorKind::RankBlock);
    assert_eq!(
        e.to_string(),
        "s.goal:37:6: rank block 4, expected rank block 5 (num_ranks 8 needs blocks 0 to 7, in order)"
    );
    // A block beyond num_ranks.
    let extra = format!("{t}rank 8 {{\n}}\n");
    assert_eq!(error_in_parts(&extra).kind(), GoalErrorKind::RankBlock);
    // A missing block, and blocks out of order.
    let start = t.find("rank 5 {").unwrap();
    let end = t.find("rank 6 {").unwrap();
    let missing = format!("{}{}", &t[..start], &t[end..]);
    assert_eq!(error_in_parts(&missing).kind(), GoalErrorKind::RankBlock);
    let swapped = t
        .replace("rank 5 {", "rank X {")
        .replace("rank 6 {", "rank 5 {")
        .replace("rank X {", "rank 6 {");
    assert_eq!(error_in_parts(&swapped).kind(), GoalErrorKind::RankBlock);
    // The file ends early, a block is left open at a part boundary.
    let open = t.replace("r irequires s\n}\nrank 4 {", "r irequires s\nrank 4 {");
    let e = error_in_parts(&open);
    assert_eq!(e.kind(), GoalErrorKind::Syntax);
    // An undefined label, a duplicate label, a cycle, in the last rank.
    let last =
        "c: calc 10\ns: send 8b to 0 tag 1\nr: recv 8b from 6 tag 1\ns requires c\nr irequires s\n";
    assert!(t.ends_with(&format!("{last}}}\n")));
    for (from, to, kind) in [
        (
            "r irequires s",
            "r irequires d",
            GoalErrorKind::UndefinedLabel,
        ),
        ("r: recv", "c: recv", GoalErrorKind::DuplicateLabel),
        ("r irequires s", "c requires s", GoalErrorKind::Cycle),
    ] {
        let bad = t.replace(last, &last.replace(from, to));
        assert_eq!(error_in_parts(&bad).kind(), kind, "{to}");
    }
    // A comment left open from one part to the end of the file.
    let unclosed = t.replace("}\nrank 3 {", "}\n/*\nrank 3 {");
    assert_eq!(error_in_parts(&unclosed).kind(), GoalErrorKind::Syntax);
}

#[test]
fn a_file_reads_the_same_in_parts() {
    let s = gen("alltoall-pairwise", 16, 4096);
    let text = goal::write(&s);
    let path = std::env::temp_dir().join(format!("commodel-parts-{}.goal", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    let whole = goal::write(&goal::read(&path).unwrap());
    for parts in [1, 2, 3, 7] {
        let got = goal::read_in_parts(&path, parts).unwrap();
        assert_eq!(goal::write(&got), whole, "{parts} parts");
    }
    // An error far into the file, with its line.
    let bad = text.replace("rank 13 {", "rank 13 {\nsned 8b to 1");
    std::fs::write(&path, &bad).unwrap();
    let seq = goal::parse(&bad, &path.display().to_string()).unwrap_err();
    for parts in [2, 3, 7] {
        assert_eq!(goal::read_in_parts(&path, parts).unwrap_err(), seq);
    }
    std::fs::remove_file(&path).unwrap();
    assert_eq!(seq.kind(), GoalErrorKind::UnknownKeyword);
}
