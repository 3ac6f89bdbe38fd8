//! The Anthropic Messages body of pi-mono 0.58.3 `packages/ai/src/providers/anthropic.ts`
//! (`buildParams`, `convertMessages`, `convertTools`, `streamSimpleAnthropic`).

use serde_json::{json, Map, Value};

use super::model::{
    adjust_max_tokens_for_thinking, base_options, blocks_of, number, Context, Model, Options,
};
use super::transform::{anthropic_tool_call_id, transform};
use super::PayloadError;
use crate::base::{is_truthy, js_trim};

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
) -> Result<Value, PayloadError> {
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
    params.insert(
        "messages".to_owned(),
        Value::Array(convert_messages(
            context.take_messages(),
            model,
            oauth,
            cache_control.as_ref(),
            now_ms,
        )),
    );
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
    Ok(Value::Object(params))
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
                    let blocks: Vec<Value> = items
                        .iter()
                        .filter_map(|item| {
                            if item.get("type").and_then(Value::as_str) == Some("text") {
                                let text = text_of(item);
                                (!js_trim(text).is_empty())
                                    .then(|| json!({"type": "text", "text": text}))
                            } else if model.accepts_images {
                                Some(image_block(item))
                            } else {
                                None
                            }
                        })
                        .collect();
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
