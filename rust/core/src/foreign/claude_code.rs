//! Claude Code session files. The CLI is closed source; the shapes follow the parsers and
//! recorded fixtures of daaain/claude-code-log (`claude_code_log/models.py`) and
//! ryoppippi/ccusage (`src/data-loader.ts`), and the real files under
//! `shared/realworld-transcripts` (see the README's "Claude Code and Codex transcripts").
//!
//! The main thread is the `parentUuid` chain from the last main-thread message line back to
//! its root, or to a `compact_boundary` (whose `parentUuid` is null): what the model saw last.
//! Sub-agent lines (`isSidechain`) are not part of it, nor are lines of abandoned branches.

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Value};

use super::detect::Format;
use super::records::{
    default_stop_reason, image_block, image_from_url, set_timestamp, split_records, str_field,
    text_block, tool_call_block, tool_result_message, transcript, u64_field, usage, user_message,
    TimeSpan,
};
use super::ImportedTranscript;

pub(super) fn import(bytes: &[u8]) -> ImportedTranscript {
    let records = split_records(bytes);
    let objects = &records.objects;
    let mut out = ImportedTranscript {
        format: Format::ClaudeCode,
        lines: records.lines,
        damaged_lines: records.damaged,
        torn_last_line: records.torn_last_line,
        ..ImportedTranscript::default()
    };

    // Index the main-thread lines by uuid; count the facts every line contributes.
    let mut by_uuid: FxHashMap<&str, usize> = FxHashMap::default();
    let mut main: Vec<usize> = Vec::new();
    let mut children: FxHashMap<&str, usize> = FxHashMap::default();
    let mut tool_names: FxHashMap<&str, &str> = FxHashMap::default();
    let (mut boundaries, mut summaries) = (0usize, 0usize);
    let mut span = TimeSpan::default();
    for (i, record) in objects.iter().enumerate() {
        let kind = str_field(record, "type").unwrap_or("");
        if record.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            out.dropped_sidechain_lines += 1;
            continue;
        }
        if kind == "assistant" {
            for block in content_blocks(record) {
                if let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) {
                    tool_names.insert(id, name);
                }
            }
        }
        let Some(uuid) = str_field(record, "uuid") else {
            continue;
        };
        by_uuid.insert(uuid, i);
        main.push(i);
        span.see(str_field(record, "timestamp"));
        for (key, slot) in [("sessionId", &mut out.session_id), ("cwd", &mut out.cwd)] {
            if slot.is_none() {
                *slot = str_field(record, key).map(str::to_owned);
            }
        }
        if let Some(version) = str_field(record, "version") {
            out.version = Some(version.to_owned());
        }
        if matches!(kind, "user" | "assistant" | "system") {
            if let Some(parent) = str_field(record, "parentUuid") {
                *children.entry(parent).or_default() += 1;
            }
        }
        if kind == "system" && str_field(record, "subtype") == Some("compact_boundary") {
            boundaries += 1;
        }
        if record.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
            summaries += 1;
        }
    }
    out.compactions = boundaries.max(summaries);
    out.branches = children.values().filter(|&&n| n > 1).count();
    (out.first_timestamp, out.last_timestamp) = span.into_pair();

    let path = with_parallel_calls(objects, &main, main_path(objects, &main, &by_uuid));
    out.off_path_lines = main.len() - path.len();
    let messages = Builder::default().build(objects, &path, &tool_names);
    out.model = messages
        .iter()
        .rev()
        .filter_map(|m| m["model"].as_str())
        .find(|m| *m != "<synthetic>")
        .map(str::to_owned);
    out.messages = transcript(&messages).into();
    out
}

/// Indices of the lines from the root (or the last compaction boundary) to the leaf: the last
/// main-thread `user`/`assistant` line. A `parentUuid` naming no line (a damaged line, or a
/// line of an earlier file of a resumed session) is bridged to the main-thread line before
/// it in the file, so damage loses that line only, not the history before it.
fn main_path(
    objects: &[Map<String, Value>],
    main: &[usize],
    by_uuid: &FxHashMap<&str, usize>,
) -> Vec<usize> {
    let is_message =
        |i: &&usize| matches!(str_field(&objects[**i], "type"), Some("user" | "assistant"));
    let Some(&leaf) = main.iter().rev().find(is_message) else {
        return Vec::new();
    };
    let mut path = Vec::new();
    let mut seen = FxHashSet::default();
    let mut current = leaf;
    while seen.insert(current) {
        path.push(current);
        let next = match objects[current].get("parentUuid") {
            Some(Value::String(parent)) => by_uuid.get(parent.as_str()).copied().or_else(|| {
                let at = main.partition_point(|&j| j < current);
                at.checked_sub(1).map(|k| main[k])
            }),
            _ => None,
        };
        match next {
            Some(next) => current = next,
            None => break,
        }
    }
    path.reverse();
    path
}

/// The path plus the lines of its parallel tool calls. Claude Code chains the lines of one
/// response one after another, but hangs each `tool_result` line off the line of its own
/// `tool_use` and continues the chain from the last result, so the `parentUuid` path holds
/// only one call-and-result of a parallel batch (real 2.1.38 files). Added, in file order:
/// main-thread assistant lines of a `message.id` on the path, then user lines whose tool
/// results answer a call on it and are not answered on it already.
fn with_parallel_calls(
    objects: &[Map<String, Value>],
    main: &[usize],
    path: Vec<usize>,
) -> Vec<usize> {
    let message_id = |i: usize| objects[i].get("message").and_then(|m| m["id"].as_str());
    let is_type = |i: usize, t: &str| str_field(&objects[i], "type") == Some(t);
    let result_ids = |i: usize| -> Vec<&str> {
        if !is_type(i, "user") {
            return Vec::new();
        }
        content_blocks(&objects[i])
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .filter_map(|b| b["tool_use_id"].as_str())
            .collect()
    };
    let mut on_path: FxHashSet<usize> = path.iter().copied().collect();
    let ids: FxHashSet<&str> = path
        .iter()
        .filter(|&&i| is_type(i, "assistant"))
        .filter_map(|&i| message_id(i))
        .collect();
    for &i in main {
        if is_type(i, "assistant") && message_id(i).is_some_and(|id| ids.contains(id)) {
            on_path.insert(i);
        }
    }
    let mut calls: FxHashSet<&str> = FxHashSet::default();
    let mut answered: FxHashSet<&str> = FxHashSet::default();
    for &i in &on_path {
        if is_type(i, "assistant") {
            calls.extend(content_blocks(&objects[i]).iter().filter_map(|b| {
                (b["type"] == "tool_use")
                    .then(|| b["id"].as_str())
                    .flatten()
            }));
        }
        answered.extend(result_ids(i));
    }
    for &i in main {
        if on_path.contains(&i) {
            continue;
        }
        let results = result_ids(i);
        if !results.is_empty()
            && results
                .iter()
                .all(|id| calls.contains(id) && !answered.contains(id))
        {
            answered.extend(results);
            on_path.insert(i);
        }
    }
    let mut lines: Vec<usize> = on_path.into_iter().collect();
    lines.sort_unstable();
    lines
}

fn content_blocks(record: &Map<String, Value>) -> &[Value] {
    record
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Anthropic `stop_reason` → pi `stopReason` (pi-mono 0.58.3 `packages/ai/src/providers/anthropic.ts`).
fn stop_reason(reason: &str) -> &'static str {
    match reason {
        "tool_use" => "toolUse",
        "max_tokens" => "length",
        _ => "stop",
    }
}

#[derive(Default)]
struct Builder {
    messages: Vec<Value>,
    /// Assistant messages by API `message.id`, with whether a line gave a `stop_reason`.
    assistants: FxHashMap<String, usize>,
    explicit_stop: FxHashSet<usize>,
}

impl Builder {
    fn build(
        mut self,
        objects: &[Map<String, Value>],
        path: &[usize],
        tool_names: &FxHashMap<&str, &str>,
    ) -> Vec<Value> {
        for &i in path {
            let record = &objects[i];
            let iso = str_field(record, "timestamp");
            let Some(message) = record.get("message") else {
                continue;
            };
            match str_field(record, "type") {
                Some("user") => self.user(message, iso, tool_names),
                Some("assistant") => self.assistant(record, message, iso),
                _ => {}
            }
        }
        self.messages
    }

    fn user(&mut self, message: &Value, iso: Option<&str>, tool_names: &FxHashMap<&str, &str>) {
        let blocks = match &message["content"] {
            Value::String(text) => {
                self.messages
                    .push(user_message(vec![text_block(text)], iso));
                return;
            }
            Value::Array(blocks) => blocks,
            _ => return,
        };
        // Tool results and prompt blocks in file order; adjacent prompt blocks form one message.
        let mut pending: Vec<Value> = Vec::new();
        for block in blocks {
            if block["type"] == "tool_result" {
                if !pending.is_empty() {
                    self.messages
                        .push(user_message(std::mem::take(&mut pending), iso));
                }
                let id = block["tool_use_id"].as_str().unwrap_or("");
                let name = tool_names.get(id).copied().unwrap_or("unknown");
                let content = match &block["content"] {
                    Value::String(text) => vec![text_block(text)],
                    Value::Array(items) => items.iter().map(result_block).collect(),
                    _ => Vec::new(),
                };
                let is_error = block["is_error"].as_bool().unwrap_or(false);
                self.messages
                    .push(tool_result_message(id, name, content, is_error, iso));
            } else {
                pending.push(result_block(block));
            }
        }
        if !pending.is_empty() {
            self.messages.push(user_message(pending, iso));
        }
    }

    fn assistant(&mut self, record: &Map<String, Value>, message: &Value, iso: Option<&str>) {
        let blocks: Vec<Value> = message["content"]
            .as_array()
            .map(|b| b.iter().filter_map(assistant_block).collect())
            .unwrap_or_default();
        let explicit = message["stop_reason"].as_str().map(stop_reason);
        let usage = message.get("usage").filter(|u| u.is_object()).map(|u| {
            usage(
                u64_field(u, "input_tokens"),
                u64_field(u, "output_tokens"),
                u64_field(u, "cache_read_input_tokens"),
                u64_field(u, "cache_creation_input_tokens"),
            )
        });
        // Lines of one API response share `message.id`; since 2.1.38 the tool results of its
        // earlier calls come between them, so the response continues across tool results.
        let id = message["id"].as_str().filter(|id| !id.is_empty());
        if let Some(&at) = id.and_then(|id| self.assistants.get(id)) {
            if self.messages[at + 1..]
                .iter()
                .all(|m| m["role"] == "toolResult")
            {
                let target = &mut self.messages[at];
                if let Some(content) = target["content"].as_array_mut() {
                    content.extend(blocks);
                }
                if let Some(usage) = usage {
                    target["usage"] = usage;
                }
                if let Some(reason) = explicit {
                    target["stopReason"] = reason.into();
                    self.explicit_stop.insert(at);
                } else if !self.explicit_stop.contains(&at) {
                    let reason = default_stop_reason(
                        target["content"].as_array().map_or(&[], Vec::as_slice),
                    );
                    target["stopReason"] = reason.into();
                }
                return;
            }
        }
        let api_error = record.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
        let mut m = Map::new();
        m.insert("role".into(), "assistant".into());
        let reason = if api_error {
            "error"
        } else {
            explicit.unwrap_or_else(|| default_stop_reason(&blocks))
        };
        if api_error {
            let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            m.insert("errorMessage".into(), text.join("\n").into());
        }
        m.insert("content".into(), Value::Array(blocks));
        m.insert("api".into(), "anthropic-messages".into());
        m.insert("provider".into(), "anthropic".into());
        if let Some(model) = message["model"].as_str() {
            m.insert("model".into(), model.into());
        }
        if let Some(usage) = usage {
            m.insert("usage".into(), usage);
        }
        m.insert("stopReason".into(), reason.into());
        set_timestamp(&mut m, iso);
        let at = self.messages.len();
        if explicit.is_some() || api_error {
            self.explicit_stop.insert(at);
        }
        if let Some(id) = id {
            self.assistants.insert(id.to_owned(), at);
        }
        self.messages.push(Value::Object(m));
    }
}

/// An Anthropic assistant block as a pi block. `redacted_thinking` (opaque, replayable only
/// to Anthropic) and server-side tool blocks (`server_tool_use`, `web_search_tool_result`:
/// no client tool result pairs with them) are not carried over.
fn assistant_block(block: &Value) -> Option<Value> {
    match block["type"].as_str()? {
        "text" => Some(text_block(block["text"].as_str().unwrap_or(""))),
        "thinking" => {
            let mut b = Map::new();
            b.insert("type".into(), "thinking".into());
            b.insert(
                "thinking".into(),
                block["thinking"].as_str().unwrap_or("").into(),
            );
            if let Some(sig) = block["signature"].as_str().filter(|s| !s.is_empty()) {
                b.insert("thinkingSignature".into(), sig.into());
            }
            Some(Value::Object(b))
        }
        "tool_use" => Some(tool_call_block(
            block["id"].as_str().unwrap_or(""),
            block["name"].as_str().unwrap_or(""),
            block["input"].clone(),
        )),
        _ => None,
    }
}

/// A user-side content block (a prompt's or a tool result's) as a pi `text` or `image` block.
/// Other kinds (`document`, 2.1.x `tool_reference`, …) are kept as their JSON text rather than
/// lost.
fn result_block(block: &Value) -> Value {
    match block["type"].as_str() {
        Some("text") => text_block(block["text"].as_str().unwrap_or("")),
        Some("image") => {
            let source = &block["source"];
            match source["type"].as_str() {
                Some("base64") => image_block(
                    source["data"].as_str().unwrap_or(""),
                    source["media_type"].as_str().unwrap_or("image/png"),
                ),
                _ => image_from_url(source["url"].as_str().unwrap_or("")),
            }
        }
        _ => text_block(&crate::base::to_js_string(block)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(v: Value) -> String {
        format!("{v}\n")
    }

    fn messages(text: &str) -> (ImportedTranscript, Vec<Value>) {
        let t = import(text.as_bytes());
        let values = t
            .messages
            .messages()
            .iter()
            .map(|m| m.to_value().unwrap())
            .collect();
        (t, values)
    }

    fn user(uuid: &str, parent: Option<&str>, content: Value) -> String {
        line(
            json!({"parentUuid": parent, "isSidechain": false, "type": "user", "sessionId": "s1",
            "cwd": "/w", "version": "2.1.38", "message": {"role": "user", "content": content},
            "uuid": uuid, "timestamp": "2026-01-01T00:00:00.000Z"}),
        )
    }

    fn assistant(uuid: &str, parent: &str, id: &str, block: Value, stop: Value) -> String {
        line(
            json!({"parentUuid": parent, "isSidechain": false, "type": "assistant",
            "message": {"id": id, "model": "claude-x", "role": "assistant", "content": [block],
                "stop_reason": stop, "usage": {"input_tokens": 5, "output_tokens": 2,
                "cache_read_input_tokens": 10, "cache_creation_input_tokens": 1}},
            "uuid": uuid, "timestamp": "2026-01-01T00:00:01.000Z"}),
        )
    }

    #[test]
    fn split_response_across_tool_results_is_one_assistant_message() {
        let text = [
            user("u1", None, json!("list files")),
            assistant("a1", "u1", "msg_1", json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}), Value::Null),
            user("r1", Some("a1"), json!([{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}])),
            assistant("a2", "r1", "msg_1", json!({"type": "tool_use", "id": "t2", "name": "Read", "input": {"path": "a.txt"}}), json!("tool_use")),
            user("r2", Some("a2"), json!([{"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "boom"}], "is_error": true}])),
        ]
        .concat();
        let (t, m) = messages(&text);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0]["content"], "list files");
        assert_eq!(m[1]["content"].as_array().unwrap().len(), 2);
        assert_eq!(m[1]["stopReason"], "toolUse");
        assert_eq!(m[2]["toolCallId"], "t1");
        assert_eq!(m[2]["toolName"], "Bash");
        assert_eq!(m[3]["toolName"], "Read");
        assert_eq!(m[3]["isError"], true);
        assert_eq!(m[1]["usage"]["cacheRead"], 10);
        assert_eq!(t.model.as_deref(), Some("claude-x"));
        assert_eq!(t.session_id.as_deref(), Some("s1"));
    }

    #[test]
    fn parallel_calls_hanging_off_their_own_lines_are_kept() {
        // The 2.1.38 shape: results hang off their tool_use line, the chain goes on from the
        // last result, so the parentUuid path alone misses call t2 and its result.
        let text = [
            user("u1", None, json!("go")),
            assistant(
                "a1",
                "u1",
                "m1",
                json!({"type": "tool_use", "id": "t1", "name": "A", "input": {}}),
                Value::Null,
            ),
            assistant(
                "a2",
                "a1",
                "m1",
                json!({"type": "tool_use", "id": "t2", "name": "B", "input": {}}),
                json!("tool_use"),
            ),
            user(
                "r2",
                Some("a2"),
                json!([{"type": "tool_result", "tool_use_id": "t2", "content": "two"}]),
            ),
            user(
                "r1",
                Some("a1"),
                json!([{"type": "tool_result", "tool_use_id": "t1", "content": "one"}]),
            ),
            assistant(
                "a3",
                "r1",
                "m2",
                json!({"type": "text", "text": "done"}),
                json!("end_turn"),
            ),
        ]
        .concat();
        let (t, m) = messages(&text);
        let roles: Vec<&str> = m.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(
            roles,
            ["user", "assistant", "toolResult", "toolResult", "assistant"]
        );
        assert_eq!(m[1]["content"].as_array().unwrap().len(), 2);
        assert_eq!(
            (m[2]["toolCallId"].as_str(), m[3]["toolCallId"].as_str()),
            (Some("t2"), Some("t1"))
        );
        assert_eq!(t.off_path_lines, 0);
        assert_eq!(t.branches, 1);
    }

    #[test]
    fn sidechains_branches_and_compaction_boundaries() {
        let side = line(
            json!({"parentUuid": null, "isSidechain": true, "type": "user",
            "message": {"role": "user", "content": "sub task"}, "uuid": "s1"}),
        );
        let boundary = line(
            json!({"parentUuid": null, "logicalParentUuid": "a1", "isSidechain": false,
            "type": "system", "subtype": "compact_boundary", "uuid": "b1"}),
        );
        let summary = line(
            json!({"parentUuid": "b1", "isSidechain": false, "type": "user",
            "isCompactSummary": true, "isVisibleInTranscriptOnly": true,
            "message": {"role": "user", "content": "This session is being continued…"}, "uuid": "c1"}),
        );
        let text = [
            user("u1", None, json!("first")),
            assistant(
                "a0",
                "u1",
                "m0",
                json!({"type": "text", "text": "abandoned"}),
                json!("end_turn"),
            ),
            assistant(
                "a1",
                "u1",
                "m1",
                json!({"type": "text", "text": "kept"}),
                json!("end_turn"),
            ),
            side,
            boundary,
            summary,
            user("u2", Some("c1"), json!("next")),
            "{\"parentUuid\":\"u2\",\"type\":\"assis".to_owned(),
        ]
        .concat();
        let (t, m) = messages(&text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["content"], "This session is being continued…");
        assert_eq!(m[1]["content"], "next");
        assert_eq!(t.dropped_sidechain_lines, 1);
        assert_eq!(t.compactions, 1);
        assert_eq!(t.branches, 1);
        assert!(t.torn_last_line);
        assert_eq!(t.damaged_lines, 1);
        assert_eq!(t.off_path_lines, 3);
    }

    #[test]
    fn a_damaged_middle_line_is_bridged() {
        let text = [
            user("u1", None, json!("one")),
            "{garbage\n".to_owned(),
            user("u3", Some("lost"), json!([{"type": "text", "text": "three"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}}])),
        ]
        .concat();
        let (t, m) = messages(&text);
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[1]["content"][1],
            json!({"type": "image", "data": "QUJD", "mimeType": "image/jpeg"})
        );
        assert_eq!((t.damaged_lines, t.torn_last_line), (1, false));
    }

    #[test]
    fn message_less_files_import_empty() {
        for text in [
            "",
            "{\"type\":\"summary\",\"summary\":\"T\",\"leafUuid\":\"x\"}\n",
        ] {
            let (t, m) = messages(text);
            assert!(m.is_empty());
            assert_eq!(t.format, Format::ClaudeCode);
        }
    }
}
