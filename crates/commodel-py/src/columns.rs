//! The delivered messages of a simulation, handed to Python column by column.
//!
//! `simulate` returns a [`MessageColumns`] instead of one Python object per
//! message: it keeps the engine's records and copies one field of a range of
//! rows at a time into a `bytes` object of native-endian 8-byte integers, which
//! Python reads with `numpy.frombuffer` without a per-message object. Writers
//! (JSON, Parquet, the Gantt chart) walk the rows in chunks, so their memory does
//! not grow with the number of messages.

use commodel_engine::MessageRecord;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The fields, in the order of docs/formats.md: `src`, `dst`, `bytes` (u64),
/// `tag` (i64, -1 for any tag), `start_ps`, `end_ps` (u64 picoseconds: the send
/// started, the matching receive completed) and `rto` (u64, 1 if a
/// retransmission timeout delayed the message, else 0).
pub const FIELDS: [&str; 7] = ["src", "dst", "bytes", "tag", "start_ps", "end_ps", "rto"];

/// The messages of one simulation as columns of 8-byte integers.
#[pyclass(module = "commodel._engine", frozen)]
pub struct MessageColumns {
    records: Vec<MessageRecord>,
}

impl MessageColumns {
    pub fn new(records: Vec<MessageRecord>) -> Self {
        MessageColumns { records }
    }
}

fn field_value(field: usize) -> fn(&MessageRecord) -> [u8; 8] {
    match field {
        0 => |m| u64::from(m.src).to_ne_bytes(),
        1 => |m| u64::from(m.dst).to_ne_bytes(),
        2 => |m| m.bytes.to_ne_bytes(),
        3 => |m| {
            let tag = if m.tag == commodel_engine::ANY {
                -1
            } else {
                i64::from(m.tag)
            };
            tag.to_ne_bytes()
        },
        4 => |m| m.start.to_ne_bytes(),
        5 => |m| m.end.to_ne_bytes(),
        _ => |m| u64::from(m.rto).to_ne_bytes(),
    }
}

#[pymethods]
impl MessageColumns {
    /// The field names `column` accepts, in order.
    #[classattr]
    fn fields() -> Vec<&'static str> {
        FIELDS.to_vec()
    }
    fn __len__(&self) -> usize {
        self.records.len()
    }
    /// Rows `start..stop` (clamped to the number of messages) of `field` as
    /// native-endian 8-byte integers: uint64, except `tag` int64.
    #[pyo3(signature = (field, start = 0, stop = None))]
    fn column<'py>(
        &self,
        py: Python<'py>,
        field: &str,
        start: usize,
        stop: Option<usize>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let index = FIELDS.iter().position(|f| *f == field).ok_or_else(|| {
            PyValueError::new_err(format!(
                "no message field {:?}; fields: {}",
                field.chars().take(40).collect::<String>(),
                FIELDS.join(", ")
            ))
        })?;
        let stop = stop.unwrap_or(self.records.len()).min(self.records.len());
        let rows = &self.records[start.min(stop)..stop];
        let value = field_value(index);
        PyBytes::new_bound_with(py, rows.len() * 8, |buf| {
            for (out, m) in buf.chunks_exact_mut(8).zip(rows) {
                out.copy_from_slice(&value(m));
            }
            Ok(())
        })
    }
    fn __repr__(&self) -> String {
        format!("<MessageColumns rows={}>", self.records.len())
    }
}
