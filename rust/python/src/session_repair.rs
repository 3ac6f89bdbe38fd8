//! `repair_session_file` and its report.

use std::path::PathBuf;

use clawctx_core::session::{BackupPolicy, RepairOptions, RepairReport};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::Clock;
use crate::errors::IntoPyResult;

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
) -> PyResult<RepairReport> {
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
        Ok(report)
    })
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
) -> PyResult<(RepairReport, Option<Bound<'py, PyBytes>>)> {
    crate::errors::guard(|| {
        let (report, repaired) =
            py.detach(|| clawctx_core::session::repair_session_bytes(data, fix_messages));
        Ok((report, repaired.map(|bytes| PyBytes::new(py, &bytes))))
    })
}
