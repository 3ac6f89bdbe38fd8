//! Provider replies read back into pi's assistant message (`clawctx_core::response`). The model
//! arrives as JSON text, the reply as SSE text, a JSON array of wire events or a response body
//! (text or bytes); the work runs without the GIL and the message comes back as Python
//! objects built from it directly.

use clawctx_core::base::to_js_string;
use clawctx_core::response::{parse_response_with, PiEvent, ResponseError, StreamReader};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn value_error(e: ResponseError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn parse_json(what: &str, text: &str) -> PyResult<serde_json::Value> {
    clawctx_core::base::parse_value(text)
        .map_err(|e| PyValueError::new_err(format!("{what} is not JSON: {e}")))
}

/// `(message, event_types)` for `reply` read as pi-ai reads `model["api"]`'s stream, with
/// pi-ai's provider options (`options_json`, e.g. `{"serviceTier": "flex"}`) when given;
/// `exact` reads a stream cut short as pi-ai does (as whole) instead of as failed;
/// `event_types=False` leaves the types out (`None`). Raises `ValueError` (wrapped as
/// `ResponseParseError` by `clawctx.wire.response`) for a reply pi-ai could not even start
/// reading.
#[pyfunction]
#[pyo3(signature = (model_json, reply, now_ms, options_json=None, exact=false, event_types=true))]
pub fn _parse_response(
    py: Python<'_>,
    model_json: &str,
    reply: &[u8],
    now_ms: f64,
    options_json: Option<&str>,
    exact: bool,
    event_types: bool,
) -> PyResult<(Py<PyAny>, Option<Vec<&'static str>>)> {
    crate::errors::guard(|| {
        let reply = std::str::from_utf8(reply)
            .map_err(|e| PyValueError::new_err(format!("reply is not UTF-8: {e}")))?;
        let model = parse_json("model", model_json)?;
        let options = match options_json {
            Some(text) => parse_json("options", text)?,
            None => serde_json::Value::Null,
        };
        let parsed = py
            .detach(|| parse_response_with(&model, &options, reply, now_ms, exact))
            .map_err(value_error)?;
        let message = crate::convert::to_py(py, &parsed.message)?;
        Ok((message, event_types.then_some(parsed.events)))
    })
}

/// The model APIs whose replies `_parse_response` reads.
#[pyfunction]
pub fn _response_apis() -> Vec<&'static str> {
    clawctx_core::response::response_apis()
}

/// One pi-ai event as `(type, contentIndex or None, delta or None)`.
type EventTuple = (&'static str, Option<usize>, Option<String>);

fn tuples(events: Vec<PiEvent>) -> Vec<EventTuple> {
    events
        .into_iter()
        .map(|e| (e.kind, e.content_index, e.delta))
        .collect()
}

/// pi-ai reading one reply as it arrives (`clawctx.wire.ResponseStream` wraps it): each
/// `feed_*` returns the events pi-ai pushed for what was fed, `partial()` the message so far,
/// `finish()` the final message and every event type. Raises `ValueError` for a reply that
/// cannot be read, after which the reader is closed.
#[pyclass(module = "clawctx._core.response", name = "_ResponseReader")]
pub struct PyResponseReader {
    inner: Option<StreamReader>,
}

impl PyResponseReader {
    fn reader(&mut self) -> PyResult<&mut StreamReader> {
        self.inner
            .as_mut()
            .ok_or_else(|| value_error(ResponseError::Closed("it has finished")))
    }
}

#[pymethods]
impl PyResponseReader {
    #[new]
    #[pyo3(signature = (model_json, now_ms, options_json=None, exact=false))]
    fn new(
        model_json: &str,
        now_ms: f64,
        options_json: Option<&str>,
        exact: bool,
    ) -> PyResult<Self> {
        crate::errors::guard(|| {
            let model = parse_json("model", model_json)?;
            let options = match options_json {
                Some(text) => parse_json("options", text)?,
                None => serde_json::Value::Null,
            };
            let mut inner =
                StreamReader::new(&model, &options, now_ms, true).map_err(value_error)?;
            inner.set_exact(exact);
            Ok(Self { inner: Some(inner) })
        })
    }

    /// One wire event (the JSON text of an SSE `data:` line) with its SSE `event:` name.
    #[pyo3(signature = (data, name=None))]
    fn feed_event(&mut self, data: &str, name: Option<&str>) -> PyResult<Vec<EventTuple>> {
        crate::errors::guard(|| {
            let reader = self.reader()?;
            reader.feed_event(name, data).map_err(value_error)?;
            Ok(tuples(reader.take_events()))
        })
    }

    /// A chunk of SSE bytes, cut anywhere.
    fn feed_sse(&mut self, py: Python<'_>, chunk: &[u8]) -> PyResult<Vec<EventTuple>> {
        crate::errors::guard(|| {
            let reader = self.reader()?;
            py.detach(|| reader.feed_sse(chunk)).map_err(value_error)?;
            Ok(tuples(reader.take_events()))
        })
    }

    /// A whole non-streaming response body (JSON text).
    fn feed_body(&mut self, body_json: &str) -> PyResult<Vec<EventTuple>> {
        crate::errors::guard(|| {
            let body = parse_json("response body", body_json)?;
            let reader = self.reader()?;
            reader.feed_body(&body).map_err(value_error)?;
            Ok(tuples(reader.take_events()))
        })
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            Some(reader) => format!(
                "_ResponseReader(api='{}', events={}, finished=False)",
                reader.api(),
                reader.events_fed()
            ),
            None => "_ResponseReader(finished=True)".to_owned(),
        }
    }

    /// The message so far, as JSON bytes.
    fn partial<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            let message = self.reader()?.partial().map_err(value_error)?;
            Ok(PyBytes::new(py, to_js_string(&message).as_bytes()))
        })
    }

    /// The stream ended: `(message_json, last_events, event_types)`; the reader closes.
    #[allow(clippy::type_complexity)]
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<EventTuple>, Vec<&'static str>)> {
        crate::errors::guard(|| {
            let reader = self
                .inner
                .take()
                .ok_or_else(|| value_error(ResponseError::Closed("it has finished")))?;
            let (message, last, kinds) = py
                .detach(move || reader.finish_with_events())
                .map_err(value_error)?;
            Ok((
                PyBytes::new(py, to_js_string(&message).as_bytes()),
                tuples(last),
                kinds,
            ))
        })
    }
}
