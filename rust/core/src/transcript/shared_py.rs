//! [`SharedTranscript`] in Python (the `python` feature): a report field of this type reads as
//! a `clawctx._core.Transcript`, the same object on every read.
//!
//! The `Transcript` class is the binding's (`rust/python/src/transcript.rs`: its methods convert
//! messages to Python objects and map errors, which only the binding does), so the binding
//! hands the core a function that wraps a transcript in one ([`set_transcript_class`]) when the
//! module loads.

use std::sync::{Arc, OnceLock};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use super::list::Transcript;
use super::shared::SharedTranscript;

/// Wraps a transcript in a `clawctx._core.Transcript` object, sharing it.
pub type TranscriptClass = fn(Python<'_>, Arc<Transcript>) -> PyResult<Py<PyAny>>;

static TRANSCRIPT_CLASS: OnceLock<TranscriptClass> = OnceLock::new();

/// Registers the binding's `Transcript` class (its module init calls this once).
pub fn set_transcript_class(wrap: TranscriptClass) {
    // A second registration (the module initialised again) names the same function.
    let _ = TRANSCRIPT_CLASS.set(wrap);
}

impl SharedTranscript {
    /// The Python object showing the transcript: the one given to [`Self::show_as`], else a new
    /// `Transcript` (made once, then returned on every call).
    pub fn object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let object = self.object.get_or_try_init(py, || {
            let wrap = TRANSCRIPT_CLASS.get().ok_or_else(|| {
                PyRuntimeError::new_err("clawctx._core has not registered its Transcript class")
            })?;
            wrap(py, Arc::clone(self.arc()))
        })?;
        Ok(object.bind(py).clone())
    }

    /// Makes `object` (a `Transcript` holding these messages, e.g. the caller's own input when a
    /// pass changed nothing) the object Python sees. False when an object was already read.
    pub fn show_as(&self, py: Python<'_>, object: Py<PyAny>) -> bool {
        self.object.set(py, object).is_ok()
    }
}

impl<'py> IntoPyObject<'py> for &SharedTranscript {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.object(py)
    }
}
