//! Transcript hygiene passes of `sanitizeSessionHistory` (OpenClaw 2026.3.13
//! `src/agents/pi-embedded-runner/google.ts` and the `src/agents/pi-embedded-helpers/` it calls).
//! Each pass takes a transcript and returns it unchanged (the same messages) when it does not
//! apply; only the messages a pass changes are parsed in full and re-serialized.

use base64::Engine;
use serde_json::{json, Map, Value};

use super::policy::{SanitizeMode, ThoughtSignatureOptions};
use crate::base::{js_trim, to_js_string, JsonText};
use crate::transcript::{Message, Transcript};

/// bootstrap.ts, `sanitizeGoogleTurnOrdering`: the user turn prepended for Google when a
/// transcript starts with the assistant.
pub const GOOGLE_BOOTSTRAP_TEXT: &str = "(session bootstrap)";
/// turns.ts, `stripDanglingAnthropicToolUses`: the text of an assistant left without blocks.
pub const TOOL_CALLS_OMITTED_TEXT: &str = "[tool calls omitted]";
/// google.ts, `annotateInterSessionUserMessages`.
pub const INTER_SESSION_PREFIX: &str = "[Inter-session message]";

const TOOL_CALL_TYPES: [&str; 3] = ["toolCall", "toolUse", "functionCall"];

fn object(message: &Message) -> Map<String, Value> {
    match message.to_value() {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

// ---- inter-session marker (google.ts: annotateInterSessionUserMessages) --------------------

/// `annotateInterSessionUserMessages`: user messages with `provenance.kind == "inter_session"`
/// get `"[Inter-session message]"` (plus `sourceSession=`, `sourceChannel=`, `sourceTool=`) in
/// front of their text, once.
pub fn annotate_inter_session_messages(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        if !message.facts().is_role("user") || !message.as_str().contains("inter_session") {
            return None;
        }
        let mut obj = object(message);
        let provenance = obj.get("provenance")?.as_object()?.clone();
        if provenance.get("kind").and_then(Value::as_str) != Some("inter_session") {
            return None;
        }
        let mut prefix = INTER_SESSION_PREFIX.to_owned();
        for (key, label) in [
            ("sourceSessionKey", "sourceSession"),
            ("sourceChannel", "sourceChannel"),
            ("sourceTool", "sourceTool"),
        ] {
            if let Some(value) = provenance
                .get(key)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
            {
                prefix.push_str(&format!(" {label}={value}"));
            }
        }
        let content = obj.get_mut("content")?;
        match content {
            Value::String(text) => {
                if text.starts_with(INTER_SESSION_PREFIX) {
                    return None;
                }
                *text = format!("{prefix}\n{text}");
            }
            Value::Array(blocks) => match blocks.iter_mut().find(|b| block_type(b) == Some("text"))
            {
                Some(block) => {
                    let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                    if text.starts_with(INTER_SESSION_PREFIX) {
                        return None;
                    }
                    block["text"] = Value::from(format!("{prefix}\n{text}"));
                }
                None => blocks.insert(0, json!({"type": "text", "text": prefix})),
            },
            _ => return None,
        }
        Some(Value::Object(obj))
    })
}

/// Later OpenClaw, not 2026.3.13's `sanitizeSessionHistory` (upstream recognises these in
/// `src/agents/pi-embedded-subscribe.handlers.messages.ts`): assistant messages mirrored from
/// delivery (`provider "openclaw"`, `model
/// "delivery-mirror"`) are not sent to Anthropic.
pub fn drop_delivery_mirror_messages(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        if !message.facts().is_role("assistant") || !message.as_str().contains("delivery-mirror") {
            return None;
        }
        let obj = object(message);
        let mirror = obj.get("provider").and_then(Value::as_str) == Some("openclaw")
            && obj.get("model").and_then(Value::as_str) == Some("delivery-mirror");
        mirror.then_some(Value::Null)
    })
}

// ---- thought signatures (pi-embedded-helpers/bootstrap.ts: stripThoughtSignatures) ---------

fn is_base64_signature(value: &str) -> bool {
    let trimmed = js_trim(value).trim_end_matches('=');
    if trimmed.is_empty() {
        return false;
    }
    let engines = [
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    engines.iter().any(|engine| match engine.decode(trimmed) {
        Ok(bytes) if !bytes.is_empty() => engine.encode(&bytes) == trimmed,
        _ => false,
    })
}

/// Whether a signature value must be stripped under `options` (`None`: default mode).
fn strips(value: &Value, options: Option<ThoughtSignatureOptions>) -> bool {
    let Some(text) = value.as_str() else {
        return false;
    };
    match options {
        Some(o) if o.allow_base64_only => !is_base64_signature(text),
        _ => text.starts_with("msg_"),
    }
}

/// Strips thought signatures from the blocks of one assistant content array; true if changed.
fn strip_signatures_in(blocks: &mut [Value], options: Option<ThoughtSignatureOptions>) -> bool {
    let camel = options.is_some_and(|o| o.include_camel_case);
    let mut changed = false;
    for block in blocks.iter_mut() {
        let Some(obj) = block.as_object_mut() else {
            continue;
        };
        let keys: &[&str] = if camel {
            &["thought_signature", "thoughtSignature"]
        } else {
            &["thought_signature"]
        };
        for key in keys {
            if obj.get(*key).is_some_and(|v| strips(v, options)) {
                obj.shift_remove(*key);
                changed = true;
            }
        }
    }
    changed
}

/// `stripThoughtSignatures` over every assistant message (bootstrap.ts). `options: None` is
/// the default mode (strip `thought_signature` values starting with `msg_`).
pub fn strip_thought_signatures(
    input: &Transcript,
    options: Option<ThoughtSignatureOptions>,
) -> Transcript {
    input.map_messages(|_, message| {
        if !message.facts().is_role("assistant") || !message.as_str().contains("hought") {
            return None;
        }
        let mut obj = object(message);
        let changed = obj
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .is_some_and(|b| strip_signatures_in(b, options));
        changed.then_some(Value::Object(obj))
    })
}

// ---- non-image parts (pi-embedded-helpers/images.ts: sanitizeSessionMessagesImages) ----------

/// The non-image rules of `sanitizeSessionMessagesImages` (images.ts): tool results
/// whose content is not an array get `[]` (Quirk, kept for compatibility: string tool output is
/// dropped from the replayed history, as upstream does); assistants other than errored ones
/// get their thought signatures stripped unless `preserve_signatures`, and in `full` mode lose
/// blank text blocks (kept when signatures are preserved and the message has thinking) and
/// are dropped if nothing remains. Image blocks are left to the image pass.
pub fn sanitize_message_blocks(
    input: &Transcript,
    mode: SanitizeMode,
    preserve_signatures: bool,
    signature_options: Option<ThoughtSignatureOptions>,
) -> Transcript {
    input.map_messages(|_, message| {
        let facts = message.facts();
        match facts.role.as_deref() {
            Some("toolResult") => {
                let mut obj = object(message);
                if obj.get("content").is_some_and(Value::is_array) {
                    return None;
                }
                obj.insert("content".into(), json!([]));
                Some(Value::Object(obj))
            }
            Some("assistant") if facts.stop_reason.as_deref() != Some("error") => {
                let mut obj = object(message);
                let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
                let mut changed =
                    !preserve_signatures && strip_signatures_in(blocks, signature_options);
                if mode == SanitizeMode::Full {
                    let has_thinking = blocks.iter().any(|b| block_type(b) == Some("thinking"));
                    let keep_blank = preserve_signatures && has_thinking;
                    let before = blocks.len();
                    if !keep_blank {
                        blocks.retain(|b| {
                            !(block_type(b) == Some("text")
                                && b.get("text")
                                    .and_then(Value::as_str)
                                    .is_some_and(|t| js_trim(t).is_empty()))
                        });
                    }
                    if blocks.is_empty() {
                        return Some(Value::Null);
                    }
                    changed |= blocks.len() != before;
                }
                changed.then_some(Value::Object(obj))
            }
            _ => None,
        }
    })
}

// ---- thinking (pi-embedded-runner/thinking.ts: dropThinkingBlocks) -----------------------------

/// `dropThinkingBlocks` (as in 2026.3.13): removes `thinking` blocks from assistants; an
/// emptied message gets
/// `[{"type":"text","text":""}]`.
pub fn drop_thinking_blocks(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        if !message.facts().is_role("assistant") || !message.as_str().contains("\"thinking\"") {
            return None;
        }
        let mut obj = object(message);
        let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
        let before = blocks.len();
        blocks.retain(|b| block_type(b) != Some("thinking"));
        if blocks.len() == before {
            return None;
        }
        if blocks.is_empty() {
            blocks.push(json!({"type": "text", "text": ""}));
        }
        Some(Value::Object(obj))
    })
}

/// `stripToolResultDetails`: removes `details` from tool results (never sent to a model).
pub fn strip_tool_result_details(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        if !message.facts().is_role("toolResult") || !message.as_str().contains("\"details\"") {
            return None;
        }
        let mut obj = object(message);
        obj.shift_remove("details").map(|_| Value::Object(obj))
    })
}

/// Drops every tool result whose id an earlier tool result already answered (first wins, as
/// the pairing repair counts duplicates). The pairing repair itself keeps a second same-id
/// result inside one span when nothing else in the span changes (upstream quirk, kept for
/// compatibility); `sanitize_session_history` runs this after it so no provider receives two
/// results for one call (a clawctx addition).
pub fn drop_duplicate_tool_results(input: &Transcript) -> Transcript {
    let mut seen = std::collections::HashSet::new();
    input.map_messages(|_, message| {
        let facts = message.facts();
        let id = facts
            .tool_result_id
            .as_deref()
            .filter(|_| facts.is_role("toolResult"))?;
        (!seen.insert(id.to_owned())).then_some(Value::Null)
    })
}

// ---- usage hygiene (pi-embedded-runner/google.ts) ----------------------------------------------

/// The zero usage snapshot (google.ts, `stripStaleAssistantUsageBeforeLatestCompaction`).
pub fn zero_usage() -> Value {
    json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

fn timestamp_ms(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => crate::base::iso_to_ms(s).map(|ms| ms as f64),
        _ => None,
    }
}

/// `stripStaleAssistantUsageBeforeLatestCompaction`: assistant usage recorded before the latest
/// compaction summary (by position or
/// timestamp) is zeroed, so usage-based estimates do not count compacted context.
pub fn zero_stale_usage(input: &Transcript) -> Transcript {
    let messages = input.messages();
    let Some(summary_index) = messages
        .iter()
        .rposition(|m| m.facts().is_role("compactionSummary"))
    else {
        return input.clone();
    };
    let summary_time = timestamp_ms(
        messages[summary_index]
            .to_value()
            .ok()
            .as_ref()
            .and_then(|v| v.get("timestamp")),
    );
    input.map_messages(|i, message| {
        let facts = message.facts();
        if !facts.is_role("assistant") || facts.usage_tokens.is_none() {
            return None;
        }
        let mut obj = object(message);
        let stale = i < summary_index
            || matches!((timestamp_ms(obj.get("timestamp")), summary_time), (Some(t), Some(s)) if t <= s);
        if !stale || obj.get("usage") == Some(&zero_usage()) {
            return None;
        }
        obj.insert("usage".into(), zero_usage());
        Some(Value::Object(obj))
    })
}

fn number_or_zero(value: Option<&Value>) -> Value {
    match value {
        Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => {
            Value::Number(n.clone())
        }
        _ => Value::from(0),
    }
}

/// `ensureAssistantUsageSnapshots` (google.ts): every assistant gets a usage snapshot: missing
/// ⇒ zeros; otherwise numeric
/// fields default to 0, `totalTokens` is the given total or the sum, cost fields are normalized
/// when present. Other usage keys are kept.
pub fn normalize_usage(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        if !message.facts().is_role("assistant") {
            return None;
        }
        let mut obj = object(message);
        let usage = match obj.get("usage") {
            Some(Value::Object(usage)) => {
                let mut next = usage.clone();
                for key in ["input", "output", "cacheRead", "cacheWrite"] {
                    next.insert(key.into(), number_or_zero(usage.get(key)));
                }
                let total = usage
                    .get("totalTokens")
                    .and_then(Value::as_f64)
                    .filter(|t| t.is_finite() && *t != 0.0);
                let sum: f64 = ["input", "output", "cacheRead", "cacheWrite"]
                    .iter()
                    .filter_map(|k| next[*k].as_f64())
                    .sum();
                next.insert(
                    "totalTokens".into(),
                    total.map_or_else(|| json_number(sum), |_| usage["totalTokens"].clone()),
                );
                if let Some(Value::Object(cost)) = usage.get("cost") {
                    let mut cost_next = cost.clone();
                    for key in ["input", "output", "cacheRead", "cacheWrite", "total"] {
                        cost_next.insert(key.into(), number_or_zero(cost.get(key)));
                    }
                    next.insert("cost".into(), Value::Object(cost_next));
                }
                Value::Object(next)
            }
            _ => zero_usage(),
        };
        if obj.get("usage") == Some(&usage) {
            return None;
        }
        obj.insert("usage".into(), usage);
        Some(Value::Object(obj))
    })
}

fn json_number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::from(0), Value::Number)
    }
}

// ---- turn validation (pi-embedded-helpers/turns.ts: validate*Turns) ----------------------------

/// `validateGeminiTurns` (turns.ts): merges consecutive assistant messages.
pub fn validate_gemini_turns(input: &Transcript) -> Transcript {
    let messages = input.messages();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut merged_value: Option<Map<String, Value>> = None;
    let mut last_role: Option<&str> = None;
    let mut changed = false;
    let flush = |merged: &mut Option<Map<String, Value>>, out: &mut Vec<Message>| {
        if let Some(obj) = merged.take() {
            out.push(Message::new(JsonText::owned(to_js_string(&Value::Object(
                obj,
            )))));
        }
    };
    for message in messages {
        let role = message.facts().role.as_deref();
        match role {
            None => {
                // Role-less messages pass through without resetting the last role.
                flush(&mut merged_value, &mut out);
                out.push(message.clone());
                continue;
            }
            Some("assistant") if last_role == Some("assistant") => {
                changed = true;
                let mut earlier = match merged_value.take() {
                    Some(obj) => obj,
                    None => object(&out.pop().expect("the previous assistant was emitted")),
                };
                let later = object(message);
                let mut content = earlier
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                content.extend(
                    later
                        .get("content")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                );
                earlier.insert("content".into(), Value::Array(content));
                // Upstream overwrites these only with truthy later values.
                for key in ["usage", "stopReason", "errorMessage"] {
                    if let Some(v) = later.get(key).filter(|v| crate::base::is_truthy(v)) {
                        earlier.insert(key.into(), v.clone());
                    }
                }
                merged_value = Some(earlier);
            }
            _ => {
                flush(&mut merged_value, &mut out);
                out.push(message.clone());
            }
        }
        last_role = role;
    }
    flush(&mut merged_value, &mut out);
    if changed {
        Transcript::from_messages(out)
    } else {
        input.clone()
    }
}

/// Result ids that answer calls, from the messages after an assistant up to the next one
/// (`stripDanglingAnthropicToolUses`): tool results, `tool` role messages, and result blocks
/// inside user content.
fn answered_ids(messages: &[Message]) -> std::collections::HashSet<String> {
    let mut ids = std::collections::HashSet::new();
    for message in messages {
        let facts = message.facts();
        if facts.is_role("assistant") {
            break;
        }
        match facts.role.as_deref() {
            Some("toolResult") | Some("tool") => {
                let obj = object(message);
                for key in ["toolCallId", "toolUseId", "tool_call_id", "tool_use_id"] {
                    if let Some(id) = obj
                        .get(key)
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                    {
                        ids.insert(id.to_owned());
                    }
                }
            }
            Some("user") if message.as_str().contains("ool") => {
                let obj = object(message);
                for block in obj
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if matches!(
                        block_type(block),
                        Some("toolResult" | "tool_result" | "tool")
                    ) {
                        for key in ["toolCallId", "toolUseId", "tool_use_id", "tool_call_id"] {
                            if let Some(id) = block
                                .get(key)
                                .and_then(Value::as_str)
                                .filter(|s| !s.is_empty())
                            {
                                ids.insert(id.to_owned());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    ids
}

/// Dangling-tool-call stripping (`stripDanglingAnthropicToolUses`): tool calls no later message
/// answers are removed;
/// an assistant left with no blocks gets `[tool calls omitted]` (or `[]` if it errored).
pub fn strip_dangling_tool_calls(input: &Transcript) -> Transcript {
    let messages = input.messages();
    input.map_messages(|i, message| {
        let facts = message.facts();
        if !facts.is_role("assistant") || !facts.has_input_tool_call_blocks {
            return None;
        }
        let answered = answered_ids(&messages[i + 1..]);
        let mut obj = object(message);
        let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
        let before = blocks.len();
        blocks.retain(|b| {
            let is_call = block_type(b).is_some_and(|t| TOOL_CALL_TYPES.contains(&t));
            !is_call
                || b.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| answered.contains(id))
        });
        if blocks.len() == before {
            return None;
        }
        if blocks.is_empty() {
            let errored = matches!(facts.stop_reason.as_deref(), Some("aborted" | "error"));
            if !errored {
                blocks.push(json!({"type": "text", "text": TOOL_CALLS_OMITTED_TEXT}));
            }
        }
        Some(Value::Object(obj))
    })
}

fn content_array(value: Option<&Value>) -> Vec<Value> {
    value.and_then(Value::as_array).cloned().unwrap_or_default()
}

/// Whether an assistant has nothing to say: empty content, only blank text, or only thinking.
fn is_empty_assistant(message: &Message) -> bool {
    let obj = object(message);
    match obj.get("content") {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => js_trim(s).is_empty(),
        Some(Value::Array(blocks)) => blocks.iter().all(|b| match block_type(b) {
            Some("text") => b
                .get("text")
                .and_then(Value::as_str)
                .is_none_or(|t| js_trim(t).is_empty()),
            Some("thinking" | "redacted_thinking") => true,
            _ => false,
        }),
        _ => false,
    }
}

/// `validateAnthropicTurns` (turns.ts): strips dangling tool calls, merges consecutive user
/// messages (content arrays concatenated; Quirk, kept: string content counts as empty; other
/// fields from the later message, `timestamp` = later ?? earlier), and drops trailing
/// assistants that are empty, blank or thinking-only. Assistants are never merged.
pub fn validate_anthropic_turns(input: &Transcript) -> Transcript {
    let stripped = strip_dangling_tool_calls(input);
    let mut out: Vec<Message> = Vec::with_capacity(stripped.len());
    let mut changed = stripped != *input;
    for message in stripped.messages() {
        let is_user = message.facts().is_role("user");
        let previous_is_user = out.last().is_some_and(|m| m.facts().is_role("user"));
        if is_user && previous_is_user {
            let earlier = object(&out.pop().expect("checked above"));
            let mut later = object(message);
            let mut content = content_array(earlier.get("content"));
            content.extend(content_array(later.get("content")));
            later.insert("content".into(), Value::Array(content));
            if later.get("timestamp").is_none_or(Value::is_null) {
                if let Some(ts) = earlier.get("timestamp") {
                    later.insert("timestamp".into(), ts.clone());
                }
            }
            out.push(Message::new(JsonText::owned(to_js_string(&Value::Object(
                later,
            )))));
            changed = true;
        } else {
            out.push(message.clone());
        }
    }
    while out.len() > 1
        && out
            .last()
            .is_some_and(|m| m.facts().is_role("assistant") && is_empty_assistant(m))
    {
        out.pop();
        changed = true;
    }
    if changed {
        Transcript::from_messages(out)
    } else {
        input.clone()
    }
}

// ---- Google turn ordering (bootstrap.ts: sanitizeGoogleTurnOrdering) ---------------------------

/// `sanitizeGoogleTurnOrdering` (bootstrap.ts): a transcript that starts with an assistant gets a
/// `"(session bootstrap)"` user turn in front.
pub fn sanitize_google_turn_ordering(input: &Transcript, now_ms: i64) -> Transcript {
    let Some(first) = input.messages().first() else {
        return input.clone();
    };
    if !first.facts().is_role("assistant") {
        return input.clone();
    }
    let bootstrap = json!({"role": "user", "content": GOOGLE_BOOTSTRAP_TEXT, "timestamp": now_ms});
    let mut out = vec![Message::new(JsonText::owned(to_js_string(&bootstrap)))];
    out.extend(input.messages().iter().cloned());
    Transcript::from_messages(out)
}

// ---- OpenAI Responses reasoning (pi-embedded-helpers/openai.ts) ---------------------------------

/// OpenAI Responses replay (pi-embedded-helpers/openai.ts, `downgradeOpenAIReasoningBlocks`;
/// clawctx's reading of a loosely specified rule): a reasoning item may only
/// be replayed together with the output item that followed it, so a thinking block whose
/// `thinkingSignature` (the serialized reasoning item) has no text or tool-call block after it
/// in the same assistant turn loses the signature (it is then not replayed as reasoning).
/// Errored and aborted turns are skipped by the provider adapter anyway and left as they are.
pub fn downgrade_openai_reasoning(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        let facts = message.facts();
        if !facts.is_role("assistant")
            || matches!(facts.stop_reason.as_deref(), Some("error" | "aborted"))
            || !message.as_str().contains("thinkingSignature")
        {
            return None;
        }
        let mut obj = object(message);
        let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
        let mut changed = false;
        for i in 0..blocks.len() {
            let orphan = block_type(&blocks[i]) == Some("thinking")
                && blocks[i]
                    .get("thinkingSignature")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
                && !blocks[i + 1..].iter().any(|b| {
                    matches!(block_type(b), Some("text"))
                        && b.get("text")
                            .and_then(Value::as_str)
                            .is_some_and(|t| !t.is_empty())
                        || block_type(b).is_some_and(|t| TOOL_CALL_TYPES.contains(&t))
                });
            if orphan {
                if let Some(block) = blocks[i].as_object_mut() {
                    block.shift_remove("thinkingSignature");
                    changed = true;
                }
            }
        }
        changed.then_some(Value::Object(obj))
    })
}
