//! The in-memory transcript and the operations on it that need no provider policy: each
//! message kept as JSON text with its facts cached, message views, chars/4 token estimates,
//! tool-call pairing repair and input sanitation (mirrors OpenClaw 2026.3.13
//! `src/agents/session-transcript-repair.ts`), history limits, context pruning
//! (`src/agents/pi-extensions/context-pruning/pruner.ts`) and pi's `convertToLlm` (pi-mono 0.58.3
//! `packages/coding-agent/src/core/messages.ts`).
//!
//! Files, in dependency order: `message` and `estimate` (leaves), `facts`, `list` (the
//! [`Transcript`] and [`Message`] types), `shared` (the transcript a report holds, with its
//! Python object under the `python` feature), then the operations.

mod budget;
mod columns;
mod context_tokens;
#[cfg(feature = "python")]
mod context_tokens_py;
mod convert;
mod estimate;
mod facts;
mod history;
mod layout;
pub(crate) use layout::string_end as json_string_end;
mod list;
mod message;
mod pairing;
mod provider_compaction;
mod pruning;
mod send_shape;
mod shared;
#[cfg(feature = "python")]
mod shared_py;
mod tool_call_inputs;

pub use budget::{budget_units, UnitStart};
pub use columns::{message_columns, timestamp_ms, MessageColumns};
pub use context_tokens::{
    estimate_context_tokens, estimate_messages_tokens, token_counts, ContextTokens,
};
pub use convert::{
    bash_execution_text, convert_to_llm, BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
};
pub use estimate::{
    cjk_weighted_chars, estimate_chars, estimate_chars_weighted, estimate_message_chars,
    estimate_tokens, estimate_tokens_error, estimate_tokens_weighted, usage_tokens, CharWeighting,
    IMAGE_CHARS, IMAGE_CHAR_ESTIMATE, OTHER_ROLE_CHARS,
};
pub use facts::{facts_from_value, MessageFacts};
pub use history::{history_limit_for_session_key, limit_history_turns};
pub(crate) use layout::{skip_ws, string_end, value_end};
pub use layout::{ContentItem, MessageLayout};
pub(crate) use list::{CachedEdit, Edit, RewriteKey};
pub use list::{Message, SoftTrim, Transcript};
pub use message::{
    edit_message, raw_value, MessageView, ToolCallRef, INPUT_TOOL_CALL_TYPES,
    PAIRING_TOOL_CALL_TYPES, TOOL_CALL_NAME_MAX_CHARS,
};
pub use pairing::{
    missing_tool_result, repair_tool_pairing, ErroredAssistantPolicy, PairingOptions,
    PairingReport, MISSING_TOOL_RESULT_TEXT,
};
pub use provider_compaction::{
    compaction_boundary, compaction_carries_context, compaction_counted_text, compaction_send_view,
    compaction_summary, drop_foreign_compaction_blocks, has_compaction_blocks, message_compaction,
    CompactionTarget, COMPACTION_BLOCK_TYPE,
};
pub use pruning::{
    parse_duration_ms, prune_context, soft_trimmed_text, HardClear, PruningSettings, ToolMatcher,
    CHARS_PER_TOKEN_ESTIMATE, DEFAULT_PLACEHOLDER, UNSERIALIZABLE_ARGUMENT_CHARS,
};
pub use send_shape::{CallShape, ContentShape, SendShape};
pub use shared::SharedTranscript;
#[cfg(feature = "python")]
pub use shared_py::{set_transcript_class, TranscriptClass};
pub use tool_call_inputs::{
    normalize_allowed_tool_names, repair_tool_call_inputs, ToolCallInputsReport,
    REDACTED_ATTACHMENT_CONTENT,
};
