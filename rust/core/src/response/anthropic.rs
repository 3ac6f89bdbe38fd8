//! Anthropic Messages replies, read as pi-ai 0.58.3 reads them: pi-mono
//! `packages/ai/src/providers/anthropic.ts` (`streamAnthropic`, the `for await` loop over the
//! SDK's `MessageStream`, `mapStopReason`) behind `@anthropic-ai/sdk` 0.73's `Stream`
//! (`ping` and unknown SSE event names dropped, an `error` event thrown as an `APIError` whose
//! message is the JSON of the whole body) and `MessageStream` (events before `message_start`
//! refused; a stream without one ends with "request ended without sending any chunks").

use serde_json::{Map, Value};

use super::{count, message, parse_streaming_json, ParsedResponse, Reply, ResponseError, Usage};
use crate::base::to_js_string;

/// One content block while the stream runs: pi's block plus the two fields pi-ai keeps on it
/// until the block ends (`index`, and `partialJson` for a tool call).
struct Block {
    fields: Map<String, Value>,
    index: Option<Value>,
    partial_json: Option<String>,
    /// `partial_json` grew since `arguments` was last parsed from it.
    args_stale: bool,
}

impl Block {
    fn kind(&self) -> &str {
        self.fields
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// The block as it ends up in the message: `index` is gone (pi-ai deletes it at the
    /// block's end and again on error); an unfinished tool call keeps `partialJson`, as pi-ai's
    /// catch path leaves it.
    fn into_value(self) -> Value {
        let mut fields = self.fields;
        if let Some(p) = self.partial_json {
            if self.args_stale {
                fields.insert("arguments".into(), parse_streaming_json(&p));
            }
            fields.insert("partialJson".into(), Value::from(p));
        }
        Value::Object(fields)
    }
}

fn obj(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// pi-ai's `mapStopReason` for Anthropic; `Err` is the error it throws.
fn map_stop_reason(reason: &str) -> Result<&'static str, String> {
    Ok(match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => "stop",
        "max_tokens" => "length",
        "tool_use" => "toolUse",
        "refusal" | "sensitive" => "error",
        other => return Err(format!("Unhandled stop reason: {other}")),
    })
}

/// The SSE event names the SDK's `Stream` yields; any other name is dropped.
const KNOWN: [&str; 6] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
];

/// A non-streaming `Message` body as the stream that would have produced it.
fn body_events(body: &Value) -> Result<Vec<Value>, ResponseError> {
    if body.get("type").and_then(Value::as_str) != Some("message") {
        if body.get("type").and_then(Value::as_str) == Some("error") {
            // An error body: the SDK raises it as the stream's `error` event would.
            return Ok(vec![body.clone()]);
        }
        return Err(ResponseError::Shape(
            "an Anthropic body must be a Message (type \"message\") or an error".into(),
        ));
    }
    let mut start = body.clone();
    if let Some(m) = start.as_object_mut() {
        m.insert("content".into(), Value::Array(Vec::new()));
        m.insert("stop_reason".into(), Value::Null);
    }
    let mut out = vec![Value::Object(obj(&[
        ("type", Value::from("message_start")),
        ("message", start),
    ]))];
    let empty = Vec::new();
    let blocks = body
        .get("content")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for (i, block) in blocks.iter().enumerate() {
        let index = Value::from(i);
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let s = |k: &str| block.get(k).cloned().unwrap_or(Value::from(""));
        let (start_block, deltas): (Value, Vec<Value>) = match kind {
            "text" => (
                Value::Object(obj(&[("type", "text".into()), ("text", "".into())])),
                vec![Value::Object(obj(&[
                    ("type", "text_delta".into()),
                    ("text", s("text")),
                ]))],
            ),
            "thinking" => (
                Value::Object(obj(&[("type", "thinking".into()), ("thinking", "".into())])),
                vec![
                    Value::Object(obj(&[
                        ("type", "thinking_delta".into()),
                        ("thinking", s("thinking")),
                    ])),
                    Value::Object(obj(&[
                        ("type", "signature_delta".into()),
                        ("signature", s("signature")),
                    ])),
                ],
            ),
            "tool_use" => {
                let mut b = block.clone();
                if let Some(m) = b.as_object_mut() {
                    m.insert("input".into(), Value::Object(Map::new()));
                }
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                (
                    b,
                    vec![Value::Object(obj(&[
                        ("type", "input_json_delta".into()),
                        ("partial_json", Value::from(to_js_string(&input))),
                    ]))],
                )
            }
            _ => (block.clone(), Vec::new()),
        };
        out.push(Value::Object(obj(&[
            ("type", "content_block_start".into()),
            ("index", index.clone()),
            ("content_block", start_block),
        ])));
        for delta in deltas {
            out.push(Value::Object(obj(&[
                ("type", "content_block_delta".into()),
                ("index", index.clone()),
                ("delta", delta),
            ])));
        }
        out.push(Value::Object(obj(&[
            ("type", "content_block_stop".into()),
            ("index", index),
        ])));
    }
    out.push(Value::Object(obj(&[
        ("type", "message_delta".into()),
        (
            "delta",
            Value::Object(obj(&[(
                "stop_reason",
                body.get("stop_reason").cloned().unwrap_or(Value::Null),
            )])),
        ),
        (
            "usage",
            body.get("usage")
                .cloned()
                .unwrap_or(Value::Object(Map::new())),
        ),
    ])));
    out.push(Value::Object(obj(&[("type", "message_stop".into())])));
    Ok(out)
}

pub(super) fn parse(
    model: &Value,
    reply: Reply,
    now_ms: f64,
) -> Result<ParsedResponse, ResponseError> {
    let events: Vec<(Option<String>, Value)> = match reply {
        Reply::Events(events) => events.into_iter().map(|e| (e.name, e.data)).collect(),
        Reply::Body(body) => body_events(&body)?.into_iter().map(|d| (None, d)).collect(),
    };
    let mut state = State {
        model,
        blocks: Vec::new(),
        usage: Usage::zero(),
        stop_reason: "stop",
        events: vec!["start"],
        started: false,
    };
    let outcome = state.run(events);
    let State {
        blocks,
        usage,
        mut stop_reason,
        mut events,
        ..
    } = state;
    let content = blocks.into_iter().map(Block::into_value).collect();
    let error_message = match outcome {
        Ok(()) if stop_reason == "error" || stop_reason == "aborted" => {
            Some("An unknown error occurred".to_owned())
        }
        Ok(()) => None,
        Err(text) => Some(text),
    };
    if error_message.is_some() {
        stop_reason = "error";
        events.push("error");
    } else {
        events.push("done");
    }
    let message = message(model, content, &usage, stop_reason, error_message, now_ms)?;
    Ok(ParsedResponse { message, events })
}

struct State<'m> {
    model: &'m Value,
    blocks: Vec<Block>,
    usage: Usage,
    stop_reason: &'static str,
    events: Vec<&'static str>,
    started: bool,
}

impl State<'_> {
    /// The loop; `Err` carries the message of what pi-ai (or the SDK under it) throws.
    fn run(&mut self, events: Vec<(Option<String>, Value)>) -> Result<(), String> {
        for (name, data) in events {
            let kind = data.get("type").and_then(Value::as_str).unwrap_or("");
            let name = name.as_deref().unwrap_or(kind);
            if name == "error" {
                return Err(to_js_string(&data));
            }
            if !KNOWN.contains(&name) {
                continue; // `ping`, and names the SDK does not know
            }
            // The SDK yields the parsed data; its own `type` decides from here on.
            if !self.started && kind != "message_start" {
                return Err(format!(
                    "Unexpected event order, got {kind} before \"message_start\""
                ));
            }
            self.event(kind, &data)?;
        }
        if !self.started {
            return Err("request ended without sending any chunks".to_owned());
        }
        Ok(())
    }

    fn find(&self, data: &Value) -> Option<usize> {
        let want = data.get("index")?;
        self.blocks.iter().position(|b| {
            b.index
                .as_ref()
                .is_some_and(|i| i.as_f64().is_some() && i.as_f64() == want.as_f64())
        })
    }

    fn event(&mut self, kind: &str, data: &Value) -> Result<(), String> {
        match kind {
            "message_start" => {
                self.started = true;
                let u = data.pointer("/message/usage");
                let get = |k: &str| count(u.and_then(|u| u.get(k)));
                self.usage.input = get("input_tokens");
                self.usage.output = get("output_tokens");
                self.usage.cache_read = get("cache_read_input_tokens");
                self.usage.cache_write = get("cache_creation_input_tokens");
                self.total();
            }
            "content_block_start" => self.block_start(data),
            "content_block_delta" => self.block_delta(data),
            "content_block_stop" => {
                if let Some(at) = self.find(data) {
                    let block = &mut self.blocks[at];
                    block.index = None;
                    match block.kind() {
                        "text" => self.events.push("text_end"),
                        "thinking" => self.events.push("thinking_end"),
                        _ => {
                            let json = block.partial_json.take().unwrap_or_default();
                            block.args_stale = false;
                            block
                                .fields
                                .insert("arguments".into(), parse_streaming_json(&json));
                            self.events.push("toolcall_end");
                        }
                    }
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    if !reason.is_empty() {
                        self.stop_reason = map_stop_reason(reason)?;
                    }
                }
                let u = data.get("usage");
                let get = |k: &str| u.and_then(|u| u.get(k)).filter(|v| !v.is_null());
                if let Some(v) = get("input_tokens") {
                    self.usage.input = count(Some(v));
                }
                if let Some(v) = get("output_tokens") {
                    self.usage.output = count(Some(v));
                }
                if let Some(v) = get("cache_read_input_tokens") {
                    self.usage.cache_read = count(Some(v));
                }
                if let Some(v) = get("cache_creation_input_tokens") {
                    self.usage.cache_write = count(Some(v));
                }
                self.total();
            }
            _ => {} // message_stop
        }
        Ok(())
    }

    fn total(&mut self) {
        let u = &mut self.usage;
        u.total = u.input + u.output + u.cache_read + u.cache_write;
        u.calculate_cost(self.model);
    }

    fn block_start(&mut self, data: &Value) {
        let Some(cb) = data.get("content_block") else {
            return;
        };
        let index = data.get("index").cloned();
        let s = |k: &str| cb.get(k).cloned().unwrap_or(Value::Null);
        let (fields, event, partial) = match cb.get("type").and_then(Value::as_str) {
            Some("text") => (
                obj(&[("type", "text".into()), ("text", "".into())]),
                "text_start",
                None,
            ),
            Some("thinking") => (
                obj(&[
                    ("type", "thinking".into()),
                    ("thinking", "".into()),
                    ("thinkingSignature", "".into()),
                ]),
                "thinking_start",
                None,
            ),
            Some("redacted_thinking") => (
                obj(&[
                    ("type", "thinking".into()),
                    ("thinking", "[Reasoning redacted]".into()),
                    ("thinkingSignature", s("data")),
                    ("redacted", true.into()),
                ]),
                "thinking_start",
                None,
            ),
            Some("tool_use") => {
                let input = cb
                    .get("input")
                    .filter(|v| !v.is_null())
                    .cloned()
                    .unwrap_or(Value::Object(Map::new()));
                (
                    obj(&[
                        ("type", "toolCall".into()),
                        ("id", s("id")),
                        ("name", s("name")),
                        ("arguments", input),
                    ]),
                    "toolcall_start",
                    Some(String::new()),
                )
            }
            _ => return,
        };
        self.blocks.push(Block {
            fields,
            index,
            partial_json: partial,
            args_stale: false,
        });
        self.events.push(event);
    }

    fn block_delta(&mut self, data: &Value) {
        let Some(delta) = data.get("delta") else {
            return;
        };
        let Some(at) = self.find(data) else {
            return;
        };
        let text = |k: &str| -> String {
            match delta.get(k) {
                Some(Value::String(s)) => s.clone(),
                // `+=` of a non-string: JavaScript writes it as text.
                Some(Value::Null) => "null".to_owned(),
                Some(other) => to_js_string(other),
                None => "undefined".to_owned(),
            }
        };
        let block = &mut self.blocks[at];
        let append = |fields: &mut Map<String, Value>, key: &str, more: &str| {
            if let Some(Value::String(s)) = fields.get_mut(key) {
                s.push_str(more);
            }
        };
        match (delta.get("type").and_then(Value::as_str), block.kind()) {
            (Some("text_delta"), "text") => {
                append(&mut block.fields, "text", &text("text"));
                self.events.push("text_delta");
            }
            (Some("thinking_delta"), "thinking") => {
                append(&mut block.fields, "thinking", &text("thinking"));
                self.events.push("thinking_delta");
            }
            (Some("input_json_delta"), "toolCall") => {
                // pi-ai re-parses the whole text on every delta; only the last parse can show
                // in the message (at the block's end, or on error with the block open), so it
                // is made once, when the block ends or the message is built.
                let json = block.partial_json.get_or_insert_with(String::new);
                json.push_str(&text("partial_json"));
                block.args_stale = true;
                self.events.push("toolcall_delta");
            }
            (Some("signature_delta"), "thinking") => {
                append(&mut block.fields, "thinkingSignature", &text("signature"));
            }
            _ => {}
        }
    }
}
