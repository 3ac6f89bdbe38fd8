//! `scan_sessions`, `scan_stream` and `summarize_session_bytes`: session files summarized in
//! parallel with the GIL released, as a list or streamed.

use std::path::PathBuf;
use std::sync::Mutex;

use clawctx_core::session::{self, ScanStream};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The summary's fields, in the order `to_dict` and the scan tables use.
const FIELDS: &[&str] = &[
    "path",
    "error",
    "format",
    "size_bytes",
    "session_id",
    "cwd",
    "created",
    "name",
    "file_version",
    "migration_needed",
    "entries",
    "messages",
    "skipped_lines",
    "damaged_lines",
    "compactions",
    "branches",
    "leaf_id",
    "model",
    "last_activity",
    "last_activity_ms",
    "context_messages",
    "estimated_tokens",
    "user_tokens",
    "assistant_tokens",
    "tool_result_tokens",
    "other_tokens",
    "context_tokens",
    "tool_calls",
    "tool_results",
    "unpaired_tool_calls",
    "unpaired_tool_results",
];

/// One session file at a glance (see `scan_sessions`).
#[pyclass(name = "SessionSummary", module = "clawctx._core", frozen, get_all)]
pub struct PySessionSummary {
    /// The file scanned.
    pub path: PathBuf,
    /// `None` when the file is a usable session; otherwise why not.
    pub error: Option<String>,
    /// `"pi"`, `"claude-code"` or `"codex"`; `None` when the file could not be read.
    pub format: Option<String>,
    /// The file's size in bytes.
    pub size_bytes: u64,
    /// The header's session `id`.
    pub session_id: Option<String>,
    /// The header's `cwd`.
    pub cwd: Option<String>,
    /// The header's `timestamp` (when the session was created).
    pub created: Option<String>,
    /// The latest `session_info` name, if any.
    pub name: Option<String>,
    /// The header's format `version` (pi-mono 0.58.3 `session-manager.ts`).
    pub file_version: u64,
    /// Whether `Session.open` would migrate the file to the current version.
    pub migration_needed: bool,
    /// Entries in the file (the header excluded).
    pub entries: usize,
    /// `message` entries in the file, on every branch.
    pub messages: usize,
    /// The same as `damaged_lines` (its name before the scan records grew).
    pub skipped_lines: usize,
    /// Lines that are not a usable JSON entry (skipped when the session is read).
    pub damaged_lines: usize,
    /// `compaction` entries in the file.
    pub compactions: usize,
    /// Entries with more than one child (where the tree branches).
    pub branches: usize,
    /// The id of the last entry, where the next one would be appended.
    pub leaf_id: Option<String>,
    /// The last model on the leaf's path, as `provider/modelId`.
    pub model: Option<String>,
    /// The timestamp of the last entry.
    pub last_activity: Option<String>,
    /// `last_activity` in milliseconds since the Unix epoch, when it parses.
    pub last_activity_ms: Option<i64>,
    /// Messages of the leaf's context (what the next request would send).
    pub context_messages: usize,
    /// pi's chars/4 estimate of the leaf context (split by role in the `*_tokens` fields).
    pub estimated_tokens: u64,
    /// The user messages' share of `estimated_tokens`.
    pub user_tokens: u64,
    /// The assistant messages' share of `estimated_tokens`.
    pub assistant_tokens: u64,
    /// The tool results' share of `estimated_tokens`.
    pub tool_result_tokens: u64,
    /// Every other role's share of `estimated_tokens` (summaries, bash executions, custom
    /// messages).
    pub other_tokens: u64,
    /// pi's `estimateContextTokens`: the last recorded usage plus the estimate after it.
    pub context_tokens: u64,
    /// Tool calls (with an id) of the context's assistants.
    pub tool_calls: usize,
    /// Tool results in the leaf's context.
    pub tool_results: usize,
    /// Calls pairing repair would answer with a synthetic result (OpenClaw 2026.3.13
    /// `src/agents/session-transcript-repair.ts`).
    pub unpaired_tool_calls: usize,
    /// Tool results pairing repair would drop (orphans and duplicates).
    pub unpaired_tool_results: usize,
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
                    "format",
                    "session_id",
                    "entries",
                    "context_messages",
                    "estimated_tokens",
                ],
            )
        })
    }

    /// Every field as a plain dict (`path` as a string), in a fixed order.
    fn to_dict<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        crate::errors::guard(|| {
            let out = PyDict::new(slf.py());
            for field in FIELDS {
                if *field == "path" {
                    out.set_item(field, slf.get().path.to_string_lossy().into_owned())?;
                } else {
                    out.set_item(field, slf.getattr(*field)?)?;
                }
            }
            Ok(out)
        })
    }

    /// The names `to_dict` returns, in its order.
    #[classattr]
    fn fields() -> Vec<&'static str> {
        FIELDS.to_vec()
    }
}

impl From<session::SessionSummary> for PySessionSummary {
    fn from(s: session::SessionSummary) -> Self {
        PySessionSummary {
            path: s.path,
            error: s.error,
            format: s.format,
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
            damaged_lines: s.damaged_lines,
            compactions: s.compactions,
            branches: s.branches,
            leaf_id: s.leaf_id,
            model: s.model,
            last_activity: s.last_activity,
            last_activity_ms: s.last_activity_ms,
            context_messages: s.context_messages,
            estimated_tokens: s.estimated_tokens,
            user_tokens: s.user_tokens,
            assistant_tokens: s.assistant_tokens,
            tool_result_tokens: s.tool_result_tokens,
            other_tokens: s.other_tokens,
            context_tokens: s.context_tokens,
            tool_calls: s.tool_calls,
            tool_results: s.tool_results,
            unpaired_tool_calls: s.unpaired_tool_calls,
            unpaired_tool_results: s.unpaired_tool_results,
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
        Ok(summaries.into_iter().map(PySessionSummary::from).collect())
    })
}

/// A scan in progress (see `scan_stream`): an iterator of `SessionSummary`.
#[pyclass(name = "ScanStream", module = "clawctx._core", frozen)]
pub struct PyScanStream {
    inner: Mutex<ScanStream>,
    total: usize,
}

#[pymethods]
impl PyScanStream {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PySessionSummary>> {
        crate::errors::guard(|| {
            let next = py.detach(|| {
                let mut stream = self.inner.lock().unwrap_or_else(|e| e.into_inner());
                stream.next()
            });
            Ok(next.map(|(_, summary)| PySessionSummary::from(summary)))
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
) -> PyResult<PySessionSummary> {
    crate::errors::guard(|| {
        let name = name.unwrap_or_else(|| PathBuf::from("<bytes>"));
        let summary = py.detach(|| session::summarize_session_bytes(data, &name));
        Ok(PySessionSummary::from(summary))
    })
}
