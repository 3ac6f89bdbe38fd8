//! `transformMessages` of pi-mono 0.58.3 `packages/ai/src/providers/transform-messages.ts`: the
//! replay layer every provider converter starts with. Turns from another model lose their
//! thinking (as text) and thought signatures and get their tool-call ids normalised; errored
//! and aborted assistant turns are dropped; calls left unanswered when the next assistant or
//! user turn arrives get a synthetic error result.

use std::cell::RefCell;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{json, Map, Value};

use super::model::{ascii_prefix, short_hash, Model};
use crate::base::js_trim;

/// The tool-call-id normalizers pi-ai's providers pass to `transformMessages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalizer {
    None,
    /// anthropic.ts and amazon-bedrock.ts: `[^a-zA-Z0-9_-]` → `_`, at most 64 characters.
    Anthropic,
    /// mistral.ts `createMistralToolCallIdNormalizer`: 9 alphanumeric characters.
    Mistral,
}

impl Normalizer {
    pub fn from_name(name: &str) -> Option<Normalizer> {
        match name {
            "none" => Some(Normalizer::None),
            "anthropic" | "bedrock" => Some(Normalizer::Anthropic),
            "mistral" => Some(Normalizer::Mistral),
            _ => None,
        }
    }
}

/// anthropic.ts `normalizeToolCallId`: one definition, the request guard's, which must
/// predict exactly the ids this replay layer sends.
pub use crate::hygiene::anthropic_tool_call_id;

const MISTRAL_TOOL_CALL_ID_LENGTH: usize = 9;

fn alphanumeric(s: &str) -> String {
    s.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// mistral.ts `deriveMistralToolCallId`.
pub fn derive_mistral_id(id: &str, attempt: u32) -> String {
    let normalized = alphanumeric(id);
    if attempt == 0 && normalized.len() == MISTRAL_TOOL_CALL_ID_LENGTH {
        return normalized;
    }
    let base = if normalized.is_empty() {
        id
    } else {
        &normalized
    };
    let seed = if attempt == 0 {
        base.to_owned()
    } else {
        format!("{base}:{attempt}")
    };
    let hash = alphanumeric(&short_hash(&seed));
    ascii_prefix(&hash, MISTRAL_TOOL_CALL_ID_LENGTH).to_owned()
}

/// mistral.ts `createMistralToolCallIdNormalizer`: one per request; a derived id already
/// taken by another original id is derived again with an attempt counter.
#[derive(Default)]
pub struct MistralIds {
    ids: RefCell<(FxHashMap<String, String>, FxHashMap<String, String>)>,
}

impl MistralIds {
    pub fn normalize(&self, id: &str) -> String {
        let mut maps = self.ids.borrow_mut();
        if let Some(existing) = maps.0.get(id).filter(|e| !e.is_empty()) {
            return existing.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive_mistral_id(id, attempt);
            let free = match maps.1.get(&candidate) {
                None => true,
                Some(owner) => owner.is_empty() || owner == id,
            };
            if free {
                maps.0.insert(id.to_owned(), candidate.clone());
                maps.1.insert(candidate.clone(), id.to_owned());
                return candidate;
            }
            attempt += 1;
        }
    }
}

/// `transformMessages(messages, model, normalizer)` with `now_ms` as `Date.now()`.
pub fn transform_messages(
    messages: Vec<Value>,
    model: &Model,
    normalizer: Normalizer,
    now_ms: i64,
) -> Vec<Value> {
    match normalizer {
        Normalizer::None => transform(messages, model, None, now_ms),
        Normalizer::Anthropic => transform(
            messages,
            model,
            Some(&|id: &str, _: &Value| anthropic_tool_call_id(id)),
            now_ms,
        ),
        Normalizer::Mistral => {
            let ids = MistralIds::default();
            transform(
                messages,
                model,
                Some(&|id: &str, _: &Value| ids.normalize(id)),
                now_ms,
            )
        }
    }
}

/// A tool-call-id normalizer: `(id, source assistant message) -> id`.
pub type NormalizeFn<'f> = &'f dyn Fn(&str, &Value) -> String;

fn str_field<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

fn truthy_str(value: &Value, key: &str) -> bool {
    str_field(value, key).is_some_and(|s| !s.is_empty())
}

/// The core of [`transform_messages`], with the provider's normalizer as a closure.
pub(super) fn transform(
    messages: Vec<Value>,
    model: &Model,
    normalize: Option<NormalizeFn<'_>>,
    now_ms: i64,
) -> Vec<Value> {
    let mut id_map: FxHashMap<String, String> = FxHashMap::default();
    let mut transformed = Vec::with_capacity(messages.len());
    for mut msg in messages {
        match str_field(&msg, "role") {
            Some("toolResult") => {
                // `if (normalizedId && ...)`: an id normalised to "" is not remapped.
                let mapped = str_field(&msg, "toolCallId")
                    .and_then(|id| id_map.get(id))
                    .filter(|new_id| !new_id.is_empty())
                    .cloned();
                if let (Some(new_id), Some(obj)) = (mapped, msg.as_object_mut()) {
                    obj.insert("toolCallId".to_owned(), Value::String(new_id));
                }
            }
            Some("assistant") => transform_assistant(&mut msg, model, normalize, &mut id_map),
            _ => {}
        }
        transformed.push(msg);
    }

    let mut result = Vec::with_capacity(transformed.len());
    let mut pending: Vec<(String, Value)> = Vec::new();
    let mut answered: FxHashSet<String> = FxHashSet::default();
    let flush = |pending: &mut Vec<(String, Value)>,
                 answered: &mut FxHashSet<String>,
                 result: &mut Vec<Value>| {
        for (id, name) in pending.drain(..) {
            if !answered.contains(&id) {
                result.push(synthetic_result(id, name, now_ms));
            }
        }
        answered.clear();
    };
    for msg in transformed {
        match str_field(&msg, "role") {
            Some("assistant") => {
                if !pending.is_empty() {
                    flush(&mut pending, &mut answered, &mut result);
                }
                if matches!(str_field(&msg, "stopReason"), Some("error" | "aborted")) {
                    continue;
                }
                let calls: Vec<(String, Value)> = content_blocks(&msg)
                    .iter()
                    .filter(|b| str_field(b, "type") == Some("toolCall"))
                    .map(|b| {
                        (
                            str_field(b, "id").unwrap_or_default().to_owned(),
                            b.get("name").cloned().unwrap_or(Value::Null),
                        )
                    })
                    .collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                result.push(msg);
            }
            Some("toolResult") => {
                if let Some(id) = str_field(&msg, "toolCallId") {
                    answered.insert(id.to_owned());
                }
                result.push(msg);
            }
            Some("user") => {
                if !pending.is_empty() {
                    flush(&mut pending, &mut answered, &mut result);
                }
                result.push(msg);
            }
            _ => result.push(msg),
        }
    }
    result
}

fn content_blocks(msg: &Value) -> &[Value] {
    msg.get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn synthetic_result(id: String, name: Value, now_ms: i64) -> Value {
    let mut obj = Map::new();
    obj.insert("role".to_owned(), json!("toolResult"));
    obj.insert("toolCallId".to_owned(), Value::String(id));
    if !name.is_null() {
        obj.insert("toolName".to_owned(), name);
    }
    obj.insert(
        "content".to_owned(),
        json!([{"type": "text", "text": "No result provided"}]),
    );
    obj.insert("isError".to_owned(), Value::Bool(true));
    obj.insert("timestamp".to_owned(), Value::from(now_ms));
    Value::Object(obj)
}

fn transform_assistant(
    msg: &mut Value,
    model: &Model,
    normalize: Option<NormalizeFn<'_>>,
    id_map: &mut FxHashMap<String, String>,
) {
    let same_model = str_field(msg, "provider") == Some(model.provider.as_str())
        && str_field(msg, "api") == Some(model.api.as_str())
        && str_field(msg, "model") == Some(model.id.as_str());
    let blocks = match msg.get_mut("content") {
        Some(content @ Value::Array(_)) => match content.take() {
            Value::Array(blocks) => blocks,
            _ => return,
        },
        _ => return,
    };
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        match str_field(&block, "type") {
            Some("thinking") => {
                if block.get("redacted").is_some_and(crate::base::is_truthy) {
                    if same_model {
                        out.push(block);
                    }
                    continue;
                }
                if same_model && truthy_str(&block, "thinkingSignature") {
                    out.push(block);
                    continue;
                }
                let thinking = str_field(&block, "thinking").unwrap_or_default();
                if js_trim(thinking).is_empty() {
                    continue;
                }
                if same_model {
                    out.push(block);
                } else {
                    out.push(json!({"type": "text", "text": thinking}));
                }
            }
            Some("text") => {
                if same_model {
                    out.push(block);
                } else {
                    let text = block.get("text").cloned();
                    let mut obj = Map::new();
                    obj.insert("type".to_owned(), json!("text"));
                    if let Some(text) = text {
                        obj.insert("text".to_owned(), text);
                    }
                    out.push(Value::Object(obj));
                }
            }
            Some("toolCall") => {
                let mut call = block;
                if !same_model {
                    if let Some(obj) = call.as_object_mut() {
                        if obj
                            .get("thoughtSignature")
                            .is_some_and(crate::base::is_truthy)
                        {
                            obj.shift_remove("thoughtSignature");
                        }
                    }
                    if let Some(normalize) = normalize {
                        let id = str_field(&call, "id").unwrap_or_default().to_owned();
                        let new_id = normalize(&id, msg);
                        if new_id != id {
                            id_map.insert(id, new_id.clone());
                            if let Some(obj) = call.as_object_mut() {
                                obj.insert("id".to_owned(), Value::String(new_id));
                            }
                        }
                    }
                }
                out.push(call);
            }
            _ => out.push(block),
        }
    }
    if let Some(obj) = msg.as_object_mut() {
        obj.insert("content".to_owned(), Value::Array(out));
    }
}
