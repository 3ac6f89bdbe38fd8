//! `HeartbeatMark`'s and `HeartbeatPruneReport`'s Python attributes and methods (the `python`
//! feature): the classes are the core `TranscriptMark` and `PruneReport` themselves, so their
//! fields are declared once, in `heartbeat.rs` (the mark's file identity and fingerprint stay
//! private).

use std::path::PathBuf;

use pyo3::prelude::*;

use super::heartbeat::{PruneAction, PruneReport, TranscriptMark};

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

#[pymethods]
impl PruneReport {
    /// `"truncated"`, `"rewritten"` or `"unchanged"`.
    #[getter]
    fn action(&self) -> &'static str {
        self.action.as_str()
    }

    /// Lines removed from the file.
    #[getter]
    fn removed_lines(&self) -> usize {
        self.removed_lines
    }

    /// Bytes removed from the file.
    #[getter]
    fn removed_bytes(&self) -> u64 {
        self.removed_bytes
    }

    /// The ids of the entries removed.
    #[getter]
    fn removed_ids(&self) -> Vec<String> {
        self.removed_ids.clone()
    }

    /// Lines the file keeps.
    #[getter]
    fn kept_lines(&self) -> usize {
        self.kept_lines
    }

    /// Why nothing was removed (when `action` is `"unchanged"`).
    #[getter]
    fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Whether lines were removed.
    #[getter]
    fn pruned(&self) -> bool {
        self.action != PruneAction::Unchanged
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(
            slf.as_any(),
            &[
                "action",
                "removed_lines",
                "removed_bytes",
                "kept_lines",
                "reason",
            ],
        )
    }
}
