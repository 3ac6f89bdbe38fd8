//! clawctx-core: the pure-Rust hot path of clawctx.
//!
//! One module per pipeline stage, in dependency order (a stage uses only the stages above it,
//! and only through their `mod.rs` surface):
//!
//! ```text
//! base -> transcript -> hygiene -> token_count -> session -> compaction
//! ```

pub mod base; // error type, entry ids, JavaScript-compatible JSON and string lengths
pub mod compaction;
pub mod hygiene; // provider policy, sanitize passes, tool-call ids, validation, images, heartbeat
pub mod session; // session files: lines, entries, tree, open/append/refresh, context, repair, scan
pub mod token_count; // exact and calibrated BPE token counts of transcripts
pub mod transcript; // messages, facts, pairing, inputs, history, pruning, estimates, convertToLlm // compaction trigger, cut point, preparation and prompts

pub use base::{Error, Result};
pub use session::{
    build_session_context, repair_session_file, Entry, LeafSelector, RepairOptions, RepairReport,
    Session, SessionContext, SkippedLine,
};
pub use transcript::{convert_to_llm, Transcript};
