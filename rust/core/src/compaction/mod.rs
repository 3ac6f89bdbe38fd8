//! Compaction of a session (mirrors pi-mono 0.58.3
//! `packages/coding-agent/src/core/compaction/compaction.ts` and `compaction/utils.ts`): the
//! trigger, the cut point, the preparation of what to summarize, the serialized conversation and
//! prompts, and the summary entry. The summary itself comes from a model the caller runs.
//!
//! The last stage: uses `session`, `transcript` and `base`.

mod compact;

pub use compact::{
    compose_summary, entry_message, find_cut_point, format_file_operations, history_prompt,
    prepare_compaction, prepare_session_compaction, serialize_conversation, should_compact,
    turn_prefix_prompt, CompactionSettings, CutPoint, FileOperations, Preparation, SummaryKind,
    SummaryRequest, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS,
    DEFAULT_RESERVE_TOKENS_FLOOR, NO_PRIOR_HISTORY, SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT, TOOL_RESULT_MAX_CHARS, TURN_CONTEXT_SEPARATOR,
    TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
};
