//! `RefreshReport`'s Python attributes and methods (the `python` feature): the class is the core
//! struct itself, so its fields are declared once, in `refresh.rs`.

use pyo3::prelude::*;

use super::refresh::RefreshReport;

#[pymethods]
impl RefreshReport {
    #[getter]
    fn mode(&self) -> &'static str {
        self.mode.as_str()
    }

    /// Entries added (after a full load: all of them).
    #[getter]
    fn appended_entries(&self) -> usize {
        self.appended_entries
    }

    #[getter]
    fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Why a full load was needed.
    #[getter]
    fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(
            slf.as_any(),
            &["mode", "appended_entries", "bytes_read", "reason"],
        )
    }
}
