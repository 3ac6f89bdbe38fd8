//! The request guard, structure-aware: bytes decoded into a transcript of the shapes broken
//! sessions hold (repeated, empty and pipe-joined ids; late, orphaned and second results;
//! aborted turns), then for the payload API and prompt setting the last byte selects: the
//! guard's output is valid, the guard is idempotent, and the payload builds
//! (`rust/core/tests/common/guard_input.rs`; the stable proptest checks every API per input).
#![no_main]

#[path = "../../core/tests/common/guard_input.rs"]
// The shared module also holds the all-API checks the stable tests run.
#[allow(dead_code)]
mod guard_input;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    guard_input::check_selected(data);
});
