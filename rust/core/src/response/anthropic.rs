//! Anthropic Messages replies, read as pi-ai 0.58.3 reads them: pi-mono
//! `packages/ai/src/providers/anthropic.ts` (`streamAnthropic`, the `for await` loop over the
//! SDK's `MessageStream`, `mapStopReason`) behind `@anthropic-ai/sdk` 0.73's `Stream`
//! (`ping` and unknown SSE event names dropped, an `error` event thrown as an `APIError` whose
//! message is the JSON of the whole body) and `MessageStream` (events before `message_start`
//! refused; a stream without one ends with "request ended without sending any chunks").

use serde_json::{Map, Value};

use std::borrow::Cow;

use super::scan::{once, Scan};
use super::{
    count, event_json, final_block, parse_streaming_json, reply_accessors, ApiReader, PiEvents,
    ReplyBlock, ResponseError, Stop, Usage,
};
use crate::base::to_js_string;

/// One content block while the stream runs: pi's block plus the two fields pi-ai keeps on it
/// until the block ends (`index`, and `partialJson` for a tool call).
struct Block {
    fields: Map<String, Value>,
    /// `fields["type"]`, which never changes: read on every delta without a map lookup.
    kind: &'static str,
    index: Option<Value>,
    partial_json: Option<String>,
    /// `partial_json` grew since `arguments` was last parsed from it.
    args_stale: bool,
}

impl Block {
    fn kind(&self) -> &str {
        self.kind
    }
}

impl ReplyBlock for Block {
    /// The block as the partial message shows it while the stream runs.
    fn to_value(&self) -> Value {
        let mut fields = self.fields.clone();
        if let (Some(p), true) = (&self.partial_json, self.args_stale) {
            fields.insert("arguments".into(), parse_streaming_json(p));
        }
        Value::Object(fields)
    }

    /// The block as it ends up in the message: `index` is gone (pi-ai deletes it at the
    /// block's end and again on error); an unfinished tool call keeps `partialJson`, as pi-ai's
    /// catch path leaves it.
    fn into_value(self) -> Value {
        final_block(self.fields, self.partial_json, self.args_stale)
    }
}

/// `block[key] += more` for a string field. A text or thinking block holds its text second,
/// after `type`: that slot is tried first, without hashing the key, on every delta.
fn append_to_field(fields: &mut Map<String, Value>, key: &str, more: &str) {
    if let Some((k, Value::String(s))) = fields.iter_mut().nth(1) {
        if k == key {
            s.push_str(more);
            return;
        }
    }
    if let Some(Value::String(s)) = fields.get_mut(key) {
        s.push_str(more);
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
        // `compaction`: the server compacted and paused (`pause_after_compaction`); the turn
        // holds the compaction block. pi-ai 0.58.3 throws on it (it predates the beta).
        "end_turn" | "pause_turn" | "stop_sequence" | "compaction" => "stop",
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
fn message_body_events(body: &Value) -> Result<Vec<Value>, ResponseError> {
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

pub(super) fn new_reader(model: &Value, _options: &Value) -> Box<dyn ApiReader> {
    Box::new(AnthropicReader {
        model: model.clone(),
        blocks: Vec::new(),
        usage: Usage::zero(),
        stop_reason: "stop",
        started: false,
        stopped: false,
    })
}

/// A `Message` body as (no name, JSON text) wire events.
pub(super) fn body_events(body: &Value) -> Result<Vec<(Option<String>, String)>, ResponseError> {
    Ok(message_body_events(body)?
        .iter()
        .map(|e| (None, to_js_string(e)))
        .collect())
}

struct AnthropicReader {
    model: Value,
    blocks: Vec<Block>,
    usage: Usage,
    stop_reason: &'static str,
    started: bool,
    /// `message_stop` came: the stream ended where Anthropic ends it.
    stopped: bool,
}

/// A `content_block_delta` read without building a `Value`: the hot path of a long reply.
/// Anything this does not describe (another key, a missing or non-string field, a duplicate
/// key) is read through the general path instead.
struct FastDelta<'a> {
    kind: Cow<'a, str>,
    index: f64,
    delta: FastDeltaBody<'a>,
}

#[derive(Default)]
struct FastDeltaBody<'a> {
    kind: Option<Cow<'a, str>>,
    text: Option<Cow<'a, str>>,
    thinking: Option<Cow<'a, str>>,
    partial_json: Option<Cow<'a, str>>,
    signature: Option<Cow<'a, str>>,
}

impl<'a> FastDelta<'a> {
    /// The delta as Anthropic writes it, keys in its order: matched token by token, the
    /// keys compared as bytes. Any other order or shape: [`FastDelta::scan_any_order`].
    fn scan(data: &'a str) -> Option<Self> {
        Self::scan_in_order(data).or_else(|| Self::scan_any_order(data))
    }

    fn scan_in_order(data: &'a str) -> Option<Self> {
        let mut s = Scan::new(data);
        s.token(b"{")?;
        s.token(b"\"type\"")?;
        s.token(b":")?;
        s.token(b"\"content_block_delta\"")?;
        s.token(b",")?;
        s.token(b"\"index\"")?;
        s.token(b":")?;
        let index = s.small_int()?;
        s.token(b",")?;
        s.token(b"\"delta\"")?;
        s.token(b":")?;
        s.token(b"{")?;
        s.token(b"\"type\"")?;
        s.token(b":")?;
        let mut delta = FastDeltaBody {
            kind: Some(s.string()?),
            ..FastDeltaBody::default()
        };
        s.token(b",")?;
        let key = s.string()?;
        s.token(b":")?;
        let value = Some(s.string()?);
        s.token(b"}")?;
        s.token(b"}")?;
        s.end()?;
        match &*key {
            "text" => delta.text = value,
            "thinking" => delta.thinking = value,
            "partial_json" => delta.partial_json = value,
            "signature" => delta.signature = value,
            _ => return None,
        }
        Some(Self {
            kind: Cow::Borrowed("content_block_delta"),
            index,
            delta,
        })
    }

    fn scan_any_order(data: &'a str) -> Option<Self> {
        let mut scan = Scan::new(data);
        let (mut kind, mut index, mut delta) = (None, None, None);
        scan.object(|s, key| match key {
            "type" => once(&mut kind, s.string()),
            "index" => once(&mut index, s.small_int()),
            "delta" => {
                let mut body = FastDeltaBody::default();
                s.object(|s, key| match key {
                    "type" => once(&mut body.kind, s.string()),
                    "text" => once(&mut body.text, s.string()),
                    "thinking" => once(&mut body.thinking, s.string()),
                    "partial_json" => once(&mut body.partial_json, s.string()),
                    "signature" => once(&mut body.signature, s.string()),
                    _ => None,
                })?;
                once(&mut delta, Some(body))
            }
            _ => None,
        })?;
        scan.end()?;
        Some(Self {
            kind: kind?,
            index: index?,
            delta: delta?,
        })
    }
}

impl ApiReader for AnthropicReader {
    fn event(&mut self, name: Option<&str>, data: &str, out: &mut PiEvents) -> Result<(), Stop> {
        if let Some(name) = name {
            // The delta name first: nearly every event of a long reply is one.
            if name != "content_block_delta" && name != "error" && !KNOWN.contains(&name) {
                return Ok(()); // `ping`, and names the SDK does not know
            }
        }
        if self.started && matches!(name, None | Some("content_block_delta")) {
            if let Some(fast) = FastDelta::scan(data) {
                if fast.kind == "content_block_delta" && self.fast_delta(&fast, out) {
                    return Ok(());
                }
            }
        }
        let data = event_json(data)?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or("");
        let name = name.unwrap_or(kind);
        if name == "error" {
            return Err(Stop::Thrown(to_js_string(&data)));
        }
        if !KNOWN.contains(&name) {
            return Ok(());
        }
        // The SDK yields the parsed data; its own `type` decides from here on.
        if !self.started && kind != "message_start" {
            return Err(Stop::Thrown(format!(
                "Unexpected event order, got {kind} before \"message_start\""
            )));
        }
        self.event_value(kind, &data, out).map_err(Stop::Thrown)
    }

    fn end(&mut self, _out: &mut PiEvents) -> Result<(), Stop> {
        if !self.started {
            return Err(Stop::Thrown(
                "request ended without sending any chunks".to_owned(),
            ));
        }
        Ok(())
    }

    reply_accessors!();

    fn cut_short(&self) -> Option<String> {
        (!self.stopped).then(|| {
            "The reply ended before Anthropic's message_stop event: the stream was cut".to_owned()
        })
    }
}

impl AnthropicReader {
    /// pi-ai's `findIndex(b => b.index === event.index)`: the first open block with it.
    fn find_index(&self, want: f64) -> Option<usize> {
        self.blocks.iter().position(|b| {
            b.index
                .as_ref()
                .and_then(Value::as_f64)
                .is_some_and(|i| i == want)
        })
    }

    fn find(&self, data: &Value) -> Option<usize> {
        let want = data.get("index")?.as_f64()?;
        self.find_index(want)
    }

    /// The hot path; `false` when the delta needs the general path.
    fn fast_delta(&mut self, fast: &FastDelta, out: &mut PiEvents) -> bool {
        let d = &fast.delta;
        let Some(at) = self.find_index(fast.index) else {
            return true; // no open block with this index: pi-ai ignores the delta
        };
        let block = &mut self.blocks[at];
        let Some(kind) = &d.kind else { return false };
        match (&**kind, block.kind()) {
            ("text_delta", "text") => {
                let Some(text) = &d.text else { return false };
                append_to_field(&mut block.fields, "text", text);
                out.delta("text_delta", at, text);
            }
            ("thinking_delta", "thinking") => {
                let Some(text) = &d.thinking else {
                    return false;
                };
                append_to_field(&mut block.fields, "thinking", text);
                out.delta("thinking_delta", at, text);
            }
            ("input_json_delta", "toolCall") => {
                let Some(text) = &d.partial_json else {
                    return false;
                };
                block
                    .partial_json
                    .get_or_insert_with(String::new)
                    .push_str(text);
                block.args_stale = true;
                out.delta("toolcall_delta", at, text);
            }
            ("signature_delta", "thinking") => {
                let Some(text) = &d.signature else {
                    return false;
                };
                append_to_field(&mut block.fields, "thinkingSignature", text);
            }
            // A compaction block's deltas are read by the general path.
            (_, "compaction") => return false,
            _ => {}
        }
        true
    }

    fn event_value(&mut self, kind: &str, data: &Value, out: &mut PiEvents) -> Result<(), String> {
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
            "content_block_start" => self.block_start(data, out),
            "content_block_delta" => self.block_delta(data, out),
            "content_block_stop" => {
                if let Some(at) = self.find(data) {
                    let block = &mut self.blocks[at];
                    block.index = None;
                    match block.kind() {
                        "text" => out.push("text_end", Some(at)),
                        "thinking" => out.push("thinking_end", Some(at)),
                        // pi has no event for a compaction block.
                        "compaction" => {}
                        _ => {
                            let json = block.partial_json.take().unwrap_or_default();
                            block.args_stale = false;
                            block
                                .fields
                                .insert("arguments".into(), parse_streaming_json(&json));
                            out.push("toolcall_end", Some(at));
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
            "message_stop" => self.stopped = true,
            _ => {}
        }
        Ok(())
    }

    fn total(&mut self) {
        let u = &mut self.usage;
        u.total = u.input + u.output + u.cache_read + u.cache_write;
        u.calculate_cost(&self.model);
    }

    fn block_start(&mut self, data: &Value, out: &mut PiEvents) {
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
            // Anthropic's server compaction block (beta `compact-2026-01-12`): kept verbatim
            // under `raw` (it must go back unchanged), its summary as `content`; see
            // `transcript::COMPACTION_BLOCK_TYPE`. pi-ai 0.58.3 drops it. No pi event.
            Some("compaction") => {
                self.blocks.push(Block {
                    fields: compaction_fields(cb.clone()),
                    kind: "compaction",
                    index,
                    partial_json: None,
                    args_stale: false,
                });
                return;
            }
            _ => return,
        };
        let kind = match fields.get("type").and_then(Value::as_str) {
            Some("text") => "text",
            Some("thinking") => "thinking",
            Some("redacted_thinking") => "redacted_thinking",
            Some("toolCall") => "toolCall",
            _ => "",
        };
        self.blocks.push(Block {
            fields,
            kind,
            index,
            partial_json: partial,
            args_stale: false,
        });
        out.push(event, Some(self.blocks.len() - 1));
    }

    fn block_delta(&mut self, data: &Value, out: &mut PiEvents) {
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
        match (delta.get("type").and_then(Value::as_str), block.kind()) {
            (Some("text_delta"), "text") => {
                let more = text("text");
                append_to_field(&mut block.fields, "text", &more);
                out.delta("text_delta", at, &more);
            }
            (Some("thinking_delta"), "thinking") => {
                let more = text("thinking");
                append_to_field(&mut block.fields, "thinking", &more);
                out.delta("thinking_delta", at, &more);
            }
            (Some("input_json_delta"), "toolCall") => {
                // pi-ai re-parses the whole text on every delta; only the last parse can show
                // in the message (at the block's end, or on error with the block open), so it
                // is made once, when the block ends or the message is built.
                let more = text("partial_json");
                let json = block.partial_json.get_or_insert_with(String::new);
                json.push_str(&more);
                block.args_stale = true;
                out.delta("toolcall_delta", at, &more);
            }
            (Some("signature_delta"), "thinking") => {
                append_to_field(&mut block.fields, "thinkingSignature", &text("signature"));
            }
            // As the anthropic SDK's beta stream accumulates it (`_beta_messages.py`): the
            // delta's `content` and `encrypted_content` replace the block's.
            (Some("compaction_delta"), "compaction") => {
                let mut raw = block.fields.get("raw").cloned().unwrap_or_default();
                if let Value::Object(m) = &mut raw {
                    for key in ["content", "encrypted_content"] {
                        m.insert(key.into(), delta.get(key).cloned().unwrap_or(Value::Null));
                    }
                }
                block.fields = compaction_fields(raw);
            }
            (Some("signature_delta"), "compaction") => {
                let mut raw = block.fields.get("raw").cloned().unwrap_or_default();
                if let Value::Object(m) = &mut raw {
                    m.insert(
                        "signature".into(),
                        delta.get("signature").cloned().unwrap_or(Value::Null),
                    );
                }
                block.fields = compaction_fields(raw);
            }
            _ => {}
        }
    }
}

/// pi's block for an Anthropic `compaction` block (see `transcript::COMPACTION_BLOCK_TYPE`).
fn compaction_fields(raw: Value) -> Map<String, Value> {
    let content = raw.get("content").cloned().unwrap_or(Value::Null);
    obj(&[
        ("type", "compaction".into()),
        ("api", "anthropic-messages".into()),
        ("content", content),
        ("raw", raw),
    ])
}
