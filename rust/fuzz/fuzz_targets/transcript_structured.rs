//! Transcripts, structure-aware: the bytes are decisions that build the JSON text of a damaged
//! message list (roles, block types, hard tool-call ids, wrong types, missing fields, nesting,
//! duplicated and reordered messages), which then goes through `transcript_json`'s checks
//! (`rust/core/tests/common/transcript_checks.rs`).
#![no_main]

#[path = "../../core/tests/common/transcript_checks.rs"]
mod transcript_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    transcript_checks::check_structured(data);
});
