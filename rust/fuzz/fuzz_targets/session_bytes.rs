//! Session file bytes: open (read-only and writable), the leaf context read from the end of the
//! file, repair, and refresh after another writer appended; the checks are in
//! `rust/core/tests/common/session_bytes.rs`, which the regression replay shares.
#![no_main]

use std::fs;
use std::path::PathBuf;

#[path = "../../core/tests/common/session_bytes.rs"]
#[allow(dead_code)]
mod session_bytes;

use libfuzzer_sys::fuzz_target;

/// A scratch directory per fuzzing process (libFuzzer runs one input at a time per process);
/// under /dev/shm when it exists, so file writes cost no disk I/O.
fn scratch() -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let dir = base.join(format!("clawctx-fuzz-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    dir
}

fuzz_target!(|data: &[u8]| {
    let dir = scratch();
    session_bytes::check(data, &dir);
    let _ = fs::remove_file(dir.join("s.jsonl"));
});
