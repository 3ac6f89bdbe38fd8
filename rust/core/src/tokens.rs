//! pi's `estimateTokens` (hot-path §5.1): `ceil(chars / 4)` with per-role rules, where lengths
//! are JavaScript string lengths (UTF-16 code units).

use serde_json::Value;

use crate::json::to_js_string;
use crate::transcript::Transcript;

/// Characters charged for an image block in custom and toolResult messages (§5.1.1).
pub const IMAGE_CHARS: u64 = 4800;

/// JavaScript `string.length`: UTF-16 code units.
pub fn utf16_len(s: &str) -> u64 {
    if s.is_ascii() {
        return s.len() as u64;
    }
    // Counted on the bytes (in blocks the compiler turns into vector code): every character has
    // one byte that is not a continuation byte, and a four-byte character is a surrogate pair.
    s.as_bytes()
        .chunks(1 << 12)
        .map(|block| {
            let units: u32 = block
                .iter()
                .map(|&b| u32::from((b as i8) >= -0x40) + u32::from(b >= 0xF0))
                .sum();
            u64::from(units)
        })
        .sum()
}

/// How string lengths are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CharWeighting {
    /// UTF-16 length (pi, OpenClaw baseline).
    #[default]
    Utf16,
    /// OpenClaw's CJK-aware `estimateStringChars` (§5.2.8).
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

/// `estimateStringChars` (§5.2.8): CJK characters count 4 (a supplementary-plane one counts as
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

/// `estimateTokens` with a choice of string weighting.
pub fn estimate_tokens_weighted(message: &Value, weighting: CharWeighting) -> u64 {
    estimate_chars_weighted(message, weighting).div_ceil(4)
}

/// Per-message estimates of a transcript (the UTF-16 rule from the cached facts; the CJK rule
/// needs each message's strings and parses them).
pub fn token_counts(messages: &Transcript, weighting: CharWeighting) -> Vec<u64> {
    if weighting == CharWeighting::Utf16 {
        messages.compute_facts();
    }
    messages
        .messages()
        .iter()
        .map(|m| match weighting {
            CharWeighting::Utf16 => m.facts().pi_tokens(),
            CharWeighting::Cjk => m
                .to_value()
                .map_or(0, |v| estimate_tokens_weighted(&v, weighting)),
        })
        .collect()
}

/// `calculateContextTokens(usage)` (§5.1.2): `totalTokens` if truthy, else the sum of input,
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

/// The result of [`estimate_context_tokens`] (§5.1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextTokens {
    pub tokens: u64,
    pub usage_tokens: u64,
    pub trailing_tokens: u64,
    pub last_usage_index: Option<usize>,
}

/// `estimateContextTokens`: the usage of the last assistant whose usage counts (not aborted or
/// errored) plus the chars/4 estimate of everything after it; without usage, the estimate of
/// everything.
pub fn estimate_context_tokens(messages: &Transcript) -> ContextTokens {
    let all = messages.messages();
    let last_usage = all.iter().enumerate().rev().find_map(|(i, m)| {
        let f = m.facts();
        let usable = f.is_role("assistant")
            && !matches!(f.stop_reason.as_deref(), Some("aborted" | "error"));
        f.usage_tokens.filter(|_| usable).map(|tokens| (i, tokens))
    });
    let (start, usage, index) = match last_usage {
        Some((i, tokens)) => (i + 1, tokens, Some(i)),
        None => (0, 0, None),
    };
    let trailing: u64 = all[start..].iter().map(|m| m.facts().pi_tokens()).sum();
    ContextTokens {
        tokens: usage + trailing,
        usage_tokens: usage,
        trailing_tokens: trailing,
        last_usage_index: index,
    }
}

/// OpenClaw's `estimateMessagesTokens` (§5.2.5): pi's estimate after removing `details` from
/// tool results (which pi's rules never count, so the sum is the same).
pub fn estimate_messages_tokens(messages: &Transcript) -> u64 {
    token_counts(messages, CharWeighting::Utf16).iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn utf16_len_counts_javascript_string_length() {
        let samples = [
            "",
            "abc",
            "é",
            "中文",
            "😀",
            "a😀b中é\u{10FFFF}\u{7F}\u{80}\u{800}\u{FFFF}",
        ];
        for sample in samples {
            let expected: u64 = sample.chars().map(|c| c.len_utf16() as u64).sum();
            assert_eq!(utf16_len(sample), expected, "{sample:?}");
            // Long enough to cross the counting blocks.
            let long = sample.repeat(3000);
            assert_eq!(utf16_len(&long), expected * 3000, "{sample:?} repeated");
        }
    }

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
