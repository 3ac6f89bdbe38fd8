//! `ContextTokens`'s Python methods (the `python` feature): the class is the core struct itself,
//! so its fields are declared once, in `context_tokens.rs`.

use pyo3::prelude::*;

use super::context_tokens::ContextTokens;

#[pymethods]
impl ContextTokens {
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::python::fields_repr(
            slf.as_any(),
            &[
                "tokens",
                "usage_tokens",
                "trailing_tokens",
                "last_usage_index",
            ],
        )
    }
}
