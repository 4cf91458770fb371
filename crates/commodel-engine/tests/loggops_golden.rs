//! LogGOPS golden results: finish times that LogGOPSim itself gives.

use commodel_engine::loggops::{simulate, LogGops};
use commodel_engine::time::PerByte;
use commodel_engine::{ScheduleBuilder, ANY};

const NS: u64 = 1_000;

fn params() -> LogGops {
    LogGops {
        L: 5000 * NS,
        o: 1500 * NS,
        g: 1000 * NS,
        G: PerByte::from_whole_ps(8 * NS).unwrap(),
        O: PerByte::ZERO,
        S: 65535,
        calc_scale: (1, 1),
    }
}

/// The extended two-rank LogGOPS example (LogGOPSim: 543780 / 550336 ns).
#[test]
fn extended_example_matches_loggopsim() {
    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 65536, 7);
    let r1 = b.recv(0, 1, 65536, 7);
    let c1 = b.calc(0, 10000);
    b.requires(c1, r1);
    let s2 = b.send(0, 1, 8, 8);
    b.requires(s2, c1);
    let q1 = b.recv(1, 0, 65536, 7);
    let t1 = b.send(1, 0, 65536, 7);
    b.irequires(t1, q1);
    let q2 = b.recv(1, ANY, 8, ANY);
    b.requires(q2, q1);
    let s = b.build().unwrap();
    let out = simulate(&s, &params(), true).unwrap();
    assert_eq!(out.finish, vec![543_780 * NS, 550_336 * NS]);
    assert_eq!(out.messages.len(), 3);
}
