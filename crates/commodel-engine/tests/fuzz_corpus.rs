//! The fuzzer's corpus (`fuzz/cases/*.goal`, inputs that once found a bug
//! or sit at an edge) and the seeds it mutates, through the fuzzer's own
//! check: parse -> predict under every model, no panic, clean errors.

#[path = "../examples/fuzz_goal/check.rs"]
mod check;

use check::Verdict;
use std::path::Path;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fuzz/cases")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "goal"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn every_corpus_file_predicts_or_fails_cleanly_under_every_model() {
    let files = corpus();
    assert!(files.len() >= 4, "corpus has {} files", files.len());
    for (name, bytes) in files {
        match check::check(&bytes) {
            Ok(Verdict::Predicted { ok, failed }) => {
                assert_eq!(ok + failed, check::models(2).len() as u32, "{name}")
            }
            Ok(Verdict::Refused) => {}
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

#[test]
fn edge_cases_give_the_expected_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/cases");
    let parse = |f: &str| {
        commodel_engine::goal::parse_bytes(&std::fs::read(dir.join(f)).unwrap(), f).unwrap()
    };
    for (file, start) in [
        (
            "huge-message.goal",
            "simulated time out of range (0 to 2^64 ps, 213 days) at rank 0 a (send",
        ),
        (
            "huge-calc.goal",
            "simulated time out of range (0 to 2^64 ps, 213 days) at rank 0 c (calc)",
        ),
        (
            "truncated.goal",
            "message truncated: rank 0 a (send to 1 tag 3) sends 16 B",
        ),
    ] {
        let s = parse(file);
        for params in check::models(2) {
            let model = params.name();
            let e = commodel_engine::predict::run(&s, &params, false).unwrap_err();
            assert!(e.to_string().starts_with(start), "{file} {model}: {e}");
        }
    }
    let s = parse("eager-into-large-receive.goal");
    for params in check::models(2) {
        commodel_engine::predict::run(&s, &params, false)
            .unwrap_or_else(|e| panic!("{}: {e}", params.name()));
    }
}
