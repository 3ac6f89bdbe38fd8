//! Loading, migration and context building (pi-mono 0.58.3
//! `packages/coding-agent/src/core/session-manager.ts`), through the public core API.

mod common;

use std::fs;

use clawctx_core::base::SequentialIds;
use clawctx_core::session::{build_session_context, LeafSelector};
use clawctx_core::session::{index_entries, InvalidHeader, OpenOptions, Session};
use clawctx_core::{Entry, Error};
use common::{header, msg, pi_fixture, to_lines};
use serde_json::{json, Value};

fn open(text: &str) -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    fs::write(&path, text).unwrap();
    let session = Session::open(
        &path,
        &OpenOptions::default(),
        &mut SequentialIds::new(1),
        0,
    )
    .unwrap();
    (dir, session)
}

fn texts(session: &Session, leaf: LeafSelector<'_>) -> Vec<String> {
    let index = index_entries(session.stored_entries());
    let ctx = build_session_context(session.stored_entries(), &index, leaf);
    ctx.messages
        .messages()
        .iter()
        .map(|m| {
            let v = m.to_value().unwrap();
            v["content"][0]["text"]
                .as_str()
                .or(v["summary"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[test]
fn compaction_keeps_from_first_kept_entry() {
    let mut lines = vec![
        header(),
        msg("1", None, "user", "first"),
        msg("2", Some("1"), "assistant", "response1"),
    ];
    lines.push(msg("3", Some("2"), "user", "second"));
    lines.push(msg("4", Some("3"), "assistant", "response2"));
    lines.push(
        json!({"type":"compaction","id":"5","parentId":"4","timestamp":"2026-01-01T00:00:05.000Z",
        "summary":"Summary of first two turns","firstKeptEntryId":"3","tokensBefore":100}),
    );
    lines.push(msg("6", Some("5"), "user", "third"));
    lines.push(msg("7", Some("6"), "assistant", "response3"));
    let (_dir, session) = open(&to_lines(&lines));
    assert_eq!(
        texts(&session, LeafSelector::Last),
        [
            "Summary of first two turns",
            "second",
            "response2",
            "third",
            "response3"
        ]
    );
    let index = index_entries(session.stored_entries());
    let ctx = build_session_context(session.stored_entries(), &index, LeafSelector::Last);
    assert_eq!(
        ctx.messages.messages()[0].as_str(),
        r#"{"role":"compactionSummary","summary":"Summary of first two turns","tokensBefore":100,"timestamp":1767225605000}"#
    );
    assert_eq!(
        ctx.model,
        Some(json!({"provider":"anthropic","modelId":"claude-test"}))
    );
}

#[test]
fn leaf_selection_and_cycles() {
    let lines = vec![
        header(),
        msg("1", Some("2"), "user", "a"),
        msg("2", Some("1"), "assistant", "b"),
    ];
    let (_dir, session) = open(&to_lines(&lines));
    // A parentId cycle must not hang: the walk stops at the repeated entry.
    assert_eq!(texts(&session, LeafSelector::Last), ["a", "b"]);
    assert!(texts(&session, LeafSelector::Null).is_empty());
    assert_eq!(texts(&session, LeafSelector::Id("nope")), ["a", "b"]);
    assert_eq!(texts(&session, LeafSelector::Id("1")), ["b", "a"]);
}

#[test]
fn branch_summary_needs_a_truthy_summary() {
    let lines = vec![
        header(),
        msg("1", None, "user", "u"),
        json!({"type":"branch_summary","id":"2","parentId":"1","timestamp":"2026-01-01T00:00:02.000Z","fromId":"1","summary":""}),
        json!({"type":"branch_summary","id":"3","parentId":"2","timestamp":"bad","fromId":"1","summary":"kept"}),
    ];
    let (_dir, session) = open(&to_lines(&lines));
    let index = index_entries(session.stored_entries());
    let ctx = build_session_context(session.stored_entries(), &index, LeafSelector::Last);
    assert_eq!(ctx.messages.len(), 2);
    // An unparsable timestamp is NaN in JavaScript, which JSON.stringify writes as null.
    assert_eq!(
        ctx.messages.messages()[1].as_str(),
        r#"{"role":"branchSummary","summary":"kept","fromId":"1","timestamp":null}"#
    );
}

#[test]
fn v1_migration_assigns_ids_and_converts_compaction_index() {
    let text = to_lines(&[
        json!({"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}),
        json!({"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}),
        json!({"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"h","timestamp":2}}),
        json!({"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"S","firstKeptEntryIndex":2,"tokensBefore":5}),
        json!({"type":"compaction","timestamp":"2025-01-01T00:00:04.000Z","summary":"T","firstKeptEntryIndex":9,"tokensBefore":5}),
    ]);
    let (_dir, session) = open(&text);
    assert_eq!(session.file_version(), 1);
    assert_eq!(session.header().version(), 3);
    let values: Vec<Value> = session.records().iter().map(Entry::to_value).collect();
    let ids: Vec<&str> = values.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["00000001", "00000002", "00000003", "00000004"]);
    assert_eq!(values[0]["parentId"], Value::Null);
    assert_eq!(values[3]["parentId"], "00000003");
    assert_eq!(values[1]["message"]["role"], "custom");
    assert_eq!(values[2]["firstKeptEntryId"], "00000002");
    assert!(values[2].get("firstKeptEntryIndex").is_none());
    assert!(
        values[3].get("firstKeptEntryId").is_none(),
        "out-of-range index leaves it unset"
    );
    assert!(session.records().iter().all(|e| e.modified));
}

#[test]
fn invalid_header_is_an_error_or_a_backed_up_reset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    fs::write(&path, "garbage\n{\"type\":\"message\",\"id\":\"1\"}\n").unwrap();
    let err = Session::open(
        &path,
        &OpenOptions::default(),
        &mut SequentialIds::new(1),
        0,
    )
    .unwrap_err();
    match err {
        Error::Format { line, reason, .. } => {
            assert_eq!(line, 2);
            assert!(reason.contains("not a session header"), "{reason}");
        }
        other => panic!("unexpected {other}"),
    }
    let options = OpenOptions {
        on_invalid_header: InvalidHeader::Reset,
        ..Default::default()
    };
    let session = Session::open(&path, &options, &mut SequentialIds::new(1), 1_000).unwrap();
    let backup = session.backup_path().unwrap();
    assert_eq!(
        fs::read_to_string(backup).unwrap(),
        "garbage\n{\"type\":\"message\",\"id\":\"1\"}\n"
    );
    let written = fs::read_to_string(&path).unwrap();
    assert_eq!(written.lines().count(), 1);
    assert!(written.contains(session.session_id().unwrap()));
}

#[test]
fn real_fixtures_load_without_skips() {
    for name in ["large-session.jsonl", "before-compaction.jsonl"] {
        let Some(path) = pi_fixture(name) else { return };
        let original = fs::read(&path).unwrap();
        let session = Session::open(
            &path,
            &OpenOptions {
                read_only: true,
                ..Default::default()
            },
            &mut SequentialIds::new(1),
            0,
        )
        .unwrap();
        let lines = original
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        assert_eq!(session.records().len(), lines - 1, "{name}");
        assert!(session.skipped_lines().is_empty());
        let index = index_entries(session.stored_entries());
        let ctx = build_session_context(session.stored_entries(), &index, LeafSelector::Last);
        assert!(ctx.messages.len() > 100, "{name}");
        assert_eq!(fs::read(&path).unwrap(), original);
    }
}

/// Inert records on consecutive lines are held as runs (issue 17, finding 12); every public
/// view of the session is the same as for the same records with blank lines between them,
/// which are never held as runs.
#[test]
fn inert_runs_are_invisible_in_every_view() {
    let inert = ["{}", r#"{"x":1}"#, r#"{"type":"future_thing","n":[1]}"#];
    let mut lines = vec![header().to_string()];
    let mut parent: Option<String> = None;
    for k in 0..40 {
        for j in 0..(k % 7) {
            lines.push(inert[(k + j) % inert.len()].to_owned());
        }
        let id = format!("m{k}");
        lines.push(msg(&id, parent.as_deref(), "user", &format!("t{k}")).to_string());
        if k % 9 == 0 {
            lines.push(
                json!({"type":"label","id":format!("l{k}"),"parentId":id,"targetId":id,"label":"x"})
                    .to_string(),
            );
        }
        parent = Some(id);
    }
    lines.extend(["{}".to_owned(), r#"{"y":2}"#.to_owned(), "{}".to_owned()]);
    let packed = lines.join("\n") + "\n";
    let spaced = lines.join("\n\n") + "\n";
    let (_a, with_runs) = open(&packed);
    let (_b, without) = open(&spaced);
    assert!(with_runs.stored_entries().len() < with_runs.record_count());
    assert_eq!(without.stored_entries().len(), without.record_count());
    let view = |s: &Session| {
        let records: Vec<String> = s
            .records()
            .iter()
            .map(|e| e.text.as_str().to_owned())
            .collect();
        let types: Vec<Option<String>> = s
            .records()
            .iter()
            .map(|e| e.entry_type().map(|t| t.into_owned()))
            .collect();
        let facts = clawctx_core::session::source_facts(s);
        (
            records,
            types,
            s.record_count(),
            s.tree(),
            s.labels().clone(),
            s.leaf_id().map(str::to_owned),
            texts(s, LeafSelector::Last),
            format!("{facts:?}"),
        )
    };
    assert_eq!(view(&with_runs), view(&without));
    // The leaf is the last record on its own: `{}`, with an empty context.
    let leaf = with_runs.leaf_index().unwrap();
    assert_eq!(with_runs.stored_entries()[leaf].text.as_str(), "{}");
    assert!(texts(&with_runs, LeafSelector::Last).is_empty());
    // Appended inert lines read by `refresh` are counted as records.
    let path = _a.path().join("s.jsonl");
    let mut more = fs::read_to_string(&path).unwrap();
    more.push_str(&"{}\n".repeat(50));
    fs::write(&path, more).unwrap();
    let mut refreshed = with_runs;
    let report = refreshed.refresh(&mut SequentialIds::new(1), 0).unwrap();
    assert_eq!(report.appended_entries, 50);
    assert_eq!(refreshed.record_count(), without.record_count() + 50);
    assert!(refreshed.stored_entries().len() < without.stored_entries().len());
}

/// A v1 file (no ids) with consecutive inert lines: migration gives every record its id, as
/// pi's `migrateV1ToV2` does, runs or not.
#[test]
fn migration_takes_inert_runs_apart() {
    let text = [
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#,
        "{}",
        "{}",
        r#"{"x":1}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
    ]
    .join("\n");
    let (_d, session) = open(&text);
    assert_eq!(session.record_count(), 4);
    assert_eq!(session.stored_entries().len(), 4);
    assert!(session
        .records()
        .iter()
        .all(|e| e.id.is_some() && e.modified));
}

/// A reload that migrates with ids drawn beforehand (issue 33, N5): too few drawn ids leave
/// the session as it was and report the shortfall; enough are used in order.
#[test]
fn try_refresh_with_too_few_drawn_ids_changes_nothing() {
    use clawctx_core::base::DrawnIds;
    let v3 = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#,
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
    ]
    .join("\n");
    let (dir, mut session) = open(&format!("{v3}\n"));
    let v1 = [
        r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"a"}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"b"}}"#,
        r#"{"type":"message","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"c"}}"#,
    ]
    .join("\n");
    fs::write(dir.path().join("s.jsonl"), format!("{v1}\n")).unwrap();
    let mut short = DrawnIds::new(["x1".to_owned()]);
    assert!(session.try_refresh(&mut short, 0).unwrap().is_none());
    assert_eq!(short.shortfall(), 2);
    assert_eq!(session.leaf_id(), Some("m1"));
    assert_eq!(session.record_count(), 1);
    // `refresh` with a source that runs short is an error, not a half-made reload.
    assert!(session
        .refresh(&mut DrawnIds::new(["x1".to_owned()]), 0)
        .is_err());
    assert_eq!(session.leaf_id(), Some("m1"));
    let ids = ["x1", "x2", "x3"].map(str::to_owned);
    let report = session
        .try_refresh(&mut DrawnIds::new(ids), 0)
        .unwrap()
        .unwrap();
    assert_eq!(report.appended_entries, 3);
    assert_eq!(session.leaf_id(), Some("x3"));
    // With `or_random`, random ids stand in for missing ones.
    fs::write(dir.path().join("s.jsonl"), format!("{v1}\n")).unwrap();
    let report = session
        .try_refresh(&mut DrawnIds::new(["y1".to_owned()]).or_random(), 0)
        .unwrap();
    assert!(report.is_some());
    assert!(session.index_of("y1").is_some());
}

/// `Session::context` reuses the last context it built when the new leaf descends from it. On
/// a tree with branches, compactions, a reset, setting changes, a child written before its
/// parent and a parent cycle, every leaf visited in file order, in reverse and shuffled must
/// give what a fresh `buildSessionContext` gives.
#[test]
fn reused_context_equals_a_fresh_build_in_any_visiting_order() {
    let mut lines = vec![header()];
    let mut ids: Vec<String> = Vec::new();
    let mut push = |lines: &mut Vec<Value>, value: Value| {
        ids.push(value["id"].as_str().unwrap().to_owned());
        lines.push(value);
    };
    // Main line with two compactions and settings changes.
    let mut parent: Option<String> = None;
    for i in 0..40 {
        let id = format!("m{i}");
        let value = match i {
            10 => {
                json!({"type":"compaction","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:05.000Z",
                "summary":"first summary","firstKeptEntryId":"m6","tokensBefore":100})
            }
            25 => {
                json!({"type":"compaction","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:06.000Z",
                "summary":"second summary","firstKeptEntryId":"m20","tokensBefore":200})
            }
            14 => {
                json!({"type":"thinking_level_change","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:07.000Z",
                "thinkingLevel":"high"})
            }
            17 => {
                json!({"type":"model_change","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:08.000Z",
                "provider":"openai","modelId":"gpt-test"})
            }
            33 => {
                json!({"type":"reset","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:09.000Z",
                "firstKeptEntryId":"m31"})
            }
            _ => msg(
                &id,
                parent.as_deref(),
                if i % 2 == 0 { "user" } else { "assistant" },
                &format!("main {i}"),
            ),
        };
        push(&mut lines, value);
        parent = Some(id);
    }
    // A branch off m12 and one off m27, interleaved with the main line's last entries.
    let mut branch_parent = "m12".to_owned();
    for i in 0..6 {
        let id = format!("b{i}");
        push(
            &mut lines,
            msg(&id, Some(&branch_parent), "user", &format!("branch {i}")),
        );
        branch_parent = id;
    }
    push(&mut lines, msg("c0", Some("m27"), "assistant", "side"));
    // A child written before its parent, and a two-entry parent cycle.
    push(
        &mut lines,
        msg("late-child", Some("late-parent"), "user", "child first"),
    );
    push(
        &mut lines,
        msg("late-parent", Some("m39"), "assistant", "parent second"),
    );
    push(&mut lines, msg("cy1", Some("cy2"), "user", "cycle a"));
    push(&mut lines, msg("cy2", Some("cy1"), "assistant", "cycle b"));
    let (_dir, session) = open(&to_lines(&lines));

    let fresh = |id: &str| {
        let index = index_entries(session.stored_entries());
        build_session_context(session.stored_entries(), &index, LeafSelector::Id(id))
    };
    let same = |id: &str| {
        let reused = session.context(LeafSelector::Id(id));
        let expected = fresh(id);
        let strings = |c: &clawctx_core::session::SessionContext| {
            c.messages
                .messages()
                .iter()
                .map(|m| m.as_str().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(strings(&reused), strings(&expected), "messages at {id}");
        assert_eq!(
            reused.thinking_level, expected.thinking_level,
            "thinking level at {id}"
        );
        assert_eq!(reused.model, expected.model, "model at {id}");
    };
    for id in &ids {
        same(id);
    }
    for id in ids.iter().rev() {
        same(id);
    }
    // A fixed shuffle (a linear congruential walk over the indices), visited twice.
    let n = ids.len();
    let mut k = 7usize;
    for _ in 0..(2 * n) {
        k = (k * 31 + 11) % n;
        same(&ids[k]);
    }
}
