//! What both importers share: splitting the bytes into JSON-object records (counting the
//! damaged lines), and building pi message values.

use serde_json::{json, Map, Value};

use crate::base::{iso_to_ms, parse_value, to_js_string, JsonText};
use crate::transcript::Transcript;

/// The records of a JSONL text, in file order, and the line counts.
pub(super) struct Records {
    pub objects: Vec<Map<String, Value>>,
    pub lines: usize,
    pub damaged: usize,
    pub torn_last_line: bool,
}

/// Splits `bytes` into lines and parses each non-blank one. A line that is not valid UTF-8
/// JSON of an object is counted as damaged and skipped; when it is the last line and has no
/// newline it is a torn write.
pub(super) fn split_records(bytes: &[u8]) -> Records {
    let mut out = Records {
        objects: Vec::new(),
        lines: 0,
        damaged: 0,
        torn_last_line: false,
    };
    let mut rest = bytes;
    while !rest.is_empty() {
        let (line, ended) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], {
                rest = &rest[i + 1..];
                true
            }),
            None => (std::mem::take(&mut rest), false),
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.lines += 1;
        match parse_object(line) {
            Some(object) => out.objects.push(object),
            None => {
                out.damaged += 1;
                out.torn_last_line = !ended;
            }
        }
    }
    out
}

pub(super) fn parse_object(line: &[u8]) -> Option<Map<String, Value>> {
    let text = simdutf8::basic::from_utf8(line).ok()?;
    match parse_value(text.trim_end_matches('\r')) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

pub(super) fn str_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

/// Keeps the earliest and latest timestamps seen (ISO-8601 texts compare by their instant).
#[derive(Default)]
pub(super) struct TimeSpan {
    pub first: Option<(i64, String)>,
    pub last: Option<(i64, String)>,
}

impl TimeSpan {
    pub fn see(&mut self, iso: Option<&str>) {
        let Some(iso) = iso else { return };
        let Some(ms) = iso_to_ms(iso) else { return };
        if self.first.as_ref().is_none_or(|(t, _)| ms < *t) {
            self.first = Some((ms, iso.to_owned()));
        }
        if self.last.as_ref().is_none_or(|(t, _)| ms >= *t) {
            self.last = Some((ms, iso.to_owned()));
        }
    }

    pub fn into_pair(self) -> (Option<String>, Option<String>) {
        (self.first.map(|p| p.1), self.last.map(|p| p.1))
    }
}

/// A pi `text` block.
pub(super) fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A pi `image` block from base64 data and its media type.
pub(super) fn image_block(data: &str, mime_type: &str) -> Value {
    json!({"type": "image", "data": data, "mimeType": mime_type})
}

/// A pi `image` block from a `data:<type>;base64,<data>` URL; another URL (a link the model
/// fetched itself) becomes a text block naming it, so it is not lost.
pub(super) fn image_from_url(url: &str) -> Value {
    if let Some(rest) = url.strip_prefix("data:") {
        if let Some((mime, data)) = rest.split_once(";base64,") {
            return image_block(data, mime);
        }
    }
    text_block(&format!("[image: {url}]"))
}

/// The message's `timestamp` field (milliseconds, as pi writes it) when `iso` parses.
pub(super) fn set_timestamp(message: &mut Map<String, Value>, iso: Option<&str>) {
    if let Some(ms) = iso.and_then(iso_to_ms) {
        message.insert("timestamp".into(), Value::from(ms));
    }
}

/// A pi `user` message: a lone text block is written as a string, as pi writes typed prompts.
pub(super) fn user_message(mut blocks: Vec<Value>, iso: Option<&str>) -> Value {
    let content = if blocks.len() == 1 && blocks[0]["type"] == "text" {
        blocks.swap_remove(0)["text"].take()
    } else {
        Value::Array(blocks)
    };
    let mut m = Map::new();
    m.insert("role".into(), "user".into());
    m.insert("content".into(), content);
    set_timestamp(&mut m, iso);
    Value::Object(m)
}

/// A pi `toolResult` message.
pub(super) fn tool_result_message(
    call_id: &str,
    tool_name: &str,
    content: Vec<Value>,
    is_error: bool,
    iso: Option<&str>,
) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), "toolResult".into());
    m.insert("toolCallId".into(), call_id.into());
    m.insert("toolName".into(), tool_name.into());
    m.insert("content".into(), Value::Array(content));
    m.insert("isError".into(), is_error.into());
    set_timestamp(&mut m, iso);
    Value::Object(m)
}

/// A pi `toolCall` block. Arguments that are not a JSON object (Codex keeps the model's text
/// even when it does not parse) are kept whole as `{"raw": text}`.
pub(super) fn tool_call_block(id: &str, name: &str, arguments: Value) -> Value {
    let arguments = match arguments {
        Value::Object(_) => arguments,
        Value::String(text) => match parse_value(&text) {
            Ok(parsed @ Value::Object(_)) => parsed,
            _ => json!({ "raw": text }),
        },
        Value::Null => json!({}),
        other => json!({ "raw": other }),
    };
    json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments})
}

/// pi's `stopReason` for an assistant message with these blocks, when the source gives none
/// that maps: `toolUse` when it calls a tool, else `stop`.
pub(super) fn default_stop_reason(blocks: &[Value]) -> &'static str {
    if blocks.iter().any(|b| b["type"] == "toolCall") {
        "toolUse"
    } else {
        "stop"
    }
}

/// pi's `usage` object (pi-mono 0.58.3 `packages/ai/src/types.ts` `Usage`), cost unknown (0).
pub(super) fn usage(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Value {
    json!({
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input + output + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    })
}

pub(super) fn u64_field(object: &Value, key: &str) -> u64 {
    object.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The transcript of built message values (serialized like `JSON.stringify`).
pub(super) fn transcript(messages: &[Value]) -> Transcript {
    Transcript::new(
        messages
            .iter()
            .map(|m| JsonText::owned(to_js_string(m)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_last_line_and_middle_damage_are_counted_apart() {
        let r = split_records(b"{\"a\":1}\nnot json\n\n[1]\n{\"b\":2}\n{\"c\":");
        assert_eq!(r.lines, 5);
        assert_eq!(r.objects.len(), 2);
        assert_eq!(r.damaged, 3);
        assert!(r.torn_last_line);
        let r = split_records(b"{\"a\":1}\nbroken\n");
        assert!(!r.torn_last_line);
        assert_eq!(r.damaged, 1);
        let r = split_records(b"\xff\xfe\n{\"a\":1}\r\n");
        assert_eq!((r.damaged, r.objects.len()), (1, 1));
    }

    #[test]
    fn unparsable_arguments_are_kept_as_raw_text() {
        let b = tool_call_block("c", "f", Value::String("{oops".into()));
        assert_eq!(b["arguments"], json!({"raw": "{oops"}));
        let b = tool_call_block("c", "f", Value::String("{\"x\":1}".into()));
        assert_eq!(b["arguments"], json!({"x": 1}));
        let b = tool_call_block("c", "f", Value::String("[1]".into()));
        assert_eq!(b["arguments"], json!({"raw": "[1]"}));
    }

    #[test]
    fn data_urls_become_images_and_links_stay_text() {
        assert_eq!(
            image_from_url("data:image/png;base64,AAAA"),
            image_block("AAAA", "image/png")
        );
        assert_eq!(
            image_from_url("https://x/y.png"),
            text_block("[image: https://x/y.png]")
        );
    }

    #[test]
    fn time_span_orders_by_instant() {
        let mut span = TimeSpan::default();
        span.see(Some("2026-01-02T00:00:00.000Z"));
        span.see(Some("2026-01-01T00:00:00.000Z"));
        span.see(Some("garbage"));
        span.see(Some("2026-01-03T00:00:00+01:00"));
        let (first, last) = span.into_pair();
        assert_eq!(first.as_deref(), Some("2026-01-01T00:00:00.000Z"));
        assert_eq!(last.as_deref(), Some("2026-01-03T00:00:00+01:00"));
    }
}
