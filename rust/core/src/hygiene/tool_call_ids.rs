//! Tool-call id sanitation for strict providers (OpenClaw 2026.3.13 `src/agents/tool-call-id.ts`):
//! Anthropic and Google want `[a-zA-Z0-9]` ids, Mistral exactly nine of them.

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::policy::ToolCallIdMode;
use crate::transcript::{Message, Transcript, PAIRING_TOOL_CALL_TYPES};

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
    input.map_messages(|_, message| {
        let facts = message.facts();
        if facts.is_role("assistant") && facts.has_input_tool_call_blocks {
            // Empty ids are left as they are (the input repair drops those calls).
            rewrite_call_ids(message, &mut resolve)
        } else if facts.is_role("toolResult") {
            // Only ids are rewritten: a flag says whether any was, no copy to compare with.
            let mut next = message.to_value().unwrap_or(Value::Null);
            let mut changed = false;
            for key in ["toolCallId", "toolUseId"] {
                if let Some(raw) = next
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                    .map(str::to_owned)
                {
                    let id = resolve(&raw);
                    if id != raw {
                        next[key] = Value::from(id);
                        changed = true;
                    }
                }
            }
            changed.then_some(next)
        } else {
            None
        }
    })
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
        let facts = message.facts();
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
