//! `SessionSummary`'s Python methods (the `python` feature): the class is the core struct
//! itself, so its fields are declared once, in `scan.rs`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::scan::{SessionSummary, SESSION_SUMMARY_FIELDS as FIELDS};

#[pymethods]
impl SessionSummary {
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(
            slf.as_any(),
            &[
                "path",
                "error",
                "format",
                "session_id",
                "entries",
                "context_messages",
                "estimated_tokens",
            ],
        )
    }

    /// Every field as a plain dict (`path` as a string), in a fixed order.
    fn to_dict<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(slf.py());
        for field in FIELDS {
            if *field == "path" {
                out.set_item(field, slf.get().path.to_string_lossy().into_owned())?;
            } else {
                out.set_item(field, slf.getattr(*field)?)?;
            }
        }
        Ok(out)
    }

    /// The names `to_dict` returns, in its order.
    #[classattr]
    fn fields() -> Vec<&'static str> {
        FIELDS.to_vec()
    }
}
