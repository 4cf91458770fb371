//! PLogP closed forms (PlogPT paper, eq. 18 and 19) on hand-built Alltoall A and B.

use commodel_engine::engine::simulate;
use commodel_engine::nic::{NicNetwork, PLogP};
use commodel_engine::table::Table;
use commodel_engine::{OpRef, ScheduleBuilder};

fn plogp(l: u64, g: u64) -> PLogP {
    PLogP {
        L: l,
        g: Table::constant(g),
    }
}

/// Alltoall_A (Fig. 14): per round Irecv, Isend, Wait both.
fn alltoall_a(p: u32, m: u64) -> commodel_engine::Schedule {
    let mut b = ScheduleBuilder::new(p);
    for r in 0..p {
        let mut prev: Vec<OpRef> = Vec::new();
        for i in 1..p {
            let peer = r ^ i;
            let rv = b.recv(r, peer, m, i);
            let sd = b.send(r, peer, m, i);
            for &q in &prev {
                b.requires(rv, q);
                b.requires(sd, q);
            }
            prev = vec![rv, sd];
        }
    }
    b.build().unwrap()
}

/// Alltoall_B: all Irecvs, then Isend+Wait in turn, then Waitall.
fn alltoall_b(p: u32, m: u64) -> commodel_engine::Schedule {
    let mut b = ScheduleBuilder::new(p);
    for r in 0..p {
        for i in 0..p {
            if i != r {
                b.recv(r, i, m, 0);
            }
        }
        let mut prev: Option<OpRef> = None;
        for i in 1..p {
            let sd = b.send(r, r ^ i, m, 0);
            if let Some(q) = prev {
                b.requires(sd, q);
            }
            prev = Some(sd);
        }
    }
    b.build().unwrap()
}

#[test]
fn eq18_pairwise_and_eq19_post_all() {
    for p in [2u32, 4, 8, 32] {
        let (l, g) = (3_000_000u64, 8_000_000u64);
        let a = simulate(
            &alltoall_a(p, 1024),
            &mut NicNetwork::new(plogp(l, g), p),
            None,
            false,
        )
        .unwrap();
        assert_eq!(a.makespan, (p as u64 - 1) * (g + l), "eq. 18, P={p}");
        let b = simulate(
            &alltoall_b(p, 1024),
            &mut NicNetwork::new(plogp(l, g), p),
            None,
            false,
        )
        .unwrap();
        assert_eq!(b.makespan, (p as u64 - 1) * g + l, "eq. 19, P={p}");
        assert!(b.finish.iter().all(|&f| f == b.makespan));
    }
}

#[test]
fn rendezvous_adds_handshake() {
    // One message of 100 B with S = 10: request L, clear-to-send L, then g + L.
    let mut b = ScheduleBuilder::new(2);
    b.send(0, 1, 100, 0);
    b.recv(1, 0, 100, 0);
    let s = b.build().unwrap();
    let (l, g) = (5u64, 7u64);
    let out = simulate(&s, &mut NicNetwork::new(plogp(l, g), 2), Some(10), true).unwrap();
    assert_eq!(out.finish, vec![2 * l + g, 3 * l + g]);
    assert_eq!(out.messages[0].end, 3 * l + g);
}

#[test]
fn unmatched_receive_is_a_deadlock_naming_rank() {
    let mut b = ScheduleBuilder::new(2);
    let r = b.recv(1, 0, 8, 3);
    b.label(r, "lonely");
    let s = b.build().unwrap();
    let err = simulate(&s, &mut NicNetwork::new(plogp(1, 1), 2), None, false).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("rank(s) 1") && msg.contains("lonely") && msg.contains("recv from 0 tag 3"),
        "{msg}"
    );
}
