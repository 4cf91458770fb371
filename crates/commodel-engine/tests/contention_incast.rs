//! The stochastic incast rule (Lastovetsky 4.3.2) on top of the models.

use commodel_engine::params::{
    Common, IncastParams, IncastRow, JitterParams, MaxminParams, PlogpParams, TopologySpec,
};
use commodel_engine::predict::run;
use commodel_engine::{ModelParams, Schedule, ScheduleBuilder};

const S: u64 = 1_000_000_000_000;

/// `k` senders send `m` bytes each to rank 0 at once (a linear gather).
fn gather(k: u32, m: u64) -> Schedule {
    let mut b = ScheduleBuilder::new(k + 1);
    for s in 1..=k {
        b.send(s, 0, m, 0);
        b.recv(0, s, m, 0);
    }
    b.build().unwrap()
}

fn maxmin(k: u32, incast: Option<IncastParams>) -> ModelParams {
    let mut p = MaxminParams::new(TopologySpec::crossbar(k as u64 + 1, 1000.0), false);
    p.common.incast = incast;
    ModelParams::Maxmin(p)
}

/// The rule with `levels` and one table row (n, m, f).
fn rule(levels: &[u64], n: u64, m: u64, f: &[f64], seed: u64) -> IncastParams {
    IncastParams {
        levels: levels.to_vec(),
        table: vec![IncastRow {
            n,
            m,
            f: f.to_vec(),
        }],
        seed,
    }
}

#[test]
fn certain_escalation_holds_every_arrival_until_the_level() {
    // 4 senders x 100 B into a 1000 B/s NIC: 0.4 s without escalation.
    let base = run(&gather(4, 100), &maxmin(4, None), true).unwrap();
    assert_eq!(base.makespan, 4 * S / 10);
    let incast = rule(&[3 * S], 5, 100, &[1.0], 1);
    let o = run(&gather(4, 100), &maxmin(4, Some(incast)), true).unwrap();
    assert_eq!(o.makespan, 3 * S);
    assert_eq!(o.finish[0], 3 * S, "the root waits for the level");
    assert!(
        o.finish[1..].iter().all(|&f| f == 4 * S / 10),
        "senders are not delayed"
    );
    assert_eq!(o.rto_events.len(), 4);
    assert!(o.messages.iter().all(|m| m.rto && m.end == 3 * S));
    // n = 5 processors: a table entry for another n or size does nothing.
    for (n, m, f) in [(4, 100, 1.0), (5, 99, 1.0), (5, 100, 0.0)] {
        let p = maxmin(4, Some(rule(&[3 * S], n, m, &[f], 1)));
        let o = run(&gather(4, 100), &p, false).unwrap();
        assert_eq!(o.makespan, base.makespan);
    }
}

#[test]
fn a_noisy_run_looks_the_table_up_by_the_size_as_scheduled() {
    // The certain escalation above with per-message noise (sigma 0.5): the noise scales
    // the 100 B of each message, not the M of its table row, so every run escalates.
    for seed in 1..=20 {
        let mut p = maxmin(4, Some(rule(&[3 * S], 5, 100, &[1.0], 1)));
        if let ModelParams::Maxmin(m) = &mut p {
            m.common.jitter = Some(JitterParams {
                sigma: 0.5,
                seed,
                ..Default::default()
            });
        }
        let o = run(&gather(4, 100), &p, false).unwrap();
        assert_eq!(o.makespan, 3 * S, "seed {seed}");
    }
}

#[test]
fn escalation_probability_and_levels_follow_the_table() {
    let mut counts = [0u32; 3];
    for seed in 0..400u64 {
        let incast = rule(&[2 * S, 5 * S], 3, 100, &[0.25, 0.5], seed);
        let a = run(&gather(2, 100), &plogp(Some(incast.clone())), false).unwrap();
        let b = run(&gather(2, 100), &plogp(Some(incast)), false).unwrap();
        assert_eq!(a.makespan, b.makespan, "same seed, same run");
        match a.makespan {
            t if t == 2 * S => counts[1] += 1,
            t if t == 5 * S => counts[2] += 1,
            _ => counts[0] += 1,
        }
    }
    assert!((70..=130).contains(&counts[1]), "{counts:?}");
    assert!((170..=230).contains(&counts[2]), "{counts:?}");
    assert!((70..=130).contains(&counts[0]), "{counts:?}");
}

fn plogp(incast: Option<IncastParams>) -> ModelParams {
    ModelParams::Plogp(PlogpParams {
        L: 1000,
        sizes: vec![0],
        g: vec![1000],
        common: Common {
            incast,
            ..Common::default()
        },
    })
}

#[test]
fn bad_incast_parameters_name_the_field() {
    // Levels that are not integers, or missing, are refused by the bindings
    // (tests/test_engine_params.py).
    for (incast, field) in [
        (rule(&[1], 3, 100, &[1.5], 0), "incast.table[0]"),
        (rule(&[1], 3, 100, &[0.5, 0.5], 0), "incast.table[0]"),
        (rule(&[1, 2], 3, 100, &[0.5, 0.6], 0), "incast.table[0]"),
    ] {
        let e = run(&gather(2, 100), &plogp(Some(incast)), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{e} should name {field}");
    }
}

/// `k` senders send `m` bytes each to rank 0, sender s after a calc of (s - 1) x 10 ms:
/// they join the episode one after the other (each flow takes m / 1000 s alone).
fn staggered_gather(k: u32, m: u64) -> Schedule {
    let mut b = ScheduleBuilder::new(k + 1);
    for s in 1..=k {
        let wait = b.calc(s, (s as u64 - 1) * 10_000_000);
        let send = b.send(s, 0, m, 0);
        b.requires(send, wait);
        b.recv(0, s, m, 0);
    }
    b.build().unwrap()
}

/// The rule with `levels` and table rows (n, m, f).
fn rules(levels: &[u64], rows: &[(u64, u64, f64)], seed: u64) -> IncastParams {
    IncastParams {
        levels: levels.to_vec(),
        table: rows
            .iter()
            .map(|&(n, m, f)| IncastRow { n, m, f: vec![f] })
            .collect(),
        seed,
    }
}

#[test]
fn senders_that_join_later_raise_n_and_draw_for_what_it_adds() {
    // 4 senders of 100 B, 10 ms apart: 2 flow in from 10 ms (n = 3), all 4 from 30 ms
    // (n = 5). Certain at n = 5 only: one draw at the first instant (n = 3) missed it.
    let base = run(&staggered_gather(4, 100), &maxmin(4, None), true).unwrap();
    let incast = rules(&[3 * S], &[(5, 100, 1.0)], 1);
    let o = run(&staggered_gather(4, 100), &maxmin(4, Some(incast)), true).unwrap();
    assert!(base.makespan < S);
    assert_eq!(o.makespan, 3 * S, "held until the episode start (0) + t_1");
    assert_eq!(o.rto_events.len(), 4);
    // f(3) = 0.2 then f(5) = 0.6: the second draw adds (0.6 - 0.2) / 0.8, so 60% in all;
    // f(3) = 0.5, f(5) = 0.5: n = 5 adds nothing, 50% in all.
    for (f3, f5) in [(0.2, 0.6), (0.5, 0.5)] {
        let mut escalated = 0;
        for seed in 0..1000u64 {
            let incast = rules(&[3 * S], &[(3, 100, f3), (5, 100, f5)], seed);
            let o = run(&staggered_gather(4, 100), &maxmin(4, Some(incast)), false).unwrap();
            escalated += u32::from(o.makespan == 3 * S);
        }
        let want = (f5 * 1000.0) as u32;
        assert!(
            escalated.abs_diff(want) <= 50,
            "f(3) {f3} f(5) {f5}: {escalated}"
        );
    }
}
