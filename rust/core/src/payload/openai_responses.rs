//! The Responses API bodies of pi-mono 0.58.3 `packages/ai/src/providers/`:
//! `openai-responses.ts`, `azure-openai-responses.ts` and `openai-codex-responses.ts`
//! (`buildParams` / `buildRequestBody`), over `openai-responses-shared.ts`
//! (`convertResponsesMessages`, `convertResponsesTools`).

use serde_json::{json, Map, Value};

use super::model::{
    base_options, blocks_of, clamp_reasoning, js_stringify, sanitize_id_chars, short_hash, str_of,
    strip_lone_surrogate_escapes, Context, Model, Options,
};
use super::transform::transform;
use super::PayloadError;

/// Which of the three APIs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    OpenAI,
    Azure,
    Codex,
}

/// `streamSimple*`: `SimpleStreamOptions` → the provider's options (the same for all three).
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
    out
}

pub(super) fn build(
    model: &Model,
    context: &Context<'_>,
    options: &Options<'_>,
    now_ms: i64,
) -> Result<Value, PayloadError> {
    let flavor = match model.api.as_str() {
        "azure-openai-responses" => Flavor::Azure,
        "openai-codex-responses" => Flavor::Codex,
        _ => Flavor::OpenAI,
    };
    let allowed: &[&str] = match flavor {
        Flavor::Azure => &[
            "openai",
            "openai-codex",
            "opencode",
            "azure-openai-responses",
        ],
        _ => &["openai", "openai-codex", "opencode"],
    };
    let mut input = convert_messages(model, context, allowed, flavor != Flavor::Codex, now_ms)?;
    let mut params = Map::new();
    if flavor == Flavor::Codex {
        params.insert("model".to_owned(), json!(model.id));
        params.insert("store".to_owned(), Value::Bool(false));
        params.insert("stream".to_owned(), Value::Bool(true));
        if let Some(prompt) = context.system_prompt {
            params.insert("instructions".to_owned(), json!(prompt));
        }
        params.insert("input".to_owned(), Value::Array(input));
        let verbosity = options
            .truthy("textVerbosity")
            .cloned()
            .unwrap_or_else(|| json!("medium"));
        params.insert("text".to_owned(), json!({"verbosity": verbosity}));
        params.insert("include".to_owned(), json!(["reasoning.encrypted_content"]));
        if let Some(key) = options.get("sessionId") {
            params.insert("prompt_cache_key".to_owned(), key.clone());
        }
        params.insert("tool_choice".to_owned(), json!("auto"));
        params.insert("parallel_tool_calls".to_owned(), Value::Bool(true));
        if let Some(t) = options.get("temperature") {
            params.insert("temperature".to_owned(), t.clone());
        }
        if let Some(tools) = context.tools() {
            params.insert("tools".to_owned(), convert_tools(tools, Value::Null));
        }
        if let Some(effort) = options.get("reasoningEffort") {
            let effort = match effort.as_str() {
                Some(e) => json!(codex_clamp_effort(&model.id, e)),
                None => effort.clone(),
            };
            let summary = match options.get("reasoningSummary") {
                Some(s) if !s.is_null() => s.clone(),
                _ => json!("auto"),
            };
            params.insert(
                "reasoning".to_owned(),
                json!({"effort": effort, "summary": summary}),
            );
        }
        return Ok(Value::Object(params));
    }

    let juice_wanted = model.reasoning
        && options.truthy("reasoningEffort").is_none()
        && options.truthy("reasoningSummary").is_none()
        && match flavor {
            // The built-in models are named `GPT-5…`: only custom lowercase names match.
            Flavor::OpenAI => model.name.starts_with("gpt-5"),
            _ => model.name.to_lowercase().starts_with("gpt-5"),
        };
    if juice_wanted {
        input.push(json!({
            "role": "developer",
            "content": [{"type": "input_text", "text": "# Juice: 0 !important"}],
        }));
    }
    if flavor == Flavor::Azure {
        let deployment = options
            .truthy("azureDeploymentName")
            .cloned()
            .unwrap_or_else(|| json!(model.id));
        params.insert("model".to_owned(), deployment);
        params.insert("input".to_owned(), Value::Array(input));
        params.insert("stream".to_owned(), Value::Bool(true));
        if let Some(key) = options.get("sessionId") {
            params.insert("prompt_cache_key".to_owned(), key.clone());
        }
    } else {
        // openai-responses.ts `resolveCacheRetention` (PI_CACHE_RETENTION is not read).
        let retention = options
            .truthy("cacheRetention")
            .and_then(Value::as_str)
            .unwrap_or("short");
        params.insert("model".to_owned(), json!(model.id));
        params.insert("input".to_owned(), Value::Array(input));
        params.insert("stream".to_owned(), Value::Bool(true));
        if retention != "none" {
            if let Some(key) = options.get("sessionId") {
                params.insert("prompt_cache_key".to_owned(), key.clone());
            }
        }
        if retention == "long" && model.base_url.contains("api.openai.com") {
            params.insert("prompt_cache_retention".to_owned(), json!("24h"));
        }
        params.insert("store".to_owned(), Value::Bool(false));
    }
    if let Some(max) = options.truthy("maxTokens") {
        params.insert("max_output_tokens".to_owned(), max.clone());
    }
    if let Some(t) = options.get("temperature") {
        params.insert("temperature".to_owned(), t.clone());
    }
    if flavor == Flavor::OpenAI {
        if let Some(tier) = options.get("serviceTier") {
            params.insert("service_tier".to_owned(), tier.clone());
        }
    }
    if let Some(tools) = context.tools() {
        params.insert("tools".to_owned(), convert_tools(tools, Value::Bool(false)));
    }
    if model.reasoning {
        let effort = options.truthy("reasoningEffort");
        let summary = options.truthy("reasoningSummary");
        if effort.is_some() || summary.is_some() {
            params.insert(
                "reasoning".to_owned(),
                json!({
                    "effort": effort.cloned().unwrap_or_else(|| json!("medium")),
                    "summary": summary.cloned().unwrap_or_else(|| json!("auto")),
                }),
            );
            params.insert("include".to_owned(), json!(["reasoning.encrypted_content"]));
        }
    }
    Ok(Value::Object(params))
}

/// openai-codex-responses.ts `clampReasoningEffort`.
fn codex_clamp_effort<'e>(model_id: &str, effort: &'e str) -> &'e str {
    let id = model_id.rsplit('/').next().unwrap_or(model_id);
    let newer = ["gpt-5.2", "gpt-5.3", "gpt-5.4"]
        .iter()
        .any(|p| id.starts_with(p));
    if newer && effort == "minimal" {
        return "low";
    }
    if id == "gpt-5.1" && effort == "xhigh" {
        return "high";
    }
    if id == "gpt-5.1-codex-mini" {
        return if matches!(effort, "high" | "xhigh") {
            "high"
        } else {
            "medium"
        };
    }
    effort
}

/// `parseTextSignature`: `(id, phase)` from a legacy id or `{"v":1,"id",phase?}` JSON.
fn parse_text_signature(signature: &str) -> (String, Option<&'static str>) {
    if signature.starts_with('{') {
        let stripped = strip_lone_surrogate_escapes(signature);
        let text = stripped.as_deref().unwrap_or(signature);
        if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) {
            if obj.get("v").and_then(Value::as_f64) == Some(1.0) {
                if let Some(Value::String(id)) = obj.get("id") {
                    let phase = match obj.get("phase").and_then(Value::as_str) {
                        Some("commentary") => Some("commentary"),
                        Some("final_answer") => Some("final_answer"),
                        _ => None,
                    };
                    return (id.clone(), phase);
                }
            }
        }
    }
    (signature.to_owned(), None)
}

/// The `fc_`-prefixed, sanitised `call|item` id (`convertResponsesMessages`'s normalizer).
fn normalize_pair(id: &str) -> String {
    let mut parts = id.split('|');
    let call = sanitize_id_chars(parts.next().unwrap_or_default());
    let mut item = sanitize_id_chars(parts.next().unwrap_or("undefined"));
    if !item.starts_with("fc") {
        item = format!("fc_{item}");
    }
    let cut = |s: &str| s[..s.len().min(64)].trim_end_matches('_').to_owned();
    format!("{}|{}", cut(&call), cut(&item))
}

fn data_url(block: &Value) -> String {
    format!(
        "data:{};base64,{}",
        str_of(block, "mimeType"),
        str_of(block, "data")
    )
}

fn convert_messages(
    model: &Model,
    context: &Context<'_>,
    allowed: &[&str],
    include_system: bool,
    now_ms: i64,
) -> Result<Vec<Value>, PayloadError> {
    let normalize = |id: &str, _: &Value| -> String {
        if !allowed.contains(&model.provider.as_str()) || !id.contains('|') {
            return id.to_owned();
        }
        normalize_pair(id)
    };
    let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
    let mut out = Vec::with_capacity(messages.len() + 1);
    if include_system {
        if let Some(prompt) = context.system() {
            let role = if model.reasoning {
                "developer"
            } else {
                "system"
            };
            out.push(json!({"role": role, "content": prompt}));
        }
    }
    let mut index = 0usize;
    for msg in &messages {
        match msg.get("role").and_then(Value::as_str) {
            Some("user") => match msg.get("content") {
                Some(Value::String(s)) => {
                    out.push(
                        json!({"role": "user", "content": [{"type": "input_text", "text": s}]}),
                    );
                }
                Some(Value::Array(items)) => {
                    let parts: Vec<Value> = items
                        .iter()
                        .filter_map(|item| {
                            if item.get("type").and_then(Value::as_str) == Some("text") {
                                Some(json!({"type": "input_text", "text": str_of(item, "text")}))
                            } else if model.accepts_images {
                                Some(json!({"type": "input_image", "detail": "auto", "image_url": data_url(item)}))
                            } else {
                                None
                            }
                        })
                        .collect();
                    if parts.is_empty() {
                        continue;
                    }
                    out.push(json!({"role": "user", "content": parts}));
                }
                _ => {}
            },
            Some("assistant") => {
                let different_model = str_of(msg, "model") != model.id
                    && str_of(msg, "provider") == model.provider
                    && str_of(msg, "api") == model.api;
                let mut items = Vec::new();
                for block in blocks_of(msg) {
                    match block.get("type").and_then(Value::as_str) {
                        Some("thinking") => {
                            let signature = str_of(block, "thinkingSignature");
                            if !signature.is_empty() {
                                // A lone surrogate escape parses in JS; drop it, as the
                                // deviation for replayed reasoning items says.
                                let stripped = strip_lone_surrogate_escapes(signature);
                                let item = serde_json::from_str::<Value>(
                                    stripped.as_deref().unwrap_or(signature),
                                )
                                .map_err(|_| {
                                    PayloadError::Upstream(json_parse_message(signature))
                                })?;
                                items.push(item);
                            }
                        }
                        Some("text") => {
                            let signature = str_of(block, "textSignature");
                            let (id, phase) = if signature.is_empty() {
                                (String::new(), None)
                            } else {
                                parse_text_signature(signature)
                            };
                            let id = if id.is_empty() {
                                format!("msg_{index}")
                            } else if id.encode_utf16().count() > 64 {
                                format!("msg_{}", short_hash(&id))
                            } else {
                                id
                            };
                            let mut item = Map::new();
                            item.insert("type".to_owned(), json!("message"));
                            item.insert("role".to_owned(), json!("assistant"));
                            item.insert(
                                "content".to_owned(),
                                json!([{"type": "output_text", "text": str_of(block, "text"), "annotations": []}]),
                            );
                            item.insert("status".to_owned(), json!("completed"));
                            item.insert("id".to_owned(), json!(id));
                            if let Some(phase) = phase {
                                item.insert("phase".to_owned(), json!(phase));
                            }
                            items.push(Value::Object(item));
                        }
                        Some("toolCall") => {
                            let id = str_of(block, "id");
                            let mut parts = id.split('|');
                            let call_id = parts.next().unwrap_or_default();
                            let mut item_id = parts.next();
                            if different_model && item_id.is_some_and(|i| i.starts_with("fc_")) {
                                item_id = None;
                            }
                            let mut item = Map::new();
                            item.insert("type".to_owned(), json!("function_call"));
                            if let Some(item_id) = item_id {
                                item.insert("id".to_owned(), json!(item_id));
                            }
                            item.insert("call_id".to_owned(), json!(call_id));
                            item.insert(
                                "name".to_owned(),
                                block.get("name").cloned().unwrap_or(Value::Null),
                            );
                            if let Some(args) = block.get("arguments") {
                                item.insert("arguments".to_owned(), json!(js_stringify(args)));
                            }
                            items.push(Value::Object(item));
                        }
                        _ => {}
                    }
                }
                if items.is_empty() {
                    continue;
                }
                out.extend(items);
            }
            Some("toolResult") => {
                let content = blocks_of(msg);
                let texts: Vec<&str> = content
                    .iter()
                    .filter(|c| c["type"] == "text")
                    .map(|c| str_of(c, "text"))
                    .collect();
                let text = texts.join("\n");
                let has_images = content.iter().any(|c| c["type"] == "image");
                let call_id = str_of(msg, "toolCallId")
                    .split('|')
                    .next()
                    .unwrap_or_default();
                let output = if has_images && model.accepts_images {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"type": "input_text", "text": text}));
                    }
                    for block in content.iter().filter(|c| c["type"] == "image") {
                        parts.push(json!({"type": "input_image", "detail": "auto", "image_url": data_url(block)}));
                    }
                    Value::Array(parts)
                } else if text.is_empty() {
                    json!("(see attached image)")
                } else {
                    Value::String(text)
                };
                out.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
            }
            _ => {}
        }
        index += 1;
    }
    Ok(out)
}

/// The message V8's `JSON.parse` throws for text that is not JSON (its usual form).
fn json_parse_message(text: &str) -> String {
    let first = text.chars().next().unwrap_or(' ');
    let head: String = text.chars().take(10).collect();
    let ellipsis = if text.chars().count() > 10 { "..." } else { "" };
    format!("Unexpected token '{first}', \"{head}\"{ellipsis} is not valid JSON")
}

fn convert_tools(tools: &[Value], strict: Value) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let mut out = Map::new();
                out.insert("type".to_owned(), json!("function"));
                for key in ["name", "description", "parameters"] {
                    if let Some(v) = tool.get(key) {
                        out.insert(key.to_owned(), v.clone());
                    }
                }
                out.insert("strict".to_owned(), strict.clone());
                Value::Object(out)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_ids_are_sanitised_prefixed_and_trimmed() {
        assert_eq!(normalize_pair("call+1|abc/="), "call_1|fc_abc");
        assert_eq!(normalize_pair("c|fc_x"), "c|fc_x");
    }

    #[test]
    fn codex_effort_clamps() {
        assert_eq!(codex_clamp_effort("openai/gpt-5.2-codex", "minimal"), "low");
        assert_eq!(codex_clamp_effort("gpt-5.1-codex-mini", "low"), "medium");
        assert_eq!(codex_clamp_effort("gpt-5.1", "xhigh"), "high");
    }

    #[test]
    fn signatures_parse_as_upstream() {
        assert_eq!(
            parse_text_signature(r#"{"v":1,"id":"msg_1","phase":"commentary"}"#),
            ("msg_1".to_owned(), Some("commentary"))
        );
        assert_eq!(
            parse_text_signature("msg_legacy"),
            ("msg_legacy".to_owned(), None)
        );
        assert!(!short_hash("x".repeat(80).as_str()).is_empty());
    }
}
