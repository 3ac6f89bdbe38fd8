//! Conversion between Python objects and JSON values, and the injectable clock and id source.

use clawctx_core::base::{system_now_ms, IdSource, RandomIds};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;

/// A JSON value as Python objects (dict key order kept).
pub fn to_py(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    pythonize::pythonize(py, value)
        .map(Bound::unbind)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A Python object (dict, list, str, int, float, bool, None) as a JSON value.
pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    pythonize::depythonize(obj)
        .map_err(|e| PyTypeError::new_err(format!("not JSON-serializable: {e}")))
}

/// JSON text parsed into Python objects.
pub fn json_text_to_py(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    let value =
        clawctx_core::base::parse_value(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    to_py(py, &value)
}

/// The `now_ms=` argument: `None` (system clock), a fixed int, or a callable returning an int.
#[derive(Debug)]
pub enum Clock {
    System,
    Fixed(i64),
    Callable(Py<PyAny>),
}

impl Clock {
    pub fn from_arg(arg: Option<&Bound<'_, PyAny>>) -> PyResult<Clock> {
        match arg {
            None => Ok(Clock::System),
            Some(obj) if obj.is_none() => Ok(Clock::System),
            Some(obj) if obj.is_callable() => Ok(Clock::Callable(obj.clone().unbind())),
            Some(obj) => obj.extract::<i64>().map(Clock::Fixed).map_err(|_| {
                PyTypeError::new_err("now_ms must be an int (milliseconds since the epoch) or a callable returning one")
            }),
        }
    }

    pub fn now_ms(&self, py: Python<'_>) -> PyResult<i64> {
        match self {
            Clock::System => Ok(system_now_ms()),
            Clock::Fixed(ms) => Ok(*ms),
            Clock::Callable(f) => f.call0(py)?.extract::<i64>(py),
        }
    }
}

/// The `id_factory=` argument as an [`IdSource`]: a Python callable returning `str`, or pi's
/// random ids. A Python error is kept and raised after the core call returns.
pub struct PyIdSource<'py> {
    py: Python<'py>,
    factory: Option<&'py Py<PyAny>>,
    pub error: Option<PyErr>,
}

impl<'py> PyIdSource<'py> {
    pub fn new(py: Python<'py>, factory: Option<&'py Py<PyAny>>) -> Self {
        PyIdSource {
            py,
            factory,
            error: None,
        }
    }

    pub fn finish(self) -> PyResult<()> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl IdSource for PyIdSource<'_> {
    fn next_id(&mut self) -> String {
        let Some(factory) = self.factory else {
            return RandomIds.next_id();
        };
        if self.error.is_some() {
            return RandomIds.next_id();
        }
        match factory.call0(self.py).and_then(|v| {
            v.bind(self.py)
                .cast::<PyString>()
                .map_err(PyErr::from)
                .and_then(|s| s.to_str().map(str::to_owned))
        }) {
            Ok(id) => id,
            Err(e) => {
                self.error = Some(e);
                RandomIds.next_id()
            }
        }
    }
}
