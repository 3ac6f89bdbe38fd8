//! Transcripts, structure-aware: the bytes are decisions that build the JSON text of a damaged
//! message list (roles, block types, hard tool-call ids, wrong types, missing fields, nesting,
//! duplicated and reordered messages), which then goes through one group of `transcript_json`'s
//! checks, chosen by the last byte (`rust/core/tests/common/transcript_checks.rs`): the
//! transcript passes, or one provider's hygiene passes.
#![no_main]

#[path = "../../core/tests/common/transcript_checks.rs"]
// The shared module also holds the all-API checks the stable tests run.
#[allow(dead_code)]
mod transcript_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    transcript_checks::check_structured_selected(data);
});
