//! Per-message statistics of a transcript as columns (one vector per statistic), for tables and
//! charts over many messages without building a dict per message. Most columns come from the
//! cached [`MessageFacts`](super::MessageFacts); the recorded `usage`, the timestamp and
//! `isError` are read in one more pass that skips everything else.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::list::Transcript;
use crate::base::parse_value;

/// The columns of [`message_columns`]; every vector has one element per message. Numbers that
/// a message may lack (recorded usage, timestamp) are `f64` with NaN for "missing", which is
/// how numpy, pandas and Arrow readers take a missing number.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageColumns {
    pub role: Vec<Option<String>>,
    /// A tool result's `toolName`; for an assistant, the names of its tool calls joined with
    /// `","` (`None` when it calls none).
    pub tool_name: Vec<Option<String>>,
    /// UTF-16 length of `content` as a string, or of its text blocks.
    pub text_chars: Vec<u64>,
    /// UTF-16 length of the thinking blocks.
    pub thinking_chars: Vec<u64>,
    /// pi's chars/4 estimate (pi-mono 0.58.3 `compaction.ts`, `estimateTokens`).
    pub estimated_tokens: Vec<u64>,
    /// Tool calls of an assistant with an id (the calls pairing repair looks for).
    pub tool_calls: Vec<u64>,
    pub has_image: Vec<bool>,
    /// A tool result with `isError: true`, or an assistant that stopped with `"error"`.
    pub is_error: Vec<bool>,
    /// The message's `timestamp` in milliseconds (a number, or an RFC 3339 string).
    pub timestamp_ms: Vec<f64>,
    /// An assistant's recorded `usage` fields (`input`, `output`, `cacheRead`, `cacheWrite`,
    /// `totalTokens`); NaN where the message has no usage object or the field is not a number.
    pub usage_input: Vec<f64>,
    pub usage_output: Vec<f64>,
    pub usage_cache_read: Vec<f64>,
    pub usage_cache_write: Vec<f64>,
    pub usage_total: Vec<f64>,
}

#[derive(Deserialize)]
struct Extra<'a> {
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(rename = "isError", borrow, default)]
    is_error: Option<&'a RawValue>,
}

/// What the extra pass reads of one message.
struct ExtraFacts {
    usage: Option<Value>,
    timestamp: Option<Value>,
    is_error: bool,
}

fn extra_facts(text: &str) -> ExtraFacts {
    let value = |raw: Option<&RawValue>| raw.and_then(|r| parse_value(r.get()).ok());
    match serde_json::from_str::<Extra<'_>>(text) {
        Ok(extra) => ExtraFacts {
            usage: value(extra.usage),
            timestamp: value(extra.timestamp),
            is_error: value(extra.is_error) == Some(Value::Bool(true)),
        },
        // Duplicate keys and other oddities: the full parse decides (its last key wins).
        Err(_) => {
            let full = parse_value(text).ok();
            let field = |k: &str| full.as_ref().and_then(|v| v.get(k)).cloned();
            ExtraFacts {
                usage: field("usage"),
                timestamp: field("timestamp"),
                is_error: field("isError") == Some(Value::Bool(true)),
            }
        }
    }
}

/// A timestamp in milliseconds: a finite number as is, an RFC 3339 string parsed.
pub fn timestamp_ms(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.timestamp_millis() as f64),
        _ => None,
    }
}

/// The per-message statistics of `transcript`, one column per statistic.
pub fn message_columns(transcript: &Transcript) -> MessageColumns {
    let n = transcript.len();
    let mut c = MessageColumns {
        role: Vec::with_capacity(n),
        tool_name: Vec::with_capacity(n),
        text_chars: Vec::with_capacity(n),
        thinking_chars: Vec::with_capacity(n),
        estimated_tokens: Vec::with_capacity(n),
        tool_calls: Vec::with_capacity(n),
        has_image: Vec::with_capacity(n),
        is_error: Vec::with_capacity(n),
        timestamp_ms: Vec::with_capacity(n),
        usage_input: Vec::with_capacity(n),
        usage_output: Vec::with_capacity(n),
        usage_cache_read: Vec::with_capacity(n),
        usage_cache_write: Vec::with_capacity(n),
        usage_total: Vec::with_capacity(n),
    };
    for message in transcript.messages() {
        let facts = message.facts();
        let extra = extra_facts(message.text().as_str());
        let is_assistant = facts.is_role("assistant");
        c.role.push(facts.role.clone());
        c.tool_name.push(if is_assistant {
            let names: Vec<&str> = facts
                .tool_calls
                .iter()
                .filter_map(|call| call.name.as_deref())
                .collect();
            (!names.is_empty()).then(|| names.join(","))
        } else if facts.is_role("toolResult") {
            facts.tool_name.clone()
        } else {
            None
        });
        c.text_chars.push(facts.text_chars);
        c.thinking_chars.push(facts.thinking_chars);
        c.estimated_tokens.push(facts.pi_tokens());
        c.tool_calls.push(facts.tool_calls.len() as u64);
        c.has_image.push(facts.has_image);
        c.is_error.push(
            extra.is_error || (is_assistant && facts.stop_reason.as_deref() == Some("error")),
        );
        c.timestamp_ms.push(
            extra
                .timestamp
                .as_ref()
                .and_then(timestamp_ms)
                .unwrap_or(f64::NAN),
        );
        let usage = extra
            .usage
            .as_ref()
            .filter(|u| is_assistant && u.is_object());
        let field = |key: &str| {
            usage
                .and_then(|u| u.get(key))
                .and_then(Value::as_f64)
                .filter(|f| f.is_finite())
                .unwrap_or(f64::NAN)
        };
        c.usage_input.push(field("input"));
        c.usage_output.push(field("output"));
        c.usage_cache_read.push(field("cacheRead"));
        c.usage_cache_write.push(field("cacheWrite"));
        c.usage_total.push(field("totalTokens"));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a == b
    }

    #[test]
    fn columns_of_a_small_transcript() {
        let t = Transcript::from_values(&[
            json!({"role":"user","content":"héllo","timestamp":1000}),
            json!({"role":"assistant","content":[
                {"type":"thinking","thinking":"hmm"},
                {"type":"text","text":"ok"},
                {"type":"toolCall","id":"c1","name":"read","arguments":{}},
                {"type":"toolCall","id":"c2","name":"bash","arguments":{"c":"ls"}}],
              "stopReason":"toolUse","timestamp":"2026-01-01T00:00:00.000Z",
              "usage":{"input":10,"output":5,"cacheRead":2,"cacheWrite":0,"totalTokens":17}}),
            json!({"role":"toolResult","toolCallId":"c1","toolName":"read","isError":true,
              "content":[{"type":"text","text":"boom"},{"type":"image","data":"x","mimeType":"image/png"}]}),
            json!({"role":"assistant","content":[],"stopReason":"error","usage":{"input":"x"}}),
            json!({"role":"custom"}),
        ]);
        let c = message_columns(&t);
        assert_eq!(
            c.role,
            ["user", "assistant", "toolResult", "assistant", "custom"].map(|r| Some(r.to_owned()))
        );
        assert_eq!(
            c.tool_name,
            vec![
                None,
                Some("read,bash".to_owned()),
                Some("read".to_owned()),
                None,
                None
            ]
        );
        assert_eq!(c.text_chars, [5, 2, 4, 0, 0]);
        assert_eq!(c.thinking_chars, [0, 3, 0, 0, 0]);
        assert_eq!(c.tool_calls, [0, 2, 0, 0, 0]);
        assert_eq!(c.has_image, [false, false, true, false, false]);
        assert_eq!(c.is_error, [false, false, true, true, false]);
        let expected_tokens: Vec<u64> =
            t.messages().iter().map(|m| m.facts().pi_tokens()).collect();
        assert_eq!(c.estimated_tokens, expected_tokens);
        let ts = [1000.0, 1_767_225_600_000.0, f64::NAN, f64::NAN, f64::NAN];
        assert!(c.timestamp_ms.iter().zip(ts).all(|(a, b)| same(*a, b)));
        assert!(same(c.usage_input[1], 10.0) && same(c.usage_total[1], 17.0));
        assert!(same(c.usage_cache_read[1], 2.0) && same(c.usage_cache_write[1], 0.0));
        assert!(c.usage_input[0].is_nan() && c.usage_input[3].is_nan());
        assert!(c.usage_output[3].is_nan());
    }

    #[test]
    fn duplicate_keys_fall_back_to_the_last_value() {
        let t = Transcript::new(vec![crate::base::JsonText::owned(
            r#"{"role":"toolResult","isError":false,"isError":true,"timestamp":5,"content":"x"}"#
                .to_owned(),
        )]);
        let c = message_columns(&t);
        assert_eq!((c.is_error[0], c.timestamp_ms[0]), (true, 5.0));
        assert!(message_columns(&Transcript::default()).role.is_empty());
    }
}
