//! The stochastic incast rule (Lastovetsky 4.3.2) on top of the models.

use commodel_engine::params::{
    Common, IncastParams, IncastRow, MaxminParams, PlogpParams, TopologySpec,
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
