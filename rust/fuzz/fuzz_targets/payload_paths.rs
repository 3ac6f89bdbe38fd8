//! The payload writers' two paths, differentially: the bytes are decisions that build a damaged
//! message list (the `transcript_structured` generator), and the last byte picks the model, the
//! request guard and the simple-options mapping; the body written from the stored bytes must
//! equal the one built from value trees, byte for byte, or both must fail alike
//! (`rust/core/tests/common/payload_paths.rs`, replayed on stable by `tests/payload_paths.rs`).
#![no_main]

// The generator module also holds the transcript targets' checks.
#[path = "../../core/tests/common/transcript_checks.rs"]
#[allow(dead_code)]
mod transcript_checks;

#[path = "../../core/tests/common/payload_paths.rs"]
mod payload_paths;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = transcript_checks::structured(data);
    payload_paths::check(&text, data.last().copied().unwrap_or(0));
});
