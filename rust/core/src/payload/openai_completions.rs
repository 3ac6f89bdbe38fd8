//! The Chat Completions body of pi-mono 0.58.3 `packages/ai/src/providers/openai-completions.ts`
//! (`buildParams`, `convertMessages`, `convertTools`, `detectCompat`/`getCompat`,
//! `streamSimpleOpenAICompletions`).

use serde_json::{json, Map, Value};

use super::model::{
    ascii_prefix, base_options, blocks_of, clamp_reasoning, js_stringify, sanitize_id_chars,
    str_of, Context, Model, Options,
};
use super::transform::transform;
use super::PayloadError;
use crate::base::{is_truthy, js_trim};

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
    let mut out = base_options(model, simple.map);
    if let Some(level) = simple.get("reasoning").and_then(Value::as_str) {
        let level = if model.supports_xhigh() {
            level
        } else {
            clamp_reasoning(level)
        };
        out.insert("reasoningEffort".to_owned(), json!(level));
    }
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

pub(super) fn build(
    model: &Model,
    context: &Context<'_>,
    options: &Options<'_>,
    now_ms: i64,
) -> Result<Value, PayloadError> {
    let compat = compat_of(model);
    // Of the messages as given, before the replay layer (openai-completions.ts).
    let given = context.take_messages()?;
    let tool_history = has_tool_history(&given);
    context.put_back(given);
    let mut messages = convert_messages(model, context, &compat, now_ms)?;
    add_openrouter_anthropic_cache_control(model, &mut messages);

    let mut params = Map::new();
    params.insert("model".to_owned(), json!(model.id));
    params.insert("messages".to_owned(), Value::Array(messages));
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
    Ok(Value::Object(params))
}

/// openai-completions.ts `maybeAddOpenRouterAnthropicCacheControl`.
fn add_openrouter_anthropic_cache_control(model: &Model, messages: &mut [Value]) {
    if model.provider != "openrouter" || !model.id.starts_with("anthropic/") {
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
    let normalize = |id: &str, _: &Value| -> String {
        if id.contains('|') {
            let call_id = id.split('|').next().unwrap_or_default();
            return ascii_prefix(&sanitize_id_chars(call_id), 40).to_owned();
        }
        if model.provider == "openai" {
            return js_utf16_prefix(id, 40);
        }
        id.to_owned()
    };
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
                    let parts: Vec<Value> = items
                        .iter()
                        .filter_map(|item| {
                            if item.get("type").and_then(Value::as_str) == Some("text") {
                                Some(json!({"type": "text", "text": str_of(item, "text")}))
                            } else if model.accepts_images {
                                Some(json!({"type": "image_url", "image_url": {"url": image_url(item)}}))
                            } else {
                                None
                            }
                        })
                        .collect();
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

/// `id.slice(0, n)` in UTF-16 units (a cut inside a surrogate pair drops the half).
fn js_utf16_prefix(id: &str, n: usize) -> String {
    let mut units = 0;
    let mut out = String::new();
    for c in id.chars() {
        units += c.len_utf16();
        if units > n {
            break;
        }
        out.push(c);
    }
    out
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
