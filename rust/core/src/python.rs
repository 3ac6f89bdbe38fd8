//! Helpers shared by the Python classes the core declares with the `python` feature (the
//! report types `clawctx._core` exposes directly, without a mirror in the binding).

use pyo3::prelude::*;

/// `Name(field=repr(obj.field), ...)`, from the object's own attributes: a repr that reads as
/// Python whatever the Rust types behind the fields are.
pub fn fields_repr(obj: &Bound<'_, PyAny>, fields: &[&str]) -> PyResult<String> {
    let mut parts = Vec::with_capacity(fields.len());
    for field in fields {
        parts.push(format!("{field}={}", obj.getattr(*field)?.repr()?));
    }
    Ok(format!("{}({})", obj.get_type().name()?, parts.join(", ")))
}
