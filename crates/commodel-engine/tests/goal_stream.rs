//! The streaming GOAL reader: parsing through a window of any size gives the schedule,
//! or the error (kind, file:line:column, wording), of parsing the whole text at once.

use commodel_engine::goal::{self, GoalError};
use commodel_engine::schedule::Schedule;
use proptest::prelude::*;

/// Texts that exercise every part of the grammar: the test data and a few
/// hand-written ones with comments across window edges, a byte order mark, CRLF.
fn texts() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/goal");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    out.push(b"\xEF\xBB\xBFnum_ranks 2\r\nrank 0 {\r\na: send 8b to 1 tag 3 // x\r\nb: calc 5\r\nb requires a\r\n}\r\nrank 1 { /* multi\nline } */\nrecv 8b from -1 tag -1\n}\n// trailing\n".to_vec());
    out.push(b"num_ranks 1\nrank 0 {\nlabel_with_a_long_name_that_spans_windows: calc 123456789\nx: send 1KiB to 0\ny: recv 1KiB from 0\nx irequires label_with_a_long_name_that_spans_windows\ny requires x\n}\n".to_vec());
    out
}

/// What a parse gave, comparable: the schedule written back as GOAL, or the error.
fn outcome(r: Result<Schedule, GoalError>) -> Result<String, GoalError> {
    r.map(|s| goal::write(&s))
}

fn same_in_chunks(text: &[u8], chunks: &[usize]) {
    let whole = outcome(goal::parse_bytes(text, "s.goal"));
    for &chunk in chunks {
        let streamed = outcome(goal::parse_bytes_in_chunks(text, "s.goal", chunk));
        assert_eq!(
            streamed,
            whole,
            "chunk {chunk} for:\n{}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn valid_texts_parse_the_same_through_any_window() {
    for t in texts() {
        assert!(goal::parse_bytes(&t, "s.goal").is_ok());
        same_in_chunks(&t, &[1, 2, 3, 5, 8, 13, 64, 1000]);
    }
}

/// Every truncation and every one-byte deletion: errors at every place of the grammar,
/// found at every position of the window.
#[test]
fn errors_are_the_same_through_any_window() {
    for t in texts() {
        for i in 0..=t.len() {
            same_in_chunks(&t[..i], &[1, 4, 16]);
            if i < t.len() {
                let mut d = t.clone();
                d.remove(i);
                same_in_chunks(&d, &[1, 7]);
            }
        }
    }
}

/// The line numbers of errors found after the window has slid over many lines.
#[test]
fn late_errors_count_lines_before_the_window() {
    let mut t = String::from("num_ranks 3\n");
    for r in 0..2 {
        t.push_str(&format!("rank {r} {{\n"));
        for k in 0..50 {
            t.push_str(&format!("o{k}: send 8b to 2\n"));
        }
        t.push_str("}\n");
    }
    t.push_str("rank 2 {\n  a: recv 8b from 0\n  a requires b\n}\n");
    let e = goal::parse_bytes_in_chunks(t.as_bytes(), "s.goal", 16).unwrap_err();
    assert_eq!(
        e.to_string(),
        "s.goal:108:14: undefined label \"b\" in rank 2, expected a label defined earlier in rank 2"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Random edits of valid texts (bytes inserted, replaced) through random windows.
    #[test]
    fn random_edits_parse_the_same_through_any_window(
        pick in 0usize..7,
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(&b"{}:/*\n -1ab0rsequi"[..])), 0..4),
        chunk in 1usize..40,
    ) {
        let all = texts();
        let mut t = all[pick % all.len()].clone();
        for (at, byte) in edits {
            let i = at.index(t.len() + 1);
            t.insert(i, byte);
        }
        let whole = outcome(goal::parse_bytes(&t, "s.goal"));
        let streamed = outcome(goal::parse_bytes_in_chunks(&t, "s.goal", chunk));
        prop_assert_eq!(streamed, whole);
    }
}

/// Labels `o0, o1, ...` in order are counted, not stored, in the schedule: every kind of
/// departure from that pattern keeps each label exactly as given.
#[test]
fn labels_named_like_the_writer_are_kept() {
    let text = "num_ranks 6\n\
        rank 0 {\no0: calc 1\no1: calc 2\no2: calc 3\no2 requires o1\n}\n\
        rank 1 {\no0: calc 1\nx: calc 2\no2: calc 3\n}\n\
        rank 2 {\no1: calc 1\no0: calc 2\n}\n\
        rank 3 {\no01: calc 1\no1: calc 2\n}\n\
        rank 4 {\ncalc 1\no1: calc 2\n}\n\
        rank 5 {\no0: calc 1\no1: calc 2\ncalc 3\n}\n";
    let s = goal::parse(text, "l.goal").unwrap();
    let labels: Vec<Option<&str>> = (0..s.num_ops() as u32).map(|id| s.label(id)).collect();
    assert_eq!(
        labels,
        [
            Some("o0"),
            Some("o1"),
            Some("o2"),
            Some("o0"),
            Some("x"),
            Some("o2"),
            Some("o1"),
            Some("o0"),
            Some("o01"),
            Some("o1"),
            None,
            Some("o1"),
            Some("o0"),
            Some("o1"),
            None,
        ]
    );
    assert_eq!(s.describe(14), "#2");
}
