//! `ImportedTranscript`'s Python methods and `Format` as a Python string (the `python`
//! feature): the class is the core struct itself, so its fields are declared once, in `mod.rs`.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::{Format, ImportedTranscript};

/// A format reads as its name (`"pi"`, `"claude-code"`, `"codex"`), as the stub's `Literal`.
impl<'py> IntoPyObject<'py> for &Format {
    type Target = PyString;
    type Output = Bound<'py, PyString>;
    type Error = std::convert::Infallible;

    fn into_pyobject(self, py: Python<'py>) -> Result<Bound<'py, PyString>, Self::Error> {
        Ok(PyString::intern(py, self.as_str()))
    }
}

#[pymethods]
impl ImportedTranscript {
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(
            slf.as_any(),
            &["format", "lines", "damaged_lines", "session_id", "model"],
        )
    }
}
