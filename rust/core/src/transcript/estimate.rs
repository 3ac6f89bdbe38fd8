//! What one message costs in characters, from its parsed value: pi's `estimateTokens`
//! (`ceil(chars / 4)` with per-role rules; pi-mono 0.58.3
//! `packages/coding-agent/src/core/compaction/compaction.ts`) and the context pruner's own
//! estimate (OpenClaw 2026.3.13 `src/agents/pi-extensions/context-pruning/pruner.ts`). Lengths
//! are JavaScript string lengths (UTF-16 code units). A leaf of the stage: `facts.rs`
//! computes the same numbers in one pass and falls back to these.

use serde_json::Value;

use crate::base::to_js_string;
use crate::base::utf16_len;

/// Characters charged for an image block in custom and toolResult messages (compaction.ts,
/// `estimateTokens`).
pub const IMAGE_CHARS: u64 = 4800;

/// Chars charged for an image block by the context pruner.
pub const IMAGE_CHAR_ESTIMATE: u64 = 8000;
/// Chars charged for a message of any role other than user, assistant and toolResult.
pub const OTHER_ROLE_CHARS: u64 = 256;
/// How string lengths are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CharWeighting {
    /// UTF-16 length (pi, OpenClaw 2026.3.13).
    #[default]
    Utf16,
    /// Later OpenClaw's CJK-aware `estimateStringChars` (`src/utils/cjk-chars.ts`, not in
    /// 2026.3.13).
    Cjk,
}

impl CharWeighting {
    pub fn chars(self, s: &str) -> u64 {
        match self {
            CharWeighting::Utf16 => utf16_len(s),
            CharWeighting::Cjk => cjk_weighted_chars(s),
        }
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x2E80..=0x9FFF | 0xA000..=0xA4FF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// `estimateStringChars` (later OpenClaw `src/utils/cjk-chars.ts`, not in 2026.3.13): CJK
/// characters count 4 (a supplementary-plane one counts as
/// one character, not its surrogate pair), everything else its UTF-16 length.
pub fn cjk_weighted_chars(s: &str) -> u64 {
    let mut length = 0u64;
    let mut cjk = 0u64;
    let mut astral_cjk = 0u64;
    for c in s.chars() {
        length += c.len_utf16() as u64;
        if is_cjk(c) {
            cjk += 1;
            if c as u32 >= 0x20000 {
                astral_cjk += 1;
            }
        }
    }
    if cjk == 0 {
        return length;
    }
    length - astral_cjk + 3 * cjk
}

fn blocks(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// The character count of one message under pi's rules.
pub fn estimate_chars(message: &Value) -> u64 {
    estimate_chars_weighted(message, CharWeighting::Utf16)
}

/// [`estimate_chars`] with a choice of string weighting.
pub fn estimate_chars_weighted(message: &Value, weighting: CharWeighting) -> u64 {
    let str_len = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .map_or(0, |s| weighting.chars(s))
    };
    let utf16_len = |s: &str| weighting.chars(s);
    let content = message.get("content");
    match message.get("role").and_then(Value::as_str) {
        Some("user") => match content {
            Some(Value::String(s)) => utf16_len(s),
            _ => blocks(content)
                .iter()
                .filter(|b| block_type(b) == Some("text"))
                .map(|b| str_len(b.get("text")))
                .sum(),
        },
        Some("assistant") => blocks(content)
            .iter()
            .map(|b| match block_type(b) {
                Some("text") => str_len(b.get("text")),
                Some("thinking") => str_len(b.get("thinking")),
                Some("toolCall") => {
                    let args = b
                        .get("arguments")
                        .map_or(0, |a| utf16_len(&to_js_string(a)));
                    str_len(b.get("name")) + args
                }
                _ => 0,
            })
            .sum(),
        Some("custom" | "toolResult") => match content {
            Some(Value::String(s)) => utf16_len(s),
            _ => blocks(content)
                .iter()
                .map(|b| match block_type(b) {
                    Some("text") => str_len(b.get("text")),
                    Some("image") => IMAGE_CHARS,
                    _ => 0,
                })
                .sum(),
        },
        Some("bashExecution") => str_len(message.get("command")) + str_len(message.get("output")),
        Some("branchSummary" | "compactionSummary") => str_len(message.get("summary")),
        _ => 0,
    }
}

/// `estimateTokens(message)`: `ceil(chars / 4)`.
pub fn estimate_tokens(message: &Value) -> u64 {
    estimate_chars(message).div_ceil(4)
}

/// Why pi-mono 0.58.3 `compaction.ts` (`estimateTokens`) throws for this message, if it does:
/// it reads `.length` of a field that is missing (an assistant `text` block without `text`, a
/// `thinking` block without `thinking`, a `toolCall` without `name` or `arguments`, a summary
/// without `summary`, a bash execution without `command`/`output`) or iterates missing
/// content. `None` when pi computes a number.
pub fn estimate_tokens_error(message: &Value) -> Option<String> {
    let absent = |v: Option<&Value>| matches!(v, None | Some(Value::Null));
    let role = message.get("role").and_then(Value::as_str)?;
    let content = message.get("content");
    match role {
        "assistant" => {
            let blocks = match content {
                Some(Value::Array(blocks)) => blocks,
                Some(Value::String(_)) => return None,
                _ => return Some("assistant message without a content list".into()),
            };
            blocks.iter().enumerate().find_map(|(i, block)| {
                if block.is_null() {
                    return Some(format!("content block {i} is null"));
                }
                let missing = match block.get("type").and_then(Value::as_str) {
                    Some("text") if absent(block.get("text")) => "text",
                    Some("thinking") if absent(block.get("thinking")) => "thinking",
                    Some("toolCall") if absent(block.get("name")) => "name",
                    Some("toolCall") if block.get("arguments").is_none() => "arguments",
                    _ => return None,
                };
                Some(format!("content block {i} has no {missing}"))
            })
        }
        "custom" | "toolResult" => match content {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .position(Value::is_null)
                .map(|i| format!("content block {i} is null")),
            Some(Value::String(_)) => None,
            _ => Some(format!("{role} message without content")),
        },
        "bashExecution" if absent(message.get("command")) || absent(message.get("output")) => {
            Some("bash execution without command or output".into())
        }
        "branchSummary" | "compactionSummary" if absent(message.get("summary")) => {
            Some(format!("{role} message without a summary"))
        }
        _ => None,
    }
}

/// `estimateTokens` with a choice of string weighting.
pub fn estimate_tokens_weighted(message: &Value, weighting: CharWeighting) -> u64 {
    estimate_chars_weighted(message, weighting).div_ceil(4)
}

/// `calculateContextTokens(usage)` (compaction.ts): `totalTokens` if truthy, else the sum of input,
/// output, cacheRead and cacheWrite.
pub fn usage_tokens(usage: &Value) -> u64 {
    let num = |k: &str| {
        usage
            .get(k)
            .and_then(Value::as_f64)
            .filter(|f| f.is_finite())
            .unwrap_or(0.0)
    };
    let total = num("totalTokens");
    let tokens = if total != 0.0 {
        total
    } else {
        num("input") + num("output") + num("cacheRead") + num("cacheWrite")
    };
    tokens.max(0.0) as u64
}

fn text_and_images(content: Option<&Value>) -> u64 {
    match content {
        Some(Value::String(s)) => utf16_len(s),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| match block_type(b) {
                Some("text") => b.get("text").and_then(Value::as_str).map_or(0, utf16_len),
                Some("image") => IMAGE_CHAR_ESTIMATE,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

/// The pruner's char estimate of one message (pruner.ts, `estimateMessageChars`). String
/// content counts only for user
/// messages; assistant and tool-result content is read block by block.
pub fn estimate_message_chars(message: &Value) -> u64 {
    let content = message.get("content");
    match message.get("role").and_then(Value::as_str) {
        Some("user") => text_and_images(content),
        Some("toolResult") => match content {
            Some(Value::String(_)) => 0,
            _ => text_and_images(content),
        },
        Some("assistant") => match content {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .map(|b| match block_type(b) {
                    Some("text") => b.get("text").and_then(Value::as_str).map_or(0, utf16_len),
                    Some("thinking") => b
                        .get("thinking")
                        .and_then(Value::as_str)
                        .map_or(0, utf16_len),
                    Some("toolCall") => match b.get("arguments") {
                        None | Some(Value::Null) => 2, // JSON.stringify({})
                        Some(args) => utf16_len(&to_js_string(args)),
                    },
                    _ => 0,
                })
                .sum(),
            _ => 0,
        },
        _ => OTHER_ROLE_CHARS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cjk_vectors() {
        for (text, chars) in [
            ("hello", 5),
            ("你好世", 12),
            ("hi你好", 10),
            ("こんにちは", 20),
            ("안녕", 8),
            ("", 0),
            ("\u{20000}", 4),
            ("你\u{20000}", 8),
            ("hi\u{20000}", 6),
        ] {
            assert_eq!(cjk_weighted_chars(text), chars, "{text}");
        }
    }

    #[test]
    fn per_role_rules() {
        assert_eq!(
            estimate_tokens(&json!({"role":"user","content":"hello"})),
            2
        );
        assert_eq!(
            estimate_tokens(
                &json!({"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image","data":"xxxx"}]})
            ),
            1
        );
        assert_eq!(
            estimate_chars(
                &json!({"role":"assistant","content":[{"type":"thinking","thinking":"ab"},{"type":"toolCall","name":"read","arguments":{"p":"x"}}]})
            ),
            2 + 4 + 9
        );
        assert_eq!(
            estimate_chars(
                &json!({"role":"toolResult","content":[{"type":"image"},{"type":"text","text":"a"}]})
            ),
            4801
        );
        assert_eq!(
            estimate_chars(
                &json!({"role":"bashExecution","command":"ls","output":"abc","excludeFromContext":true})
            ),
            5
        );
        assert_eq!(
            estimate_chars(&json!({"role":"compactionSummary","summary":"😀"})),
            2
        );
        assert_eq!(
            estimate_tokens(&json!({"role":"other","content":"xxxx"})),
            0
        );
    }
}
