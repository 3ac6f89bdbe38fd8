//! Transcript JSON: parse an arbitrary JSON text as a transcript and run every transcript and
//! hygiene pass on it (the order of `sanitize_session_history`, without the Python-side image
//! pass), for every provider policy. Nothing may panic, and a parsed transcript serializes to
//! JSON that parses back to the same messages (`rust/core/tests/common/transcript_checks.rs`).
#![no_main]

#[path = "../../core/tests/common/transcript_checks.rs"]
#[allow(dead_code)]
mod transcript_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        transcript_checks::check_json(text);
    }
});
