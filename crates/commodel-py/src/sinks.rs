//! Where `write_collective` sends GOAL text: a file created on the first write
//! (so a schedule that fails before writing leaves no file), or a Python
//! `write(bytes)` callable, chunk by chunk (the whole text never crosses into Python).

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::fs::File;
use std::io::{self, BufWriter, Write};

/// The file `path`, created (or truncated) when the first byte is written.
pub struct LazyFile<'p> {
    path: &'p str,
    file: Option<BufWriter<File>>,
}

impl<'p> LazyFile<'p> {
    pub fn new(path: &'p str) -> Self {
        LazyFile { path, file: None }
    }
}

impl Write for LazyFile<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self
                .file
                .insert(BufWriter::with_capacity(1 << 16, File::create(self.path)?)),
        };
        file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// A Python callable taking `bytes`; the exception it raised, if any, is kept
/// to be raised again as it was (a `BrokenPipeError` stays one).
pub struct PyWrite {
    write: PyObject,
    pub error: Option<PyErr>,
}

impl PyWrite {
    pub fn new(write: PyObject) -> Self {
        PyWrite { write, error: None }
    }
}

impl Write for PyWrite {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Python::with_gil(|py| {
            self.write
                .call1(py, (PyBytes::new_bound(py, buf),))
                .map(|_| buf.len())
                .map_err(|e| {
                    let message = e.to_string();
                    self.error = Some(e);
                    io::Error::other(message)
                })
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
