//! The Mistral body of pi-mono 0.58.3 `packages/ai/src/providers/mistral.ts`
//! (`buildChatPayload`, `toChatMessages`, `toFunctionTools`, `streamSimpleMistral`): the
//! `@mistralai/mistralai` request object, camelCase as the SDK takes it.

use serde_json::{json, Map, Value};

use super::model::{
    base_options, blocks_of, clamp_reasoning, js_stringify, str_of, Context, Model, Options,
};
use super::transform::{transform, MistralIds};
use super::PayloadError;
use crate::base::{is_truthy, js_trim};

const NO_IMAGES: &str = "(image omitted: model does not support images)";

pub(super) fn simple_options(model: &Model, simple: &Options<'_>) -> Map<String, Value> {
    let mut out = base_options(model, simple.map);
    let reasoning = simple
        .truthy("reasoning")
        .and_then(Value::as_str)
        .map(clamp_reasoning);
    if model.reasoning && reasoning.is_some() {
        out.insert("promptMode".to_owned(), json!("reasoning"));
    }
    out
}

pub(super) fn build(
    model: &Model,
    context: &Context<'_>,
    options: &Options<'_>,
    now_ms: i64,
) -> Result<Value, PayloadError> {
    let ids = MistralIds::default();
    let normalize = |id: &str, _: &Value| ids.normalize(id);
    let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
    let mut chat = to_chat_messages(&messages, model.accepts_images);
    let mut payload = Map::new();
    payload.insert("model".to_owned(), json!(model.id));
    payload.insert("stream".to_owned(), Value::Bool(true));
    if let Some(tools) = context.tools().filter(|t| !t.is_empty()) {
        let tools: Vec<Value> = tools
            .iter()
            .map(|tool| {
                let mut function = Map::new();
                for key in ["name", "description", "parameters"] {
                    if let Some(v) = tool.get(key) {
                        function.insert(key.to_owned(), v.clone());
                    }
                }
                function.insert("strict".to_owned(), Value::Bool(false));
                json!({"type": "function", "function": function})
            })
            .collect();
        payload.insert("tools".to_owned(), Value::Array(tools));
    }
    if let Some(t) = options.get("temperature") {
        payload.insert("temperature".to_owned(), t.clone());
    }
    if let Some(m) = options.get("maxTokens") {
        payload.insert("maxTokens".to_owned(), m.clone());
    }
    if let Some(choice) = options.truthy("toolChoice") {
        let choice = match choice {
            Value::String(_) => choice.clone(),
            other => {
                json!({"type": "function", "function": {"name": other.get("function").and_then(|f| f.get("name")).cloned().unwrap_or(Value::Null)}})
            }
        };
        payload.insert("toolChoice".to_owned(), choice);
    }
    if let Some(mode) = options.truthy("promptMode") {
        payload.insert("promptMode".to_owned(), mode.clone());
    }
    if let Some(prompt) = context.system() {
        chat.insert(0, json!({"role": "system", "content": prompt}));
    }
    payload.insert("messages".to_owned(), Value::Array(chat));
    // Key order as the SDK object is built (messages second).
    let mut ordered = Map::new();
    for key in ["model", "stream", "messages"] {
        if let Some(v) = payload.shift_remove(key) {
            ordered.insert(key.to_owned(), v);
        }
    }
    ordered.extend(payload);
    Ok(Value::Object(ordered))
}

fn image_url(block: &Value) -> Value {
    json!({
        "type": "image_url",
        "imageUrl": format!("data:{};base64,{}", str_of(block, "mimeType"), str_of(block, "data")),
    })
}

/// mistral.ts `buildToolResultText`.
fn tool_result_text(text: &str, has_images: bool, supports_images: bool, is_error: bool) -> String {
    let trimmed = js_trim(text);
    let prefix = if is_error { "[tool error] " } else { "" };
    if !trimmed.is_empty() {
        let suffix = if has_images && !supports_images {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        return format!("{prefix}{trimmed}{suffix}");
    }
    if has_images {
        let body = if supports_images {
            "(see attached image)"
        } else {
            NO_IMAGES
        };
        return format!("{prefix}{body}");
    }
    format!("{prefix}(no tool output)")
}

fn to_chat_messages(messages: &[Value], supports_images: bool) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for msg in messages {
        match msg.get("role").and_then(Value::as_str) {
            Some("user") => {
                let items = match msg.get("content") {
                    Some(Value::String(s)) => {
                        out.push(json!({"role": "user", "content": s}));
                        continue;
                    }
                    Some(Value::Array(items)) => items,
                    _ => continue,
                };
                let had_images = items.iter().any(|i| i["type"] == "image");
                let content: Vec<Value> = items
                    .iter()
                    .filter(|i| i["type"] == "text" || supports_images)
                    .map(|i| {
                        if i["type"] == "text" {
                            json!({"type": "text", "text": str_of(i, "text")})
                        } else {
                            image_url(i)
                        }
                    })
                    .collect();
                if !content.is_empty() {
                    out.push(json!({"role": "user", "content": content}));
                } else if had_images && !supports_images {
                    out.push(json!({"role": "user", "content": NO_IMAGES}));
                }
            }
            Some("assistant") => {
                let mut parts = Vec::new();
                let mut calls = Vec::new();
                for block in blocks_of(msg) {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            let text = str_of(block, "text");
                            if !js_trim(text).is_empty() {
                                parts.push(json!({"type": "text", "text": text}));
                            }
                        }
                        Some("thinking") => {
                            let text = str_of(block, "thinking");
                            if !js_trim(text).is_empty() {
                                parts.push(json!({"type": "thinking", "thinking": [{"type": "text", "text": text}]}));
                            }
                        }
                        _ => {
                            let args = match block.get("arguments") {
                                Some(v) if is_truthy(v) => v.clone(),
                                _ => json!({}),
                            };
                            let mut call = Map::new();
                            if let Some(id) = block.get("id") {
                                call.insert("id".to_owned(), id.clone());
                            }
                            call.insert("type".to_owned(), json!("function"));
                            call.insert(
                                "function".to_owned(),
                                json!({"name": block.get("name").cloned().unwrap_or(Value::Null), "arguments": js_stringify(&args)}),
                            );
                            calls.push(Value::Object(call));
                        }
                    }
                }
                if parts.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = Map::new();
                m.insert("role".to_owned(), json!("assistant"));
                if !parts.is_empty() {
                    m.insert("content".to_owned(), Value::Array(parts));
                }
                if !calls.is_empty() {
                    m.insert("toolCalls".to_owned(), Value::Array(calls));
                }
                out.push(Value::Object(m));
            }
            _ => {
                let content = blocks_of(msg);
                let texts: Vec<&str> = content
                    .iter()
                    .filter(|c| c["type"] == "text")
                    .map(|c| str_of(c, "text"))
                    .collect();
                let has_images = content.iter().any(|c| c["type"] == "image");
                let is_error = msg.get("isError").is_some_and(is_truthy);
                let text =
                    tool_result_text(&texts.join("\n"), has_images, supports_images, is_error);
                let mut parts = vec![json!({"type": "text", "text": text})];
                if supports_images {
                    parts.extend(
                        content
                            .iter()
                            .filter(|c| c["type"] == "image")
                            .map(image_url),
                    );
                }
                let mut m = Map::new();
                m.insert("role".to_owned(), json!("tool"));
                if let Some(id) = msg.get("toolCallId") {
                    m.insert("toolCallId".to_owned(), id.clone());
                }
                if let Some(name) = msg.get("toolName") {
                    m.insert("name".to_owned(), name.clone());
                }
                m.insert("content".to_owned(), Value::Array(parts));
                out.push(Value::Object(m));
            }
        }
    }
    out
}
