//! OpenAI Responses replies (`openai-responses`, `azure-openai-responses`,
//! `openai-codex-responses`), read as pi-ai 0.58.3 reads them.
//!
//! One state machine, pi-mono `packages/ai/src/providers/openai-responses-shared.ts`
//! (`processResponsesStream`, `mapStopReason`, `encodeTextSignatureV1`), behind the transport
//! each API uses:
//! - `openai-responses.ts` / `azure-openai-responses.ts`: the `openai` SDK 6.26's `Stream`
//!   (`src/core/streaming.ts`): every `data:` is `JSON.parse`d, one whose object has a truthy
//!   `error` is thrown as an `APIError` (message: `error.message`, else the JSON of `error`),
//!   frames named `thread.*` are yielded as `{event, data}` (no `type`: pi-ai skips them).
//!   openai-responses prices the usage with the service tier (`applyServiceTierPricing`);
//!   azure does not.
//! - `openai-codex-responses.ts`: pi-ai's own `parseSSE` + `mapCodexEvents`: events without a
//!   string `type` are skipped, `error` / `response.failed` throw the `Codex error: ...` /
//!   `Codex response failed` texts, and `response.done` / `response.incomplete` /
//!   `response.completed` all become `response.completed` (status normalized), after which
//!   nothing more is read.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{
    count, event_json, final_block, parse_streaming_json, reply_accessors, ApiReader, PiEvents,
    ReplyBlock, ResponseError, Stop, Usage,
};
use crate::base::{is_truthy, to_js_string};

/// The transport in front of the shared loop.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variant {
    /// `openai-responses`: the openai SDK, service-tier pricing.
    OpenAi,
    /// `azure-openai-responses`: the openai SDK (`AzureOpenAI`), no tier pricing.
    Azure,
    /// `openai-codex-responses`: pi-ai's own SSE reader and `mapCodexEvents`.
    Codex,
}

impl Variant {
    /// The API name of the reader.
    fn api(self) -> &'static str {
        match self {
            Variant::OpenAi => "openai-responses",
            Variant::Azure => "azure-openai-responses",
            Variant::Codex => "openai-codex-responses",
        }
    }
}

/// The item pi-ai holds as `currentItem`: what later events consult about it.
#[derive(Default)]
struct CurrentItem {
    kind: ItemKind,
    /// `currentItem.summary` has a last part and it is truthy (reasoning).
    summary_last: bool,
    /// `currentItem.content`'s length and the `type` of its last part (message).
    content_len: usize,
    content_last: Option<String>,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    #[default]
    Reasoning,
    Message,
    FunctionCall,
}

/// One content block: pi's block, plus the tool call's `partialJson` (kept in the final
/// message, as pi-ai never deletes it).
struct Block {
    fields: Map<String, Value>,
    partial_json: Option<String>,
    /// `partial_json` changed since `arguments` was last parsed from it.
    args_stale: bool,
}

impl Block {
    fn kind(&self) -> &str {
        self.fields
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

impl ReplyBlock for Block {
    fn to_value(&self) -> Value {
        let mut fields = self.fields.clone();
        if let Some(p) = &self.partial_json {
            if self.args_stale {
                fields.insert("arguments".into(), parse_streaming_json(p));
            }
            fields.insert("partialJson".into(), Value::from(p.as_str()));
        }
        Value::Object(fields)
    }

    fn into_value(self) -> Value {
        final_block(self.fields, self.partial_json, self.args_stale)
    }
}

impl Block {
    fn append(&mut self, key: &str, more: &str) {
        if let Some(Value::String(s)) = self.fields.get_mut(key) {
            s.push_str(more);
        }
    }
}

pub(super) fn new_reader(model: &Value, options: &Value) -> Box<dyn ApiReader> {
    reader(model, options, Variant::OpenAi)
}

pub(super) fn new_azure_reader(model: &Value, options: &Value) -> Box<dyn ApiReader> {
    reader(model, options, Variant::Azure)
}

pub(super) fn new_codex_reader(model: &Value, options: &Value) -> Box<dyn ApiReader> {
    reader(model, options, Variant::Codex)
}

fn reader(model: &Value, options: &Value, variant: Variant) -> Box<dyn ApiReader> {
    Box::new(ResponsesReader {
        model: model.clone(),
        service_tier: options.get("serviceTier").cloned().filter(|v| !v.is_null()),
        variant,
        blocks: Vec::new(),
        item: None,
        current: None,
        usage: Usage::zero(),
        stop_reason: "stop",
        events_seen: 0,
        ended: false,
    })
}

struct ResponsesReader {
    model: Value,
    /// `options.serviceTier`, the fallback for `response.service_tier`.
    service_tier: Option<Value>,
    variant: Variant,
    blocks: Vec<Block>,
    /// `currentItem`.
    item: Option<CurrentItem>,
    /// `currentBlock`: an index into `blocks`.
    current: Option<usize>,
    usage: Usage,
    stop_reason: &'static str,
    /// Wire events read (the cut-stream check ignores an empty stream, which pi-ai and the
    /// recorded cases end as `done`).
    events_seen: usize,
    /// The provider's own end arrived (`response.completed` / `incomplete` / ...).
    ended: bool,
}

/// A delta event read without building a `Value` (the hot path of a long reply). Anything
/// this does not describe goes through the general path.
#[derive(Deserialize)]
struct FastDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    delta: Cow<'a, str>,
    /// A top-level `error` makes the openai SDK throw: the general path reads that.
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// JavaScript's `String(value)` of a JSON value (`undefined` for a missing one), as template
/// strings and `+=` write it.
fn js_text(v: Option<&Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::Null => String::new(),
                other => js_text(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
        Some(other) => to_js_string(other),
    }
}

/// `a || b` on JSON values: the value when truthy.
fn truthy(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| is_truthy(v))
}

/// What V8 says when a property of `undefined`/`null` is read.
fn type_error(v: Option<&Value>, prop: &str) -> Stop {
    let what = if v.is_some() { "null" } else { "undefined" };
    Stop::Thrown(format!(
        "Cannot read properties of {what} (reading '{prop}')"
    ))
}

/// pi-ai's `mapStopReason` (openai-responses-shared.ts); `Err` is what it throws.
fn map_stop_reason(status: Option<&Value>) -> Result<&'static str, String> {
    let Some(status) = truthy(status) else {
        return Ok("stop");
    };
    Ok(match status.as_str() {
        Some("completed" | "in_progress" | "queued") => "stop",
        Some("incomplete") => "length",
        Some("failed" | "cancelled") => "error",
        _ => return Err(format!("Unhandled stop reason: {}", js_text(Some(status)))),
    })
}

/// `getServiceTierCostMultiplier` (openai-responses.ts).
fn tier_multiplier(tier: Option<&Value>) -> f64 {
    match tier.and_then(Value::as_str) {
        Some("flex") => 0.5,
        Some("priority") => 2.0,
        _ => 1.0,
    }
}

impl ApiReader for ResponsesReader {
    fn event(&mut self, name: Option<&str>, data: &str, out: &mut PiEvents) -> Result<(), Stop> {
        if self.variant == Variant::Codex && self.ended {
            return Ok(()); // mapCodexEvents returned after the first completion event
        }
        self.events_seen += 1;
        // The openai SDK's Stream (streaming.ts): `thread.*` frames come out as
        // `{event, data}`, which has no `type`: pi-ai skips them (codex ignores names).
        let thread =
            self.variant != Variant::Codex && name.is_some_and(|n| n.starts_with("thread."));
        if !thread {
            if let Ok(fast) = serde_json::from_str::<FastDelta>(data) {
                if fast.error.is_none() && self.fast_delta(&fast, out) {
                    return Ok(());
                }
            }
        }
        let value = event_json(data)?;
        if self.variant == Variant::Codex {
            return self.codex_event(value, out);
        }
        if thread {
            return Ok(());
        }
        if let Some(error) = value.as_object().and_then(|o| truthy(o.get("error"))) {
            return Err(Stop::Thrown(api_error_message(error)));
        }
        self.shared_event(&value, out)
    }

    fn end(&mut self, _out: &mut PiEvents) -> Result<(), Stop> {
        Ok(())
    }

    reply_accessors!();

    fn cut_short(&self) -> Option<String> {
        // An empty stream is not "cut": pi-ai ends it `done` and so do the recorded cases.
        (self.events_seen > 0 && !self.ended).then(|| {
            "The reply ended before the Responses API's response.completed event: the stream \
             was cut"
                .to_owned()
        })
    }
}

/// The openai SDK's `APIError.makeMessage(undefined, error, undefined)` (core/error.ts).
fn api_error_message(error: &Value) -> String {
    match truthy(error.get("message")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => to_js_string(other),
        None => to_js_string(error),
    }
}

impl ResponsesReader {
    /// The hot delta events; `false` when the general path must read the event.
    fn fast_delta(&mut self, fast: &FastDelta, out: &mut PiEvents) -> bool {
        let (Some(item), Some(at)) = (&mut self.item, self.current) else {
            // No current item or block: pi-ai ignores every delta, unless the event is one
            // the general path reads for something else.
            return matches!(
                &*fast.kind,
                "response.output_text.delta"
                    | "response.refusal.delta"
                    | "response.function_call_arguments.delta"
                    | "response.reasoning_summary_text.delta"
            );
        };
        let block = &mut self.blocks[at];
        match &*fast.kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                let want = if fast.kind == "response.output_text.delta" {
                    "output_text"
                } else {
                    "refusal"
                };
                if item.kind == ItemKind::Message
                    && block.kind() == "text"
                    && item.content_len > 0
                    && item.content_last.as_deref() == Some(want)
                {
                    block.append("text", &fast.delta);
                    out.delta("text_delta", at, &fast.delta);
                }
                true
            }
            "response.function_call_arguments.delta" => {
                if item.kind == ItemKind::FunctionCall && block.kind() == "toolCall" {
                    block
                        .partial_json
                        .get_or_insert_with(String::new)
                        .push_str(&fast.delta);
                    block.args_stale = true;
                    out.delta("toolcall_delta", at, &fast.delta);
                }
                true
            }
            "response.reasoning_summary_text.delta" => {
                if item.kind == ItemKind::Reasoning
                    && block.kind() == "thinking"
                    && item.summary_last
                {
                    block.append("thinking", &fast.delta);
                    out.delta("thinking_delta", at, &fast.delta);
                }
                true
            }
            _ => false,
        }
    }

    /// `mapCodexEvents` (openai-codex-responses.ts) in front of the shared loop.
    fn codex_event(&mut self, mut value: Value, out: &mut PiEvents) -> Result<(), Stop> {
        if value.is_null() {
            return Err(type_error(Some(&value), "type"));
        }
        let Some(kind) = value.get("type").and_then(Value::as_str).map(str::to_owned) else {
            return Ok(()); // no string `type`: skipped
        };
        match kind.as_str() {
            "error" => {
                let text = |k: &str| truthy(value.get(k)).map(|v| js_text(Some(v)));
                let message = text("message")
                    .or_else(|| text("code"))
                    .unwrap_or_else(|| to_js_string(&value));
                Err(Stop::Thrown(format!("Codex error: {message}")))
            }
            "response.failed" => {
                let msg = truthy(value.pointer("/response/error/message"))
                    .map(|v| js_text(Some(v)))
                    .unwrap_or_else(|| "Codex response failed".to_owned());
                Err(Stop::Thrown(msg))
            }
            "response.done" | "response.completed" | "response.incomplete" => {
                let Some(obj) = value.as_object_mut() else {
                    return Ok(());
                };
                obj.insert("type".into(), Value::from("response.completed"));
                if let Some(Value::Object(response)) = obj.get_mut("response") {
                    let known = matches!(
                        response.get("status").and_then(Value::as_str),
                        Some(
                            "completed"
                                | "incomplete"
                                | "failed"
                                | "cancelled"
                                | "queued"
                                | "in_progress"
                        )
                    );
                    if !known {
                        response.remove("status");
                    }
                }
                self.shared_event(&value, out)?;
                self.ended = true;
                Ok(())
            }
            _ => self.shared_event(&value, out),
        }
    }

    /// One event of `processResponsesStream` (openai-responses-shared.ts).
    fn shared_event(&mut self, event: &Value, out: &mut PiEvents) -> Result<(), Stop> {
        let Some(obj) = event.as_object() else {
            if event.is_null() {
                return Err(type_error(Some(event), "type"));
            }
            return Ok(());
        };
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "response.output_item.added" => self.item_added(obj.get("item"), out)?,
            "response.reasoning_summary_part.added" => {
                if let Some(item) = &mut self.item {
                    if item.kind == ItemKind::Reasoning {
                        item.summary_last = obj.get("part").is_some_and(is_truthy);
                    }
                }
            }
            "response.reasoning_summary_text.delta" => {
                let delta = js_text(obj.get("delta"));
                self.summary_delta(&delta, out);
            }
            "response.reasoning_summary_part.done" => self.summary_delta("\n\n", out),
            "response.content_part.added" => {
                if let Some(item) = &mut self.item {
                    if item.kind == ItemKind::Message {
                        let Some(part) = obj.get("part").filter(|p| !p.is_null()) else {
                            return Err(type_error(obj.get("part"), "type"));
                        };
                        let part_kind = part.get("type").and_then(Value::as_str);
                        if let Some(k @ ("output_text" | "refusal")) = part_kind {
                            item.content_len += 1;
                            item.content_last = Some(k.to_owned());
                        }
                    }
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let want = if kind == "response.output_text.delta" {
                    "output_text"
                } else {
                    "refusal"
                };
                let delta = js_text(obj.get("delta"));
                if let (Some(item), Some(at)) = (&self.item, self.current) {
                    let block = &mut self.blocks[at];
                    if item.kind == ItemKind::Message
                        && block.kind() == "text"
                        && item.content_len > 0
                        && item.content_last.as_deref() == Some(want)
                    {
                        block.append("text", &delta);
                        out.delta("text_delta", at, &delta);
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = js_text(obj.get("delta"));
                if let Some(at) = self.tool_block() {
                    let block = &mut self.blocks[at];
                    block
                        .partial_json
                        .get_or_insert_with(String::new)
                        .push_str(&delta);
                    block.args_stale = true;
                    out.delta("toolcall_delta", at, &delta);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(at) = self.tool_block() {
                    let block = &mut self.blocks[at];
                    // `partialJson = event.arguments`: a missing value is kept as pi-ai keeps
                    // it, which parseStreamingJson reads as `{}`.
                    let text = match obj.get("arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => js_text(Some(other)),
                        None => String::new(),
                    };
                    block.partial_json = Some(text);
                    block.args_stale = true;
                }
            }
            "response.output_item.done" => self.item_done(obj.get("item"), out)?,
            "response.completed" => self.completed(obj.get("response"))?,
            "response.incomplete" | "response.failed" => {
                // openai-responses and azure ignore `response.incomplete` (the stop reason
                // stays "stop"): it is the provider's end all the same.
                self.ended = true;
                if kind == "response.failed" {
                    return Err(Stop::Thrown(failed_message(obj.get("response"))));
                }
            }
            "error" => {
                self.ended = true;
                return Err(Stop::Thrown(format!(
                    "Error Code {}: {}",
                    js_text(obj.get("code")),
                    js_text(obj.get("message"))
                )));
            }
            _ => {}
        }
        Ok(())
    }

    /// `currentBlock` when `currentItem` is a function call and `currentBlock` a tool call.
    fn tool_block(&self) -> Option<usize> {
        let item = self.item.as_ref()?;
        let at = self.current?;
        (item.kind == ItemKind::FunctionCall && self.blocks[at].kind() == "toolCall").then_some(at)
    }

    fn summary_delta(&mut self, delta: &str, out: &mut PiEvents) {
        if let (Some(item), Some(at)) = (&self.item, self.current) {
            let block = &mut self.blocks[at];
            if item.kind == ItemKind::Reasoning && block.kind() == "thinking" && item.summary_last {
                block.append("thinking", delta);
                out.delta("thinking_delta", at, delta);
            }
        }
    }

    fn item_added(&mut self, item: Option<&Value>, out: &mut PiEvents) -> Result<(), Stop> {
        let Some(item) = item.filter(|i| !i.is_null()) else {
            return Err(type_error(item, "type"));
        };
        let (current, fields, partial, event) = match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => {
                let summary_last = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .and_then(|s| s.last())
                    .is_some_and(is_truthy);
                (
                    CurrentItem {
                        kind: ItemKind::Reasoning,
                        summary_last,
                        ..CurrentItem::default()
                    },
                    obj(&[("type", "thinking".into()), ("thinking", "".into())]),
                    None,
                    "thinking_start",
                )
            }
            Some("message") => {
                let content = item.get("content").and_then(Value::as_array);
                (
                    CurrentItem {
                        kind: ItemKind::Message,
                        content_len: content.map_or(0, Vec::len),
                        content_last: content
                            .and_then(|c| c.last())
                            .and_then(|p| p.get("type"))
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        ..CurrentItem::default()
                    },
                    obj(&[("type", "text".into()), ("text", "".into())]),
                    None,
                    "text_start",
                )
            }
            Some("function_call") => {
                let id = format!(
                    "{}|{}",
                    js_text(item.get("call_id")),
                    js_text(item.get("id"))
                );
                let partial = match truthy(item.get("arguments")) {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => js_text(Some(other)),
                    None => String::new(),
                };
                (
                    CurrentItem {
                        kind: ItemKind::FunctionCall,
                        ..CurrentItem::default()
                    },
                    obj(&[
                        ("type", "toolCall".into()),
                        ("id", id.into()),
                        ("name", item.get("name").cloned().unwrap_or(Value::Null)),
                        ("arguments", Value::Object(Map::new())),
                    ]),
                    Some(partial),
                    "toolcall_start",
                )
            }
            _ => return Ok(()), // other item types leave currentItem as it was
        };
        self.item = Some(current);
        self.blocks.push(Block {
            fields,
            partial_json: partial,
            args_stale: false,
        });
        self.current = Some(self.blocks.len() - 1);
        out.push(event, Some(self.blocks.len() - 1));
        Ok(())
    }

    fn item_done(&mut self, item: Option<&Value>, out: &mut PiEvents) -> Result<(), Stop> {
        let Some(item) = item.filter(|i| !i.is_null()) else {
            return Err(type_error(item, "type"));
        };
        let last = self.blocks.len().checked_sub(1);
        let current_kind = self.current.map(|at| self.blocks[at].kind().to_owned());
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") if current_kind.as_deref() == Some("thinking") => {
                let at = self.current.take().expect("current block");
                // `item.summary?.map((s) => s.text).join("\n\n") || ""`
                let thinking = match item.get("summary") {
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .map(|s| match s.get("text") {
                            None | Some(Value::Null) => String::new(),
                            other => js_text(other),
                        })
                        .collect::<Vec<_>>()
                        .join("\n\n"),
                    None | Some(Value::Null) => String::new(),
                    Some(_) => {
                        return Err(Stop::Thrown("item.summary?.map is not a function".into()))
                    }
                };
                let block = &mut self.blocks[at];
                block.fields.insert("thinking".into(), thinking.into());
                block
                    .fields
                    .insert("thinkingSignature".into(), to_js_string(item).into());
                out.push("thinking_end", last);
            }
            Some("message") if current_kind.as_deref() == Some("text") => {
                let parts = match item.get("content") {
                    Some(Value::Array(parts)) => parts,
                    None => return Err(type_error(None, "map")),
                    Some(Value::Null) => return Err(type_error(Some(&Value::Null), "map")),
                    Some(_) => {
                        return Err(Stop::Thrown("item.content.map is not a function".into()))
                    }
                };
                let text: String = parts
                    .iter()
                    .map(|c| {
                        let key = if c.get("type").and_then(Value::as_str) == Some("output_text") {
                            "text"
                        } else {
                            "refusal"
                        };
                        match c.get(key) {
                            None | Some(Value::Null) => String::new(),
                            other => js_text(other),
                        }
                    })
                    .collect();
                let at = self.current.take().expect("current block");
                let block = &mut self.blocks[at];
                block.fields.insert("text".into(), text.into());
                block
                    .fields
                    .insert("textSignature".into(), text_signature(item).into());
                out.push("text_end", last);
            }
            Some("function_call") => {
                // pi-ai builds the `toolCall` of the event from the item; the block in the
                // message keeps the arguments parsed from `partialJson` (and `partialJson`).
                self.current = None;
                out.push("toolcall_end", last);
            }
            // A server compaction item (`context_management` compaction,
            // `ResponseCompactionItem`): kept verbatim under `raw` to go back into `input`
            // (see `transcript::COMPACTION_BLOCK_TYPE`); its content is encrypted, so there is
            // no summary. pi-ai 0.58.3 drops it; pi has no event for it, and it leaves the
            // current item as it was.
            Some("compaction") => {
                let mut fields = Map::new();
                fields.insert("type".into(), Value::from("compaction"));
                fields.insert("api".into(), Value::from(self.variant.api()));
                fields.insert("content".into(), Value::Null);
                fields.insert("raw".into(), item.clone());
                self.blocks.push(Block {
                    fields,
                    partial_json: None,
                    args_stale: false,
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn completed(&mut self, response: Option<&Value>) -> Result<(), Stop> {
        self.ended = true;
        let response = response.filter(|r| !r.is_null());
        if let Some(u) = response.and_then(|r| truthy(r.get("usage"))) {
            let cached = count(truthy(u.pointer("/input_tokens_details/cached_tokens")));
            self.usage = Usage::zero();
            self.usage.input = count(truthy(u.get("input_tokens"))) - cached;
            self.usage.output = count(truthy(u.get("output_tokens")));
            self.usage.cache_read = cached;
            self.usage.total = count(truthy(u.get("total_tokens")));
        }
        self.usage.calculate_cost(&self.model);
        if self.variant == Variant::OpenAi {
            // `response?.service_tier ?? options.serviceTier`
            let tier = response
                .and_then(|r| r.get("service_tier"))
                .filter(|v| !v.is_null())
                .or(self.service_tier.as_ref());
            let m = tier_multiplier(tier);
            if m != 1.0 {
                let c = &mut self.usage.cost;
                for x in c.iter_mut().take(4) {
                    *x *= m;
                }
                c[4] = c[0] + c[1] + c[2] + c[3];
            }
        }
        self.stop_reason =
            map_stop_reason(response.and_then(|r| r.get("status"))).map_err(Stop::Thrown)?;
        if self.stop_reason == "stop" && self.blocks.iter().any(|b| b.kind() == "toolCall") {
            self.stop_reason = "toolUse";
        }
        Ok(())
    }
}

/// The `response.failed` message of `processResponsesStream`.
fn failed_message(response: Option<&Value>) -> String {
    let error = response.and_then(|r| truthy(r.get("error")));
    let details = response.and_then(|r| r.get("incomplete_details"));
    if let Some(error) = error {
        let code = truthy(error.get("code")).map_or("unknown".into(), |v| js_text(Some(v)));
        let message =
            truthy(error.get("message")).map_or("no message".into(), |v| js_text(Some(v)));
        format!("{code}: {message}")
    } else if let Some(reason) = details.and_then(|d| truthy(d.get("reason"))) {
        format!("incomplete: {}", js_text(Some(reason)))
    } else {
        "Unknown error (no error details in response)".to_owned()
    }
}

/// `encodeTextSignatureV1(item.id, item.phase ?? undefined)`.
fn text_signature(item: &Value) -> String {
    let mut payload = Map::new();
    payload.insert("v".into(), Value::from(1));
    if let Some(id) = item.get("id") {
        payload.insert("id".into(), id.clone());
    }
    if let Some(phase) = truthy(item.get("phase")) {
        payload.insert("phase".into(), phase.clone());
    }
    to_js_string(&Value::Object(payload))
}

fn obj(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn event(kind: &str, fields: Vec<(&str, Value)>) -> (Option<String>, String) {
    let mut m = Map::new();
    m.insert("type".into(), Value::from(kind));
    for (k, v) in fields {
        m.insert(k.to_owned(), v);
    }
    (Some(kind.to_owned()), to_js_string(&Value::Object(m)))
}

/// A non-streaming `Response` body (`object: "response"`) as the stream the Responses API
/// sends for it: per output item `output_item.added` (the item without its text), the
/// summary / content parts with one delta each, the arguments as one delta, then
/// `output_item.done` with the whole item; last `response.completed` with the body (or
/// `response.failed` for a failed one). An error body
/// (`{"error": {...}}`) is the event the SDK throws on.
pub(super) fn body_events(body: &Value) -> Result<Vec<(Option<String>, String)>, ResponseError> {
    let Some(o) = body.as_object() else {
        return Err(ResponseError::Shape(
            "a Responses body must be a JSON object".into(),
        ));
    };
    if o.get("object").and_then(Value::as_str) != Some("response") {
        if o.get("error").is_some_and(is_truthy) {
            return Ok(vec![(None, to_js_string(body))]);
        }
        return Err(ResponseError::Shape(
            "a Responses body must be a Response (object \"response\") or an error".into(),
        ));
    }
    let mut out = Vec::new();
    let mut started = body.clone();
    if let Some(m) = started.as_object_mut() {
        m.insert("output".into(), Value::Array(Vec::new()));
        m.insert("status".into(), Value::from("in_progress"));
        m.remove("usage");
    }
    out.push(event("response.created", vec![("response", started)]));
    let empty = Vec::new();
    let items = o.get("output").and_then(Value::as_array).unwrap_or(&empty);
    for (index, item) in items.iter().enumerate() {
        let at = Value::from(index);
        let id = item.get("id").cloned().unwrap_or(Value::Null);
        let mut head = item.clone();
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let mut middle = Vec::new();
        match kind {
            "reasoning" => {
                if let Some(m) = head.as_object_mut() {
                    m.insert("summary".into(), Value::Array(Vec::new()));
                }
                let parts = item
                    .get("summary")
                    .and_then(Value::as_array)
                    .unwrap_or(&empty);
                for (si, part) in parts.iter().enumerate() {
                    let common = |extra: Vec<(&'static str, Value)>| {
                        let mut f = vec![
                            ("item_id", id.clone()),
                            ("output_index", at.clone()),
                            ("summary_index", Value::from(si)),
                        ];
                        f.extend(extra);
                        f
                    };
                    let text = part.get("text").cloned().unwrap_or(Value::from(""));
                    let mut blank = part.clone();
                    if let Some(m) = blank.as_object_mut() {
                        m.insert("text".into(), Value::from(""));
                    }
                    middle.push(event(
                        "response.reasoning_summary_part.added",
                        common(vec![("part", blank)]),
                    ));
                    middle.push(event(
                        "response.reasoning_summary_text.delta",
                        common(vec![("delta", text)]),
                    ));
                    middle.push(event(
                        "response.reasoning_summary_part.done",
                        common(vec![("part", part.clone())]),
                    ));
                }
            }
            "message" => {
                if let Some(m) = head.as_object_mut() {
                    m.insert("content".into(), Value::Array(Vec::new()));
                    m.insert("status".into(), Value::from("in_progress"));
                }
                let parts = item
                    .get("content")
                    .and_then(Value::as_array)
                    .unwrap_or(&empty);
                for (ci, part) in parts.iter().enumerate() {
                    let common = |extra: Vec<(&'static str, Value)>| {
                        let mut f = vec![
                            ("item_id", id.clone()),
                            ("output_index", at.clone()),
                            ("content_index", Value::from(ci)),
                        ];
                        f.extend(extra);
                        f
                    };
                    let (key, delta_kind) = match part.get("type").and_then(Value::as_str) {
                        Some("refusal") => ("refusal", "response.refusal.delta"),
                        _ => ("text", "response.output_text.delta"),
                    };
                    let text = part.get(key).cloned().unwrap_or(Value::from(""));
                    let mut blank = part.clone();
                    if let Some(m) = blank.as_object_mut() {
                        m.insert(key.into(), Value::from(""));
                    }
                    middle.push(event(
                        "response.content_part.added",
                        common(vec![("part", blank)]),
                    ));
                    middle.push(event(delta_kind, common(vec![("delta", text)])));
                    middle.push(event(
                        "response.content_part.done",
                        common(vec![("part", part.clone())]),
                    ));
                }
            }
            "function_call" => {
                if let Some(m) = head.as_object_mut() {
                    m.insert("arguments".into(), Value::from(""));
                    m.insert("status".into(), Value::from("in_progress"));
                }
                let args = item.get("arguments").cloned().unwrap_or(Value::from(""));
                let common = |extra: (&'static str, Value)| {
                    vec![("item_id", id.clone()), ("output_index", at.clone()), extra]
                };
                if args.as_str() != Some("") {
                    middle.push(event(
                        "response.function_call_arguments.delta",
                        common(("delta", args.clone())),
                    ));
                }
                middle.push(event(
                    "response.function_call_arguments.done",
                    common(("arguments", args)),
                ));
            }
            _ => {}
        }
        out.push(event(
            "response.output_item.added",
            vec![("output_index", at.clone()), ("item", head)],
        ));
        out.extend(middle);
        out.push(event(
            "response.output_item.done",
            vec![("output_index", at), ("item", item.clone())],
        ));
    }
    // `response.completed` carries the status (an `incomplete` one reads as "length", as
    // the recorded max_tokens cases send it); a failed response is `response.failed`.
    let last = match o.get("status").and_then(Value::as_str) {
        Some("failed") => "response.failed",
        _ => "response.completed",
    };
    out.push(event(last, vec![("response", body.clone())]));
    Ok(out)
}

/// [`body_events`] for codex, whose pi-ai reader does not look at a top-level `error`: an
/// error body is refused instead of read as nothing.
pub(super) fn codex_body_events(
    body: &Value,
) -> Result<Vec<(Option<String>, String)>, ResponseError> {
    if body.get("object").and_then(Value::as_str) != Some("response") {
        return Err(ResponseError::Shape(
            "an openai-codex-responses body must be a Response (object \"response\")".into(),
        ));
    }
    body_events(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(api: &str) -> Value {
        json!({"api": api, "provider": "openai", "id": "gpt-5",
               "cost": {"input": 1.0, "output": 10.0, "cacheRead": 0.1, "cacheWrite": 0.0}})
    }

    fn run(api: &str, options: Value, events: &[Value]) -> (Value, Vec<&'static str>) {
        let text = Value::Array(events.to_vec()).to_string();
        let parsed = super::super::parse_response_with(&model(api), &options, &text, 1.0, false)
            .expect("readable");
        (parsed.message, parsed.events)
    }

    fn completed(status: &str, tier: Option<&str>) -> Value {
        json!({"type": "response.completed", "response": {"object": "response", "status": status,
            "service_tier": tier,
            "usage": {"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 200},
                      "output_tokens": 100, "total_tokens": 1100}}})
    }

    #[test]
    fn usage_subtracts_cached_and_tier_prices_only_openai() {
        let (m, _) = run(
            "openai-responses",
            json!({"serviceTier": "flex"}),
            &[completed("completed", None)],
        );
        assert_eq!(m["usage"]["input"], json!(800));
        assert_eq!(m["usage"]["cacheRead"], json!(200));
        assert_eq!(m["usage"]["totalTokens"], json!(1100));
        // flex halves every cost field (calculateCost's float64 arithmetic, then * 0.5)
        let base = 1.0 / 1e6 * 800.0;
        assert_eq!(m["usage"]["cost"]["input"], json!(base * 0.5));
        // response.service_tier wins over the option
        let (m, _) = run(
            "openai-responses",
            json!({"serviceTier": "flex"}),
            &[completed("completed", Some("priority"))],
        );
        assert_eq!(m["usage"]["cost"]["input"], json!(base * 2.0));
        let (m, _) = run(
            "azure-openai-responses",
            json!({}),
            &[completed("completed", Some("priority"))],
        );
        assert_eq!(m["usage"]["cost"]["input"], json!(base));
    }

    #[test]
    fn codex_maps_incomplete_and_stops_reading() {
        let mut inc = completed("incomplete", None);
        inc["type"] = json!("response.incomplete");
        let later = json!({"type": "error", "message": "late"});
        let (m, ev) = run(
            "openai-codex-responses",
            json!({}),
            &[inc.clone(), later.clone()],
        );
        assert_eq!(m["stopReason"], json!("length"));
        assert_eq!(ev, vec!["start", "done"]);
        // openai-responses ignores response.incomplete but reads on: the error throws.
        let (m, _) = run("openai-responses", json!({}), &[inc, later]);
        assert_eq!(m["errorMessage"], json!("Error Code undefined: late"));
        assert_eq!(m["usage"]["input"], json!(0));
    }

    #[test]
    fn codex_unknown_status_is_stop_and_error_texts() {
        let (m, _) = run(
            "openai-codex-responses",
            json!({}),
            &[completed("paused", None)],
        );
        assert_eq!(m["stopReason"], json!("stop"));
        let (m, _) = run("openai-responses", json!({}), &[completed("paused", None)]);
        assert_eq!(m["errorMessage"], json!("Unhandled stop reason: paused"));
        let (m, _) = run(
            "openai-codex-responses",
            json!({}),
            &[json!({"type": "error", "code": "rate"})],
        );
        assert_eq!(m["errorMessage"], json!("Codex error: rate"));
        let (m, _) = run(
            "openai-codex-responses",
            json!({}),
            &[json!({"type": "error"})],
        );
        assert_eq!(
            m["errorMessage"],
            json!("Codex error: {\"type\":\"error\"}")
        );
        let failed = json!({"type": "response.failed", "response": {"error": {"code": "x", "message": "boom"}}});
        let (m, _) = run(
            "openai-codex-responses",
            json!({}),
            std::slice::from_ref(&failed),
        );
        assert_eq!(m["errorMessage"], json!("boom"));
        let (m, _) = run("openai-responses", json!({}), &[failed]);
        assert_eq!(m["errorMessage"], json!("x: boom"));
    }

    #[test]
    fn sdk_throws_on_a_top_level_error_but_codex_skips_it() {
        let chunk = json!({"error": {"message": "quota", "type": "insufficient_quota"}});
        let (m, _) = run("openai-responses", json!({}), std::slice::from_ref(&chunk));
        assert_eq!(m["errorMessage"], json!("quota"));
        let (m, _) = run(
            "openai-responses",
            json!({}),
            &[json!({"error": {"code": 5}})],
        );
        assert_eq!(m["errorMessage"], json!("{\"code\":5}"));
        // codex: no `type`, skipped; the stream then ends without its end event.
        let (m, _) = run("openai-codex-responses", json!({}), &[chunk]);
        assert_eq!(m["stopReason"], json!("error"));
        assert!(m["errorMessage"]
            .as_str()
            .unwrap()
            .contains("stream was cut"));
    }

    #[test]
    fn tool_call_keeps_partial_json_and_turns_stop_into_tool_use() {
        let events = [
            json!({"type": "response.output_item.added", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "delta": "{\"a\": tr"}),
            json!({"type": "response.output_item.done", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{\"a\": true}"}}),
            completed("completed", None),
        ];
        let (m, ev) = run("openai-responses", json!({}), &events);
        assert_eq!(
            m["content"][0],
            json!({"type": "toolCall", "id": "call_1|fc_1", "name": "read",
            "arguments": {"a": true}, "partialJson": "{\"a\": tr"})
        );
        assert_eq!(m["stopReason"], json!("toolUse"));
        assert_eq!(
            ev,
            vec![
                "start",
                "toolcall_start",
                "toolcall_delta",
                "toolcall_end",
                "done"
            ]
        );
        // incomplete stays "length" even with a tool call
        let mut events = events.to_vec();
        events[3] = completed("incomplete", None);
        assert_eq!(
            run("openai-responses", json!({}), &events).0["stopReason"],
            json!("length")
        );
    }

    #[test]
    fn missing_item_is_pi_ais_type_error_and_cut_stream_is_safe() {
        let (m, _) = run(
            "openai-responses",
            json!({}),
            &[json!({"type": "response.output_item.added"})],
        );
        assert_eq!(
            m["errorMessage"],
            json!("Cannot read properties of undefined (reading 'type')")
        );
        let text = json!([{"type": "response.output_item.added", "item": {"type": "message", "id": "m", "content": []}}]).to_string();
        let safe = super::super::parse_response_with(
            &model("openai-responses"),
            &json!({}),
            &text,
            1.0,
            false,
        )
        .unwrap();
        assert_eq!(safe.message["stopReason"], json!("error"));
        let exact = super::super::parse_response_with(
            &model("openai-responses"),
            &json!({}),
            &text,
            1.0,
            true,
        )
        .unwrap();
        assert_eq!(exact.message["stopReason"], json!("stop"));
        // an empty stream is pi-ai's `done`, also when safe
        let empty = super::super::parse_response_with(
            &model("openai-responses"),
            &json!({}),
            "[]",
            1.0,
            false,
        )
        .unwrap();
        assert_eq!(empty.events, vec!["start", "done"]);
    }

    #[test]
    fn body_reads_as_its_stream() {
        let body = json!({"object": "response", "id": "resp_1", "status": "completed",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}]},
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "phase": "final_answer",
                 "content": [{"type": "output_text", "text": "hi", "annotations": []}, {"type": "refusal", "refusal": "no"}]},
                {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{\"x\":1}"}],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}});
        let parsed = super::super::parse_response_with(
            &model("openai-responses"),
            &json!({}),
            &body.to_string(),
            1.0,
            false,
        )
        .unwrap();
        let c = &parsed.message["content"];
        assert_eq!(c[0]["thinking"], json!("a\n\nb"));
        assert_eq!(
            c[0]["thinkingSignature"],
            json!(to_js_string(&body["output"][0]))
        );
        assert_eq!(c[1]["text"], json!("hino"));
        assert_eq!(
            c[1]["textSignature"],
            json!("{\"v\":1,\"id\":\"msg_1\",\"phase\":\"final_answer\"}")
        );
        assert_eq!(c[2]["arguments"], json!({"x": 1}));
        assert_eq!(parsed.message["stopReason"], json!("toolUse"));
        assert_eq!(parsed.message["usage"]["totalTokens"], json!(15));
    }
}
