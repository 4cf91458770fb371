//! PyO3 bindings of commodel-engine: the private module `commodel._engine`.
//!
//! Users import `commodel`; this crate only converts types and maps each
//! engine error to one Python exception (all derive from `EngineError`).
//! Times cross as integer picoseconds.

// pyo3 0.22's create_exception! expands a cfg on its own `gil-refs` feature.
#![allow(unexpected_cfgs)]
// #[pyfunction] wraps results in a conversion clippy flags as useless.
#![allow(clippy::useless_conversion)]

mod columns;

use commodel_engine::collectives::{self, CollectiveOptions};
use commodel_engine::{goal, predict, schedule, SimError};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::Path;

create_exception!(
    _engine,
    EngineError,
    PyException,
    "Base of every error raised by the engine."
);
create_exception!(
    _engine,
    GoalError,
    EngineError,
    "A GOAL file could not be read (file:line:column in the message)."
);
create_exception!(
    _engine,
    ScheduleError,
    EngineError,
    "A schedule is structurally invalid."
);
create_exception!(
    _engine,
    DeadlockError,
    EngineError,
    "A schedule cannot finish; the message lists stuck ranks and labels."
);
create_exception!(
    _engine,
    ModelError,
    EngineError,
    "Unknown model or invalid model parameters."
);
create_exception!(
    _engine,
    CollectiveError,
    EngineError,
    "A collective schedule could not be generated."
);

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
        .map_err(|e| EngineError::new_err(format!("{path}: cannot write: {e}")))
    }
    /// The operations of `rank` in local order, for executing the schedule for real
    /// (`commodel measure pattern`): tuples `(kind, peer, tag, size, label, requires,
    /// irequires)` with kind "send"/"recv"/"calc", peer and tag -1 for any, size in bytes
    /// (calc: nanoseconds), and the local indices of the operations this one requires /
    /// irequires.
    fn rank_ops<'py>(&self, py: Python<'py>, rank: u32) -> PyResult<Bound<'py, PyList>> {
        let s = &self.inner;
        if rank >= s.num_ranks() {
            return Err(ScheduleError::new_err(format!(
                "rank {rank} out of range: the schedule has {} ranks",
                s.num_ranks()
            )));
        }
        let ids = s.ops_of(rank);
        let first = ids.start;
        let n = (ids.end - ids.start) as usize;
        let mut requires: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut irequires: Vec<Vec<u32>> = vec![Vec::new(); n];
        for b in ids.clone() {
            for &a in s.requirers(b) {
                requires[(a - first) as usize].push(b - first);
            }
            for &a in s.irequirers(b) {
                irequires[(a - first) as usize].push(b - first);
            }
        }
        let any = |v: u32| -> i64 {
            if v == commodel_engine::ANY {
                -1
            } else {
                i64::from(v)
            }
        };
        let out = PyList::empty_bound(py);
        for (i, id) in ids.enumerate() {
            let item = (
                s.kind(id).keyword(),
                any(s.peer(id)),
                any(s.tag(id)),
                s.size(id),
                s.label(id),
                requires[i].clone(),
                irequires[i].clone(),
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
        .map_err(|e| GoalError::new_err(e.to_string()))?;
    Ok(Schedule { inner })
}

/// Read a GOAL file.
#[pyfunction]
fn read_goal(py: Python<'_>, path: &str) -> PyResult<Schedule> {
    let inner = py
        .allow_threads(|| goal::read(Path::new(path)))
        .map_err(|e| GoalError::new_err(e.to_string()))?;
    Ok(Schedule { inner })
}

/// Generate a collective schedule (see `collective_names()`).
#[pyfunction]
#[pyo3(signature = (name, ranks, size, root = 0, seed = 0, segment = None, degree = 1, splits = 2, max_requests = 0, reduce_ns_per_byte = 0.0))]
#[allow(clippy::too_many_arguments)]
fn collective(
    py: Python<'_>,
    name: &str,
    ranks: u32,
    size: u64,
    root: u32,
    seed: u64,
    segment: Option<u64>,
    degree: u32,
    splits: u32,
    max_requests: u32,
    reduce_ns_per_byte: f64,
) -> PyResult<Schedule> {
    let opts = CollectiveOptions {
        root,
        seed,
        segment,
        degree,
        splits,
        max_requests,
        reduce_ns_per_byte,
    };
    let inner = py
        .allow_threads(|| collectives::generate(name, ranks, size, &opts))
        .map_err(|e| CollectiveError::new_err(e.to_string()))?;
    Ok(Schedule { inner })
}

/// Every collective name with a one-line summary.
#[pyfunction]
fn collective_names() -> Vec<(&'static str, &'static str)> {
    collectives::catalog()
        .iter()
        .map(|c| (c.name, c.summary))
        .collect()
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
    let json: String = py
        .import_bound("json")?
        .call_method1("dumps", (params,))?
        .extract()?;
    let value: serde_json::Value = serde_json::from_str(&json)
        .map_err(|e| ModelError::new_err(format!("model {model}: bad parameters: {e}")))?;
    let out = py
        .allow_threads(|| predict::run(&schedule.inner, model, &value, record_messages))
        .map_err(|e| match e {
            SimError::Deadlock(d) => DeadlockError::new_err(d.to_string()),
            SimError::Model(m) => ModelError::new_err(m),
        })?;
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
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Schedule>()?;
    m.add_class::<columns::MessageColumns>()?;
    m.add_function(wrap_pyfunction!(parse_goal, m)?)?;
    m.add_function(wrap_pyfunction!(read_goal, m)?)?;
    m.add_function(wrap_pyfunction!(collective, m)?)?;
    m.add_function(wrap_pyfunction!(collective_names, m)?)?;
    m.add_function(wrap_pyfunction!(model_names, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add("EngineError", py.get_type_bound::<EngineError>())?;
    m.add("GoalError", py.get_type_bound::<GoalError>())?;
    m.add("ScheduleError", py.get_type_bound::<ScheduleError>())?;
    m.add("DeadlockError", py.get_type_bound::<DeadlockError>())?;
    m.add("ModelError", py.get_type_bound::<ModelError>())?;
    m.add("CollectiveError", py.get_type_bound::<CollectiveError>())?;
    Ok(())
}
