//! Fuzzing the GOAL reader with proptest: random bytes, random token soup, and mutations
//! (byte flips, deletions, duplications, truncations, insertions) of valid files. The
//! reader must return Ok or Err, never panic; an error must point inside the text; and
//! whatever it accepts must survive a write/read round trip unchanged.
//!
//! A coverage-guided target for cargo-fuzz lives in `fuzz/` at the repository root.

use std::path::Path;

use commodel_engine::goal;
use proptest::prelude::*;

/// Parse; on success write and read back and compare; on error check the position.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    match goal::parse_bytes(bytes, "fuzz.goal") {
        Ok(s) => {
            let text = goal::write(&s);
            let back = goal::parse(&text, "rewritten.goal")
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(goal::write(&back), text);
            prop_assert_eq!(s.num_ops(), back.num_ops());
            prop_assert!(s.edges().eq(back.edges()));
        }
        Err(e) => {
            let (line, column) = e
                .position()
                .ok_or_else(|| TestCaseError::fail("parse error without position"))?;
            let lines = bytes.iter().filter(|&&c| c == b'\n').count() as u64 + 1;
            prop_assert!(
                line >= 1 && line <= lines,
                "line {} of {}: {}",
                line,
                lines,
                e
            );
            prop_assert!(column >= 1 && column as usize <= bytes.len() + 1, "{}", e);
            let prefix = format!("fuzz.goal:{}:{}: ", line, column);
            prop_assert!(e.to_string().starts_with(&prefix), "{}", e);
        }
    }
    Ok(())
}

/// The valid files of the test data plus a few more: the seeds that mutations start from.
fn seeds() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/goal");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    out.sort();
    out.push(
        b"num_ranks 3\r\nrank 0 {\r\na: send 1b to 1 tag -1\r\nb: recv 2b from -1 tag -1\r\nb irequires a\r\n}\r\n\
          rank 1 {\r\nc: calc 5 cpu 1\r\nr: recv 1b from 0\r\nc requires r\r\n}\r\nrank 2 { }\r\n"
            .to_vec(),
    );
    out
}

/// Pieces of GOAL, including the edges of every field.
const TOKENS: &[&str] = &[
    "num_ranks",
    "rank",
    "send",
    "recv",
    "calc",
    "requires",
    "irequires",
    "tag",
    "cpu",
    "nic",
    "to",
    "from",
    "b",
    "B",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "kB",
    "MB",
    "GB",
    "TB",
    "Kb",
    "-1",
    "-",
    "0",
    "1",
    "2",
    "3",
    "255",
    "256",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "a",
    "b1",
    "o0",
    "x_y",
    ":",
    "{",
    "}",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "//",
    "/*",
    "*/",
    "é",
    "\u{0}",
];

fn token_soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..80).prop_map(|t| t.concat().into_bytes())
}

/// A plausible file: header, blocks, statements made of tokens.
fn structured_soup() -> impl Strategy<Value = Vec<u8>> {
    (
        1u32..4,
        prop::collection::vec(
            prop::collection::vec(prop::sample::select(TOKENS), 0..10),
            0..12,
        ),
    )
        .prop_map(|(p, lines)| {
            let mut text = format!("num_ranks {p}\nrank 0 {{\n");
            for (i, line) in lines.iter().enumerate() {
                text.push_str(&line.join(" "));
                text.push('\n');
                if i % 4 == 3 {
                    text.push_str(&format!("}}\nrank {} {{\n", (i / 4 + 1) as u32 % p.max(1)));
                }
            }
            text.push_str("}\n");
            text.into_bytes()
        })
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
    Insert(usize, &'static str),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), 1usize..20).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), 1usize..40).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(i, t)| Mutation::Insert(i, t)),
    ]
}

fn apply(mut v: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = v.len();
        let at = |i: usize| if len == 0 { 0 } else { i % (len + 1) };
        match *m {
            Mutation::Flip(i, b) => {
                if len > 0 {
                    v[i % len] = b;
                }
            }
            Mutation::Delete(i, n) => {
                let s = at(i);
                v.drain(s..(s + n).min(len));
            }
            Mutation::Duplicate(i, n) => {
                let s = at(i);
                let piece: Vec<u8> = v[s..(s + n).min(len)].to_vec();
                v.splice(s..s, piece);
            }
            Mutation::Truncate(i) => v.truncate(at(i)),
            Mutation::Insert(i, t) => {
                let s = at(i);
                v.splice(s..s, t.bytes());
            }
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        check(&bytes)?;
    }

    #[test]
    fn random_bytes_after_a_header(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut text = b"num_ranks 2\nrank 0 {\n".to_vec();
        text.extend_from_slice(&bytes);
        check(&text)?;
    }

    #[test]
    fn token_soups(bytes in token_soup()) {
        check(&bytes)?;
    }

    #[test]
    fn structured_soups(bytes in structured_soup()) {
        check(&bytes)?;
    }

    #[test]
    fn mutated_valid_files(seed in any::<prop::sample::Index>(), ms in prop::collection::vec(mutation(), 1..6)) {
        let seeds = seeds();
        let base = seed.get(&seeds).clone();
        check(&apply(base, &ms))?;
    }
}

/// The seeds themselves are valid (else mutating them tests little).
#[test]
fn seeds_are_valid() {
    for s in seeds() {
        goal::parse_bytes(&s, "seed").unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Every single-byte truncation and deletion of a valid file is handled.
#[test]
fn every_truncation_and_deletion() {
    for s in seeds() {
        for i in 0..=s.len() {
            check(&s[..i]).unwrap();
            let mut d = s.clone();
            if i < d.len() {
                d.remove(i);
                check(&d).unwrap();
            }
        }
    }
}
