//! Helpers shared by the Python classes the core declares with the `python` feature (the
//! report types `clawctx._core` exposes directly, without a mirror in the binding).

use pyo3::prelude::*;

/// `Name(field=repr, ...)` for the listed attributes of a Python object.
pub fn fields_repr(obj: &Bound<'_, PyAny>, fields: &[&str]) -> PyResult<String> {
    let mut parts = Vec::with_capacity(fields.len());
    for field in fields {
        parts.push(format!("{field}={}", obj.getattr(*field)?.repr()?));
    }
    Ok(format!("{}({})", obj.get_type().name()?, parts.join(", ")))
}
