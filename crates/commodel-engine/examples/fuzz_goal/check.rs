//! What the GOAL fuzzer checks for one input (shared with the corpus test,
//! `tests/fuzz_corpus.rs`): the parser returns a schedule or an error with a
//! position inside the text; a schedule that parses predicts, or fails with a
//! clean error, under every model; a prediction is self-consistent.

use commodel_engine::params::{
    Common, CpuParams, Efficiency, FanIn, HockneyParams, IncastParams, IncastRow, LogGopsParams,
    MaxminParams, PlogpParams, PlogptParams, RtoRule, TcpflowParams, TopologySpec, ZhuParams,
};
use commodel_engine::{goal, predict, ModelParams, OpKind, Schedule, SimError};

/// What an input did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The parser refused it (with a position inside the text).
    Refused,
    /// It parsed; every model predicted it or failed cleanly.
    Predicted { ok: u32, failed: u32 },
}

fn rendezvous_above(s: Option<u64>) -> Common {
    Common {
        S: s,
        ..Common::default()
    }
}

/// Parameters of every model (and some variants) for `ranks` ranks: times
/// in ps, per-byte costs in ps/B, rates in B/s.
pub fn models(ranks: u32) -> Vec<ModelParams> {
    let depth = 32 - ranks.max(2).saturating_sub(1).leading_zeros();
    let tree = TopologySpec::BinaryTree {
        nodes: None,
        b: (0..depth).map(|h| 1e9 / (1 << h.min(20)) as f64).collect(),
        b_bidir: None,
        d: Some((0..depth).map(|h| 1_000 << h.min(20)).collect()),
        d_bidir: None,
        latency: None,
    };
    let crossbar = TopologySpec::crossbar(ranks.max(1) as u64, 1.25e8);
    let racks = TopologySpec::Racks {
        racks: vec![ranks.div_ceil(2).max(1) as u64, ranks as u64 / 2 + 1],
        members: None,
        nic: 1.25e8,
        nic_bidir: None,
        nic_latency: 5_000_000,
        backbone: 2e8,
        backbone_latency: 20_000_000,
        backbone_saturation: Some(3),
        d: None,
    };
    let mut plogpt =
        PlogptParams::new(tree, 50_000_000, vec![0, 1024], vec![5_000_000, 12_000_000]);
    plogpt.g_bidir = Some(vec![6_000_000, 20_000_000]);
    plogpt.eps_S = Some(0.1);
    plogpt.eps_T = Some(1_000_000);
    plogpt.common = rendezvous_above(Some(4096));
    let mut maxmin = MaxminParams::new(racks.clone(), true);
    maxmin.common = rendezvous_above(Some(4096));
    let mut zhu_fair = ZhuParams::new(crossbar.clone(), false);
    zhu_fair.common = rendezvous_above(Some(100));
    // tcpflow with its posting-order rule, tail drops at 3 KiB ports, and every rank sharing
    // one core
    let tcpflow = TcpflowParams {
        topology: racks.clone(),
        L: 50_000_000,
        sizes: vec![0, 1024],
        g: vec![5_000_000, 12_000_000],
        efficiency: None,
        fifo_limit: Some(2048),
        rto: Some(200_000_000_000),
        rto_rule: RtoRule::Buffer,
        buffer: Some(vec![3072]),
        bucket: None,
        overhead: None,
        ack: None,
        timeouts: None,
        port_timeouts: None,
        pair: None,
        common: Common {
            S: Some(4096),
            cpu: Some(CpuParams {
                cores: 1,
                sizes: vec![0, 4096],
                o_s: vec![1_000_000, 3_000_000],
                o_r: vec![2_000_000, 6_000_000],
            }),
            ..Common::default()
        },
    };
    // tcpflow with its efficiencies both ways and into nodes with several senders
    let tcpflow_efficiency = TcpflowParams {
        topology: crossbar.clone(),
        L: 20_000_000,
        sizes: vec![0, 4096],
        g: vec![3_000_000, 40_000_000],
        efficiency: Some(Efficiency {
            sizes: vec![1024, 8192],
            exchange: vec![0.5, 0.7],
            duplex: vec![0.8, 0.9],
            fanin: Some(FanIn {
                peers: 3,
                sizes: vec![2048],
                e: vec![0.25],
            }),
        }),
        fifo_limit: None,
        rto: None,
        rto_rule: RtoRule::Plogpt,
        buffer: None,
        // token buckets of 3 KB at the nodes' links: small messages pass at g(m)
        bucket: Some(3000),
        // and its frames' headers and acknowledgements in the buckets
        overhead: Some(60),
        ack: Some(120),
        timeouts: None,
        port_timeouts: None,
        pair: None,
        common: rendezvous_above(Some(16384)),
    };
    let mut incast = MaxminParams::new(crossbar.clone(), true);
    incast.common.incast = Some(IncastParams {
        levels: vec![200_000_000_000, 1_000_000],
        table: vec![
            IncastRow {
                n: 3,
                m: 4096,
                f: vec![0.5, 0.25],
            },
            IncastRow {
                n: 4,
                m: 0,
                f: vec![1.0, 0.0],
            },
        ],
        seed: 7,
    });
    vec![
        ModelParams::LogGops(LogGopsParams {
            L: 2_500_000,
            o: 1_500_000,
            g: 1_000_000,
            G: 6_000.0,
            O: 0.0,
            S: 65535,
            cpu_cores: None,
        }),
        ModelParams::LogGops(LogGopsParams {
            L: 0,
            o: 2,
            g: 1,
            G: 0.4,
            O: 1.4,
            S: 0,
            cpu_cores: None,
        }),
        // ranks sharing one core: every rank's CPU work stretched by P
        ModelParams::LogGops(LogGopsParams {
            L: 1_000_000,
            o: 3,
            g: 1,
            G: 0.4,
            O: 1.4,
            S: 4096,
            cpu_cores: Some(1),
        }),
        ModelParams::Plogp(PlogpParams {
            L: 3_000_000,
            sizes: vec![0, 1024, 65536],
            g: vec![2_000_000, 9_000_000, 500_000_000],
            common: rendezvous_above(Some(8192)),
        }),
        ModelParams::Hockney(HockneyParams {
            alpha: 4_000_000,
            beta: 8_000.5,
            common: Common::default(),
        }),
        ModelParams::Plogpt(plogpt),
        ModelParams::Maxmin(maxmin),
        ModelParams::Maxmin(MaxminParams::new(crossbar.clone(), false)),
        ModelParams::Zhu(ZhuParams::new(racks, true)),
        ModelParams::Zhu(zhu_fair),
        ModelParams::Maxmin(incast),
        ModelParams::Tcpflow(tcpflow),
        ModelParams::Tcpflow(tcpflow_efficiency),
    ]
}

/// Every model's parameters, as [`models`] gives them.
type Models = std::rc::Rc<Vec<ModelParams>>;

thread_local! {
    static MODELS: std::cell::RefCell<std::collections::HashMap<u32, Models>> = Default::default();
}

/// [`models`], built once per rank count.
fn cached_models(ranks: u32) -> Models {
    MODELS.with(|m| {
        m.borrow_mut()
            .entry(ranks)
            .or_insert_with(|| std::rc::Rc::new(models(ranks)))
            .clone()
    })
}

/// Check one input; `Err` describes a property that does not hold (panics
/// are the caller's to catch).
pub fn check(bytes: &[u8]) -> Result<Verdict, String> {
    let s = match goal::parse_bytes(bytes, "fuzz.goal") {
        Ok(s) => s,
        Err(e) => {
            let (line, column) = e
                .position()
                .ok_or_else(|| format!("parse error without a position: {e}"))?;
            let lines = bytes.iter().filter(|&&c| c == b'\n').count() as u64 + 1;
            if line < 1 || line > lines || column < 1 || column as usize > bytes.len() + 1 {
                return Err(format!("position {line}:{column} outside the text: {e}"));
            }
            return Ok(Verdict::Refused);
        }
    };
    let (mut ok, mut failed) = (0, 0);
    for params in cached_models(s.num_ranks()).iter() {
        let model = params.name();
        match predict::run(&s, params, true) {
            Ok(o) => {
                consistent(&s, &o).map_err(|e| format!("{model}: {e}"))?;
                ok += 1;
            }
            Err(e) => {
                clean(&e).map_err(|m| format!("{model}: {m}"))?;
                failed += 1;
            }
        }
    }
    Ok(Verdict::Predicted { ok, failed })
}

/// A prediction's finish times, makespan and messages agree with the schedule.
fn consistent(s: &Schedule, o: &commodel_engine::Outcome) -> Result<(), String> {
    if o.finish.len() != s.num_ranks() as usize {
        return Err(format!(
            "{} finish times for {} ranks",
            o.finish.len(),
            s.num_ranks()
        ));
    }
    if o.makespan != o.finish.iter().copied().max().unwrap_or(0) {
        return Err("makespan is not the largest finish time".into());
    }
    let sends = (0..s.num_ops() as u32)
        .filter(|&op| s.kind(op) == OpKind::Send)
        .count();
    if o.messages.len() != sends {
        return Err(format!("{} messages for {} sends", o.messages.len(), sends));
    }
    for m in &o.messages {
        if m.end < m.start || m.end > o.makespan || s.size(m.send) != m.bytes {
            return Err(format!("inconsistent message record {m:?}"));
        }
        if s.size(m.recv) < m.bytes {
            return Err(format!("truncated message delivered: {m:?}"));
        }
    }
    Ok(())
}

/// An error names what is at fault and is not huge.
fn clean(e: &SimError) -> Result<(), String> {
    let text = e.to_string();
    let named = match e {
        SimError::Deadlock(_) => text.contains("rank"),
        SimError::Overflow(_) | SimError::Truncated { .. } => {
            text.contains(" at rank") || text.contains(": rank")
        }
        SimError::UnknownModel(_) => false,
        _ => text.starts_with("model "),
    };
    if !named || text.len() > 4000 {
        return Err(format!("unclear error: {}", &text[..text.len().min(300)]));
    }
    Ok(())
}
