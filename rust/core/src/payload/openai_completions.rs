//! The Chat Completions body of pi-mono 0.58.3 `packages/ai/src/providers/openai-completions.ts`
//! (`buildParams`, `convertMessages`, `convertTools`, `detectCompat`/`getCompat`,
//! `streamSimpleOpenAICompletions`).

use serde_json::{json, Map, Value};

use std::borrow::Cow;

use super::model::{
    blocks_of, effort_options, js_stringify, str_of, user_parts, Build, Context, Model, Options,
};
use super::raw::{self, text_raw, Block, BlockFields, BlockKind, MsgFields, Out, RawStr, Replayed};
use super::transform::transform;
use super::{Payload, PayloadError};
use crate::base::{is_truthy, js_trim, parse_value};

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
    // reads, else through value trees.
    let written = context
        .raw
        .then(|| write_messages_raw(model, context, &compat))
        .flatten();
    let (messages, tool_history, messages_json) = match written {
        // Written in place of this placeholder by `Payload`.
        Some((json, tool_history)) => (Value::Null, tool_history, Some(json)),
        None => {
            // Of the messages as given, before the replay layer (openai-completions.ts).
            let given = context.take_messages()?;
            let tool_history = has_tool_history(&given);
            context.put_back(given);
            let mut messages = convert_messages(model, context, &compat, now_ms)?;
            add_openrouter_anthropic_cache_control(model, &mut messages);
            (Value::Array(messages), tool_history, None)
        }
    };

    let mut params = Map::new();
    params.insert("model".to_owned(), json!(model.id));
    params.insert("messages".to_owned(), messages);
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
        params.insert("tools".to_owned(), convert_tools(tools, &compat));
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
    Ok(Payload::spliced(
        Value::Object(params),
        &["messages"],
        messages_json,
    ))
}

/// OpenRouter's Anthropic models get a cache breakpoint (openai-completions.ts
/// `maybeAddOpenRouterAnthropicCacheControl`).
fn openrouter_anthropic(model: &Model) -> bool {
    model.provider == "openrouter" && model.id.starts_with("anthropic/")
}

/// openai-completions.ts `maybeAddOpenRouterAnthropicCacheControl`.
fn add_openrouter_anthropic_cache_control(model: &Model, messages: &mut [Value]) {
    if !openrouter_anthropic(model) {
        return;
    }
    for msg in messages.iter_mut().rev() {
        if !matches!(msg["role"].as_str(), Some("user" | "assistant")) {
            continue;
        }
        match msg.get_mut("content") {
            Some(content @ Value::String(_)) => {
                let text = content.take();
                *content =
                    json!([{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]);
                return;
            }
            Some(Value::Array(parts)) => {
                for part in parts.iter_mut().rev() {
                    if part["type"] == "text" {
                        if let Some(obj) = part.as_object_mut() {
                            obj.insert("cache_control".to_owned(), json!({"type": "ephemeral"}));
                        }
                        return;
                    }
                }
            }
            _ => {}
        }
    }
}

fn of_type<'m>(msg: &'m Value, kind: &'m str) -> impl Iterator<Item = &'m Value> + 'm {
    blocks_of(msg)
        .iter()
        .filter(move |b| b.get("type").and_then(Value::as_str) == Some(kind))
}

fn image_url(block: &Value) -> String {
    format!(
        "data:{};base64,{}",
        js_coerce(block.get("mimeType")),
        js_coerce(block.get("data"))
    )
}

/// Template-literal coercion of an optional string field.
fn js_coerce(v: Option<&Value>) -> String {
    match v {
        None => "undefined".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => js_stringify(other),
    }
}

fn convert_messages(
    model: &Model,
    context: &Context<'_>,
    compat: &Compat,
    now_ms: i64,
) -> Result<Vec<Value>, PayloadError> {
    let normalize = |id: &str, _: &Value| normalize_tool_call_id(model, id);
    let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
    let mut params = Vec::with_capacity(messages.len() + 1);
    if let Some(prompt) = context.system() {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        params.push(json!({"role": role, "content": prompt}));
    }
    let bridge = || json!({"role": "assistant", "content": "I have processed the tool results."});
    let mut last_role: Option<String> = None;
    let mut i = 0;
    while i < messages.len() {
        let msg = &messages[i];
        let role = msg.get("role").and_then(Value::as_str);
        if compat.requires_assistant_after_tool_result
            && last_role.as_deref() == Some("toolResult")
            && role == Some("user")
        {
            params.push(bridge());
        }
        match role {
            Some("user") => match msg.get("content") {
                Some(Value::String(s)) => params.push(json!({"role": "user", "content": s})),
                Some(Value::Array(items)) => {
                    let parts = user_parts(
                        items,
                        model.accepts_images,
                        |item| Some(json!({"type": "text", "text": str_of(item, "text")})),
                        |item| json!({"type": "image_url", "image_url": {"url": image_url(item)}}),
                    );
                    if parts.is_empty() {
                        i += 1;
                        continue;
                    }
                    params.push(json!({"role": "user", "content": parts}));
                }
                _ => {}
            },
            Some("assistant") => {
                if let Some(out) = convert_assistant(msg, compat)? {
                    params.push(out);
                } else {
                    i += 1;
                    continue;
                }
            }
            Some("toolResult") => {
                let mut images = Vec::new();
                let mut j = i;
                while j < messages.len() && messages[j]["role"] == "toolResult" {
                    let tool = &messages[j];
                    let text: Vec<&str> =
                        of_type(tool, "text").map(|b| str_of(b, "text")).collect();
                    let text = text.join("\n");
                    let mut out = Map::new();
                    out.insert("role".to_owned(), json!("tool"));
                    out.insert(
                        "content".to_owned(),
                        json!(if text.is_empty() {
                            "(see attached image)"
                        } else {
                            text.as_str()
                        }),
                    );
                    if let Some(id) = tool.get("toolCallId") {
                        out.insert("tool_call_id".to_owned(), id.clone());
                    }
                    if compat.requires_tool_result_name {
                        if let Some(name) = tool.get("toolName").filter(|v| is_truthy(v)) {
                            out.insert("name".to_owned(), name.clone());
                        }
                    }
                    params.push(Value::Object(out));
                    if model.accepts_images {
                        for block in of_type(tool, "image") {
                            images.push(json!({"type": "image_url", "image_url": {"url": image_url(block)}}));
                        }
                    }
                    j += 1;
                }
                i = j;
                if images.is_empty() {
                    last_role = Some("toolResult".to_owned());
                } else {
                    if compat.requires_assistant_after_tool_result {
                        params.push(bridge());
                    }
                    let mut content = vec![
                        json!({"type": "text", "text": "Attached image(s) from tool result:"}),
                    ];
                    content.extend(images);
                    params.push(json!({"role": "user", "content": content}));
                    last_role = Some("user".to_owned());
                }
                continue;
            }
            _ => {}
        }
        last_role = role.map(str::to_owned);
        i += 1;
    }
    Ok(params)
}

/// The tool-call id normaliser `convertMessages` hands `transformMessages`: the request
/// guard's, so the guard sees the ids this writer sends.
fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    crate::hygiene::chat_tool_call_id(id, model.provider == "openai")
}

fn convert_assistant(msg: &Value, compat: &Compat) -> Result<Option<Value>, PayloadError> {
    let mut out = Map::new();
    out.insert("role".to_owned(), json!("assistant"));
    let mut content = if compat.requires_assistant_after_tool_result {
        json!("")
    } else {
        Value::Null
    };
    let texts: Vec<&str> = of_type(msg, "text")
        .map(|b| str_of(b, "text"))
        .filter(|t| !js_trim(t).is_empty())
        .collect();
    if !texts.is_empty() {
        content = Value::String(texts.concat());
    }
    let thinking: Vec<&Value> = of_type(msg, "thinking")
        .filter(|b| !js_trim(str_of(b, "thinking")).is_empty())
        .collect();
    let mut extra: Option<(String, String)> = None;
    if !thinking.is_empty() {
        if compat.requires_thinking_as_text {
            let text: Vec<&str> = thinking.iter().map(|b| str_of(b, "thinking")).collect();
            let part = json!({"type": "text", "text": text.join("\n\n")});
            match &mut content {
                // Upstream calls `unshift` on the joined text string and throws.
                Value::String(s) if !s.is_empty() => {
                    return Err(PayloadError::Upstream(
                        "textContent.unshift is not a function".to_owned(),
                    ));
                }
                _ => content = json!([part]),
            }
        } else {
            let signature = str_of(thinking[0], "thinkingSignature");
            if !signature.is_empty() {
                let text: Vec<&str> = thinking.iter().map(|b| str_of(b, "thinking")).collect();
                extra = Some((signature.to_owned(), text.join("\n")));
            }
        }
    }
    out.insert("content".to_owned(), content);
    if let Some((key, text)) = extra {
        out.insert(key, Value::String(text));
    }
    let calls: Vec<&Value> = of_type(msg, "toolCall").collect();
    if !calls.is_empty() {
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(|tc| {
                let mut function = Map::new();
                function.insert(
                    "name".to_owned(),
                    tc.get("name").cloned().unwrap_or(Value::Null),
                );
                if let Some(args) = tc.get("arguments") {
                    function.insert("arguments".to_owned(), json!(js_stringify(args)));
                }
                let mut call = Map::new();
                if let Some(id) = tc.get("id") {
                    call.insert("id".to_owned(), id.clone());
                }
                call.insert("type".to_owned(), json!("function"));
                call.insert("function".to_owned(), Value::Object(function));
                Value::Object(call)
            })
            .collect();
        out.insert("tool_calls".to_owned(), Value::Array(tool_calls));
        let details: Vec<Value> = calls
            .iter()
            .filter_map(|tc| tc.get("thoughtSignature").and_then(Value::as_str))
            .filter(|s| !s.is_empty())
            .filter_map(|s| serde_json::from_str::<Value>(s).ok())
            .filter(is_truthy)
            .collect();
        if !details.is_empty() {
            out.insert("reasoning_details".to_owned(), Value::Array(details));
        }
    }
    let has_content = match &out["content"] {
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    if !has_content && calls.is_empty() {
        return Ok(None);
    }
    Ok(Some(Value::Object(out)))
}

fn convert_tools(tools: &[Value], compat: &Compat) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let mut function = Map::new();
                for key in ["name", "description", "parameters"] {
                    if let Some(v) = tool.get(key) {
                        function.insert(key.to_owned(), v.clone());
                    }
                }
                if compat.supports_strict_mode {
                    function.insert("strict".to_owned(), Value::Bool(false));
                }
                json!({"type": "function", "function": function})
            })
            .collect(),
    )
}

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
}

/// The written messages array: the body bytes and the separator state.
struct Messages {
    out: Out,
    count: usize,
}

impl Messages {
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

    fn bridge(&mut self) -> CacheSpot {
        self.begin();
        self.out.raw(r#"{"role":"assistant","content":"#);
        let at = self.out.len();
        self.out.raw(r#""I have processed the tool results.""#);
        let end = self.out.len();
        self.out.raw("}");
        CacheSpot::Str { at, end }
    }
}

/// [`convert_messages`] (and the OpenRouter Anthropic breakpoint) written straight from the
/// stored messages: unmodified text, tool arguments, results and image data are copied from
/// the stored bytes. Also whether the messages as given hold a tool call or result (before the
/// replay layer drops errored turns, as `hasToolHistory`). `None` when a message has a shape
/// only the value-tree path handles (the caller then runs that).
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
    let mut w = Messages {
        out: Out::with_capacity(total + 256),
        count: 0,
    };
    w.out.raw("[");
    if let Some(prompt) = context.system() {
        w.begin();
        let role = if model.reasoning && compat.supports_developer_role {
            r#"{"role":"developer","content":"#
        } else {
            r#"{"role":"system","content":"#
        };
        w.out.raw(role);
        w.out.str(prompt);
        w.out.raw("}");
    }
    let replayed = &replay.messages;
    // The last user or assistant message with a string content or a text part: where the
    // OpenRouter Anthropic breakpoint goes.
    let mut spot: Option<CacheSpot> = None;
    let mut after_tool_result = false;
    // The calls of the last assistant turn sent, and how many of them the synthetic results
    // written so far passed: those results answer its unanswered calls, in order.
    let mut calls: &[Block<'_>] = &[];
    let mut next_call = 0;
    let mut i = 0;
    while i < replayed.len() {
        match &replayed[i] {
            Replayed::User(fields) => {
                if compat.requires_assistant_after_tool_result && after_tool_result {
                    spot = Some(w.bridge());
                }
                match write_user(&mut w, fields, model)? {
                    Wrote::Message(s) => {
                        spot = s.or(spot);
                        after_tool_result = false;
                    }
                    Wrote::NothingRoleKept => after_tool_result = false,
                    Wrote::Nothing => {}
                }
            }
            Replayed::Assistant(fields, range) => {
                let same_model = raw::is_same_model(fields, model)?;
                let blocks = &replay.blocks[range.clone()];
                if blocks.iter().any(|b| b.kind == BlockKind::ToolCall) {
                    calls = blocks;
                    next_call = 0;
                }
                if let Wrote::Message(s) = write_assistant(&mut w, blocks, same_model, compat)? {
                    spot = s.or(spot);
                    after_tool_result = false;
                }
            }
            Replayed::ToolResult { .. } | Replayed::Synthetic { .. } => {
                // A run of tool results; their images follow in one user message.
                let mut images = Out::default();
                while let Some(msg @ (Replayed::ToolResult { .. } | Replayed::Synthetic { .. })) =
                    replayed.get(i)
                {
                    let name = match msg {
                        Replayed::Synthetic { id } if compat.requires_tool_result_name => {
                            let (at, call) = synthetic_call(calls, next_call, id)?;
                            next_call = at + 1;
                            call.fields.name
                        }
                        _ => None,
                    };
                    write_tool_result(&mut w, &mut images, msg, name, model, compat)?;
                    i += 1;
                }
                if images.buf.is_empty() {
                    after_tool_result = true;
                } else {
                    if compat.requires_assistant_after_tool_result {
                        w.bridge();
                    }
                    w.begin();
                    w.out
                        .raw(r#"{"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:""#);
                    let close = w.out.len();
                    w.out.raw("}");
                    w.out.buf.extend_from_slice(&images.buf);
                    w.out.raw("]}");
                    spot = Some(CacheSpot::Part { close });
                    after_tool_result = false;
                }
                continue;
            }
        }
        i += 1;
    }
    w.out.raw("]");
    let mut buf = w.out.buf;
    if openrouter_anthropic(model) {
        const CC: &[u8] = br#","cache_control":{"type":"ephemeral"}"#;
        match spot {
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
    Some((buf, tool_history))
}

/// A template-literal part of an image URL: the string's inner text, `undefined` when absent;
/// `None` (not handled here) for any other value.
fn write_url_part(out: &mut Out, field: Option<&str>) -> Option<()> {
    match field {
        None => out.raw("undefined"),
        Some(raw) if raw.starts_with('"') => RawStr::of(raw)?.write_inner(out),
        Some(_) => return None,
    }
    Some(())
}

/// An `image_url` part with the block's data URL.
fn write_image(out: &mut Out, block: &BlockFields<'_>) -> Option<()> {
    out.raw(r#"{"type":"image_url","image_url":{"url":"data:"#);
    write_url_part(out, block.mime_type)?;
    out.raw(";base64,");
    write_url_part(out, block.data)?;
    out.raw(r#""}}"#);
    Some(())
}

fn write_user(w: &mut Messages, fields: &MsgFields<'_>, model: &Model) -> Option<Wrote> {
    let Some(content) = fields.content else {
        return Some(Wrote::NothingRoleKept);
    };
    match content.as_bytes().first() {
        Some(b'"') => {
            let s = RawStr::of(content)?;
            w.begin();
            w.out.raw(r#"{"role":"user","content":"#);
            let at = w.out.len();
            w.out.copy_str(&s);
            let end = w.out.len();
            w.out.raw("}");
            Some(Wrote::Message(Some(CacheSpot::Str { at, end })))
        }
        Some(b'[') => {
            let start = w.begin();
            w.out.raw(r#"{"role":"user","content":["#);
            let mut any = false;
            let mut last_text = None;
            for item in raw::array_items(content)? {
                let block = BlockFields::parse(item)?;
                let is_text = block.is("text")?;
                if !is_text && !model.accepts_images {
                    continue;
                }
                if any {
                    w.out.raw(",");
                }
                any = true;
                if is_text {
                    w.out.raw(r#"{"type":"text","text":"#);
                    match text_raw(block.text)? {
                        Some(text) => w.out.copy_str(&text),
                        None => w.out.raw(r#""""#),
                    }
                    last_text = Some(CacheSpot::Part { close: w.out.len() });
                    w.out.raw("}");
                } else {
                    write_image(&mut w.out, &block)?;
                }
            }
            if !any {
                w.undo(start);
                return Some(Wrote::Nothing);
            }
            w.out.raw("]}");
            Some(Wrote::Message(last_text))
        }
        _ => Some(Wrote::NothingRoleKept),
    }
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

/// An assistant message ([`convert_assistant`]).
fn write_assistant(
    w: &mut Messages,
    blocks: &[Block<'_>],
    same_model: bool,
    compat: &Compat,
) -> Option<Wrote> {
    let mut texts = Vec::new();
    let mut thinking = Vec::new();
    // The `thinkingSignature` of the first thinking block sent.
    let mut first_signature = None;
    let mut calls = Vec::new();
    for block in blocks {
        let f = &block.fields;
        match block.kind {
            BlockKind::Text | BlockKind::ConvertedText => {
                if let Some(text) = text_raw(f.text)?.filter(|t| !t.is_blank()) {
                    texts.push(text);
                }
            }
            BlockKind::Thinking => {
                if let Some(text) = text_raw(f.thinking)?.filter(|t| !t.is_blank()) {
                    if thinking.is_empty() {
                        first_signature = f.thinking_signature;
                    }
                    thinking.push(text);
                }
            }
            BlockKind::ToolCall => calls.push(block),
            BlockKind::Other => {}
        }
    }
    // Upstream calls `unshift` on the joined text string and throws: the value path says so.
    let thinking_as_text = !thinking.is_empty() && compat.requires_thinking_as_text;
    if thinking_as_text && !texts.is_empty() {
        return None;
    }
    // The thinking under the key its signature names (e.g. `reasoning_content`).
    let mut signature_key = None;
    if !thinking.is_empty() && !compat.requires_thinking_as_text {
        if let Some(sig) = text_raw(first_signature)? {
            let key = sig.text().into_owned();
            if matches!(
                key.as_str(),
                "role" | "content" | "tool_calls" | "reasoning_details"
            ) {
                // A key the message already has: its place would move.
                return None;
            }
            if !key.is_empty() {
                signature_key = Some(key);
            }
        }
    }
    // `""` (the content of a message after a tool result on some servers) is no content.
    let has_content = !texts.is_empty() || thinking_as_text;
    if !has_content && calls.is_empty() {
        return Some(Wrote::Nothing);
    }

    w.begin();
    let out = &mut w.out;
    out.raw(r#"{"role":"assistant","content":"#);
    let spot = if thinking_as_text {
        out.raw(r#"[{"type":"text","text":"#);
        write_joined(out, &thinking, "\\n\\n");
        let close = out.len();
        out.raw("}]");
        Some(CacheSpot::Part { close })
    } else if !texts.is_empty() || compat.requires_assistant_after_tool_result {
        let at = out.len();
        write_joined(out, &texts, "");
        Some(CacheSpot::Str { at, end: out.len() })
    } else {
        out.raw("null");
        None
    };
    if let Some(key) = signature_key {
        out.raw(",");
        out.str(&key);
        out.raw(":");
        write_joined(out, &thinking, "\\n");
    }
    if !calls.is_empty() {
        out.raw(r#","tool_calls":"#);
        out.array(&calls, |out, call| write_tool_call(out, call));
        // Signatures of other models were dropped by the replay layer.
        if same_model {
            let mut details = Vec::new();
            for call in &calls {
                let Some(sig) = text_raw(call.fields.thought_signature)? else {
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
            if !details.is_empty() {
                out.raw(r#","reasoning_details":"#);
                out.value(&Value::Array(details));
            }
        }
    }
    out.raw("}");
    Some(Wrote::Message(spot))
}

/// One `tool_calls` entry: arguments as the `JSON.stringify` text of the stored value.
fn write_tool_call(out: &mut Out, call: &Block<'_>) {
    let f = &call.fields;
    out.raw("{");
    if out.id(r#""id":"#, call.new_id.as_deref(), f.id) {
        out.raw(",");
    }
    out.raw(r#""type":"function","function":{"name":"#);
    match f.name {
        Some(name) => out.copy(name),
        None => out.raw("null"),
    }
    if let Some(args) = f.arguments {
        out.raw(r#","arguments":"#);
        write_stringified(out, args);
    }
    out.raw("}}");
}

/// `JSON.stringify` of a stored value, as a string literal: the stored text itself when it is
/// already in that form.
pub(super) fn write_stringified(out: &mut Out, stored: &str) {
    let text = if raw::is_canonical(stored) {
        Cow::Borrowed(stored)
    } else {
        Cow::Owned(js_stringify(&parse_value(stored).unwrap_or(Value::Null)))
    };
    out.str(&text);
}

/// The call (and its place in `blocks`) a synthetic result with this id answers: the next
/// tool call from `from` with that id (after normalisation).
pub(super) fn synthetic_call<'b, 'a>(
    blocks: &'b [Block<'a>],
    from: usize,
    id: &str,
) -> Option<(usize, &'b Block<'a>)> {
    blocks.iter().enumerate().skip(from).find(|(_, b)| {
        b.kind == BlockKind::ToolCall
            && match &b.new_id {
                Some(new_id) => new_id == id,
                None => b
                    .fields
                    .id
                    .and_then(RawStr::of)
                    .is_some_and(|i| i.text() == id),
            }
    })
}

/// One `tool` message; its images (when the model takes them) go to `images`. A synthetic
/// result's `toolName` is `call_name`, the name of the call it answers.
fn write_tool_result(
    w: &mut Messages,
    images: &mut Out,
    msg: &Replayed<'_>,
    call_name: Option<&str>,
    model: &Model,
    compat: &Compat,
) -> Option<()> {
    let (fields, new_id) = match msg {
        Replayed::ToolResult { fields, new_id } => (fields, new_id),
        Replayed::Synthetic { id } => {
            w.begin();
            w.out
                .raw(r#"{"role":"tool","content":"No result provided","tool_call_id":"#);
            w.out.str(id);
            if compat.requires_tool_result_name {
                if let Some(name) = call_name.filter(|n| raw::raw_truthy(n)) {
                    w.out.raw(r#","name":"#);
                    w.out.copy(name);
                }
            }
            w.out.raw("}");
            return Some(());
        }
        _ => return None,
    };
    let items = match fields.content {
        Some(c) if c.starts_with('[') => raw::array_items(c)?,
        _ => Vec::new(),
    };
    let mut texts = Vec::new();
    for item in items {
        let block = BlockFields::parse(item)?;
        if block.is("text")? {
            texts.push(text_raw(block.text)?);
        } else if block.is("image")? && model.accepts_images {
            // After the text part of the user message they go to.
            images.raw(",");
            write_image(images, &block)?;
        }
    }
    w.begin();
    let out = &mut w.out;
    out.raw(r#"{"role":"tool","content":"#);
    let at = out.len();
    out.raw("\"");
    raw::write_lines(out, &texts);
    if out.len() == at + 1 {
        out.raw("(see attached image)");
    }
    out.raw("\"");
    out.id_member(
        r#","tool_call_id":"#,
        new_id.as_deref(),
        fields.tool_call_id,
    );
    if compat.requires_tool_result_name {
        if let Some(name) = fields.tool_name.filter(|n| raw::raw_truthy(n)) {
            out.raw(r#","name":"#);
            out.copy(name);
        }
    }
    out.raw("}");
    Some(())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Map, Value};

    use super::super::test_support::{bench_transcript, prefixes_agree, request, transcript};
    use super::super::{build_payload_with, PayloadRequest};
    use crate::transcript::Transcript;

    /// Both paths on `lines` (each prefix too); whether the bytes path was taken each time.
    fn both_paths(model: &Value, lines: &[&str], system: Option<&str>) -> Vec<bool> {
        prefixes_agree(model, lines, system)
            .into_iter()
            .map(|taken| taken.unwrap_or(false))
            .collect()
    }

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
            let taken = both_paths(&m, &LINES, system);
            assert!(taken.iter().all(|t| *t), "{m}: {taken:?}");
        }
        // Thinking beside text throws upstream (the value path says so); before that message
        // the bytes path writes thinking as text.
        let as_text = model("p", "m", true, json!({"requiresThinkingAsText": true}));
        let taken = both_paths(&as_text, &LINES, Some("sys"));
        assert!(taken[..3].iter().all(|t| *t), "{taken:?}");
        let only_thought = [LINES[0], LINES[10], LINES[11]];
        assert!(both_paths(&as_text, &only_thought, None).iter().all(|t| *t));
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

    #[test]
    fn an_errored_turn_still_counts_as_tool_history() {
        let m = model("p", "m", true, Value::Null);
        let lines = [LINES[0], LINES[7], LINES[11]];
        assert!(both_paths(&m, &lines, None).iter().all(|t| *t));
        let transcript = transcript(&lines);
        let request = request(&m, None, Map::new(), false);
        let body = build_payload_with(&request, &transcript, true).unwrap();
        let text = String::from_utf8(body.to_json()).unwrap();
        assert!(text.contains(r#""tools":[]"#), "{text}");
    }
}
