//! The `session_bytes` fuzz target's checks (`rust/fuzz/fuzz_targets/session_bytes.rs`), shared
//! with the replay of its regressions on stable Rust (`rust/core/tests/fuzz_regressions.rs`):
//! session file bytes opened (read-only and writable), the leaf context read from the end of
//! the file, repair, and refresh after another writer appended. Nothing may panic, and:
//! - the leaf context read from the end equals the full open's context;
//! - a refresh after an append sees the same entries as a fresh open;
//! - a second repair finds nothing to repair.

use std::fs;
use std::io::Write;
use std::path::Path;

use clawctx_core::base::SequentialIds;
use clawctx_core::session::{
    repair_session_file, BackupPolicy, LeafContextReader, LeafSelector, NewEntry, OpenOptions,
    RepairOptions, Session, TailOptions, WriteOptions,
};

const HEADER: &[u8] =
    br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;

/// Entry ids in file order, each once: an open keeps a record that repeats an earlier one's id
/// and bytes, while a refresh recognises it as held and skips it (same entry either way).
pub fn ids(session: &Session) -> Vec<Option<String>> {
    let mut seen = std::collections::HashSet::new();
    session
        .records()
        .iter()
        .filter(|e| seen.insert(e.text.as_str().to_owned()))
        .map(|e| e.id.as_ref().map(|s| s.to_string()))
        .collect()
}

/// Runs the checks on one input, writing the session file `s.jsonl` in `dir`.
pub fn check(data: &[u8], dir: &Path) {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    // The control byte: whether to prepend a valid header, and where the bytes a second writer
    // appends later start (a fraction of the rest).
    let with_header = control & 1 == 1;
    let cut = rest.len() * usize::from(control >> 1) / 127;
    let (body, appended) = rest.split_at(cut.min(rest.len()));

    let path = dir.join("s.jsonl");
    let mut bytes = Vec::with_capacity(body.len() + HEADER.len() + 1);
    if with_header {
        bytes.extend_from_slice(HEADER);
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(body);
    fs::write(&path, &bytes).unwrap();

    let read_only = OpenOptions {
        read_only: true,
        ..OpenOptions::default()
    };
    if let Ok(full) = Session::open(&path, &read_only, &mut SequentialIds::new(1), 0) {
        let context = full.context(LeafSelector::Last);
        let _ = context.messages.to_json();
        // Small chunks so the backwards walk crosses many chunk boundaries.
        let tail = TailOptions {
            first_chunk: 64,
            max_chunk: 1024,
        };
        let mut reader = LeafContextReader::open(&path, &tail).expect("the full open succeeded");
        assert_eq!(
            reader.messages().to_json(),
            context.messages.to_json(),
            "leaf read differs from the full open"
        );
        let from_tail = reader.context().expect("context of a readable file");
        assert_eq!(
            from_tail, context,
            "leaf context differs from the full open"
        );
    }

    // Writable open (an empty file gets a header), an append, then another writer's bytes and
    // a refresh: the refreshed session must hold what a fresh open holds.
    let writable = OpenOptions {
        write: WriteOptions {
            fsync: false,
            ..WriteOptions::default()
        },
        fresh_session_id: Some("s".into()),
        fresh_cwd: Some("/".into()),
        ..OpenOptions::default()
    };
    let mut id_source = SequentialIds::new(1);
    if let Ok(mut session) = Session::open(&path, &writable, &mut id_source, 0) {
        let message = serde_json::json!({"role": "user", "content": "appended", "timestamp": 1});
        let _ = session.append(NewEntry::Message(message), &mut id_source, 1);
        if !appended.is_empty() {
            let mut file = fs::OpenOptions::new().append(true).open(&path).unwrap();
            file.write_all(appended).unwrap();
            // A last line without "\n" is a write in progress: refresh leaves it for later,
            // while an open reads it. The other writer finishes its line.
            if !appended.ends_with(b"\n") {
                file.write_all(b"\n").unwrap();
            }
        }
        if session.refresh(&mut id_source, 2).is_ok() {
            let fresh = Session::open(&path, &read_only, &mut SequentialIds::new(1), 0)
                .expect("a file the session refreshed from opens");
            // An old-version file gets fresh ids on every open until its migration is saved,
            // so only a current file's ids can be compared.
            if !fresh.needs_migration_rewrite() {
                assert_eq!(
                    ids(&session),
                    ids(&fresh),
                    "refresh differs from a fresh open"
                );
            }
        }
    }

    let options = RepairOptions {
        backup: BackupPolicy::Delete,
        now_ms: 0,
        ..RepairOptions::default()
    };
    for fix_messages in [false, true] {
        let options = RepairOptions {
            fix_messages,
            ..options.clone()
        };
        if repair_session_file(&path, &options).is_ok() {
            let again = repair_session_file(&path, &options).expect("a repaired file repairs");
            assert!(!again.repaired, "second repair changed the file: {again:?}");
        }
    }
}
