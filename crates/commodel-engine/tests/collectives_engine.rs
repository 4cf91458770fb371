//! Every collective run through the engine: no deadlock, every message
//! delivered once with its bytes; PlogPT eq. 18/19 under the `plogp` model.

mod collectives_support;
use collectives_support::*;
use commodel_engine::engine;
use commodel_engine::loggops::{self, LogGops};
use commodel_engine::models::{NicNetwork, PLogP, Table};
use commodel_engine::{OpKind, Schedule};

fn sends(s: &Schedule) -> Vec<(u32, u32, u32, u64)> {
    let mut v = Vec::new();
    for r in 0..s.num_ranks() {
        for id in s.ops_of(r) {
            if s.kind(id) == OpKind::Send {
                v.push((r, s.peer(id), s.tag(id), s.size(id)));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn every_collective_runs_under_loggops_and_delivers_every_message() {
    let params = LogGops::loggopsim_defaults();
    for name in names() {
        for p in rank_counts(name, &[2, 3, 5, 8, 16]) {
            // 1000 B is eager, 100 000 B above LogGOPSim's S = 65535 uses rendezvous.
            for size in [1000u64, 100_000] {
                let s = gen(name, p, size);
                let out = loggops::simulate(&s, &params, true)
                    .unwrap_or_else(|e| panic!("{name} P={p} size={size}: {e}"));
                let mut delivered: Vec<_> = out
                    .messages
                    .iter()
                    .map(|m| (m.src, m.dst, m.tag, m.bytes))
                    .collect();
                delivered.sort();
                assert_eq!(delivered, sends(&s), "{name} P={p} size={size}");
                assert!(out.makespan > 0 || s.num_ops() == 0);
            }
        }
    }
}

fn plogp(g_ps: u64, l_ps: u64, p: u32) -> NicNetwork<PLogP> {
    NicNetwork::new(
        PLogP {
            L: l_ps,
            g: Table::constant(g_ps),
        },
        p,
    )
}

#[test]
fn plogp_model_gives_eq_18_and_19() {
    for p in [2u32, 4, 8, 16, 64] {
        for (g, l) in [(3_000_000u64, 40_000_000u64), (40_000_000, 3_000_000)] {
            let a = gen("alltoall-xor-pairwise", p, 65536);
            let out = engine::simulate(&a, &mut plogp(g, l, p), None, false).unwrap();
            assert_eq!(out.makespan, (p as u64 - 1) * (g + l), "eq. 18, P={p}");
            let b = gen("alltoall-xor-post-all", p, 65536);
            let out = engine::simulate(&b, &mut plogp(g, l, p), None, false).unwrap();
            assert_eq!(out.makespan, (p as u64 - 1) * g + l, "eq. 19, P={p}");
        }
    }
}

#[test]
fn every_collective_runs_under_plogp_with_rendezvous() {
    for name in names() {
        for p in rank_counts(name, &[3, 4, 7]) {
            let s = gen(name, p, 50_000);
            let out = engine::simulate(&s, &mut plogp(1_000_000, 5_000_000, p), Some(4096), true)
                .unwrap_or_else(|e| panic!("{name} P={p}: {e}"));
            assert_eq!(out.messages.len(), sends(&s).len(), "{name} P={p}");
        }
    }
}
