//! `repair_session_file` and its report.

use std::path::PathBuf;

use clawctx_core::session::{BackupPolicy, ChangeKind, LineChange, RepairOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::Clock;
use crate::errors::IntoPyResult;

/// What `repair_session_file` did (OpenClaw's report plus the changed lines).
#[pyclass(name = "RepairReport", module = "clawctx._core", frozen)]
pub struct PyRepairReport {
    /// Whether the file was rewritten (OpenClaw 2026.3.13 `src/agents/session-file-repair.ts`).
    #[pyo3(get)]
    pub repaired: bool,
    /// Malformed lines dropped.
    #[pyo3(get)]
    pub dropped_lines: usize,
    /// Assistant messages rewritten to a valid shape.
    #[pyo3(get)]
    pub rewritten_assistant_messages: usize,
    /// User messages with no content dropped.
    #[pyo3(get)]
    pub dropped_blank_user_messages: usize,
    /// User messages rewritten to a valid shape.
    #[pyo3(get)]
    pub rewritten_user_messages: usize,
    /// Entries recovered from lines that held more than one record.
    #[pyo3(get)]
    pub salvaged_records: usize,
    /// Where the original was copied before the rewrite, or `None`.
    #[pyo3(get)]
    pub backup_path: Option<PathBuf>,
    /// Why the file was not repaired (missing, not a session, nothing to fix), or `None`.
    #[pyo3(get)]
    pub reason: Option<String>,
    /// Every changed line, as `LineChange`s.
    #[pyo3(get)]
    pub changes: Vec<LineChange>,
    summary_text: String,
}

#[pymethods]
impl PyRepairReport {
    /// Line numbers (1-based, in the original file) of lines removed entirely.
    #[getter]
    fn dropped_line_numbers(&self) -> PyResult<Vec<usize>> {
        crate::errors::guard(|| {
            Ok({
                self.changes
                    .iter()
                    .filter(|c| c.kind == ChangeKind::Dropped)
                    .map(|c| c.line)
                    .collect()
            })
        })
    }

    /// Line numbers of lines replaced by corrected or salvaged records.
    #[getter]
    fn rewritten_line_numbers(&self) -> PyResult<Vec<usize>> {
        crate::errors::guard(|| {
            Ok({
                self.changes
                    .iter()
                    .filter(|c| c.kind != ChangeKind::Dropped)
                    .map(|c| c.line)
                    .collect()
            })
        })
    }

    /// OpenClaw's log phrase, e.g. `"dropped 1 malformed line(s), rewrote 1 user message(s)"`.
    fn summary(&self) -> PyResult<String> {
        crate::errors::guard(|| Ok(self.summary_text.clone()))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard(|| {
            crate::convert::fields_repr(
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
        })
    }
}

/// Repairs a session file in place if needed, as OpenClaw 2026.3.13
/// `src/agents/session-file-repair.ts` (`repairSessionFileIfNeeded`) decides it: only when a
/// non-blank line is not JSON and the first entry is a session header. The path is trimmed.
/// Damaged lines are dropped, but records glued to a torn line or hidden behind NUL bytes, a
/// BOM or invalid UTF-8 are recovered, and lines that need no change keep their exact bytes.
/// `fix_messages=True` adds the later release's message fixes (fallback text for empty
/// errored assistant turns, "(continue)" for blank user content, role-less messages dropped).
/// The original is backed up (`backup="keep"`, the default, keeps the backup) and replaced
/// atomically under the session lock. Like upstream, logs a warning on the `clawctx` logger
/// when it repairs (`session file repaired: dropped N malformed line(s) (name)`) or skips a
/// damaged file with an invalid header. Never raises for a missing, unreadable or header-less
/// file: the report's `reason` says why nothing was done. Raises `RepairError` if the rewrite
/// fails (the original is then untouched) and `SessionLockError` if the lock is not free in
/// time.
#[pyfunction]
#[pyo3(signature = (path, *, backup = "keep", lock_timeout = 10.0, now_ms = None, fix_messages = false))]
pub fn repair_session_file(
    py: Python<'_>,
    path: PathBuf,
    backup: &str,
    lock_timeout: f64,
    now_ms: Option<&Bound<'_, PyAny>>,
    fix_messages: bool,
) -> PyResult<PyRepairReport> {
    crate::errors::guard(|| {
        let backup = match backup {
            "keep" => BackupPolicy::Keep,
            "delete" => BackupPolicy::Delete,
            other => {
                return Err(PyValueError::new_err(format!(
                    "backup must be \"keep\" or \"delete\", not {other:?}"
                )))
            }
        };
        let lock_timeout = crate::session::lock_timeout_duration(lock_timeout)?;
        let now = Clock::from_arg(now_ms)?.now_ms(py)?;
        let options = RepairOptions {
            backup,
            lock_timeout,
            now_ms: now,
            fix_messages,
        };
        let report = py
            .detach(|| clawctx_core::repair_session_file(&path, &options))
            .py_err(py)?;
        // OpenClaw 2026.3.13 `src/agents/session-file-repair.ts` warns with the file's base name.
        let name = path
            .to_str()
            .map(|text| PathBuf::from(text.trim()))
            .unwrap_or_else(|| path.clone())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let warning = if report.repaired {
            Some(format!(
                "session file repaired: {} ({name})",
                report.summary()
            ))
        } else if report.reason.as_deref() == Some("invalid session header") {
            Some(format!(
                "session file repair skipped: invalid session header ({name})"
            ))
        } else {
            None
        };
        if let Some(message) = warning {
            py.import("logging")?
                .call_method1("getLogger", ("clawctx",))?
                .call_method1("warning", ("%s", message))?;
        }
        Ok(PyRepairReport::from(&report))
    })
}

impl From<&clawctx_core::RepairReport> for PyRepairReport {
    fn from(report: &clawctx_core::RepairReport) -> Self {
        PyRepairReport {
            repaired: report.repaired,
            dropped_lines: report.dropped_lines,
            rewritten_assistant_messages: report.rewritten_assistant_messages,
            dropped_blank_user_messages: report.dropped_blank_user_messages,
            rewritten_user_messages: report.rewritten_user_messages,
            salvaged_records: report.salvaged_records,
            backup_path: report.backup_path.clone(),
            reason: report.reason.clone(),
            summary_text: report.summary(),
            changes: report.changes.clone(),
        }
    }
}

/// `repair_session_file`'s decision and rewrite on a session's bytes held in memory (an object
/// read from a store): returns the report and the repaired bytes, or `None` when nothing needs
/// repair (the report's `reason` says why when the input is empty or has no session header).
/// Nothing is written anywhere and nothing is logged; `backup_path` is always `None`.
#[pyfunction]
#[pyo3(signature = (data, /, *, fix_messages = false))]
pub fn repair_session_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    fix_messages: bool,
) -> PyResult<(PyRepairReport, Option<Bound<'py, PyBytes>>)> {
    crate::errors::guard(|| {
        let (report, repaired) =
            py.detach(|| clawctx_core::session::repair_session_bytes(data, fix_messages));
        Ok((
            PyRepairReport::from(&report),
            repaired.map(|bytes| PyBytes::new(py, &bytes)),
        ))
    })
}
