//! One entry point for every model: `run(schedule, params)`.
//!
//! The parameters are typed, one struct per model ([`crate::params`]); `run`
//! checks their values and names the model and the field at fault. All times
//! are integer picoseconds; per-byte costs picoseconds per byte, given as
//! floats and kept as [`time::PerByte`] (2^-32 ps resolution, below 2^32 ps/B).

use crate::contention::burst::BurstParams;
use crate::contention::incast::{Incast, IncastRule};
use crate::contention::maxmin::MaxminNet;
use crate::contention::plogpt::{self, PlogptNet, Rto};
use crate::contention::tcpflow::{self, FanInTimeouts, TcpflowNet, TimeoutRule};
use crate::engine;
use crate::jitter::Jitter;
use crate::loggops::{self, LogGops};
use crate::nic::{Hockney, NicNetwork, PLogP};
use crate::outcome::{Outcome, SimError};
pub use crate::params::MODELS;
use crate::params::{
    Common, Efficiency, ModelParams, PlogptParams, PsPerByte, RtoRule, TopologySpec,
};
use crate::schedule::Schedule;
use crate::table::Table;
use crate::time::{self, Time, PS_PER_S};
use crate::topology::{placement, Topology};

/// Simulate `schedule` under the model `params` describes.
pub fn run(
    schedule: &Schedule,
    params: &ModelParams,
    record_messages: bool,
) -> Result<Outcome, SimError> {
    let model = params.name();
    match params {
        ModelParams::LogGops(p) => {
            // ranks sharing C cores: s = P / C stretches the CPU's o, O and calcs
            let ranks = schedule.num_ranks() as u64;
            let (num, den) = match p.cpu_cores {
                Some(0) => return Err(SimError::bad(model, "cpu_cores", "must be at least 1")),
                Some(c) if ranks > c => (ranks, c),
                _ => (1, 1),
            };
            let o = (p.o as u128 * num as u128 / den as u128).try_into();
            let o =
                o.map_err(|_| SimError::bad(model, "o", "times P / cpu_cores exceeds 2^64 ps"))?;
            let p = LogGops {
                L: p.L,
                o,
                g: p.g,
                G: per_byte(model, "G", p.G)?,
                O: per_byte(
                    model,
                    "O",
                    non_negative(model, "O", p.O)? * num as f64 / den as f64,
                )?,
                S: p.S,
                calc_scale: (num, den),
            };
            loggops::simulate(schedule, &p, record_messages)
        }
        ModelParams::Plogp(p) => {
            let cost = PLogP {
                L: p.L,
                g: table(model, "g", &p.sizes, &p.g)?,
            };
            let net = NicNetwork::new(cost, schedule.num_ranks());
            sim(schedule, model, &p.common, net, record_messages)
        }
        ModelParams::Hockney(p) => {
            let cost = Hockney {
                alpha: p.alpha,
                beta: per_byte(model, "beta", p.beta)?,
            };
            let net = NicNetwork::new(cost, schedule.num_ranks());
            sim(schedule, model, &p.common, net, record_messages)
        }
        ModelParams::Plogpt(p) => {
            let (topo, nodes) = topology(schedule, model, &p.topology, &p.common)?;
            let params = plogpt_params(model, p, &topo)?;
            let net = PlogptNet::new(topo, nodes, params);
            sim(schedule, model, &p.common, net, record_messages)
        }
        ModelParams::Maxmin(p) => {
            let (topo, nodes) = topology(schedule, model, &p.topology, &p.common)?;
            let net = MaxminNet::new(topo, nodes, p.rtt_weights);
            sim(schedule, model, &p.common, net, record_messages)
        }
        ModelParams::Zhu(p) => {
            let (topo, nodes) = topology(schedule, model, &p.topology, &p.common)?;
            let net = MaxminNet::zhu(topo, nodes, p.asymmetric);
            sim(schedule, model, &p.common, net, record_messages)
        }
        ModelParams::Tcpflow(p) => {
            let (topo, nodes) = topology(schedule, model, &p.topology, &p.common)?;
            let params = tcpflow::TcpflowParams {
                L: p.L,
                g: table(model, "g", &p.sizes, &p.g)?,
                efficiency: match &p.efficiency {
                    Some(e) => Some(efficiency(model, e)?),
                    None => None,
                },
                fifo_limit: p.fifo_limit,
                bucket: p.bucket.filter(|&b| b > 0),
                overhead: p.overhead.unwrap_or(0),
                ack: p.ack.unwrap_or(0),
                pair: match &p.pair {
                    Some(v) => Some(pair(model, v, topo.nodes())?),
                    None => None,
                },
                burst: match p.rto_rule {
                    RtoRule::Plogpt => None,
                    RtoRule::Buffer => Some(BurstParams {
                        t_rto: p.rto.unwrap_or(PS_PER_S / 5),
                        buffer: buffers(model, p.buffer.as_deref(), topo.levels.b.len())?,
                    }),
                },
                timeouts: match &p.timeouts {
                    Some(v) => Some(timeouts(model, v, p.rto.unwrap_or(PS_PER_S / 5))?),
                    None => None,
                },
                port_timeouts: match &p.port_timeouts {
                    Some(t) => Some(port_timeouts(
                        model,
                        t,
                        p.rto.unwrap_or(PS_PER_S / 5),
                        p.common.jitter.as_ref().map_or(0, |j| j.seed),
                    )?),
                    None => None,
                },
            };
            let net = TcpflowNet::new(topo, nodes, params);
            sim(schedule, model, &p.common, net, record_messages)
        }
    }
}

/// `timeouts` [K, F, M, ...]: rules of K >= 2 senders (below 2^32), each sending to F >= 1
/// nodes, of messages of M >= 1 byte.
fn timeouts(model: &'static str, v: &[u64], t_rto: Time) -> Result<FanInTimeouts, SimError> {
    let bad = |what: String| SimError::bad(model, "timeouts", what);
    if v.is_empty() || !v.len().is_multiple_of(3) {
        return Err(bad(format!(
            "must be rules of three numbers [K, F, M], got {} numbers",
            v.len()
        )));
    }
    let rules = v
        .chunks(3)
        .map(|r| match *r {
            [k, f, m]
                if (2..=u32::MAX as u64).contains(&k)
                    && (1..=u32::MAX as u64).contains(&f)
                    && m >= 1 =>
            {
                Ok(TimeoutRule {
                    senders: k as u32,
                    fanout: f as u32,
                    size: m,
                })
            }
            _ => Err(bad(format!(
                "a rule [K, F, M] needs K >= 2 senders, F >= 1 receivers each and M >= 1 \
                 byte, got {r:?}"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(FanInTimeouts { rules, t_rto })
}

/// `port_timeouts`: q(m) at sizes that increase from 1 byte, each q in [0, 1].
fn port_timeouts(
    model: &'static str,
    t: &crate::params::PortTimeoutTable,
    t_rto: Time,
    seed: u64,
) -> Result<tcpflow::PortTimeouts, SimError> {
    let bad = |what: String| SimError::bad(model, "port_timeouts", what);
    if t.sizes.is_empty() || t.sizes.len() != t.rate.len() {
        return Err(bad(format!(
            "needs as many rates as sizes, at least one: got {} sizes, {} rates",
            t.sizes.len(),
            t.rate.len()
        )));
    }
    if t.sizes[0] == 0 || t.sizes.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad("sizes must increase from 1 byte".to_string()));
    }
    if let Some(q) = t.rate.iter().find(|q| !(**q >= 0.0 && **q <= 1.0)) {
        return Err(bad(format!(
            "each rate must be a probability in [0, 1], got {q}"
        )));
    }
    Ok(tcpflow::PortTimeouts {
        sizes: t.sizes.clone(),
        rate: t.rate.clone(),
        t_rto,
        seed,
    })
}

/// PLogP's pair: two different nodes of the topology.
fn pair(model: &'static str, v: &[u64], nodes: u32) -> Result<[u32; 2], SimError> {
    match *v {
        [a, b] if a != b && a < nodes as u64 && b < nodes as u64 => Ok([a as u32, b as u32]),
        _ => Err(SimError::bad(
            model,
            "pair",
            format!("must be two different nodes below {nodes}, got {v:?}"),
        )),
    }
}

/// A per-byte cost as the models take it: finite, >= 0 and below 2^32 ps/B.
fn per_byte(model: &'static str, field: &str, x: PsPerByte) -> Result<time::PerByte, SimError> {
    let x = non_negative(model, field, x)?;
    time::PerByte::from_ps(x).ok_or_else(|| {
        SimError::bad(
            model,
            field,
            format!("must be below 2^32 ps per byte, got {x}"),
        )
    })
}

/// A finite number >= 0.
fn non_negative(model: &'static str, field: &str, x: f64) -> Result<f64, SimError> {
    if x >= 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(SimError::bad(
            model,
            field,
            format!("must be finite and >= 0, got {x}"),
        ))
    }
}

/// The table y(m) of `field` at `sizes`.
fn table(model: &'static str, field: &str, sizes: &[u64], y: &[Time]) -> Result<Table, SimError> {
    Table::new(sizes.to_vec(), y.to_vec()).map_err(|e| SimError::bad(model, field, e))
}

/// Efficiency tables: sizes increasing, one value per size in each table, each in (0, 1];
/// a fan-in table likewise, measured with at least 2 senders.
fn efficiency(model: &'static str, e: &Efficiency) -> Result<Efficiency, SimError> {
    unit_tables(
        model,
        "efficiency.sizes",
        &e.sizes,
        &[
            ("efficiency.exchange", &e.exchange),
            ("efficiency.duplex", &e.duplex),
        ],
    )?;
    if let Some(f) = &e.fanin {
        if f.peers < 2 {
            return Err(SimError::bad(
                model,
                "efficiency.fanin.peers",
                format!(
                    "must be >= 2 (the senders into a node it was measured with), got {}",
                    f.peers
                ),
            ));
        }
        tables(
            model,
            "efficiency.fanin.sizes",
            &f.sizes,
            &[("efficiency.fanin.e", &f.e)],
            tcpflow::FANIN_MAX,
        )?;
    }
    Ok(e.clone())
}

/// `sizes` non-empty and increasing; each table one value per size, every value in (0, 1].
fn unit_tables(
    model: &'static str,
    sizes_field: &str,
    sizes: &[u64],
    y: &[(&str, &[f64])],
) -> Result<(), SimError> {
    tables(model, sizes_field, sizes, y, 1.0)
}

/// `sizes` non-empty and increasing; each table one value per size, every value in
/// (0, `max`].
fn tables(
    model: &'static str,
    sizes_field: &str,
    sizes: &[u64],
    tables: &[(&str, &[f64])],
    max: f64,
) -> Result<(), SimError> {
    if sizes.is_empty() || sizes.windows(2).any(|w| w[0] >= w[1]) {
        return Err(SimError::bad(
            model,
            sizes_field,
            "must be a non-empty list of increasing sizes".to_string(),
        ));
    }
    for &(field, y) in tables {
        if y.len() != sizes.len() {
            return Err(SimError::bad(
                model,
                field,
                format!("has {} values for {} sizes", y.len(), sizes.len()),
            ));
        }
        if let Some(v) = y.iter().find(|&&v| !(v > 0.0 && v <= max)) {
            return Err(SimError::bad(
                model,
                field,
                format!("values must be in (0, {max}], got {v}"),
            ));
        }
    }
    Ok(())
}

/// The `buffer` of [`RtoRule::Buffer`], one capacity (bytes) per height h = 1..`heights`.
fn buffers(
    model: &'static str,
    given: Option<&[u64]>,
    heights: usize,
) -> Result<Vec<u64>, SimError> {
    let Some(given) = given else {
        return Err(SimError::bad(
            model,
            "buffer",
            "is required by rto_rule buffer: the port buffer capacity in bytes per height (network.buffer)",
        ));
    };
    if given.len() != 1 && given.len() != heights {
        return Err(SimError::bad(
            model,
            "buffer",
            format!(
                "needs one value or one per height h = 1..{heights}, got {}",
                given.len()
            ),
        ));
    }
    if let Some(i) = given.iter().position(|&x| x == 0) {
        return Err(SimError::bad(
            model,
            format!("buffer[{i}]"),
            "must be > 0 bytes",
        ));
    }
    Ok((0..heights)
        .map(|h| given[if given.len() == 1 { 0 } else { h }])
        .collect())
}

/// PlogPT's g(m), g_bidir(m) and RTO rule; the rule applies when eps_S, eps_T and d(h) are given.
fn plogpt_params(
    model: &'static str,
    p: &PlogptParams,
    topo: &Topology,
) -> Result<plogpt::PlogptParams, SimError> {
    let g_bidir = match &p.g_bidir {
        Some(gb) => Some(table(model, "g_bidir", &p.sizes, gb)?),
        None => None,
    };
    let eps_s = match p.eps_S {
        Some(x) => Some(non_negative(model, "eps_S", x)?),
        None => None,
    };
    let has_d = !topo
        .levels_bidir
        .as_ref()
        .unwrap_or(&topo.levels)
        .d
        .is_empty();
    let buffer = match p.rto_rule {
        RtoRule::Plogpt => None,
        RtoRule::Buffer => Some(buffers(model, p.buffer.as_deref(), topo.levels.b.len())?),
    };
    let rto = match (eps_s, p.eps_T) {
        (Some(eps_s), Some(eps_t)) if has_d => Some(Rto {
            t_rto: p.rto.unwrap_or(PS_PER_S / 5),
            eps_s,
            eps_t,
            buffer,
        }),
        _ => None,
    };
    Ok(plogpt::PlogptParams {
        L: p.L,
        g: table(model, "g", &p.sizes, &p.g)?,
        g_bidir,
        rto,
    })
}

/// The topology and rank placement of a contention model.
fn topology(
    schedule: &Schedule,
    model: &'static str,
    spec: &TopologySpec,
    common: &Common,
) -> Result<(Topology, Vec<u32>), SimError> {
    let topo = Topology::build(spec, model)?;
    let nodes = placement(
        common.rank_to_node.as_deref(),
        model,
        schedule.num_ranks(),
        &topo,
    )?;
    Ok((topo, nodes))
}

/// Simulate with `net`, under the incast rule when `common` has one.
fn sim<N: engine::Network>(
    schedule: &Schedule,
    model: &'static str,
    common: &Common,
    mut net: N,
    record_messages: bool,
) -> Result<Outcome, SimError> {
    let rendezvous = common.S;
    let cpu = match &common.cpu {
        None => None,
        Some(c) => engine::CpuShare::new(
            schedule.num_ranks() as u64,
            c.cores,
            &c.sizes,
            &c.o_s,
            &c.o_r,
        )
        .map_err(|(field, e)| SimError::bad(model, format!("cpu.{field}"), e))?,
    };
    let cpu = cpu.as_ref();
    let jitter = match &common.jitter {
        Some(j) if !(j.sigma >= 0.0 && j.sigma <= 10.0) => {
            return Err(SimError::bad(
                model,
                "jitter.sigma",
                format!("must be a spread in [0, 10], got {}", j.sigma),
            ))
        }
        Some(j) if j.sizes.len() != j.sigmas.len() => {
            return Err(SimError::bad(
                model,
                "jitter.sigmas",
                format!("{} values for {} sizes", j.sigmas.len(), j.sizes.len()),
            ))
        }
        Some(j) if j.sizes.windows(2).any(|w| w[0] >= w[1]) => {
            return Err(SimError::bad(
                model,
                "jitter.sizes",
                "must increase".to_string(),
            ))
        }
        Some(j) if j.sigmas.iter().any(|s| !(*s >= 0.0 && *s <= 10.0)) => {
            return Err(SimError::bad(
                model,
                "jitter.sigmas",
                "each must be a spread in [0, 10]".to_string(),
            ))
        }
        Some(j) => Some(Jitter::new(j)),
        None => None,
    };
    match &common.incast {
        None => {
            engine::simulate_noisy(schedule, &mut net, rendezvous, record_messages, cpu, jitter)
        }
        Some(p) => {
            let rule = IncastRule::new(p, model)?;
            let nodes = match &common.rank_to_node {
                Some(a) => a.iter().map(|&x| x as u32).collect(),
                None => (0..schedule.num_ranks()).collect(),
            };
            let mut wrapped = Incast::new(net, rule, nodes);
            engine::simulate_noisy(
                schedule,
                &mut wrapped,
                rendezvous,
                record_messages,
                cpu,
                jitter,
            )
        }
    }
}
