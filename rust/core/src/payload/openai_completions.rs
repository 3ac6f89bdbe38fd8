//! The Chat Completions body of pi-mono 0.58.3 `packages/ai/src/providers/openai-completions.ts`
//! (`buildParams`, `convertMessages`, `convertTools`, `detectCompat`/`getCompat`,
//! `streamSimpleOpenAICompletions`).

use serde_json::{json, Map, Value};

use super::model::{blocks_of, effort_options, function_tools, Build, Context, Model, Options};
use super::raw::{self, BlockFields, BlockKind, MsgFields, Out, PendingCalls, RawStr, Replayed};
use super::transform::transform;
use super::view::{
    kind_of, open_function_call, result_parts, write_id, write_opt_str, BlockKey, BlockView, Field,
    MsgView,
};
use super::{Payload, PayloadError};
use crate::base::{is_truthy, js_string, parse_value};

/// `Required<OpenAICompletionsCompat>` as `getCompat` resolves it.
struct Compat {
    supports_store: bool,
    supports_developer_role: bool,
    supports_reasoning_effort: bool,
    reasoning_effort_map: Option<Value>,
    supports_usage_in_streaming: bool,
    max_tokens_field_is_max_tokens: bool,
    requires_tool_result_name: bool,
    requires_assistant_after_tool_result: bool,
    requires_thinking_as_text: bool,
    thinking_format: String,
    supports_strict_mode: bool,
}

fn compat_of(model: &Model) -> Compat {
    let provider = model.provider.as_str();
    let url = model.base_url.as_str();
    let is_zai = provider == "zai" || url.contains("api.z.ai");
    let non_standard = provider == "cerebras"
        || url.contains("cerebras.ai")
        || provider == "xai"
        || url.contains("api.x.ai")
        || url.contains("chutes.ai")
        || url.contains("deepseek.com")
        || is_zai
        || provider == "opencode"
        || url.contains("opencode.ai");
    let is_grok = provider == "xai" || url.contains("api.x.ai");
    let is_groq = provider == "groq" || url.contains("groq.com");
    let effort_map = (is_groq && model.id == "qwen/qwen3-32b").then(|| {
        json!({"minimal": "default", "low": "default", "medium": "default", "high": "default", "xhigh": "default"})
    });
    let flag = |key: &str, detected: bool| match model.compat(key) {
        Some(Value::Null) | None => detected,
        Some(v) => is_truthy(v),
    };
    let max_tokens_field = match model.compat("maxTokensField").and_then(Value::as_str) {
        Some(f) => f == "max_tokens",
        None => url.contains("chutes.ai"),
    };
    Compat {
        supports_store: flag("supportsStore", !non_standard),
        supports_developer_role: flag("supportsDeveloperRole", !non_standard),
        supports_reasoning_effort: flag("supportsReasoningEffort", !is_grok && !is_zai),
        reasoning_effort_map: match model.compat("reasoningEffortMap") {
            Some(v) if !v.is_null() => Some(v.clone()),
            _ => effort_map,
        },
        supports_usage_in_streaming: flag("supportsUsageInStreaming", true),
        max_tokens_field_is_max_tokens: max_tokens_field,
        requires_tool_result_name: flag("requiresToolResultName", false),
        requires_assistant_after_tool_result: flag("requiresAssistantAfterToolResult", false),
        requires_thinking_as_text: flag("requiresThinkingAsText", false),
        thinking_format: model
            .compat("thinkingFormat")
            .and_then(Value::as_str)
            .unwrap_or(if is_zai { "zai" } else { "openai" })
            .to_owned(),
        supports_strict_mode: flag("supportsStrictMode", true),
    }
}

pub(super) fn simple_options(model: &Model, simple: &Options<'_>) -> Map<String, Value> {
    let mut out = effort_options(model, simple);
    if let Some(choice) = simple.get("toolChoice") {
        out.insert("toolChoice".to_owned(), choice.clone());
    }
    out
}

fn has_tool_history(messages: &[Value]) -> bool {
    messages
        .iter()
        .any(|m| match m.get("role").and_then(Value::as_str) {
            Some("toolResult") => true,
            Some("assistant") => blocks_of(m)
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("toolCall")),
            _ => false,
        })
}

pub(super) fn build(input: &Build<'_>) -> Result<Payload, PayloadError> {
    let (model, context, options, now_ms) = input.parts();
    let compat = compat_of(model);
    // The messages straight from the stored bytes when every message has a shape that path
    // reads, else through value trees; both by the same writers.
    let written = context
        .raw
        .then(|| write_messages_raw(model, context, &compat))
        .flatten();
    let (messages_json, tool_history, from_bytes) = match written {
        Some((json, tool_history)) => (json, tool_history, true),
        None => {
            // Of the messages as given, before the replay layer (openai-completions.ts).
            let given = context.take_messages()?;
            let tool_history = has_tool_history(&given);
            context.put_back(given);
            let json = convert_messages(model, context, &compat, now_ms)?;
            (json, tool_history, false)
        }
    };

    let mut params = Map::new();
    params.insert("model".to_owned(), json!(model.id));
    // Written in place of this placeholder by `Payload`.
    params.insert("messages".to_owned(), Value::Null);
    params.insert("stream".to_owned(), Value::Bool(true));
    if compat.supports_usage_in_streaming {
        params.insert("stream_options".to_owned(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        params.insert("store".to_owned(), Value::Bool(false));
    }
    if let Some(max) = options.truthy("maxTokens") {
        let field = if compat.max_tokens_field_is_max_tokens {
            "max_tokens"
        } else {
            "max_completion_tokens"
        };
        params.insert(field.to_owned(), max.clone());
    }
    if let Some(t) = options.get("temperature") {
        params.insert("temperature".to_owned(), t.clone());
    }
    if let Some(tools) = context.tools() {
        params.insert(
            "tools".to_owned(),
            function_tools(tools, compat.supports_strict_mode),
        );
    } else if tool_history {
        // Anthropic behind LiteLLM-style proxies wants `tools` whenever the history has calls.
        params.insert("tools".to_owned(), json!([]));
    }
    if let Some(choice) = options.truthy("toolChoice") {
        params.insert("tool_choice".to_owned(), choice.clone());
    }
    let effort = options.truthy("reasoningEffort");
    if model.reasoning && matches!(compat.thinking_format.as_str(), "zai" | "qwen") {
        params.insert("enable_thinking".to_owned(), Value::Bool(effort.is_some()));
    } else if model.reasoning && compat.thinking_format == "qwen-chat-template" {
        params.insert(
            "chat_template_kwargs".to_owned(),
            json!({"enable_thinking": effort.is_some()}),
        );
    } else if let (Some(effort), true, true) =
        (effort, model.reasoning, compat.supports_reasoning_effort)
    {
        let mapped = effort
            .as_str()
            .and_then(|e| compat.reasoning_effort_map.as_ref()?.get(e))
            .filter(|v| !v.is_null())
            .unwrap_or(effort);
        params.insert("reasoning_effort".to_owned(), mapped.clone());
    }
    if model.base_url.contains("openrouter.ai") {
        if let Some(routing) = model.compat("openRouterRouting").filter(|v| is_truthy(v)) {
            params.insert("provider".to_owned(), routing.clone());
        }
    }
    if model.base_url.contains("ai-gateway.vercel.sh") {
        if let Some(routing) = model
            .compat("vercelGatewayRouting")
            .filter(|v| is_truthy(v))
        {
            let mut gateway = Map::new();
            for key in ["only", "order"] {
                if let Some(v) = routing.get(key).filter(|v| is_truthy(v)) {
                    gateway.insert(key.to_owned(), v.clone());
                }
            }
            if !gateway.is_empty() {
                params.insert("providerOptions".to_owned(), json!({"gateway": gateway}));
            }
        }
    }
    Ok(Payload::spliced_from(
        Value::Object(params),
        &["messages"],
        messages_json,
        from_bytes,
    ))
}

/// OpenRouter's Anthropic models get a cache breakpoint (openai-completions.ts
/// `maybeAddOpenRouterAnthropicCacheControl`).
fn openrouter_anthropic(model: &Model) -> bool {
    model.provider == "openrouter" && model.id.starts_with("anthropic/")
}

/// The tool-call id normaliser `convertMessages` hands `transformMessages`: the request
/// guard's, so the guard sees the ids this writer sends.
fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    crate::hygiene::chat_tool_call_id(id, model.provider == "openai")
}

/// openai-completions.ts `convertMessages` over value trees (after `transform.rs`): the same
/// writers as the bytes path ([`write_messages_raw`]).
fn convert_messages(
    model: &Model,
    context: &Context<'_>,
    compat: &Compat,
    now_ms: i64,
) -> Result<Vec<u8>, PayloadError> {
    let normalize = |id: &str, _: &Value| normalize_tool_call_id(model, id);
    let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
    let mut w = Messages::new(4096, context.system(), model, compat);
    for msg in &messages {
        // The value path's readers never answer `None`.
        let _ = match msg.get("role").and_then(Value::as_str) {
            Some("user") => w.user(msg),
            Some("assistant") => {
                let blocks = blocks_of(msg).iter().map(|b| (kind_of(b), b, None));
                // `transform.rs` already dropped the thought signatures of other models' calls.
                w.assistant(blocks, true)
            }
            Some("toolResult") => w.tool_result(msg, None),
            _ => {
                w.other();
                Some(())
            }
        };
        if w.thrown.is_some() {
            break;
        }
    }
    w.finish(model)
}

/// [`convert_messages`] written straight from the stored messages: unmodified text, tool
/// arguments, results and image data are copied from the stored bytes. Also whether the
/// messages as given hold a tool call or result (before the replay layer drops errored
/// turns, as `hasToolHistory`). `None` when a message has a shape only the value-tree path
/// reads, or when upstream throws (the value path reports it); the caller then runs that.
fn write_messages_raw(
    model: &Model,
    context: &Context<'_>,
    compat: &Compat,
) -> Option<(Vec<u8>, bool)> {
    let normalize = |id: &str| normalize_tool_call_id(model, id);
    let replay = raw::replay(context.llm, model, &normalize)?;
    // The blocks of errored and aborted turns stay in `replay.blocks`; a synthetic result
    // answers a call, so the calls already count.
    let tool_history = replay.blocks.iter().any(|b| b.kind == BlockKind::ToolCall)
        || replay
            .messages
            .iter()
            .any(|m| matches!(m, Replayed::ToolResult { .. }));
    let total: usize = context.llm.messages().iter().map(|m| m.len()).sum();
    let mut w = Messages::new(total + 256, context.system(), model, compat);
    let mut pending = PendingCalls::default();
    for msg in &replay.messages {
        match msg {
            Replayed::User(fields) => w.user(fields)?,
            Replayed::Assistant(fields, range) => {
                let same_model = raw::is_same_model(fields, model)?;
                let blocks = pending
                    .sent(&replay.blocks[range.clone()])
                    .iter()
                    .map(|b| (b.kind, b.fields, b.new_id.as_deref()));
                // Signatures of other models' calls are still in their fields: `same_model`
                // drops them, as `transform.rs` does.
                w.assistant(blocks, same_model)?;
                if w.thrown.is_some() {
                    return None;
                }
            }
            Replayed::ToolResult { fields, new_id } => w.tool_result(fields, new_id.as_deref())?,
            Replayed::Synthetic { id } => {
                // The synthetic result `transform.rs` inserts: its `toolName` is the name of
                // the call it answers, read only where it is sent.
                let mut fields = MsgFields {
                    content: Some(NO_RESULT),
                    ..MsgFields::default()
                };
                if compat.requires_tool_result_name {
                    fields.tool_name = pending.answer(id)?.fields.name;
                }
                w.tool_result(&fields, Some(id))?;
            }
        }
    }
    Some((w.finish(model).ok()?, tool_history))
}

/// The content of the synthetic result of an unanswered call (transform-messages.ts).
const NO_RESULT: &str = r#"[{"type":"text","text":"No result provided"}]"#;

// The rules of openai-completions.ts `convertMessages`, once for both paths
// (`payload::view`): the messages array and its state ([`Messages`]), then one writer per
// message.

/// Where the OpenRouter Anthropic cache breakpoint goes in a written message: its string
/// content (the bytes `at..end` of the body), or the closing brace of its last text part.
#[derive(Clone, Copy)]
enum CacheSpot {
    Str { at: usize, end: usize },
    Part { close: usize },
}

/// What writing one message did.
enum Wrote {
    /// A message was written (with where a cache breakpoint would go in it).
    Message(Option<CacheSpot>),
    /// Nothing, and `convertMessages` still records its role as the last one.
    NothingRoleKept,
    /// Nothing, and the last role stays the one before (a `continue` upstream).
    Nothing,
    /// Upstream throws this error.
    Throws(&'static str),
}

/// The messages array as both paths write it, and `convertMessages`' state: whether the last
/// role was a tool result (some servers want an assistant message between it and a user
/// message), the open run of tool results (their images follow the run in one user message),
/// and the last place for the OpenRouter Anthropic cache breakpoint
/// (`maybeAddOpenRouterAnthropicCacheControl`, applied by [`Messages::finish`]).
struct Messages<'c> {
    out: Out,
    count: usize,
    compat: &'c Compat,
    accepts_images: bool,
    after_tool_result: bool,
    /// Whether a run of tool results is open, and its image parts (each after a comma).
    results_open: bool,
    images: Out,
    /// The last user or assistant message with a string content or a text part.
    spot: Option<CacheSpot>,
    /// The error upstream throws; nothing more is written.
    thrown: Option<&'static str>,
}

impl<'c> Messages<'c> {
    /// The array with the system prompt (as `developer` for reasoning models that take it).
    fn new(
        capacity: usize,
        system: Option<&str>,
        model: &Model,
        compat: &'c Compat,
    ) -> Messages<'c> {
        let mut w = Messages {
            out: Out::with_capacity(capacity),
            count: 0,
            compat,
            accepts_images: model.accepts_images,
            after_tool_result: false,
            results_open: false,
            images: Out::default(),
            spot: None,
            thrown: None,
        };
        w.out.raw("[");
        if let Some(prompt) = system {
            w.begin();
            w.out
                .raw(if model.reasoning && compat.supports_developer_role {
                    r#"{"role":"developer","content":"#
                } else {
                    r#"{"role":"system","content":"#
                });
            w.out.str(prompt);
            w.out.raw("}");
        }
        w
    }

    /// Starts a message; returns where it starts, for [`Messages::undo`].
    fn begin(&mut self) -> usize {
        let start = self.out.len();
        if self.count > 0 {
            self.out.raw(",");
        }
        self.count += 1;
        start
    }

    /// Drops the message begun at `start`.
    fn undo(&mut self, start: usize) {
        self.out.buf.truncate(start);
        self.count -= 1;
    }

    /// Records what a writer did with the message begun at `start`.
    fn wrote(&mut self, start: usize, wrote: Wrote) {
        match wrote {
            Wrote::Message(spot) => {
                self.spot = spot.or(self.spot);
                self.after_tool_result = false;
            }
            Wrote::NothingRoleKept => {
                self.undo(start);
                self.after_tool_result = false;
            }
            Wrote::Nothing => self.undo(start),
            Wrote::Throws(error) => {
                self.undo(start);
                self.thrown = Some(error);
            }
        }
    }

    /// The assistant message some servers want after tool results.
    fn bridge(&mut self) -> CacheSpot {
        self.begin();
        self.out.raw(r#"{"role":"assistant","content":"#);
        let at = self.out.len();
        self.out.raw(r#""I have processed the tool results.""#);
        let end = self.out.len();
        self.out.raw("}");
        CacheSpot::Str { at, end }
    }

    /// Ends the open run of tool results: their images in one user message.
    fn close_results(&mut self) {
        if !std::mem::take(&mut self.results_open) {
            return;
        }
        if self.images.buf.is_empty() {
            self.after_tool_result = true;
            return;
        }
        if self.compat.requires_assistant_after_tool_result {
            self.bridge();
        }
        self.begin();
        self.out.raw(
            r#"{"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:""#,
        );
        let close = self.out.len();
        self.out.raw("}");
        self.out.buf.extend_from_slice(&self.images.buf);
        self.out.raw("]}");
        self.spot = Some(CacheSpot::Part { close });
        self.after_tool_result = false;
    }

    fn user<'a>(&mut self, msg: impl MsgView<'a>) -> Option<()> {
        self.close_results();
        if self.compat.requires_assistant_after_tool_result && self.after_tool_result {
            self.spot = Some(self.bridge());
        }
        let start = self.begin();
        let wrote = write_user(&mut self.out, msg, self.accepts_images)?;
        self.wrote(start, wrote);
        Some(())
    }

    /// An assistant message from its blocks after the replay layer (what each became, the
    /// block, a tool call's new id); `same_model` keeps its calls' thought signatures.
    fn assistant<'a, 'i, B: CallView<'a>>(
        &mut self,
        blocks: impl Iterator<Item = (BlockKind, B, Option<&'i str>)>,
        same_model: bool,
    ) -> Option<()> {
        self.close_results();
        let start = self.begin();
        let wrote = write_assistant(&mut self.out, blocks, same_model, self.compat)?;
        self.wrote(start, wrote);
        Some(())
    }

    /// A tool result; `new_id` is the id the replay layer gave its call, when it changed.
    fn tool_result<'a>(&mut self, msg: impl MsgView<'a>, new_id: Option<&str>) -> Option<()> {
        if !self.results_open {
            self.results_open = true;
            self.images.buf.clear();
        }
        self.begin();
        write_tool_result(
            &mut self.out,
            &mut self.images,
            msg,
            new_id,
            self.accepts_images,
            self.compat,
        )
    }

    /// A message of another role: nothing sent, and it is the last role.
    fn other(&mut self) {
        self.close_results();
        self.after_tool_result = false;
    }

    /// The array, with the OpenRouter Anthropic cache breakpoint; the error upstream throws.
    fn finish(mut self, model: &Model) -> Result<Vec<u8>, PayloadError> {
        if let Some(error) = self.thrown {
            return Err(PayloadError::Upstream(error.to_owned()));
        }
        self.close_results();
        self.out.raw("]");
        let mut buf = self.out.buf;
        if openrouter_anthropic(model) {
            const CC: &[u8] = br#","cache_control":{"type":"ephemeral"}"#;
            match self.spot {
                Some(CacheSpot::Str { at, end }) => {
                    // The string content becomes `[{"type":"text","text":...,"cache_control":...}]`.
                    let mut tail = CC.to_vec();
                    tail.extend_from_slice(b"}]");
                    buf.splice(end..end, tail);
                    buf.splice(at..at, br#"[{"type":"text","text":"#.iter().copied());
                }
                Some(CacheSpot::Part { close }) => {
                    buf.splice(close..close, CC.iter().copied());
                }
                None => {}
            }
        }
        Ok(buf)
    }
}

/// A tool call's `thoughtSignature`, beside what [`BlockView`] reads (only this API reads it
/// from a call).
trait CallView<'a>: BlockView<'a> {
    fn thought_signature(&self) -> Option<Field<'a>>;
}

impl<'a> CallView<'a> for BlockFields<'a> {
    fn thought_signature(&self) -> Option<Field<'a>> {
        self.thought_signature.map(Field::Raw)
    }
}

impl<'a> CallView<'a> for &'a Value {
    fn thought_signature(&self) -> Option<Field<'a>> {
        self.get("thoughtSignature").map(Field::Value)
    }
}

/// A template-literal part of an image URL (`${block.mimeType}`): a string's inner text,
/// `undefined` when absent, else the value as `String` writes it.
fn write_url_part(out: &mut Out, field: Option<Field<'_>>) -> Option<()> {
    let Some(field) = field else {
        out.raw("undefined");
        return Some(());
    };
    if let Some(s) = field.str()? {
        s.write_inner(out);
        return Some(());
    }
    let text = match field {
        Field::Raw(text) => js_string(&parse_value(text).ok()?),
        Field::Value(v) => js_string(v),
    };
    RawStr::Parsed(text).write_inner(out);
    Some(())
}

/// An `image_url` part with the block's data URL.
fn write_image<'a>(out: &mut Out, block: impl BlockView<'a>) -> Option<()> {
    out.raw(r#"{"type":"image_url","image_url":{"url":"data:"#);
    write_url_part(out, block.field(BlockKey::MimeType))?;
    out.raw(";base64,");
    write_url_part(out, block.field(BlockKey::Data))?;
    out.raw(r#""}}"#);
    Some(())
}

/// A user message: a string content as it is; text parts, and other blocks as images when
/// the model takes them (`Nothing` when none is left).
fn write_user<'a>(out: &mut Out, msg: impl MsgView<'a>, accepts_images: bool) -> Option<Wrote> {
    let Some(content) = msg.content() else {
        return Some(Wrote::NothingRoleKept);
    };
    if let Some(s) = content.str()? {
        out.raw(r#"{"role":"user","content":"#);
        let at = out.len();
        out.copy_str(&s);
        let end = out.len();
        out.raw("}");
        return Some(Wrote::Message(Some(CacheSpot::Str { at, end })));
    }
    if !content.is_array() {
        return Some(Wrote::NothingRoleKept);
    }
    out.raw(r#"{"role":"user","content":["#);
    let mut any = false;
    let mut last_text = None;
    msg.for_each_block(|block| {
        let is_text = block.is("text")?;
        if !is_text && !accepts_images {
            return Some(());
        }
        if std::mem::replace(&mut any, true) {
            out.raw(",");
        }
        if is_text {
            out.raw(r#"{"type":"text","text":"#);
            write_opt_str(out, block.str(BlockKey::Text)?.as_ref());
            last_text = Some(CacheSpot::Part { close: out.len() });
            out.raw("}");
        } else {
            write_image(out, block)?;
        }
        Some(())
    })?;
    if !any {
        return Some(Wrote::Nothing);
    }
    out.raw("]}");
    Some(Wrote::Message(last_text))
}

/// Strings written one after another inside one string literal, `sep` between them.
fn write_joined(out: &mut Out, parts: &[RawStr<'_>], sep: &str) {
    out.raw("\"");
    for (n, part) in parts.iter().enumerate() {
        if n > 0 {
            out.raw(sep);
        }
        part.write_inner(out);
    }
    out.raw("\"");
}

/// A member of an assistant message, in the order `convertMessages` sets them. The thinking
/// goes under the key its signature names (e.g. `reasoning_content`): a key the message
/// already has keeps its place and takes the value set last, as a JavaScript object does.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Member {
    #[default]
    Role,
    Content,
    Thinking,
    ToolCalls,
    Details,
}

/// The members of an assistant message, keys in insertion order.
#[derive(Default)]
struct Members<'k> {
    list: [(&'k str, Member); 5],
    len: usize,
}

impl<'k> Members<'k> {
    fn set(&mut self, key: &'k str, member: Member) {
        let list = &mut self.list[..self.len];
        match list.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = member,
            None => {
                self.list[self.len] = (key, member);
                self.len += 1;
            }
        }
    }

    fn get(&self, key: &str) -> Option<Member> {
        self.list[..self.len]
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, m)| *m)
    }
}

/// An assistant message from its blocks after the replay layer (what each became, the
/// block, a tool call's new id).
fn write_assistant<'a, 'i, B: CallView<'a>>(
    out: &mut Out,
    blocks: impl Iterator<Item = (BlockKind, B, Option<&'i str>)>,
    same_model: bool,
    compat: &Compat,
) -> Option<Wrote> {
    let mut texts = Vec::new();
    let mut thinking = Vec::new();
    // The `thinkingSignature` of the first thinking block sent.
    let mut first_signature = None;
    let mut calls = Vec::new();
    for (kind, block, new_id) in blocks {
        match kind {
            BlockKind::Text | BlockKind::ConvertedText => {
                if let Some(text) = block.str(BlockKey::Text)?.filter(|t| !t.is_blank()) {
                    texts.push(text);
                }
            }
            BlockKind::Thinking => {
                if let Some(text) = block.str(BlockKey::Thinking)?.filter(|t| !t.is_blank()) {
                    if thinking.is_empty() {
                        first_signature = block.field(BlockKey::ThinkingSignature);
                    }
                    thinking.push(text);
                }
            }
            BlockKind::ToolCall => calls.push((block, new_id)),
            BlockKind::Other => {}
        }
    }
    let thinking_as_text = !thinking.is_empty() && compat.requires_thinking_as_text;
    if thinking_as_text && !texts.is_empty() {
        // `unshift` on the joined text string.
        return Some(Wrote::Throws("textContent.unshift is not a function"));
    }
    let signature = match first_signature {
        Some(field) if !thinking.is_empty() && !compat.requires_thinking_as_text => field.str()?,
        _ => None,
    };
    let signature_key = signature.as_ref().map(RawStr::text);
    // `reasoning_details` from the calls' thought signatures (JSON text each).
    let mut details = Vec::new();
    if same_model {
        for (call, _) in &calls {
            let Some(sig) = call
                .thought_signature()
                .map(Field::str)
                .unwrap_or(Some(None))?
            else {
                continue;
            };
            let sig = sig.text();
            if sig.is_empty() {
                continue;
            }
            if let Ok(v) = serde_json::from_str::<Value>(&sig) {
                if is_truthy(&v) {
                    details.push(v);
                }
            }
        }
    }
    let mut members = Members::default();
    members.set("role", Member::Role);
    members.set("content", Member::Content);
    if let Some(key) = signature_key.as_deref().filter(|k| !k.is_empty()) {
        members.set(key, Member::Thinking);
    }
    if !calls.is_empty() {
        members.set("tool_calls", Member::ToolCalls);
        if !details.is_empty() {
            members.set("reasoning_details", Member::Details);
        }
    }
    // "Either content or tool_calls": `""` (the content some servers want after a tool
    // result) is no content; the thinking under either key is a non-empty string.
    let has_content = match members.get("content") {
        Some(Member::Content) => thinking_as_text || !texts.is_empty(),
        _ => true,
    };
    if !has_content && members.get("tool_calls").is_none() {
        return Some(Wrote::Nothing);
    }

    let mut spot = None;
    out.raw("{");
    for (n, &(key, member)) in members.list[..members.len].iter().enumerate() {
        if n > 0 {
            out.raw(",");
        }
        if key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            out.raw("\"");
            out.raw(key);
            out.raw("\":");
        } else {
            out.str(key);
            out.raw(":");
        }
        match member {
            Member::Role => out.raw(r#""assistant""#),
            Member::Content if thinking_as_text => {
                out.raw(r#"[{"type":"text","text":"#);
                write_joined(out, &thinking, "\\n\\n");
                spot = Some(CacheSpot::Part { close: out.len() });
                out.raw("}]");
            }
            Member::Content if !texts.is_empty() || compat.requires_assistant_after_tool_result => {
                let at = out.len();
                write_joined(out, &texts, "");
                spot = Some(CacheSpot::Str { at, end: out.len() });
            }
            Member::Content => out.raw("null"),
            Member::Thinking => {
                let at = out.len();
                write_joined(out, &thinking, "\\n");
                if key == "content" {
                    spot = Some(CacheSpot::Str { at, end: out.len() });
                }
            }
            Member::ToolCalls => {
                out.raw("[");
                for (n, (call, new_id)) in calls.iter().enumerate() {
                    if n > 0 {
                        out.raw(",");
                    }
                    write_tool_call(out, *call, *new_id);
                }
                out.raw("]");
            }
            Member::Details => out.value(&Value::Array(std::mem::take(&mut details))),
        }
    }
    out.raw("}");
    // The breakpoint goes on a user or assistant message only: the thinking under `role`
    // leaves it there only when it reads as one.
    if members.get("role") == Some(Member::Thinking) {
        let mut role = Out::default();
        write_joined(&mut role, &thinking, "\\n");
        if !matches!(role.buf.as_slice(), br#""assistant""# | br#""user""#) {
            spot = None;
        }
    }
    Some(Wrote::Message(spot))
}

/// One `tool_calls` entry: arguments as the `JSON.stringify` text of the stored value.
fn write_tool_call<'a>(out: &mut Out, call: impl BlockView<'a>, new_id: Option<&str>) {
    open_function_call(out, call, new_id);
    if let Some(args) = call.field(BlockKey::Arguments) {
        out.raw(r#","arguments":"#);
        args.write_stringified(out);
    }
    out.raw("}}");
}

/// One `tool` message: its texts joined by newlines (a placeholder when that is empty); its
/// images, when the model takes them, go to `images` (after a comma each).
fn write_tool_result<'a>(
    out: &mut Out,
    images: &mut Out,
    msg: impl MsgView<'a>,
    new_id: Option<&str>,
    accepts_images: bool,
    compat: &Compat,
) -> Option<()> {
    let (texts, found) = result_parts(msg, accepts_images)?;
    for image in found {
        images.raw(",");
        write_image(images, image)?;
    }
    out.raw(r#"{"role":"tool","content":"#);
    let at = out.len();
    out.raw("\"");
    raw::write_lines(out, &texts);
    if out.len() == at + 1 {
        out.raw("(see attached image)");
    }
    out.raw("\"");
    write_id(out, r#","tool_call_id":"#, new_id, msg.tool_call_id());
    if compat.requires_tool_result_name {
        if let Some(name) = msg.tool_name().filter(|n| n.truthy()) {
            out.raw(r#","name":"#);
            name.copy(out);
        }
    }
    out.raw("}");
    Some(())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value};

    use super::super::test_support::{bench_transcript, bytes_path_taken, request, transcript};
    use super::super::{build_payload_with, PayloadRequest};
    use crate::transcript::Transcript;

    fn model(provider: &str, id: &str, images: bool, compat: Value) -> Value {
        let input = if images {
            json!(["text", "image"])
        } else {
            json!(["text"])
        };
        json!({"id": id, "name": id, "api": "openai-completions", "provider": provider,
            "baseUrl": "https://example.test/v1", "reasoning": true, "input": input,
            "maxTokens": 8192, "compat": compat})
    }

    /// Stored texts in forms `JSON.stringify` would not write, and the shapes the Chat
    /// converter treats apart: thinking under its signature's key, reasoning details from
    /// thought signatures, turns of another model, images in tool results, unanswered calls,
    /// empty user turns, an errored turn holding the only tool call.
    const LINES: [&str; 12] = [
        r#"{"role":"user","content":"hi \u00e9\/ x\n"}"#,
        r#"{"role":"user","content":[{"type":"text","text":"  "},{"type":"image","data":"QQ==","mimeType":"image/png"},{"type":"text","text":5},{"type":"image","data":"AA\u0041"}]}"#,
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"plan \u00e9","thinkingSignature":"reasoning_content"},{"type":"thinking","thinking":"more"},{"type":"text","text":" "},{"type":"text","text":"a\/b"},{"type":"text","text":"c"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"x": 1.50,"x":2},"thoughtSignature":"{\"type\":\"reasoning.encrypted\",\"data\":\"e\"}"},{"type":"toolCall","id":"c2","name":"read","arguments":{"p":"a"},"thoughtSignature":"%%bad"}],"api":"openai-completions","provider":"p","model":"m","stopReason":"toolUse"}"#,
        r#"{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"out"},{"type":"image","data":"R0l","mimeType":"image/gif"},{"type":"text","text":"more\n"}],"isError":false}"#,
        r#"{"role":"user","content":"next"}"#,
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"other think","thinkingSignature":"sig"},{"type":"text","text":"other text"},{"type":"toolCall","id":"call_1|fc_2","name":"bash","arguments":{},"thoughtSignature":"{\"a\":1}"}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse"}"#,
        r#"{"role":"toolResult","toolCallId":"call_1|fc_2","toolName":"bash","content":[{"type":"text","text":""}],"isError":true}"#,
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"e1","name":"x","arguments":{}}],"api":"openai-completions","provider":"p","model":"m","stopReason":"error"}"#,
        r#"{"role":"user","content":[]}"#,
        r#"{"role":"user","content":null}"#,
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"only thought"}],"api":"openai-completions","provider":"p","model":"m","stopReason":"stop"}"#,
        r#"{"role":"user","content":"last"}"#,
    ];

    #[test]
    fn stored_bytes_path_writes_what_the_value_path_writes() {
        let mistral_like = json!({"requiresToolResultName": true,
            "requiresAssistantAfterToolResult": true, "supportsDeveloperRole": false});
        for (m, system) in [
            (model("p", "m", true, Value::Null), Some("sys")),
            (model("p", "m", false, Value::Null), None),
            (
                model("openai", "m", true, mistral_like.clone()),
                Some("sys"),
            ),
            (model("p", "m", true, mistral_like), None),
            (
                model("openrouter", "anthropic/claude", true, Value::Null),
                None,
            ),
            (
                model("openrouter", "anthropic/claude", false, Value::Null),
                None,
            ),
        ] {
            let taken = bytes_path_taken(&m, &LINES, system);
            assert!(taken.iter().all(|t| *t), "{m}: {taken:?}");
        }
        // Thinking beside text throws upstream (the value path says so); before that message
        // the bytes path writes thinking as text.
        let as_text = model("p", "m", true, json!({"requiresThinkingAsText": true}));
        let taken = bytes_path_taken(&as_text, &LINES, Some("sys"));
        assert!(taken[..3].iter().all(|t| *t), "{taken:?}");
        let only_thought = [LINES[0], LINES[10], LINES[11]];
        assert!(bytes_path_taken(&as_text, &only_thought, None)
            .iter()
            .all(|t| *t));
    }

    /// Builds and writes one body; the unit callgrind counts (`--toggle-collect`).
    #[inline(never)]
    fn measured_body(request: &PayloadRequest, transcript: &Transcript, raw: bool) -> usize {
        let body = build_payload_with(request, transcript, raw).unwrap();
        body.to_json().len()
    }

    /// Instruction counts of a 5,000-message body, bytes path (`CLAWCTX_PATH=raw`) or value
    /// path (`value`), for openai-completions or the API named by `CLAWCTX_API` (e.g.
    /// `mistral-conversations`): run under
    /// `valgrind --tool=callgrind --toggle-collect='*measured_body*'`.
    #[test]
    #[ignore = "a measurement, run by hand under callgrind"]
    fn measure_body() {
        let raw = std::env::var("CLAWCTX_PATH").map_or(true, |p| p != "value");
        let mut m = model("openai", "gpt-4.1", true, Value::Null);
        if let Ok(api) = std::env::var("CLAWCTX_API") {
            m["api"] = Value::from(api);
        }
        let transcript = bench_transcript(5_000);
        let request = request(
            &m,
            Some("You are a coding agent. Be concise."),
            Map::new(),
            false,
        );
        let fast = build_payload_with(&request, &transcript, true).unwrap();
        assert!(fast.written_from_bytes());
        let len = measured_body(&request, &transcript, raw);
        assert_eq!(len, fast.to_json().len());
    }

    /// The body's `messages` from the bytes path, which must be the path taken and agree
    /// with the value path.
    fn messages_of(m: &Value, lines: &[&str]) -> Value {
        assert!(bytes_path_taken(m, lines, None).iter().all(|t| *t));
        let request = request(m, None, Map::new(), false);
        let body = build_payload_with(&request, &transcript(lines), true).unwrap();
        let body: Value = serde_json::from_slice(&body.to_json()).unwrap();
        body["messages"].clone()
    }

    /// An assistant turn of `model("p", "m", ..)` with one thinking block signed `signature`,
    /// then `rest` (more blocks, each with a leading comma).
    fn signed_turn(signature: &str, rest: &str) -> String {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"T","thinkingSignature":"{signature}"}}{rest}],"api":"openai-completions","provider":"p","model":"m","stopReason":"stop"}}"#
        )
    }

    #[test]
    fn thinking_under_a_key_the_message_has_takes_its_place() {
        // `assistantMsg[signature] = thinking`: an existing key keeps its place and takes the
        // value set last (`tool_calls` and `reasoning_details` are set after the thinking).
        let m = model("p", "m", true, Value::Null);
        let call = r#",{"type":"toolCall","id":"c","name":"f","arguments":{},"thoughtSignature":"{\"d\":1}"}"#;
        let cases = [
            (
                "content",
                "",
                json!([{"role": "assistant", "content": "T"}]),
            ),
            (
                "role",
                r#",{"type":"text","text":"x"}"#,
                json!([{"role": "T", "content": "x"}]),
            ),
            (
                "tool_calls",
                "",
                json!([{"role": "assistant", "content": null, "tool_calls": "T"}]),
            ),
            (
                "reasoning_details",
                call,
                json!([{"role": "assistant", "content": null, "reasoning_details": [{"d": 1}],
                    "tool_calls": [{"id": "c", "type": "function",
                        "function": {"name": "f", "arguments": "{}"}}]}]),
            ),
        ];
        for (key, rest, expected) in cases {
            let turn = signed_turn(key, rest);
            let messages = messages_of(&m, &[LINES[11], &turn]);
            assert_eq!(
                messages.as_array().unwrap()[1..],
                expected.as_array().unwrap()[..],
                "{key}"
            );
            // Key order as written.
            let keys: Vec<&str> = messages[1]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let want: Vec<&str> = expected[0]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, want, "{key}");
        }
        // The thinking as the content of the last assistant message: OpenRouter's Anthropic
        // breakpoint goes on it.
        let turn = signed_turn("content", "");
        let openrouter = model("openrouter", "anthropic/claude", true, Value::Null);
        let messages = messages_of(&openrouter, &[LINES[11], &turn]);
        assert_eq!(
            messages[1]["content"],
            json!([{"type": "text", "text": "T", "cache_control": {"type": "ephemeral"}}])
        );
    }

    #[test]
    fn image_url_parts_are_template_literal_strings() {
        // `${block.mimeType}` of a value that is not a string: `String(value)`.
        let m = model("p", "m", true, Value::Null);
        let line = r#"{"role":"user","content":[{"type":"image","mimeType":{"a":1},"data":[1,null,"x"]},{"type":"image","mimeType":5.0,"data":null}]}"#;
        let messages = messages_of(&m, &[line]);
        assert_eq!(
            messages[0]["content"],
            json!([{"type": "image_url", "image_url": {"url": "data:[object Object];base64,1,,x"}},
                {"type": "image_url", "image_url": {"url": "data:5;base64,null"}}])
        );
    }

    #[test]
    fn an_errored_turn_still_counts_as_tool_history() {
        let m = model("p", "m", true, Value::Null);
        let lines = [LINES[0], LINES[7], LINES[11]];
        assert!(bytes_path_taken(&m, &lines, None).iter().all(|t| *t));
        let transcript = transcript(&lines);
        let request = request(&m, None, Map::new(), false);
        let body = build_payload_with(&request, &transcript, true).unwrap();
        let text = String::from_utf8(body.to_json()).unwrap();
        assert!(text.contains(r#""tools":[]"#), "{text}");
    }
}
