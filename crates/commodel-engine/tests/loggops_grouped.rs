//! The grouped waiting of the LogGOPS engine (many events waiting for one
//! CPU or NIC) gives exactly what LogGOPSim's one-by-one re-queueing gives.

use commodel_engine::collectives::{generate, CollectiveOptions};
use commodel_engine::loggops::{simulate, simulate_literal, LogGops};
use commodel_engine::time::PerByte;
use commodel_engine::{Schedule, ScheduleBuilder, ANY};
use proptest::prelude::*;

fn params(o: u64, g: u64, gg: u64, oo: u64, s: u64) -> LogGops {
    LogGops {
        L: 5_000_000,
        o,
        g,
        G: PerByte::from_whole_ps(gg).unwrap(),
        O: PerByte::from_whole_ps(oo).unwrap(),
        S: s,
        calc_scale: (1, 1),
    }
}

fn same(s: &Schedule, p: &LogGops) {
    let a = simulate(s, p, true).unwrap();
    let b = simulate_literal(s, p, true).unwrap();
    assert_eq!(a.finish, b.finish);
    assert_eq!(a.messages, b.messages);
    assert_eq!(a.events, b.events);
}

#[test]
fn collectives_with_many_waiting_events() {
    let opts = CollectiveOptions::default();
    for name in [
        "alltoall-basic-linear",
        "gather-basic-linear",
        "bcast-basic-linear",
        "alltoall-xor-post-all",
        "alltoall-pairwise",
    ] {
        for p in [4u32, 16, 33] {
            if name == "alltoall-xor-post-all" && !p.is_power_of_two() {
                continue;
            }
            let s = generate(name, p, 4096, &opts).unwrap();
            for prm in [
                params(1_500_000, 1_000_000, 8_000, 0, 65535),
                params(0, 0, 0, 0, 1024),
                params(2_000, 0, 1, 3, 0),
            ] {
                same(&s, &prm);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn random_bursts(
        p in 2u32..6,
        msgs in proptest::collection::vec((0u32..6, 0u32..6, 0u64..3000, 0u8..3, 0u8..2, proptest::bool::ANY), 1..60),
        calcs in proptest::collection::vec((0u32..6, 0u64..5000, 0u8..2), 0..8),
        o in 0u64..3_000, g in 0u64..3_000, gg in 0u64..20, oo in 0u64..5, rdv in 0u64..2000,
    ) {
        let mut b = ScheduleBuilder::new(p);
        for (k, &(a, c, size, cpu, nic, wild)) in msgs.iter().enumerate() {
            let (src, dst) = (a % p, c % p);
            let tag = (k % 2) as u32;
            let mut op = commodel_engine::Op::send(dst, size, tag);
            op.cpu = cpu;
            op.nic = nic;
            b.push(src, op);
            let mut r = commodel_engine::Op::recv(if wild { ANY } else { src }, size, if wild { ANY } else { tag });
            r.cpu = cpu % 2;
            b.push(dst, r);
        }
        for &(r, ns, cpu) in &calcs {
            let mut op = commodel_engine::Op::calc(ns);
            op.cpu = cpu;
            b.push(r % p, op);
        }
        let s = b.build().unwrap();
        let prm = params(o, g, gg, oo, rdv);
        let a = simulate(&s, &prm, true);
        let l = simulate_literal(&s, &prm, true);
        match (a, l) {
            (Ok(a), Ok(l)) => {
                prop_assert_eq!(a.finish, l.finish);
                prop_assert_eq!(a.messages, l.messages);
            }
            (Err(a), Err(l)) => prop_assert_eq!(a.to_string(), l.to_string()),
            (a, l) => prop_assert!(false, "grouped {:?} vs literal {:?}", a.is_ok(), l.is_ok()),
        }
    }
}
