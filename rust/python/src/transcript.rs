//! `Transcript` and the functions over plain message data.

use std::sync::Arc;

use clawctx_core::session::{index_entries, LeafSelector};
use clawctx_core::{Entry, Transcript};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyList, PySlice};

use crate::convert::{from_py, json_text_to_py};
use crate::session::PySessionContext;

/// An ordered list of agent messages owned by Rust.
///
/// Indexing and iteration give dicts, built on request. Messages read from a session file keep
/// their exact bytes: `to_json()` of an unmodified transcript reproduces them.
#[pyclass(
    name = "Transcript",
    module = "clawctx._core.transcript",
    frozen,
    sequence
)]
pub struct PyTranscript {
    pub inner: Arc<Transcript>,
}

impl PyTranscript {
    pub fn new(inner: Transcript) -> Self {
        PyTranscript {
            inner: Arc::new(inner),
        }
    }

    /// Whether message `i` equals (`==`) `value`.
    fn message_equals(&self, py: Python<'_>, i: usize, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        json_text_to_py(py, self.inner.messages()[i].as_str())?
            .bind(py)
            .eq(value)
    }

    /// The first index in `start..stop` whose message equals `value`.
    fn find(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        start: usize,
        stop: usize,
    ) -> PyResult<Option<usize>> {
        for i in start..stop {
            if self.message_equals(py, i, value)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    fn message_at(&self, py: Python<'_>, index: isize) -> PyResult<Py<PyAny>> {
        let len = self.inner.len() as isize;
        let i = if index < 0 { index + len } else { index };
        if i < 0 || i >= len {
            return Err(PyIndexError::new_err("transcript index out of range"));
        }
        json_text_to_py(py, self.inner.messages()[i as usize].as_str())
    }
}

/// `transcript` in a new `Transcript` object, shared: the core's report types call this (through
/// `clawctx_core::transcript::set_transcript_class`, registered at module init) to show the
/// transcripts they hold.
pub fn wrap_shared(py: Python<'_>, transcript: Arc<Transcript>) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, PyTranscript { inner: transcript })?.into_any())
}

/// Accepts a `Transcript` (shared, no copy) or a list of message dicts.
pub fn transcript_arg(obj: &Bound<'_, PyAny>) -> PyResult<Arc<Transcript>> {
    transcript_arg_with(obj, false)
}

/// Like [`transcript_arg`], but a list may also hold entries that are not dicts (None,
/// numbers, strings), kept as they are: OpenClaw 2026.3.13's transcript repairs
/// (`src/agents/session-transcript-repair.ts`) pass them through.
pub fn transcript_arg_lenient(obj: &Bound<'_, PyAny>) -> PyResult<Arc<Transcript>> {
    transcript_arg_with(obj, true)
}

fn transcript_arg_with(obj: &Bound<'_, PyAny>, non_dicts: bool) -> PyResult<Arc<Transcript>> {
    if let Ok(t) = obj.cast::<PyTranscript>() {
        return Ok(Arc::clone(&t.get().inner));
    }
    let list = obj
        .try_iter()
        .map_err(|_| PyTypeError::new_err("expected a Transcript or a list of message dicts"))?;
    let mut values = Vec::new();
    for item in list {
        let value = from_py(&item?)?;
        if !non_dicts && !value.is_object() {
            return Err(PyTypeError::new_err("every message must be a dict"));
        }
        values.push(value);
    }
    Ok(Arc::new(Transcript::from_values(&values)))
}

/// `head` followed by `tail`, sharing their messages.
fn concatenated(head: &Transcript, tail: &Transcript) -> PyTranscript {
    let mut messages = Vec::with_capacity(head.len() + tail.len());
    messages.extend(head.messages().iter().cloned());
    messages.extend(tail.messages().iter().cloned());
    PyTranscript::new(Transcript::from_messages(messages))
}

#[pymethods]
impl PyTranscript {
    #[new]
    #[pyo3(signature = (messages = None))]
    fn py_new(messages: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        crate::errors::guard(|| match messages {
            None => Ok(PyTranscript::new(Transcript::default())),
            Some(obj) => Ok(PyTranscript {
                inner: transcript_arg(obj)?,
            }),
        })
    }

    /// A transcript from a list of message dicts. Entries that are not dicts (None, numbers,
    /// strings) are kept as they are, as upstream's transcript repairs keep them.
    #[staticmethod]
    fn from_list(messages: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard(|| {
            Ok(PyTranscript {
                inner: transcript_arg_lenient(messages)?,
            })
        })
    }

    /// A transcript from a JSON array (bytes or str); each message keeps its exact text.
    #[staticmethod]
    fn from_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard(|| {
            let text: String = if let Ok(b) = data.cast::<PyBytes>() {
                String::from_utf8(b.as_bytes().to_vec())
                    .map_err(|e| PyValueError::new_err(format!("invalid UTF-8: {e}")))?
            } else {
                data.extract::<String>()
                    .map_err(|_| PyTypeError::new_err("from_json takes bytes or str"))?
            };
            let parsed = py.detach(move || Transcript::from_json(&text));
            parsed
                .map(PyTranscript::new)
                .map_err(|e| PyValueError::new_err(format!("invalid transcript JSON: {e}")))
        })
    }

    /// The JSON array as bytes.
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        crate::errors::guard(|| {
            // Written straight into the bytes object: no second copy of a large transcript.
            let inner = &self.inner;
            PyBytes::new_with(py, inner.json_len(), |buf| {
                inner.write_json(buf);
                Ok(())
            })
        })
    }

    /// Every message as a dict.
    fn to_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::errors::guard(|| {
            let items: PyResult<Vec<Py<PyAny>>> = self
                .inner
                .messages()
                .iter()
                .map(|m| json_text_to_py(py, m.as_str()))
                .collect();
            PyList::new(py, items?)
        })
    }

    /// Per-message token estimates (pi's chars/4, `estimateTokens`; `cjk=True` for OpenClaw's CJK
    /// weighting) as a numpy `int64` array, without building per-message Python objects.
    #[pyo3(signature = (*, cjk = false))]
    fn token_counts<'py>(&self, py: Python<'py>, cjk: bool) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| crate::transcript_ops::token_counts_array(py, &self.inner, cjk))
    }

    /// The `role` of every message (`None` where missing), without building message dicts.
    fn roles(&self) -> PyResult<Vec<Option<String>>> {
        crate::errors::guard(|| Ok((0..self.inner.len()).map(|i| self.inner.role(i)).collect()))
    }

    /// A transcript with the messages at the given indices replaced (negative indices count
    /// from the end); every other message is shared with `self`, not copied or re-parsed.
    fn replace_messages(&self, replacements: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard(|| {
            let len = self.inner.len() as isize;
            let mut edits = std::collections::HashMap::new();
            let items = replacements.call_method0("items").map_err(|_| {
                PyTypeError::new_err("replacements must be a mapping {index: message}")
            })?;
            for item in items.try_iter()? {
                let (index, message): (isize, Bound<'_, PyAny>) = item?.extract()?;
                let i = if index < 0 { index + len } else { index };
                if i < 0 || i >= len {
                    return Err(PyIndexError::new_err(format!(
                        "transcript index {index} out of range"
                    )));
                }
                let value = from_py(&message)?;
                if !value.is_object() {
                    return Err(PyTypeError::new_err("every message must be a dict"));
                }
                edits.insert(i as usize, value);
            }
            Ok(PyTranscript::new(
                self.inner.map_messages(|i, _| edits.remove(&i)),
            ))
        })
    }

    /// The concatenation of this transcript and `other` (a Transcript or a list of message
    /// dicts); messages are shared, not copied.
    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard(|| Ok(concatenated(&self.inner, &*transcript_arg(other)?)))
    }

    /// `list_of_messages + transcript`: a transcript with `other`'s messages first.
    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard(|| Ok(concatenated(&*transcript_arg(other)?, &self.inner)))
    }

    /// `{index: value}` of the top-level field `key` for the messages that have it, without
    /// building the other messages' dicts (e.g. `top_level_values("provenance")`).
    fn top_level_values<'py>(
        &self,
        py: Python<'py>,
        key: &str,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        crate::errors::guard(|| {
            let inner = Arc::clone(&self.inner);
            let key = key.to_owned();
            let found = py.detach(move || inner.top_level_values(&key));
            let out = pyo3::types::PyDict::new(py);
            for (index, value) in found {
                out.set_item(index, crate::convert::to_py(py, &value)?)?;
            }
            Ok(out)
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        crate::errors::guard(|| Ok(self.inner.len()))
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            if let Ok(slice) = key.cast::<PySlice>() {
                let indices = slice.indices(self.inner.len() as isize)?;
                let mut picked = Vec::with_capacity(indices.slicelength);
                let mut i = indices.start;
                for _ in 0..indices.slicelength {
                    picked.push(self.inner.messages()[i as usize].clone());
                    i += indices.step;
                }
                return Ok(
                    Py::new(py, PyTranscript::new(Transcript::from_messages(picked)))?.into_any(),
                );
            }
            let index: isize = key.extract().map_err(|_| {
                PyTypeError::new_err("transcript indices must be integers or slices")
            })?;
            self.message_at(py, index)
        })
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| Ok(self.to_list(py)?.into_any().try_iter()?.into_any()))
    }

    /// Equal to a `Transcript` with the same messages, and to a `list` of equal messages.
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let equal = if let Ok(o) = other.cast::<PyTranscript>() {
                *o.get().inner == *self.inner
            } else if let Ok(list) = other.cast::<PyList>() {
                list.len() == self.inner.len() && {
                    let mut all = true;
                    for (i, item) in list.iter().enumerate() {
                        if !self.message_equals(py, i, &item)? {
                            all = false;
                            break;
                        }
                    }
                    all
                }
            } else {
                return Ok(py.NotImplemented());
            };
            Ok(PyBool::new(py, equal).to_owned().into_any().unbind())
        })
    }

    /// `value in transcript`: whether a message equals (`==`) `value`.
    fn __contains__(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.find(py, value, 0, self.inner.len())?.is_some()))
    }

    /// The messages as dicts, last first.
    fn __reversed__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::errors::guard(|| {
            let list = self.to_list(py)?;
            list.reverse()?;
            Ok(list.into_any().try_iter()?.into_any())
        })
    }

    /// The number of messages equal (`==`) to `value`.
    fn count(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        crate::errors::guard(|| {
            let mut n = 0;
            for i in 0..self.inner.len() {
                if self.message_equals(py, i, value)? {
                    n += 1;
                }
            }
            Ok(n)
        })
    }

    /// The index of the first message equal (`==`) to `value`, searching `[start:stop]` (as
    /// `list.index`: negative bounds count from the end); `ValueError` when there is none.
    #[pyo3(signature = (value, start = 0, stop = None))]
    fn index(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        start: isize,
        stop: Option<isize>,
    ) -> PyResult<usize> {
        crate::errors::guard(|| {
            let len = self.inner.len() as isize;
            let clamp = |i: isize| (if i < 0 { i + len } else { i }).clamp(0, len) as usize;
            let (start, stop) = (clamp(start), clamp(stop.unwrap_or(len)));
            self.find(py, value, start, stop)?
                .ok_or_else(|| PyValueError::new_err("message is not in the transcript"))
        })
    }

    fn __repr__(&self) -> PyResult<String> {
        crate::errors::guard(|| Ok(format!("Transcript({} messages)", self.inner.len())))
    }
}

/// `buildSessionContext` over plain entry dicts. `leaf_given=False` means "last entry";
/// otherwise `leaf_id=None` means the empty context and an unknown id falls back to the last
/// entry. (The Python facade turns an omitted argument into `leaf_given=False`.)
#[pyfunction]
#[pyo3(signature = (entries, leaf_id, leaf_given))]
pub fn build_session_context(
    py: Python<'_>,
    entries: &Bound<'_, PyAny>,
    leaf_id: Option<String>,
    leaf_given: bool,
) -> PyResult<PySessionContext> {
    crate::errors::guard(|| {
        let mut values = Vec::new();
        for item in entries.try_iter()? {
            values.push(from_py(&item?)?);
        }
        let context = py.detach(move || {
            let entries: Vec<Entry> = values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| Entry::from_value(v, i + 1))
                .collect();
            let index = index_entries(&entries);
            let selector = match (&leaf_id, leaf_given) {
                (_, false) => LeafSelector::Last,
                (None, true) => LeafSelector::Null,
                (Some(id), true) => LeafSelector::Id(id),
            };
            clawctx_core::build_session_context(&entries, &index, selector)
        });
        PySessionContext::from_core(py, context)
    })
}

/// `convertToLlm` (pi-mono 0.58.3 `packages/coding-agent/src/core/messages.ts`): bashExecution,
/// custom, branchSummary and compactionSummary messages become user messages with pi's exact texts;
/// user, assistant and toolResult pass through byte for byte; unknown roles are dropped.
#[pyfunction]
pub fn convert_to_llm(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<PyTranscript> {
    crate::errors::guard(|| {
        let transcript = transcript_arg(messages)?;
        let converted = py.detach(move || clawctx_core::convert_to_llm(&transcript));
        Ok(PyTranscript::new(converted))
    })
}
