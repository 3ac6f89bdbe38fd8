//! Transcript operations mirroring OpenClaw 2026.3.13 `src/agents/session-transcript-repair.ts`,
//! `src/agents/pi-embedded-runner/history.ts`, the context-pruning extension
//! (`src/agents/pi-extensions/context-pruning/`) and pi-mono 0.58.3's token estimates
//! (`packages/coding-agent/src/core/compaction/compaction.ts`). Each takes a `Transcript` or a list
//! of message dicts, runs without the GIL, and returns the input object itself when nothing
//! applies.

use std::sync::Arc;

use clawctx_core::base::system_now_ms;
use clawctx_core::transcript::{
    self, CharWeighting, ContextTokens, ErroredAssistantPolicy, PairingOptions, PairingReport,
    PruningSettings as CoreSettings, SharedTranscript, ToolCallInputsReport, ToolMatcher,
    Transcript,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{from_py, to_py, Clock};
use crate::transcript::{transcript_arg, transcript_arg_lenient, PyTranscript};

/// The result transcript as a Python object: the input object itself when unchanged and the
/// input was a `Transcript`.
pub fn result_object(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    before: &Arc<Transcript>,
    after: Transcript,
) -> PyResult<Py<PyTranscript>> {
    if input.cast::<PyTranscript>().is_ok() && after == **before {
        return Ok(input.cast::<PyTranscript>()?.clone().unbind());
    }
    if after == **before {
        return Py::new(
            py,
            PyTranscript {
                inner: Arc::clone(before),
            },
        );
    }
    Py::new(py, PyTranscript::new(after))
}

/// Makes the caller's own `Transcript` object what Python sees as `shared` when `shared` holds
/// the same messages as `before` (the input): a report's `messages` is then the input object
/// itself when the pass changed nothing.
pub fn show_input_if_unchanged(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    before: &Arc<Transcript>,
    shared: &SharedTranscript,
) {
    if let Ok(object) = input.cast::<PyTranscript>() {
        if **shared == **before {
            shared.show_as(py, object.clone().into_any().unbind());
        }
    }
}

/// The `Transcript` object of a report's transcript.
fn transcript_object(py: Python<'_>, shared: &SharedTranscript) -> PyResult<Py<PyTranscript>> {
    Ok(shared.object(py)?.cast_into::<PyTranscript>()?.unbind())
}

/// Runs a transcript pass without the GIL and returns its result as a Python object (the input
/// object itself when the pass changed nothing).
pub fn run_pass(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    pass: impl FnOnce(&Transcript) -> Transcript + Send,
) -> PyResult<Py<PyTranscript>> {
    let input = transcript_arg(messages)?;
    let source = Arc::clone(&input);
    let output = py.detach(move || pass(&source));
    result_object(py, messages, &input, output)
}

/// A pass over provider `compaction` blocks for the target `provider` / `model_api`.
pub fn compaction_pass(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    provider: Option<String>,
    model_api: Option<String>,
    pass: fn(&Transcript, clawctx_core::transcript::CompactionTarget<'_>) -> Transcript,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        run_pass(py, messages, move |t| {
            let target = clawctx_core::transcript::CompactionTarget {
                provider: provider.as_deref(),
                api: model_api.as_deref(),
            };
            pass(t, target)
        })
    })
}

fn weighting(cjk: bool) -> CharWeighting {
    if cjk {
        CharWeighting::Cjk
    } else {
        CharWeighting::Utf16
    }
}

fn allowlist(names: Option<Vec<String>>) -> Option<std::collections::HashSet<String>> {
    names.and_then(|n| transcript::normalize_allowed_tool_names(n.iter().map(String::as_str)))
}

/// `repairToolCallInputs` (session-transcript-repair.ts): drops tool-call blocks without input, id
/// or a valid name (or not in `allowed_tool_names`), trims names, redacts `sessions_spawn`
/// attachment content, and drops an assistant message left with no blocks.
#[pyfunction]
#[pyo3(signature = (messages, *, allowed_tool_names = None))]
pub fn repair_tool_call_inputs(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    allowed_tool_names: Option<Vec<String>>,
) -> PyResult<ToolCallInputsReport> {
    crate::errors::guard(|| {
        let input = transcript_arg_lenient(messages)?;
        let allowed = allowlist(allowed_tool_names);
        let source = Arc::clone(&input);
        let report =
            py.detach(move || transcript::repair_tool_call_inputs(&source, allowed.as_ref()));
        show_input_if_unchanged(py, messages, &input, &report.messages);
        Ok(report)
    })
}

/// `sanitizeToolCallInputs`: `repair_tool_call_inputs(...).messages`.
#[pyfunction]
#[pyo3(signature = (messages, *, allowed_tool_names = None))]
pub fn sanitize_tool_call_inputs(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    allowed_tool_names: Option<Vec<String>>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let report = repair_tool_call_inputs(py, messages, allowed_tool_names)?;
        transcript_object(py, &report.messages)
    })
}

fn pairing_options(
    py: Python<'_>,
    now_ms: Option<&Bound<'_, PyAny>>,
    policy: Option<&str>,
    text: Option<String>,
) -> PyResult<PairingOptions> {
    let errored_assistant_policy = match policy {
        None => ErroredAssistantPolicy::Baseline,
        Some("preserve") => ErroredAssistantPolicy::Preserve,
        Some("drop") => ErroredAssistantPolicy::Drop,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
            "errored_assistant_result_policy must be \"preserve\", \"drop\" or None, not {other:?}"
        )))
        }
    };
    let now_ms = match now_ms {
        None => system_now_ms(),
        Some(arg) => Clock::from_arg(Some(arg))?.now_ms(py)?,
    };
    Ok(PairingOptions {
        now_ms,
        errored_assistant_policy,
        missing_tool_result_text: text,
    })
}

/// `repairToolUseResultPairing` (session-transcript-repair.ts): moves each assistant's tool results
/// right after it, in call order; drops duplicates (first wins) and orphans; inserts a synthetic
/// error result for each call without one (`timestamp` from `now_ms`).
/// `errored_assistant_result_policy`: `None` is OpenClaw 2026.3.13's behaviour (an errored or
/// aborted turn is kept and its results are dropped as orphans); `"preserve"` and `"drop"` are
/// 2026.5's options. `missing_tool_result_text` replaces the synthetic result's text.
#[pyfunction]
#[pyo3(signature = (messages, *, now_ms = None, errored_assistant_result_policy = None, missing_tool_result_text = None))]
pub fn repair_tool_pairing(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    now_ms: Option<&Bound<'_, PyAny>>,
    errored_assistant_result_policy: Option<&str>,
    missing_tool_result_text: Option<String>,
) -> PyResult<PairingReport> {
    crate::errors::guard(|| {
        let input = transcript_arg_lenient(messages)?;
        let options = pairing_options(
            py,
            now_ms,
            errored_assistant_result_policy,
            missing_tool_result_text,
        )?;
        let source = Arc::clone(&input);
        let report = py.detach(move || transcript::repair_tool_pairing(&source, &options));
        // Like OpenClaw 2026.3.13 `src/agents/session-transcript-repair.ts`
        // (`repairToolUseResultPairing`), a flagged repair returns a new transcript even when its
        // messages equal the input (a repeated call id in one turn, non-message entries moved
        // behind the results); only an unflagged one returns the input itself.
        if !report.moved {
            show_input_if_unchanged(py, messages, &input, &report.messages);
        }
        Ok(report)
    })
}

/// `sanitizeToolUseResultPairing`: `repair_tool_pairing(...).messages`.
#[pyfunction]
#[pyo3(signature = (messages, *, now_ms = None, errored_assistant_result_policy = None, missing_tool_result_text = None))]
pub fn sanitize_tool_use_result_pairing(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    now_ms: Option<&Bound<'_, PyAny>>,
    errored_assistant_result_policy: Option<&str>,
    missing_tool_result_text: Option<String>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let report = repair_tool_pairing(
            py,
            messages,
            now_ms,
            errored_assistant_result_policy,
            missing_tool_result_text,
        )?;
        transcript_object(py, &report.messages)
    })
}

/// `limitHistoryTurns` (history.ts): keeps the last `limit` user turns (from the `limit`-th last
/// user message on). `None`, 0 or a negative limit returns the input. `keep_prelude=True` keeps
/// leading non-user/assistant messages (summaries) in front (as later OpenClaw does; 2026.3.13
/// drops them).
#[pyfunction]
#[pyo3(signature = (messages, limit, *, keep_prelude = false))]
pub fn limit_history_turns(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    limit: Option<f64>,
    keep_prelude: bool,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let input = transcript_arg(messages)?;
        let source = Arc::clone(&input);
        let limited =
            py.detach(move || transcript::limit_history_turns(&source, limit, keep_prelude));
        result_object(py, messages, &input, limited)
    })
}

/// `getHistoryLimitFromSessionKey` (history.ts) over OpenClaw's config dict
/// (`{"channels": {...}}`); `None` when no limit applies.
#[pyfunction]
#[pyo3(signature = (session_key, config))]
pub fn history_limit_for_session_key(
    py: Python<'_>,
    session_key: Option<&str>,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    crate::errors::guard(|| {
        let config = config.filter(|c| !c.is_none()).map(from_py).transpose()?;
        match transcript::history_limit_for_session_key(session_key, config.as_ref()) {
            Some(value) => to_py(py, &value),
            None => Ok(py.None()),
        }
    })
}

/// pi's `estimateTokens(message)` (compaction.ts): `ceil(chars / 4)` with per-role rules and
/// JavaScript UTF-16 lengths; `cjk=True` weights CJK characters as OpenClaw's
/// `estimateStringChars` does (later OpenClaw `src/utils/cjk-chars.ts`). Raises `ValueError` for a malformed message pi
/// cannot estimate either (pi-mono 0.58.3 `compaction.ts` throws a TypeError there), e.g. an
/// assistant `toolCall` block without `name` or a `text` block without `text`.
#[pyfunction]
#[pyo3(signature = (message, *, cjk = false))]
pub fn estimate_tokens(message: &Bound<'_, PyAny>, cjk: bool) -> PyResult<u64> {
    crate::errors::guard(|| {
        let value = from_py(message)?;
        if let Some(why) = transcript::estimate_tokens_error(&value) {
            return Err(PyValueError::new_err(format!(
                "cannot estimate tokens of this message: {why}"
            )));
        }
        Ok(transcript::estimate_tokens_weighted(&value, weighting(cjk)))
    })
}

/// `estimateStringChars` (later OpenClaw `src/utils/cjk-chars.ts`, not in 2026.3.13):
/// CJK-weighted length of a string.
#[pyfunction]
pub fn estimate_string_chars(text: &str) -> PyResult<u64> {
    crate::errors::guard(|| Ok(transcript::cjk_weighted_chars(text)))
}

/// `estimateContextTokens` (compaction.ts): the last usable assistant `usage` plus the
/// chars/4 estimate of the messages after it.
#[pyfunction]
pub fn estimate_context_tokens(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<ContextTokens> {
    crate::errors::guard(|| {
        let input = transcript_arg(messages)?;
        Ok(py.detach(move || transcript::estimate_context_tokens(&input)))
    })
}

/// OpenClaw's `estimateMessagesTokens` (`src/agents/compaction.ts`): pi's estimate after removing
/// tool results' `details`.
#[pyfunction]
pub fn estimate_messages_tokens(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<u64> {
    crate::errors::guard(|| {
        let input = transcript_arg(messages)?;
        Ok(py.detach(move || transcript::estimate_messages_tokens(&input)))
    })
}

/// `calculateContextTokens(usage)` (compaction.ts).
#[pyfunction]
pub fn usage_tokens(usage: &Bound<'_, PyAny>) -> PyResult<u64> {
    crate::errors::guard(|| Ok(transcript::usage_tokens(&from_py(usage)?)))
}

/// Per-message token estimates as a numpy `int64` array (no per-message Python objects).
pub fn token_counts_array<'py>(
    py: Python<'py>,
    transcript: &Arc<Transcript>,
    cjk: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let source = Arc::clone(transcript);
    let counts = py.detach(move || transcript::token_counts(&source, weighting(cjk)));
    let bytes: Vec<u8> = counts
        .iter()
        .flat_map(|c| (i64::try_from(*c).unwrap_or(i64::MAX)).to_le_bytes())
        .collect();
    let numpy = py.import("numpy")?;
    numpy.call_method1("frombuffer", (pyo3::types::PyBytes::new(py, &bytes), "<i8"))
}

// ---- pruning -------------------------------------------------------------------------------

/// Effective context-pruning settings (`computeEffectiveSettings` of context-pruning/settings.ts).
#[pyclass(name = "PruningSettings", module = "clawctx._core.transcript", frozen)]
pub struct PyPruningSettings {
    pub inner: CoreSettings,
}

#[pymethods]
impl PyPruningSettings {
    /// `computeEffectiveSettings(raw)`: `None` unless `raw` is a dict with
    /// `mode == "cache-ttl"`; defaults, clamping and `ttl` parsing as OpenClaw does.
    #[staticmethod]
    fn from_config(raw: &Bound<'_, PyAny>) -> PyResult<Option<Self>> {
        crate::errors::guard(|| {
            let value = if raw.is_none() {
                Value::Null
            } else {
                from_py(raw)?
            };
            Ok(CoreSettings::from_config(&value).map(|inner| PyPruningSettings { inner }))
        })
    }

    /// Settings from the effective-settings dict (the shape `to_dict()` returns).
    #[staticmethod]
    fn from_dict(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        crate::errors::guard(|| {
            Ok(PyPruningSettings {
                inner: CoreSettings::from_effective(&from_py(value)?),
            })
        })
    }

    /// The effective settings in OpenClaw's camelCase shape.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| to_py(py, &self.inner.to_value()))
    }

    #[getter]
    fn ttl_ms(&self) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.inner.ttl_ms))
    }
    #[getter]
    fn keep_last_assistants(&self) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.inner.keep_last_assistants))
    }
    #[getter]
    fn soft_trim_ratio(&self) -> PyResult<f64> {
        crate::errors::guard(|| Ok(self.inner.soft_trim_ratio))
    }
    #[getter]
    fn hard_clear_ratio(&self) -> PyResult<f64> {
        crate::errors::guard(|| Ok(self.inner.hard_clear_ratio))
    }
    #[getter]
    fn min_prunable_tool_chars(&self) -> PyResult<u64> {
        crate::errors::guard(|| Ok(self.inner.min_prunable_tool_chars))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            Ok({
                other
                    .cast::<PyPruningSettings>()
                    .is_ok_and(|o| o.get().inner == self.inner)
            })
        })
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard(|| {
            crate::convert::fields_repr(
                slf.as_any(),
                &[
                    "soft_trim_ratio",
                    "ttl_ms",
                    "hard_clear_ratio",
                    "min_prunable_tool_chars",
                    "keep_last_assistants",
                ],
            )
        })
    }
}

fn settings_arg(settings: &Bound<'_, PyAny>) -> PyResult<CoreSettings> {
    if let Ok(s) = settings.cast::<PyPruningSettings>() {
        return Ok(s.get().inner.clone());
    }
    if settings.is_instance_of::<pyo3::types::PyDict>() {
        return Ok(CoreSettings::from_effective(&from_py(settings)?));
    }
    Err(PyTypeError::new_err(
        "settings must be a PruningSettings or an effective-settings dict",
    ))
}

/// `pruneContextMessages` (context-pruning/pruner.ts, as in 2026.3.13): soft-trims and then
/// hard-clears old tool results outside the protected regions until the context is under the
/// configured ratios.
/// Returns the input itself when nothing is pruned. The on-disk transcript is never touched.
#[pyfunction]
#[pyo3(signature = (messages, settings, *, context_window_tokens))]
pub fn prune_context(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    settings: &Bound<'_, PyAny>,
    context_window_tokens: Option<f64>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let settings = settings_arg(settings)?;
        let input = transcript_arg(messages)?;
        let source = Arc::clone(&input);
        let pruned =
            py.detach(move || transcript::prune_context(&source, &settings, context_window_tokens));
        result_object(py, messages, &input, pruned)
    })
}

/// The pruner's char estimate of one message (pruner.ts, `estimateMessageChars`).
#[pyfunction]
pub fn estimate_pruning_chars(message: &Bound<'_, PyAny>) -> PyResult<u64> {
    crate::errors::guard(|| Ok(transcript::estimate_message_chars(&from_py(message)?)))
}

/// Whether a tool's results may be pruned under `tools = {"allow": [...], "deny": [...]}`
/// (context-pruning/tools.ts: globs with `*`, case-insensitive, deny wins, empty allow allows
/// all).
#[pyfunction]
#[pyo3(signature = (tool_name, tools = None))]
pub fn is_tool_prunable(tool_name: &str, tools: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    crate::errors::guard(|| {
        let tools = tools
            .filter(|t| !t.is_none())
            .map(from_py)
            .transpose()?
            .unwrap_or(Value::Null);
        Ok(ToolMatcher::from_tools(&tools).is_prunable(tool_name))
    })
}

/// The latest provider compaction boundary of `messages` (AgentMessages): the index of the last
/// assistant message, not errored or aborted, holding a provider `compaction` block (stored by
/// `parse_response`: an Anthropic compaction block, an OpenAI Responses compaction item) that
/// carries context; `None` when there is none. Nothing before it needs to be sent.
#[pyfunction]
pub fn compaction_boundary(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    crate::errors::guard(|| {
        let input = transcript_arg(messages)?;
        Ok(py.detach(move || {
            clawctx_core::transcript::compaction_boundary(&input, None).map(|(i, _)| i)
        }))
    })
}

/// The history a request to `provider` / `model_api` is built from, as the payload writers
/// build it: it starts at the latest provider `compaction` block that target can use, sent first
/// in its turn and verbatim to its own provider and API, as a `compactionSummary` message
/// elsewhere when its summary is readable; every other compaction block is dropped.
#[pyfunction]
#[pyo3(signature = (messages, *, provider = None, model_api = None))]
pub fn compaction_send_view(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    provider: Option<String>,
    model_api: Option<String>,
) -> PyResult<Py<PyTranscript>> {
    compaction_pass(
        py,
        messages,
        provider,
        model_api,
        clawctx_core::transcript::compaction_send_view,
    )
}
