//! Fuzz the GOAL reader and every model for a time budget:
//!
//! ```sh
//! cargo run -p commodel-engine --example fuzz_goal -- [SECONDS] [ARTIFACT_DIR]
//! ```
//!
//! Inputs are random bytes, token soups, random schedules (edge sizes,
//! wildcards, dependencies) written as GOAL, and mutations of valid files
//! (the test data, `fuzz/cases/*.goal` and generated collectives): byte
//! flips, deletions, duplications, truncations, inserted tokens, numbers
//! replaced by edge values, splices of two files, swapped lines. Each goes through parse -> predict
//! under every model ([`check::check`]). A panic or a broken property is
//! written to ARTIFACT_DIR (default `fuzz/artifacts`) and counted; the run
//! prints the number of inputs and exits 1 if any failed.

#[path = "check.rs"]
mod check;

use check::Verdict;
use commodel_engine::collectives::{generate, CollectiveOptions};
use commodel_engine::{goal, OpRef, ScheduleBuilder, ANY};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// SplitMix64: small, fast, and enough for choosing mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The tokens of `fuzz/goal.dict` (libFuzzer's dictionary format: one
/// quoted token a line, `\xNN`, `\\` and `\"` escapes).
fn dictionary(root: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(root.join("fuzz/goal.dict")).expect("fuzz/goal.dict");
    let mut tokens = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some(quoted) = line.strip_prefix('"').and_then(|l| l.strip_suffix('"')) else {
            continue;
        };
        let (mut token, mut bytes) = (Vec::new(), quoted.bytes());
        while let Some(c) = bytes.next() {
            match (c, bytes.clone().next()) {
                (b'\\', Some(b'x')) => {
                    bytes.next();
                    let hex: Vec<u8> = bytes.by_ref().take(2).collect();
                    let hex = std::str::from_utf8(&hex).unwrap_or("");
                    token.push(u8::from_str_radix(hex, 16).expect("\\xNN in goal.dict"));
                }
                (b'\\', Some(e)) => {
                    bytes.next();
                    token.push(e);
                }
                _ => token.push(c),
            }
        }
        tokens.push(token);
    }
    tokens
}

/// Numbers a mutation may put in place of another.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "255",
    "256",
    "4096",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "18446744073709551",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
];

fn seeds(root: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for dir in ["crates/commodel-engine/tests/data/goal", "fuzz/cases"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            files.sort();
            for f in files
                .iter()
                .filter(|f| f.extension().is_some_and(|x| x == "goal"))
            {
                out.push(std::fs::read(f).expect("readable seed"));
            }
        }
    }
    let opts = CollectiveOptions::default();
    for (name, p, size) in [
        ("alltoall-xor-pairwise", 4, 100),
        ("alltoall-basic-linear", 3, 70_000),
        ("bcast-binomial", 5, 1 << 20),
        ("gather-binomial", 4, 10),
        ("allreduce-recursive-doubling", 4, 4096),
        ("barrier-dissemination", 3, 0),
        ("allgather-bruck", 5, 64),
        ("scatter-basic-linear", 3, 65536),
        ("alltoall-modified-bruck", 5, 300),
    ] {
        if let Ok(s) = generate(name, p, size, &opts) {
            out.push(goal::write(&s).into_bytes());
        }
    }
    out
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], tokens: &[Vec<u8>], mut v: Vec<u8>) -> Vec<u8> {
    // Mostly one mutation: more of the inputs still parse and reach the models.
    for _ in 0..1 + rng.below(4) / 3 {
        let len = v.len();
        let at = rng.below(len + 1);
        let end = (at + 1 + rng.below(40)).min(len);
        match rng.below(8) {
            0 if len > 0 => v[rng.below(len)] = rng.next() as u8,
            1 => {
                v.drain(at..end.max(at));
            }
            2 => {
                let piece = v[at..end.max(at)].to_vec();
                v.splice(at..at, piece);
            }
            3 => v.truncate(at),
            4 => {
                let t = rng.pick(tokens);
                v.splice(at..at, t.iter().copied());
            }
            5 => {
                // Replace the number starting at or after `at`.
                if let Some(s) = (at..len).find(|&i| v[i].is_ascii_digit()) {
                    let e = (s..len).find(|&i| !v[i].is_ascii_digit()).unwrap_or(len);
                    let n = rng.pick(NUMBERS).as_bytes();
                    v.splice(s..e, n.iter().copied());
                }
            }
            6 => {
                // Splice: this file's head, another one's tail.
                let other = rng.pick(seeds);
                let from = rng.below(other.len() + 1);
                v.truncate(at);
                v.extend_from_slice(&other[from..]);
            }
            _ => {
                // Swap two lines.
                let lines: Vec<&[u8]> = v.split(|&c| c == b'\n').collect();
                if lines.len() > 2 {
                    let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
                    let mut l: Vec<Vec<u8>> = lines.iter().map(|x| x.to_vec()).collect();
                    l.swap(i, j);
                    v = l.join(&b'\n');
                }
            }
        }
    }
    v
}

/// Sizes and durations a random schedule draws from (edges included).
const SIZES: &[u64] = &[
    0,
    1,
    2,
    8,
    16,
    100,
    4096,
    65535,
    65536,
    70_000,
    1 << 20,
    1 << 30,
    1 << 40,
    u64::MAX / 1000,
    u64::MAX / 1000 + 1,
    1 << 63,
    u64::MAX,
];

/// A random schedule written as GOAL: sends, receives (wildcards too) and
/// calcs with edge sizes, and dependencies on earlier operations of a rank.
fn random_schedule(rng: &mut Rng) -> Vec<u8> {
    let p = 1 + rng.below(6) as u32;
    let mut b = ScheduleBuilder::new(p);
    let mut ops: Vec<Vec<OpRef>> = vec![Vec::new(); p as usize];
    let size = |rng: &mut Rng| {
        if rng.below(3) == 0 {
            *rng.pick(SIZES)
        } else {
            rng.below(5000) as u64
        }
    };
    for _ in 0..rng.below(40) {
        let rank = rng.below(p as usize) as u32;
        let peer = rng.below(p as usize) as u32;
        let tag = rng.below(3) as u32;
        let op = match rng.below(7) {
            0..=2 => b.send(rank, peer, size(rng), tag),
            3..=5 => {
                let src = if rng.below(5) == 0 { ANY } else { peer };
                let tag = if rng.below(5) == 0 { ANY } else { tag };
                b.recv(rank, src, size(rng), tag)
            }
            _ => b.calc(rank, size(rng)),
        };
        let earlier = &ops[rank as usize];
        if !earlier.is_empty() && rng.below(3) != 0 {
            let dep = *rng.pick(earlier);
            if rng.below(2) == 0 {
                b.requires(op, dep);
            } else {
                b.irequires(op, dep);
            }
        }
        ops[rank as usize].push(op);
    }
    match b.build() {
        Ok(s) => goal::write(&s).into_bytes(),
        Err(_) => Vec::new(),
    }
}

fn input(rng: &mut Rng, seeds: &[Vec<u8>], tokens: &[Vec<u8>]) -> Vec<u8> {
    match rng.below(20) {
        0 => (0..rng.below(200)).map(|_| rng.next() as u8).collect(),
        1 => (0..rng.below(60))
            .flat_map(|_| rng.pick(tokens).clone())
            .collect(),
        2..=6 => random_schedule(rng),
        _ => {
            let base = rng.pick(seeds).clone();
            mutate(rng, seeds, tokens, base)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(120.0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let artifacts = args
        .get(2)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("fuzz/artifacts"));
    let seeds = seeds(&root);
    let tokens = dictionary(&root);
    let seed = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    let mut rng = Rng(seed);
    // Panics are counted and saved, not printed one by one.
    std::panic::set_hook(Box::new(|_| {}));
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let (mut runs, mut refused, mut predicted, mut failures) = (0u64, 0u64, 0u64, 0u64);
    while Instant::now() < deadline {
        for _ in 0..256 {
            let bytes = input(&mut rng, &seeds, &tokens);
            runs += 1;
            let outcome = std::panic::catch_unwind(|| check::check(&bytes));
            let problem = match outcome {
                Ok(Ok(Verdict::Refused)) => {
                    refused += 1;
                    None
                }
                Ok(Ok(Verdict::Predicted { .. })) => {
                    predicted += 1;
                    None
                }
                Ok(Err(e)) => Some(e),
                Err(p) => Some(format!(
                    "panic: {}",
                    p.downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| p.downcast_ref::<&str>().copied())
                        .unwrap_or("?")
                )),
            };
            if let Some(why) = problem {
                failures += 1;
                std::fs::create_dir_all(&artifacts).expect("artifact directory");
                let file = artifacts.join(format!("failure-{seed}-{runs}.goal"));
                std::fs::write(&file, &bytes).expect("artifact written");
                if failures <= 20 {
                    eprintln!("fuzz_goal: {}: {}", file.display(), why);
                }
            }
        }
    }
    println!(
        "fuzz_goal: {runs} inputs in {seconds} s (seed {seed}): {predicted} parsed and predicted \
         under {} models, {refused} refused by the parser, {failures} failures",
        check::models(2).len()
    );
    if failures > 0 {
        std::process::exit(1);
    }
}
