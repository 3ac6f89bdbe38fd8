//! Session entries (pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`, the
//! `SessionEntry` types): the record's original JSON text plus the few fields the
//! hot path reads. Message bodies are not parsed beyond their role and model, so a 13 MB tool
//! result costs one validation pass, not a tree of allocations.

use std::borrow::Cow;
use std::sync::OnceLock;

use compact_str::CompactString;

use serde_json::{Map, Value};

use crate::base::{parse_value, to_js_string, JsonText, RawObject};
use crate::transcript::Message;

/// The entry `type` strings pi writes (session-manager.ts).
pub mod types {
    pub const SESSION: &str = "session";
    pub const MESSAGE: &str = "message";
    pub const THINKING_LEVEL_CHANGE: &str = "thinking_level_change";
    pub const MODEL_CHANGE: &str = "model_change";
    pub const COMPACTION: &str = "compaction";
    pub const BRANCH_SUMMARY: &str = "branch_summary";
    pub const CUSTOM: &str = "custom";
    pub const CUSTOM_MESSAGE: &str = "custom_message";
    pub const LABEL: &str = "label";
    pub const SESSION_INFO: &str = "session_info";
}

/// A static string for the known entry types (session-manager.ts).
fn intern_type(ty: &str) -> Cow<'static, str> {
    const KNOWN: [&str; 10] = [
        types::SESSION,
        types::MESSAGE,
        types::THINKING_LEVEL_CHANGE,
        types::MODEL_CHANGE,
        types::COMPACTION,
        types::BRANCH_SUMMARY,
        types::CUSTOM,
        types::CUSTOM_MESSAGE,
        types::LABEL,
        types::SESSION_INFO,
    ];
    match KNOWN.iter().find(|k| **k == ty) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(ty.to_owned()),
    }
}

/// The parts of a `message` entry's `message` the hot path needs without a full parse.
#[derive(Debug, Clone)]
pub struct MessageHead {
    /// The message: its exact JSON text (a slice of the entry text) with its cached facts, so
    /// every context built from the session reuses them.
    pub json: Message,
    pub role: Option<CompactString>,
}

impl MessageHead {
    /// `provider` and `model` of the message (an assistant's set the session model in
    /// `buildSessionContext`),
    /// read from the text when asked: only the last assistant on a path needs them.
    pub fn provider_and_model(&self) -> (Option<Value>, Option<Value>) {
        match RawObject::parse(self.json.as_str()) {
            Ok(raw) => (
                raw.get("provider").and_then(|r| parse_value(r.get()).ok()),
                raw.get("model").and_then(|r| parse_value(r.get()).ok()),
            ),
            Err(_) => (None, None),
        }
    }
}

/// What the entry carries beyond the common fields.
#[derive(Debug, Clone)]
pub enum EntryBody {
    /// A `message` entry whose `message` is an object.
    Message(MessageHead),
    /// Any other entry: its fields, parsed from the text the first time one is asked for.
    /// Parsing them all at open cost a map per line (a file of small labels took ten times
    /// its size); only the few entries a context or a caller looks into pay for it.
    Fields(LazyFields),
}

/// The fields of a non-message entry, parsed on first use and kept.
#[derive(Debug, Clone, Default)]
pub struct LazyFields(OnceLock<Box<Map<String, Value>>>);

impl LazyFields {
    fn get_or_parse(&self, text: &str) -> &Map<String, Value> {
        self.0.get_or_init(|| match parse_value(text) {
            Ok(Value::Object(map)) => Box::new(map),
            // `Entry::parse` checked that the text is an object.
            _ => Box::default(),
        })
    }
}

/// One parsed record of a session file (header excluded).
#[derive(Debug, Clone)]
pub struct Entry {
    /// The record's JSON text: original bytes for loaded, unmodified entries.
    pub text: JsonText,
    /// 1-based line of the file the record came from (several records share a line only when
    /// they were salvaged from one damaged line).
    pub line: usize,
    /// Known types are static strings (no allocation per entry); others are owned.
    pub entry_type: Option<Cow<'static, str>>,
    // Compact strings: ids (8 characters) and ISO timestamps (24) are stored inline, without
    // a heap allocation each (three per entry were a tenth of an open session's memory).
    pub id: Option<CompactString>,
    pub parent_id: Option<CompactString>,
    pub timestamp: Option<CompactString>,
    pub body: EntryBody,
    /// Changed in memory (by migration) since it was read: its text is no longer the file's.
    pub modified: bool,
}

impl Entry {
    /// Parses a record. Returns `None` when the text is not a JSON object.
    pub fn parse(text: JsonText, line: usize) -> Option<Entry> {
        let source = text.clone();
        let raw = RawObject::parse(source.as_str()).ok()?;
        let entry_type = raw.get_str("type").map(|s| intern_type(&s));
        let id = raw.get_str("id").map(CompactString::from);
        let parent_id = raw.get_str("parentId").map(CompactString::from);
        let timestamp = raw.get_str("timestamp").map(CompactString::from);
        let body = match (entry_type.as_deref(), raw.get("message")) {
            (Some(types::MESSAGE), Some(message)) if message.get().starts_with('{') => {
                EntryBody::Message(parse_message_head(text.sub(message.get())))
            }
            // Checked as today (the whole text must read as an object) but not kept.
            _ => match parse_value(text.as_str()) {
                Ok(Value::Object(_)) => EntryBody::Fields(LazyFields::default()),
                _ => return None,
            },
        };
        Some(Entry {
            text,
            line,
            entry_type,
            id,
            parent_id,
            timestamp,
            body,
            modified: false,
        })
    }

    /// Builds an entry from an object value (new or modified entries).
    pub fn from_value(value: &Value, line: usize) -> Option<Entry> {
        Entry::parse(JsonText::owned(to_js_string(value)), line)
    }

    pub fn is_type(&self, ty: &str) -> bool {
        self.entry_type.as_deref() == Some(ty)
    }

    pub fn message(&self) -> Option<&MessageHead> {
        match &self.body {
            EntryBody::Message(head) => Some(head),
            EntryBody::Fields(_) => None,
        }
    }

    /// The fields of a non-message entry (parsed on the first call, then kept).
    pub fn fields(&self) -> Option<&Map<String, Value>> {
        match &self.body {
            EntryBody::Fields(lazy) => Some(lazy.get_or_parse(self.text.as_str())),
            EntryBody::Message(_) => None,
        }
    }

    /// A field of a non-message entry read from the text without keeping the parsed fields:
    /// for passes over every entry (labels, session names) that must not leave a map per entry.
    pub fn field_uncached(&self, key: &str) -> Option<Value> {
        match &self.body {
            EntryBody::Fields(lazy) => match lazy.0.get() {
                Some(map) => map.get(key).cloned(),
                None => {
                    let raw = RawObject::parse(self.text.as_str()).ok()?;
                    parse_value(raw.get(key)?.get()).ok()
                }
            },
            EntryBody::Message(_) => None,
        }
    }

    /// A field of a non-message entry.
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.fields().and_then(|m| m.get(key))
    }

    /// A string field of a non-message entry.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.field(key).and_then(Value::as_str)
    }

    /// The whole entry as a value (parses the text).
    pub fn to_value(&self) -> Value {
        self.text.to_value().unwrap_or(Value::Null)
    }

    /// The entry's `timestamp` as epoch milliseconds (`Date.parse`), if it parses.
    pub fn timestamp_ms(&self) -> Option<i64> {
        self.timestamp.as_deref().and_then(crate::base::iso_to_ms)
    }
}

fn parse_message_head(json: JsonText) -> MessageHead {
    // pi writes `role` as the first key: read it from the first bytes instead of scanning the
    // whole message again (messages are most of a session's bytes). Anything else falls back
    // to a full read of the top-level fields.
    let role = match role_from_prefix(json.as_str()) {
        Some(role) => Some(CompactString::from(role)),
        None => RawObject::parse(json.as_str())
            .ok()
            .and_then(|raw| raw.get_str("role").map(CompactString::from)),
    };
    MessageHead {
        json: Message::new(json),
        role,
    }
}

/// The value of a leading `"role":"<string>"` field without escapes, if the object starts so.
fn role_from_prefix(text: &str) -> Option<&str> {
    let rest = text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .strip_prefix('{')?;
    let rest = rest
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .strip_prefix("\"role\"")?;
    let rest = rest
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .strip_prefix(':')?;
    let rest = rest
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .strip_prefix('"')?;
    let end = rest.find('"')?;
    let value = &rest[..end];
    (!value.contains('\\')).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_entry_keeps_message_slice() {
        let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[],"provider":"anthropic","model":"m", "usage":{"x":1.0}},"extra":true}"#;
        let e = Entry::parse(JsonText::owned(line.to_owned()), 2).unwrap();
        assert_eq!(e.id.as_deref(), Some("a"));
        assert_eq!(e.parent_id, None);
        let m = e.message().unwrap();
        assert_eq!(m.role.as_deref(), Some("assistant"));
        assert_eq!(
            m.json.as_str(),
            r#"{"role":"assistant","content":[],"provider":"anthropic","model":"m", "usage":{"x":1.0}}"#
        );
        assert_eq!(
            m.provider_and_model(),
            (Some(Value::from("anthropic")), Some(Value::from("m")))
        );
    }

    #[test]
    fn role_is_read_from_the_prefix_or_the_whole_message() {
        assert_eq!(
            role_from_prefix(r#"{"role":"user","content":"x"}"#),
            Some("user")
        );
        assert_eq!(
            role_from_prefix(r#" { "role" : "assistant" }"#),
            Some("assistant")
        );
        assert_eq!(role_from_prefix(r#"{"content":"x","role":"user"}"#), None);
        assert_eq!(role_from_prefix(r#"{"role":"us\u0065r"}"#), None);
        let late = Entry::parse(
            JsonText::owned(
                r#"{"type":"message","id":"a","message":{"content":"x","role":"toolResult"}}"#
                    .into(),
            ),
            1,
        )
        .unwrap();
        assert_eq!(late.message().unwrap().role.as_deref(), Some("toolResult"));
        let escaped = Entry::parse(
            JsonText::owned(r#"{"type":"message","id":"a","message":{"role":"us\u0065r"}}"#.into()),
            1,
        )
        .unwrap();
        assert_eq!(escaped.message().unwrap().role.as_deref(), Some("user"));
    }

    #[test]
    fn other_entries_parse_fields_and_unknown_types() {
        let e = Entry::parse(
            JsonText::owned(
                r#"{"type":"future_thing","id":"z","parentId":"a","payload":[1,2]}"#.into(),
            ),
            3,
        )
        .unwrap();
        assert_eq!(e.entry_type.as_deref(), Some("future_thing"));
        assert_eq!(e.field("payload"), Some(&serde_json::json!([1, 2])));
        assert!(Entry::parse(JsonText::owned("[1]".into()), 1).is_none());
    }

    #[test]
    fn other_entries_parse_their_fields_only_when_asked() {
        let text =
            r#"{"type":"label","id":"l","parentId":"a","targetId":"a","label":"x","n":1e400}"#;
        let e = Entry::parse(JsonText::owned(text.into()), 2).unwrap();
        let EntryBody::Fields(lazy) = &e.body else {
            panic!("a label has fields");
        };
        assert!(lazy.0.get().is_none(), "parsed at open");
        assert_eq!(e.field_uncached("label"), Some(Value::from("x")));
        assert_eq!(e.field_uncached("n"), Some(Value::Null));
        assert_eq!(e.field_uncached("missing"), None);
        assert!(lazy.0.get().is_none(), "kept by an uncached read");
        assert_eq!(e.str_field("targetId"), Some("a"));
        assert!(lazy.0.get().is_some());
        assert_eq!(e.field_uncached("label"), Some(Value::from("x")));
        assert_eq!(e.fields().map(Map::len), Some(6));
        // Texts that are not a whole object are still refused at parse time.
        assert!(Entry::parse(JsonText::owned(r#"{"type":"label","x":[}"#.into()), 1).is_none());
    }

    #[test]
    fn message_entry_with_non_object_message() {
        let e = Entry::parse(
            JsonText::owned(r#"{"type":"message","id":"a","message":null}"#.into()),
            1,
        )
        .unwrap();
        assert!(e.message().is_none());
        assert_eq!(e.field("message"), Some(&Value::Null));
    }
}
