//! `repairToolCallInputs` / `sanitizeToolCallInputs` (OpenClaw 2026.3.13
//! `src/agents/session-transcript-repair.ts`): drop tool-call blocks a
//! provider would reject (no input, no id, bad name, not allowed), trim names, redact
//! `sessions_spawn` attachment content, and drop an assistant turn left with no blocks.

use std::collections::HashSet;

use serde_json::value::RawValue;
use serde_json::Value;

use super::list::{CachedEdit, Edit, Message, RewriteKey, Transcript};
use super::message::{
    is_valid_name_chars, raw_value, MessageView, PAIRING_TOOL_CALL_TYPES,
    SNAKE_CASE_TOOL_CALL_TYPES, TOOL_CALL_NAME_MAX_CHARS,
};
use super::shared::SharedTranscript;

// OpenClaw 2026.3.13 `src/agents/session-transcript-repair.ts` (`repairToolCallInputs`) checks
// the pairing block types; snake-case `tool_use` / `tool_call` / `function_call` blocks pass
// unchecked there and are only redacted (see [`redacted_spawn_block`]).
use crate::base::{js_trim, raw_as_str, to_js_string, JsonText, RawObject};

/// `redactSessionsSpawnAttachmentsArgs` (2026.3.13; later versions keep the payload): what
/// replaces the content of a `sessions_spawn` attachment.
pub const REDACTED_ATTACHMENT_CONTENT: &str = "__OPENCLAW_REDACTED__";

crate::base::python_class! {
    (name = "ToolCallInputsReport", module = "clawctx._core.transcript", get_all)
    /// Result of `repair_tool_call_inputs`.
    #[derive(Debug, Clone)]
    pub struct ToolCallInputsReport {
        /// The repaired transcript.
        // The input itself when nothing changed (the binding then shows the caller's own object).
        pub messages: SharedTranscript,
        /// Tool-call blocks dropped (no input, no id, or an invalid or disallowed name).
        pub dropped_tool_calls: usize,
        /// Assistant messages dropped because no block was left.
        pub dropped_assistant_messages: usize,
    }
}

/// Normalizes an allowlist: trimmed, lowercased, blanks ignored; empty ⇒ no allowlist.
pub fn normalize_allowed_tool_names<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Option<HashSet<String>> {
    let set: HashSet<String> = names
        .into_iter()
        .map(js_trim)
        .filter(|n| !n.is_empty())
        .map(str::to_lowercase)
        .collect();
    (!set.is_empty()).then_some(set)
}

/// Why a tool-call block would be dropped, if it would.
fn should_drop(block: &RawObject<'_>, allowed: Option<&HashSet<String>>) -> bool {
    let present = |key: &str| block.get(key).is_some_and(|v| v.get() != "null");
    if !present("input") && !present("arguments") {
        return true;
    }
    if block.get_str("id").is_none_or(|id| js_trim(&id).is_empty()) {
        return true;
    }
    let Some(name) = block.get_str("name") else {
        return true;
    };
    let trimmed = js_trim(&name);
    // The name pattern is ASCII-only, so byte length equals JavaScript length when it matches.
    if trimmed.is_empty()
        || trimmed.len() > TOOL_CALL_NAME_MAX_CHARS
        || !is_valid_name_chars(trimmed)
    {
        return true;
    }
    allowed.is_some_and(|set| !set.contains(&trimmed.to_lowercase()))
}

/// `redactSessionsSpawnAttachmentsArgs`: attachments with an own `content` get it replaced.
fn redact_attachments(value: &mut Value) -> bool {
    let Some(items) = value.get_mut("attachments").and_then(Value::as_array_mut) else {
        return false;
    };
    let mut changed = false;
    for item in items.iter_mut() {
        if let Some(obj) = item.as_object_mut() {
            if obj.contains_key("content") {
                // Upstream rebuilds the object as {...rest, content}: content moves to the end.
                obj.shift_remove("content");
                obj.insert("content".into(), Value::from(REDACTED_ATTACHMENT_CONTENT));
                changed = true;
            }
        }
    }
    changed
}

/// The block after renaming/redaction, or `None` when it stays as it is.
fn sanitized_block(raw: &RawValue, block: &RawObject<'_>) -> Option<Value> {
    let name = block.get_str("name")?;
    let trimmed = js_trim(&name);
    let renamed = trimmed != name;
    let spawn = trimmed.eq_ignore_ascii_case("sessions_spawn");
    if !renamed && !spawn {
        return None;
    }
    let mut value = raw_value(raw);
    let obj = value.as_object_mut()?;
    let mut changed = false;
    if renamed {
        obj.insert("name".into(), Value::from(trimmed));
        changed = true;
    }
    if spawn {
        for key in ["arguments", "input"] {
            if let Some(v) = obj.get_mut(key) {
                changed |= redact_attachments(v);
            }
        }
    }
    changed.then_some(value)
}

/// A `sessions_spawn` call block (name compared trimmed, ignoring case) with its attachment
/// contents redacted, or `None` when nothing changes. The name itself is left as it is.
fn redacted_spawn_block(raw: &RawValue, block: &RawObject<'_>) -> Option<Value> {
    let name = block.get_str("name")?;
    if !js_trim(&name).eq_ignore_ascii_case("sessions_spawn") {
        return None;
    }
    let mut value = raw_value(raw);
    let obj = value.as_object_mut()?;
    let mut changed = false;
    for key in ["arguments", "input"] {
        if let Some(v) = obj.get_mut(key) {
            changed |= redact_attachments(v);
        }
    }
    changed.then_some(value)
}

/// The key under which [`repair_tool_call_inputs`] caches that it left a message unchanged.
const INPUTS_PASS: &str = "repair_tool_call_inputs";

/// `repairToolCallInputs`.
pub fn repair_tool_call_inputs(
    input: &Transcript,
    allowed: Option<&HashSet<String>>,
) -> ToolCallInputsReport {
    input.compute_facts();
    let mut out: Vec<Message> = Vec::with_capacity(input.len());
    let (mut dropped_tool_calls, mut dropped_assistant_messages) = (0, 0);
    let mut changed = false;
    // What the repair of a message reads besides it: the allowed names (sorted).
    let inputs: Vec<String> = match allowed {
        None => Vec::new(),
        Some(names) => {
            let mut sorted: Vec<String> = names.iter().cloned().collect();
            sorted.sort();
            sorted.insert(0, "allowed:".to_owned());
            sorted
        }
    };
    for message in input.messages() {
        // Only assistants with tool-call blocks can change, and of those only ones with a block
        // the repair would touch or a name outside the allowed list: the facts say which.
        let facts = message.facts();
        let kept = !(facts.is_role("assistant") && facts.has_input_tool_call_blocks)
            || (facts.tool_call_inputs_kept
                && allowed.is_none_or(|names| {
                    facts.tool_calls.iter().all(|call| {
                        call.name
                            .as_deref()
                            .is_some_and(|name| names.contains(&name.to_lowercase()))
                    })
                }));
        if kept {
            out.push(message.clone());
            continue;
        }
        // A message this repair left as it was under the same names is not parsed again
        // (the pass runs on every request over the same messages).
        let cached = message.cached_edit(INPUTS_PASS, &inputs);
        if let CachedEdit::Hit(Edit::Keep) = cached {
            out.push(message.clone());
            continue;
        }
        let Some(view) = MessageView::parse(message) else {
            out.push(message.clone());
            continue;
        };
        let Some(blocks) = view.content_blocks() else {
            out.push(message.clone());
            continue;
        };
        // Blocks kept as they are stay raw: a message that does not change is not parsed into
        // values at all.
        let mut next: Vec<Result<Value, &RawValue>> = Vec::with_capacity(blocks.len());
        let mut dropped_here = 0;
        let mut message_changed = false;
        for raw in &blocks {
            let lossy_text: String;
            let parsed = match RawObject::parse(raw.get()) {
                Ok(block) => Some(block),
                // A lone surrogate escape (JSON allows it; serde does not) is read as every
                // reader here reads it, `\u{FFFD}` (`raw_value`), so the block is judged now as a
                // second pass over the written result would judge it (found by the
                // tool_call_inputs fuzz target: a call kept once, dropped the next time).
                Err(_) => {
                    lossy_text = to_js_string(&raw_value(raw));
                    RawObject::parse(&lossy_text).ok()
                }
            };
            let block_type = parsed
                .as_ref()
                .and_then(|b| b.get("type").and_then(raw_as_str));
            let is_call = block_type
                .as_deref()
                .is_some_and(|t| PAIRING_TOOL_CALL_TYPES.contains(&t));
            let is_snake_call = block_type
                .as_deref()
                .is_some_and(|t| SNAKE_CASE_TOOL_CALL_TYPES.contains(&t));
            match parsed {
                // Kept as they are (never dropped or renamed), but a `sessions_spawn` call's
                // attachment contents are still redacted: clawctx's addition, so that inline
                // attachment data never lingers in any call shape.
                Some(block) if is_snake_call => match redacted_spawn_block(raw, &block) {
                    Some(value) => {
                        message_changed = true;
                        next.push(Ok(value));
                    }
                    None => next.push(Err(raw)),
                },
                Some(block) if is_call => {
                    if should_drop(&block, allowed) {
                        dropped_here += 1;
                        message_changed = true;
                        continue;
                    }
                    match sanitized_block(raw, &block) {
                        Some(value) => {
                            message_changed = true;
                            next.push(Ok(value));
                        }
                        None => next.push(Err(raw)),
                    }
                }
                _ => next.push(Err(raw)),
            }
        }
        dropped_tool_calls += dropped_here;
        if dropped_here > 0 && next.is_empty() {
            dropped_assistant_messages += 1;
            changed = true;
            continue;
        }
        if message_changed {
            changed = true;
            let mut value = message.to_value().unwrap_or(Value::Null);
            if let Some(obj) = value.as_object_mut() {
                let next = next
                    .into_iter()
                    .map(|block| block.unwrap_or_else(raw_value))
                    .collect();
                obj.insert("content".into(), Value::Array(next));
            }
            out.push(Message::new(JsonText::owned(to_js_string(&value))));
        } else {
            if matches!(cached, CachedEdit::Missing) {
                let key = RewriteKey {
                    pass: INPUTS_PASS,
                    inputs: inputs.clone(),
                };
                message.cache_rewrite(key, Edit::Keep);
            }
            out.push(message.clone());
        }
    }
    ToolCallInputsReport {
        messages: if changed {
            Transcript::from_messages(out)
        } else {
            input.clone()
        }
        .into(),
        dropped_tool_calls,
        dropped_assistant_messages,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The facts' `tool_call_inputs_kept` (by which the repair skips a message unread) is true
    /// only for blocks the repair's own reading keeps as they are, and true for the plain ones.
    #[test]
    fn the_facts_skip_only_blocks_the_repair_keeps() {
        use crate::transcript::facts::MessageFacts;
        let mut judged = 0;
        for ty in [
            "toolCall",
            "toolUse",
            "functionCall",
            "tool_use",
            "function_call",
        ] {
            for input in [
                r#""arguments":{"a":1}"#,
                r#""input":{}"#,
                r#""arguments":null"#,
                "",
            ] {
                for id in [r#""id":"c1""#, r#""id":" ""#, r#""id":"""#, r#""id":5"#, ""] {
                    for name in [
                        r#""name":"read""#,
                        r#""name":" read""#,
                        r#""name":"sessions_spawn""#,
                        r#""name":" Sessions_Spawn ""#,
                        r#""name":"bad name""#,
                        r#""name":"a-b_c9""#,
                        r#""name":7"#,
                        "",
                    ] {
                        let ty_field = format!(r#""type":"{ty}""#);
                        let fields: Vec<&str> = [ty_field.as_str(), input, id, name]
                            .into_iter()
                            .filter(|f| !f.is_empty())
                            .collect();
                        let block = format!("{{{}}}", fields.join(","));
                        let text = format!(r#"{{"role":"assistant","content":[{block}]}}"#);
                        let facts = MessageFacts::scan(&JsonText::owned(text.clone()));
                        let raw: &RawValue = serde_json::from_str(&block).unwrap();
                        let parsed = RawObject::parse(raw.get()).unwrap();
                        let repair_keeps = if SNAKE_CASE_TOOL_CALL_TYPES.contains(&ty) {
                            redacted_spawn_block(raw, &parsed).is_none()
                        } else {
                            !should_drop(&parsed, None) && sanitized_block(raw, &parsed).is_none()
                        };
                        if facts.tool_call_inputs_kept {
                            assert!(repair_keeps, "{text}");
                            judged += 1;
                        }
                        let t = Transcript::new(vec![JsonText::owned(text.clone())]);
                        let report = repair_tool_call_inputs(&t, None);
                        let same = report.messages.messages().len() == 1
                            && report.messages.messages()[0].is_same(&t.messages()[0]);
                        assert!(same || !facts.tool_call_inputs_kept, "{text}");
                    }
                }
            }
        }
        // The plain calls (with input, id and a valid name) of every type, and the snake_case
        // ones not named sessions_spawn, are skipped.
        assert_eq!(judged, 3 * 2 * 2 + 2 * 4 * 5 * 6);
        let dup = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c","id":"d","name":"n","input":{}}]}"#;
        assert!(!MessageFacts::scan(&JsonText::owned(dup.into())).tool_call_inputs_kept);
    }

    /// A message the facts clear is kept unread (nothing cached); one the repair had to read
    /// and kept (a `sessions_spawn` call without attachments) is cached as kept under the
    /// allowed names it was judged with; other names judge either again.
    #[test]
    fn a_kept_message_is_cached_under_the_allowed_names() {
        for (name, read) in [("read", false), ("sessions_spawn", true)] {
            let t = Transcript::from_values(&[json!({"role":"assistant","content":[
                {"type":"toolCall","id":"c1","name":name,"arguments":{"path":"a"}}
            ]})]);
            let kept = repair_tool_call_inputs(&t, None);
            assert!(kept.messages.messages()[0].is_same(&t.messages()[0]));
            assert_eq!(
                matches!(
                    t.messages()[0].cached_edit(INPUTS_PASS, &[]),
                    CachedEdit::Hit(Edit::Keep)
                ),
                read,
                "{name}"
            );
            let only_exec: HashSet<String> = ["exec".to_owned()].into_iter().collect();
            let dropped = repair_tool_call_inputs(&t, Some(&only_exec));
            assert_eq!(dropped.dropped_tool_calls, 1);
            assert_eq!(dropped.messages.len(), 0);
            let named: HashSet<String> = [name.to_owned()].into_iter().collect();
            assert_eq!(
                repair_tool_call_inputs(&t, Some(&named)).dropped_tool_calls,
                0
            );
            let again = repair_tool_call_inputs(&t, None);
            assert!(again.messages.messages()[0].is_same(&t.messages()[0]));
        }
    }
}
