//! Provider request payloads (`clawctx_core::payload`): the body pi-ai builds for a model, and
//! its `transformMessages` replay layer. The model, options, system prompt and tools arrive as
//! one JSON text (Python's `json.dumps` escapes lone surrogates, which the core then strips as
//! pi-ai's `sanitizeSurrogates` does); the messages as a `Transcript` or a JSON array text.

use std::sync::Arc;

use clawctx_core::base::{parse_value, to_js_string};
use clawctx_core::hygiene::{guard_request, GuardTarget};
use clawctx_core::payload::{
    body_layout, build_compact_payload, build_payload, cache_diff as core_cache_diff,
    cache_diff_after, strip_lone_surrogate_escapes, transform_messages as core_transform,
    BodyLayout, CacheBreak, Model, Normalizer, Payload, PayloadError, PayloadRequest,
};
use clawctx_core::Transcript;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;
use serde_json::{Map, Value};

use crate::transcript::PyTranscript;

/// A request body built in Rust. `to_json()` writes the JSON bytes from the Rust body (its
/// messages often already JSON text copied from the stored bytes); `to_dict()` reads those
/// bytes into Python objects.
#[pyclass(name = "RequestPayload", module = "clawctx._core.payload", frozen)]
pub struct PyRequestPayload {
    payload: Arc<Payload>,
    api: String,
}

impl PyRequestPayload {
    fn json_bytes(&self, py: Python<'_>) -> Vec<u8> {
        let payload = Arc::clone(&self.payload);
        py.detach(move || payload.to_json())
    }
}

#[pymethods]
impl PyRequestPayload {
    /// The model API this body is for (`model["api"]`).
    #[getter]
    fn api(&self) -> &str {
        &self.api
    }

    /// The body as a dict (key order as sent): the JSON bytes read by Python's own parser,
    /// which builds the objects faster than a walk over a Rust value tree would.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let bytes = PyBytes::new(py, &self.json_bytes(py));
            let loads = py.import("json")?.getattr("loads")?;
            Ok(loads.call1((bytes,))?.unbind())
        })
    }

    /// What the request guard changed in the messages to make the body valid, as
    /// `(kind, count)` pairs (empty when the messages were valid as given, or the guard was
    /// off).
    #[getter]
    fn guard_changes(&self) -> Vec<(&'static str, usize)> {
        self.payload.guard.counts()
    }

    /// The HTTP headers the body needs besides the provider's usual ones, as a new dict:
    /// `anthropic-beta` (comma-joined, after the betas already given in the model's or the
    /// options' `headers`) when the body carries `context_management` edits; empty otherwise.
    #[getter]
    fn headers(&self) -> std::collections::BTreeMap<&str, &str> {
        self.payload
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// The body as compact JSON bytes, written as `JSON.stringify` writes them.
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            // The messages' text goes straight into the bytes object: one copy, not two.
            let payload = Arc::clone(&self.payload);
            let (json, rest, at) = payload.json_parts();
            PyBytes::new_with(py, json.len() + rest.len(), |buf| {
                buf[..at].copy_from_slice(&rest[..at]);
                buf[at..at + json.len()].copy_from_slice(json);
                buf[at + json.len()..].copy_from_slice(&rest[at..]);
                Ok(())
            })
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::errors::guard(|| {
            let keys = self.payload.keys();
            Ok(format!(
                "RequestPayload(api={}, keys={})",
                crate::convert::py_repr(py, self.api.as_str())?,
                crate::convert::py_repr(py, keys)?
            ))
        })
    }
}

fn payload_error(err: PayloadError) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// Parses a JSON text after removing lone surrogate escapes.
fn parse_sanitized(text: &str, what: &str) -> PyResult<Value> {
    let fixed = strip_lone_surrogate_escapes(text);
    parse_value(fixed.as_deref().unwrap_or(text))
        .map_err(|e| PyValueError::new_err(format!("invalid {what} JSON: {e}")))
}

fn messages_arg(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<Arc<Transcript>> {
    if let Ok(t) = messages.cast::<PyTranscript>() {
        return Ok(Arc::clone(&t.get().inner));
    }
    let Ok(text) = messages.extract::<String>() else {
        return Err(PyTypeError::new_err(
            "messages must be a Transcript or the JSON text of a message list",
        ));
    };
    let parsed = py.detach(move || {
        let fixed = strip_lone_surrogate_escapes(&text);
        Transcript::from_json(fixed.as_deref().unwrap_or(&text))
    });
    parsed
        .map(Arc::new)
        .map_err(|e| PyValueError::new_err(format!("invalid messages JSON: {e}")))
}

/// The request body for `request["model"]["api"]`. `request_json` is the JSON text of
/// `{model, systemPrompt?, tools?, options?}`; `messages` a `Transcript` or a JSON array text.
/// `compact`: the body of OpenAI's `POST /responses/compact` instead (Responses APIs only).
#[pyfunction]
#[pyo3(signature = (
    request_json, messages, *, simple = false, now_ms = 0, guard = true, compact = false
))]
pub fn _build_request_payload(
    py: Python<'_>,
    request_json: &str,
    messages: &Bound<'_, PyAny>,
    simple: bool,
    now_ms: i64,
    guard: bool,
    compact: bool,
) -> PyResult<PyRequestPayload> {
    crate::errors::guard(|| {
        let mut request = parse_sanitized(request_json, "request")?;
        let Some(fields) = request.as_object_mut() else {
            return Err(PyTypeError::new_err("request must be a JSON object"));
        };
        let model = fields.remove("model").unwrap_or(Value::Null);
        let api = model
            .get("api")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let system_prompt = match fields.remove("systemPrompt") {
            Some(Value::String(s)) => Some(s),
            None | Some(Value::Null) => None,
            Some(_) => return Err(PyTypeError::new_err("systemPrompt must be a string")),
        };
        let tools = fields.remove("tools").filter(|t| !t.is_null());
        let options = match fields.remove("options") {
            Some(Value::Object(map)) => map,
            None | Some(Value::Null) => Map::new(),
            Some(_) => return Err(PyTypeError::new_err("options must be a dict")),
        };
        let transcript = messages_arg(py, messages)?;
        let request = PayloadRequest {
            model,
            system_prompt,
            tools,
            options,
            simple,
            now_ms,
            guard,
        };
        let payload = py
            .detach(move || {
                if compact {
                    build_compact_payload(&request, &transcript)
                } else {
                    build_payload(&request, &transcript)
                }
            })
            .map_err(payload_error)?;
        Ok(PyRequestPayload {
            payload: Arc::new(payload),
            api,
        })
    })
}

/// pi-ai's `transformMessages` over a JSON array text of messages; returns the JSON text of
/// the result. `normalizer` is `none`, `anthropic` or `bedrock`.
#[pyfunction]
#[pyo3(signature = (model_json, messages_json, normalizer = "none", *, now_ms = 0, guard = true))]
pub fn _transform_messages(
    py: Python<'_>,
    model_json: &str,
    messages_json: &str,
    normalizer: &str,
    now_ms: i64,
    guard: bool,
) -> PyResult<String> {
    crate::errors::guard(|| {
        let Some(normalizer) = Normalizer::from_name(normalizer) else {
            return Err(PyValueError::new_err(format!(
                "unknown tool-call id normalizer: {normalizer:?}"
            )));
        };
        let model = parse_sanitized(model_json, "model")?;
        let model = Model::from_value(&model).map_err(payload_error)?;
        let messages = match parse_sanitized(messages_json, "messages")? {
            Value::Array(items) => items,
            _ => return Err(PyTypeError::new_err("messages must be a JSON array")),
        };
        let out = py.detach(move || {
            let messages = if guard {
                // The request guard first (clawctx's safe default), as the payload builders do.
                let target = GuardTarget {
                    provider: Some(&model.provider),
                    api: Some(&model.api),
                    model_id: Some(&model.id),
                    verbatim_ids: false,
                };
                let given = Transcript::from_values(&messages);
                let (guarded, report) = guard_request(&given, target, false, now_ms);
                if report.changed() {
                    guarded
                        .messages()
                        .iter()
                        .map(|m| m.text().to_value().unwrap_or(Value::Null))
                        .collect()
                } else {
                    messages
                }
            } else {
                messages
            };
            core_transform(messages, &model, normalizer, now_ms)
        });
        Ok(to_js_string(&Value::Array(out)))
    })
}

/// The JSON bytes of a body argument: a `RequestPayload` (written in Rust) or `bytes`.
/// A body for [`_cache_diff`]: a `bytes` object's own buffer (no copy; `PyBackedBytes`
/// keeps the immutable object alive and is readable without the GIL) or a payload's JSON.
enum Body {
    Python(PyBackedBytes),
    Written(Vec<u8>),
}

impl std::ops::Deref for Body {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Body::Python(b) => b,
            Body::Written(b) => b,
        }
    }
}

fn body_bytes(py: Python<'_>, body: &Bound<'_, PyAny>, which: &str) -> PyResult<Body> {
    if let Ok(p) = body.cast::<PyRequestPayload>() {
        return Ok(Body::Written(p.get().json_bytes(py)));
    }
    if let Ok(b) = body.cast::<PyBytes>() {
        return Ok(Body::Python(PyBackedBytes::from(b.clone())));
    }
    Err(PyTypeError::new_err(format!(
        "{which} must be bytes or a RequestPayload"
    )))
}

/// `(path, previous_offset, next_offset, cause, rewrite_tokens)`.
type CacheBreakTuple = (String, usize, usize, &'static str, u64);

/// Where `next` stops extending `previous` as a provider's prompt cache sees it (tools, system
/// prompt, then messages; cache markers skipped): `None` when it extends it, else `(path,
/// previous_offset, next_offset, cause, rewrite_tokens)`. Bodies are JSON bytes or
/// `RequestPayload`s; the walk runs without the GIL. Raises `ValueError` for a body that is not
/// a JSON object.
#[pyfunction]
#[pyo3(signature = (previous, next, encoding = "o200k_base", estimator = "calibrated"))]
pub fn _cache_diff(
    py: Python<'_>,
    previous: &Bound<'_, PyAny>,
    next: &Bound<'_, PyAny>,
    encoding: &str,
    estimator: &str,
) -> PyResult<Option<CacheBreakTuple>> {
    crate::errors::guard(|| {
        let counter = crate::token_count::counter(encoding, estimator)?;
        let a = body_bytes(py, previous, "previous")?;
        let b = body_bytes(py, next, "next")?;
        let found = py
            .detach(move || core_cache_diff(&a, &b, counter))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(found.map(break_tuple))
    })
}

fn break_tuple(br: CacheBreak) -> CacheBreakTuple {
    (
        br.path,
        br.previous_offset,
        br.next_offset,
        br.cause.name(),
        br.rewrite_tokens,
    )
}

/// `_cache_diff` of each body pushed with the one pushed before it, for the requests of a
/// session in turn: the previous body's layout is kept, so each push reads structurally only
/// what the new body does not repeat. One chain serves one thread at a time.
#[pyclass(name = "_CacheDiffChain", module = "clawctx._core.payload")]
pub struct PyCacheDiffChain {
    counter: clawctx_core::token_count::TokenCounter,
    previous: Option<(Body, BodyLayout)>,
}

#[pymethods]
impl PyCacheDiffChain {
    #[new]
    #[pyo3(signature = (encoding = "o200k_base", estimator = "calibrated"))]
    fn new(encoding: &str, estimator: &str) -> PyResult<Self> {
        crate::errors::guard(|| {
            Ok(PyCacheDiffChain {
                counter: crate::token_count::counter(encoding, estimator)?,
                previous: None,
            })
        })
    }

    /// Where `body` stops extending the body pushed before it (`_cache_diff`'s tuple; `None`
    /// when it extends it or is the first), then keeps it for the next push. Raises
    /// `ValueError` for a body that is not a JSON object (the chain then starts over).
    fn push(
        &mut self,
        py: Python<'_>,
        body: &Bound<'_, PyAny>,
    ) -> PyResult<Option<CacheBreakTuple>> {
        crate::errors::guard(|| {
            let next = body_bytes(py, body, "body")?;
            let counter = self.counter;
            let previous = self.previous.take();
            let (found, kept) = py.detach(move || {
                let outcome = match &previous {
                    Some((bytes, layout)) => cache_diff_after(bytes, layout, &next, counter),
                    None => body_layout(&next).map(|layout| (None, layout)),
                };
                match outcome {
                    Ok((found, layout)) => (Ok(found), Some((next, layout))),
                    Err(e) => (Err(e), None),
                }
            });
            self.previous = kept;
            found
                .map(|f| f.map(break_tuple))
                .map_err(|e| PyValueError::new_err(e.to_string()))
        })
    }

    /// Forgets the previous body: the next push is compared with nothing.
    fn reset(&mut self) {
        self.previous = None;
    }
}
