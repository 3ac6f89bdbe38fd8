//! `SkippedLine`'s Python attributes and methods (the `python` feature): the class is the core
//! struct itself, so its fields are declared once, in `read.rs`.

use pyo3::prelude::*;

use super::read::SkippedLine;

#[pymethods]
impl SkippedLine {
    /// The 1-based line number in the file.
    #[getter]
    fn line(&self) -> usize {
        self.line
    }

    /// `"skipped"`, `"salvaged"`, `"sanitized"` or `"ignored"`.
    #[getter]
    fn action(&self) -> &'static str {
        self.action.as_str()
    }

    /// What was wrong with the line, in words.
    #[getter]
    fn reason(&self) -> &str {
        &self.reason
    }

    /// How many entries the line yielded (a salvaged line may hold several).
    #[getter]
    fn records(&self) -> usize {
        self.records
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(slf.as_any(), &["line", "action", "reason", "records"])
    }
}
