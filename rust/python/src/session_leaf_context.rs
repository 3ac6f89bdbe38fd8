//! `read_leaf_context`: the last entry's context, reading the file from its end.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use clawctx_core::base::{Error, Result as CoreResult};
use clawctx_core::session::{LeafContextReader, LineSource, TailOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::to_py;
use crate::errors::IntoPyResult;
use crate::session::PySessionContext;
use crate::transcript::PyTranscript;

/// The context of a session file's last entry, read from the end of the file as far as needed
/// (see `read_leaf_context`).
#[pyclass(name = "LeafContext", module = "clawctx._core.session", frozen)]
pub struct PyLeafContext {
    reader: Mutex<LeafContextReader>,
    messages: Py<PyTranscript>,
    /// The exception a Python line source raised, re-raised as it is.
    failure: Failure,
}

/// Where a [`PySource`] keeps the exception its Python object raised.
type Failure = Arc<Mutex<Option<PyErr>>>;

/// The core error or, when a Python line source failed, its own exception.
fn raise(py: Python<'_>, failure: &Failure, error: Error) -> PyErr {
    let stashed = failure
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .take();
    stashed.unwrap_or_else(|| crate::errors::to_py(py, error))
}

impl PyLeafContext {
    /// Runs `f` on the reader without the GIL (reading on may take a while).
    fn with_reader<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut LeafContextReader) -> T + Send,
    ) -> T {
        py.detach(|| {
            let mut reader = self
                .reader
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut reader)
        })
    }
}

#[pymethods]
impl PyLeafContext {
    /// The messages of the context (read when the file was opened).
    #[getter]
    fn messages(&self, py: Python<'_>) -> PyResult<Py<PyTranscript>> {
        crate::errors::guard(|| Ok(self.messages.clone_ref(py)))
    }

    /// The thinking level on the path (`"off"` without a change). Reads on towards the start
    /// of the file until the latest `thinking_level_change` on the path (possibly all of it).
    #[getter]
    fn thinking_level(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let level = self
                .with_reader(py, |r| r.thinking_level())
                .map_err(|e| raise(py, &self.failure, e))?;
            to_py(py, &level)
        })
    }

    /// `{"provider": ..., "modelId": ...}` of the latest model change or assistant message on
    /// the path, or `None`. Reads on like `thinking_level` when needed.
    #[getter]
    fn model(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            match self
                .with_reader(py, |r| r.model())
                .map_err(|e| raise(py, &self.failure, e))?
            {
                Some(model) => to_py(py, &model),
                None => Ok(py.None()),
            }
        })
    }

    /// The whole `SessionContext`, equal to `Session.open(path).context()`.
    fn context(&self, py: Python<'_>) -> PyResult<PySessionContext> {
        crate::errors::guard(|| {
            let context = self
                .with_reader(py, |r| r.context())
                .map_err(|e| raise(py, &self.failure, e))?;
            PySessionContext::from_core(py, context)
        })
    }

    /// Bytes of the file read so far (all of it when `read_in_full`).
    #[getter]
    fn bytes_read(&self, py: Python<'_>) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.with_reader(py, |r| r.bytes_read())))
    }

    /// The file's size when it was opened (later appends are not read).
    #[getter]
    fn file_size(&self, py: Python<'_>) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.with_reader(py, |r| r.file_len())))
    }

    /// Whether the file was loaded in full (a header to migrate or check) instead of read
    /// from its end.
    #[getter]
    fn read_in_full(&self, py: Python<'_>) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.with_reader(py, |r| r.read_in_full())))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            Ok({
                let (read, size) = self.with_reader(py, |r| (r.bytes_read(), r.file_len()));
                format!(
                    "LeafContext(messages={}, bytes_read={read}, file_size={size})",
                    self.messages.get().inner.len()
                )
            })
        })
    }
}

/// The context of the last entry of a session file, as `Session.open(path,
/// read_only=True).context()` builds it, reading the file backwards from its end only as far
/// as the messages need: back to the latest compaction's (or OpenClaw `reset`'s) first kept
/// entry, or to the reset itself when it keeps nothing (the root when there is neither). On
/// a long compacted session that is the last few MB of hundreds.
/// `thinking_level` and `model` read on only when asked for.
///
/// Files that need what only a full open does (migration of a v1/v2 file, a missing,
/// invalid or damaged header) are opened in full (`read_in_full`); errors are those of
/// `Session.open(path, read_only=True)`. Damaged lines in the part read are salvaged as a full
/// open would; lines before it are not read, so they are neither salvaged nor reported (use
/// `Session.open` or `repair_session_file` for that). `chunk_bytes`: the first read from the
/// end (each further read doubles, up to 16 MiB). Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (path, *, chunk_bytes = 262144))]
pub fn read_leaf_context(
    py: Python<'_>,
    path: PathBuf,
    chunk_bytes: usize,
) -> PyResult<PyLeafContext> {
    crate::errors::guard(|| {
        let options = tail_options(chunk_bytes)?;
        let reader = py
            .detach(|| LeafContextReader::open(&path, &options))
            .py_err(py)?;
        let messages = Py::new(py, PyTranscript::new(reader.messages()))?;
        Ok(PyLeafContext {
            reader: Mutex::new(reader),
            messages,
            failure: Failure::default(),
        })
    })
}

/// A Python object handing over a session's lines newest first (see
/// `_read_leaf_context_lines`).
struct PySource {
    source: Py<PyAny>,
    failure: Failure,
}

impl PySource {
    /// Keeps `error` to re-raise and returns a core error that ends the read.
    fn fail(&self, error: PyErr) -> Error {
        *self
            .failure
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(error);
        Error::InvalidArgument("the line source raised an exception".into())
    }
}

impl LineSource for PySource {
    fn older_lines(&mut self, hint: usize) -> CoreResult<Option<Vec<u8>>> {
        Python::attach(|py| {
            let lines = self
                .source
                .bind(py)
                .call_method1("older_lines", (hint,))
                .map_err(|e| self.fail(e))?;
            if lines.is_none() {
                return Ok(None);
            }
            let bytes = lines.cast::<PyBytes>().map_err(|e| self.fail(e.into()))?;
            Ok(Some(bytes.as_bytes().to_vec()))
        })
    }

    fn damaged(&mut self, line: usize, reason: &str) -> CoreResult<()> {
        Python::attach(|py| {
            self.source
                .bind(py)
                .call_method1("damaged", (line, reason))
                .map(|_| ())
                .map_err(|e| self.fail(e))
        })
    }
}

/// The backward read of `read_leaf_context` over lines handed over by `source` instead of
/// read from a file (an OpenClaw store's rows read in descending `seq`,
/// `SessionStore.read_leaf_context`). `header` is the session header's line; `source` has
/// `older_lines(hint) -> bytes | None` (the complete lines just before those handed over, in
/// file order, about `hint` bytes; `None` when none are left) and `damaged(line, reason)`
/// (a line of the last chunk that is skipped or salvaged, 1-based in it; raise to stop; the
/// exception is re-raised as it is). `None` when the header needs a full open. Reads without
/// the GIL, taking it only to call `source`.
#[pyfunction]
#[pyo3(signature = (header, source, *, chunk_bytes = 262144))]
pub fn _read_leaf_context_lines(
    py: Python<'_>,
    header: &[u8],
    source: Py<PyAny>,
    chunk_bytes: usize,
) -> PyResult<Option<PyLeafContext>> {
    crate::errors::guard(|| {
        let options = tail_options(chunk_bytes)?;
        let failure = Failure::default();
        let lines = PySource {
            source,
            failure: failure.clone(),
        };
        let header = header.to_vec();
        let reader = py
            .detach(|| LeafContextReader::from_source(&header, Box::new(lines), &options))
            .map_err(|e| raise(py, &failure, e))?;
        let Some(reader) = reader else {
            return Ok(None);
        };
        let messages = Py::new(py, PyTranscript::new(reader.messages()))?;
        Ok(Some(PyLeafContext {
            reader: Mutex::new(reader),
            messages,
            failure,
        }))
    })
}

/// The tail read's options for a `chunk_bytes` argument (a positive size of the first chunk).
fn tail_options(chunk_bytes: usize) -> PyResult<TailOptions> {
    if chunk_bytes == 0 {
        return Err(PyValueError::new_err("chunk_bytes must be positive"));
    }
    Ok(TailOptions {
        first_chunk: chunk_bytes,
        ..TailOptions::default()
    })
}
