//! Provider-specific transcript hygiene, run on a transcript before it is sent: which passes a
//! provider needs (mirrors OpenClaw 2026.3.13 `src/agents/transcript-policy.ts`), the sanitize
//! passes of `sanitizeSessionHistory` (`src/agents/pi-embedded-runner/google.ts` and the
//! `src/agents/pi-embedded-helpers/` it calls), tool-call id sanitation
//! (`src/agents/tool-call-id.ts`), per-provider validation, image sanitation
//! (`src/agents/tool-images.ts`) and heartbeat filtering (`src/auto-reply/heartbeat.ts`).
//!
//! Uses only the `transcript` and `base` stages.

mod cache_breakpoints;
mod heartbeat;
#[cfg(feature = "python")]
mod heartbeat_py;
mod images;
mod policy;
mod request_guard;
mod sanitize;
mod tool_call_ids;
mod validate;
#[cfg(feature = "python")]
mod validate_py;

pub use cache_breakpoints::{cache_breakpoint_issues, MAX_CACHE_BREAKPOINTS};
pub use heartbeat::{
    filter_heartbeat_pairs, js_number, resolve_ack_max_chars, strip_heartbeat_token,
    HeartbeatMatcher, StripMode, StripResult, DEFAULT_HEARTBEAT_ACK_MAX_CHARS,
    DEFAULT_HEARTBEAT_PROMPT, HEARTBEAT_TASK_PROMPT_ACK, HEARTBEAT_TASK_PROMPT_PREFIX,
    HEARTBEAT_TOKEN, HEARTBEAT_TRANSCRIPT_PROMPT,
};
pub use images::{
    decode_base64_lenient, find_image_blocks, find_image_blocks_to_sanitize, infer_mime_type,
    probe_base64_image, replace_content_blocks, BlockEdit, BlockReplacement, ImageBlockRef,
    ImageProbe, KeepLimits,
};
pub use policy::{
    resolve_transcript_policy, SanitizeMode, ThoughtSignatureOptions, ToolCallIdMode,
    TranscriptPolicy,
};
pub use request_guard::{
    anthropic_tool_call_id, chat_tool_call_id, guard_request, request_issues, GuardIssue,
    GuardReport, GuardTarget, ABORTED_RESULT_TEXT, PI_AI_SYNTHETIC_RESULT_TEXT,
};
pub use sanitize::{
    annotate_inter_session_messages, downgrade_openai_function_call_pairs,
    downgrade_openai_reasoning, drop_delivery_mirror_messages, drop_duplicate_tool_results,
    drop_thinking_blocks, normalize_usage, sanitize_google_turn_ordering, sanitize_message_blocks,
    strip_dangling_tool_calls, strip_thought_signatures, strip_tool_result_details,
    validate_anthropic_turns, validate_gemini_turns, zero_stale_usage, zero_usage,
    GOOGLE_BOOTSTRAP_TEXT, INTER_SESSION_PREFIX, TOOL_CALLS_OMITTED_TEXT,
};
pub use tool_call_ids::{
    dedupe_tool_call_ids, is_valid_tool_call_id, sanitize_tool_call_id, sanitize_tool_call_ids,
};
pub use validate::{
    validate_for_provider, ProviderFamily, Violation, KNOWN_MODEL_APIS, KNOWN_PROVIDERS,
};
