//! Repair (OpenClaw `src/agents/session-file-repair.ts`, `repairSessionFileIfNeeded`): byte
//! preservation, truncation at every offset, property tests.

mod common;

use std::fs;

use clawctx_core::session::{
    repair_session_bytes, repair_session_file, BackupPolicy, ChangeKind, RepairOptions,
};
use common::{header, msg, pi_fixture, to_lines};
use proptest::prelude::*;
use serde_json::json;

fn repair(path: &std::path::Path) -> clawctx_core::RepairReport {
    repair_session_file(
        path,
        &RepairOptions {
            backup: BackupPolicy::Delete,
            ..Default::default()
        },
    )
    .unwrap()
}

/// The repair with the later release's message fixes (G3), as `fix_messages=True`.
fn repair_g3(path: &std::path::Path) -> clawctx_core::RepairReport {
    repair_session_file(
        path,
        &RepairOptions {
            backup: BackupPolicy::Delete,
            fix_messages: true,
            ..Default::default()
        },
    )
    .unwrap()
}

fn complete_lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = bytes.split_inclusive(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| !l.ends_with(b"\n")) {
        lines.pop();
    }
    lines
}

/// Whether the unterminated tail of a cut file is a whole record that only lacks its `"\n"`.
fn tail_is_record(bytes: &[u8]) -> bool {
    let complete: usize = complete_lines(bytes).iter().map(|l| l.len()).sum();
    let tail = &bytes[complete..];
    !tail.is_empty()
        && serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(tail).is_ok()
}

/// What repair must leave of a file cut at some byte: every complete line; a tail that is a
/// whole record only lacking its `"\n"` is no damage (OpenClaw 2026.3.13), so the file is
/// then left as it is.
fn expected_after_cut(bytes: &[u8]) -> Vec<Vec<u8>> {
    if tail_is_record(bytes) {
        return vec![bytes.to_vec()];
    }
    complete_lines(bytes)
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn upstream_cases_g3() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    // Malformed trailing line: dropped, the rest kept, backup equals the original.
    let base = to_lines(&[header(), msg("1", None, "user", "hello")]);
    fs::write(&path, format!("{base}{{\"type\":\"message\"")).unwrap();
    let original = fs::read(&path).unwrap();
    let report = repair_session_file(&path, &RepairOptions::default()).unwrap();
    assert!(report.repaired);
    assert_eq!(report.dropped_lines, 1);
    assert_eq!(report.changes[0].line, 3);
    assert_eq!(report.changes[0].kind, ChangeKind::Dropped);
    assert_eq!(fs::read_to_string(&path).unwrap(), base);
    assert_eq!(fs::read(report.backup_path.unwrap()).unwrap(), original);

    // Empty errored assistant: rewritten with the fallback text; a trailing assistant stays (G3,
    // the newest session-file-repair.ts; an earlier generation trimmed it).
    let mut error = msg("2", Some("1"), "assistant", "x");
    error["message"]["content"] = json!([]);
    error["message"]["stopReason"] = json!("error");
    fs::write(
        &path,
        to_lines(&[
            header(),
            msg("1", None, "user", "u"),
            error,
            msg("3", Some("2"), "assistant", "stale"),
        ]),
    )
    .unwrap();
    let report = repair_g3(&path);
    assert_eq!(
        (
            report.repaired,
            report.rewritten_assistant_messages,
            report.dropped_lines
        ),
        (true, 1, 0)
    );
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.lines().nth(2).unwrap().contains(
        r#""content":[{"type":"text","text":"[assistant turn failed before producing content]"}]"#
    ));
    assert_eq!(text.lines().count(), 4);
    assert!(!repair_g3(&path).repaired, "idempotent");
}

#[test]
fn crlf_is_not_damage_and_kept_lines_keep_their_endings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let crlf = to_lines(&[header(), msg("1", None, "user", "hi")]).replace('\n', "\r\n");
    fs::write(&path, &crlf).unwrap();
    assert!(!repair(&path).repaired);
    fs::write(&path, format!("{crlf}garbage\r\n")).unwrap();
    let report = repair(&path);
    assert!(report.repaired);
    assert_eq!(fs::read_to_string(&path).unwrap(), crlf);
}

#[test]
fn truncation_at_every_offset_keeps_complete_lines() {
    let text = to_lines(&[
        header(),
        msg("1", None, "user", "hello wörld 😀"),
        msg("2", Some("1"), "assistant", "answer"),
        json!({"type":"custom","customType":"x","data":{"a":[1,2,3]},"id":"3","parentId":"2","timestamp":"2026-01-01T00:00:03.000Z"}),
    ]);
    let bytes = text.as_bytes();
    let header_len = bytes.iter().position(|b| *b == b'\n').unwrap() + 1;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    for cut in header_len..=bytes.len() {
        let damaged = &bytes[..cut];
        fs::write(&path, damaged).unwrap();
        let report = repair(&path);
        let repaired = fs::read(&path).unwrap();
        let expected = expected_after_cut(damaged);
        assert_eq!(repaired, expected.concat(), "cut at {cut}");
        assert_eq!(
            report.repaired,
            !damaged.ends_with(b"\n") && !tail_is_record(damaged),
            "cut at {cut}"
        );
        let complete = complete_lines(damaged).len();
        if report.repaired {
            assert_eq!(
                report.dropped_lines, 1,
                "cut at {cut}: the torn line is reported"
            );
            assert_eq!(report.changes[0].line, complete + 1);
        }
    }
}

#[test]
fn truncated_real_fixture_keeps_every_complete_line() {
    let Some(fixture) = pi_fixture("before-compaction.jsonl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    // The fixture has one empty errored assistant turn (line 848) that repair heals; heal it
    // first so that what remains to check is the truncation alone.
    fs::copy(fixture, &path).unwrap();
    let healed = repair_g3(&path);
    assert_eq!(
        (healed.rewritten_assistant_messages, healed.changes.len()),
        (1, 1)
    );
    assert_eq!(healed.changes[0].line, 848);
    let bytes = fs::read(&path).unwrap();
    for step in 1..40 {
        let cut = bytes.len() * step / 40 + step;
        let damaged = &bytes[..cut.min(bytes.len())];
        fs::write(&path, damaged).unwrap();
        repair(&path);
        assert_eq!(
            fs::read(&path).unwrap(),
            expected_after_cut(damaged).concat(),
            "cut at {cut}"
        );
    }
}

fn entry_line() -> impl Strategy<Value = String> {
    ("[a-z0-9 ]{0,12}", 0u32..1000, prop::bool::ANY).prop_map(|(text, n, user)| {
        let role = if user { "user" } else { "assistant" };
        let text = if user && text.trim().is_empty() {
            format!("t{n}")
        } else {
            text
        };
        let id = format!("{n:08x}");
        to_lines(&[msg(&id, None, role, &text)])
    })
}

fn garbage_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z{}\\[\\]:,\"]{1,30}".prop_map(|g| format!("{g}\n")),
        Just("\0\0\0\0\n".to_owned()),
        Just("{\"type\":\"message\",\"id\":\n".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever garbage sits between them, every valid line survives repair byte for byte and
    /// in order, and the result needs no second repair.
    #[test]
    fn repair_never_drops_a_valid_line(parts in prop::collection::vec((entry_line(), prop::option::of(garbage_line())), 1..12)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let head = to_lines(&[header()]);
        let mut text = head.clone();
        let mut expected = head;
        for (line, garbage) in &parts {
            text.push_str(line);
            expected.push_str(line);
            if let Some(g) = garbage {
                text.push_str(g);
            }
        }
        fs::write(&path, &text).unwrap();
        repair(&path);
        let repaired = fs::read_to_string(&path).unwrap();
        // Garbage that happens to be valid JSON (e.g. `[]`) is kept: only check valid lines.
        let kept: Vec<&str> = repaired.lines().filter(|l| expected.lines().any(|e| e == *l)).collect();
        prop_assert_eq!(kept, expected.lines().collect::<Vec<_>>());
        prop_assert!(!repair(&path).repaired);
    }

    /// Repairing bytes in memory decides exactly as repairing the file: the same report (but
    /// no backup) and the same repaired bytes; clean input gives no new bytes.
    #[test]
    fn bytes_repair_matches_file_repair(parts in prop::collection::vec((entry_line(), prop::option::of(garbage_line())), 1..8), fix in prop::bool::ANY) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut text = to_lines(&[header()]);
        for (line, garbage) in &parts {
            text.push_str(line);
            if let Some(g) = garbage {
                text.push_str(g);
            }
        }
        fs::write(&path, &text).unwrap();
        let (in_memory, repaired) = repair_session_bytes(text.as_bytes(), fix);
        let on_disk = repair_session_file(
            &path,
            &RepairOptions { backup: BackupPolicy::Delete, fix_messages: fix, ..Default::default() },
        )
        .unwrap();
        prop_assert_eq!(&in_memory, &on_disk);
        prop_assert_eq!(repaired.is_some(), on_disk.repaired);
        prop_assert_eq!(repaired.unwrap_or_else(|| text.clone().into_bytes()), fs::read(&path).unwrap());
    }
}

#[test]
fn bytes_repair_reports_why_nothing_was_done() {
    assert_eq!(
        repair_session_bytes(b"", false).0.reason.as_deref(),
        Some("empty session file")
    );
    let (report, out) = repair_session_bytes(b"{\"type\":\"message\"}\ngarbage\n", false);
    assert_eq!(report.reason.as_deref(), Some("invalid session header"));
    assert!(out.is_none() && !report.repaired);
}
