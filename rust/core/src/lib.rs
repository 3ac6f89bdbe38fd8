//! clawctx-core: the pure-Rust hot path of clawctx.
//!
//! One module per pipeline stage, in dependency order (a stage uses only the stages above it,
//! and only through their `mod.rs` surface):
//!
//! ```text
//! base -> transcript -> foreign -> hygiene -> token_count -> session -> compaction -> payload
//! base -> response   (provider replies; uses nothing but `base`)
//! ```
//!
//! `token_count` sits after `hygiene` because it charges images by the dimensions that
//! hygiene's base64 probe reads; `session` uses `hygiene` only for the heartbeat file guard.

// One stage a line, in pipeline order (blank lines keep rustfmt from sorting them).
pub mod base; // error type, entry ids, JavaScript-compatible JSON and string lengths

pub mod transcript; // messages, facts, pairing, inputs, history, pruning, estimates, convertToLlm

pub mod foreign; // Claude Code and Codex transcripts read as pi messages

pub mod hygiene; // provider policy, sanitize passes, tool-call ids, validation, images, heartbeat

pub mod token_count; // exact and calibrated BPE token counts of messages and transcripts

pub mod session; // session files: lines, entries, tree, open/append/refresh, context, repair, scan

pub mod compaction; // compaction trigger, cut point, preparation, prompts and summary entry

pub mod payload; // provider request bodies as pi-ai builds them, and its replay layer

pub mod response; // provider replies read back into pi's assistant message as pi-ai reads them

// Not a stage: with the `python` feature, the glue of the Python classes the core declares
// (jiter's model: pure core, Python glue behind a feature).
#[cfg(feature = "python")]
pub mod python;

pub use base::{Error, Result};
pub use session::{
    build_session_context, repair_session_file, Entry, LeafSelector, RepairOptions, RepairReport,
    Session, SessionContext, SkippedLine,
};
pub use transcript::{convert_to_llm, Transcript};
