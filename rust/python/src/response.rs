//! Provider replies read back into pi's assistant message (`clawctx_core::response`). The model
//! arrives as JSON text, the reply as SSE text, a JSON array of wire events or a response body
//! (text or bytes); the work runs without the GIL and the message comes back as JSON bytes
//! that Python's own parser reads.

use clawctx_core::base::to_js_string;
use clawctx_core::response::parse_response;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// `(message_json, event_types)` for `reply` read as pi-ai reads `model["api"]`'s stream.
/// Raises `ValueError` (wrapped as `ResponseParseError` by `clawctx.wire.response`) for a
/// reply pi-ai could not even start reading.
#[pyfunction]
pub fn _parse_response<'py>(
    py: Python<'py>,
    model_json: &str,
    reply: &[u8],
    now_ms: f64,
) -> PyResult<(Bound<'py, PyBytes>, Vec<&'static str>)> {
    crate::errors::guard(|| {
        let reply = std::str::from_utf8(reply)
            .map_err(|e| PyValueError::new_err(format!("reply is not UTF-8: {e}")))?;
        let model = clawctx_core::base::parse_value(model_json)
            .map_err(|e| PyValueError::new_err(format!("model is not JSON: {e}")))?;
        let parsed = py
            .detach(|| {
                parse_response(&model, reply, now_ms).map(|p| (to_js_string(&p.message), p.events))
            })
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((PyBytes::new(py, parsed.0.as_bytes()), parsed.1))
    })
}
