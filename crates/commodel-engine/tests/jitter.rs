//! A prediction's spread: per-message noise (`jitter`), repeatable by seed, nothing when
//! σ = 0, the mean time of one message kept, and bad values refused naming the field.

use commodel_engine::params::{JitterParams, MaxminParams, TopologySpec};
use commodel_engine::{goal, predict, ModelParams};

fn one_message(bytes: u64) -> commodel_engine::Schedule {
    let text = format!("num_ranks 2\nrank 0 {{\ns: send {bytes}b to 1\n}}\nrank 1 {{\nr: recv {bytes}b from 0\n}}\n");
    goal::parse(&text, "one.goal").unwrap()
}

fn maxmin(jitter: Option<JitterParams>) -> ModelParams {
    // 1 MB/s links, no latency: one message of m bytes takes m us
    let mut p = MaxminParams::new(TopologySpec::crossbar(2, 1e6), false);
    p.common.jitter = jitter;
    ModelParams::Maxmin(p)
}

#[test]
fn noise_repeats_by_seed_and_keeps_the_mean() {
    let s = one_message(1_000_000);
    let plain = predict::run(&s, &maxmin(None), false).unwrap().makespan;
    assert_eq!(plain, 1_000_000_000_000); // 1 s in ps
    let zero = JitterParams {
        sigma: 0.0,
        seed: 3,
        ..Default::default()
    };
    assert_eq!(
        predict::run(&s, &maxmin(Some(zero)), false)
            .unwrap()
            .makespan,
        plain
    );
    let run = |seed| {
        let j = JitterParams {
            sigma: 0.25,
            seed,
            ..Default::default()
        };
        predict::run(&s, &maxmin(Some(j)), false).unwrap().makespan as f64
    };
    assert_eq!(run(11), run(11));
    let times: Vec<f64> = (0..4000).map(run).collect();
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    assert!(
        (mean / plain as f64 - 1.0).abs() < 0.02,
        "mean {}",
        mean / plain as f64
    );
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    // log-normal with sigma 0.25: the 10th and 90th percentiles at exp(-sigma^2/2 -+ 1.2816 sigma)
    let (p10, p90) = (sorted[400] / plain as f64, sorted[3600] / plain as f64);
    assert!(
        (p10 - 0.7066).abs() < 0.02 && (p90 - 1.3353).abs() < 0.03,
        "{p10} {p90}"
    );
}

#[test]
fn a_bad_spread_is_refused_naming_it() {
    let s = one_message(10);
    for sigma in [-0.1, f64::NAN, 11.0] {
        let j = JitterParams {
            sigma,
            seed: 1,
            ..Default::default()
        };
        let e = predict::run(&s, &maxmin(Some(j)), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("jitter.sigma"), "{e}");
    }
}

#[test]
fn a_bad_table_of_spreads_is_refused_naming_it() {
    let s = one_message(10);
    let cases: [(Vec<u64>, Vec<f64>, &str); 4] = [
        (vec![10, 5], vec![0.1, 0.2], "jitter.sizes"),
        (vec![10, 10], vec![0.1, 0.2], "jitter.sizes"),
        (vec![10], vec![0.1, 0.2], "jitter.sigmas"),
        (vec![10, 20], vec![0.1, f64::NAN], "jitter.sigmas"),
    ];
    for (sizes, sigmas, field) in cases {
        let j = JitterParams {
            sigma: 0.1,
            seed: 1,
            sizes,
            sigmas,
        };
        let e = predict::run(&s, &maxmin(Some(j)), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{e}");
    }
}
