//! One entry point for every model: `run(schedule, model, params)`.
//!
//! Parameters come as a JSON object (the bindings convert the Python dict the
//! platform loader built). All times are integer picoseconds; per-byte costs
//! picoseconds per byte. Errors name the model and the field.
//!
//! | model | params |
//! |---|---|
//! | `loggops` | `L`, `o`, `g` (ps), `G`, `O` (ps/B), `S` (B) |
//! | `plogp` | `L` (ps), `sizes` (B), `g` (ps), optional `o_s`, `o_r` (ps, reported only), `S` (B or null) |
//! | `hockney` | `alpha` (ps), `beta` (ps/B, float), `S` (B or null) |
//! | `plogpt` | `topology` (see [`crate::topology`]), optional `rank_to_node`, `L` (ps), `sizes` (B), `g` (ps), optional `g_bidir` (ps), `S`; RTO rule when `eps_S` (float), `eps_T` (ps) and the topology's `d` are given: `rto` (ps, default 200 ms) |
//! | `maxmin` | `topology`, optional `rank_to_node`, `rtt_weights` (bool, default true), `S` |
//! | `maxmin-plain` | as `maxmin`, `rtt_weights` false by default |
//! | `zhu` | `topology`, optional `rank_to_node`, `asymmetric` (bool, default true), `S` |
//! | `zhu-fair` | as `zhu`, `asymmetric` false by default |
//!
//! Every message-level model (all but `loggops`) also takes an optional `incast` object: the
//! stochastic many-to-one rule of [`crate::contention::incast`].

use crate::contention::incast::{Incast, IncastParams};
use crate::contention::maxmin::MaxminNet;
use crate::contention::plogpt::{PlogptNet, PlogptParams, Rto};
use crate::engine;
use crate::loggops::{self, LogGops};
use crate::models::{Hockney, NicNetwork, PLogP, Table};
use crate::outcome::{Outcome, SimError};
use crate::schedule::Schedule;
use crate::time::PS_PER_S;
use crate::topology::{placement, Topology};
use serde_json::Value;

/// Names of the models [`run`] knows.
pub const MODELS: &[&str] = &[
    "loggops",
    "plogp",
    "hockney",
    "plogpt",
    "maxmin",
    "maxmin-plain",
    "zhu",
    "zhu-fair",
];

fn err(model: &str, field: &str, what: &str) -> SimError {
    SimError::Model(format!("model {model}: parameter `{field}` {what}"))
}

/// Read an unsigned integer field.
pub fn uint(p: &Value, model: &str, field: &str) -> Result<u64, SimError> {
    match p.get(field) {
        None => Err(err(model, field, "is missing")),
        Some(v) => v.as_u64().ok_or_else(|| {
            err(
                model,
                field,
                &format!("must be a non-negative integer, got {v}"),
            )
        }),
    }
}

/// Read an optional unsigned integer field (absent or null: None).
pub fn opt_uint(p: &Value, model: &str, field: &str) -> Result<Option<u64>, SimError> {
    match p.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => uint(p, model, field).map(Some),
    }
}

/// Read a non-negative float field.
pub fn float(p: &Value, model: &str, field: &str) -> Result<f64, SimError> {
    match p.get(field).and_then(|v| v.as_f64()) {
        Some(x) if x >= 0.0 && x.is_finite() => Ok(x),
        Some(x) => Err(err(
            model,
            field,
            &format!("must be finite and >= 0, got {x}"),
        )),
        None => Err(err(model, field, "is missing or not a number")),
    }
}

/// Read a list of unsigned integers.
pub fn uints(p: &Value, model: &str, field: &str) -> Result<Vec<u64>, SimError> {
    let arr = p
        .get(field)
        .and_then(|v| v.as_array())
        .ok_or_else(|| err(model, field, "is missing or not a list"))?;
    arr.iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_u64().ok_or_else(|| {
                err(
                    model,
                    &format!("{field}[{i}]"),
                    &format!("must be a non-negative integer, got {v}"),
                )
            })
        })
        .collect()
}

/// Simulate `schedule` under `model` with `params` (see the module table).
pub fn run(
    schedule: &Schedule,
    model: &str,
    params: &Value,
    record_messages: bool,
) -> Result<Outcome, SimError> {
    if !params.is_object() {
        return Err(SimError::Model(format!(
            "model {model}: parameters must be an object"
        )));
    }
    match model {
        "loggops" => {
            let p = LogGops {
                L: uint(params, model, "L")?,
                o: uint(params, model, "o")?,
                g: uint(params, model, "g")?,
                G: uint(params, model, "G")?,
                O: uint(params, model, "O")?,
                S: uint(params, model, "S")?,
            };
            loggops::simulate(schedule, &p, record_messages)
        }
        "plogp" => {
            let sizes = uints(params, model, "sizes")?;
            let g = uints(params, model, "g")?;
            let table = Table::new(sizes, g).map_err(|e| err(model, "g", &e))?;
            let cost = PLogP {
                L: uint(params, model, "L")?,
                g: table,
            };
            let net = NicNetwork::new(cost, schedule.num_ranks());
            sim(schedule, model, params, net, record_messages)
        }
        "hockney" => {
            let cost = Hockney {
                alpha: uint(params, model, "alpha")?,
                beta: float(params, model, "beta")?,
            };
            let net = NicNetwork::new(cost, schedule.num_ranks());
            sim(schedule, model, params, net, record_messages)
        }
        "plogpt" => {
            let (topo, nodes) = topology(schedule, model, params)?;
            let sizes = uints(params, model, "sizes")?;
            let g = uints(params, model, "g")?;
            let table = Table::new(sizes.clone(), g).map_err(|e| err(model, "g", &e))?;
            let g_bidir = match params.get("g_bidir") {
                None | Some(Value::Null) => None,
                Some(_) => {
                    let gb = uints(params, model, "g_bidir")?;
                    Some(Table::new(sizes, gb).map_err(|e| err(model, "g_bidir", &e))?)
                }
            };
            let eps_s = match params.get("eps_S") {
                None | Some(Value::Null) => None,
                Some(_) => Some(float(params, model, "eps_S")?),
            };
            let eps_t = opt_uint(params, model, "eps_T")?;
            let has_d = !topo
                .levels_bidir
                .as_ref()
                .unwrap_or(&topo.levels)
                .d
                .is_empty();
            let rto = match (eps_s, eps_t) {
                (Some(eps_s), Some(eps_t)) if has_d => Some(Rto {
                    t_rto: opt_uint(params, model, "rto")?.unwrap_or(PS_PER_S / 5),
                    eps_s,
                    eps_t,
                }),
                _ => None,
            };
            let p = PlogptParams {
                L: uint(params, model, "L")?,
                g: table,
                g_bidir,
                rto,
            };
            let net = PlogptNet::new(topo, nodes, p);
            sim(schedule, model, params, net, record_messages)
        }
        "maxmin" | "maxmin-plain" => {
            let (topo, nodes) = topology(schedule, model, params)?;
            let rtt = match params.get("rtt_weights") {
                None | Some(Value::Null) => model == "maxmin",
                Some(Value::Bool(b)) => *b,
                Some(v) => {
                    return Err(err(
                        model,
                        "rtt_weights",
                        &format!("must be true or false, got {v}"),
                    ))
                }
            };
            let net = MaxminNet::new(topo, nodes, rtt);
            sim(schedule, model, params, net, record_messages)
        }
        "zhu" | "zhu-fair" => {
            let (topo, nodes) = topology(schedule, model, params)?;
            let asym = match params.get("asymmetric") {
                None | Some(Value::Null) => model == "zhu",
                Some(Value::Bool(b)) => *b,
                Some(v) => {
                    return Err(err(
                        model,
                        "asymmetric",
                        &format!("must be true or false, got {v}"),
                    ))
                }
            };
            let net = MaxminNet::zhu(topo, nodes, asym);
            sim(schedule, model, params, net, record_messages)
        }
        other => Err(SimError::Model(format!(
            "unknown model `{other}`; known models: {}",
            MODELS.join(", ")
        ))),
    }
}

/// The topology and rank placement of a contention model.
fn topology(
    schedule: &Schedule,
    model: &str,
    params: &Value,
) -> Result<(Topology, Vec<u32>), SimError> {
    let spec = params
        .get("topology")
        .ok_or_else(|| err(model, "topology", "is missing"))?;
    let topo = Topology::from_json(spec, model)?;
    let nodes = placement(params, model, schedule.num_ranks(), &topo)?;
    Ok((topo, nodes))
}

/// Simulate with `net`, under the incast rule when `params` has an `incast` object.
fn sim<N: engine::Network>(
    schedule: &Schedule,
    model: &str,
    params: &Value,
    mut net: N,
    record_messages: bool,
) -> Result<Outcome, SimError> {
    let rendezvous = opt_uint(params, model, "S")?;
    match params.get("incast") {
        None | Some(Value::Null) => {
            engine::simulate(schedule, &mut net, rendezvous, record_messages)
        }
        Some(v) => {
            let p = IncastParams::from_json(v, model)?;
            let nodes = match params.get("rank_to_node").and_then(|r| r.as_array()) {
                Some(a) => a.iter().map(|x| x.as_u64().unwrap_or(0) as u32).collect(),
                None => (0..schedule.num_ranks()).collect(),
            };
            let mut wrapped = Incast::new(net, p, nodes);
            engine::simulate(schedule, &mut wrapped, rendezvous, record_messages)
        }
    }
}
