//! JSON helpers shared by every stage: shared text slices, JavaScript-compatible serialization,
//! lenient parsing and JavaScript string semantics.
//!
//! Session lines are written by JavaScript (`JSON.stringify`) and read by `JSON.parse`, so the
//! places where serde_json and JavaScript disagree are handled here and nowhere else:
//! numbers are written the way `Number.prototype.toString` writes them, lone UTF-16 surrogate
//! escapes (accepted by `JSON.parse`, rejected by serde_json) are read as U+FFFD, and "blank"
//! means blank after `String.prototype.trim`.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::ops::Range;
use std::sync::Arc;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// An immutable JSON text: either a slice of a loaded file buffer or an owned string.
///
/// Cloning is cheap (reference count). Unmodified messages and entries are kept this way so
/// that writing them back yields their original bytes.
#[derive(Clone)]
pub struct JsonText {
    buf: Arc<str>,
    range: Range<usize>,
}

impl JsonText {
    /// Wraps an owned JSON text.
    pub fn owned(text: String) -> Self {
        let len = text.len();
        JsonText {
            buf: Arc::from(text),
            range: 0..len,
        }
    }

    /// A slice `range` of a shared buffer. `range` must lie on char boundaries.
    pub fn slice(buf: &Arc<str>, range: Range<usize>) -> Self {
        debug_assert!(buf.is_char_boundary(range.start) && buf.is_char_boundary(range.end));
        JsonText {
            buf: Arc::clone(buf),
            range,
        }
    }

    /// A sub-slice of this text, given as a `&str` that points into it (for example a
    /// `RawValue` parsed from it). Falls back to an owned copy if `part` does not point inside.
    pub fn sub(&self, part: &str) -> JsonText {
        let base = self.as_str().as_ptr() as usize;
        let start = part.as_ptr() as usize;
        if start >= base && start + part.len() <= base + self.len() {
            let offset = self.range.start + (start - base);
            JsonText {
                buf: Arc::clone(&self.buf),
                range: offset..offset + part.len(),
            }
        } else {
            JsonText::owned(part.to_owned())
        }
    }

    pub fn as_str(&self) -> &str {
        &self.buf[self.range.clone()]
    }

    /// The text of the same buffer from this text's start to the end of `later`, when both
    /// are slices of one buffer and `later` does not start before this text ends.
    pub fn through(&self, later: &JsonText) -> Option<JsonText> {
        (Arc::ptr_eq(&self.buf, &later.buf) && self.range.end <= later.range.start).then(|| {
            JsonText {
                buf: Arc::clone(&self.buf),
                range: self.range.start..later.range.end,
            }
        })
    }

    pub fn len(&self) -> usize {
        self.range.len()
    }

    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// Parses the whole text into a `Value` (lenient: lone surrogate escapes become U+FFFD).
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        parse_value(self.as_str())
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonText({})", self.as_str())
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        // Same buffer and range: equal without comparing bytes (the common case when an
        // operation hands its input back).
        (Arc::ptr_eq(&self.buf, &other.buf) && self.range == other.range)
            || self.as_str() == other.as_str()
    }
}

impl Eq for JsonText {}

/// The top-level fields of a JSON object, each as its raw JSON text, in document order.
/// Duplicate keys are all kept; [`RawObject::get`] returns the last one, as `JSON.parse` does.
pub struct RawObject<'a> {
    pub fields: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> RawObject<'a> {
    /// Parses `text` as a JSON object without parsing the field values beyond validating them.
    pub fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let fields = de.deserialize_map(RawFieldsVisitor)?;
        de.end()?;
        Ok(RawObject { fields })
    }

    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.fields
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
    }

    /// The field as a string, if it is one.
    pub fn get_str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.get(key).and_then(raw_as_str)
    }
}

/// Reads a raw JSON value as a string, borrowing when it has no escapes.
pub fn raw_as_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    let inner = &text[1..text.len() - 1];
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    match parse_value(text) {
        Ok(Value::String(s)) => Some(Cow::Owned(s)),
        _ => None,
    }
}

struct RawFieldsVisitor;

impl<'de> Visitor<'de> for RawFieldsVisitor {
    type Value = Vec<(Cow<'de, str>, &'de RawValue)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(8));
        while let Some(key) = map.next_key::<KeyStr<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            fields.push((key.0, value));
        }
        Ok(fields)
    }
}

struct KeyStr<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for KeyStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = KeyStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(KeyStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(KeyStr(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(KeyStr(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Parses JSON text into a `Value` the way `JSON.parse` accepts it: lone UTF-16 surrogate
/// escapes (`"\ud800"`), which serde_json rejects, are read as U+FFFD, and numbers beyond the
/// range of a double (`1e400`), which serde_json rejects and `JSON.parse` reads as `±Infinity`,
/// are read as `null`, the value `JSON.stringify` writes for them (so what pi sends for such a
/// number is what clawctx holds).
pub fn parse_value(text: &str) -> Result<Value, serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(err) => {
            let surrogates = replace_lone_surrogate_escapes(text);
            let numbers = replace_infinite_numbers(surrogates.as_deref().unwrap_or(text));
            match numbers.or(surrogates) {
                Some(fixed) => serde_json::from_str(&fixed),
                None => Err(err),
            }
        }
    }
}

/// If `text` contains numbers that overflow a double (`1e400`, `-1e400`, an integer of 400
/// digits: `Infinity` for `JSON.parse`), returns the text with each of them replaced by `null`;
/// otherwise `None`. Works on the raw JSON text outside string literals.
pub fn replace_infinite_numbers(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string literal (escapes included).
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len()
                    && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let token = &text[start..i];
                if token.parse::<f64>().is_ok_and(f64::is_infinite) {
                    let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    buf.push_str(&text[copied..start]);
                    buf.push_str("null");
                    copied = i;
                }
            }
            _ => i += 1,
        }
    }
    out.map(|mut buf| {
        buf.push_str(&text[copied..]);
        buf
    })
}

/// If `text` contains `\uXXXX` escapes of unpaired UTF-16 surrogates, returns the text with each
/// of them replaced by `\ufffd`; otherwise `None`. Works on the raw JSON text, so it only
/// touches escapes (a literal backslash is itself escaped as `\\` and skipped correctly).
pub fn replace_lone_surrogate_escapes(text: &str) -> Option<String> {
    rewrite_lone_surrogate_escapes(text, "\\ufffd")
}

/// If `text` contains `\uXXXX` escapes of unpaired UTF-16 surrogates, returns the text with each
/// of them replaced by `replacement` (JSON text, e.g. `\\ufffd`, or `""` to remove them);
/// otherwise `None`.
pub fn rewrite_lone_surrogate_escapes(text: &str, replacement: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(pos) = memchr::memchr(b'\\', &bytes[i..]) {
        let at = i + pos;
        let Some(&next) = bytes.get(at + 1) else {
            break;
        };
        if next != b'u' {
            i = at + 2;
            continue;
        }
        let Some(unit) = hex_unit(bytes, at + 2) else {
            i = at + 2;
            continue;
        };
        if (0xD800..0xDC00).contains(&unit) {
            // A high surrogate is fine when a low surrogate escape follows.
            let paired = bytes.get(at + 6) == Some(&b'\\')
                && bytes.get(at + 7) == Some(&b'u')
                && hex_unit(bytes, at + 8).is_some_and(|u| (0xDC00..0xE000).contains(&u));
            if paired {
                i = at + 12;
                continue;
            }
        } else if !(0xDC00..0xE000).contains(&unit) {
            i = at + 6;
            continue;
        }
        let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
        buf.push_str(&text[copied..at]);
        buf.push_str(replacement);
        copied = at + 6;
        i = at + 6;
    }
    out.map(|mut buf| {
        buf.push_str(&text[copied..]);
        buf
    })
}

fn hex_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    let s = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// Serializes like JavaScript's `JSON.stringify`: compact, object keys in insertion order,
/// non-ASCII written raw, and floats formatted as `Number.prototype.toString` formats them
/// (`1.0` → `1`, `1e21` → `1e+21`). Integers parsed from the input keep their exact value
/// (JavaScript would round integers beyond 2^53; keeping them loses no data).
pub fn to_js_string(value: &Value) -> String {
    let mut out = Vec::with_capacity(128);
    write_js(&mut out, value).expect("writing JSON to a Vec cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// JavaScript's `String(x)` of a JSON value, as `+=` and template literals apply it: a string
/// as is, an array as its items' strings joined by commas (`null` items empty), an object as
/// `[object Object]`, anything else as [`to_js_string`] writes it.
pub fn js_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
        other => to_js_string(other),
    }
}

/// Writes `value` as [`to_js_string`] does.
pub fn write_js<W: io::Write>(writer: W, value: &Value) -> io::Result<()> {
    use serde::Serialize;
    let mut ser = serde_json::Serializer::with_formatter(writer, JsFormatter);
    value.serialize(&mut ser).map_err(io::Error::other)
}

struct JsFormatter;

impl serde_json::ser::Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        if value.is_finite() {
            let mut buf = ryu_js::Buffer::new();
            writer.write_all(buf.format_finite(value).as_bytes())
        } else {
            // JSON.stringify writes NaN and ±Infinity as null.
            writer.write_all(b"null")
        }
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }
}

/// Builds a JSON object from `(key, value)` pairs in order, skipping `None` values the way
/// `JSON.stringify` skips `undefined` properties.
pub fn object<'a>(fields: impl IntoIterator<Item = (&'a str, Option<Value>)>) -> Value {
    let mut map = Map::new();
    for (key, value) in fields {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

/// JavaScript truthiness of a JSON value.
pub fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `String.prototype.trim` whitespace: WhiteSpace and LineTerminator of ECMAScript, which
/// differs from Rust's `char::is_whitespace` (JS trims U+FEFF, Rust trims U+0085).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// `String.prototype.trim`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// `Date.parse` for the ISO-8601 forms session files use (`2026-01-02T03:04:05.678Z`, with an
/// offset, or a bare date, which JavaScript reads as UTC). `None` where JavaScript gives NaN
/// (other formats are not accepted; see the README's compatibility notes).
pub fn iso_to_ms(s: &str) -> Option<i64> {
    use chrono::{DateTime, NaiveDate};
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        return Some(dt.timestamp_millis());
    }
    if let Ok(dt) = DateTime::parse_from_str(s, "%Y-%m-%dT%H:%M%:z") {
        return Some(dt.timestamp_millis());
    }
    if s.len() == 10 {
        if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            return d
                .and_hms_opt(0, 0, 0)
                .map(|dt| dt.and_utc().timestamp_millis());
        }
    }
    None
}

/// `new Date(ms).toISOString()`: always UTC with milliseconds.
pub fn ms_to_iso(ms: i64) -> String {
    use chrono::{DateTime, SecondsFormat};
    match DateTime::from_timestamp_millis(ms) {
        Some(dt) => dt.to_rfc3339_opts(SecondsFormat::Millis, true),
        None => DateTime::from_timestamp_millis(0)
            .expect("epoch is representable")
            .to_rfc3339_opts(SecondsFormat::Millis, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn js_number_formatting() {
        assert_eq!(
            to_js_string(&json!({"a": 1.0, "b": 0.5, "c": 1e21, "d": 12})),
            r#"{"a":1,"b":0.5,"c":1e+21,"d":12}"#
        );
        assert_eq!(
            to_js_string(&json!([1e-7, 123456789012345680000.0])),
            "[1e-7,123456789012345680000]"
        );
    }

    #[test]
    fn js_string_escaping_matches_json_stringify() {
        let v = json!("a\"b\\c\n\u{1}\u{1f}é😀\u{2028}/");
        assert_eq!(
            to_js_string(&v),
            "\"a\\\"b\\\\c\\n\\u0001\\u001fé😀\u{2028}/\""
        );
    }

    #[test]
    fn key_order_is_preserved() {
        let v: Value = serde_json::from_str(r#"{"z":1,"a":2,"m":3}"#).unwrap();
        assert_eq!(to_js_string(&v), r#"{"z":1,"a":2,"m":3}"#);
    }

    #[test]
    fn lone_surrogates_become_replacement_chars() {
        let v = parse_value(r#"{"t":"a\ud800b","u":"\udc00","ok":"\ud83d\ude00","bs":"\\ud800"}"#)
            .unwrap();
        assert_eq!(v["t"], "a\u{FFFD}b");
        assert_eq!(v["u"], "\u{FFFD}");
        assert_eq!(v["ok"], "😀");
        assert_eq!(v["bs"], "\\ud800");
        assert!(replace_lone_surrogate_escapes(r#""\ud83d\ude00""#).is_none());
    }

    #[test]
    fn numbers_beyond_a_double_read_as_null() {
        let big = format!("1{}", "0".repeat(400));
        let text = format!(
            r#"{{"a":1e400,"b":[-1E+400,{big}],"s":"1e400 \" 2e999 \\","c":1e308,"d":1e-400}}"#
        );
        let v = parse_value(&text).unwrap();
        assert_eq!(v["a"], Value::Null);
        assert_eq!(v["b"], json!([null, null]));
        assert_eq!(v["s"], "1e400 \" 2e999 \\");
        assert_eq!(v["c"], json!(1e308));
        assert_eq!(v["d"], json!(0.0));
        assert_eq!(to_js_string(&v["b"]), "[null,null]");
        // Together with a lone surrogate escape.
        let v = parse_value(r#"{"t":"\ud800","n":1e999}"#).unwrap();
        assert_eq!(v, json!({"t": "\u{FFFD}", "n": null}));
        assert!(replace_infinite_numbers(r#"{"n":1.5e300,"s":"9e999"}"#).is_none());
        assert!(parse_value("[1e400,]").is_err());
    }

    #[test]
    fn raw_object_keeps_last_duplicate_and_raw_text() {
        let obj =
            RawObject::parse(r#" {"type":"a","n": 1.50 ,"type":"b","k\u0065y":"x"} "#).unwrap();
        assert_eq!(obj.get_str("type").as_deref(), Some("b"));
        assert_eq!(obj.get("n").unwrap().get(), "1.50");
        assert_eq!(obj.get_str("key").as_deref(), Some("x"));
        assert!(RawObject::parse("[1]").is_err());
        assert!(RawObject::parse(r#"{"a":1} x"#).is_err());
    }

    #[test]
    fn js_trim_semantics() {
        assert_eq!(js_trim("\u{FEFF} x \u{3000}"), "x");
        assert_eq!(js_trim("\u{85}x"), "\u{85}x");
    }

    #[test]
    fn truthiness() {
        assert!(!is_truthy(&json!("")));
        assert!(!is_truthy(&json!(0)));
        assert!(is_truthy(&json!([])));
        assert!(is_truthy(&json!("s")));
    }

    #[test]
    fn iso_round_trip() {
        let ms = iso_to_ms("2025-12-08T22:41:05.306Z").unwrap();
        assert_eq!(ms, 1765233665306);
        assert_eq!(ms_to_iso(ms), "2025-12-08T22:41:05.306Z");
        assert_eq!(iso_to_ms("2025-12-08"), Some(1765152000000));
        assert_eq!(iso_to_ms("2025-12-08T23:41:05.306+01:00"), Some(ms));
        assert_eq!(iso_to_ms("not a date"), None);
    }
}
