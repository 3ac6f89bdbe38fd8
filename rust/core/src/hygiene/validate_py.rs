//! `Violation`'s Python methods (the `python` feature): the class is the core struct itself, so
//! its fields are declared once, in `validate.rs`.

use pyo3::prelude::*;

use super::validate::Violation;

#[pymethods]
impl Violation {
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(slf.as_any(), &["index", "rule", "detail"])
    }
}
