//! Compaction of a session (mirrors pi-mono 0.58.3
//! `packages/coding-agent/src/core/compaction/compaction.ts` and `compaction/utils.ts`): the
//! trigger, the cut point, the preparation of what to summarize, the serialized conversation and
//! prompts, and the summary entry. The summary itself comes from a model the caller runs: the
//! caller turns each [`SummaryRequest`] into text and hands the texts back to
//! [`Preparation::compose_summary`]; [`Preparation::compaction_entry`] is the entry pi appends.
//!
//! One file per part of pi's algorithm: `prompts` (pi's exact texts), `settings` (settings and
//! the trigger), `cut_point`, `preparation` (what to summarize, file operations, the entry) and
//! `serialize` (the conversation text and the prompt builders). This file is the surface.
//!
//! The last stage: uses `session`, `transcript` and `base`.

mod cut_point;
#[cfg(feature = "python")]
mod cut_point_py;
mod preparation;
mod prompts;
mod serialize;
mod settings;
#[cfg(test)]
mod tests;

pub use cut_point::{find_cut_point, CutPoint};
pub use preparation::{
    entry_message, prepare_compaction, prepare_session_compaction, FileOperations, Preparation,
    SummaryKind, SummaryRequest,
};
pub use prompts::{
    NO_PRIOR_HISTORY, SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, TOOL_RESULT_MAX_CHARS,
    TURN_CONTEXT_SEPARATOR, TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
};
pub use serialize::{
    compose_summary, format_file_operations, history_prompt, serialize_conversation,
    turn_prefix_prompt,
};
pub use settings::{
    should_compact, CompactionSettings, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS,
    DEFAULT_RESERVE_TOKENS_FLOOR,
};
