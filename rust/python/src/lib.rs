//! clawctx._core: thin PyO3 bindings of clawctx-core. Conversion between Python objects and
//! JSON values happens here and only on request; parsing, context building and repair run
//! with the GIL released.

mod convert;
mod errors;
mod ops;
mod repair;
mod session;
mod transcript;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
mod _core {
    use super::*;

    #[pymodule_export]
    use crate::errors::{ClawctxError, RepairError, SessionFormatError, SessionLockError};
    #[pymodule_export]
    use crate::ops::{
        estimate_context_tokens, estimate_messages_tokens, estimate_pruning_chars,
        estimate_string_chars, estimate_tokens, history_limit_for_session_key, is_tool_prunable,
        limit_history_turns, prune_context, repair_tool_call_inputs, repair_tool_pairing,
        sanitize_tool_call_inputs, sanitize_tool_use_result_pairing, usage_tokens, ContextTokens,
        PairingReport, PyPruningSettings, ToolCallInputsReport,
    };
    #[pymodule_export]
    use crate::repair::{repair_session_file, LineChange, RepairReport};
    #[pymodule_export]
    use crate::session::{PySession, SessionContext, SkippedLine};
    #[pymodule_export]
    use crate::transcript::{build_session_context, convert_to_llm, PyTranscript};

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add(
            "CURRENT_SESSION_VERSION",
            clawctx_core::session::CURRENT_SESSION_VERSION,
        )?;
        Ok(())
    }
}
