//! pi's `estimateTokens` (hot-path §5.1): `ceil(chars / 4)` with per-role rules, where lengths
//! are JavaScript string lengths (UTF-16 code units).

use serde_json::Value;

use crate::json::to_js_string;

/// Characters charged for an image block in custom and toolResult messages (§5.1.1).
pub const IMAGE_CHARS: u64 = 4800;

/// JavaScript `string.length`: UTF-16 code units.
pub fn utf16_len(s: &str) -> u64 {
    s.chars().map(|c| c.len_utf16() as u64).sum()
}

fn str_len(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_str).map_or(0, utf16_len)
}

fn blocks(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// The character count of one message under pi's rules.
pub fn estimate_chars(message: &Value) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
