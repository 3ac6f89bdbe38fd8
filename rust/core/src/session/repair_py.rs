//! `LineChange`'s and `RepairReport`'s Python attributes and methods (the `python` feature): the
//! classes are the core structs themselves, so their fields are declared once, in `repair.rs`.

use pyo3::prelude::*;

use super::repair::{ChangeKind, LineChange, RepairReport};

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

#[pymethods]
impl RepairReport {
    /// Line numbers (1-based, in the original file) of lines removed entirely.
    #[getter]
    fn dropped_line_numbers(&self) -> Vec<usize> {
        self.changes
            .iter()
            .filter(|c| c.kind == ChangeKind::Dropped)
            .map(|c| c.line)
            .collect()
    }

    /// Line numbers of lines replaced by corrected or salvaged records.
    #[getter]
    fn rewritten_line_numbers(&self) -> Vec<usize> {
        self.changes
            .iter()
            .filter(|c| c.kind != ChangeKind::Dropped)
            .map(|c| c.line)
            .collect()
    }

    /// OpenClaw's log phrase, e.g. `"dropped 1 malformed line(s), rewrote 1 user message(s)"`.
    #[pyo3(name = "summary")]
    fn py_summary(&self) -> String {
        self.summary()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(
            slf.as_any(),
            &[
                "repaired",
                "dropped_lines",
                "rewritten_assistant_messages",
                "rewritten_user_messages",
                "salvaged_records",
                "backup_path",
                "reason",
            ],
        )
    }
}
