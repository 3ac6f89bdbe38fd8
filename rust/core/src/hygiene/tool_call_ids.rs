//! Tool-call id sanitation for strict providers (OpenClaw 2026.3.13 `src/agents/tool-call-id.ts`):
//! Anthropic and Google want `[a-zA-Z0-9]` ids, Mistral exactly nine of them.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::policy::ToolCallIdMode;
use crate::base::{to_js_string, JsonText};
use crate::transcript::{
    CachedEdit, Edit, Message, MessageFacts, RewriteKey, SendShape, Transcript,
    PAIRING_TOOL_CALL_TYPES,
};

const STRICT_MAX_LEN: usize = 40;

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn alnum(id: &str) -> String {
    id.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// `sanitizeToolCallId(id, mode)` (as in 2026.3.13: no native-Kimi exception).
pub fn sanitize_tool_call_id(id: Option<&str>, mode: ToolCallIdMode) -> String {
    let Some(id) = id.filter(|id| !id.is_empty()) else {
        return match mode {
            ToolCallIdMode::Strict9 => "defaultid".to_owned(),
            ToolCallIdMode::Strict => "defaulttoolid".to_owned(),
        };
    };
    let kept = alnum(id);
    match mode {
        ToolCallIdMode::Strict => {
            if kept.is_empty() {
                "sanitizedtoolid".to_owned()
            } else {
                kept
            }
        }
        ToolCallIdMode::Strict9 => match kept.len() {
            0 => sha256_hex("sanitized")[..9].to_owned(),
            1..=8 => sha256_hex(&kept)[..9].to_owned(),
            _ => kept[..9].to_owned(),
        },
    }
}

/// `isValidCloudCodeAssistToolId`.
pub fn is_valid_tool_call_id(id: &str, mode: ToolCallIdMode) -> bool {
    let all_alnum = !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric());
    match mode {
        ToolCallIdMode::Strict => all_alnum,
        ToolCallIdMode::Strict9 => all_alnum && id.len() == 9,
    }
}

/// `makeUniqueToolId`.
fn make_unique(raw: &str, mode: ToolCallIdMode, used: &HashSet<String>, now_ms: i64) -> String {
    let sanitized = sanitize_tool_call_id(Some(raw), mode);
    match mode {
        ToolCallIdMode::Strict => {
            let base: String = sanitized.chars().take(STRICT_MAX_LEN).collect();
            if !used.contains(&base) {
                return base;
            }
            let hashed = format!("{}{}", &base[..base.len().min(32)], &sha256_hex(raw)[..8]);
            if !used.contains(&hashed) {
                return hashed;
            }
            for n in 2..10_000 {
                let suffix = format!("x{n}");
                let candidate = format!(
                    "{}{suffix}",
                    &hashed[..hashed.len().min(STRICT_MAX_LEN - suffix.len())]
                );
                if !used.contains(&candidate) {
                    return candidate;
                }
            }
            format!("t{now_ms}")
        }
        ToolCallIdMode::Strict9 => {
            if !used.contains(&sanitized) {
                return sanitized;
            }
            for i in 0..1000 {
                let candidate = sha256_hex(&format!("{raw}:{i}"))[..9].to_owned();
                if !used.contains(&candidate) {
                    return candidate;
                }
            }
            sha256_hex(&format!("{raw}:{now_ms}"))[..9].to_owned()
        }
    }
}

/// An assistant message with the non-empty `id` of each tool-call block replaced by
/// `new_id(id)`, in block order; `None` when no id changed. (Only ids are rewritten: a flag says
/// whether any was, no copy to compare with.)
fn rewrite_call_ids(message: &Message, mut new_id: impl FnMut(&str) -> String) -> Option<Value> {
    let mut next = message.to_value().unwrap_or(Value::Null);
    let mut changed = false;
    if let Some(blocks) = next.get_mut("content").and_then(Value::as_array_mut) {
        for block in blocks.iter_mut() {
            let is_call = block
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| PAIRING_TOOL_CALL_TYPES.contains(&t));
            let Some(raw) = block
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| is_call && !id.is_empty())
                .map(str::to_owned)
            else {
                continue;
            };
            let id = new_id(&raw);
            if id != raw {
                block["id"] = Value::from(id);
                changed = true;
            }
        }
    }
    changed.then_some(next)
}

/// `sanitizeToolCallIdsForCloudCodeAssist` (as in 2026.3.13): one mapping from raw id to
/// a new unique id, applied to assistant tool-call blocks and to tool results'
/// `toolCallId`/`toolUseId`. Returns the input itself when every id is already what it maps to.
///
/// The pass runs on every request over the same messages, and with strict ids it rewrites
/// nearly every call and result. Each rewrite is cached with the message it rewrote, keyed by
/// the ids the mapping gave it, so the next request gets the same rewritten message back (with
/// the facts and layout later passes cached on it) without parsing. A rewrite is cached only
/// when the ids the message's facts list are exactly those the rewrite visited, in order: only
/// then may a later request map the ids from the facts and advance the mapping exactly as the
/// rewrite would.
pub fn sanitize_tool_call_ids(input: &Transcript, mode: ToolCallIdMode, now_ms: i64) -> Transcript {
    let mut mapping: HashMap<String, String> = HashMap::new();
    let mut used: HashSet<String> = HashSet::new();
    let mut resolve = |raw: &str| -> String {
        if let Some(id) = mapping.get(raw) {
            return id.clone();
        }
        let id = make_unique(raw, mode, &used, now_ms);
        used.insert(id.clone());
        mapping.insert(raw.to_owned(), id.clone());
        id
    };
    input.map_to_messages(|_, message| {
        let facts = message.request_facts();
        let assistant = facts.is_role("assistant") && facts.has_input_tool_call_blocks;
        if !assistant && !facts.is_role("toolResult") {
            return None;
        }
        let listed: Vec<&str> = if assistant {
            facts
                .tool_calls
                .iter()
                .map(|call| call.id.as_str())
                .collect()
        } else {
            facts.tool_result_id.iter().map(String::as_str).collect()
        };
        if message.has_cached_rewrite(SANITIZE_PASS) {
            // Cached only when `listed` is what the rewrite visits: mapping it now is what
            // the rewrite below would do (mapping an id again changes nothing).
            let mapped: Vec<String> = listed.iter().map(|raw| resolve(raw)).collect();
            if let CachedEdit::Hit(cached) = message.cached_edit(SANITIZE_PASS, &mapped) {
                return match cached {
                    Edit::Replace(rewritten) => Some(rewritten),
                    Edit::Keep | Edit::Drop => None,
                };
            }
        }
        let mut visited = Vec::new();
        let mut mapped = Vec::new();
        let mut record = |raw: &str| -> String {
            let id = resolve(raw);
            visited.push(raw.to_owned());
            mapped.push(id.clone());
            id
        };
        // Empty ids are left as they are (the input repair drops those calls).
        let rewritten = match id_spans(message, assistant) {
            Some(spans) => splice_ids(message.as_str(), &spans, &mut record),
            None if assistant => rewrite_call_ids(message, &mut record).map(|v| to_js_string(&v)),
            None => rewrite_result_ids(message, &mut record).map(|v| to_js_string(&v)),
        };
        let visited_listed = visited
            .iter()
            .map(String::as_str)
            .eq(listed.iter().copied());
        let rewritten = rewritten.map(|text| {
            let text = JsonText::owned(text);
            if visited_listed {
                let (facts, shape) = facts_with_new_ids(message, &visited, &mapped);
                Message::with_known_facts(text, facts, shape)
            } else {
                Message::new(text)
            }
        });
        if visited_listed {
            let key = RewriteKey {
                pass: SANITIZE_PASS,
                inputs: mapped,
            };
            message.cache_rewrite(key, Edit::replacing(rewritten.clone()));
        }
        rewritten
    })
}

/// Where the ids the rewrite visits are in `message`'s text, read from its layout without a
/// parse: the byte range of each id's JSON string and the id, in the order
/// [`rewrite_call_ids`] (`assistant`) or [`rewrite_result_ids`] visits them. `None` when the
/// layout cannot say it exactly (not an object, a key or an id with an escape, `content` twice,
/// a `toolUseId`): the message is parsed instead.
fn id_spans(message: &Message, assistant: bool) -> Option<Vec<(usize, usize, &str)>> {
    let text = message.as_str();
    let layout = message.layout();
    let fields = layout.message_fields(text)?;
    let at = |raw: &str| raw.as_ptr() as usize - text.as_ptr() as usize;
    let mut spans = Vec::new();
    if !assistant {
        if text.contains("\"toolUseId\"") {
            return None;
        }
        if let Some(raw) = fields[6] {
            match plain(raw) {
                Some(Some("")) | None => {}
                Some(Some(id)) => spans.push((at(raw), at(raw) + raw.len(), id)),
                Some(None) => return None,
            }
        }
        return Some(spans);
    }
    let Some(items) = layout.content_items(text) else {
        return Some(spans); // no array content: no call to rewrite
    };
    for item in items {
        let Some(block) = item.fields() else {
            // An object whose keys the layout could not read: parse.
            if item.text.starts_with('{') {
                return None;
            }
            continue;
        };
        let is_call = match block[0].map(plain) {
            Some(Some(Some(ty))) => PAIRING_TOOL_CALL_TYPES.contains(&ty),
            Some(Some(None)) => return None,
            _ => false,
        };
        let Some(raw) = block[5].filter(|_| is_call) else {
            continue;
        };
        match plain(raw) {
            Some(Some("")) | None => {}
            Some(Some(id)) => spans.push((at(raw), at(raw) + raw.len(), id)),
            Some(None) => return None,
        }
    }
    Some(spans)
}

/// A raw JSON value read as a string without escapes: its text between the quotes (`None`:
/// not a string, `Some(None)`: a string with an escape, which only a parse reads exactly).
fn plain(raw: &str) -> Option<Option<&str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    Some((!inner.contains('\\')).then_some(inner))
}

/// `text` with each id of `spans` replaced by `new_id(id)` (as a JSON string), every other
/// byte kept; `None` when no id changed.
fn splice_ids(
    text: &str,
    spans: &[(usize, usize, &str)],
    mut new_id: impl FnMut(&str) -> String,
) -> Option<String> {
    let mut out = String::new();
    let (mut copied, mut changed) = (0, false);
    for &(start, end, raw) in spans {
        let id = new_id(raw);
        if id != raw {
            out.push_str(&text[copied..start]);
            out.push_str(&to_js_string(&Value::from(id)));
            (copied, changed) = (end, true);
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// The facts and request shape of `message` with its ids rewritten: `visited[i]` (the ids its
/// facts list, in order) became `mapped[i]`. Only ids change in the rewrite, and no count or
/// length the facts hold includes one, so the rewritten message is not read again.
fn facts_with_new_ids(
    message: &Message,
    visited: &[String],
    mapped: &[String],
) -> (MessageFacts, SendShape) {
    let new_id = |id: &str| {
        visited
            .iter()
            .position(|raw| raw == id)
            .map(|i| mapped[i].clone())
    };
    let mut facts = message.request_facts().clone();
    for call in &mut facts.tool_calls {
        if let Some(id) = new_id(&call.id) {
            call.id = id;
        }
    }
    if let Some(id) = facts.tool_result_id.as_mut() {
        if let Some(new) = new_id(id) {
            *id = new;
        }
    }
    let mut shape = message.send_shape().clone();
    for call in &mut shape.calls {
        if let Some(id) = new_id(&call.id).filter(|_| !call.id.is_empty()) {
            call.id = id;
        }
    }
    if let Some(id) = shape.result_id.as_mut().filter(|id| !id.is_empty()) {
        if let Some(new) = new_id(id) {
            *id = new;
        }
    }
    (facts, shape)
}

/// The key under which [`sanitize_tool_call_ids`] caches its rewrites.
const SANITIZE_PASS: &str = "sanitize_tool_call_ids";

/// A tool result with its non-empty `toolCallId` and `toolUseId` replaced by `new_id(id)`, in
/// that order; `None` when neither changed. (Only ids are rewritten: a flag says whether any
/// was, no copy to compare with.)
fn rewrite_result_ids(message: &Message, mut new_id: impl FnMut(&str) -> String) -> Option<Value> {
    let mut next = message.to_value().unwrap_or(Value::Null);
    let mut changed = false;
    for key in ["toolCallId", "toolUseId"] {
        if let Some(raw) = next
            .get(key)
            .and_then(Value::as_str)
            .filter(|r| !r.is_empty())
            .map(str::to_owned)
        {
            let id = new_id(&raw);
            if id != raw {
                next[key] = Value::from(id);
                changed = true;
            }
        }
    }
    changed.then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(t: &Transcript) -> Vec<String> {
        t.messages()
            .iter()
            .flat_map(|m| {
                let v = m.to_value().unwrap();
                let mut out = Vec::new();
                if let Some(blocks) = v["content"].as_array() {
                    out.extend(
                        blocks
                            .iter()
                            .filter_map(|b| b["id"].as_str().map(str::to_owned)),
                    );
                }
                out.extend(v["toolCallId"].as_str().map(str::to_owned));
                out
            })
            .collect()
    }

    fn call(ids_: &[&str]) -> Value {
        json!({"role":"assistant","content": ids_.iter().map(|id| json!({"type":"toolCall","id":id,"name":"x","arguments":{}})).collect::<Vec<_>>()})
    }

    fn result(id: &str) -> Value {
        json!({"role":"toolResult","toolCallId":id,"toolName":"x","content":[]})
    }

    /// The same messages with nothing cached on them (fresh objects from their text).
    fn uncached(t: &Transcript) -> Transcript {
        Transcript::new(t.messages().iter().map(|m| m.text().clone()).collect())
    }

    fn texts(t: &Transcript) -> Vec<String> {
        t.messages()
            .iter()
            .map(|m| m.text().as_str().to_owned())
            .collect()
    }

    /// A second pass over the same messages gives back the very messages the first rewrote
    /// (so later passes keep what they cached on them), equal to a pass over fresh copies.
    #[test]
    fn a_rewrite_is_cached_with_the_message_it_rewrote() {
        let t = Transcript::from_values(&[
            json!({"role":"user","content":"go"}),
            call(&["call|1", "call:2"]),
            result("call|1"),
            result("call:2"),
            call(&["ok3"]),
            result("ok3"),
        ]);
        for mode in [ToolCallIdMode::Strict, ToolCallIdMode::Strict9] {
            let t = uncached(&t);
            let first = sanitize_tool_call_ids(&t, mode, 0);
            let second = sanitize_tool_call_ids(&t, mode, 0);
            assert_eq!(
                texts(&first),
                texts(&sanitize_tool_call_ids(&uncached(&t), mode, 0))
            );
            assert_eq!(texts(&second), texts(&first));
            for (a, b) in first.messages().iter().zip(second.messages()) {
                assert!(a.is_same(b), "{mode:?}: {} rebuilt", a.text().as_str());
            }
            // The rewritten call and results are new messages; `ok3` is kept in strict mode.
            assert!(!first.messages()[1].is_same(&t.messages()[1]));
            if mode == ToolCallIdMode::Strict {
                assert!(first.messages()[4].is_same(&t.messages()[4]));
            }
        }
    }

    /// A cached rewrite is used only when the mapping gives the message the same ids again:
    /// here an earlier message takes the id first, so the cached message is rewritten anew.
    #[test]
    fn a_cached_rewrite_under_other_ids_is_not_used() {
        let t = uncached(&Transcript::from_values(&[call(&["a|b"]), result("a|b")]));
        let alone = sanitize_tool_call_ids(&t, ToolCallIdMode::Strict, 0);
        assert_eq!(ids(&alone), ["ab", "ab"]);
        let taken = Transcript::from_values(&[call(&["ab"]), result("ab")]);
        let both = Transcript::from_messages(
            taken
                .messages()
                .iter()
                .chain(t.messages())
                .cloned()
                .collect(),
        );
        let out = sanitize_tool_call_ids(&both, ToolCallIdMode::Strict, 0);
        let fresh = sanitize_tool_call_ids(&uncached(&both), ToolCallIdMode::Strict, 0);
        assert_eq!(texts(&out), texts(&fresh));
        assert_eq!(ids(&out)[0], "ab");
        assert_ne!(ids(&out)[2], "ab");
        assert_eq!(ids(&out)[2], ids(&out)[3]);
    }

    /// A rewritten message carries the facts and request shape of the message it rewrote,
    /// with the new ids: the same a fresh pass over its text reads.
    #[test]
    fn a_rewritten_message_knows_its_facts_without_a_parse() {
        let t = uncached(&Transcript::from_values(&[
            json!({"role":"assistant","content":[
                {"type":"toolCall","id":"call|1","name":"read","arguments":{"p":"é"}},
                {"type":"toolUse","id":"use:2","name":"x","input":{}},
                {"type":"functionCall","id":"call|1","name":"dup"},
                {"type":"toolCall","id":"","name":"empty"},
                {"type":"toolCall","id":7},
                {"type":"text","text":"t"}],"stopReason":"toolUse"}),
            json!({"role":"toolResult","toolCallId":"call|1","toolName":"read","content":[]}),
            json!({"role":"toolResult","toolUseId":"use:2","content":"x"}),
            json!({"role":"toolResult","toolCallId":"","toolUseId":"use:2","content":[]}),
        ]));
        for mode in [ToolCallIdMode::Strict, ToolCallIdMode::Strict9] {
            let out = sanitize_tool_call_ids(&uncached(&t), mode, 0);
            let mut carried = 0;
            for m in out.messages() {
                let fresh = Message::new(m.text().clone());
                if m.has_facts() {
                    carried += 1;
                }
                assert_eq!(m.facts(), fresh.facts(), "{mode:?}: {}", m.text().as_str());
                assert_eq!(
                    m.send_shape(),
                    fresh.send_shape(),
                    "{mode:?}: {}",
                    m.text().as_str()
                );
            }
            // All four were rewritten (none is the message it was) and carry their facts.
            assert!(!out
                .messages()
                .iter()
                .zip(t.messages())
                .any(|(a, b)| a.is_same(b)));
            assert_eq!(carried, 4, "{mode:?}");
        }
    }

    /// Ids rewritten in place in the text mean what the parse-and-serialize rewrite gives,
    /// visiting the same ids in the same order; the layout declines what it cannot read
    /// exactly, and every other byte is kept.
    #[test]
    fn ids_spliced_into_the_text_match_the_parsed_rewrite() {
        let cases = [
            (
                true,
                r#"{"role":"assistant","content":[{"type":"toolCall","id":"call|1","name":"a","arguments":{"x":1.0}},{"type":"text","text":"a \"id\":\"q\""},{"type":"toolUse","id":"u:2"},{"type":"functionCall","id":"call|1"},{"type":"tool_use","id":"s|3"},{"type":"toolCall","id":""},{"type":"toolCall","id":5},null,"x"]}"#,
                true,
            ),
            (
                true,
                r#"{ "role" : "assistant", "content" : [ { "id" : "a|b" , "type" : "toolCall" } ] , "z": "\u00e9" }"#,
                true,
            ),
            (
                true,
                r#"{"role":"assistant","content":[{"type":"toolCall","id":"a|1","id":"a|2"}]}"#,
                true,
            ),
            (
                true,
                r#"{"role":"assistant","content":[{"type":"toolCall","id":"ok"}]}"#,
                true,
            ),
            (true, r#"{"role":"assistant","content":"text"}"#, true),
            (
                true,
                r#"{"role":"assistant","content":[{"type":"toolCall","id":"a\u007c1"}]}"#,
                false,
            ),
            (
                true,
                r#"{"role":"assistant","content":[{"type":"tool\u0043all","id":"a|1"}]}"#,
                false,
            ),
            (
                true,
                r#"{"role":"assistant","content":[{"t\u0079pe":"toolCall","id":"a|1"}]}"#,
                false,
            ),
            (
                true,
                r#"{"role":"assistant","content":[],"content":[{"type":"toolCall","id":"a|1"}]}"#,
                false,
            ),
            (
                false,
                r#"{"role":"toolResult","toolCallId":"call|1","content":[{"type":"text","text":"\"toolCallId\":\"x\""}]}"#,
                true,
            ),
            (
                false,
                r#"{"role":"toolResult","toolCallId":"c|1","toolCallId":"c|2","content":[]}"#,
                true,
            ),
            (
                false,
                r#"{"role":"toolResult","toolCallId":"","content":[]}"#,
                true,
            ),
            (
                false,
                r#"{"role":"toolResult","toolCallId":7,"content":[]}"#,
                true,
            ),
            (
                false,
                r#"{"role":"toolResult","toolCallId":"c|1","toolUseId":"u|1"}"#,
                false,
            ),
            (false, r#"{"role":"toolResult","toolCallId":"c\n1"}"#, false),
            (false, r#"["toolResult"]"#, false),
        ];
        let new_id = |raw: &str| format!("{}x", alnum(raw));
        for (assistant, text, spliced) in cases {
            let message = Message::new(JsonText::owned(text.into()));
            let spans = id_spans(&message, assistant);
            assert_eq!(spans.is_some(), spliced, "{text}");
            let Some(spans) = spans else { continue };
            let (mut by_splice, mut by_parse) = (Vec::new(), Vec::new());
            let splice = splice_ids(text, &spans, |raw| {
                by_splice.push(raw.to_owned());
                new_id(raw)
            });
            let rewrite = |raw: &str| {
                by_parse.push(raw.to_owned());
                new_id(raw)
            };
            let parse = if assistant {
                rewrite_call_ids(&message, rewrite)
            } else {
                rewrite_result_ids(&message, rewrite)
            };
            assert_eq!(by_splice, by_parse, "{text}");
            assert_eq!(
                splice
                    .as_deref()
                    .map(|t| crate::base::parse_value(t).unwrap()),
                parse,
                "{text}"
            );
            // Only the ids changed: the text around them is the input's.
            if let Some(out) = splice {
                let (first, last) = (spans[0].0, spans[spans.len() - 1].1);
                assert!(out.starts_with(&text[..first]), "{out}");
                assert!(out.ends_with(&text[last..]), "{out}");
            }
        }
    }

    /// A result naming both `toolCallId` and `toolUseId`: its facts list one id where the
    /// rewrite maps two, so nothing is cached and every pass rewrites it afresh (correctly).
    #[test]
    fn a_rewrite_whose_ids_the_facts_do_not_list_is_not_cached() {
        let both = json!({"role":"toolResult","toolCallId":"c|1","toolUseId":"u|2","content":[]});
        let t = uncached(&Transcript::from_values(&[call(&["c|1"]), both]));
        let first = sanitize_tool_call_ids(&t, ToolCallIdMode::Strict, 0);
        assert!(!t.messages()[1].has_cached_rewrite(SANITIZE_PASS));
        assert!(t.messages()[0].has_cached_rewrite(SANITIZE_PASS));
        let second = sanitize_tool_call_ids(&t, ToolCallIdMode::Strict, 0);
        assert_eq!(texts(&first), texts(&second));
        assert!(!first.messages()[1].is_same(&second.messages()[1]));
        let v = second.messages()[1].to_value().unwrap();
        assert_eq!(
            (v["toolCallId"].as_str(), v["toolUseId"].as_str()),
            (Some("c1"), Some("u2"))
        );
    }

    #[test]
    fn upstream_vectors() {
        let valid = Transcript::from_values(&[call(&["call1"]), result("call1")]);
        assert_eq!(
            sanitize_tool_call_ids(&valid, ToolCallIdMode::Strict, 0),
            valid
        );
        let t = Transcript::from_values(&[call(&["call|item:123"]), result("call|item:123")]);
        assert_eq!(
            ids(&sanitize_tool_call_ids(&t, ToolCallIdMode::Strict, 0)),
            ["callitem123", "callitem123"]
        );
        let t = Transcript::from_values(&[
            call(&["call_a|b", "call_a:b"]),
            result("call_a|b"),
            result("call_a:b"),
        ]);
        let out = ids(&sanitize_tool_call_ids(&t, ToolCallIdMode::Strict, 0));
        assert_ne!(out[0], out[1]);
        assert_eq!(
            (out[0].clone(), out[1].clone()),
            (out[2].clone(), out[3].clone())
        );
        assert!(out
            .iter()
            .all(|id| is_valid_tool_call_id(id, ToolCallIdMode::Strict)));
        let a = format!("call_{}", "a".repeat(60));
        let b = format!("call_{}b", "a".repeat(59));
        let out = ids(&sanitize_tool_call_ids(
            &Transcript::from_values(&[call(&[&a, &b])]),
            ToolCallIdMode::Strict,
            0,
        ));
        assert_ne!(out[0], out[1]);
        assert!(out
            .iter()
            .all(|id| id.len() <= 40 && is_valid_tool_call_id(id, ToolCallIdMode::Strict)));
        assert_eq!(
            sanitize_tool_call_id(
                Some("whatsapp_login_1768799841527_1"),
                ToolCallIdMode::Strict
            ),
            "whatsapplogin17687998415271"
        );
        let t = Transcript::from_values(&[
            call(&["call_abc|item:123", "call_abc|item:456"]),
            result("call_abc|item:123"),
            result("call_abc|item:456"),
        ]);
        let out = ids(&sanitize_tool_call_ids(&t, ToolCallIdMode::Strict9, 0));
        assert_ne!(out[0], out[1]);
        assert!(out
            .iter()
            .all(|id| is_valid_tool_call_id(id, ToolCallIdMode::Strict9)));
        assert_eq!(
            (out[0].clone(), out[1].clone()),
            (out[2].clone(), out[3].clone())
        );
    }

    #[test]
    fn validity() {
        assert!(is_valid_tool_call_id("abc123", ToolCallIdMode::Strict));
        assert!(!is_valid_tool_call_id("abc-123", ToolCallIdMode::Strict));
        assert!(!is_valid_tool_call_id("abc_123", ToolCallIdMode::Strict));
        assert!(!is_valid_tool_call_id("", ToolCallIdMode::Strict));
        assert!(is_valid_tool_call_id("abcdef123", ToolCallIdMode::Strict9));
        assert!(!is_valid_tool_call_id("abc", ToolCallIdMode::Strict9));
        assert!(!is_valid_tool_call_id(
            "abcdefghij",
            ToolCallIdMode::Strict9
        ));
        assert_eq!(
            sanitize_tool_call_id(None, ToolCallIdMode::Strict9),
            "defaultid"
        );
        assert_eq!(
            sanitize_tool_call_id(Some("--"), ToolCallIdMode::Strict),
            "sanitizedtoolid"
        );
        assert_eq!(
            sanitize_tool_call_id(Some("ab"), ToolCallIdMode::Strict9).len(),
            9
        );
    }
}

/// A fresh id for the `n`-th occurrence of `raw`, valid in `mode` (`None`: any provider's
/// charset, `[a-zA-Z0-9_-]`).
fn occurrence_id(
    raw: &str,
    n: usize,
    mode: Option<ToolCallIdMode>,
    used: &HashSet<String>,
) -> String {
    for attempt in 0..10_000usize {
        let seed = if attempt == 0 {
            format!("{raw}:{n}")
        } else {
            format!("{raw}:{n}:{attempt}")
        };
        let candidate = match mode {
            Some(ToolCallIdMode::Strict9) => sha256_hex(&seed)[..9].to_owned(),
            Some(ToolCallIdMode::Strict) => {
                let base = sanitize_tool_call_id(Some(raw), ToolCallIdMode::Strict);
                let suffix = if attempt == 0 {
                    format!("x{n}")
                } else {
                    sha256_hex(&seed)[..8].to_owned()
                };
                format!(
                    "{}{suffix}",
                    &base[..base.len().min(STRICT_MAX_LEN - suffix.len())]
                )
            }
            None => {
                let base: String = raw
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                    .collect();
                let base = if base.is_empty() {
                    "call".to_owned()
                } else {
                    base
                };
                if attempt == 0 {
                    format!("{base}_{n}")
                } else {
                    format!("{base}_{}", &sha256_hex(&seed)[..8])
                }
            }
        };
        if !used.contains(&candidate) {
            return candidate;
        }
    }
    sha256_hex(&format!("{raw}:{n}:fallback"))
}

/// Makes tool-call ids unique across the transcript, occurrence by occurrence (as OpenClaw
/// 2026.5's occurrence-aware mapping in tool-call-id.ts does; not in 2026.3.13): the second and
/// later calls with
/// an id already used get a fresh id (valid in `mode`), and tool results are matched to
/// occurrences first-in first-out per original id. Providers reject repeated tool-call ids,
/// and a repeated id would otherwise leave the later call without a result after pairing
/// repair (its result is dropped as a duplicate). The input itself when ids are unique.
pub fn dedupe_tool_call_ids(input: &Transcript, mode: Option<ToolCallIdMode>) -> Transcript {
    use std::collections::VecDeque;
    let mut used: HashSet<String> = HashSet::new();
    let mut occurrences: HashMap<String, usize> = HashMap::new();
    let mut pending: HashMap<String, VecDeque<String>> = HashMap::new();
    input.map_messages(|_, message| {
        let facts = message.request_facts();
        if facts.is_role("assistant") && !facts.tool_calls.is_empty() {
            rewrite_call_ids(message, |raw| {
                let n = occurrences.entry(raw.to_owned()).or_insert(0);
                *n += 1;
                let id = if used.contains(raw) {
                    occurrence_id(raw, *n, mode, &used)
                } else {
                    raw.to_owned()
                };
                used.insert(id.clone());
                pending
                    .entry(raw.to_owned())
                    .or_default()
                    .push_back(id.clone());
                id
            })
        } else if facts.is_role("toolResult") {
            match facts.tool_result_id.as_deref().and_then(|raw| {
                pending
                    .get_mut(raw)
                    .and_then(VecDeque::pop_front)
                    .map(|id| (raw.to_owned(), id))
            }) {
                Some((raw, id)) if id != raw => {
                    let mut value = message.to_value().unwrap_or(Value::Null);
                    for key in ["toolCallId", "toolUseId"] {
                        if value.get(key).and_then(Value::as_str) == Some(raw.as_str()) {
                            value[key] = Value::from(id.clone());
                        }
                    }
                    Some(value)
                }
                _ => None,
            }
        } else {
            None
        }
    })
}

#[cfg(test)]
mod dedupe_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeated_ids_get_fresh_ones_and_results_follow_fifo() {
        let t = Transcript::from_values(&[
            json!({"role":"assistant","content":[{"type":"toolCall","id":"b","name":"x","arguments":{}}]}),
            json!({"role":"toolResult","toolCallId":"b","toolName":"x","content":[]}),
            json!({"role":"assistant","content":[{"type":"toolCall","id":"b","name":"x","arguments":{}},{"type":"toolCall","id":"b","name":"x","arguments":{}}]}),
            json!({"role":"toolResult","toolCallId":"b","toolName":"x","content":[]}),
        ]);
        let out = dedupe_tool_call_ids(&t, None);
        let v: Vec<Value> = out
            .messages()
            .iter()
            .map(|m| m.to_value().unwrap())
            .collect();
        assert_eq!(v[0]["content"][0]["id"], "b");
        assert_eq!(v[1]["toolCallId"], "b");
        assert_eq!(v[2]["content"][0]["id"], "b_2");
        assert_eq!(v[2]["content"][1]["id"], "b_3");
        assert_eq!(v[3]["toolCallId"], "b_2");
        let unique = Transcript::from_values(&[
            json!({"role":"assistant","content":[{"type":"toolCall","id":"a","name":"x","arguments":{}}]}),
        ]);
        assert_eq!(dedupe_tool_call_ids(&unique, None), unique);
        let strict = dedupe_tool_call_ids(&t, Some(ToolCallIdMode::Strict9));
        let id = strict.messages()[2].to_value().unwrap()["content"][0]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(is_valid_tool_call_id(&id, ToolCallIdMode::Strict9));
    }
}
