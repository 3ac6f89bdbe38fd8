//! The Google bodies of pi-mono 0.58.3 `packages/ai/src/providers/`: `google.ts` and
//! `google-vertex.ts` (`buildParams`: the `@google/genai` `GenerateContentParameters`, before
//! the SDK turns it into REST) and `google-gemini-cli.ts` (`buildRequest`: the Cloud Code
//! Assist body, Antigravity included), over `google-shared.ts` (`convertMessages`,
//! `convertTools`).

use serde_json::{json, Map, Value};

use super::model::{
    ascii_prefix, base_options, blocks_of, clamp_reasoning, number, sanitize_id_chars, str_of,
    Context, Model, Options,
};
use super::transform::transform;
use super::PayloadError;
use crate::base::js_trim;

/// google-shared.ts `SKIP_THOUGHT_SIGNATURE`: sent for unsigned calls to gemini-3.
const SKIP_THOUGHT_SIGNATURE: &str = "skip_thought_signature_validator";

/// google-gemini-cli.ts `ANTIGRAVITY_SYSTEM_INSTRUCTION`.
const ANTIGRAVITY_SYSTEM_INSTRUCTION: &str = concat!(
    "You are Antigravity, a powerful agentic AI coding assistant designed by the Google Deepmind team working on Advanced Agentic Coding.",
    "You are pair programming with a USER to solve their coding task. The task may require creating a new codebase, modifying or debugging an existing codebase, or simply answering a question.",
    "**Absolute paths only**",
    "**Proactiveness**",
);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Gemini3 {
    Pro,
    Flash,
}

/// `/gemini-3(?:\.\d+)?-(pro|flash)/` on the lowercased id (`any_minor`), or the gemini-cli
/// form `/gemini-3(?:\.1)?-(pro|flash)/`.
fn gemini3_kind(id: &str, any_minor: bool) -> Option<Gemini3> {
    let id = id.to_lowercase();
    let mut found = None;
    for (at, _) in id.match_indices("gemini-3") {
        let mut rest = &id[at + "gemini-3".len()..];
        let try_tail = |rest: &str| {
            if rest.starts_with("-pro") {
                Some(Gemini3::Pro)
            } else if rest.starts_with("-flash") {
                Some(Gemini3::Flash)
            } else {
                None
            }
        };
        if let Some(kind) = try_tail(rest) {
            found = found.or(Some(kind));
            continue;
        }
        if let Some(after_dot) = rest.strip_prefix('.') {
            let digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            let ok = if any_minor {
                digits > 0
            } else {
                after_dot.starts_with('1')
            };
            if ok {
                rest = &after_dot[if any_minor { digits } else { 1 }..];
                if let Some(kind) = try_tail(rest) {
                    found = found.or(Some(kind));
                }
            }
        }
    }
    found
}

fn gemini3_level(effort: &str, kind: Gemini3) -> &'static str {
    match (kind, effort) {
        (Gemini3::Pro, "minimal" | "low") => "LOW",
        (Gemini3::Pro, _) => "HIGH",
        (_, "minimal") => "MINIMAL",
        (_, "low") => "LOW",
        (_, "medium") => "MEDIUM",
        _ => "HIGH",
    }
}

/// `requiresToolCallId` (google-shared.ts).
fn requires_tool_call_id(id: &str) -> bool {
    id.starts_with("claude-") || id.starts_with("gpt-oss-")
}

/// A thought signature is replayed only to the same provider and model, and only when it is
/// base64 whose length is a multiple of 4 (`isValidThoughtSignature`).
fn valid_signature(signature: Option<&str>) -> Option<&str> {
    let s = signature.filter(|s| !s.is_empty())?;
    if s.len() % 4 != 0 {
        return None;
    }
    let body = s.trim_end_matches('=');
    let pad = s.len() - body.len();
    let ok = !body.is_empty()
        && pad <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    ok.then_some(s)
}

/// The `thinking` option (`GoogleOptions.thinking`) the simple stream functions build.
struct Thinking {
    enabled: bool,
    level: Option<&'static str>,
    budget: Option<f64>,
}

fn thinking_option(options: &Options<'_>) -> Thinking {
    let t = options.get("thinking");
    Thinking {
        enabled: t
            .and_then(|t| t.get("enabled"))
            .is_some_and(crate::base::is_truthy),
        level: t
            .and_then(|t| t.get("level"))
            .and_then(Value::as_str)
            .and_then(|l| match l {
                "MINIMAL" => Some("MINIMAL"),
                "LOW" => Some("LOW"),
                "MEDIUM" => Some("MEDIUM"),
                "HIGH" => Some("HIGH"),
                "THINKING_LEVEL_UNSPECIFIED" => Some("THINKING_LEVEL_UNSPECIFIED"),
                _ => None,
            }),
        budget: t
            .and_then(|t| t.get("budgetTokens"))
            .and_then(Value::as_f64),
    }
}

/// `streamSimpleGoogle` / `streamSimpleGoogleVertex` / `streamSimpleGoogleGeminiCli`.
pub(super) fn simple_options(model: &Model, simple: &Options<'_>) -> Map<String, Value> {
    let mut out = base_options(model, simple.map);
    let Some(level) = simple.truthy("reasoning").and_then(Value::as_str) else {
        out.insert("thinking".to_owned(), json!({"enabled": false}));
        return out;
    };
    let effort = clamp_reasoning(level);
    let cli = model.api == "google-gemini-cli";
    if let Some(kind) = gemini3_kind(&model.id, !cli) {
        out.insert(
            "thinking".to_owned(),
            json!({"enabled": true, "level": gemini3_level(effort, kind)}),
        );
        return out;
    }
    let custom = simple.get("thinkingBudgets").and_then(|b| b.get(effort));
    if cli {
        let base_max = out.get("maxTokens").and_then(Value::as_f64).unwrap_or(0.0);
        let (max_tokens, budget) = super::model::adjust_max_tokens_for_thinking(
            base_max,
            model.max_tokens,
            effort,
            simple.get("thinkingBudgets"),
        );
        out.insert("maxTokens".to_owned(), number(max_tokens));
        out.insert(
            "thinking".to_owned(),
            json!({"enabled": true, "budgetTokens": number(budget)}),
        );
        return out;
    }
    // google.ts `getGoogleBudget`.
    let budget = match custom {
        Some(v) => v.clone(),
        None => {
            let table: Option<[i64; 4]> = if model.id.contains("2.5-pro") {
                Some([128, 2048, 8192, 32768])
            } else if model.id.contains("2.5-flash") {
                Some([128, 2048, 8192, 24576])
            } else {
                None
            };
            let i = match effort {
                "minimal" => 0,
                "low" => 1,
                "medium" => 2,
                _ => 3,
            };
            Value::from(table.map_or(-1, |t| t[i]))
        }
    };
    out.insert(
        "thinking".to_owned(),
        json!({"enabled": true, "budgetTokens": budget}),
    );
    out
}

pub(super) fn build(
    model: &Model,
    context: &Context<'_>,
    options: &Options<'_>,
    now_ms: i64,
) -> Result<Value, PayloadError> {
    if model.api == "google-gemini-cli" {
        return build_cli(model, context, options, now_ms);
    }
    let contents = convert_messages(model, context, now_ms)?;
    let mut config = Map::new();
    if let Some(t) = options.get("temperature") {
        config.insert("temperature".to_owned(), t.clone());
    }
    if let Some(m) = options.get("maxTokens") {
        config.insert("maxOutputTokens".to_owned(), m.clone());
    }
    if let Some(prompt) = context.system() {
        config.insert("systemInstruction".to_owned(), json!(prompt));
    }
    let tools = context.tools().filter(|t| !t.is_empty());
    if let Some(tools) = tools {
        config.insert("tools".to_owned(), convert_tools(tools, false));
        if options.truthy("toolChoice").is_some() {
            return Err(PayloadError::Invalid {
                what: "options",
                reason: "toolChoice on the Google APIs needs @google/genai's FunctionCallingConfigMode (not supported)".to_owned(),
            });
        }
    }
    let thinking = thinking_option(options);
    if thinking.enabled && model.reasoning {
        config.insert("thinkingConfig".to_owned(), thinking_config(&thinking));
    }
    Ok(json!({"model": model.id, "contents": contents, "config": config}))
}

fn thinking_config(thinking: &Thinking) -> Value {
    let mut tc = Map::new();
    tc.insert("includeThoughts".to_owned(), Value::Bool(true));
    if let Some(level) = thinking.level {
        tc.insert("thinkingLevel".to_owned(), json!(level));
    } else if let Some(budget) = thinking.budget {
        tc.insert("thinkingBudget".to_owned(), number(budget));
    }
    Value::Object(tc)
}

/// The random tail of gemini-cli's `requestId` (`Math.random().toString(36).slice(2, 11)`).
fn random_suffix() -> String {
    let mut n = u64::from_le_bytes(
        uuid::Uuid::new_v4().as_bytes()[..8]
            .try_into()
            .unwrap_or([0; 8]),
    );
    let mut s = String::new();
    for _ in 0..9 {
        s.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
    }
    s
}

fn build_cli(
    model: &Model,
    context: &Context<'_>,
    options: &Options<'_>,
    now_ms: i64,
) -> Result<Value, PayloadError> {
    let Some(raw_key) = options.truthy("apiKey").and_then(Value::as_str) else {
        return Err(PayloadError::Upstream(
            "Google Cloud Code Assist requires OAuth authentication. Use /login to authenticate."
                .to_owned(),
        ));
    };
    let key: Value = serde_json::from_str(raw_key).map_err(|_| {
        PayloadError::Upstream(
            "Invalid Google Cloud Code Assist credentials. Use /login to re-authenticate."
                .to_owned(),
        )
    })?;
    let project = key.get("projectId").filter(|v| crate::base::is_truthy(v));
    let token = key.get("token").filter(|v| crate::base::is_truthy(v));
    let (Some(project), Some(_)) = (project, token) else {
        return Err(PayloadError::Upstream(
            "Missing token or projectId in Google Cloud credentials. Use /login to re-authenticate."
                .to_owned(),
        ));
    };
    let antigravity = model.provider == "google-antigravity";
    let contents = convert_messages(model, context, now_ms)?;
    let mut generation = Map::new();
    if let Some(t) = options.get("temperature") {
        generation.insert("temperature".to_owned(), t.clone());
    }
    if let Some(m) = options.get("maxTokens") {
        generation.insert("maxOutputTokens".to_owned(), m.clone());
    }
    let thinking = thinking_option(options);
    if thinking.enabled && model.reasoning {
        generation.insert("thinkingConfig".to_owned(), thinking_config(&thinking));
    }
    let mut request = Map::new();
    request.insert("contents".to_owned(), Value::Array(contents));
    if let Some(session) = options.get("sessionId") {
        request.insert("sessionId".to_owned(), session.clone());
    }
    let mut system_parts = Vec::new();
    if let Some(prompt) = context.system() {
        system_parts.push(json!({"text": prompt}));
        request.insert(
            "systemInstruction".to_owned(),
            json!({"parts": system_parts}),
        );
    }
    if !generation.is_empty() {
        request.insert("generationConfig".to_owned(), Value::Object(generation));
    }
    if let Some(tools) = context.tools().filter(|t| !t.is_empty()) {
        let use_parameters = model.id.starts_with("claude-");
        request.insert("tools".to_owned(), convert_tools(tools, use_parameters));
        if options.truthy("toolChoice").is_some() {
            return Err(PayloadError::Invalid {
                what: "options",
                reason: "toolChoice on the Google APIs needs @google/genai's FunctionCallingConfigMode (not supported)".to_owned(),
            });
        }
    }
    if antigravity {
        let mut parts = vec![
            json!({"text": ANTIGRAVITY_SYSTEM_INSTRUCTION}),
            json!({"text": format!("Please ignore following [ignore]{ANTIGRAVITY_SYSTEM_INSTRUCTION}[/ignore]")}),
        ];
        parts.extend(system_parts);
        request.insert(
            "systemInstruction".to_owned(),
            json!({"role": "user", "parts": parts}),
        );
    }
    let mut body = Map::new();
    body.insert("project".to_owned(), project.clone());
    body.insert("model".to_owned(), json!(model.id));
    body.insert("request".to_owned(), Value::Object(request));
    if antigravity {
        body.insert("requestType".to_owned(), json!("agent"));
    }
    body.insert(
        "userAgent".to_owned(),
        json!(if antigravity {
            "antigravity"
        } else {
            "pi-coding-agent"
        }),
    );
    let prefix = if antigravity { "agent" } else { "pi" };
    body.insert(
        "requestId".to_owned(),
        json!(format!("{prefix}-{now_ms}-{}", random_suffix())),
    );
    Ok(Value::Object(body))
}

fn convert_tools(tools: &[Value], use_parameters: bool) -> Value {
    let declarations: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let mut d = Map::new();
            for key in ["name", "description"] {
                if let Some(v) = tool.get(key) {
                    d.insert(key.to_owned(), v.clone());
                }
            }
            if let Some(p) = tool.get("parameters") {
                let key = if use_parameters {
                    "parameters"
                } else {
                    "parametersJsonSchema"
                };
                d.insert(key.to_owned(), p.clone());
            }
            Value::Object(d)
        })
        .collect();
    json!([{"functionDeclarations": declarations}])
}

fn inline_data(block: &Value) -> Value {
    let mut d = Map::new();
    for key in ["mimeType", "data"] {
        if let Some(v) = block.get(key) {
            d.insert(key.to_owned(), v.clone());
        }
    }
    json!({"inlineData": d})
}

fn convert_messages(
    model: &Model,
    context: &Context<'_>,
    now_ms: i64,
) -> Result<Vec<Value>, PayloadError> {
    let needs_id = requires_tool_call_id(&model.id);
    let normalize = |id: &str, _: &Value| -> String {
        if needs_id {
            ascii_prefix(&sanitize_id_chars(id), 64).to_owned()
        } else {
            id.to_owned()
        }
    };
    let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
    let gemini3 = model.id.to_lowercase().contains("gemini-3");
    let multimodal_response = model.id.contains("gemini-3");
    let mut contents: Vec<Value> = Vec::with_capacity(messages.len());
    for msg in &messages {
        match msg.get("role").and_then(Value::as_str) {
            Some("user") => match msg.get("content") {
                Some(Value::String(s)) => {
                    contents.push(json!({"role": "user", "parts": [{"text": s}]}));
                }
                Some(Value::Array(items)) => {
                    let parts: Vec<Value> = items
                        .iter()
                        .filter_map(|item| {
                            if item.get("type").and_then(Value::as_str) == Some("text") {
                                // `{text: item.text}`: an absent text is dropped by the filter.
                                item.get("text").map(|t| json!({"text": t}))
                            } else if model.accepts_images {
                                Some(inline_data(item))
                            } else {
                                None
                            }
                        })
                        .collect();
                    if !parts.is_empty() {
                        contents.push(json!({"role": "user", "parts": parts}));
                    }
                }
                _ => {}
            },
            Some("assistant") => {
                let same =
                    str_of(msg, "provider") == model.provider && str_of(msg, "model") == model.id;
                let signature = |key: &str, block: &Value| -> Option<String> {
                    if !same {
                        return None;
                    }
                    valid_signature(block.get(key).and_then(Value::as_str)).map(str::to_owned)
                };
                let mut parts = Vec::new();
                for block in blocks_of(msg) {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            let text = str_of(block, "text");
                            if js_trim(text).is_empty() {
                                continue;
                            }
                            let mut p = Map::new();
                            p.insert("text".to_owned(), json!(text));
                            if let Some(sig) = signature("textSignature", block) {
                                p.insert("thoughtSignature".to_owned(), json!(sig));
                            }
                            parts.push(Value::Object(p));
                        }
                        Some("thinking") => {
                            let text = str_of(block, "thinking");
                            if js_trim(text).is_empty() {
                                continue;
                            }
                            let mut p = Map::new();
                            if same {
                                p.insert("thought".to_owned(), Value::Bool(true));
                            }
                            p.insert("text".to_owned(), json!(text));
                            if let Some(sig) = signature("thinkingSignature", block) {
                                p.insert("thoughtSignature".to_owned(), json!(sig));
                            }
                            parts.push(Value::Object(p));
                        }
                        Some("toolCall") => {
                            let mut call = Map::new();
                            call.insert(
                                "name".to_owned(),
                                block.get("name").cloned().unwrap_or(Value::Null),
                            );
                            let args = match block.get("arguments") {
                                Some(v) if !v.is_null() => v.clone(),
                                _ => json!({}),
                            };
                            call.insert("args".to_owned(), args);
                            if needs_id {
                                if let Some(id) = block.get("id") {
                                    call.insert("id".to_owned(), id.clone());
                                }
                            }
                            let mut p = Map::new();
                            p.insert("functionCall".to_owned(), Value::Object(call));
                            let sig = signature("thoughtSignature", block)
                                .or_else(|| gemini3.then(|| SKIP_THOUGHT_SIGNATURE.to_owned()));
                            if let Some(sig) = sig {
                                p.insert("thoughtSignature".to_owned(), json!(sig));
                            }
                            parts.push(Value::Object(p));
                        }
                        _ => {}
                    }
                }
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            Some("toolResult") => {
                let content = blocks_of(msg);
                let texts: Vec<&str> = content
                    .iter()
                    .filter(|c| c["type"] == "text")
                    .map(|c| str_of(c, "text"))
                    .collect();
                let text = texts.join("\n");
                let images: Vec<Value> = if model.accepts_images {
                    content
                        .iter()
                        .filter(|c| c["type"] == "image")
                        .map(inline_data)
                        .collect()
                } else {
                    Vec::new()
                };
                let value = if !text.is_empty() {
                    text
                } else if !images.is_empty() {
                    "(see attached image)".to_owned()
                } else {
                    String::new()
                };
                let is_error = msg.get("isError").is_some_and(crate::base::is_truthy);
                let mut response = Map::new();
                if let Some(name) = msg.get("toolName") {
                    response.insert("name".to_owned(), name.clone());
                }
                response.insert(
                    "response".to_owned(),
                    if is_error {
                        json!({"error": value})
                    } else {
                        json!({"output": value})
                    },
                );
                if !images.is_empty() && multimodal_response {
                    response.insert("parts".to_owned(), Value::Array(images.clone()));
                }
                if needs_id {
                    if let Some(id) = msg.get("toolCallId") {
                        response.insert("id".to_owned(), id.clone());
                    }
                }
                let part = json!({"functionResponse": response});
                let merge = contents.last().is_some_and(|last| {
                    last["role"] == "user"
                        && last["parts"].as_array().is_some_and(|ps| {
                            ps.iter().any(|p| {
                                p.get("functionResponse")
                                    .is_some_and(crate::base::is_truthy)
                            })
                        })
                });
                if merge {
                    if let Some(Value::Array(ps)) =
                        contents.last_mut().and_then(|l| l.get_mut("parts"))
                    {
                        ps.push(part);
                    }
                } else {
                    contents.push(json!({"role": "user", "parts": [part]}));
                }
                if !images.is_empty() && !multimodal_response {
                    let mut parts = vec![json!({"text": "Tool result image:"})];
                    parts.extend(images);
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
            _ => {}
        }
    }
    Ok(contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini3_ids_are_recognised() {
        assert!(gemini3_kind("gemini-3-pro-preview", true) == Some(Gemini3::Pro));
        assert!(gemini3_kind("gemini-3.5-flash", true) == Some(Gemini3::Flash));
        assert!(gemini3_kind("gemini-3.5-flash", false).is_none());
        assert!(gemini3_kind("gemini-2.5-pro", true).is_none());
    }

    #[test]
    fn signatures_must_be_padded_base64() {
        assert_eq!(valid_signature(Some("abcd")), Some("abcd"));
        assert_eq!(valid_signature(Some("abc")), None);
        assert_eq!(valid_signature(Some("ab=c")), None);
        assert_eq!(valid_signature(Some("ab==")), Some("ab=="));
    }
}
