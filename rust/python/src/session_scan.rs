//! `scan_sessions`, `scan_stream` and `summarize_session_bytes`: session files summarized in
//! parallel with the GIL released, as a list or streamed. `SessionSummary` is the core's struct
//! itself (declared as a Python class with the core's `python` feature).

use std::path::PathBuf;
use std::sync::Mutex;

use clawctx_core::session::{self, ScanStream, SessionSummary};
use pyo3::prelude::*;

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
) -> PyResult<Vec<SessionSummary>> {
    crate::errors::guard(|| {
        let total = paths.len();
        let (summaries, callback_error) = py.detach(|| {
            let (tx, rx) = std::sync::mpsc::channel::<usize>();
            std::thread::scope(|scope| {
                let worker = scope.spawn(|| session::scan_sessions(&paths, workers, Some(tx)));
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
        Ok(summaries)
    })
}

/// A scan in progress (see `scan_stream`): an iterator of `SessionSummary`.
#[pyclass(name = "ScanStream", module = "clawctx._core.session", frozen)]
pub struct PyScanStream {
    inner: Mutex<ScanStream>,
    total: usize,
}

#[pymethods]
impl PyScanStream {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<SessionSummary>> {
        crate::errors::guard(|| {
            let next = py.detach(|| {
                let mut stream = self.inner.lock().unwrap_or_else(|e| e.into_inner());
                stream.next()
            });
            Ok(next.map(|(_, summary)| summary))
        })
    }

    /// The number of files the scan reads.
    #[getter]
    fn total(&self) -> usize {
        self.total
    }

    fn __repr__(&self) -> String {
        format!("ScanStream(total={})", self.total)
    }
}

/// Summarizes session files on `workers` threads (default: one per core) and yields each
/// `SessionSummary` as it is ready: in input order when `ordered`, else as files finish.
/// Memory holds the sessions being read and a few summaries, whatever the number of files;
/// waiting for the next summary releases the GIL. Dropping the iterator stops the scan after
/// the files in flight.
#[pyfunction]
#[pyo3(signature = (paths, *, workers = None, ordered = true))]
pub fn scan_stream(
    paths: Vec<PathBuf>,
    workers: Option<usize>,
    ordered: bool,
) -> PyResult<PyScanStream> {
    crate::errors::guard(|| {
        if workers == Some(0) {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "workers must be at least 1",
            ));
        }
        let total = paths.len();
        Ok(PyScanStream {
            inner: Mutex::new(ScanStream::start(paths, workers, ordered)),
            total,
        })
    })
}

/// Summarizes a session from its bytes (read from an object store or a file object), as
/// `scan_sessions` does a file; `name` (default `"<bytes>"`) becomes the summary's `path`.
#[pyfunction]
#[pyo3(signature = (data, name = None))]
pub fn summarize_session_bytes(
    py: Python<'_>,
    data: &[u8],
    name: Option<PathBuf>,
) -> PyResult<SessionSummary> {
    crate::errors::guard(|| {
        let name = name.unwrap_or_else(|| PathBuf::from("<bytes>"));
        let summary = py.detach(|| session::summarize_session_bytes(data, &name));
        Ok(summary)
    })
}
