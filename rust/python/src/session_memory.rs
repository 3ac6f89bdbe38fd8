//! Sessions and summaries from lines held in memory: the rows of an OpenClaw store handed
//! over as a list of `bytes` (`clawctx.history.store`), joined once in Rust with the GIL
//! released instead of by `b"\n".join` in Python, and parsed without a temporary file.

use std::path::PathBuf;
use std::sync::Arc;

use clawctx_core::session::{self, SessionSummary};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// The lines of `lines` (a list of `bytes`) joined as JSONL bytes, a `"\n"` after each. The
/// `bytes` objects are held (one reference each) while they are copied without the GIL:
/// `bytes` are immutable, so the borrowed slices stay valid whatever other threads do to
/// the list meanwhile.
pub(crate) fn join_line_list(py: Python<'_>, lines: &Bound<'_, PyList>) -> PyResult<Arc<[u8]>> {
    let held: Vec<Bound<'_, PyBytes>> = lines
        .iter()
        .map(|item| item.cast_into::<PyBytes>().map_err(PyErr::from))
        .collect::<PyResult<_>>()?;
    let slices: Vec<&[u8]> = held.iter().map(|b| b.as_bytes()).collect();
    Ok(py.detach(|| session::join_lines(&slices)))
}

/// Summarizes a session from its lines (a list of `bytes`, one line each without its
/// `"\n"`), as `summarize_session_bytes` summarizes `b"\n".join(lines) + b"\n"` but without
/// building that join in Python: the lines are copied once, into the buffer the reader
/// parses, with the GIL released. `name` (default `"<bytes>"`) becomes the summary's `path`.
#[pyfunction]
#[pyo3(signature = (lines, name = None))]
pub fn summarize_session_lines(
    py: Python<'_>,
    lines: &Bound<'_, PyList>,
    name: Option<PathBuf>,
) -> PyResult<SessionSummary> {
    crate::errors::guard(|| {
        let name = name.unwrap_or_else(|| PathBuf::from("<bytes>"));
        let bytes = join_line_list(py, lines)?;
        Ok(py.detach(|| session::summarize_session_shared(bytes, &name)))
    })
}
