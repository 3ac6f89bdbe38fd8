//! Every input a fuzz target (`rust/fuzz/`) ever stopped on, replayed through the same checks
//! on stable Rust: `rust/fuzz/regressions/<target>/<name>`.

use std::fs;
use std::path::{Path, PathBuf};

#[path = "common/session_bytes.rs"]
mod session_bytes;
#[path = "common/transcript_checks.rs"]
mod transcript_checks;

use session_bytes::ids;

use clawctx_core::base::SequentialIds;
use clawctx_core::session::{OpenOptions, Session};

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(target);
    let mut found: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    found.sort();
    found
}

#[test]
fn session_bytes_regressions_pass_the_target_checks() {
    let found = inputs("session_bytes");
    assert!(!found.is_empty());
    for input in found {
        let dir = tempfile::tempdir().unwrap();
        session_bytes::check(&fs::read(&input).unwrap(), dir.path());
    }
}

/// The first `session_bytes` stop: a version-1 file gets new ids on every open until its
/// migration is saved, so a refreshed session and a second open cannot share ids; the target
/// now compares ids only for a current file. The session itself must still work.
#[test]
fn an_unsaved_migration_gets_fresh_ids_on_each_open() {
    let input = fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/regressions/session_bytes/v1-file-refresh-ids"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    fs::write(&path, &input[1..]).unwrap();
    let read_only = OpenOptions {
        read_only: true,
        ..OpenOptions::default()
    };
    let a = Session::open(&path, &read_only, &mut SequentialIds::new(1), 0).unwrap();
    let b = Session::open(&path, &read_only, &mut SequentialIds::new(5), 0).unwrap();
    assert!(a.needs_migration_rewrite());
    assert_eq!(a.records().len(), b.records().len());
    assert_ne!(ids(&a), ids(&b));
}

/// The committed seeds of both transcript targets pass their checks on stable (every group of
/// checks, and the one the structured target's selector picks), and every
/// `transcript_structured` seed builds a transcript that parses.
#[test]
fn transcript_seeds_pass_the_target_checks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds");
    for entry in fs::read_dir(dir.join("transcript_json")).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(transcript_checks::check_json(&text));
        // Each of the six groups the structured target picks from passes on its own.
        for selector in 0..6 {
            assert!(transcript_checks::check_json_selected(&text, selector));
        }
    }
    let mut seeds = 0;
    for entry in fs::read_dir(dir.join("transcript_structured")).unwrap() {
        let path = entry.unwrap().path();
        let data = fs::read(&path).unwrap();
        assert!(
            transcript_checks::check_structured(&data),
            "{} does not parse",
            path.display()
        );
        assert!(transcript_checks::check_structured_selected(&data));
        seeds += 1;
    }
    assert!(seeds >= 4);
}

/// The reason `transcript_structured` exists: byte-mutated JSON rarely parses as a transcript,
/// while the generator's texts mostly do, so the fuzzer's executions reach the transcript
/// operations. Random decision bytes (a fixed xorshift stream) must parse at least 80% of the
/// time, and the texts must differ (the generator is not stuck on one shape).
#[test]
fn structured_transcripts_mostly_parse() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut parsed = 0;
    let mut texts = std::collections::HashSet::new();
    let total = 400;
    for _ in 0..total {
        let mut data = Vec::with_capacity(256);
        for _ in 0..256 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            data.push(state as u8);
        }
        let text = transcript_checks::structured(&data);
        if clawctx_core::transcript::Transcript::from_json(&text).is_ok() {
            parsed += 1;
        }
        texts.insert(text);
    }
    assert!(parsed * 100 >= total * 80, "only {parsed} of {total} parse");
    assert!(texts.len() * 100 >= total * 95);
}

/// The `tool_call_inputs` target's repair check (see
/// `rust/fuzz/fuzz_targets/tool_call_inputs.rs`): `repairToolCallInputs`, with and without an
/// allowlist, is idempotent.
#[test]
fn tool_call_inputs_regressions_pass_the_target_checks() {
    let found = inputs("tool_call_inputs");
    assert!(!found.is_empty());
    let names: std::collections::HashSet<String> =
        ["read", "exec", "write"].map(String::from).into();
    for path in found {
        let text = fs::read_to_string(&path).unwrap();
        let transcript = clawctx_core::transcript::Transcript::from_json(&text).unwrap();
        for allowed in [None, Some(&names)] {
            let once =
                clawctx_core::transcript::repair_tool_call_inputs(&transcript, allowed).messages;
            let twice = clawctx_core::transcript::repair_tool_call_inputs(&once, allowed).messages;
            assert_eq!(once.to_json(), twice.to_json(), "{}", path.display());
        }
    }
}
