//! PyO3 bindings of commodel-engine: the private module `commodel._engine`.
//! Users import `commodel`; this crate only converts types and maps errors.

use pyo3::prelude::*;

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
