//! The Anthropic Messages body of pi-mono 0.58.3 `packages/ai/src/providers/anthropic.ts`
//! (`buildParams`, `convertMessages`, `convertTools`, `streamSimpleAnthropic`).

use serde_json::{json, Map, Value};

use super::model::{
    adjust_max_tokens_for_thinking, base_options, blocks_of, number, Build, Model, Options,
};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::raw::{self, BlockKind, MsgFields, Out, RawStr};
use super::transform::{anthropic_tool_call_id, transform};
use super::view::{kind_of, write_id, write_opt_str, BlockKey, BlockView, Field, MsgView};
use super::{Payload, PayloadError};
use crate::base::is_truthy;
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

pub(super) fn build(input: &Build<'_>) -> Result<Payload, PayloadError> {
    let (model, context, options, now_ms) = input.parts();
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
    let from_bytes = context
        .raw
        .then(|| write_messages_raw(context.llm, model, oauth, cache_control.as_ref()))
        .flatten();
    let (messages_json, from_bytes) = match from_bytes {
        Some(json) => (json, true),
        None => (
            convert_messages(
                context.take_messages()?,
                model,
                oauth,
                cache_control.as_ref(),
                now_ms,
            ),
            false,
        ),
    };
    // Written in place of this placeholder by `Payload`.
    params.insert("messages".to_owned(), Value::Null);
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
    Ok(Payload::spliced_from(
        Value::Object(params),
        &["messages"],
        messages_json,
        from_bytes,
    ))
}

/// The messages array as it is written, shared by both paths: consecutive tool results share
/// one user message (needed by z.ai's endpoint), and the cache breakpoint goes on the last
/// block of the last message when that is a user message.
struct Turns {
    out: Out,
    /// Of the last message written: whether it is a user message, and (for a string content)
    /// where its string starts. The cache breakpoint edits it at the end.
    last: Option<(bool, Option<usize>)>,
    /// Whether a user message of tool results is open.
    results_open: bool,
}

impl Turns {
    fn with_capacity(n: usize) -> Turns {
        let mut out = Out::with_capacity(n);
        out.raw("[");
        Turns {
            out,
            last: None,
            results_open: false,
        }
    }

    /// Opens the user message of tool results, or goes on in the open one.
    fn open_result(&mut self) {
        if self.results_open {
            self.out.raw(",");
        } else {
            if self.last.is_some() {
                self.out.raw(",");
            }
            self.out.raw(r#"{"role":"user","content":["#);
            self.results_open = true;
            self.last = Some((true, None));
        }
    }

    fn close_results(&mut self) {
        if std::mem::take(&mut self.results_open) {
            self.out.raw("]}");
        }
    }

    /// A tool result, written by `write` ([`write_tool_result`]).
    fn tool_result(&mut self, write: impl FnOnce(&mut Out) -> Option<()>) -> Option<()> {
        self.open_result();
        write(&mut self.out)
    }

    /// The synthetic error result of a call no result answered (transform-messages.ts).
    fn synthetic_result(&mut self, id: &str) {
        self.open_result();
        self.out.raw(r#"{"type":"tool_result","tool_use_id":"#);
        self.out.str(id);
        self.out
            .raw(r#","content":"No result provided","is_error":true}"#);
    }

    /// A user message, written by `write` ([`user_shape`]).
    fn user(&mut self, write: impl FnOnce(&mut Out) -> Option<u32>) -> Option<()> {
        self.close_results();
        let start = self.out.len();
        if self.last.is_some() {
            self.out.raw(",");
        }
        let at = self.out.len();
        match write(&mut self.out)? {
            0 => self.out.buf.truncate(start),
            1 => self.last = Some((true, None)),
            n => self.last = Some((true, Some(at + n as usize - 2))),
        }
        Some(())
    }

    /// An assistant turn, written by `write` ([`write_assistant`]); an errored or aborted one
    /// (which only the bytes path's replay layer still sees) is written and dropped.
    fn assistant(
        &mut self,
        errored: bool,
        write: impl FnOnce(&mut Out) -> Option<bool>,
    ) -> Option<()> {
        if !errored {
            self.close_results();
        }
        let start = self.out.len();
        if !errored && self.last.is_some() {
            self.out.raw(",");
        }
        let wrote = write(&mut self.out)?;
        if errored || !wrote {
            self.out.buf.truncate(start);
        } else {
            self.last = Some((false, None));
        }
        Some(())
    }

    /// The array, with the cache breakpoint.
    fn finish(mut self, cache_control: Option<&Value>) -> Vec<u8> {
        self.close_results();
        let out = &mut self.out;
        if let (Some(cc), Some((true, string_at))) = (cache_control, self.last) {
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
        self.out.buf
    }
}

/// anthropic.ts `convertMessages` over value trees: the replay layer of `transform.rs`, then
/// the same writers as the bytes path ([`write_messages_raw`]).
fn convert_messages(
    messages: Vec<Value>,
    model: &Model,
    oauth: bool,
    cache_control: Option<&Value>,
    now_ms: i64,
) -> Vec<u8> {
    let normalize = |id: &str, _: &Value| anthropic_tool_call_id(id);
    let messages = transform(messages, model, Some(&normalize), now_ms);
    let mut turns = Turns::with_capacity(4096);
    for msg in &messages {
        // The value path's readers never answer `None`.
        let _ = match msg.get("role").and_then(Value::as_str) {
            Some("user") => turns.user(|out| user_shape(out, msg, model)),
            Some("assistant") => turns.assistant(false, |out| {
                let blocks = blocks_of(msg).iter().map(|b| (kind_of(b), b, None));
                write_assistant(out, blocks, oauth)
            }),
            Some("toolResult") => turns.tool_result(|out| write_tool_result(out, msg, None)),
            _ => {
                turns.close_results();
                Some(())
            }
        };
    }
    turns.finish(cache_control)
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
    let mut turns = Turns::with_capacity(total + 64);
    // A remapped id's stored text -> its new id (the last one wins).
    let mut id_map: FxHashMap<&str, Arc<str>> = FxHashMap::default();
    // The calls of the last assistant turn waiting for results, and the results seen since.
    let mut pending: Vec<CallId<'_>> = Vec::new();
    let mut answered: Vec<CallId<'_>> = Vec::new();
    // Synthetic results for the pending calls no result answered (transform-messages.ts).
    let flush =
        |turns: &mut Turns, pending: &mut Vec<CallId<'_>>, answered: &mut Vec<CallId<'_>>| {
            for call in pending.drain(..) {
                if !answered.iter().any(|a| a.as_str() == call.as_str()) {
                    turns.synthetic_result(call.as_str());
                }
            }
            answered.clear();
        };

    for message in messages.messages() {
        let fields = MsgFields::of(message)?;
        match raw::plain(fields.role)? {
            Some("user") => {
                if !pending.is_empty() {
                    flush(&mut turns, &mut pending, &mut answered);
                }
                let key = WrittenKey::User {
                    accepts_images: model.accepts_images,
                };
                turns.user(|out| {
                    let written = write_cached(out, message, key, |out| {
                        Some((user_shape(out, &fields, model)?, Vec::new()))
                    });
                    written.map(|(shape, _)| shape)
                })?;
            }
            Some("assistant") => {
                let same_model = raw::is_same_model(&fields, model)?;
                if !pending.is_empty() {
                    flush(&mut turns, &mut pending, &mut answered);
                }
                // An errored or aborted turn is dropped, its calls included; the replay layer
                // still remaps their ids (transform-messages.ts maps before it filters).
                let errored = matches!(raw::plain(fields.stop_reason)?, Some("error" | "aborted"));
                let key = WrittenKey::Assistant { same_model, oauth };
                let text_start = message.as_str().as_ptr() as usize;
                let mut calls = None;
                turns.assistant(errored, |out| {
                    let (wrote, cached) = write_cached(out, message, key, |out| {
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
                        let written = blocks
                            .iter()
                            .map(|b| (b.kind, b.fields, b.new_id.as_deref()));
                        let wrote = write_assistant(out, written, oauth)?;
                        Some((u32::from(wrote), calls))
                    })?;
                    calls = Some(cached);
                    Some(wrote != 0)
                })?;
                let calls = calls?;
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
                let key = WrittenKey::ToolResult {
                    new_id: new_id.clone(),
                };
                turns.tool_result(|out| {
                    write_cached(out, message, key, |out| {
                        write_tool_result(out, &fields, new_id.as_deref())?;
                        Some((0, Vec::new()))
                    })
                    .map(drop)
                })?;
            }
            // Other roles reach no builder's output; the value path handles them.
            _ => return None,
        }
    }
    Some(turns.finish(cache_control))
}

// The rules of anthropic.ts `convertMessages`, once for both paths (`payload::view`).

/// A user message: its shape for [`Turns::user`]: nothing to send (0, nothing written), an
/// array content (1), or a string content whose string starts `n - 2` bytes in (`n`).
fn user_shape<'a>(out: &mut Out, msg: impl MsgView<'a>, model: &Model) -> Option<u32> {
    let start = out.len();
    let Some(content) = msg.content() else {
        return Some(0);
    };
    if let Some(s) = content.str()? {
        if s.is_blank() {
            return Some(0);
        }
        out.raw(r#"{"role":"user","content":"#);
        let at = out.len();
        out.copy_str(&s);
        out.raw("}");
        return u32::try_from(at - start + 2).ok();
    }
    if !content.is_array() {
        return Some(0);
    }
    out.raw(r#"{"role":"user","content":["#);
    let mut any = false;
    msg.for_each_block(|block| {
        if block.is("text")? {
            let text = block.str(BlockKey::Text)?;
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
            write_image(out, block);
        } else {
            return Some(());
        }
        any = true;
        Some(())
    })?;
    if !any {
        out.buf.truncate(start);
        return Some(0);
    }
    out.raw("]}");
    Some(1)
}

fn write_image<'a>(out: &mut Out, block: impl BlockView<'a>) {
    out.raw(r#"{"type":"image","source":{"type":"base64""#);
    if let Some(m) = block.field(BlockKey::MimeType) {
        out.raw(r#","media_type":"#);
        m.copy(out);
    }
    if let Some(d) = block.field(BlockKey::Data) {
        out.raw(r#","data":"#);
        d.copy(out);
    }
    out.raw("}}");
}

/// An assistant message from its blocks after the replay layer (what each became, the block,
/// a tool call's new id); `false` when it has no block to send (nothing written then).
fn write_assistant<'a, 'i, B: BlockView<'a>>(
    out: &mut Out,
    blocks: impl Iterator<Item = (BlockKind, B, Option<&'i str>)>,
    oauth: bool,
) -> Option<bool> {
    let start = out.len();
    out.raw(r#"{"role":"assistant","content":["#);
    let mut any = false;
    let mut sep = |out: &mut Out| {
        if any {
            out.raw(",");
        }
        any = true;
    };
    for (kind, block, new_id) in blocks {
        match kind {
            BlockKind::Text | BlockKind::ConvertedText => {
                let Some(text) = block.str(BlockKey::Text)? else {
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
                let signature = block.field(BlockKey::ThinkingSignature);
                if block.field(BlockKey::Redacted).is_some_and(Field::truthy) {
                    sep(out);
                    out.raw(r#"{"type":"redacted_thinking""#);
                    if let Some(s) = signature {
                        out.raw(r#","data":"#);
                        s.copy(out);
                    }
                    out.raw("}");
                    continue;
                }
                let Some(thinking) = block.str(BlockKey::Thinking)? else {
                    continue;
                };
                if thinking.is_blank() {
                    continue;
                }
                let signature = block
                    .str(BlockKey::ThinkingSignature)?
                    .filter(|s| !s.is_blank());
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
                write_id(out, r#","id":"#, new_id, block.field(BlockKey::Id));
                out.raw(r#","name":"#);
                let name = block.str(BlockKey::Name)?;
                if oauth {
                    let text = name.as_ref().map(RawStr::text).unwrap_or_default();
                    out.str(&claude_code_name(&text));
                } else {
                    write_opt_str(out, name.as_ref());
                }
                out.raw(r#","input":"#);
                match block.field(BlockKey::Arguments) {
                    Some(v) if !v.is_null() => v.copy(out),
                    _ => out.raw("{}"),
                }
                out.raw("}");
            }
            // A server compaction block, verbatim (`payload::compaction_view` left only the
            // one this request sends, first in its turn).
            BlockKind::Other => {
                if block.is("compaction")? {
                    if let Some(raw) = block.compaction_raw() {
                        sep(out);
                        raw.copy(out);
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
fn write_tool_result<'a>(out: &mut Out, msg: impl MsgView<'a>, new_id: Option<&str>) -> Option<()> {
    out.raw(r#"{"type":"tool_result""#);
    write_id(out, r#","tool_use_id":"#, new_id, msg.tool_call_id());
    let mut has_image = false;
    let mut has_text = false;
    msg.for_each_block(|block| {
        has_image |= block.is("image")?;
        has_text |= block.is("text")?;
        Some(())
    })?;
    out.raw(r#","content":"#);
    let mut first = true;
    if !has_image {
        out.raw("\"");
        msg.for_each_block(|block| {
            if !std::mem::take(&mut first) {
                out.raw("\\n");
            }
            if let Some(text) = block.str(BlockKey::Text)? {
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
        msg.for_each_block(|block| {
            if !std::mem::take(&mut first) {
                out.raw(",");
            }
            if block.is("text")? {
                out.raw(r#"{"type":"text","text":"#);
                write_opt_str(out, block.str(BlockKey::Text)?.as_ref());
                out.raw("}");
            } else {
                write_image(out, block);
            }
            Some(())
        })?;
        out.raw("]");
    }
    if let Some(e) = msg.is_error() {
        out.raw(r#","is_error":"#);
        e.copy(out);
    }
    out.raw("}");
    Some(())
}
