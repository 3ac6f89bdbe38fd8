//! Binding of the transcript stage's per-message columns (`clawctx.history.message_columns`).

use std::sync::Arc;

use clawctx_core::transcript;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::transcript::transcript_arg;

/// Per-message statistics of a `Transcript` (or list of message dicts) as columns, without
/// building a Python object per message: a dict of numpy arrays, one element per message.
///
/// - `index` (int64), `role` and `tool_name` (lists of `str | None`; for an assistant the
///   names of its tool calls joined with ","),
/// - `text_chars`, `thinking_chars` (UTF-16 lengths), `estimated_tokens` (pi's chars/4
///   estimate), `tool_calls` (an assistant's tool calls with an id): int64,
/// - `has_image`, `is_error` (a tool result's `isError`, or an assistant stopped with
///   "error"): bool,
/// - `timestamp_ms` and the recorded usage of assistants, `usage_input`, `usage_output`,
///   `usage_cache_read`, `usage_cache_write`, `usage_total`: float64, NaN where missing.
#[pyfunction]
pub fn message_columns<'py>(
    py: Python<'py>,
    messages: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    crate::errors::guard(|| {
        let input = transcript_arg(messages)?;
        let source = Arc::clone(&input);
        let c = py.detach(move || transcript::message_columns(&source));
        let numpy = py.import("numpy")?;
        let ints = |values: &[u64]| {
            let bytes: Vec<u8> = values
                .iter()
                .flat_map(|v| i64::try_from(*v).unwrap_or(i64::MAX).to_le_bytes())
                .collect();
            numpy.call_method1("frombuffer", (PyBytes::new(py, &bytes), "<i8"))
        };
        let floats = |values: &[f64]| {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            numpy.call_method1("frombuffer", (PyBytes::new(py, &bytes), "<f8"))
        };
        let bools = |values: &[bool]| {
            let bytes: Vec<u8> = values.iter().map(|b| u8::from(*b)).collect();
            numpy.call_method1("frombuffer", (PyBytes::new(py, &bytes), "?"))
        };
        let out = PyDict::new(py);
        let index: Vec<u64> = (0..c.role.len() as u64).collect();
        out.set_item("index", ints(&index)?)?;
        out.set_item("role", c.role)?;
        out.set_item("tool_name", c.tool_name)?;
        out.set_item("text_chars", ints(&c.text_chars)?)?;
        out.set_item("thinking_chars", ints(&c.thinking_chars)?)?;
        out.set_item("estimated_tokens", ints(&c.estimated_tokens)?)?;
        out.set_item("tool_calls", ints(&c.tool_calls)?)?;
        out.set_item("has_image", bools(&c.has_image)?)?;
        out.set_item("is_error", bools(&c.is_error)?)?;
        out.set_item("timestamp_ms", floats(&c.timestamp_ms)?)?;
        out.set_item("usage_input", floats(&c.usage_input)?)?;
        out.set_item("usage_output", floats(&c.usage_output)?)?;
        out.set_item("usage_cache_read", floats(&c.usage_cache_read)?)?;
        out.set_item("usage_cache_write", floats(&c.usage_cache_write)?)?;
        out.set_item("usage_total", floats(&c.usage_total)?)?;
        Ok(out)
    })
}
