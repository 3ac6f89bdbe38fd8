//! Writing a body straight from the stored message bytes: a JSON byte writer, the test of
//! whether a stored JSON text is already written as `JSON.stringify` writes it (so it can be
//! copied as it is), and the replay layer of `transform.rs` over borrowed views of the stored
//! messages instead of parsed value trees.
//!
//! Every reader here answers `None` for a shape it does not handle (a block that is not an
//! object, an id that is not a string, ...): the builder then falls back to the value-tree
//! path, which handles everything, so both paths always give the same bytes.

use std::borrow::Cow;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::value::RawValue;
use serde_json::Value;

use super::model::Model;
use crate::base::{is_js_whitespace, parse_value, write_js, RawObject};
use crate::transcript::Transcript;

/// The output buffer of a body.
#[derive(Default)]
pub struct Out {
    pub buf: Vec<u8>,
}

impl Out {
    pub fn with_capacity(n: usize) -> Out {
        Out {
            buf: Vec::with_capacity(n),
        }
    }

    /// Bytes written as they are (JSON punctuation and keys known to need no escaping).
    pub fn raw(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// A value as `JSON.stringify` writes it.
    pub fn value(&mut self, v: &Value) {
        // Writing to a Vec cannot fail.
        let _ = write_js(&mut self.buf, v);
    }

    /// A string literal, escaped as `JSON.stringify` escapes it.
    pub fn str(&mut self, s: &str) {
        let _ = serde_json::to_writer(&mut self.buf, s);
    }

    /// A stored JSON value: copied when it is already in `JSON.stringify`'s form, else read
    /// and written again (as the value-tree path writes it).
    pub fn copy(&mut self, raw: &RawValue) {
        let text = raw.get();
        if is_canonical(text) {
            self.raw(text);
        } else {
            let v = parse_value(text).unwrap_or(Value::Null);
            self.value(&v);
        }
    }

    /// A stored JSON string value as a string literal: [`RawStr`].
    pub fn copy_str(&mut self, s: &RawStr<'_>) {
        match s {
            RawStr::Canonical(inner) => {
                self.buf.push(b'"');
                self.raw(inner);
                self.buf.push(b'"');
            }
            RawStr::Parsed(owned) => self.str(owned),
        }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }
}

/// A stored string: its inner text when that is already escaped as `JSON.stringify` escapes
/// (copied as it is), else the string read (lone surrogates as U+FFFD, as `parse_value`).
pub enum RawStr<'a> {
    Canonical(&'a str),
    Parsed(String),
}

impl<'a> RawStr<'a> {
    /// `None` when `raw` is not a string.
    pub fn of(raw: &'a RawValue) -> Option<RawStr<'a>> {
        let text = raw.get();
        if !text.starts_with('"') {
            return None;
        }
        let inner = &text[1..text.len() - 1];
        if canonical_escapes(inner.as_bytes()) {
            return Some(RawStr::Canonical(inner));
        }
        match parse_value(text) {
            Ok(Value::String(s)) => Some(RawStr::Parsed(s)),
            _ => None,
        }
    }

    /// `js_trim(s).is_empty()` of the string it holds.
    pub fn is_blank(&self) -> bool {
        match self {
            RawStr::Parsed(s) => s.chars().all(is_js_whitespace),
            RawStr::Canonical(inner) => canonical_is_blank(inner),
        }
    }

    /// The string itself.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            RawStr::Parsed(s) => Cow::Borrowed(s),
            RawStr::Canonical(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
            RawStr::Canonical(inner) => match parse_value(&format!("\"{inner}\"")) {
                Ok(Value::String(s)) => Cow::Owned(s),
                _ => Cow::Borrowed(""),
            },
        }
    }

    /// The inner text as written in the output (escaped, without quotes).
    pub fn write_inner(&self, out: &mut Out) {
        match self {
            RawStr::Canonical(inner) => out.raw(inner),
            RawStr::Parsed(s) => {
                let start = out.buf.len();
                out.str(s);
                // Drop the quotes the literal writer added.
                out.buf.remove(start);
                out.buf.pop();
            }
        }
    }
}

/// Whether a canonical string's inner text is all JavaScript whitespace. Its escapes are only
/// the short ones and `\u00XX` control characters.
fn canonical_is_blank(inner: &str) -> bool {
    let bytes = inner.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                match bytes[i + 1] {
                    b'n' | b't' | b'r' | b'f' => i += 2,
                    // \u000b (vertical tab) is whitespace; other control characters are not.
                    b'u' if &bytes[i + 2..i + 6] == b"000b" => i += 6,
                    _ => return false,
                }
            }
            b' ' => i += 1,
            b if b < 0x80 => return false,
            _ => {
                let c = inner[i..].chars().next().unwrap_or('x');
                if !is_js_whitespace(c) {
                    return false;
                }
                i += c.len_utf8();
            }
        }
    }
    true
}

/// Whether the escapes of a string's inner bytes are those `JSON.stringify` writes: `\"`,
/// `\\`, `\b`, `\f`, `\n`, `\r`, `\t` and `\u00xx` (lower-case hex) for the other control
/// characters. Any other escape (`\/`, `\u00e9`, a surrogate) is written differently.
fn canonical_escapes(inner: &[u8]) -> bool {
    let mut i = 0;
    while let Some(pos) = memchr::memchr(b'\\', &inner[i..]) {
        let at = i + pos;
        match inner.get(at + 1) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i = at + 2,
            Some(b'u') => {
                let Some(hex) = inner.get(at + 2..at + 6) else {
                    return false;
                };
                let ok = hex[0] == b'0'
                    && hex[1] == b'0'
                    && matches!(hex[2], b'0' | b'1')
                    && matches!(hex[3], b'0'..=b'9' | b'a'..=b'f')
                    // These five have short forms.
                    && !(hex[2] == b'0' && matches!(hex[3], b'8' | b'9' | b'a' | b'c' | b'd'));
                if !ok {
                    return false;
                }
                i = at + 6;
            }
            _ => return false,
        }
    }
    true
}

/// Whether a (valid) JSON text is exactly what `JSON.stringify` of its value writes: no
/// whitespace, strings escaped as [`canonical_escapes`], integers of at most 15 digits
/// without a leading zero (any other number is read and written again), no duplicate key.
pub fn is_canonical(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    let ok = canonical_value(bytes, &mut i, 0);
    ok && i == bytes.len()
}

fn canonical_string(b: &[u8], i: &mut usize) -> Option<(usize, usize)> {
    // b[*i] == '"'
    let start = *i + 1;
    let mut j = start;
    loop {
        let pos = memchr::memchr2(b'"', b'\\', &b[j..])?;
        j += pos;
        if b[j] == b'"' {
            break;
        }
        j += 2;
    }
    if !canonical_escapes(&b[start..j]) {
        return None;
    }
    *i = j + 1;
    Some((start, j))
}

fn canonical_value(b: &[u8], i: &mut usize, depth: usize) -> bool {
    if depth > 128 {
        return false;
    }
    match b.get(*i) {
        Some(b'"') => canonical_string(b, i).is_some(),
        Some(b'{') => {
            *i += 1;
            if b.get(*i) == Some(&b'}') {
                *i += 1;
                return true;
            }
            let mut keys: Vec<&[u8]> = Vec::new();
            loop {
                if b.get(*i) != Some(&b'"') {
                    return false;
                }
                let Some((s, e)) = canonical_string(b, i) else {
                    return false;
                };
                let key = &b[s..e];
                if keys.contains(&key) {
                    return false;
                }
                keys.push(key);
                if b.get(*i) != Some(&b':') {
                    return false;
                }
                *i += 1;
                if !canonical_value(b, i, depth + 1) {
                    return false;
                }
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b'}') => {
                        *i += 1;
                        return true;
                    }
                    _ => return false,
                }
            }
        }
        Some(b'[') => {
            *i += 1;
            if b.get(*i) == Some(&b']') {
                *i += 1;
                return true;
            }
            loop {
                if !canonical_value(b, i, depth + 1) {
                    return false;
                }
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b']') => {
                        *i += 1;
                        return true;
                    }
                    _ => return false,
                }
            }
        }
        Some(b't') => literal(b, i, b"true"),
        Some(b'f') => literal(b, i, b"false"),
        Some(b'n') => literal(b, i, b"null"),
        Some(b'-' | b'0'..=b'9') => {
            let start = *i;
            if b[*i] == b'-' {
                *i += 1;
            }
            let digits = *i;
            while matches!(b.get(*i), Some(b'0'..=b'9')) {
                *i += 1;
            }
            let n = *i - digits;
            if matches!(b.get(*i), Some(b'.' | b'e' | b'E')) {
                return false;
            }
            // "-0" is read as a float; a leading zero is not JSON.
            let leading_zero = b[digits] == b'0' && (n > 1 || digits > start);
            (1..=15).contains(&n) && !leading_zero
        }
        _ => false,
    }
}

fn literal(b: &[u8], i: &mut usize, lit: &[u8]) -> bool {
    if b.get(*i..*i + lit.len()) == Some(lit) {
        *i += lit.len();
        true
    } else {
        false
    }
}

/// JavaScript truthiness of a stored value, as [`crate::base::is_truthy`] of its parsed value.
pub fn raw_truthy(raw: &RawValue) -> bool {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'n' | b'f') => false,
        Some(b't' | b'[' | b'{') => true,
        Some(b'"') => text.len() > 2,
        _ => parse_value(text).is_ok_and(|v| crate::base::is_truthy(&v)),
    }
}

/// A stored field that must be a string when present: `Some(None)` when absent, `None` (not
/// handled here) when it is something else.
fn opt_str<'a>(obj: &RawObject<'a>, key: &str) -> Option<Option<Cow<'a, str>>> {
    match obj.get(key) {
        None => Some(None),
        Some(raw) => obj.get_str(key).map(Some).or_else(|| {
            // A non-string: handled only when the caller reads it as absent-like (null).
            (raw.get() == "null").then_some(None)
        }),
    }
}

/// The elements of a stored array (`None` when it is not an array).
pub fn array_items(raw: &RawValue) -> Option<Vec<&RawValue>> {
    if !raw.get().starts_with('[') {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// One content block of a replayed assistant turn.
pub enum Block<'a> {
    /// The block as stored (a turn of the same model, or a type the replay keeps).
    Kept { obj: RawObject<'a>, kind: Cow<'a, str> },
    /// Thinking or text of another model, as `{"type": "text", "text": ...}` (`text` absent
    /// when the source block had none).
    Text(Option<&'a RawValue>),
    /// A tool call of another model: its id normalised (`new_id`) and its thought signature
    /// dropped.
    Call {
        obj: RawObject<'a>,
        new_id: Option<String>,
    },
}

impl<'a> Block<'a> {
    /// The `type` as the builders see it.
    pub fn kind(&self) -> &str {
        match self {
            Block::Kept { kind, .. } => kind,
            Block::Text(_) => "text",
            Block::Call { .. } => "toolCall",
        }
    }

    /// The block's object (none for a converted text block).
    pub fn obj(&self) -> Option<&RawObject<'a>> {
        match self {
            Block::Kept { obj, .. } | Block::Call { obj, .. } => Some(obj),
            Block::Text(_) => None,
        }
    }

    /// `block.get(key)`.
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        match self {
            Block::Text(text) => (key == "text").then_some(*text).flatten(),
            Block::Kept { obj, .. } | Block::Call { obj, .. } => obj.get(key),
        }
    }
}

/// One message after the replay layer.
pub enum Replayed<'a> {
    User {
        obj: RawObject<'a>,
    },
    Assistant {
        obj: RawObject<'a>,
        blocks: Vec<Block<'a>>,
    },
    ToolResult {
        obj: RawObject<'a>,
        /// The id after normalisation, when it was remapped.
        new_id: Option<String>,
    },
    /// The synthetic error result of a call left unanswered (transform-messages.ts).
    Synthetic { id: String },
}

/// `transformMessages` (see `transform.rs`) over the stored messages; `normalize` maps a
/// tool-call id of another model. `None` when a message has a shape handled only by the
/// value-tree path.
pub fn replay<'a>(
    messages: &'a Transcript,
    model: &Model,
    normalize: &dyn Fn(&str) -> String,
) -> Option<Vec<Replayed<'a>>> {
    let mut id_map: FxHashMap<String, String> = FxHashMap::default();
    let mut transformed: Vec<Replayed<'a>> = Vec::with_capacity(messages.len());
    for message in messages.messages() {
        let obj = RawObject::parse(message.as_str()).ok()?;
        let role = opt_str(&obj, "role")?;
        let replayed = match role.as_deref() {
            Some("user") => Replayed::User { obj },
            Some("assistant") => {
                let blocks = replay_assistant(&obj, model, normalize, &mut id_map)?;
                Replayed::Assistant { obj, blocks }
            }
            Some("toolResult") => {
                let id = opt_str(&obj, "toolCallId")?;
                let new_id = id
                    .as_deref()
                    .and_then(|id| id_map.get(id))
                    .filter(|n| !n.is_empty())
                    .cloned();
                Replayed::ToolResult { obj, new_id }
            }
            // Other roles reach no builder's output; keep the pass simple.
            _ => return None,
        };
        transformed.push(replayed);
    }

    let mut result = Vec::with_capacity(transformed.len());
    let mut pending: Vec<String> = Vec::new();
    let mut answered: FxHashSet<String> = FxHashSet::default();
    let flush = |pending: &mut Vec<String>,
                 answered: &mut FxHashSet<String>,
                 result: &mut Vec<Replayed<'a>>| {
        for id in pending.drain(..) {
            if !answered.contains(id.as_str()) {
                result.push(Replayed::Synthetic { id });
            }
        }
        answered.clear();
    };
    for msg in transformed {
        match &msg {
            Replayed::Assistant { obj, blocks } => {
                if !pending.is_empty() {
                    flush(&mut pending, &mut answered, &mut result);
                }
                if matches!(
                    opt_str(obj, "stopReason")?.as_deref(),
                    Some("error" | "aborted")
                ) {
                    continue;
                }
                let mut calls = Vec::new();
                for b in blocks.iter().filter(|b| b.kind() == "toolCall") {
                    let id = match &b {
                        Block::Call {
                            new_id: Some(id), ..
                        } => id.clone(),
                        _ => b
                            .obj()
                            .and_then(|o| o.get_str("id"))
                            .map(Cow::into_owned)
                            .unwrap_or_default(),
                    };
                    calls.push(id);
                }
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
            }
            Replayed::ToolResult { obj, new_id } => {
                let id = match new_id {
                    Some(id) => Some(id.clone()),
                    None => obj.get_str("toolCallId").map(Cow::into_owned),
                };
                if let Some(id) = id {
                    answered.insert(id);
                }
            }
            Replayed::User { .. } => {
                if !pending.is_empty() {
                    flush(&mut pending, &mut answered, &mut result);
                }
            }
            Replayed::Synthetic { .. } => {}
        }
        result.push(msg);
    }
    Some(result)
}

fn replay_assistant<'a>(
    obj: &RawObject<'a>,
    model: &Model,
    normalize: &dyn Fn(&str) -> String,
    id_map: &mut FxHashMap<String, String>,
) -> Option<Vec<Block<'a>>> {
    let same_model = opt_str(obj, "provider")?.as_deref() == Some(model.provider.as_str())
        && opt_str(obj, "api")?.as_deref() == Some(model.api.as_str())
        && opt_str(obj, "model")?.as_deref() == Some(model.id.as_str());
    let items = match obj.get("content") {
        Some(content) => array_items(content)?,
        None => return None,
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let block = RawObject::parse(item.get()).ok()?;
        let kind = opt_str(&block, "type")??;
        match kind.as_ref() {
            "thinking" => {
                if block.get("redacted").is_some_and(raw_truthy) {
                    if same_model {
                        out.push(Block::Kept { obj: block, kind });
                    }
                    continue;
                }
                let signed = opt_str(&block, "thinkingSignature")?.is_some_and(|s| !s.is_empty());
                if same_model && signed {
                    out.push(Block::Kept { obj: block, kind });
                    continue;
                }
                let thinking = match block.get("thinking") {
                    Some(raw) => RawStr::of(raw)?,
                    None => continue,
                };
                if thinking.is_blank() {
                    continue;
                }
                if same_model {
                    out.push(Block::Kept { obj: block, kind });
                } else {
                    out.push(Block::Text(block.get("thinking")));
                }
            }
            "text" => {
                if same_model {
                    out.push(Block::Kept { obj: block, kind });
                } else {
                    out.push(Block::Text(block.get("text")));
                }
            }
            "toolCall" => {
                if same_model {
                    out.push(Block::Kept { obj: block, kind });
                    continue;
                }
                let id = opt_str(&block, "id")?.unwrap_or_default();
                let new_id = normalize(&id);
                let new_id = if new_id == id.as_ref() {
                    None
                } else {
                    id_map.insert(id.into_owned(), new_id.clone());
                    Some(new_id)
                };
                out.push(Block::Call { obj: block, new_id });
            }
            _ => out.push(Block::Kept { obj: block, kind }),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_texts_are_those_json_stringify_writes() {
        for ok in [
            r#"{"a":1,"b":[true,false,null,"x\n\"\\\u0001"],"c":{}}"#,
            r#""é😀\u001f""#,
            "[]",
            "-12",
            "0",
        ] {
            assert!(is_canonical(ok), "{ok}");
        }
        for not in [
            r#"{"a": 1}"#,
            r#"{"a":1,"a":2}"#,
            r#""\u00e9""#,
            r#""\/""#,
            r#""\u000a""#,
            r#""\ud800""#,
            "1.5",
            "1e3",
            "-0",
            "01",
            "1234567890123456",
        ] {
            assert!(!is_canonical(not), "{not}");
        }
    }

    #[test]
    fn blank_strings_follow_js_trim() {
        let blank = |t: &str| {
            let raw: Box<RawValue> = serde_json::from_str(t).unwrap();
            RawStr::of(&raw).unwrap().is_blank()
        };
        assert!(blank(r#"" \n\t\u000b\u3000""#));
        assert!(blank(r#""""#));
        assert!(!blank(r#"" \u0001""#));
        assert!(!blank(r#""\u0085""#));
        assert!(blank(r#""\ufeff""#));
        assert!(!blank(r#"" x ""#));
    }
}
