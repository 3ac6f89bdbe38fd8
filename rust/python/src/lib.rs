//! clawctx._core: thin PyO3 bindings of clawctx-core. Conversion between Python objects and
//! JSON values happens here and only on request; parsing, context building and repair run
//! with the GIL released.
//!
//! Conventions: each file binds one core stage (or a part of one) and is named after it
//! (`transcript`, `transcript_ops`, `hygiene`, `hygiene_*`, `token_count`, `session`,
//! `session_*`, `compaction`). Each stage's functions and classes live in a submodule of
//! `clawctx._core` named after the core stage (`clawctx._core.session`, ...: [`stages`]),
//! which the stub package `python/clawctx/_core/` mirrors file for file; every name is also
//! an attribute of `clawctx._core` itself. Every Rust struct exposed to Python is `PyX`
//! declared with `#[pyclass(name = "X", module = "clawctx._core.<stage>", ...)]`, except the
//! report types the core declares itself with its `python` feature (exported below as
//! `clawctx_core::...`, their methods in the core's `*_py.rs` files); conversion between Python
//! objects
//! and JSON values lives in `convert.rs` only, exception classes and the mapping of core errors
//! in `errors.rs` only; core items are imported through the stage surfaces
//! (`clawctx_core::transcript::...`, never a file inside a stage).

mod compaction;
mod convert;
mod errors;
mod foreign_import;
mod hygiene;
mod hygiene_guard;
mod hygiene_heartbeat;
mod hygiene_images;
mod payload;
mod response;
mod session;
mod session_heartbeat;
mod session_leaf_context;
mod session_memory;
mod session_repair;
mod session_scan;
mod stack;
mod token_count;
mod transcript;
mod transcript_budget;
mod transcript_columns;
mod transcript_ops;

use pyo3::prelude::*;
use pyo3::types::PyString;

#[pymodule(gil_used = false)]
mod _core {
    use super::*;

    #[pymodule_export]
    use crate::errors::{_panic_for_tests, InternalError};
    #[pymodule_export]
    use crate::errors::{
        ClawctxError, NotASessionFileError, RepairError, SessionFormatError, SessionLockError,
    };

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        crate::errors::install_panic_hook();
        // The core's report types show their transcripts as this module's `Transcript`.
        clawctx_core::transcript::set_transcript_class(crate::transcript::wrap_shared);
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        let py = m.py();
        for stage in [
            pyo3::wrap_pymodule!(stages::transcript)(py),
            pyo3::wrap_pymodule!(stages::foreign)(py),
            pyo3::wrap_pymodule!(stages::hygiene)(py),
            pyo3::wrap_pymodule!(stages::token_count)(py),
            pyo3::wrap_pymodule!(stages::session)(py),
            pyo3::wrap_pymodule!(stages::compaction)(py),
            pyo3::wrap_pymodule!(stages::payload)(py),
            pyo3::wrap_pymodule!(stages::response)(py),
        ] {
            attach_stage(m, stage.bind(py))?;
        }
        Ok(())
    }
}

/// Makes `stage` the submodule `clawctx._core.<name>`: importable (`sys.modules`, as the
/// import system would for a package; the extension module itself is no package), an
/// attribute of `parent`, and every name of its `__all__` also an attribute of `parent` (and
/// in its `__all__`), so `from clawctx._core import X` keeps working.
fn attach_stage(parent: &Bound<'_, PyModule>, stage: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let full_name = stage.name()?;
    let full_name = full_name.to_cow()?;
    let short = full_name
        .rsplit_once('.')
        .map_or(&*full_name, |(_, name)| name);
    py.import("sys")?
        .getattr("modules")?
        .set_item(&*full_name, stage)?;
    parent.setattr(short, stage)?;
    for name in stage.index()?.iter() {
        let name = name.cast_into::<PyString>()?;
        let value = stage.getattr(&name)?;
        parent.add(name, value)?;
    }
    Ok(())
}

/// The submodules of `clawctx._core`, one per core stage, in pipeline order (`transcript` →
/// `foreign` → … → `response`, see `tests/project/test_import_graph.py`); each lists what its
/// stage exposes. The stub of `clawctx._core.<name>` is `python/clawctx/_core/<name>.pyi`.
mod stages {
    use pyo3::prelude::*;

    /// Transcripts and the operations on their messages (core stage `transcript`).
    #[pymodule(module = "clawctx._core", submodule, gil_used = false)]
    pub mod transcript {
        use super::*;

        // Report types declared in the core (its `python` feature): no mirror here.
        #[pymodule_export]
        use crate::transcript::{convert_to_llm, PyTranscript};
        #[pymodule_export]
        use crate::transcript_budget::budget_units;
        #[pymodule_export]
        use crate::transcript_columns::message_columns;
        #[pymodule_export]
        use crate::transcript_ops::{
            compaction_boundary, compaction_send_view, estimate_context_tokens,
            estimate_messages_tokens, estimate_pruning_chars, estimate_string_chars,
            estimate_tokens, history_limit_for_session_key, is_tool_prunable, limit_history_turns,
            prune_context, repair_tool_call_inputs, repair_tool_pairing, sanitize_tool_call_inputs,
            sanitize_tool_use_result_pairing, usage_tokens, PyPruningSettings,
        };
        #[pymodule_export]
        use clawctx_core::transcript::{ContextTokens, PairingReport, ToolCallInputsReport};

        #[pymodule_init]
        fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
            // Private: the tool-call block types, defined once in the core, for Python code
            // that reads blocks itself (the report, the CLI).
            m.add(
                "_TOOL_CALL_TYPES",
                pyo3::types::PyFrozenSet::new(
                    m.py(),
                    clawctx_core::transcript::PAIRING_TOOL_CALL_TYPES,
                )?,
            )?;
            // `Transcript` implements the sequence protocol; registering makes
            // `isinstance(t, collections.abc.Sequence)` true, as its stub declares.
            m.py()
                .import("collections.abc")?
                .getattr("Sequence")?
                .call_method1("register", (m.getattr("Transcript")?,))?;
            Ok(())
        }
    }

    /// Foreign transcripts: Claude Code and Codex files (core stage `foreign`).
    #[pymodule(module = "clawctx._core", submodule, gil_used = false)]
    pub mod foreign {
        #[pymodule_export]
        use crate::foreign_import::{
            detect_transcript_format_bytes, read_transcript_bytes, read_transcript_file,
        };
        // Declared in the core (its `python` feature): no mirror here.
        #[pymodule_export]
        use clawctx_core::foreign::ImportedTranscript;
    }

    /// Provider hygiene, request guards, images and heartbeat tokens (core stage `hygiene`).
    #[pymodule(module = "clawctx._core", submodule, gil_used = false)]
    pub mod hygiene {
        #[pymodule_export]
        use crate::hygiene::{
            _cache_breakpoint_issues, annotate_inter_session_messages, dedupe_tool_call_ids,
            downgrade_openai_function_call_pairs, downgrade_openai_reasoning,
            drop_delivery_mirror_messages, drop_duplicate_tool_results,
            drop_foreign_compaction_blocks, drop_thinking_blocks, is_valid_tool_call_id,
            normalize_usage, provider_family, resolve_transcript_policy,
            sanitize_google_turn_ordering, sanitize_message_blocks, sanitize_tool_call_id,
            sanitize_tool_call_ids, strip_dangling_tool_calls, strip_thought_signatures,
            strip_tool_result_details, validate_anthropic_turns, validate_for_provider,
            validate_gemini_turns, zero_stale_usage, PyTranscriptPolicy,
        };
        #[pymodule_export]
        use crate::hygiene_guard::{guard_request, request_issues};
        #[pymodule_export]
        use crate::hygiene_heartbeat::{filter_heartbeat_pairs, strip_heartbeat_token};
        #[pymodule_export]
        use crate::hygiene_images::{
            decode_image_base64, find_image_blocks, probe_base64_image, replace_content_blocks,
            PyImageBlockRef,
        };
        #[pymodule_export]
        use clawctx_core::hygiene::{StripResult, Violation};
    }

    /// Exact token counts and the calibrated estimator (core stage `token_count`).
    #[pymodule(module = "clawctx._core", submodule, gil_used = false)]
    pub mod token_count {
        #[pymodule_export]
        use crate::token_count::{
            _token_feature_names, _token_features, _token_vocabulary, count_message_tokens,
            count_tokens, image_tokens,
        };
    }

    /// Session files: open, append, repair, scan, heartbeats (core stage `session`).
    #[pymodule(module = "clawctx._core", submodule, gil_used = false)]
    pub mod session {
        use super::*;

        #[pymodule_export]
        use crate::session::{PySession, PySessionContext};
        #[pymodule_export]
        use crate::session_heartbeat::{mark_heartbeat_transcript, prune_heartbeat_transcript};
        #[pymodule_export]
        use crate::session_leaf_context::{
            _read_leaf_context_lines, read_leaf_context, PyLeafContext,
        };
        #[pymodule_export]
        use crate::session_memory::summarize_session_lines;
        #[pymodule_export]
        use crate::session_repair::{repair_session_bytes, repair_session_file};
        #[pymodule_export]
        use crate::session_scan::{
            scan_sessions, scan_stream, summarize_session_bytes, PyScanStream,
        };
        #[pymodule_export]
        use clawctx_core::session::{
            LineChange, PruneReport, RefreshReport, RepairReport, SessionSummary, SkippedLine,
            TranscriptMark,
        };
        // Bound in `transcript.rs` beside `convert_to_llm`; the core builds it in its
        // session stage (`session/context.rs`).
        #[pymodule_export]
        use crate::transcript::build_session_context;

        #[pymodule_init]
        fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
            m.add(
                "CURRENT_SESSION_VERSION",
                clawctx_core::session::CURRENT_SESSION_VERSION,
            )
        }
    }

    /// Compaction: settings, cut points, preparation and prompts (core stage `compaction`).
    #[pymodule(module = "clawctx._core", submodule, gil_used = false)]
    pub mod compaction {
        #[pymodule_export]
        use crate::compaction::{
            build_compaction_prompt, compaction_texts, find_cut_point, prepare_compaction,
            serialize_conversation, should_compact, PyCompactionPreparation, PyCompactionSettings,
            PySummaryRequest,
        };
        #[pymodule_export]
        use clawctx_core::compaction::CutPoint;
    }

    /// Provider request payloads (core stage `payload`; public home: `clawctx.wire`).
    #[pymodule(module = "clawctx._core", submodule, gil_used = false)]
    pub mod payload {
        use super::*;

        #[pymodule_export]
        use crate::payload::{
            _build_request_payload, _cache_diff, _transform_messages, PyCacheDiffChain,
        };

        #[pymodule_init]
        fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
            // Private: `clawctx.wire` is the public home of the payload API (`RequestPayload`).
            m.add(
                "_RequestPayload",
                m.py().get_type::<crate::payload::PyRequestPayload>(),
            )
        }
    }

    /// Provider responses (core stage `response`; public home: `clawctx.wire`).
    #[pymodule(module = "clawctx._core", submodule, gil_used = false)]
    pub mod response {
        #[pymodule_export]
        use crate::response::{_parse_response, _response_apis, PyResponseReader};
    }
}
