//! `CutPoint`'s Python methods (the `python` feature): the class is the core struct itself, so
//! its fields are declared once, in `cut_point.rs`.

use pyo3::prelude::*;

use super::cut_point::CutPoint;

#[pymethods]
impl CutPoint {
    /// Index of the first entry kept verbatim.
    #[getter]
    fn first_kept_entry_index(&self) -> usize {
        self.first_kept_entry_index
    }

    /// Index of the entry that starts the split turn, or -1 when the turn is not split.
    #[getter]
    fn turn_start_index(&self) -> i64 {
        // pi's -1; an index past i64::MAX cannot come from a list held in memory.
        self.turn_start_index
            .map_or(-1, |i| i64::try_from(i).unwrap_or(i64::MAX))
    }

    /// Whether the cut lands inside a turn (the cut entry is not a user message).
    #[getter]
    fn is_split_turn(&self) -> bool {
        self.is_split_turn
    }

    fn __repr__(&self) -> String {
        format!(
            "CutPoint(first_kept_entry_index={}, turn_start_index={}, is_split_turn={})",
            self.first_kept_entry_index,
            self.turn_start_index(),
            if self.is_split_turn { "True" } else { "False" }
        )
    }
}
