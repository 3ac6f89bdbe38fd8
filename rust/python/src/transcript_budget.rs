//! Binding of the transcript stage's budget units (`clawctx.interop.fit_to_budget`).

use std::sync::Arc;

use clawctx_core::transcript;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::transcript::transcript_arg;

/// The units `fit_to_budget` selects from, as two numpy arrays: each unit's first message index
/// (`int64`) and what it starts with (`int8`: 0 user side, 1 assistant, 2 tool result,
/// 3 system/developer, 4 other, 5 a user-side message of blank text, which no writer sends). An assistant message and the tool results right after it
/// are one unit. No per-message Python objects are built.
#[pyfunction(name = "_budget_units")]
pub fn budget_units<'py>(
    py: Python<'py>,
    messages: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    crate::errors::guard(|| {
        let input = transcript_arg(messages)?;
        let source = Arc::clone(&input);
        let units = py.detach(move || transcript::budget_units(&source));
        let starts: Vec<u8> = units
            .iter()
            .flat_map(|(start, _)| (i64::try_from(*start).unwrap_or(i64::MAX)).to_le_bytes())
            .collect();
        let kinds: Vec<u8> = units.iter().map(|(_, kind)| *kind as u8).collect();
        let numpy = py.import("numpy")?;
        Ok((
            numpy.call_method1("frombuffer", (PyBytes::new(py, &starts), "<i8"))?,
            numpy.call_method1("frombuffer", (PyBytes::new(py, &kinds), "i1"))?,
        ))
    })
}
