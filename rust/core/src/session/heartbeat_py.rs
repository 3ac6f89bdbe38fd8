//! `HeartbeatMark`'s Python attributes and methods (the `python` feature): the class is the core
//! `TranscriptMark` itself, so its fields are declared once, in `heartbeat.rs` (the file
//! identity and fingerprint stay private).

use std::path::PathBuf;

use pyo3::prelude::*;

use super::heartbeat::TranscriptMark;

#[pymethods]
impl TranscriptMark {
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The byte size before the run.
    #[getter]
    fn size(&self) -> u64 {
        self.size
    }

    /// Whether the size is at a line boundary (nothing is pruned otherwise).
    #[getter]
    fn at_line_boundary(&self) -> bool {
        self.at_line_boundary
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(slf.as_any(), &["path", "size", "at_line_boundary"])
    }
}
