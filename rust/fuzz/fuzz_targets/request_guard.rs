//! The request guard, structure-aware: bytes decoded into a transcript of the shapes broken
//! sessions hold (repeated, empty and pipe-joined ids; late, orphaned and second results;
//! aborted turns), then for every payload API: the guard's output is valid, the guard is
//! idempotent, and the payload builds (`rust/core/tests/common/guard_input.rs`).
#![no_main]

#[path = "../../core/tests/common/guard_input.rs"]
mod guard_input;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    guard_input::check(data);
});
