//! Transcript hygiene (OpenClaw 2026.3.13 `src/agents/transcript-policy.ts` and
//! `src/agents/pi-embedded-runner/google.ts`): the policy table and each pass of
//! `sanitizeSessionHistory` as its own function.

use clawctx_core::base::system_now_ms;
use clawctx_core::hygiene::{
    self, SanitizeMode, ThoughtSignatureOptions, ToolCallIdMode, TranscriptPolicy as CorePolicy,
    Violation,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::{json, Value};

use crate::convert::{from_py, to_py, Clock};
use crate::errors::IntoPyResult;
use crate::transcript::PyTranscript;
use crate::transcript_ops::run_pass;

fn mode_name(mode: SanitizeMode) -> &'static str {
    match mode {
        SanitizeMode::Full => "full",
        SanitizeMode::ImagesOnly => "images-only",
    }
}

fn parse_sanitize_mode(mode: &str) -> PyResult<SanitizeMode> {
    match mode {
        "full" => Ok(SanitizeMode::Full),
        "images-only" => Ok(SanitizeMode::ImagesOnly),
        other => Err(PyValueError::new_err(format!(
            "sanitize_mode must be \"full\" or \"images-only\", not {other:?}"
        ))),
    }
}

fn id_mode_name(mode: ToolCallIdMode) -> &'static str {
    match mode {
        ToolCallIdMode::Strict => "strict",
        ToolCallIdMode::Strict9 => "strict9",
    }
}

fn parse_id_mode(mode: &str) -> PyResult<ToolCallIdMode> {
    match mode {
        "strict" => Ok(ToolCallIdMode::Strict),
        "strict9" => Ok(ToolCallIdMode::Strict9),
        other => Err(PyValueError::new_err(format!(
            "tool-call id mode must be \"strict\" or \"strict9\", not {other:?}"
        ))),
    }
}

fn signature_options(
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<ThoughtSignatureOptions>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let v = from_py(value)?;
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    Ok(Some(ThoughtSignatureOptions {
        allow_base64_only: flag("allowBase64Only"),
        include_camel_case: flag("includeCamelCase"),
    }))
}

fn now_arg(py: Python<'_>, now_ms: Option<&Bound<'_, PyAny>>) -> PyResult<i64> {
    match now_ms {
        None => Ok(system_now_ms()),
        Some(arg) => Clock::from_arg(Some(arg))?.now_ms(py),
    }
}

/// What hygiene a provider needs (OpenClaw `src/agents/transcript-policy.ts`). Build one with
/// `resolve_transcript_policy`, or directly with keyword arguments to override fields.
#[pyclass(name = "TranscriptPolicy", module = "clawctx._core.hygiene", frozen)]
pub struct PyTranscriptPolicy {
    pub inner: CorePolicy,
}

#[pymethods]
impl PyTranscriptPolicy {
    #[new]
    #[pyo3(signature = (*, sanitize_mode = "images-only", sanitize_tool_call_ids = false, tool_call_id_mode = None,
        repair_tool_use_result_pairing = true, preserve_signatures = false, sanitize_thought_signatures = None,
        sanitize_thinking_signatures = false, drop_thinking_blocks = false, apply_google_turn_ordering = false,
        validate_gemini_turns = false, validate_anthropic_turns = false, allow_synthetic_tool_results = false))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        sanitize_mode: &str,
        sanitize_tool_call_ids: bool,
        tool_call_id_mode: Option<&str>,
        repair_tool_use_result_pairing: bool,
        preserve_signatures: bool,
        sanitize_thought_signatures: Option<&Bound<'_, PyAny>>,
        sanitize_thinking_signatures: bool,
        drop_thinking_blocks: bool,
        apply_google_turn_ordering: bool,
        validate_gemini_turns: bool,
        validate_anthropic_turns: bool,
        allow_synthetic_tool_results: bool,
    ) -> PyResult<Self> {
        crate::errors::guard(|| {
            Ok(PyTranscriptPolicy {
                inner: CorePolicy {
                    sanitize_mode: parse_sanitize_mode(sanitize_mode)?,
                    sanitize_tool_call_ids,
                    tool_call_id_mode: tool_call_id_mode.map(parse_id_mode).transpose()?,
                    repair_tool_use_result_pairing,
                    preserve_signatures,
                    sanitize_thought_signatures: signature_options(sanitize_thought_signatures)?,
                    sanitize_thinking_signatures,
                    drop_thinking_blocks,
                    apply_google_turn_ordering,
                    validate_gemini_turns,
                    validate_anthropic_turns,
                    allow_synthetic_tool_results,
                },
            })
        })
    }

    /// How image and text blocks are sanitized: `"full"` or `"images-only"`
    /// (OpenClaw 2026.3.13 `src/agents/transcript-policy.ts`, `sanitizeMode`).
    #[getter]
    fn sanitize_mode(&self) -> PyResult<&'static str> {
        crate::errors::guard(|| Ok(mode_name(self.inner.sanitize_mode)))
    }
    /// Whether tool-call ids are rewritten to `tool_call_id_mode`.
    #[getter]
    fn sanitize_tool_call_ids(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.sanitize_tool_call_ids))
    }
    /// The id alphabet the provider accepts (`"strict"`, `"strict9"`), or `None`.
    #[getter]
    fn tool_call_id_mode(&self) -> PyResult<Option<&'static str>> {
        crate::errors::guard(|| Ok(self.inner.tool_call_id_mode.map(id_mode_name)))
    }
    /// Whether every tool call gets its result next to it (`repair_tool_pairing`).
    #[getter]
    fn repair_tool_use_result_pairing(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.repair_tool_use_result_pairing))
    }
    /// Whether thinking-block signatures are kept as recorded.
    #[getter]
    fn preserve_signatures(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.preserve_signatures))
    }
    /// `{"allowBase64Only": ..., "includeCamelCase": ...}` when Gemini thought
    /// signatures are stripped (`strip_thought_signatures`), else `None`.
    #[getter]
    fn sanitize_thought_signatures(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| match self.inner.sanitize_thought_signatures {
            Some(o) => to_py(
                py,
                &json!({"allowBase64Only": o.allow_base64_only, "includeCamelCase": o.include_camel_case}),
            ),
            None => Ok(py.None()),
        })
    }
    /// Whether thinking blocks with unusable signatures are dropped.
    #[getter]
    fn sanitize_thinking_signatures(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.sanitize_thinking_signatures))
    }
    /// Whether thinking blocks are dropped from assistant messages (`drop_thinking_blocks`).
    #[getter]
    fn drop_thinking_blocks(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.drop_thinking_blocks))
    }
    /// Whether a leading assistant turn gets a bootstrap user turn
    /// (`sanitize_google_turn_ordering`).
    #[getter]
    fn apply_google_turn_ordering(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.apply_google_turn_ordering))
    }
    /// Whether consecutive same-role turns are merged for Gemini (`validate_gemini_turns`).
    #[getter]
    fn validate_gemini_turns(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.validate_gemini_turns))
    }
    /// Whether turns are made valid for Anthropic (`validate_anthropic_turns`).
    #[getter]
    fn validate_anthropic_turns(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.validate_anthropic_turns))
    }
    /// Whether pairing repair may insert synthetic results for unanswered calls.
    #[getter]
    fn allow_synthetic_tool_results(&self) -> PyResult<bool> {
        crate::errors::guard(|| Ok(self.inner.allow_synthetic_tool_results))
    }

    /// The policy in upstream's camelCase shape.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::errors::guard(|| {
            let p = &self.inner;
            to_py(
                py,
                &json!({
                    "sanitizeMode": mode_name(p.sanitize_mode),
                    "sanitizeToolCallIds": p.sanitize_tool_call_ids,
                    "toolCallIdMode": p.tool_call_id_mode.map(id_mode_name),
                    "repairToolUseResultPairing": p.repair_tool_use_result_pairing,
                    "preserveSignatures": p.preserve_signatures,
                    "sanitizeThoughtSignatures": p.sanitize_thought_signatures
                        .map(|o| json!({"allowBase64Only": o.allow_base64_only, "includeCamelCase": o.include_camel_case})),
                    "sanitizeThinkingSignatures": p.sanitize_thinking_signatures,
                    "dropThinkingBlocks": p.drop_thinking_blocks,
                    "applyGoogleTurnOrdering": p.apply_google_turn_ordering,
                    "validateGeminiTurns": p.validate_gemini_turns,
                    "validateAnthropicTurns": p.validate_anthropic_turns,
                    "allowSyntheticToolResults": p.allow_synthetic_tool_results,
                }),
            )
        })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        crate::errors::guard(|| {
            Ok({
                other
                    .cast::<PyTranscriptPolicy>()
                    .is_ok_and(|o| o.get().inner == self.inner)
            })
        })
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        crate::errors::guard(|| {
            crate::convert::fields_repr(
                slf.as_any(),
                &[
                    "sanitize_mode",
                    "sanitize_tool_call_ids",
                    "tool_call_id_mode",
                    "repair_tool_use_result_pairing",
                    "preserve_signatures",
                    "sanitize_thought_signatures",
                    "sanitize_thinking_signatures",
                    "drop_thinking_blocks",
                    "apply_google_turn_ordering",
                    "validate_gemini_turns",
                    "validate_anthropic_turns",
                    "allow_synthetic_tool_results",
                ],
            )
        })
    }
}

/// `resolveTranscriptPolicy` (OpenClaw `src/agents/transcript-policy.ts`).
#[pyfunction]
#[pyo3(signature = (*, provider = None, model_api = None, model_id = None))]
pub fn resolve_transcript_policy(
    provider: Option<&str>,
    model_api: Option<&str>,
    model_id: Option<&str>,
) -> PyResult<PyTranscriptPolicy> {
    crate::errors::guard(|| {
        Ok({
            PyTranscriptPolicy {
                inner: hygiene::resolve_transcript_policy(provider, model_api, model_id),
            }
        })
    })
}

/// Marks inter-session user messages with `[Inter-session message] sourceSession=…`
/// (OpenClaw `src/agents/pi-embedded-runner/google.ts`, `annotateInterSessionUserMessages`).
#[pyfunction]
pub fn annotate_inter_session_messages(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::annotate_inter_session_messages))
}

/// Drops delivery-mirror assistant messages (for Anthropic; later OpenClaw, not in 2026.3.13).
#[pyfunction]
pub fn drop_delivery_mirror_messages(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::drop_delivery_mirror_messages))
}

/// `sanitizeToolCallIdsForCloudCodeAssist` (OpenClaw `src/agents/tool-call-id.ts`): rewrites
/// tool-call ids (calls and results) to `strict` (alphanumeric, ≤ 40) or `strict9` (exactly 9
/// alphanumerics), keeping them unique and paired. A rewritten message keeps every byte of its
/// text but the ids, except one whose ids or keys hold escapes, whose `content` appears twice
/// or that has a `toolUseId`: that one is written like `JSON.stringify`.
#[pyfunction]
#[pyo3(signature = (messages, mode = "strict", *, now_ms = None))]
pub fn sanitize_tool_call_ids(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    mode: &str,
    now_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let mode = parse_id_mode(mode)?;
        let now = now_arg(py, now_ms)?;
        run_pass(py, messages, move |t| {
            hygiene::sanitize_tool_call_ids(t, mode, now)
        })
    })
}

/// Makes tool-call ids unique across the transcript occurrence by occurrence (later repeats get
/// fresh ids valid in `mode`; results follow first-in first-out), as OpenClaw 2026.5 does.
#[pyfunction]
#[pyo3(signature = (messages, mode = None))]
pub fn dedupe_tool_call_ids(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    mode: Option<&str>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let mode = mode.map(parse_id_mode).transpose()?;
        run_pass(py, messages, move |t| {
            hygiene::dedupe_tool_call_ids(t, mode)
        })
    })
}

/// `sanitizeToolCallId` (OpenClaw `src/agents/tool-call-id.ts`) for one id.
#[pyfunction]
#[pyo3(signature = (id, mode = "strict"))]
pub fn sanitize_tool_call_id(id: Option<&str>, mode: &str) -> PyResult<String> {
    crate::errors::guard(|| Ok(hygiene::sanitize_tool_call_id(id, parse_id_mode(mode)?)))
}

/// Whether an id is valid in `mode` (OpenClaw `src/agents/tool-call-id.ts`,
/// `isValidCloudCodeAssistToolId`).
#[pyfunction]
#[pyo3(signature = (id, mode = "strict"))]
pub fn is_valid_tool_call_id(id: &str, mode: &str) -> PyResult<bool> {
    crate::errors::guard(|| Ok(hygiene::is_valid_tool_call_id(id, parse_id_mode(mode)?)))
}

/// `stripThoughtSignatures` (OpenClaw `src/agents/pi-embedded-helpers/bootstrap.ts`): strips
/// thought signatures from assistant blocks (default: `thought_signature` values starting with
/// `msg_`; `allow_base64_only`: every value that is not valid base64; `include_camel_case`: also
/// `thoughtSignature`).
#[pyfunction]
#[pyo3(signature = (messages, *, allow_base64_only = false, include_camel_case = false))]
pub fn strip_thought_signatures(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    allow_base64_only: bool,
    include_camel_case: bool,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let options =
            (allow_base64_only || include_camel_case).then_some(ThoughtSignatureOptions {
                allow_base64_only,
                include_camel_case,
            });
        run_pass(py, messages, move |t| {
            hygiene::strip_thought_signatures(t, options)
        })
    })
}

/// The non-image rules of `sanitizeSessionMessagesImages` (OpenClaw
/// `src/agents/pi-embedded-helpers/images.ts`): string tool-result content becomes `[]`,
/// assistants lose thought signatures (and blank text in `full` mode).
#[pyfunction]
#[pyo3(signature = (messages, *, sanitize_mode = "images-only", preserve_signatures = false, sanitize_thought_signatures = None))]
pub fn sanitize_message_blocks(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    sanitize_mode: &str,
    preserve_signatures: bool,
    sanitize_thought_signatures: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let mode = parse_sanitize_mode(sanitize_mode)?;
        let options = signature_options(sanitize_thought_signatures)?;
        run_pass(py, messages, move |t| {
            hygiene::sanitize_message_blocks(t, mode, preserve_signatures, options)
        })
    })
}

/// `dropThinkingBlocks` (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/thinking.ts`).
#[pyfunction]
pub fn drop_thinking_blocks(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::drop_thinking_blocks))
}

/// `stripToolResultDetails`: removes `details` from tool results.
#[pyfunction]
pub fn strip_tool_result_details(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::strip_tool_result_details))
}

/// Drops tool results whose id an earlier result already answered (first wins).
#[pyfunction]
pub fn drop_duplicate_tool_results(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::drop_duplicate_tool_results))
}

/// Zeroes assistant usage recorded before the latest compaction summary (OpenClaw
/// `src/agents/pi-embedded-runner/google.ts`, `stripStaleAssistantUsageBeforeLatestCompaction`).
#[pyfunction]
pub fn zero_stale_usage(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::zero_stale_usage))
}

/// Gives every assistant a normalized usage snapshot (OpenClaw
/// `src/agents/pi-embedded-runner/google.ts`, `ensureAssistantUsageSnapshots`).
#[pyfunction]
pub fn normalize_usage(py: Python<'_>, messages: &Bound<'_, PyAny>) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::normalize_usage))
}

/// `validateGeminiTurns` (OpenClaw `src/agents/pi-embedded-helpers/turns.ts`): merges
/// consecutive assistant messages.
#[pyfunction]
pub fn validate_gemini_turns(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::validate_gemini_turns))
}

/// `validateAnthropicTurns` (OpenClaw `src/agents/pi-embedded-helpers/turns.ts`): strips dangling
/// tool calls and merges consecutive user messages.
#[pyfunction]
pub fn validate_anthropic_turns(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::validate_anthropic_turns))
}

/// Removes tool calls nothing answers (OpenClaw `src/agents/pi-embedded-helpers/turns.ts`,
/// `stripDanglingAnthropicToolUses`).
#[pyfunction]
pub fn strip_dangling_tool_calls(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::strip_dangling_tool_calls))
}

/// `sanitizeGoogleTurnOrdering` (OpenClaw `src/agents/pi-embedded-helpers/bootstrap.ts`): puts a
/// `(session bootstrap)` user turn before a leading assistant.
#[pyfunction]
#[pyo3(signature = (messages, *, now_ms = None))]
pub fn sanitize_google_turn_ordering(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    now_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| {
        let now = now_arg(py, now_ms)?;
        run_pass(py, messages, move |t| {
            hygiene::sanitize_google_turn_ordering(t, now)
        })
    })
}

/// `downgradeOpenAIReasoningBlocks` (OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/openai.ts`):
/// drops reasoning-signed thinking blocks no output block follows.
#[pyfunction]
pub fn downgrade_openai_reasoning(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::downgrade_openai_reasoning))
}

/// `downgradeOpenAIFunctionCallReasoningPairs` (OpenClaw 2026.3.13
/// `src/agents/pi-embedded-helpers/openai.ts`): `call_…|fc_…` tool-call ids without a preceding
/// reasoning item keep only the call id, in the calls and their results.
#[pyfunction]
pub fn downgrade_openai_function_call_pairs(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
) -> PyResult<Py<PyTranscript>> {
    crate::errors::guard(|| run_pass(py, messages, hygiene::downgrade_openai_function_call_pairs))
}

/// Checks a transcript against the structural rules of a provider family (Anthropic, OpenAI
/// Chat/Responses, Gemini), modelling replay as pi-ai sends it (errored and aborted assistant
/// turns skipped, same-role messages combined into one turn). Returns the violations found;
/// an empty list means the provider will accept the transcript's shape.
///
/// Raises `ValueError` listing the known names for an unknown `model_api`, or for an unknown
/// `provider` when no known `model_api` is given (any provider id is accepted with a known
/// model API, so custom OpenAI-compatible providers work).
#[pyfunction]
#[pyo3(signature = (messages, *, provider = None, model_api = None))]
pub fn validate_for_provider(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    provider: Option<&str>,
    model_api: Option<&str>,
) -> PyResult<Vec<Violation>> {
    crate::errors::guard(|| {
        let family = hygiene::ProviderFamily::resolve_checked(provider, model_api).py_err(py)?;
        let input = crate::transcript::transcript_arg(messages)?;
        let found = py.detach(move || hygiene::validate_for_provider(&input, family));
        Ok(found)
    })
}

/// Anthropic's prompt-cache breakpoint rules over a request's `tools` and `system` (JSON texts)
/// and `messages`: at most 4 `cache_control` markers, and no `1h` marker after a `5m` one in
/// prefix order (tools, system, messages). Rules: `too-many-cache-breakpoints`,
/// `cache-ttl-order`, `invalid-cache-ttl`; `index` is the message holding the marker (0 for
/// tools and system) and the detail starts with the marker's path.
#[pyfunction]
#[pyo3(signature = (messages, *, tools_json = None, system_json = None))]
pub fn _cache_breakpoint_issues(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    tools_json: Option<&str>,
    system_json: Option<&str>,
) -> PyResult<Vec<Violation>> {
    crate::errors::guard(|| {
        let parse = |text: Option<&str>, what: &str| -> PyResult<Option<Value>> {
            text.map(|t| {
                clawctx_core::base::parse_value(t)
                    .map_err(|e| PyValueError::new_err(format!("invalid {what} JSON: {e}")))
            })
            .transpose()
        };
        let tools = parse(tools_json, "tools")?;
        let system = parse(system_json, "system")?;
        let input = crate::transcript::transcript_arg(messages)?;
        let found = py.detach(move || {
            hygiene::cache_breakpoint_issues(tools.as_ref(), system.as_ref(), &input)
        });
        Ok(found)
    })
}

/// The provider family `validate_for_provider` applies: "anthropic", "openai", "gemini" or
/// "other". Raises `ValueError` listing the known names for an unknown `model_api`, or for an
/// unknown `provider` when no known `model_api` is given.
#[pyfunction]
#[pyo3(signature = (*, provider = None, model_api = None))]
pub fn provider_family(
    py: Python<'_>,
    provider: Option<&str>,
    model_api: Option<&str>,
) -> PyResult<&'static str> {
    crate::errors::guard(|| {
        Ok(
            hygiene::ProviderFamily::resolve_checked(provider, model_api)
                .py_err(py)?
                .name(),
        )
    })
}

/// Drops or converts the provider `compaction` blocks another provider returned (see
/// `compaction_send_view`): one with a readable summary (Anthropic's) becomes a
/// `compactionSummary` message in front of its turn and the history before it is left out; an
/// opaque one (a Responses item) is dropped. The target's own blocks stay where they are.
#[pyfunction]
#[pyo3(signature = (messages, *, provider = None, model_api = None))]
pub fn drop_foreign_compaction_blocks(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    provider: Option<String>,
    model_api: Option<String>,
) -> PyResult<Py<PyTranscript>> {
    crate::transcript_ops::compaction_pass(
        py,
        messages,
        provider,
        model_api,
        clawctx_core::transcript::drop_foreign_compaction_blocks,
    )
}
