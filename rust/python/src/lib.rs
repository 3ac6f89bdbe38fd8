//! clawctx._core: thin PyO3 bindings of clawctx-core. Conversion between Python objects and
//! JSON values happens here and only on request; parsing, context building and repair run
//! with the GIL released.

mod convert;
mod errors;
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
    use crate::repair::{repair_session_file, LineChange, RepairReport};
    #[pymodule_export]
    use crate::session::{PySession, SessionContext, SkippedLine};
    #[pymodule_export]
    use crate::transcript::{build_session_context, convert_to_llm, estimate_tokens, PyTranscript};

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
