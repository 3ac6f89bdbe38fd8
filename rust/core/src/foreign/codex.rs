//! OpenAI Codex CLI rollouts: `RolloutLine { timestamp, type, payload }` with the
//! `RolloutItem` variants `session_meta`, `response_item`, `compacted`, `turn_context` and
//! `event_msg` (openai/codex `codex-rs/protocol/src/protocol.rs`; the `ResponseItem` variants
//! in `codex-rs/protocol/src/models.rs`).
//!
//! Codex rebuilds a resumed thread from its `response_item`s, a `compacted` line replacing
//! what came before it (`reconstruct_history_from_rollout`); the import does the same, so the
//! transcript is what the model saw last. Consecutive assistant-side items (reasoning,
//! assistant text, tool calls) are one model response and become one assistant message.

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::detect::Format;
use super::records::{
    default_stop_reason, image_from_url, set_timestamp, split_records, str_field, text_block,
    tool_call_block, tool_result_message, transcript, u64_field, usage, user_message, TimeSpan,
};
use super::ImportedTranscript;

pub(super) fn import(bytes: &[u8]) -> ImportedTranscript {
    let records = split_records(bytes);
    let mut out = ImportedTranscript {
        format: Format::Codex,
        lines: records.lines,
        damaged_lines: records.damaged,
        torn_last_line: records.torn_last_line,
        ..ImportedTranscript::default()
    };
    // Files that kept only some line kinds may hold the prompts only as `event_msg`
    // `user_message` lines (the UI copy of each prompt); those are used only then.
    let prompts_from_events = !records.objects.iter().any(|r| {
        // `get`, not `r["payload"]`: indexing a map panics on a line without the key.
        let payload = r.get("payload").unwrap_or(&Value::Null);
        r.get("type").and_then(Value::as_str) == Some("response_item")
            && payload["type"] == "message"
            && payload["role"] == "user"
    });
    let mut thread = Thread {
        provider: "openai".to_owned(),
        ..Thread::default()
    };
    let mut span = TimeSpan::default();
    for record in &records.objects {
        let iso = str_field(record, "timestamp");
        span.see(iso);
        let payload = &record.get("payload").cloned().unwrap_or(Value::Null);
        match str_field(record, "type").unwrap_or("") {
            "session_meta" => {
                let field = |k: &str| payload[k].as_str().map(str::to_owned);
                out.session_id = out.session_id.take().or_else(|| field("id"));
                out.cwd = out.cwd.take().or_else(|| field("cwd"));
                out.version = field("cli_version").or(out.version.take());
                if let Some(provider) = payload["model_provider"].as_str() {
                    thread.provider = provider.to_owned();
                }
            }
            "turn_context" => {
                if let Some(model) = payload["model"].as_str() {
                    thread.model = Some(model.to_owned());
                }
                if out.cwd.is_none() {
                    out.cwd = payload["cwd"].as_str().map(str::to_owned);
                }
            }
            "response_item" => thread.item(payload, iso),
            "compacted" => {
                out.compactions += 1;
                thread.compacted(payload, iso);
            }
            "event_msg" => match payload["type"].as_str() {
                Some("user_message") if prompts_from_events => {
                    thread.open = None;
                    let text = payload["message"].as_str().unwrap_or("");
                    thread
                        .messages
                        .push(user_message(vec![text_block(text)], iso));
                }
                Some("token_count") => thread.usage(&payload["info"]["last_token_usage"]),
                _ => {}
            },
            _ => {}
        }
    }
    (out.first_timestamp, out.last_timestamp) = span.into_pair();
    out.model = thread.model.clone();
    out.messages = transcript(&thread.messages).into();
    out
}

#[derive(Default)]
struct Thread {
    messages: Vec<Value>,
    /// The assistant message the current model response is written into.
    open: Option<usize>,
    call_names: FxHashMap<String, String>,
    model: Option<String>,
    provider: String,
    /// The assistant message the next `token_count` event's usage belongs to.
    awaiting_usage: Option<usize>,
}

impl Thread {
    fn item(&mut self, item: &Value, iso: Option<&str>) {
        match item["type"].as_str().unwrap_or("") {
            "message" => {
                let blocks = message_blocks(&item["content"]);
                match item["role"].as_str() {
                    Some("assistant") => self.push_blocks(blocks, iso),
                    Some("user") => {
                        self.open = None;
                        self.messages.push(user_message(blocks, iso));
                    }
                    // `developer`/`system` messages are harness instructions (the system
                    // prompt's role in pi), not conversation.
                    _ => self.open = None,
                }
            }
            "reasoning" => {
                let mut parts = texts(&item["summary"]);
                if parts.is_empty() {
                    parts = texts(&item["content"]);
                }
                // Encrypted-only reasoning is opaque to everyone but the provider: dropped.
                if !parts.is_empty() {
                    let thinking =
                        serde_json::json!({"type": "thinking", "thinking": parts.join("\n\n")});
                    self.push_blocks(vec![thinking], iso);
                }
            }
            "function_call" => {
                let (id, name) = self.call(item, "name");
                let block = tool_call_block(&id, &name, item["arguments"].clone());
                self.push_blocks(vec![block], iso);
            }
            "custom_tool_call" => {
                let (id, name) = self.call(item, "name");
                let arguments = serde_json::json!({"input": item["input"].as_str().unwrap_or("")});
                self.push_blocks(vec![tool_call_block(&id, &name, arguments)], iso);
            }
            "local_shell_call" => {
                let id = item["call_id"]
                    .as_str()
                    .or(item["id"].as_str())
                    .unwrap_or("")
                    .to_owned();
                self.call_names.insert(id.clone(), "local_shell".to_owned());
                let mut arguments = item["action"].as_object().cloned().unwrap_or_default();
                arguments.remove("type");
                let block = tool_call_block(&id, "local_shell", Value::Object(arguments));
                self.push_blocks(vec![block], iso);
            }
            "function_call_output" | "custom_tool_call_output" => {
                self.open = None;
                let id = item["call_id"].as_str().unwrap_or("");
                let name = self.call_names.get(id).map_or("unknown", String::as_str);
                let (content, is_error) = output(&item["output"]);
                self.messages
                    .push(tool_result_message(id, name, content, is_error, iso));
            }
            // `web_search_call` runs on the provider's side and has no result item;
            // `ghost_snapshot` (undo points), remote `compaction` (encrypted) and other items
            // are not conversation.
            _ => {}
        }
    }

    /// The call's id and tool name, remembered for its output.
    fn call(&mut self, item: &Value, key: &str) -> (String, String) {
        let id = item["call_id"].as_str().unwrap_or("").to_owned();
        let name = item[key].as_str().unwrap_or("").to_owned();
        self.call_names.insert(id.clone(), name.clone());
        (id, name)
    }

    fn push_blocks(&mut self, blocks: Vec<Value>, iso: Option<&str>) {
        let at = match self.open {
            Some(at) => at,
            None => {
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                m.insert("content".into(), Value::Array(Vec::new()));
                m.insert("api".into(), "openai-responses".into());
                m.insert("provider".into(), self.provider.clone().into());
                if let Some(model) = &self.model {
                    m.insert("model".into(), model.clone().into());
                }
                m.insert("stopReason".into(), "stop".into());
                set_timestamp(&mut m, iso);
                self.messages.push(Value::Object(m));
                self.open = Some(self.messages.len() - 1);
                self.awaiting_usage = self.open;
                self.messages.len() - 1
            }
        };
        let message = &mut self.messages[at];
        if let Some(content) = message["content"].as_array_mut() {
            content.extend(blocks);
        }
        let reason = default_stop_reason(message["content"].as_array().map_or(&[], Vec::as_slice));
        message["stopReason"] = reason.into();
    }

    /// A `token_count` event's `last_token_usage`: the usage of the response just finished.
    fn usage(&mut self, last: &Value) {
        let Some(at) = self.awaiting_usage.take() else {
            return;
        };
        if !last.is_object() {
            return;
        }
        let cached = u64_field(last, "cached_input_tokens");
        let input = u64_field(last, "input_tokens").saturating_sub(cached);
        self.messages[at]["usage"] = usage(input, u64_field(last, "output_tokens"), cached, 0);
    }

    /// A `compacted` line: the history is replaced by its `replacement_history` when given,
    /// else by the summary (older files; the summary as a user message).
    fn compacted(&mut self, payload: &Value, iso: Option<&str>) {
        self.messages.clear();
        self.open = None;
        self.awaiting_usage = None;
        match payload["replacement_history"].as_array() {
            Some(items) => {
                for item in items {
                    self.item(item, iso);
                }
            }
            None => {
                let summary = payload["message"].as_str().unwrap_or("");
                self.messages
                    .push(user_message(vec![text_block(summary)], iso));
            }
        }
        self.open = None;
    }
}

/// The texts of `summary_text`/`reasoning_text` parts, empty ones left out.
fn texts(parts: &Value) -> Vec<&str> {
    parts
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|p| p["text"].as_str())
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// `ContentItem`s (`input_text`, `output_text`, `input_image`) as pi blocks.
fn message_blocks(content: &Value) -> Vec<Value> {
    match content {
        Value::String(text) => vec![text_block(text)],
        Value::Array(items) => items
            .iter()
            .map(|item| match item["type"].as_str() {
                Some("input_image") => image_from_url(item["image_url"].as_str().unwrap_or("")),
                _ => text_block(item["text"].as_str().unwrap_or("")),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A tool output as pi content, and whether it reports a failure. Codex does not record a
/// tool's success; a non-zero exit code in the shell tools' output texts (legacy
/// `{"output","metadata":{"exit_code"}}`, `Exit code: N`, unified exec's
/// `Process exited with code N`) marks the result as an error.
fn output(output: &Value) -> (Vec<Value>, bool) {
    match output {
        Value::String(text) => (vec![text_block(text)], failed_exit(text)),
        Value::Array(_) => (message_blocks(output), false),
        Value::Object(object) => {
            let (content, failed) = match object.get("content") {
                Some(inner) => self::output(inner),
                None => (vec![text_block(&crate::base::to_js_string(output))], false),
            };
            let unsuccessful = object.get("success").and_then(Value::as_bool) == Some(false);
            (content, failed || unsuccessful)
        }
        Value::Null => (Vec::new(), false),
        other => (vec![text_block(&crate::base::to_js_string(other))], false),
    }
}

fn failed_exit(text: &str) -> bool {
    let nonzero = |digits: &str| {
        let n: String = digits
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        n.parse::<i64>().is_ok_and(|code| code != 0)
    };
    if text.starts_with('{') {
        if let Ok(Value::Object(object)) = crate::base::parse_value(text) {
            if let Some(code) = object.get("metadata").and_then(|m| m.get("exit_code")) {
                return code.as_i64().is_some_and(|c| c != 0);
            }
        }
    }
    if let Some(rest) = text.strip_prefix("Exit code: ") {
        return nonzero(rest);
    }
    text.lines()
        .take(8)
        .find_map(|l| l.strip_prefix("Process exited with code "))
        .is_some_and(nonzero)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_response_item_without_a_payload_is_skipped_not_a_panic() {
        // Found by feeding mutated rollouts through the bindings: the key was indexed.
        let bytes = b"{\"type\":\"session_meta\",\"payload\":{}}\n{\"type\":\"response_item\",\"payloaX\":{}}\n";
        let imported = import(bytes);
        assert_eq!(imported.messages.len(), 0);
        assert_eq!(imported.lines, 2);
    }

    use super::*;
    use serde_json::json;

    fn rollout(lines: &[Value]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    fn item(payload: Value) -> Value {
        json!({"timestamp": "2025-10-14T09:12:33.123Z", "type": "response_item", "payload": payload})
    }

    fn values(t: &ImportedTranscript) -> Vec<Value> {
        t.messages
            .messages()
            .iter()
            .map(|m| m.to_value().unwrap())
            .collect()
    }

    #[test]
    fn one_response_becomes_one_assistant_message() {
        let text = rollout(&[
            json!({"timestamp": "2025-10-14T09:12:33.000Z", "type": "session_meta",
                "payload": {"id": "th", "cwd": "/w", "cli_version": "0.58.0", "model_provider": "openai"}}),
            json!({"timestamp": "2025-10-14T09:12:33.000Z", "type": "turn_context", "payload": {"model": "gpt-5"}}),
            item(
                json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}),
            ),
            item(
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}),
            ),
            item(
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}], "content": null, "encrypted_content": "xx"}),
            ),
            json!({"timestamp": "t", "type": "event_msg", "payload": {"type": "agent_reasoning", "text": "plan"}}),
            item(
                json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"}),
            ),
            item(
                json!({"type": "custom_tool_call", "status": "completed", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch"}),
            ),
            item(
                json!({"type": "function_call_output", "call_id": "c1", "output": "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nno"}),
            ),
            item(json!({"type": "custom_tool_call_output", "call_id": "c2", "output": "Success"})),
            json!({"timestamp": "t", "type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 7}}}}),
            item(
                json!({"type": "reasoning", "summary": [], "content": null, "encrypted_content": "xx"}),
            ),
            item(
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
            ),
        ]);
        let t = import(text.as_bytes());
        let m = values(&t);
        assert_eq!(m.len(), 5, "{m:#?}");
        assert_eq!(
            m[0],
            json!({"role": "user", "content": "fix it", "timestamp": 1760433153123_i64})
        );
        assert_eq!(
            m[1]["content"][0],
            json!({"type": "thinking", "thinking": "plan"})
        );
        assert_eq!(m[1]["content"][1]["arguments"], json!({"command": ["ls"]}));
        assert_eq!(
            m[1]["content"][2]["arguments"],
            json!({"input": "*** Begin Patch"})
        );
        assert_eq!(m[1]["stopReason"], "toolUse");
        assert_eq!(m[1]["model"], "gpt-5");
        assert_eq!(m[2]["isError"], true);
        assert_eq!(m[3]["toolName"], "apply_patch");
        assert_eq!(m[3]["isError"], false);
        assert_eq!(m[4]["content"], json!([{"type": "text", "text": "done"}]));
        assert_eq!(m[4]["stopReason"], "stop");
        assert_eq!(m[1]["usage"]["input"], 40);
        assert_eq!(m[1]["usage"]["cacheRead"], 60);
        assert_eq!(t.session_id.as_deref(), Some("th"));
        assert_eq!(t.version.as_deref(), Some("0.58.0"));
    }

    #[test]
    fn compacted_replaces_history() {
        let text = rollout(&[
            item(
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "old"}]}),
            ),
            json!({"timestamp": "t", "type": "compacted", "payload": {"message": "summary text"}}),
            item(
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "new"}]}),
            ),
        ]);
        let t = import(text.as_bytes());
        let m = values(&t);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["content"], "summary text");
        assert_eq!(t.compactions, 1);
        let text = rollout(&[
            item(
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "old"}]}),
            ),
            json!({"timestamp": "t", "type": "compacted", "payload": {"message": "s", "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "kept"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}]}}),
        ]);
        let m = values(&import(text.as_bytes()));
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["content"], "kept");
        assert_eq!(m[1]["role"], "assistant");
    }

    #[test]
    fn exit_codes_and_images_in_outputs() {
        assert!(failed_exit(
            r#"{"output":"x","metadata":{"exit_code":1,"duration_seconds":0.1}}"#
        ));
        assert!(!failed_exit(r#"{"output":"x","metadata":{"exit_code":0}}"#));
        assert!(failed_exit(
            "Chunk ID: a\nWall time: 1\nProcess exited with code 127\nOutput:\n"
        ));
        assert!(!failed_exit("Exit code: 0\nOutput:\n"));
        assert!(!failed_exit("plain text"));
        let (content, err) = output(&json!([{"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]));
        assert!(!err);
        assert_eq!(
            content[1],
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"})
        );
    }

    #[test]
    fn prompts_only_in_events_are_used() {
        let text = rollout(&[
            json!({"timestamp": "t", "type": "event_msg", "payload": {"type": "user_message", "message": "hi"}}),
            item(
                json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "yo"}]}),
            ),
        ]);
        let m = values(&import(text.as_bytes()));
        assert_eq!(m[0]["content"], "hi");
        assert_eq!(m.len(), 2);
    }
}
