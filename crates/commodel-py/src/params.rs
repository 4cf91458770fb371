//! The engine's typed model parameters ([`ModelParams`]) built from the Python
//! dict the platform loader produces (`commodel.platform`'s converters): keys
//! and units as in `commodel_engine::params` (times integer ps, rates bytes/s,
//! per-byte costs ps/B). A missing field or a value of the wrong type raises
//! `commodel.errors.ModelError` naming the model and the field; values are
//! checked by the engine.

use crate::errors::sim_error;
use commodel_engine::params::{
    Common, CpuParams, Efficiency, FanIn, HockneyParams, IncastParams, IncastRow, JitterParams,
    LogGopsParams, MaxminParams, ModelParams, PlogpParams, PlogptParams, PortTimeoutTable,
    PsPerByte, RtoRule, TcpflowParams, TopologySpec, ZhuParams, MODELS,
};
use commodel_engine::SimError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

/// Longest repr of a bad value shown in a message.
const SHOW: usize = 40;

/// The parameters of `model` from the dict `d`.
pub fn model_params(model: &str, d: &Bound<'_, PyDict>) -> PyResult<ModelParams> {
    let Some(&name) = MODELS.iter().find(|&&m| m == model) else {
        return Err(sim_error(SimError::UnknownModel(model.to_string())));
    };
    let f = Fields {
        d: d.clone(),
        model: name,
        prefix: "",
    };
    Ok(match name {
        "loggops" => ModelParams::LogGops(LogGopsParams {
            L: f.uint("L")?,
            o: f.uint("o")?,
            g: f.uint("g")?,
            G: f.per_byte("G")?,
            O: f.per_byte("O")?,
            S: f.uint("S")?,
            cpu_cores: f.opt_uint("cpu_cores")?,
        }),
        "plogp" => ModelParams::Plogp(PlogpParams {
            L: f.uint("L")?,
            sizes: f.uints("sizes")?,
            g: f.uints("g")?,
            common: common(&f)?,
        }),
        "hockney" => ModelParams::Hockney(HockneyParams {
            alpha: f.uint("alpha")?,
            beta: f.per_byte("beta")?,
            common: common(&f)?,
        }),
        "plogpt" => ModelParams::Plogpt(PlogptParams {
            topology: topology(&f)?,
            L: f.uint("L")?,
            sizes: f.uints("sizes")?,
            g: f.uints("g")?,
            g_bidir: f.opt_uints("g_bidir")?,
            eps_S: f.opt_float("eps_S")?,
            eps_T: f.opt_uint("eps_T")?,
            rto: f.opt_uint("rto")?,
            rto_rule: rto_rule(&f)?,
            buffer: f.opt_uints("buffer")?,
            common: common(&f)?,
        }),
        "maxmin" | "maxmin-plain" => ModelParams::Maxmin(MaxminParams {
            topology: topology(&f)?,
            rtt_weights: f.flag("rtt_weights", name == "maxmin")?,
            common: common(&f)?,
        }),
        "tcpflow" => ModelParams::Tcpflow(TcpflowParams {
            topology: topology(&f)?,
            L: f.uint("L")?,
            sizes: f.uints("sizes")?,
            g: f.uints("g")?,
            efficiency: match f.dict("efficiency")? {
                None => None,
                Some(e) => Some(Efficiency {
                    sizes: e.uints("sizes")?,
                    exchange: e.floats("exchange")?,
                    duplex: e.floats("duplex")?,
                    fanin: match e.dict("fanin")? {
                        None => None,
                        Some(f) => Some(FanIn {
                            peers: f.uint("peers")?,
                            sizes: f.uints("sizes")?,
                            e: f.floats("e")?,
                        }),
                    },
                }),
            },
            fifo_limit: f.opt_uint("fifo_limit")?,
            rto: f.opt_uint("rto")?,
            rto_rule: rto_rule(&f)?,
            buffer: f.opt_uints("buffer")?,
            bucket: f.opt_uint("bucket")?,
            overhead: f.opt_uint("overhead")?,
            ack: f.opt_uint("ack")?,
            timeouts: f.opt_uints("timeouts")?,
            port_timeouts: match f.dict("port_timeouts")? {
                None => None,
                Some(t) => Some(PortTimeoutTable {
                    sizes: t.uints("sizes")?,
                    rate: t.floats("rate")?,
                }),
            },
            pair: f.opt_uints("pair")?,
            common: common(&f)?,
        }),
        _ => ModelParams::Zhu(ZhuParams {
            topology: topology(&f)?,
            asymmetric: f.flag("asymmetric", name == "zhu")?,
            common: common(&f)?,
        }),
    })
}

/// `rto_rule`: one of [`RtoRule::NAMES`] (absent: `plogpt`, eq. 14).
fn rto_rule(f: &Fields<'_>) -> PyResult<RtoRule> {
    let Some(v) = f.get("rto_rule")? else {
        return Ok(RtoRule::Plogpt);
    };
    let name = v
        .downcast::<PyString>()
        .ok()
        .map(|s| s.to_cow().map(|c| c.into_owned()));
    match name.transpose()?.as_deref().and_then(RtoRule::from_name) {
        Some(rule) => Ok(rule),
        None => Err(f.bad(
            "rto_rule",
            &format!(
                "must be one of {}, got {}",
                RtoRule::NAMES.join(", "),
                show(&v)
            ),
        )),
    }
}

fn common(f: &Fields<'_>) -> PyResult<Common> {
    Ok(Common {
        S: f.opt_uint("S")?,
        rank_to_node: f.opt_uints("rank_to_node")?,
        incast: match f.dict("incast")? {
            Some(i) => Some(incast(&i)?),
            None => None,
        },
        cpu: match f.dict("cpu")? {
            Some(c) => Some(CpuParams {
                cores: c.uint("cores")?,
                sizes: c.uints("sizes")?,
                o_s: c.uints("o_s")?,
                o_r: c.uints("o_r")?,
            }),
            None => None,
        },
        jitter: match f.dict("jitter")? {
            Some(j) => Some(JitterParams {
                sigma: j.float("sigma")?,
                seed: j.uint("seed")?,
                sizes: j.opt_uints("sizes")?.unwrap_or_default(),
                sigmas: j.opt_floats("sigmas")?.unwrap_or_default(),
            }),
            None => None,
        },
    })
}

fn incast(f: &Fields<'_>) -> PyResult<IncastParams> {
    let rows = f
        .list("table")?
        .ok_or_else(|| f.bad("table", "is missing"))?;
    let table = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let key = format!("table[{i}]");
            let shape = || f.bad(&key, "must be [n, M, [f_1, ..., f_k]]");
            let r = as_list(row).filter(|r| r.len() == 3).ok_or_else(shape)?;
            let n = uint_of(&r[0]).ok_or_else(|| f.bad(&key, "n must be an integer"))?;
            let m = uint_of(&r[1]).ok_or_else(|| f.bad(&key, "M must be an integer"))?;
            let probs = as_list(&r[2]).ok_or_else(|| f.bad(&key, "f must be a list"))?;
            let f_i = probs
                .iter()
                .map(|x| {
                    float_of(x).ok_or_else(|| {
                        f.bad(
                            &key,
                            &format!("probabilities must be numbers, got {}", show(x)),
                        )
                    })
                })
                .collect::<PyResult<Vec<f64>>>()?;
            Ok(IncastRow { n, m, f: f_i })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(IncastParams {
        levels: f.uints("levels")?,
        table,
        seed: f.opt_uint("seed")?.unwrap_or(0),
    })
}

fn topology(f: &Fields<'_>) -> PyResult<TopologySpec> {
    let t = f
        .dict("topology")?
        .ok_or_else(|| f.bad("topology", "is missing"))?;
    let kind = t.get("kind")?;
    let kind = kind.as_ref().and_then(|k| k.downcast::<PyString>().ok());
    let kind = match kind {
        Some(k) => k.to_cow()?.into_owned(),
        None => {
            return Err(t.bad(
                "kind",
                &format!(
                    "must name the kind of tree: {}",
                    TopologySpec::KINDS.join(", ")
                ),
            ))
        }
    };
    Ok(match kind.as_str() {
        "crossbar" => TopologySpec::Crossbar {
            nodes: t.uint("nodes")?,
            nic: t.float("nic")?,
            nic_bidir: t.opt_float("nic_bidir")?,
            latency: t.opt_uint("latency")?.unwrap_or(0),
            d: t.opt_uints("d")?,
        },
        "binary-tree" => TopologySpec::BinaryTree {
            nodes: t.opt_uint("nodes")?,
            b: t.floats("b")?,
            b_bidir: t.opt_floats("b_bidir")?,
            d: t.opt_uints("d")?,
            d_bidir: t.opt_uints("d_bidir")?,
            latency: t.opt_uints("latency")?,
        },
        "racks" => TopologySpec::Racks {
            racks: t.uints("racks")?,
            members: t.opt_uints("members")?,
            nic: t.float("nic")?,
            nic_bidir: t.opt_float("nic_bidir")?,
            nic_latency: t.opt_uint("nic_latency")?.unwrap_or(0),
            backbone: t.float("backbone")?,
            backbone_latency: t.opt_uint("backbone_latency")?.unwrap_or(0),
            backbone_saturation: t.opt_uint("backbone_saturation")?,
            d: t.opt_uints("d")?,
        },
        "leaf-spine" | "fat-tree" => TopologySpec::LeafSpine {
            leaves: t.uint("leaves")?,
            nodes_per_leaf: t.uint("nodes_per_leaf")?,
            nic: t.float("nic")?,
            oversubscription: t.opt_float("oversubscription")?,
            latency: t.opt_uint("latency")?.unwrap_or(0),
            backbone_saturation: t.opt_uint("backbone_saturation")?,
            d: t.opt_uints("d")?,
        },
        other => {
            let mut other = other.to_string();
            other.truncate(SHOW);
            return Err(t.bad(
                "kind",
                &format!(
                    "is {other:?}; known kinds: {}",
                    TopologySpec::KINDS.join(", ")
                ),
            ));
        }
    })
}

/// The fields of one dict of model `model`; `prefix` names the dict in messages
/// (`topology.`, `incast.`).
struct Fields<'py> {
    d: Bound<'py, PyDict>,
    model: &'static str,
    prefix: &'static str,
}

impl<'py> Fields<'py> {
    fn bad(&self, key: &str, problem: &str) -> PyErr {
        sim_error(SimError::bad(
            self.model,
            format!("{}{key}", self.prefix),
            problem,
        ))
    }

    /// The value of `key`; None when absent or None.
    fn get(&self, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.d.get_item(key)?.filter(|v| !v.is_none()))
    }

    /// The value of `key` that `conv` converts; None when absent or None.
    fn opt_scalar<T>(
        &self,
        key: &str,
        conv: fn(&Bound<'_, PyAny>) -> Option<T>,
        what: &str,
    ) -> PyResult<Option<T>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v) => conv(&v)
                .map(Some)
                .ok_or_else(|| self.bad(key, &format!("must be {what}, got {}", show(&v)))),
        }
    }

    fn uint(&self, key: &str) -> PyResult<u64> {
        self.opt_uint(key)?
            .ok_or_else(|| self.bad(key, "is missing"))
    }

    fn opt_uint(&self, key: &str) -> PyResult<Option<u64>> {
        self.opt_scalar(key, uint_of, "a non-negative integer")
    }

    fn float(&self, key: &str) -> PyResult<f64> {
        self.opt_float(key)?
            .ok_or_else(|| self.bad(key, "is missing"))
    }

    fn opt_float(&self, key: &str) -> PyResult<Option<f64>> {
        self.opt_scalar(key, float_of, "a number")
    }

    /// A per-byte cost (ps/B): an int or a float. Every per-byte field reaches
    /// the engine through here.
    fn per_byte(&self, key: &str) -> PyResult<PsPerByte> {
        self.float(key)
    }

    fn flag(&self, key: &str, default: bool) -> PyResult<bool> {
        match self.get(key)? {
            None => Ok(default),
            Some(v) => match v.downcast::<PyBool>() {
                Ok(b) => Ok(b.is_true()),
                Err(_) => Err(self.bad(key, &format!("must be true or false, got {}", show(&v)))),
            },
        }
    }

    fn list(&self, key: &str) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v) => as_list(&v)
                .map(Some)
                .ok_or_else(|| self.bad(key, &format!("must be a list, got {}", show(&v)))),
        }
    }

    /// A list whose items `item` converts; errors name `key[i]`.
    fn items<T>(
        &self,
        key: &str,
        item: fn(&Bound<'_, PyAny>) -> Option<T>,
        what: &str,
    ) -> PyResult<Option<Vec<T>>> {
        let Some(items) = self.list(key)? else {
            return Ok(None);
        };
        items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                item(x).ok_or_else(|| {
                    self.bad(
                        &format!("{key}[{i}]"),
                        &format!("must be {what}, got {}", show(x)),
                    )
                })
            })
            .collect::<PyResult<Vec<T>>>()
            .map(Some)
    }

    fn opt_uints(&self, key: &str) -> PyResult<Option<Vec<u64>>> {
        self.items(key, uint_of, "a non-negative integer")
    }

    fn uints(&self, key: &str) -> PyResult<Vec<u64>> {
        self.opt_uints(key)?
            .ok_or_else(|| self.bad(key, "is missing"))
    }

    fn opt_floats(&self, key: &str) -> PyResult<Option<Vec<f64>>> {
        self.items(key, float_of, "a number")
    }

    fn floats(&self, key: &str) -> PyResult<Vec<f64>> {
        self.opt_floats(key)?
            .ok_or_else(|| self.bad(key, "is missing"))
    }

    /// The dict `key`, with this model, prefixed by `key.` in messages.
    fn dict(&self, key: &'static str) -> PyResult<Option<Fields<'py>>> {
        let prefix = match key {
            "topology" => "topology.",
            "efficiency" => "efficiency.",
            _ => "incast.",
        };
        match self.get(key)? {
            None => Ok(None),
            Some(v) => match v.downcast_into::<PyDict>() {
                Ok(d) => Ok(Some(Fields {
                    d,
                    model: self.model,
                    prefix,
                })),
                Err(e) => Err(self.bad(
                    key,
                    &format!("must be a dict, got {}", show(&e.into_inner())),
                )),
            },
        }
    }
}

/// A non-negative integer (not a bool, not a float).
fn uint_of(v: &Bound<'_, PyAny>) -> Option<u64> {
    if v.is_instance_of::<PyBool>() {
        return None;
    }
    v.extract::<u64>().ok()
}

/// A number: an int or a float (not a bool).
fn float_of(v: &Bound<'_, PyAny>) -> Option<f64> {
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyString>() {
        return None;
    }
    v.extract::<f64>().ok()
}

fn as_list<'py>(v: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(l) = v.downcast::<PyList>() {
        return Some(l.iter().collect());
    }
    v.downcast::<PyTuple>().ok().map(|t| t.iter().collect())
}

/// The repr of a bad value, at most [`SHOW`] characters.
fn show(v: &Bound<'_, PyAny>) -> String {
    let r = v
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    if r.chars().count() > SHOW {
        let cut: String = r.chars().take(SHOW).collect();
        format!("{cut}...")
    } else {
        r
    }
}
