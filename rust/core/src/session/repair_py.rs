//! `LineChange`'s Python attributes and methods (the `python` feature): the class is the core
//! struct itself, so its fields are declared once, in `repair.rs`.

use pyo3::prelude::*;

use super::repair::LineChange;

#[pymethods]
impl LineChange {
    /// The 1-based line number in the original file.
    #[getter]
    fn line(&self) -> usize {
        self.line
    }

    /// `"dropped"`, `"rewritten"` or `"salvaged"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.as_str()
    }

    /// Why the line changed, in words.
    #[getter]
    fn reason(&self) -> &str {
        &self.reason
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(slf.as_any(), &["line", "kind", "reason"])
    }
}
