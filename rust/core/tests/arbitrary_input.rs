//! Arbitrary bytes never panic the loader, the salvage or the repair (a proptest stand-in for
//! a fuzz target: cargo-fuzz needs a nightly toolchain).

use std::fs;

use clawctx_core::base::SequentialIds;
use clawctx_core::session::salvage_line;
use clawctx_core::session::{repair_session_file, BackupPolicy, RepairOptions};
use clawctx_core::session::{OpenOptions, Session};
use proptest::prelude::*;

const HEADER: &[u8] =
    br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;

fn noisy_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\",\"content\":\"x\"}}".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\0\0".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"{\"type\":".to_vec()),
        Just(b"\\ud800".to_vec()),
        prop::collection::vec(any::<u8>(), 0..16),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn salvage_never_panics(bytes in noisy_bytes()) {
        let salvage = salvage_line(&bytes);
        for record in salvage.records {
            prop_assert!(serde_json::from_str::<serde_json::Value>(&record).is_ok() || record.contains("\\u"));
        }
    }

    #[test]
    fn open_and_repair_never_panic(body in noisy_bytes()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut bytes = HEADER.to_vec();
        bytes.push(b'\n');
        bytes.extend_from_slice(&body);
        fs::write(&path, &bytes).unwrap();
        let options = OpenOptions { read_only: true, ..Default::default() };
        let before = Session::open(&path, &options, &mut SequentialIds::new(1), 0).unwrap();
        let report = repair_session_file(&path, &RepairOptions { backup: BackupPolicy::Delete, ..Default::default() }).unwrap();
        let after = Session::open(&path, &options, &mut SequentialIds::new(1), 0).unwrap();
        // Repair keeps every record the loader found.
        prop_assert_eq!(after.records().len(), before.records().len());
        prop_assert!(!repair_session_file(&path, &RepairOptions::default()).unwrap().repaired, "{:?}", report);
    }
}
