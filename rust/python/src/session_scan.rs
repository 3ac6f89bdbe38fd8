//! `scan_sessions`: many session files summarized in parallel with the GIL released.

use std::path::PathBuf;

use pyo3::prelude::*;

/// One session file at a glance (see `scan_sessions`).
#[pyclass(name = "SessionSummary", module = "clawctx._core", frozen, get_all)]
pub struct PySessionSummary {
    pub path: PathBuf,
    /// `None` when the file is a usable session; otherwise why not.
    pub error: Option<String>,
    pub size_bytes: u64,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub created: Option<String>,
    pub name: Option<String>,
    pub file_version: u64,
    pub migration_needed: bool,
    pub entries: usize,
    pub messages: usize,
    pub skipped_lines: usize,
    pub leaf_id: Option<String>,
    pub context_messages: usize,
    pub estimated_tokens: u64,
}

#[pymethods]
impl PySessionSummary {
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard(|| {
            crate::convert::fields_repr(
                slf.as_any(),
                &[
                    "path",
                    "error",
                    "session_id",
                    "entries",
                    "context_messages",
                    "estimated_tokens",
                ],
            )
        })
    }
}

impl From<clawctx_core::session::SessionSummary> for PySessionSummary {
    fn from(s: clawctx_core::session::SessionSummary) -> Self {
        PySessionSummary {
            path: s.path,
            error: s.error,
            size_bytes: s.size_bytes,
            session_id: s.session_id,
            cwd: s.cwd,
            created: s.created,
            name: s.name,
            file_version: s.file_version,
            migration_needed: s.migration_needed,
            entries: s.entries,
            messages: s.messages,
            skipped_lines: s.skipped_lines,
            leaf_id: s.leaf_id,
            context_messages: s.context_messages,
            estimated_tokens: s.estimated_tokens,
        }
    }
}

/// Opens (read-only), checks and summarizes many session files in parallel on `workers`
/// threads (default: one per core) with the GIL released. Results are in input order; a file
/// that cannot be read as a session gets a summary with `error` set. `progress(done, total)` is
/// called on the calling thread as files finish; an exception it raises stops further calls and
/// is raised once the scan is done.
#[pyfunction]
#[pyo3(signature = (paths, *, workers = None, progress = None))]
pub fn scan_sessions(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    workers: Option<usize>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<PySessionSummary>> {
    crate::errors::guard(|| {
        let total = paths.len();
        let (summaries, callback_error) = py.detach(|| {
            let (tx, rx) = std::sync::mpsc::channel::<usize>();
            std::thread::scope(|scope| {
                let worker =
                    scope.spawn(|| clawctx_core::session::scan_sessions(&paths, workers, Some(tx)));
                let mut error: Option<PyErr> = None;
                for (done, _) in rx.iter().enumerate() {
                    if let (Some(callback), None) = (&progress, &error) {
                        Python::attach(|py| {
                            if let Err(e) = callback.call1(py, (done + 1, total)) {
                                error = Some(e);
                            }
                        });
                    }
                }
                (
                    worker.join().expect("the scan thread does not panic"),
                    error,
                )
            })
        });
        if let Some(err) = callback_error {
            return Err(err);
        }
        Ok(summaries.into_iter().map(PySessionSummary::from).collect())
    })
}
