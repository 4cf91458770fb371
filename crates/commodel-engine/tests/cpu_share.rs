//! Ranks sharing cores ([`CpuParams`]): closed forms under PLogP and LogGOPS.
//!
//! With P ranks on C < P cores, s = P / C; a message adds (s - 1) o_s(m) on its
//! sender's CPU, its own part (at min(m, 1) bytes) before it enters, and (s - 1) o_r(m)
//! on its receiver's CPU, its own part after it has arrived and of its bytes' part what
//! the transfer did not cover; a calc runs s times its duration. Under PLogP a message
//! is at the receiver g(m) + L after it enters.

use commodel_engine::params::{Common, CpuParams, LogGopsParams, PlogpParams};
use commodel_engine::predict::run;
use commodel_engine::{ModelParams, OpRef, Schedule, ScheduleBuilder, SimError};

const L: u64 = 5_000_000; // 5 us
const G: u64 = 2_000_000; // g(m) = 2 us at every size
const OS: u64 = 3_000_000; // o_s = 3 us
const OR: u64 = 7_000_000; // o_r = 7 us

fn plogp(cores: Option<u64>) -> ModelParams {
    ModelParams::Plogp(PlogpParams {
        L,
        sizes: vec![0],
        g: vec![G],
        common: Common {
            cpu: cores.map(|c| CpuParams {
                cores: c,
                sizes: vec![0, 1024],
                o_s: vec![OS, OS],
                o_r: vec![OR, OR],
            }),
            ..Common::default()
        },
    })
}

fn makespan(s: &Schedule, p: &ModelParams) -> u64 {
    run(s, p, false).unwrap().makespan
}

/// A token around the ring twice: rank i receives from i - 1, then sends to i + 1.
fn token_ring(p: u32, bytes: u64) -> Schedule {
    let mut b = ScheduleBuilder::new(p);
    let mut prev: Vec<Option<OpRef>> = vec![None; p as usize];
    for lap in 0..2 {
        for hop in 0..p {
            let (src, dst) = (hop, (hop + 1) % p);
            let sd = b.send(src, dst, bytes, lap);
            if let Some(q) = prev[src as usize] {
                b.requires(sd, q);
            }
            let rv = b.recv(dst, src, bytes, lap);
            if let Some(q) = prev[dst as usize] {
                b.requires(rv, q);
            }
            prev[src as usize] = Some(sd);
            prev[dst as usize] = Some(rv);
        }
    }
    b.build().unwrap()
}

#[test]
fn a_token_hop_pays_the_stretched_overheads() {
    for (p, cores) in [(8u32, 2u64), (8, 3), (4, 2), (6, 4)] {
        let s = token_ring(p, 512);
        let alone = makespan(&s, &plogp(None));
        assert_eq!(alone, 2 * p as u64 * (G + L), "P = {p} without sharing");
        // (s - 1) o = o (P - C) / C, rounded down
        let shared = makespan(&s, &plogp(Some(cores)));
        assert_eq!(
            shared,
            2 * p as u64
                * (G + L + OS * (p as u64 - cores) / cores + OR * (p as u64 - cores) / cores),
            "P = {p}, C = {cores}"
        );
    }
}

#[test]
fn a_core_per_rank_changes_nothing() {
    for (p, cores) in [(4u32, 4u64), (4, 16), (2, 2)] {
        let s = token_ring(p, 100);
        assert_eq!(
            makespan(&s, &plogp(Some(cores))),
            makespan(&s, &plogp(None)),
            "P = {p}, C = {cores}"
        );
    }
}

#[test]
fn sends_posted_together_queue_on_the_cpu() {
    // rank 0 posts k sends at once (a linear broadcast): send j enters at (j + 1) e, e =
    // (s - 1) o_s; the NIC (g = 2 us) is free by then, so the last message arrives at
    // k e + g + L and its receiver finishes (s - 1) o_r later.
    let (p, cores) = (8u32, 2u64);
    let mut b = ScheduleBuilder::new(p);
    for r in 1..p {
        b.send(0, r, 64, 0);
        b.recv(r, 0, 64, 0);
    }
    let s = b.build().unwrap();
    let (e, r) = (OS * 3, OR * 3);
    assert!(e > G);
    let k = (p - 1) as u64;
    assert_eq!(makespan(&s, &plogp(Some(cores))), k * e + G + L + r);
}

#[test]
fn a_calc_runs_s_times_as_long_and_beyond_the_last_size_the_last_value_holds() {
    let (p, cores) = (6u32, 4u64);
    let mut b = ScheduleBuilder::new(p);
    let c = b.calc(0, 1000); // 1 us
    let sd = b.send(0, 1, 1 << 20, 0); // 1 MiB: beyond the table's 1024
    b.requires(sd, c);
    b.recv(1, 0, 1 << 20, 0);
    let s = b.build().unwrap();
    let calc = 1_000_000 * 6 / 4;
    let (e, r) = (OS * 2 / 4, OR * 2 / 4);
    assert_eq!(makespan(&s, &plogp(Some(cores))), calc + e + G + L + r);
}

#[test]
fn bad_cpu_parameters_name_their_field() {
    let s = token_ring(4, 8);
    let mut p = plogp(Some(0));
    let err = run(&s, &p, false).unwrap_err();
    assert!(matches!(err, SimError::BadParameter { .. }), "{err}");
    assert!(err.to_string().contains("cpu.cores"), "{err}");
    if let ModelParams::Plogp(q) = &mut p {
        q.common.cpu = Some(CpuParams {
            cores: 2,
            sizes: vec![0, 1024],
            o_s: vec![OS],
            o_r: vec![OR, OR],
        });
    }
    let err = run(&s, &p, false).unwrap_err();
    assert!(err.to_string().contains("cpu.o_s"), "{err}");
}

fn loggops(o: u64, oo: f64, cores: Option<u64>) -> ModelParams {
    ModelParams::LogGops(LogGopsParams {
        L,
        o,
        g: 1_000_000,
        G: 6.0,
        O: oo,
        S: u64::MAX,
        cpu_cores: cores,
    })
}

/// Every rank computes for `calc_ns`, then sends 4 KiB to its right neighbour.
fn calc_then_shift(p: u32, calc_ns: u64) -> Schedule {
    let mut b = ScheduleBuilder::new(p);
    for r in 0..p {
        let c = b.calc(r, calc_ns);
        let sd = b.send(r, (r + 1) % p, 4096, 0);
        b.requires(sd, c);
        b.recv((r + 1) % p, r, 4096, 0);
    }
    b.build().unwrap()
}

#[test]
fn loggops_stretches_o_big_o_and_calcs() {
    // 8 ranks on 2 cores: s = 4, as if o and O were 4 times as large and calcs too
    let s = calc_then_shift(8, 2000);
    let shared = makespan(&s, &loggops(1_500_000, 10.0, Some(2)));
    let by_hand = makespan(&calc_then_shift(8, 8000), &loggops(6_000_000, 40.0, None));
    assert_eq!(shared, by_hand);
    assert!(shared > makespan(&s, &loggops(1_500_000, 10.0, None)));
    // a core per rank: LogGOPSim's semantics
    assert_eq!(
        makespan(&s, &loggops(1_500_000, 10.0, Some(8))),
        makespan(&s, &loggops(1_500_000, 10.0, None))
    );
}

/// PLogP with overheads that grow with the size: o(m) = o(1) + w m / 1000 up to 1000 bytes.
fn plogp_with_copies(ws: u64, wr: u64) -> ModelParams {
    ModelParams::Plogp(PlogpParams {
        L,
        sizes: vec![0],
        g: vec![G],
        common: Common {
            cpu: Some(CpuParams {
                cores: 2,
                sizes: vec![0, 1, 1000],
                o_s: vec![OS, OS, OS + ws],
                o_r: vec![OR, OR, OR + wr],
            }),
            ..Common::default()
        },
    })
}

#[test]
fn the_copies_of_the_bytes_go_on_while_the_message_is_on_the_wire() {
    // 4 ranks on 2 cores: s - 1 = 1. Rank 0 posts two sends of 1000 B at once. Each send
    // takes its own part o_s(1) = 3 us before it enters and its bytes' w_s after, on the
    // sender's CPU without holding the message back: the second enters at 3 + w_s + 3.
    // A message is at its receiver g + L = 7 us after it enters; the receive takes o_r(1)
    // = 7 us and what of w_r the 7 us of transfer did not cover.
    let mut b = ScheduleBuilder::new(4);
    for r in [1, 2] {
        b.send(0, r, 1000, 0);
        b.recv(r, 0, 1000, 0);
    }
    let s = b.build().unwrap();
    let us = 1_000_000;
    // w_r = 4 us is covered by the transfer
    let second_arrives = 3 * us + 5 * us + 3 * us + G + L;
    assert_eq!(
        makespan(&s, &plogp_with_copies(5 * us, 4 * us)),
        second_arrives + OR
    );
    // w_r = 10 us: 3 us of it after the arrival
    assert_eq!(
        makespan(&s, &plogp_with_copies(5 * us, 10 * us)),
        second_arrives + OR + 3 * us
    );
    // a zero-byte message has no bytes' part: o(0) each side, as before
    let mut b = ScheduleBuilder::new(4);
    b.send(0, 1, 0, 0);
    b.recv(1, 0, 0, 0);
    let s = b.build().unwrap();
    assert_eq!(
        makespan(&s, &plogp_with_copies(5 * us, 10 * us)),
        OS + G + L + OR
    );
}
