//! OpenAI Chat Completions replies, read as pi-ai 0.58.3 reads them: pi-mono
//! `packages/ai/src/providers/openai-completions.ts` (`streamOpenAICompletions`: the loop over
//! the SDK's chunks, `finishCurrentBlock`, `parseChunkUsage`, `mapStopReason`) behind the
//! `openai` SDK 6.26's `Stream` (`data: [DONE]` ends it, an event named `thread.*` is skipped,
//! a chunk with a truthy `error` is thrown as an `APIError` whose message is `error.message`).

use serde_json::{Map, Value};

use super::{
    count, event_json, parse_streaming_json, ApiReader, PiEvents, ResponseError, Stop, Usage,
};
use crate::base::to_js_string;

pub(super) fn new_reader(model: &Value, _options: &Value) -> Box<dyn ApiReader> {
    Box::new(ChatReader {
        model: model.clone(),
        blocks: Vec::new(),
        open: None,
        usage: Usage::zero(),
        stop_reason: "stop",
        chunks: 0,
        finished: false,
    })
}

/// What the open block is (pi-ai's `currentBlock`: always the last of the content).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
    /// A tool call and whether its `arguments` lag behind `partialArgs`.
    ToolCall {
        stale: bool,
    },
}

struct ChatReader {
    model: Value,
    blocks: Vec<Map<String, Value>>,
    open: Option<Open>,
    usage: Usage,
    stop_reason: &'static str,
    chunks: usize,
    /// A chunk carried a `finish_reason`: the stream ended where the provider ends it.
    finished: bool,
}

/// pi-ai's `mapStopReason` for Chat Completions; `Err` is the error it throws.
fn map_stop_reason(reason: &str) -> Result<&'static str, String> {
    Ok(match reason {
        "stop" | "end" => "stop",
        "length" => "length",
        "function_call" | "tool_calls" => "toolUse",
        "content_filter" => "error",
        other => return Err(format!("Unhandled stop reason: {other}")),
    })
}

/// JavaScript truthiness of an optional JSON value.
fn truthy(v: Option<&Value>) -> bool {
    v.is_some_and(crate::base::is_truthy)
}

/// A string field with text (`x !== null && x !== undefined && x.length > 0`).
fn text_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The SDK's `APIError` message for a chunk's `error` (`makeMessage` without a status).
fn api_error_message(error: &Value) -> String {
    let mut text = match error.get("message") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(m) if crate::base::is_truthy(m) => to_js_string(m),
        _ => to_js_string(error),
    };
    // pi-ai adds what OpenRouter passes on from the upstream provider.
    match error.pointer("/metadata/raw") {
        Some(Value::String(raw)) if !raw.is_empty() => {
            text.push('\n');
            text.push_str(raw);
        }
        Some(raw @ Value::Number(_)) => {
            text.push('\n');
            text.push_str(&to_js_string(raw));
        }
        Some(raw @ (Value::Object(_) | Value::Array(_))) if crate::base::is_truthy(raw) => {
            text.push('\n');
            text.push_str(if raw.is_object() {
                "[object Object]"
            } else {
                ""
            });
        }
        _ => {}
    }
    text
}

impl ApiReader for ChatReader {
    fn event(&mut self, name: Option<&str>, data: &str, out: &mut PiEvents) -> Result<(), Stop> {
        if name.is_some_and(|n| n.starts_with("thread.")) {
            return Ok(()); // the SDK's Assistants events, not chat chunks
        }
        let chunk = event_json(data)?;
        if let Some(error) = chunk.get("error").filter(|e| crate::base::is_truthy(e)) {
            return Err(Stop::Thrown(api_error_message(error)));
        }
        self.chunks += 1;
        self.chunk(&chunk, out).map_err(Stop::Thrown)
    }

    fn end(&mut self, out: &mut PiEvents) -> Result<(), Stop> {
        self.finish_open(out);
        Ok(())
    }

    fn content(&self) -> Vec<Value> {
        self.blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut block = b.clone();
                if let (Some(Open::ToolCall { stale: true }), true) =
                    (self.open, i + 1 == self.blocks.len())
                {
                    let args = block
                        .get("partialArgs")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    block.insert("arguments".into(), parse_streaming_json(args));
                }
                block.remove("partialArgs");
                Value::Object(block)
            })
            .collect()
    }

    fn usage(&self) -> &Usage {
        &self.usage
    }

    fn stop_reason(&self) -> &'static str {
        self.stop_reason
    }

    fn into_content(self: Box<Self>, _failed: bool) -> Vec<Value> {
        // An open tool call (the stream failed inside it) keeps `partialArgs` and the
        // arguments parsed from it last, as pi-ai's catch path leaves the block.
        let stale = matches!(self.open, Some(Open::ToolCall { stale: true }));
        let last = self.blocks.len();
        self.blocks
            .into_iter()
            .enumerate()
            .map(|(i, mut block)| {
                if stale && i + 1 == last {
                    let args = block
                        .get("partialArgs")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    block.insert("arguments".into(), parse_streaming_json(args));
                }
                Value::Object(block)
            })
            .collect()
    }

    fn cut_short(&self) -> Option<String> {
        (self.chunks > 0 && !self.finished).then(|| {
            "The reply ended before a chunk with a finish_reason: the stream was cut".to_owned()
        })
    }
}

impl ChatReader {
    fn index(&self) -> usize {
        self.blocks.len().saturating_sub(1)
    }

    /// `finishCurrentBlock`.
    fn finish_open(&mut self, out: &mut PiEvents) {
        let Some(open) = self.open.take() else {
            return;
        };
        let at = self.index();
        match open {
            Open::Text => out.push("text_end", Some(at)),
            Open::Thinking => out.push("thinking_end", Some(at)),
            Open::ToolCall { .. } => {
                let block = &mut self.blocks[at];
                let args = block
                    .shift_remove("partialArgs")
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                block.insert("arguments".into(), parse_streaming_json(&args));
                out.push("toolcall_end", Some(at));
            }
        }
    }

    fn start(
        &mut self,
        block: Map<String, Value>,
        open: Open,
        event: &'static str,
        out: &mut PiEvents,
    ) {
        self.finish_open(out);
        self.blocks.push(block);
        self.open = Some(open);
        out.push(event, Some(self.index()));
    }

    fn set_usage(&mut self, raw: &Value) {
        let cached = count(raw.pointer("/prompt_tokens_details/cached_tokens"));
        let reasoning = count(raw.pointer("/completion_tokens_details/reasoning_tokens"));
        let input = count(raw.get("prompt_tokens")) - cached;
        let output = count(raw.get("completion_tokens")) + reasoning;
        self.usage = Usage::zero();
        self.usage.input = input;
        self.usage.output = output;
        self.usage.cache_read = cached;
        self.usage.total = input + output + cached;
        self.usage.calculate_cost(&self.model);
    }

    fn chunk(&mut self, chunk: &Value, out: &mut PiEvents) -> Result<(), String> {
        let has_usage = truthy(chunk.get("usage"));
        if has_usage {
            self.set_usage(&chunk["usage"]);
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(|c| c.get(0))
            .filter(|c| crate::base::is_truthy(c))
        else {
            return Ok(());
        };
        // Some providers (Moonshot) put usage in the choice.
        if !has_usage && truthy(choice.get("usage")) {
            self.set_usage(&choice["usage"]);
        }
        if let Some(reason) = choice
            .get("finish_reason")
            .filter(|r| crate::base::is_truthy(r))
        {
            self.finished = true;
            let reason = reason
                .as_str()
                .map_or_else(|| to_js_string(reason), str::to_owned);
            self.stop_reason = map_stop_reason(&reason)?;
        }
        let Some(delta) = choice.get("delta").filter(|d| crate::base::is_truthy(d)) else {
            return Ok(());
        };
        if let Some(text) = text_of(delta, "content") {
            if self.open != Some(Open::Text) {
                let block = [("type", Value::from("text")), ("text", Value::from(""))];
                self.start(
                    block.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                    Open::Text,
                    "text_start",
                    out,
                );
            }
            let at = self.index();
            if let Some(Value::String(s)) = self.blocks[at].get_mut("text") {
                s.push_str(text);
            }
            out.delta("text_delta", at, text);
        }
        // The first reasoning field with text (llama.cpp, OpenRouter, chutes.ai send one of
        // these, some both with the same text).
        let field = ["reasoning_content", "reasoning", "reasoning_text"]
            .into_iter()
            .find(|f| text_of(delta, f).is_some());
        if let Some(field) = field {
            if self.open != Some(Open::Thinking) {
                let block = [
                    ("type", Value::from("thinking")),
                    ("thinking", Value::from("")),
                    ("thinkingSignature", Value::from(field)),
                ];
                self.start(
                    block.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                    Open::Thinking,
                    "thinking_start",
                    out,
                );
            }
            let text = text_of(delta, field).unwrap_or_default();
            let at = self.index();
            if let Some(Value::String(s)) = self.blocks[at].get_mut("thinking") {
                s.push_str(text);
            }
            out.delta("thinking_delta", at, text);
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let current_id = self
                    .blocks
                    .last()
                    .and_then(|b| b.get("id"))
                    .and_then(Value::as_str);
                let same = matches!(self.open, Some(Open::ToolCall { .. }))
                    && id.is_none_or(|id| current_id == Some(id));
                if !same {
                    let name = call
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let block = [
                        ("type", Value::from("toolCall")),
                        ("id", Value::from(id.unwrap_or(""))),
                        ("name", Value::from(name)),
                        ("arguments", Value::Object(Map::new())),
                        ("partialArgs", Value::from("")),
                    ];
                    self.start(
                        block.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                        Open::ToolCall { stale: false },
                        "toolcall_start",
                        out,
                    );
                }
                let at = self.index();
                let block = &mut self.blocks[at];
                if let Some(id) = id {
                    block.insert("id".into(), Value::from(id));
                }
                if let Some(name) = call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    block.insert("name".into(), Value::from(name));
                }
                let piece = call
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .unwrap_or("");
                if !piece.is_empty() {
                    if let Some(Value::String(s)) = block.get_mut("partialArgs") {
                        s.push_str(piece);
                    }
                    self.open = Some(Open::ToolCall { stale: true });
                }
                out.delta("toolcall_delta", at, piece);
            }
        }
        if let Some(details) = delta.get("reasoning_details").and_then(Value::as_array) {
            for detail in details {
                let encrypted =
                    detail.get("type").and_then(Value::as_str) == Some("reasoning.encrypted");
                if !(encrypted && truthy(detail.get("id")) && truthy(detail.get("data"))) {
                    continue;
                }
                let id = detail.get("id");
                if let Some(block) = self.blocks.iter_mut().find(|b| {
                    b.get("type").and_then(Value::as_str) == Some("toolCall") && b.get("id") == id
                }) {
                    block.insert("thoughtSignature".into(), Value::from(to_js_string(detail)));
                }
            }
        }
        Ok(())
    }
}

/// A non-streaming `ChatCompletion` as the chunks its stream would have carried: the
/// reasoning, the text, each tool call, then the finish reason with the usage.
pub(super) fn body_events(body: &Value) -> Result<Vec<(Option<String>, String)>, ResponseError> {
    if truthy(body.get("error")) {
        return Ok(vec![(None, to_js_string(body))]);
    }
    if body.get("object").and_then(Value::as_str) != Some("chat.completion") {
        return Err(ResponseError::Shape(
            "an OpenAI Chat body must be a ChatCompletion (object \"chat.completion\")".into(),
        ));
    }
    let chunk = |delta: Value, finish: Value, usage: Option<&Value>| {
        let mut c = Map::new();
        c.insert("object".into(), Value::from("chat.completion.chunk"));
        let mut choice = Map::new();
        choice.insert("index".into(), Value::from(0));
        choice.insert("delta".into(), delta);
        choice.insert("finish_reason".into(), finish);
        c.insert("choices".into(), Value::Array(vec![Value::Object(choice)]));
        if let Some(u) = usage {
            c.insert("usage".into(), u.clone());
        }
        (None, to_js_string(&Value::Object(c)))
    };
    let choice = body.get("choices").and_then(|c| c.get(0));
    let message = choice.and_then(|c| c.get("message"));
    let mut out = Vec::new();
    if let Some(message) = message {
        for field in ["reasoning_content", "reasoning", "reasoning_text"] {
            if let Some(text) = text_of(message, field) {
                let mut d = Map::new();
                d.insert(field.into(), Value::from(text));
                out.push(chunk(Value::Object(d), Value::Null, None));
                break;
            }
        }
        if let Some(text) = text_of(message, "content") {
            let mut d = Map::new();
            d.insert("content".into(), Value::from(text));
            out.push(chunk(Value::Object(d), Value::Null, None));
        }
        for (index, call) in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let mut c = call.clone();
            if let Some(obj) = c.as_object_mut() {
                obj.insert("index".into(), Value::from(index));
            }
            let mut d = Map::new();
            d.insert("tool_calls".into(), Value::Array(vec![c]));
            out.push(chunk(Value::Object(d), Value::Null, None));
        }
    }
    let finish = choice
        .and_then(|c| c.get("finish_reason"))
        .cloned()
        .unwrap_or(Value::Null);
    out.push(chunk(Value::Object(Map::new()), finish, body.get("usage")));
    Ok(out)
}
