//! Tests of the compaction stage: settings and trigger, cut point, preparation, serialization
//! and prompts, and the summary entry, on entries built as pi's tests build them.

use super::cut_point::message_role;
use super::preparation::js_sort;
use super::serialize::truncate_for_summary;
use super::*;
use serde_json::{json, Value};

use crate::base::IdSource;
use crate::session::index_entries;
use crate::session::Entry;
use crate::session::{build_session_context, LeafSelector};
use crate::session::{NewEntry, Session};
use crate::transcript::Transcript;

/// Entries as pi's tests build them: ids `test-id-N`, each the child of the previous one.
struct Builder {
    entries: Vec<Entry>,
}

impl Builder {
    fn new() -> Self {
        Builder {
            entries: Vec::new(),
        }
    }

    fn push(&mut self, mut fields: Value) -> String {
        let id = format!("test-id-{}", self.entries.len());
        let parent = self
            .entries
            .last()
            .and_then(|e| e.id.as_deref().map(str::to_owned));
        let map = fields.as_object_mut().unwrap();
        map.insert("id".into(), id.clone().into());
        map.insert("parentId".into(), parent.map_or(Value::Null, Value::from));
        map.insert("timestamp".into(), "2026-01-01T00:00:00.000Z".into());
        self.entries.push(Entry::from_value(&fields, 0).unwrap());
        id
    }

    fn message(&mut self, message: Value) -> String {
        self.push(json!({"type": "message", "message": message}))
    }

    fn user(&mut self, text: &str) -> String {
        self.message(json!({"role": "user", "content": text, "timestamp": 1}))
    }

    fn assistant(&mut self, text: &str) -> String {
        self.message(assistant_blocks(json!([{"type": "text", "text": text}])))
    }

    fn refs(&self) -> Vec<&Entry> {
        self.entries.iter().collect()
    }
}

fn assistant_blocks(blocks: Value) -> Value {
    json!({"role": "assistant", "content": blocks, "provider": "anthropic",
           "model": "claude-sonnet-4-5", "stopReason": "stop", "timestamp": 2})
}

fn tool_call(name: &str, path: &str) -> Value {
    json!({"type": "toolCall", "id": format!("c-{name}-{path}"), "name": name,
           "arguments": {"path": path}})
}

fn roles(t: &Transcript) -> Vec<String> {
    (0..t.len())
        .map(|i| t.role(i).unwrap_or_default())
        .collect()
}

#[test]
fn should_compact_is_strict() {
    let s = CompactionSettings {
        enabled: true,
        reserve_tokens: 10000,
        keep_recent_tokens: 20000,
    };
    assert!(should_compact(95000.0, 100000.0, &s));
    assert!(!should_compact(89000.0, 100000.0, &s));
    assert!(!should_compact(90000.0, 100000.0, &s));
    assert!(should_compact(90000.5, 100000.0, &s));
    let off = CompactionSettings {
        enabled: false,
        ..s
    };
    assert!(!should_compact(95000.0, 100000.0, &off));
}

#[test]
fn settings_defaults_floor_and_budgets() {
    let s = CompactionSettings::default();
    assert_eq!((s.reserve_tokens, s.keep_recent_tokens), (16384, 20000));
    assert_eq!(s.summary_max_tokens(), 13107);
    assert_eq!(s.turn_prefix_max_tokens(), 8192);
    assert_eq!(
        s.with_reserve_floor(DEFAULT_RESERVE_TOKENS_FLOOR)
            .reserve_tokens,
        20000
    );
    let big = CompactionSettings {
        reserve_tokens: 32000,
        ..s
    };
    assert_eq!(big.with_reserve_floor(20000).reserve_tokens, 32000);
    let parsed =
        CompactionSettings::from_value(&json!({"reserveTokensFloor": 24000, "mode": "x"})).unwrap();
    assert_eq!(parsed.reserve_tokens, 24000);
    assert_eq!(CompactionSettings::from_value(&s.to_value()).unwrap(), s);
    // pi computes with a negative reserve too (conformance case pi_should_compact-052).
    assert_eq!(
        CompactionSettings::from_value(&json!({"reserveTokens": -1}))
            .unwrap()
            .reserve_tokens,
        -1
    );
    assert!(CompactionSettings::from_value(&json!({"reserveTokens": 1.5})).is_err());
    assert!(CompactionSettings::from_value(&json!({"enabled": 1})).is_err());
}

#[test]
fn cut_point_in_ten_turns_is_a_user_or_assistant_message() {
    let mut b = Builder::new();
    for i in 0..10 {
        b.user(&format!("User {i}"));
        b.assistant(&format!("Assistant {i}"));
    }
    let cut = find_cut_point(&b.refs(), 0, b.entries.len(), 2500);
    let role = message_role(&b.entries[cut.first_kept_entry_index]);
    assert!(matches!(role, Some("user" | "assistant")));
    // Users are 2 tokens, assistants 3: from the end the sum is 3, 5, 8, 10, 13, ... A
    // budget of 10 is reached at the user message 16 (not split); 11 at the assistant 15,
    // which splits the turn that user message 14 started.
    let cut = find_cut_point(&b.refs(), 0, b.entries.len(), 10);
    assert_eq!(
        cut,
        CutPoint {
            first_kept_entry_index: 16,
            turn_start_index: None,
            is_split_turn: false
        }
    );
    let cut = find_cut_point(&b.refs(), 0, b.entries.len(), 11);
    assert_eq!(cut.first_kept_entry_index, 15);
    assert_eq!(cut.turn_start_index, Some(14));
    assert!(cut.is_split_turn);
}

#[test]
fn cut_point_small_cases() {
    let mut b = Builder::new();
    b.assistant("a");
    assert_eq!(
        find_cut_point(&b.refs(), 0, 1, 1000).first_kept_entry_index,
        0
    );
    let mut b = Builder::new();
    for t in ["1", "a", "2", "b"] {
        if t.parse::<u8>().is_ok() {
            b.user(t);
        } else {
            b.assistant(t);
        }
    }
    let cut = find_cut_point(&b.refs(), 0, 4, 50000);
    assert_eq!(cut.first_kept_entry_index, 0);
    assert!(!cut.is_split_turn);
    // No valid cut point: the start, not split.
    let mut b = Builder::new();
    b.message(json!({"role": "toolResult", "toolCallId": "x", "content": []}));
    b.push(json!({"type": "label", "targetId": "test-id-0", "label": "l"}));
    let cut = find_cut_point(&b.refs(), 1, 2, 0);
    assert_eq!(
        cut,
        CutPoint {
            first_kept_entry_index: 1,
            turn_start_index: None,
            is_split_turn: false
        }
    );
}

#[test]
fn split_turn_starts_at_the_turns_user_message() {
    let mut b = Builder::new();
    b.user("Turn 1");
    b.assistant("A1");
    b.user("Turn 2");
    b.assistant(&"x".repeat(4000)); // 1000 tokens
    b.assistant(&"y".repeat(4000));
    b.assistant(&"z".repeat(4000));
    let cut = find_cut_point(&b.refs(), 0, 6, 3000);
    assert_eq!(cut.first_kept_entry_index, 3);
    assert_eq!(cut.turn_start_index, Some(2));
    assert!(cut.is_split_turn);
}

#[test]
fn cut_takes_in_preceding_non_message_entries_and_never_a_tool_result() {
    let mut b = Builder::new();
    b.user("u1");
    b.message(assistant_blocks(json!([tool_call("read", "/a")])));
    b.message(json!({"role": "toolResult", "toolCallId": "c-read-/a", "content": [{"type": "text", "text": "r".repeat(400)}]}));
    b.push(json!({"type": "model_change", "provider": "p", "modelId": "m"}));
    b.push(json!({"type": "thinking_level_change", "thinkingLevel": "high"}));
    b.user("u2");
    // The tool result (100 tokens) reaches the budget at index 2: the first cut point at
    // or after it is the user message at 5, extended back over the two settings entries.
    let cut = find_cut_point(&b.refs(), 0, 6, 50);
    assert_eq!(cut.first_kept_entry_index, 3);
    // The cut entry is not a user message, so the turn is "split" from u1 (upstream quirk).
    assert_eq!(cut.turn_start_index, Some(0));
    assert!(cut.is_split_turn);
    // Extension stops at the range start.
    let cut = find_cut_point(&b.refs(), 4, 6, 1);
    assert_eq!(cut.first_kept_entry_index, 4);
    assert_eq!(cut.turn_start_index, None);
}

#[test]
fn budget_reached_past_the_last_cut_point_falls_back_to_the_first() {
    let mut b = Builder::new();
    b.user("u");
    b.message(assistant_blocks(json!([tool_call("read", "/a")])));
    b.message(json!({"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": "r".repeat(400)}]}));
    // Reached at the tool result (index 2): no cut point at or after it, so the cut stays
    // at the first cut point and everything is kept.
    let cut = find_cut_point(&b.refs(), 0, 3, 10);
    assert_eq!(cut.first_kept_entry_index, 0);
    assert!(!cut.is_split_turn);
}

#[test]
fn entry_messages_for_summaries() {
    let mut b = Builder::new();
    b.push(json!({"type": "branch_summary", "fromId": "root", "summary": ""}));
    b.push(json!({"type": "custom_message", "customType": "t", "content": "c", "display": true}));
    b.push(
        json!({"type": "compaction", "summary": "S", "firstKeptEntryId": "x", "tokensBefore": 5}),
    );
    b.push(json!({"type": "label", "targetId": "x"}));
    let m: Vec<Option<Value>> = b
        .entries
        .iter()
        .map(|e| entry_message(e).map(|m| m.to_value().unwrap()))
        .collect();
    assert_eq!(
        m[0],
        Some(
            json!({"role": "branchSummary", "summary": "", "fromId": "root", "timestamp": 1767225600000i64})
        )
    );
    assert_eq!(
        m[1],
        Some(
            json!({"role": "custom", "customType": "t", "content": "c", "display": true, "timestamp": 1767225600000i64})
        )
    );
    assert_eq!(
        m[2],
        Some(
            json!({"role": "compactionSummary", "summary": "S", "tokensBefore": 5, "timestamp": 1767225600000i64})
        )
    );
    assert_eq!(m[3], None);
}

#[test]
fn preparation_without_previous_compaction() {
    let mut b = Builder::new();
    b.user("u1");
    b.message(assistant_blocks(json!([
        tool_call("read", "/r"),
        tool_call("edit", "/e"),
        tool_call("read", "/e")
    ])));
    b.user(&"u".repeat(400));
    b.assistant(&"a".repeat(400));
    let settings = CompactionSettings {
        keep_recent_tokens: 150,
        ..Default::default()
    };
    let prep = prepare_compaction(&b.refs(), &settings).unwrap();
    assert_eq!(prep.cut.first_kept_entry_index, 2);
    assert_eq!(prep.first_kept_entry_id, "test-id-2");
    assert!(!prep.cut.is_split_turn);
    assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
    assert!(prep.turn_prefix_messages.is_empty());
    assert_eq!(prep.previous_summary, None);
    // No usage: the estimate of every message; the calls are 3 × (4 + 13) chars.
    assert_eq!(prep.tokens_before, 1 + 13 + 100 + 100);
    assert_eq!(
        prep.file_lists(),
        (vec!["/r".to_owned()], vec!["/e".to_owned()])
    );
    let requests = prep.summary_requests(Some("focus"));
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].kind, SummaryKind::History);
    assert_eq!(requests[0].max_tokens, 13107);
    assert!(requests[0]
        .prompt
        .starts_with("<conversation>\n[User]: u1\n\n[Assistant tool calls]: read(path=\"/r\"); edit(path=\"/e\"); read(path=\"/e\")\n</conversation>\n\nThe messages above are a conversation"));
    assert!(requests[0]
        .prompt
        .ends_with("error messages.\n\nAdditional focus: focus"));
    assert_eq!(
        prep.compose_summary(Some("S"), None),
        "S\n\n<read-files>\n/r\n</read-files>\n\n<modified-files>\n/e\n</modified-files>"
    );
}

#[test]
fn preparation_after_a_compaction_skips_what_it_kept() {
    let mut b = Builder::new();
    b.user("1");
    b.assistant("a");
    let u2 = b.user("2");
    b.message(assistant_blocks(json!([tool_call("write", "/w")])));
    b.push(json!({"type": "compaction", "summary": "First", "firstKeptEntryId": u2,
                  "tokensBefore": 9, "details": {"readFiles": ["/old", 3], "modifiedFiles": ["/m"]}}));
    b.user(&"3".repeat(40));
    b.assistant(&"c".repeat(40));
    b.user(&"4".repeat(40));
    b.assistant(&"d".repeat(40));
    let settings = CompactionSettings {
        keep_recent_tokens: 20,
        ..Default::default()
    };
    let prep = prepare_compaction(&b.refs(), &settings).unwrap();
    assert_eq!(prep.previous_compaction_index, Some(4));
    assert_eq!(prep.previous_summary.as_deref(), Some("First"));
    assert_eq!(prep.cut.first_kept_entry_index, 7);
    // Upstream quirk of `prepareCompaction`: u2 and its assistant (kept by the first
    // compaction) are not summarized.
    assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
    // tokensBefore counts the previous compaction as a compactionSummary (ceil(5/4) = 2).
    assert_eq!(prep.tokens_before, 2 + 4 * 10);
    assert_eq!(
        prep.file_lists(),
        (vec!["/old".to_owned()], vec!["/m".to_owned()])
    );
    let prompt = &prep.summary_requests(None)[0].prompt;
    assert!(prompt.contains(
        "</conversation>\n\n<previous-summary>\nFirst\n</previous-summary>\n\nThe messages above are NEW"
    ));
    // fromHook compactions contribute no file lists.
    b.entries[4] = Entry::from_value(
        &json!({"type": "compaction", "id": "test-id-4", "parentId": "test-id-3",
                "summary": "First", "firstKeptEntryId": "test-id-2", "tokensBefore": 9,
                "fromHook": true, "details": {"readFiles": ["/old"]}}),
        0,
    )
    .unwrap();
    let prep = prepare_compaction(&b.refs(), &settings).unwrap();
    assert_eq!(prep.file_lists(), (vec![], vec![]));
}

#[test]
fn preparation_of_a_split_turn() {
    let mut b = Builder::new();
    b.user("old");
    b.assistant("old answer");
    b.user("Turn 2");
    b.message(assistant_blocks(json!([tool_call("read", "/p")])));
    b.assistant(&"y".repeat(4000));
    b.assistant(&"z".repeat(4000));
    let settings = CompactionSettings {
        keep_recent_tokens: 1500,
        ..Default::default()
    };
    let prep = prepare_compaction(&b.refs(), &settings).unwrap();
    assert_eq!(prep.cut.first_kept_entry_index, 4);
    assert_eq!(prep.cut.turn_start_index, Some(2));
    assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
    assert_eq!(roles(&prep.turn_prefix_messages), ["user", "assistant"]);
    assert_eq!(prep.file_lists().0, vec!["/p".to_owned()]);
    let requests = prep.summary_requests(Some("ignored for the prefix"));
    let kinds: Vec<_> = requests.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [SummaryKind::History, SummaryKind::TurnPrefix]);
    assert_eq!(requests[1].max_tokens, 8192);
    assert_eq!(
        requests[1].prompt,
        format!(
            "<conversation>\n[User]: Turn 2\n\n[Assistant tool calls]: read(path=\"/p\")\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"
        )
    );
    assert_eq!(
        prep.compose_summary(Some("H"), Some("P")),
        "H\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>\n/p\n</read-files>"
    );
    // A split turn at the start: nothing to summarize before it, one request.
    let mut b = Builder::new();
    b.user("Turn");
    b.assistant(&"y".repeat(4000));
    b.assistant(&"z".repeat(4000));
    let prep = prepare_compaction(&b.refs(), &settings).unwrap();
    assert!(prep.messages_to_summarize.is_empty());
    let requests = prep.summary_requests(None);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].kind, SummaryKind::TurnPrefix);
    assert_eq!(
        prep.compose_summary(None, Some("P")),
        "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nP"
    );
}

#[test]
fn nothing_to_prepare() {
    let mut b = Builder::new();
    assert!(prepare_compaction(&b.refs(), &CompactionSettings::default()).is_none());
    b.user("u");
    b.push(json!({"type": "compaction", "summary": "S", "firstKeptEntryId": "test-id-0", "tokensBefore": 1}));
    assert!(prepare_compaction(&b.refs(), &CompactionSettings::default()).is_none());
    // An entry without an id where the cut lands: "needs migration".
    let entry = Entry::from_value(
        &json!({"type": "message", "message": {"role": "user", "content": "x"}}),
        0,
    )
    .unwrap();
    assert!(prepare_compaction(&[&entry], &CompactionSettings::default()).is_none());
}

#[test]
fn serialization_rules() {
    let t = Transcript::from_values(&[
        json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}),
        json!({"role": "user", "content": ""}),
        assistant_blocks(json!([
            {"type": "thinking", "thinking": "t1"}, {"type": "text", "text": "x"},
            {"type": "thinking", "thinking": "t2"}, {"type": "text", "text": "y"},
            {"type": "toolCall", "name": "bash", "arguments": {"cmd": "ls", "n": 1.0, "o": {"k": [true]}}}
        ])),
        json!({"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": "ok"}]}),
        json!({"role": "toolResult", "toolCallId": "c", "content": []}),
        json!({"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0}),
        json!({"role": "mystery"}),
    ]);
    assert_eq!(
        serialize_conversation(&t),
        "[User]: ab\n\n[Assistant thinking]: t1\nt2\n\n[Assistant]: x\ny\n\n[Assistant tool calls]: bash(cmd=\"ls\", n=1, o={\"k\":[true]})\n\n[Tool result]: ok\n\n[User]: Ran `ls`\n(no output)"
    );
}

#[test]
fn tool_results_are_truncated_to_2000_units() {
    let long = Transcript::from_values(&[
        json!({"role": "toolResult", "content": [{"type": "text", "text": "x".repeat(5000)}]}),
    ]);
    let text = serialize_conversation(&long);
    assert_eq!(
        text,
        format!(
            "[Tool result]: {}\n\n[... 3000 more characters truncated]",
            "x".repeat(2000)
        )
    );
    let short = "x".repeat(1500);
    let t = Transcript::from_values(&[
        json!({"role": "toolResult", "content": [{"type": "text", "text": short}]}),
    ]);
    assert_eq!(
        serialize_conversation(&t),
        format!("[Tool result]: {short}")
    );
    // A surrogate pair across the cut stays whole; the count is JavaScript's.
    let text = format!("{}😀{}", "x".repeat(1999), "y".repeat(10));
    let cut = truncate_for_summary(&text, 2000);
    assert_eq!(
        cut,
        format!(
            "{}😀\n\n[... 11 more characters truncated]",
            "x".repeat(1999)
        )
    );
}

#[test]
fn prompts_and_file_sections() {
    assert_eq!(
        history_prompt("C", Some(""), None),
        format!("<conversation>\nC\n</conversation>\n\n{SUMMARIZATION_PROMPT}")
    );
    assert_eq!(
        history_prompt("C", Some("P"), Some("")),
        format!("<conversation>\nC\n</conversation>\n\n<previous-summary>\nP\n</previous-summary>\n\n{UPDATE_SUMMARIZATION_PROMPT}")
    );
    assert_eq!(format_file_operations(&[], &[]), "");
    assert_eq!(
        format_file_operations(&[], &["/m".into(), "/n".into()]),
        "\n\n<modified-files>\n/m\n/n\n</modified-files>"
    );
    let mut files = vec!["\u{FF61}".to_owned(), "😀".to_owned(), "b".to_owned()];
    js_sort(&mut files);
    assert_eq!(files, ["b", "😀", "\u{FF61}"]);
}

struct Counter(u32);
impl IdSource for Counter {
    fn next_id(&mut self) -> String {
        self.0 += 1;
        format!("{:08x}", self.0)
    }
}

#[test]
fn compacted_session_context_is_summary_then_kept_messages() {
    let mut session = Session::in_memory("/repo", Some("s"), 0);
    let mut ids = Counter(0);
    for (i, text) in ["one", "two", "three"].iter().enumerate() {
        let user = json!({"role": "user", "content": text.repeat(100), "timestamp": i});
        session
            .append(NewEntry::Message(user), &mut ids, 1000)
            .unwrap();
        session
            .append(
                NewEntry::Message(assistant_blocks(json!([{"type": "text", "text": "ok"}]))),
                &mut ids,
                1000,
            )
            .unwrap();
    }
    let settings = CompactionSettings {
        keep_recent_tokens: 100,
        ..Default::default()
    };
    let prep = prepare_session_compaction(&session, &settings).unwrap();
    // 75 + 75 + 125 tokens of user text and 3 × 1 of assistant text.
    assert_eq!(prep.tokens_before, 278);
    assert_eq!(prep.first_kept_entry_id, "00000005");
    let summary = prep.compose_summary(Some("the summary"), None);
    let entry = prep.compaction_entry(summary);
    let id = session.append(entry, &mut ids, 2000).unwrap();
    let text = session.get_entry(&id).unwrap().text.as_str().to_owned();
    assert_eq!(
        text,
        r#"{"type":"compaction","id":"00000007","parentId":"00000006","timestamp":"1970-01-01T00:00:02.000Z","summary":"the summary","firstKeptEntryId":"00000005","tokensBefore":278,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}"#
    );
    let index = index_entries(session.stored_entries());
    let context = build_session_context(
        session.stored_entries(),
        &index,
        LeafSelector::Index(session.leaf_index().unwrap()),
    );
    assert_eq!(
        roles(&context.messages),
        ["compactionSummary", "user", "assistant"]
    );
    assert!(prepare_session_compaction(&session, &settings).is_none());
}

/// The context of the builder's last entry, as its roles and message texts.
fn context_texts(b: &Builder) -> Vec<String> {
    let index = index_entries(&b.entries);
    let context = build_session_context(&b.entries, &index, LeafSelector::Last);
    context
        .messages
        .messages()
        .iter()
        .map(|m| {
            let m: Value = serde_json::from_str(m.text().as_str()).unwrap();
            let text = m
                .get("content")
                .and_then(|c| {
                    c.as_str()
                        .map(str::to_owned)
                        .or_else(|| c[0]["text"].as_str().map(str::to_owned))
                })
                .or_else(|| m["summary"].as_str().map(str::to_owned))
                .unwrap_or_default();
            format!("{}:{text}", m["role"].as_str().unwrap_or_default())
        })
        .collect()
}

#[test]
fn a_reset_without_kept_entries_starts_the_context_after_it() {
    let mut b = Builder::new();
    b.user("old");
    b.assistant("old answer");
    b.push(json!({"type": "reset", "reason": "new"}));
    b.user("fresh");
    assert_eq!(context_texts(&b), ["user:fresh"]);
    // A reset as the leaf: an empty context (no summary message, unlike a compaction).
    b.entries.pop();
    assert!(context_texts(&b).is_empty());
}

#[test]
fn a_reset_keeps_what_its_first_kept_entry_id_names() {
    let mut b = Builder::new();
    b.user("old");
    let kept = b.assistant("kept");
    b.user("also kept");
    b.push(json!({"type": "reset", "reason": "reset", "firstKeptEntryId": kept}));
    b.user("fresh");
    assert_eq!(
        context_texts(&b),
        ["assistant:kept", "user:also kept", "user:fresh"]
    );
}

#[test]
fn the_latest_reset_or_compaction_bounds_the_context() {
    // A compaction after a reset: its summary and what it keeps, nothing before the reset.
    let mut b = Builder::new();
    b.user("before reset");
    b.push(json!({"type": "reset", "reason": "daily"}));
    let u = b.user("after reset");
    b.assistant("answer");
    b.push(json!({"type": "compaction", "summary": "S", "firstKeptEntryId": u, "tokensBefore": 5}));
    b.user("last");
    assert_eq!(
        context_texts(&b),
        [
            "compactionSummary:S",
            "user:after reset",
            "assistant:answer",
            "user:last"
        ]
    );
    // A reset after a compaction: the older summary does not reappear.
    let mut b = Builder::new();
    let u = b.user("one");
    b.push(json!({"type": "compaction", "summary": "S", "firstKeptEntryId": u, "tokensBefore": 5}));
    let kept = b.user("two");
    b.push(json!({"type": "reset", "reason": "idle", "firstKeptEntryId": kept}));
    b.user("three");
    assert_eq!(context_texts(&b), ["user:two", "user:three"]);
}

#[test]
fn a_reset_bounds_cut_points_and_preparation_as_a_compaction_does() {
    let mut b = Builder::new();
    b.user(&"1".repeat(40));
    b.assistant(&"a".repeat(40));
    b.push(json!({"type": "reset", "reason": "new"}));
    b.push(json!({"type": "model_change", "provider": "p", "modelId": "m"}));
    b.user(&"3".repeat(40));
    b.assistant(&"c".repeat(40));
    b.user(&"4".repeat(40));
    b.assistant(&"d".repeat(40));
    // The non-message entries before the cut are taken in up to the reset, not past it.
    let cut = find_cut_point(&b.refs(), 0, 8, 1000);
    assert_eq!(cut.first_kept_entry_index, 0);
    let cut = find_cut_point(&b.refs(), 3, 8, 1000);
    assert_eq!(cut.first_kept_entry_index, 3);
    let settings = CompactionSettings {
        keep_recent_tokens: 20,
        ..Default::default()
    };
    let prep = prepare_compaction(&b.refs(), &settings).unwrap();
    assert_eq!(prep.previous_compaction_index, Some(2));
    // A reset has no summary to carry on.
    assert_eq!(prep.previous_summary, None);
    assert_eq!(prep.cut.first_kept_entry_index, 6);
    // Only what follows the reset is summarized or counted.
    assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
    assert_eq!(prep.tokens_before, 4 * 10);
    // A path ending in a reset has nothing to compact.
    b.push(json!({"type": "reset", "reason": "new"}));
    assert!(prepare_compaction(&b.refs(), &settings).is_none());
}
