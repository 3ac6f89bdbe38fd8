//! Mistral replies, read as pi-ai 0.58.3 reads them: pi-mono
//! `packages/ai/src/providers/mistral.ts` (`streamMistral`, `consumeChatStream` over
//! `@mistralai/mistralai`'s `chat.stream` events, `mapChatStopReason`). The SDK hands pi-ai
//! each `data:` chunk camel-cased (`finishReason`, `toolCalls`, `promptTokens`, ...); the wire
//! sends snake case, and both spellings are read. Text and thinking pass through
//! `sanitizeSurrogates` (lone surrogates dropped); a call without an id (or the id `"null"`)
//! gets `deriveMistralToolCallId("toolcall:<index>")`; calls are keyed by id and index, their
//! arguments parsed from the partial JSON and ended after the text, in the order they began.

use serde_json::{Map, Value};

use super::{
    count, event_json, parse_streaming_json, reply_accessors, ApiReader, PiEvents, Stop, Usage,
};
use crate::base::{is_truthy, to_js_string};
use crate::payload::{derive_mistral_tool_call_id, strip_lone_surrogate_escapes};

pub(super) fn new_reader(model: &Value, _options: &Value) -> Box<dyn ApiReader> {
    Box::new(MistralReader {
        model: model.clone(),
        blocks: Vec::new(),
        open: None,
        calls: Vec::new(),
        usage: Usage::zero(),
        stop_reason: "stop",
        chunks: 0,
        finished: false,
    })
}

/// A non-streaming chat completion (`{choices: [{message, finish_reason}], usage}`) as the one
/// chunk whose delta is the message.
pub(super) fn body_events(
    body: &Value,
) -> Result<Vec<(Option<String>, String)>, super::ResponseError> {
    let mut chunk = body.clone();
    if let Some(Value::Array(choices)) = chunk.get_mut("choices") {
        for choice in choices.iter_mut().filter_map(Value::as_object_mut) {
            let mut delta = choice.remove("message").unwrap_or(Value::Null);
            let key = if delta.get("tool_calls").is_some() {
                "tool_calls"
            } else {
                "toolCalls"
            };
            if let Some(Value::Array(calls)) = delta.get_mut(key) {
                for (index, call) in calls.iter_mut().enumerate() {
                    if let Some(call) = call.as_object_mut() {
                        call.entry("index").or_insert_with(|| Value::from(index));
                    }
                }
            }
            choice.insert("delta".into(), delta);
        }
    }
    Ok(vec![(None, to_js_string(&chunk))])
}

/// The open text or thinking block (`currentBlock`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
}

struct MistralReader {
    model: Value,
    blocks: Vec<Map<String, Value>>,
    open: Option<Open>,
    /// `toolBlocksByKey`: each call's `<id>:<index>` key and its block, in insertion order.
    calls: Vec<(String, usize)>,
    usage: Usage,
    stop_reason: &'static str,
    chunks: usize,
    /// A chunk carried a finish reason: the stream ended where Mistral ends it.
    finished: bool,
}

/// A field in the SDK's camel case or the wire's snake case.
fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

/// `mapChatStopReason`: anything unknown is `stop`.
fn map_stop_reason(reason: &Value) -> &'static str {
    match reason.as_str() {
        Some("length" | "model_length") => "length",
        Some("tool_calls") => "toolUse",
        Some("error") => "error",
        _ => "stop",
    }
}

impl MistralReader {
    fn index(&self) -> usize {
        self.blocks.len().saturating_sub(1)
    }

    /// `finishCurrentBlock`.
    fn finish_open(&mut self, out: &mut PiEvents) {
        let at = self.index();
        match self.open.take() {
            Some(Open::Text) => out.push("text_end", Some(at)),
            Some(Open::Thinking) => out.push("thinking_end", Some(at)),
            None => {}
        }
    }

    /// Appends `delta` to the open block of `kind`, opening one first when needed.
    fn append(&mut self, kind: Open, delta: &str, out: &mut PiEvents) {
        if self.open != Some(kind) {
            self.finish_open(out);
            let (name, key, start) = match kind {
                Open::Text => ("text", "text", "text_start"),
                Open::Thinking => ("thinking", "thinking", "thinking_start"),
            };
            let mut block = Map::new();
            block.insert("type".into(), Value::from(name));
            block.insert(key.into(), Value::from(""));
            self.blocks.push(block);
            self.open = Some(kind);
            out.push(start, Some(self.index()));
        }
        let at = self.index();
        let (key, event) = match kind {
            Open::Text => ("text", "text_delta"),
            Open::Thinking => ("thinking", "thinking_delta"),
        };
        if let Some(Value::String(s)) = self.blocks[at].get_mut(key) {
            s.push_str(delta);
        }
        out.delta(event, at, delta);
    }

    /// One chunk: the body of `for await (const event of mistralStream)`.
    fn chunk(&mut self, chunk: &Value, out: &mut PiEvents) -> Result<(), String> {
        self.chunks += 1;
        if let Some(usage) = chunk.get("usage").filter(|u| is_truthy(u)) {
            let mut next = Usage::zero();
            next.input = count(field(usage, "promptTokens", "prompt_tokens"));
            next.output = count(field(usage, "completionTokens", "completion_tokens"));
            let total = count(field(usage, "totalTokens", "total_tokens"));
            next.total = if total != 0.0 {
                total
            } else {
                next.input + next.output
            };
            next.calculate_cost(&self.model);
            self.usage = next;
        }
        let Some(choices) = chunk.get("choices").filter(|c| !c.is_null()) else {
            return Err("Cannot read properties of undefined (reading '0')".to_owned());
        };
        let Some(choice) = choices.get(0).filter(|c| !c.is_null()) else {
            return Ok(()); // `if (!choice) continue`
        };
        if let Some(reason) =
            field(choice, "finishReason", "finish_reason").filter(|r| is_truthy(r))
        {
            self.stop_reason = map_stop_reason(reason);
            self.finished = true;
        }
        let Some(delta) = choice.get("delta").filter(|d| !d.is_null()) else {
            return Err("Cannot read properties of undefined (reading 'content')".to_owned());
        };
        match delta.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => self.append(Open::Text, text, out),
            Some(Value::Array(items)) => {
                for item in items {
                    self.content_item(item, out);
                }
            }
            Some(_) => return Err("contentItems is not iterable".to_owned()),
        }
        if let Some(Value::Array(calls)) = field(delta, "toolCalls", "tool_calls") {
            for call in calls {
                self.tool_call(call, out);
            }
        }
        Ok(())
    }

    fn content_item(&mut self, item: &Value, out: &mut PiEvents) {
        match item {
            Value::String(text) => self.append(Open::Text, text, out),
            Value::Object(fields) => match fields.get("type").and_then(Value::as_str) {
                Some("thinking") => {
                    let parts = fields.get("thinking").and_then(Value::as_array);
                    let text: String = parts
                        .into_iter()
                        .flatten()
                        .filter_map(|part| part.get("text").and_then(Value::as_str))
                        .collect();
                    if !text.is_empty() {
                        self.append(Open::Thinking, &text, out);
                    }
                }
                Some("text") => {
                    let text = fields.get("text").and_then(Value::as_str).unwrap_or("");
                    self.append(Open::Text, text, out);
                }
                _ => {}
            },
            _ => {}
        }
    }

    fn tool_call(&mut self, call: &Value, out: &mut PiEvents) {
        self.finish_open(out);
        let index = call.get("index");
        let id = match call.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() && id != "null" => id.to_owned(),
            // `toolCall.index ?? 0`
            _ => derive_mistral_tool_call_id(
                &format!(
                    "toolcall:{}",
                    index
                        .filter(|i| !i.is_null())
                        .map_or_else(|| "0".to_owned(), to_js_string)
                ),
                0,
            ),
        };
        // `${callId}:${toolCall.index || 0}`
        let key_index = index
            .filter(|i| is_truthy(i))
            .map_or_else(|| "0".to_owned(), to_js_string);
        let key = format!("{id}:{key_index}");
        let at = match self.calls.iter().find(|(k, _)| *k == key) {
            Some((_, at)) => *at,
            None => {
                let name = call.pointer("/function/name").cloned();
                let block = crate::base::object([
                    ("type", Some(Value::from("toolCall"))),
                    ("id", Some(Value::from(id))),
                    ("name", name),
                    ("arguments", Some(Value::Object(Map::new()))),
                    ("partialArgs", Some(Value::from(""))),
                ]);
                let Value::Object(block) = block else {
                    unreachable!("object() builds an object")
                };
                self.blocks.push(block);
                let at = self.blocks.len() - 1;
                self.calls.push((key, at));
                out.push("toolcall_start", Some(at));
                at
            }
        };
        let delta = match call.pointer("/function/arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(args) if is_truthy(args) => to_js_string(args),
            _ => "{}".to_owned(),
        };
        let block = &mut self.blocks[at];
        let mut partial = match block.get("partialArgs") {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        partial.push_str(&delta);
        block.insert("arguments".into(), parse_streaming_json(&partial));
        block.insert("partialArgs".into(), Value::from(partial));
        out.delta("toolcall_delta", at, &delta);
    }
}

impl ApiReader for MistralReader {
    fn event(&mut self, _name: Option<&str>, data: &str, out: &mut PiEvents) -> Result<(), Stop> {
        // `sanitizeSurrogates` on every text: lone surrogate escapes are dropped before
        // parsing (a Rust string cannot hold them).
        let chunk = match strip_lone_surrogate_escapes(data) {
            Some(clean) => event_json(&clean)?,
            None => event_json(data)?,
        };
        self.chunk(&chunk, out).map_err(Stop::Thrown)
    }

    fn end(&mut self, out: &mut PiEvents) -> Result<(), Stop> {
        self.finish_open(out);
        for (_, at) in std::mem::take(&mut self.calls) {
            let block = &mut self.blocks[at];
            let partial = match block.shift_remove("partialArgs") {
                Some(Value::String(s)) => s,
                _ => String::new(),
            };
            block.insert("arguments".into(), parse_streaming_json(&partial));
            out.push("toolcall_end", Some(at));
        }
        Ok(())
    }

    reply_accessors!();

    fn cut_short(&self) -> Option<String> {
        (self.chunks > 0 && !self.finished).then(|| {
            "The reply ended before a chunk with a finish_reason: the stream was cut".to_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    fn model() -> Value {
        json!({"api": "mistral-conversations", "provider": "mistral", "id": "devstral",
               "cost": {"input": 0.4, "output": 2.0, "cacheRead": 0.0, "cacheWrite": 0.0}})
    }

    fn read(events: &[Value], exact: bool) -> super::super::ParsedResponse {
        let text = Value::Array(events.to_vec()).to_string();
        super::super::parse_response_with(&model(), &Value::Null, &text, 0.0, exact).unwrap()
    }

    #[test]
    fn a_body_reads_as_its_stream() {
        let body = json!({"object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "Reading.", "tool_calls": [
                {"id": "abc123XYZ", "type": "function",
                 "function": {"name": "read", "arguments": "{\"p\": 1}"}}]},
            "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
        let stream = [
            json!({"choices": [{"index": 0, "delta": {"content": "Reading."}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "abc123XYZ",
                   "index": 0, "function": {"name": "read", "arguments": "{\"p\": 1}"}}]},
                   "finish_reason": "tool_calls"}],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
        ];
        let from_body =
            super::super::parse_response(&model(), &body.to_string(), 0.0).expect("reads");
        assert_eq!(from_body.message, read(&stream, false).message);
        assert_eq!(
            from_body.message["content"][1],
            json!({"type": "toolCall", "id": "abc123XYZ", "name": "read", "arguments": {"p": 1}})
        );
        assert_eq!(from_body.message["stopReason"], "toolUse");
    }

    #[test]
    fn calls_without_an_id_get_the_derived_one_and_args_accumulate_by_key() {
        let chunk = |args: &str| {
            json!({"choices": [{"index": 0, "delta": {"toolCalls": [{"id": "null", "index": 0,
                   "function": {"name": "edit", "arguments": args}}]}}]})
        };
        let mut events = vec![chunk("{\"a\": "), chunk("1}")];
        events.push(json!({"choices": [{"index": 0, "delta": {}, "finishReason": "tool_calls"}]}));
        let parsed = read(&events, false);
        assert_eq!(
            parsed.message["content"],
            json!([{"type": "toolCall", "id": "toolcall0", "name": "edit", "arguments": {"a": 1}}])
        );
    }

    #[test]
    fn a_stream_without_a_finish_reason_is_cut_unless_exact() {
        let events = [json!({"choices": [{"index": 0, "delta": {"content": "Half"}}]})];
        assert_eq!(read(&events, false).message["stopReason"], "error");
        assert_eq!(read(&events, true).message["stopReason"], "stop");
    }

    #[test]
    fn thinking_parts_join_and_lone_surrogates_are_dropped() {
        let events = [json!({"choices": [{"index": 0, "delta": {"content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "a"}, {"text": "b"}]},
            {"type": "text", "text": "x"}]}, "finish_reason": "stop"}]})];
        let parsed = read(&events, false);
        assert_eq!(
            parsed.message["content"],
            json!([{"type": "thinking", "thinking": "ab"}, {"type": "text", "text": "x"}])
        );
        let text = r#"[{"choices": [{"index": 0, "delta": {"content": "a\ud800b"},
                      "finish_reason": "stop"}]}]"#;
        let parsed = super::super::parse_response(&model(), text, 0.0).unwrap();
        assert_eq!(parsed.message["content"][0]["text"], "ab");
    }
}
