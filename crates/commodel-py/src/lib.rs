//! PyO3 bindings of commodel-engine: the private module `commodel._engine`.
//!
//! Users import `commodel`; this crate only converts types ([`params`] builds
//! the engine's typed model parameters from Python dicts) and raises each
//! engine error as one class of `commodel.errors` ([`errors`]). Times cross
//! as integer picoseconds.

// #[pyfunction] wraps results in a conversion clippy flags as useless.
#![allow(clippy::useless_conversion)]

mod columns;
mod errors;
mod params;
mod sinks;

use commodel_engine::collectives::{
    self, CollectiveOptions, OptionKind, OptionValue, WriteGoalError,
};
use commodel_engine::rank_ops::rank_ops;
use commodel_engine::{goal, predict, schedule};
use errors::{collective_error, goal_error, raise, rank_error, sim_error};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::Path;

/// A communication schedule (GOAL): ranks, operations and dependencies.
#[pyclass(module = "commodel._engine", frozen)]
struct Schedule {
    inner: schedule::Schedule,
}

#[pymethods]
impl Schedule {
    /// Number of ranks.
    #[getter]
    fn num_ranks(&self) -> u32 {
        self.inner.num_ranks()
    }
    /// Number of operations (send, recv, calc) over all ranks.
    #[getter]
    fn num_ops(&self) -> usize {
        self.inner.num_ops()
    }
    /// Total bytes of all send operations.
    #[getter]
    fn bytes_sent(&self) -> u64 {
        self.inner.bytes_sent()
    }
    /// The schedule as GOAL text that LogGOPSim's txt2bin accepts.
    fn to_goal(&self, py: Python<'_>) -> String {
        py.allow_threads(|| goal::write(&self.inner))
    }
    /// Write the schedule as GOAL text to `path`.
    fn write_goal(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        py.allow_threads(|| -> std::io::Result<()> {
            let f = std::fs::File::create(path)?;
            let mut w = std::io::BufWriter::new(f);
            goal::write_to(&self.inner, &mut w)?;
            std::io::Write::flush(&mut w)
        })
        .map_err(|e| raise("CommodelError", format!("{path}: cannot write: {e}")))
    }
    /// The operations of `rank` in local order, for executing the schedule for real
    /// (`commodel measure pattern`): tuples `(kind, peer, tag, size, label, requires,
    /// irequires)` with kind "send"/"recv"/"calc", peer and tag -1 for any, size in bytes
    /// (calc: nanoseconds), and the local indices of the operations this one requires /
    /// irequires.
    fn rank_ops<'py>(&self, py: Python<'py>, rank: u32) -> PyResult<Bound<'py, PyList>> {
        let ops = rank_ops(&self.inner, rank).map_err(rank_error)?;
        let any = |v: Option<u32>| v.map_or(-1, i64::from);
        let out = PyList::empty_bound(py);
        for op in ops {
            let item = (
                op.kind.keyword(),
                any(op.peer),
                any(op.tag),
                op.size,
                op.label,
                op.requires,
                op.irequires,
            );
            let obj: PyObject = item.into_py(py);
            out.append(obj)?;
        }
        Ok(out)
    }
    fn __repr__(&self) -> String {
        format!(
            "<Schedule ranks={} ops={}>",
            self.inner.num_ranks(),
            self.inner.num_ops()
        )
    }
}

/// Parse GOAL text; `filename` is used in error messages.
#[pyfunction]
#[pyo3(signature = (text, filename = "<string>"))]
fn parse_goal(py: Python<'_>, text: &str, filename: &str) -> PyResult<Schedule> {
    let inner = py
        .allow_threads(|| goal::parse(text, filename))
        .map_err(goal_error)?;
    Ok(Schedule { inner })
}

/// Read a schedule file: GOAL text (streamed) or LogGOPSim's binary (`txt2bin` output).
#[pyfunction]
fn read_goal(py: Python<'_>, path: &str) -> PyResult<Schedule> {
    let inner = py
        .allow_threads(|| goal::read(Path::new(path)))
        .map_err(goal_error)?;
    Ok(Schedule { inner })
}

/// Generate a collective schedule (see `collective_names()`); the keyword arguments are
/// the options of `collective_options()`.
#[pyfunction]
#[pyo3(signature = (name, ranks, size, **options))]
fn collective(
    py: Python<'_>,
    name: &str,
    ranks: u32,
    size: u64,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Schedule> {
    let opts = collective_opts(options)?;
    let inner = py
        .allow_threads(|| collectives::generate(name, ranks, size, &opts))
        .map_err(collective_error)?;
    Ok(Schedule { inner })
}

/// The collective options given as keyword arguments, each converted as its row of
/// `collectives::OPTIONS` says (None: the generator's default where it has one).
fn collective_opts(options: Option<&Bound<'_, PyDict>>) -> PyResult<CollectiveOptions> {
    let mut opts = CollectiveOptions::default();
    for (key, value) in options.into_iter().flatten() {
        let key: String = key.extract()?;
        let kind = collectives::OPTIONS
            .iter()
            .find(|s| s.name == key)
            .map(|s| s.kind);
        let value = if value.is_none() {
            OptionValue::Unset
        } else if kind == Some(OptionKind::Rate) {
            OptionValue::Rate(
                value
                    .extract::<f64>()
                    .map_err(|_| collective_error(format!("collective: {key} must be a number")))?,
            )
        } else {
            OptionValue::Whole(value.extract::<u64>().map_err(|_| {
                collective_error(format!("collective: {key} must be a whole number >= 0"))
            })?)
        };
        opts.set(&key, value)
            .map_err(|e| collective_error(format!("collective: {e}")))?;
    }
    Ok(opts)
}

/// Every collective option: `(name, kind, min, max, default, metavar, help)`, kind one of
/// "u32", "u64", "bytes", "f64", default None where the generator decides.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn collective_options(
    py: Python<'_>,
) -> Vec<(
    &'static str,
    &'static str,
    u64,
    u64,
    PyObject,
    &'static str,
    &'static str,
)> {
    collectives::OPTIONS
        .iter()
        .map(|s| {
            let default = match s.default {
                OptionValue::Unset => py.None(),
                OptionValue::Whole(x) => x.into_py(py),
                OptionValue::Rate(x) => x.into_py(py),
            };
            (
                s.name,
                s.kind.name(),
                s.min,
                s.kind.max(),
                default,
                s.metavar,
                s.help,
            )
        })
        .collect()
}

/// Generate a collective like `collective` and write it as GOAL text rank by rank
/// while generating (memory does not grow with the schedule): to the file `path`
/// (created only once the schedule is known to be valid), or else through `write`,
/// a callable taking `bytes`, in chunks. Returns `(num_ranks, num_ops, bytes_sent)`.
#[pyfunction]
#[pyo3(signature = (name, ranks, size, path = None, write = None, **options))]
fn write_collective(
    py: Python<'_>,
    name: &str,
    ranks: u32,
    size: u64,
    path: Option<&str>,
    write: Option<PyObject>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<(u32, u64, u64)> {
    let opts = collective_opts(options)?;
    let summary = match (path, write) {
        (Some(path), None) => py
            .allow_threads(|| {
                collectives::write_goal(name, ranks, size, &opts, sinks::LazyFile::new(path))
            })
            .map_err(|e| match e {
                WriteGoalError::Io(e) => {
                    raise("CommodelError", format!("{path}: cannot write: {e}"))
                }
                e => collective_error(e),
            })?,
        (None, Some(write)) => {
            let mut out = sinks::PyWrite::new(write);
            py.allow_threads(|| collectives::write_goal(name, ranks, size, &opts, &mut out))
                .map_err(|e| match (e, out.error.take()) {
                    (_, Some(raised)) => raised,
                    (WriteGoalError::Io(e), None) => {
                        raise("CommodelError", format!("cannot write: {e}"))
                    }
                    (e, None) => collective_error(e),
                })?
        }
        _ => {
            return Err(raise(
                "CommodelError",
                "write_collective: give exactly one of path and write".to_string(),
            ))
        }
    };
    Ok((summary.num_ranks, summary.num_ops, summary.bytes_sent))
}

/// Every collective name with a one-line summary.
#[pyfunction]
fn collective_names() -> Vec<(&'static str, &'static str)> {
    collectives::catalog()
        .iter()
        .map(|c| (c.name, c.summary))
        .collect()
}

/// Open MPI 4.1.4's fixed decision as the engine's composed collectives use it (bcast,
/// gather, reduce), or None.
#[pyfunction]
fn fixed_decision(collective: &str, p: u32, size: u64) -> Option<u32> {
    collectives::fixed_decision(collective, p, size)
}

/// Names of the models `simulate` knows.
#[pyfunction]
fn model_names() -> Vec<&'static str> {
    predict::MODELS.to_vec()
}

/// Simulate `schedule` under `model` with `params` (a dict, integer
/// picoseconds; see docs/models.md). Returns a dict with `model`,
/// `makespan_ps`, `finish_ps` (per rank), `events`, `messages` (a
/// `MessageColumns`, see columns.rs) and `rto_events`.
#[pyfunction]
#[pyo3(signature = (schedule, model, params, record_messages = true))]
fn simulate<'py>(
    py: Python<'py>,
    schedule: &Schedule,
    model: &str,
    params: &Bound<'py, PyDict>,
    record_messages: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let params = params::model_params(model, params)?;
    let out = py
        .allow_threads(|| predict::run(&schedule.inner, &params, record_messages))
        .map_err(sim_error)?;
    let d = PyDict::new_bound(py);
    d.set_item("model", out.model)?;
    d.set_item("makespan_ps", out.makespan)?;
    d.set_item("finish_ps", &out.finish)?;
    d.set_item("events", out.events)?;
    d.set_item("slowest_rank", out.slowest_rank())?;
    let messages = Bound::new(py, columns::MessageColumns::new(out.messages))?;
    d.set_item("messages", messages)?;
    let rtos = PyList::empty_bound(py);
    for r in &out.rto_events {
        let e = PyDict::new_bound(py);
        e.set_item("src", r.src)?;
        e.set_item("dst", r.dst)?;
        e.set_item("bytes", r.bytes)?;
        e.set_item("tag", tag_to_py(py, r.tag))?;
        e.set_item("at_ps", r.at)?;
        e.set_item("delay_ps", r.delay)?;
        rtos.append(e)?;
    }
    d.set_item("rto_events", rtos)?;
    Ok(d)
}

fn tag_to_py(py: Python<'_>, tag: u32) -> PyObject {
    if tag == commodel_engine::ANY {
        (-1i64).into_py(py)
    } else {
        tag.into_py(py)
    }
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Schedule>()?;
    m.add_class::<columns::MessageColumns>()?;
    m.add_function(wrap_pyfunction!(parse_goal, m)?)?;
    m.add_function(wrap_pyfunction!(read_goal, m)?)?;
    m.add_function(wrap_pyfunction!(collective, m)?)?;
    m.add_function(wrap_pyfunction!(collective_names, m)?)?;
    m.add_function(wrap_pyfunction!(collective_options, m)?)?;
    m.add_function(wrap_pyfunction!(write_collective, m)?)?;
    m.add_function(wrap_pyfunction!(model_names, m)?)?;
    m.add_function(wrap_pyfunction!(fixed_decision, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    Ok(())
}
