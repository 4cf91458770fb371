//! Engine errors raised as the classes of `commodel.errors`, one class per kind
//! of error, so Python code catches `commodel.errors.ModelError` etc. directly.

use commodel_engine::rank_ops::RankOutOfRange;
use commodel_engine::SimError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// The exception `commodel.errors.<class>` with `message`.
pub fn raise(class: &str, message: String) -> PyErr {
    Python::with_gil(|py| {
        let cls = py
            .import_bound("commodel.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.downcast_into::<PyType>().map_err(PyErr::from));
        match cls {
            Ok(t) => PyErr::from_type_bound(t, message),
            Err(e) => e,
        }
    })
}

/// A simulation error: `DeadlockError` for a deadlock, `ModelError` for an
/// unknown model or bad parameters.
pub fn sim_error(e: SimError) -> PyErr {
    let class = match &e {
        SimError::Deadlock(_) => "DeadlockError",
        SimError::UnknownModel(_) => "ModelError",
        SimError::BadParameter { .. } => "ModelError",
        SimError::TooManyRanks { .. } => "ModelError",
        SimError::Overflow(_) => "ModelError",
        SimError::Truncated { .. } => "ScheduleError",
        _ => "CommodelError",
    };
    raise(class, e.to_string())
}

/// A GOAL file that cannot be read or parsed.
pub fn goal_error(e: impl std::fmt::Display) -> PyErr {
    raise("GoalError", e.to_string())
}

/// A collective that cannot be generated.
pub fn collective_error(e: impl std::fmt::Display) -> PyErr {
    raise("CollectiveError", e.to_string())
}

/// A rank the schedule does not have.
pub fn rank_error(e: RankOutOfRange) -> PyErr {
    raise("ScheduleError", e.to_string())
}
