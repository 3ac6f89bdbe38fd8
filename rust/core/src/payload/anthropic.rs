//! The Anthropic Messages body of pi-mono 0.58.3 `packages/ai/src/providers/anthropic.ts`
//! (`buildParams`, `convertMessages`, `convertTools`, `streamSimpleAnthropic`).

use serde_json::{json, Map, Value};

use super::model::{
    adjust_max_tokens_for_thinking, base_options, blocks_of, number, user_parts, Context, Model,
    Options,
};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::raw::{self, text_raw, Block, BlockFields, BlockKind, MsgFields, Out, RawStr};
use super::transform::{anthropic_tool_call_id, transform};
use super::{Payload, PayloadError};
use crate::base::{is_truthy, js_trim};
use crate::transcript::{Message, Transcript};

/// Claude Code 2.x tool names in their canonical casing (anthropic.ts `claudeCodeTools`): the
/// OAuth path renames tools that match one case-insensitively.
const CLAUDE_CODE_TOOLS: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

fn claude_code_name(name: &str) -> String {
    let lower = name.to_lowercase();
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.to_lowercase() == lower)
        .map_or_else(|| name.to_owned(), |t| (*t).to_owned())
}

/// anthropic.ts `supportsAdaptiveThinking`: Opus 4.6 and Sonnet 4.6.
fn supports_adaptive_thinking(id: &str) -> bool {
    ["opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"]
        .iter()
        .any(|p| id.contains(p))
}

/// `streamSimpleAnthropic`: `SimpleStreamOptions` → `AnthropicOptions`.
pub(super) fn simple_options(model: &Model, simple: &Options<'_>) -> Map<String, Value> {
    let mut out = base_options(model, simple.map);
    let Some(level) = simple.truthy("reasoning").and_then(Value::as_str) else {
        out.insert("thinkingEnabled".to_owned(), Value::Bool(false));
        return out;
    };
    out.insert("thinkingEnabled".to_owned(), Value::Bool(true));
    if supports_adaptive_thinking(&model.id) {
        let effort = match level {
            "minimal" | "low" => "low",
            "medium" => "medium",
            "xhigh" if model.id.contains("opus-4-6") || model.id.contains("opus-4.6") => "max",
            _ => "high",
        };
        out.insert("effort".to_owned(), json!(effort));
        return out;
    }
    let base_max = out.get("maxTokens").and_then(Value::as_f64).unwrap_or(0.0);
    let (max_tokens, budget) = adjust_max_tokens_for_thinking(
        base_max,
        model.max_tokens,
        level,
        simple.get("thinkingBudgets"),
    );
    out.insert("maxTokens".to_owned(), number(max_tokens));
    out.insert("thinkingBudgetTokens".to_owned(), number(budget));
    out
}

pub(super) fn build(
    model: &Model,
    context: &Context<'_>,
    options: &Options<'_>,
    now_ms: i64,
) -> Result<Payload, PayloadError> {
    let oauth = options
        .str("apiKey")
        .is_some_and(|k| k.contains("sk-ant-oat"));
    // anthropic.ts `getCacheControl` (PI_CACHE_RETENTION is not read: the environment must not
    // change a payload silently).
    let retention = options
        .truthy("cacheRetention")
        .and_then(Value::as_str)
        .unwrap_or("short");
    let cache_control = (retention != "none").then(|| {
        if retention == "long" && model.base_url.contains("api.anthropic.com") {
            json!({"type": "ephemeral", "ttl": "1h"})
        } else {
            json!({"type": "ephemeral"})
        }
    });

    let mut params = Map::new();
    params.insert("model".to_owned(), json!(model.id));
    // The messages straight from the stored bytes when every message has a shape that path
    // reads, else through value trees.
    let messages_json = context
        .raw
        .then(|| write_messages_raw(context.llm, model, oauth, cache_control.as_ref()))
        .flatten();
    let messages = match messages_json {
        // Written in place of this placeholder by `Payload`.
        Some(_) => Value::Null,
        None => Value::Array(convert_messages(
            context.take_messages()?,
            model,
            oauth,
            cache_control.as_ref(),
            now_ms,
        )),
    };
    params.insert("messages".to_owned(), messages);
    let max_tokens = match options.truthy("maxTokens") {
        Some(v) => v.clone(),
        // `(model.maxTokens / 3) | 0`
        None => Value::from((model.max_tokens / 3.0).trunc() as i32),
    };
    params.insert("max_tokens".to_owned(), max_tokens);
    params.insert("stream".to_owned(), Value::Bool(true));

    let text_block = |text: &str| {
        let mut block = Map::new();
        block.insert("type".to_owned(), json!("text"));
        block.insert("text".to_owned(), json!(text));
        if let Some(cc) = &cache_control {
            block.insert("cache_control".to_owned(), cc.clone());
        }
        Value::Object(block)
    };
    if oauth {
        let mut system = vec![text_block(
            "You are Claude Code, Anthropic's official CLI for Claude.",
        )];
        if let Some(prompt) = context.system() {
            system.push(text_block(prompt));
        }
        params.insert("system".to_owned(), Value::Array(system));
    } else if let Some(prompt) = context.system() {
        params.insert("system".to_owned(), Value::Array(vec![text_block(prompt)]));
    }

    let thinking_enabled = options.truthy("thinkingEnabled").is_some();
    if let Some(t) = options.get("temperature") {
        if !thinking_enabled {
            params.insert("temperature".to_owned(), t.clone());
        }
    }
    if let Some(tools) = context.tools() {
        params.insert("tools".to_owned(), convert_tools(tools, oauth));
    }
    if thinking_enabled && model.reasoning {
        if supports_adaptive_thinking(&model.id) {
            params.insert("thinking".to_owned(), json!({"type": "adaptive"}));
            if let Some(effort) = options.truthy("effort") {
                params.insert("output_config".to_owned(), json!({"effort": effort}));
            }
        } else {
            let budget = options
                .truthy("thinkingBudgetTokens")
                .cloned()
                .unwrap_or_else(|| Value::from(1024));
            params.insert(
                "thinking".to_owned(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
    }
    if let Some(metadata) = options.truthy("metadata") {
        if let Some(user_id @ Value::String(_)) = metadata.get("user_id") {
            params.insert("metadata".to_owned(), json!({"user_id": user_id}));
        }
    }
    if let Some(choice) = options.truthy("toolChoice") {
        let choice = match choice {
            Value::String(s) => json!({"type": s}),
            other => other.clone(),
        };
        params.insert("tool_choice".to_owned(), choice);
    }
    Ok(Payload::spliced(
        Value::Object(params),
        &["messages"],
        messages_json,
    ))
}

fn image_block(block: &Value) -> Value {
    let mut source = Map::new();
    source.insert("type".to_owned(), json!("base64"));
    if let Some(m) = block.get("mimeType") {
        source.insert("media_type".to_owned(), m.clone());
    }
    if let Some(d) = block.get("data") {
        source.insert("data".to_owned(), d.clone());
    }
    json!({"type": "image", "source": Value::Object(source)})
}

fn text_of(block: &Value) -> &str {
    block
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// anthropic.ts `convertContentBlocks`: a tool result's content.
fn tool_result_content(content: &[Value]) -> Value {
    let has_images = content
        .iter()
        .any(|c| c.get("type").and_then(Value::as_str) == Some("image"));
    if !has_images {
        let texts: Vec<&str> = content.iter().map(text_of).collect();
        return Value::String(texts.join("\n"));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|block| {
            if block.get("type").and_then(Value::as_str) == Some("text") {
                json!({"type": "text", "text": text_of(block)})
            } else {
                image_block(block)
            }
        })
        .collect();
    if !blocks.iter().any(|b| b["type"] == "text") {
        blocks.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(blocks)
}

fn tool_result(msg: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".to_owned(), json!("tool_result"));
    if let Some(id) = msg.get("toolCallId") {
        out.insert("tool_use_id".to_owned(), id.clone());
    }
    out.insert("content".to_owned(), tool_result_content(blocks_of(msg)));
    if let Some(e) = msg.get("isError") {
        out.insert("is_error".to_owned(), e.clone());
    }
    Value::Object(out)
}

fn convert_messages(
    messages: Vec<Value>,
    model: &Model,
    oauth: bool,
    cache_control: Option<&Value>,
    now_ms: i64,
) -> Vec<Value> {
    let normalize = |id: &str, _: &Value| anthropic_tool_call_id(id);
    let messages = transform(messages, model, Some(&normalize), now_ms);
    let mut params: Vec<Value> = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        let msg = &messages[i];
        match msg.get("role").and_then(Value::as_str) {
            Some("user") => match msg.get("content") {
                Some(Value::String(s)) if !js_trim(s).is_empty() => {
                    params.push(json!({"role": "user", "content": s}));
                }
                Some(Value::Array(items)) => {
                    let blocks = user_parts(
                        items,
                        model.accepts_images,
                        |item| {
                            let text = text_of(item);
                            (!js_trim(text).is_empty())
                                .then(|| json!({"type": "text", "text": text}))
                        },
                        image_block,
                    );
                    if !blocks.is_empty() {
                        params.push(json!({"role": "user", "content": blocks}));
                    }
                }
                _ => {}
            },
            Some("assistant") => {
                let mut blocks = Vec::new();
                for block in blocks_of(msg) {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            let text = text_of(block);
                            if !js_trim(text).is_empty() {
                                blocks.push(json!({"type": "text", "text": text}));
                            }
                        }
                        Some("thinking") => {
                            let signature = block.get("thinkingSignature");
                            if block.get("redacted").is_some_and(is_truthy) {
                                let mut b = Map::new();
                                b.insert("type".to_owned(), json!("redacted_thinking"));
                                if let Some(s) = signature {
                                    b.insert("data".to_owned(), s.clone());
                                }
                                blocks.push(Value::Object(b));
                                continue;
                            }
                            let thinking = block
                                .get("thinking")
                                .and_then(Value::as_str)
                                .unwrap_or_default();
                            if js_trim(thinking).is_empty() {
                                continue;
                            }
                            match signature.and_then(Value::as_str) {
                                Some(sig) if !js_trim(sig).is_empty() => blocks.push(json!({
                                    "type": "thinking",
                                    "thinking": thinking,
                                    "signature": sig,
                                })),
                                _ => blocks.push(json!({"type": "text", "text": thinking})),
                            }
                        }
                        Some("toolCall") => {
                            let name = block
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default();
                            let name = if oauth {
                                claude_code_name(name)
                            } else {
                                name.to_owned()
                            };
                            let input = match block.get("arguments") {
                                Some(v) if !v.is_null() => v.clone(),
                                _ => json!({}),
                            };
                            let mut b = Map::new();
                            b.insert("type".to_owned(), json!("tool_use"));
                            if let Some(id) = block.get("id") {
                                b.insert("id".to_owned(), id.clone());
                            }
                            b.insert("name".to_owned(), json!(name));
                            b.insert("input".to_owned(), input);
                            blocks.push(Value::Object(b));
                        }
                        // A server compaction block, verbatim (`payload::compaction_view` left
                        // only the one this request sends, first in its turn).
                        Some("compaction") => {
                            if let Some(raw @ Value::Object(_)) = block.get("raw") {
                                blocks.push(raw.clone());
                            }
                        }
                        _ => {}
                    }
                }
                if !blocks.is_empty() {
                    params.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Some("toolResult") => {
                // Consecutive tool results share one user message (needed by z.ai's endpoint).
                let mut results = vec![tool_result(msg)];
                while i + 1 < messages.len()
                    && messages[i + 1].get("role").and_then(Value::as_str) == Some("toolResult")
                {
                    i += 1;
                    results.push(tool_result(&messages[i]));
                }
                params.push(json!({"role": "user", "content": results}));
            }
            _ => {}
        }
        i += 1;
    }

    // The cache breakpoint on the last block of the last message, when it is a user message.
    if let (Some(cc), Some(last)) = (cache_control, params.last_mut()) {
        if last["role"] == "user" {
            match last.get_mut("content") {
                Some(Value::Array(blocks)) => {
                    if let Some(Value::Object(block)) = blocks.last_mut() {
                        if matches!(
                            block.get("type").and_then(Value::as_str),
                            Some("text" | "image" | "tool_result")
                        ) {
                            block.insert("cache_control".to_owned(), cc.clone());
                        }
                    }
                }
                Some(content @ Value::String(_)) => {
                    let text = content.take();
                    *content = json!([{"type": "text", "text": text, "cache_control": cc}]);
                }
                _ => {}
            }
        }
    }
    params
}

fn convert_tools(tools: &[Value], oauth: bool) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                let name = if oauth {
                    claude_code_name(name)
                } else {
                    name.to_owned()
                };
                let schema = tool.get("parameters");
                let field = |key: &str, default: Value| {
                    schema
                        .and_then(|s| s.get(key))
                        .filter(|v| is_truthy(v))
                        .cloned()
                        .unwrap_or(default)
                };
                let mut out = Map::new();
                out.insert("name".to_owned(), json!(name));
                if let Some(d) = tool.get("description") {
                    out.insert("description".to_owned(), d.clone());
                }
                out.insert(
                    "input_schema".to_owned(),
                    json!({
                        "type": "object",
                        "properties": field("properties", json!({})),
                        "required": field("required", json!([])),
                    }),
                );
                Value::Object(out)
            })
            .collect(),
    )
}

/// A message as [`write_messages_raw`] wrote it, cached with the message (see
/// [`Message::derived`]): a session's messages are sent again on every request, and the
/// output of each depends only on its own text and on what the key fields record.
struct Written {
    key: WrittenKey,
    bytes: Box<[u8]>,
    /// User messages: nothing written (0), an array content (1), or a string content whose
    /// string starts `n - 2` bytes into `bytes` (`n`). Assistant turns: written (1) or not.
    shape: u32,
    /// An assistant turn's tool calls.
    calls: Box<[CachedCall]>,
}

/// A tool call of a cached assistant turn: its stored id's span in the message text, and the
/// id the replay layer gave it when that differs.
type CachedCall = ((u32, u32), Option<Arc<str>>);

#[derive(PartialEq)]
enum WrittenKey {
    User { accepts_images: bool },
    Assistant { same_model: bool, oauth: bool },
    ToolResult { new_id: Option<Arc<str>> },
}

/// A tool-call id after the replay layer: as stored, or as normalised.
#[derive(Clone)]
enum CallId<'a> {
    Stored(&'a str),
    New(Arc<str>),
}

impl CallId<'_> {
    fn as_str(&self) -> &str {
        match self {
            CallId::Stored(s) => s,
            CallId::New(s) => s,
        }
    }
}

/// Writes `message` under `key`: the cached bytes when they were written under the same key,
/// else `write` (then cached when the message has nothing cached yet).
fn write_cached<'m>(
    out: &mut Out,
    message: &'m Message,
    key: WrittenKey,
    write: impl FnOnce(&mut Out) -> Option<(u32, Vec<CachedCall>)>,
) -> Option<(u32, std::borrow::Cow<'m, [CachedCall]>)> {
    if let Some(written) = message.derived::<Written>() {
        if written.key == key {
            out.buf.extend_from_slice(&written.bytes);
            return Some((written.shape, std::borrow::Cow::Borrowed(&written.calls)));
        }
    }
    let start = out.len();
    let (shape, calls) = write(out)?;
    message.set_derived(Written {
        key,
        bytes: out.buf[start..].into(),
        shape,
        calls: calls.clone().into(),
    });
    Some((shape, std::borrow::Cow::Owned(calls)))
}

/// [`convert_messages`] written straight from the stored messages: unmodified text, tool
/// arguments, results and image data are copied from the stored bytes, and each message's
/// output is cached with it for the next request (the replay layer of `raw::replay`, run
/// here one message at a time so a cached message is not read again). `None` when a message
/// has a shape only the value-tree path handles (the caller then runs that).
fn write_messages_raw(
    messages: &Transcript,
    model: &Model,
    oauth: bool,
    cache_control: Option<&Value>,
) -> Option<Vec<u8>> {
    let total: usize = messages.messages().iter().map(|m| m.len()).sum();
    let mut out = Out::with_capacity(total + 64);
    out.raw("[");
    // Of the last message written: whether it is a user message, and (for a string content)
    // where its string starts. The cache breakpoint edits it at the end.
    let mut last: Option<(bool, Option<usize>)> = None;
    // Consecutive tool results share one user message (needed by z.ai's endpoint): whether
    // one is open.
    let mut results_open = false;
    // A remapped id's stored text -> its new id (the last one wins).
    let mut id_map: FxHashMap<&str, Arc<str>> = FxHashMap::default();
    // The calls of the last assistant turn waiting for results, and the results seen since.
    let mut pending: Vec<CallId<'_>> = Vec::new();
    let mut answered: Vec<CallId<'_>> = Vec::new();

    let open_result = |out: &mut Out, results_open: &mut bool, last: &mut Option<_>| {
        if *results_open {
            out.raw(",");
        } else {
            if last.is_some() {
                out.raw(",");
            }
            out.raw(r#"{"role":"user","content":["#);
            *results_open = true;
            *last = Some((true, None));
        }
    };
    let close_results = |out: &mut Out, results_open: &mut bool| {
        if std::mem::take(results_open) {
            out.raw("]}");
        }
    };
    // Synthetic results for the pending calls no result answered (transform-messages.ts).
    let flush = |out: &mut Out,
                 results_open: &mut bool,
                 last: &mut Option<_>,
                 pending: &mut Vec<CallId<'_>>,
                 answered: &mut Vec<CallId<'_>>| {
        for call in pending.drain(..) {
            if answered.iter().any(|a| a.as_str() == call.as_str()) {
                continue;
            }
            open_result(out, results_open, last);
            out.raw(r#"{"type":"tool_result","tool_use_id":"#);
            out.str(call.as_str());
            out.raw(r#","content":"No result provided","is_error":true}"#);
        }
        answered.clear();
    };

    for message in messages.messages() {
        let fields = MsgFields::of(message)?;
        match raw::plain(fields.role)? {
            Some("user") => {
                if !pending.is_empty() {
                    flush(
                        &mut out,
                        &mut results_open,
                        &mut last,
                        &mut pending,
                        &mut answered,
                    );
                }
                close_results(&mut out, &mut results_open);
                let start = out.len();
                if last.is_some() {
                    out.raw(",");
                }
                let at = out.len();
                let key = WrittenKey::User {
                    accepts_images: model.accepts_images,
                };
                let (shape, _) = write_cached(&mut out, message, key, |out| {
                    let start = out.len();
                    let shape = match write_user(out, &fields, model)? {
                        None => 0,
                        Some((_, None)) => 1,
                        Some((_, Some(string_at))) => u32::try_from(string_at - start + 2).ok()?,
                    };
                    Some((shape, Vec::new()))
                })?;
                match shape {
                    0 => out.buf.truncate(start),
                    1 => last = Some((true, None)),
                    n => last = Some((true, Some(at + n as usize - 2))),
                }
            }
            Some("assistant") => {
                let same_model = raw::is_same_model(&fields, model)?;
                if !pending.is_empty() {
                    flush(
                        &mut out,
                        &mut results_open,
                        &mut last,
                        &mut pending,
                        &mut answered,
                    );
                }
                // An errored or aborted turn is dropped, its calls included; the replay layer
                // still remaps their ids (transform-messages.ts maps before it filters).
                let errored = matches!(raw::plain(fields.stop_reason)?, Some("error" | "aborted"));
                if !errored {
                    close_results(&mut out, &mut results_open);
                }
                let start = out.len();
                if !errored && last.is_some() {
                    out.raw(",");
                }
                let key = WrittenKey::Assistant { same_model, oauth };
                let text_start = message.as_str().as_ptr() as usize;
                let (wrote, calls) = write_cached(&mut out, message, key, |out| {
                    let mut blocks = Vec::new();
                    let mut local_map = FxHashMap::default();
                    raw::replay_assistant(
                        &fields,
                        model,
                        &anthropic_tool_call_id,
                        &mut local_map,
                        &mut blocks,
                    )?;
                    let mut calls = Vec::new();
                    for block in blocks.iter().filter(|b| b.kind == BlockKind::ToolCall) {
                        let stored = raw::plain(block.fields.id)?.unwrap_or_default();
                        let offset = (stored.as_ptr() as usize).checked_sub(text_start)?;
                        let span = (
                            u32::try_from(offset).ok()?,
                            u32::try_from(offset + stored.len()).ok()?,
                        );
                        calls.push((span, block.new_id.as_deref().map(Arc::from)));
                    }
                    let wrote = write_assistant(out, &blocks, oauth)?;
                    Some((u32::from(wrote), calls))
                })?;
                if errored || wrote == 0 {
                    out.buf.truncate(start);
                } else {
                    last = Some((false, None));
                }
                let text = message.as_str();
                let stored_id = |span: (u32, u32)| text.get(span.0 as usize..span.1 as usize);
                for (span, new_id) in calls.iter() {
                    if let Some(new_id) = new_id {
                        id_map.insert(stored_id(*span)?, Arc::clone(new_id));
                    }
                }
                if errored {
                    continue;
                }
                let before = pending.len();
                for (span, new_id) in calls.iter() {
                    pending.push(match new_id {
                        Some(id) => CallId::New(Arc::clone(id)),
                        None => CallId::Stored(stored_id(*span)?),
                    });
                }
                if pending.len() > before {
                    answered.clear();
                }
            }
            Some("toolResult") => {
                let id = raw::plain(fields.tool_call_id)?;
                let new_id = id
                    .and_then(|id| id_map.get(id))
                    .filter(|n| !n.is_empty())
                    .cloned();
                if let Some(id) = id {
                    answered.push(match &new_id {
                        Some(n) => CallId::New(Arc::clone(n)),
                        None => CallId::Stored(id),
                    });
                }
                open_result(&mut out, &mut results_open, &mut last);
                let key = WrittenKey::ToolResult {
                    new_id: new_id.clone(),
                };
                write_cached(&mut out, message, key, |out| {
                    write_tool_result(out, &fields, new_id.as_deref())?;
                    Some((0, Vec::new()))
                })?;
            }
            // Other roles reach no builder's output; the value path handles them.
            _ => return None,
        }
    }
    close_results(&mut out, &mut results_open);
    if let (Some(cc), Some((true, string_at))) = (cache_control, last) {
        match string_at {
            // `{"role":"user","content":"..."}`: the content becomes
            // `[{"type":"text","text":"...","cache_control":cc}]`.
            Some(at) => {
                let text = out.buf[at..out.len() - 1].to_vec();
                out.buf.truncate(at);
                out.raw(r#"[{"type":"text","text":"#);
                out.buf.extend_from_slice(&text);
            }
            // The last block (text, image or tool_result) ends the buffer: `...}]}`.
            None => out.buf.truncate(out.len() - 3),
        }
        out.raw(r#","cache_control":"#);
        out.value(cc);
        out.raw("}]}");
    }
    out.raw("]");
    Some(out.buf)
}

/// A user message: `Some(None)` when it has nothing to send (nothing written), else that it
/// is a user message and where its string content starts.
#[allow(clippy::option_option)]
fn write_user(
    out: &mut Out,
    fields: &MsgFields<'_>,
    model: &Model,
) -> Option<Option<(bool, Option<usize>)>> {
    let Some(content) = fields.content else {
        return Some(None);
    };
    match content.as_bytes().first() {
        Some(b'"') => {
            let s = RawStr::of(content)?;
            if s.is_blank() {
                return Some(None);
            }
            out.raw(r#"{"role":"user","content":"#);
            let at = out.len();
            out.copy_str(&s);
            out.raw("}");
            Some(Some((true, Some(at))))
        }
        Some(b'[') => {
            let start = out.len();
            out.raw(r#"{"role":"user","content":["#);
            let mut any = false;
            fields.for_each_block(|block| {
                if block.is("text")? {
                    let text = text_raw(block.text)?;
                    if text.as_ref().is_none_or(RawStr::is_blank) {
                        return Some(());
                    }
                    if any {
                        out.raw(",");
                    }
                    out.raw(r#"{"type":"text","text":"#);
                    write_opt_str(out, text.as_ref());
                    out.raw("}");
                } else if model.accepts_images {
                    if any {
                        out.raw(",");
                    }
                    write_image(out, &block);
                } else {
                    return Some(());
                }
                any = true;
                Some(())
            })?;
            if !any {
                out.buf.truncate(start);
                return Some(None);
            }
            out.raw("]}");
            Some(Some((true, None)))
        }
        _ => Some(None),
    }
}

fn write_opt_str(out: &mut Out, s: Option<&RawStr<'_>>) {
    match s {
        Some(s) => out.copy_str(s),
        None => out.raw(r#""""#),
    }
}

fn write_image(out: &mut Out, block: &BlockFields<'_>) {
    out.raw(r#"{"type":"image","source":{"type":"base64""#);
    if let Some(m) = block.mime_type {
        out.raw(r#","media_type":"#);
        out.copy(m);
    }
    if let Some(d) = block.data {
        out.raw(r#","data":"#);
        out.copy(d);
    }
    out.raw("}}");
}

/// An assistant message; `false` when it has no block to send (nothing written then).
fn write_assistant(out: &mut Out, blocks: &[Block<'_>], oauth: bool) -> Option<bool> {
    let start = out.len();
    out.raw(r#"{"role":"assistant","content":["#);
    let mut any = false;
    let mut sep = |out: &mut Out| {
        if any {
            out.raw(",");
        }
        any = true;
    };
    for block in blocks {
        let f = &block.fields;
        match block.kind {
            BlockKind::Text | BlockKind::ConvertedText => {
                let Some(text) = text_raw(f.text)? else {
                    continue;
                };
                if text.is_blank() {
                    continue;
                }
                sep(out);
                out.raw(r#"{"type":"text","text":"#);
                out.copy_str(&text);
                out.raw("}");
            }
            BlockKind::Thinking => {
                if f.redacted.is_some_and(raw::raw_truthy) {
                    sep(out);
                    out.raw(r#"{"type":"redacted_thinking""#);
                    if let Some(s) = f.thinking_signature {
                        out.raw(r#","data":"#);
                        out.copy(s);
                    }
                    out.raw("}");
                    continue;
                }
                let Some(thinking) = text_raw(f.thinking)? else {
                    continue;
                };
                if thinking.is_blank() {
                    continue;
                }
                let signature = text_raw(f.thinking_signature)?.filter(|s| !s.is_blank());
                sep(out);
                match signature {
                    Some(sig) => {
                        out.raw(r#"{"type":"thinking","thinking":"#);
                        out.copy_str(&thinking);
                        out.raw(r#","signature":"#);
                        out.copy_str(&sig);
                        out.raw("}");
                    }
                    None => {
                        out.raw(r#"{"type":"text","text":"#);
                        out.copy_str(&thinking);
                        out.raw("}");
                    }
                }
            }
            BlockKind::ToolCall => {
                sep(out);
                out.raw(r#"{"type":"tool_use""#);
                out.id(r#","id":"#, block.new_id.as_deref(), f.id);
                out.raw(r#","name":"#);
                let name = text_raw(f.name)?;
                if oauth {
                    let text = name.as_ref().map(RawStr::text).unwrap_or_default();
                    out.str(&claude_code_name(&text));
                } else {
                    write_opt_str(out, name.as_ref());
                }
                out.raw(r#","input":"#);
                match f.arguments {
                    Some(v) if v != "null" => out.copy(v),
                    _ => out.raw("{}"),
                }
                out.raw("}");
            }
            BlockKind::Other => {
                if f.is("compaction")? {
                    if let Some(raw) = f.compaction_raw() {
                        sep(out);
                        out.copy(raw);
                    }
                }
            }
        }
    }
    if !any {
        out.buf.truncate(start);
        return Some(false);
    }
    out.raw("]}");
    Some(true)
}

/// One `tool_result` block (anthropic.ts `convertContentBlocks` for its content); `new_id`
/// is the id the replay layer gave its call, when it changed.
fn write_tool_result(out: &mut Out, fields: &MsgFields<'_>, new_id: Option<&str>) -> Option<()> {
    out.raw(r#"{"type":"tool_result""#);
    out.id(r#","tool_use_id":"#, new_id, fields.tool_call_id);
    let mut has_image = false;
    let mut has_text = false;
    fields.for_each_block(|block| {
        has_image |= block.is("image")?;
        has_text |= block.is("text")?;
        Some(())
    })?;
    out.raw(r#","content":"#);
    let mut first = true;
    if !has_image {
        out.raw("\"");
        fields.for_each_block(|block| {
            if !std::mem::take(&mut first) {
                out.raw("\\n");
            }
            if let Some(text) = text_raw(block.text)? {
                text.write_inner(out);
            }
            Some(())
        })?;
        out.raw("\"");
    } else {
        out.raw("[");
        if !has_text {
            out.raw(r#"{"type":"text","text":"(see attached image)"},"#);
        }
        fields.for_each_block(|block| {
            if !std::mem::take(&mut first) {
                out.raw(",");
            }
            if block.is("text")? {
                out.raw(r#"{"type":"text","text":"#);
                write_opt_str(out, text_raw(block.text)?.as_ref());
                out.raw("}");
            } else {
                write_image(out, &block);
            }
            Some(())
        })?;
        out.raw("]");
    }
    if let Some(e) = fields.is_error {
        out.raw(r#","is_error":"#);
        out.copy(e);
    }
    out.raw("}");
    Some(())
}
