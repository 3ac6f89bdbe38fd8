//! `StripResult`'s Python methods (the `python` feature): the class is the core struct itself,
//! so its fields are declared once, in `heartbeat.rs`. It behaves as the 3-tuple
//! `(should_skip, text, did_strip)`: length, indexing, unpacking, equality and hash.

use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyIterator, PyString, PyTuple};

use super::heartbeat::StripResult;

impl StripResult {
    fn as_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (self.should_skip, self.text.as_str(), self.did_strip).into_pyobject(py)
    }

    fn same_fields(&self, should_skip: bool, text: &str, did_strip: bool) -> bool {
        (should_skip, text, did_strip) == (self.should_skip, self.text.as_str(), self.did_strip)
    }
}

#[pymethods]
impl StripResult {
    fn __len__(&self) -> usize {
        3
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyAny>> {
        let i = if index < 0 { index + 3 } else { index };
        if !(0..3).contains(&i) {
            return Err(PyIndexError::new_err("StripResult index out of range"));
        }
        self.as_tuple(py)?.get_item(i as usize)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        self.as_tuple(py)?.try_iter()
    }

    // Equal to another `StripResult`, or to a `(bool, str, bool)` tuple, with the same fields.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(o) = other.cast::<StripResult>() {
            let o = o.get();
            return self.same_fields(o.should_skip, &o.text, o.did_strip);
        }
        other
            .cast::<PyTuple>()
            .ok()
            .and_then(|t| t.extract::<(bool, String, bool)>().ok())
            .is_some_and(|(s, t, d)| self.same_fields(s, &t, d))
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.as_tuple(py)?.hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let py_bool = |b: bool| if b { "True" } else { "False" };
        Ok(format!(
            "StripResult(should_skip={}, text={}, did_strip={})",
            py_bool(self.should_skip),
            PyString::new(py, &self.text).repr()?,
            py_bool(self.did_strip)
        ))
    }
}
