//! Session entries (pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`, the
//! `SessionEntry` types): the record's original JSON text plus the few fields the
//! hot path reads. Message bodies are not parsed beyond their role and model, so a 13 MB tool
//! result costs one validation pass, not a tree of allocations.

use once_cell::race::OnceBox;
use std::borrow::Cow;

use compact_str::CompactString;

use serde_json::{Map, Value};

use crate::base::{parse_value, to_js_string, JsonText, RawObject};
use crate::transcript::Message;

use super::lines::{nested_deeper_than, MAX_RECORD_DEPTH};

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
    /// OpenClaw's reset boundary (`ResetEntry`: `reason`, optional `firstKeptEntryId`), written
    /// by `SessionManager.appendResetBoundary` for `/new` and `/reset` (OpenClaw's SQLite-era
    /// `src/agents/sessions/session-manager-entries.d.ts`). pi-mono 0.58.3 does not write it.
    pub const RESET: &str = "reset";
}

/// The entry types pi (session-manager.ts) and OpenClaw (`reset`) write, by their code in [`Entry`] (code 0 is no
/// `type`, [`OTHER_TYPE`] one pi does not write, read back from the text when asked).
const KNOWN_TYPES: [&str; 11] = [
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
    types::RESET,
];
const NO_TYPE: u8 = 0;
const OTHER_TYPE: u8 = u8::MAX;

fn type_code(ty: Option<&str>) -> u8 {
    match ty {
        None => NO_TYPE,
        Some(ty) => KNOWN_TYPES
            .iter()
            .position(|k| *k == ty)
            .map_or(OTHER_TYPE, |i| i as u8 + 1),
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
    /// A `message` entry whose `message` is an object (boxed: the other kinds are smaller, and
    /// every entry is as large as its largest kind).
    Message(Box<MessageHead>),
    /// Any other entry: its fields, parsed from the text the first time one is asked for.
    /// Parsing them all at open cost a map per line (a file of small labels took ten times
    /// its size); only the few entries a context or a caller looks into pay for it.
    Fields(LazyFields),
    /// `count` (≥ 2) inert records on consecutive lines, held as one entry whose text runs
    /// from the first record to the last (see [`Entry::is_inert`]). A record costs ~170 bytes,
    /// so a file of millions of `{}` lines took 60 times its size; a run costs one record.
    /// [`Entry::held_records`] gives the records back.
    InertRun { count: usize },
}

/// The fields of a non-message entry, parsed on first use and kept (one pointer: a
/// `OnceLock` would add a word to every entry).
#[derive(Debug, Default)]
pub struct LazyFields(OnceBox<Map<String, Value>>);

impl Clone for LazyFields {
    fn clone(&self) -> Self {
        let copy = OnceBox::new();
        if let Some(map) = self.0.get() {
            let _ = copy.set(Box::new(map.clone()));
        }
        LazyFields(copy)
    }
}

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
///
/// Kept small (112 bytes on 64-bit targets, checked by a test): a session holds one per line,
/// and a file of short lines would otherwise take many times its size. What few passes read
/// (an unknown type's name, the timestamp) is read back from the text when asked.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The record's JSON text: original bytes for loaded, unmodified entries.
    pub text: JsonText,
    /// 1-based line of the file the record came from (several records share a line only when
    /// they were salvaged from one damaged line).
    pub line: usize,
    // Compact strings: ids (8 characters) are stored inline, without a heap allocation each.
    pub id: Option<CompactString>,
    pub parent_id: Option<CompactString>,
    pub body: EntryBody,
    /// [`NO_TYPE`], 1 + the index in [`KNOWN_TYPES`], or [`OTHER_TYPE`].
    type_code: u8,
    /// Whether the record has a string `timestamp` ([`Entry::timestamp`] reads it).
    has_timestamp: bool,
    /// Changed in memory (by migration) since it was read: its text is no longer the file's.
    pub modified: bool,
}

impl Entry {
    /// Parses a record. Returns `None` when the text is not a JSON object.
    /// Also `None` when it nests deeper than [`MAX_RECORD_DEPTH`] levels: its message would
    /// parse lazily here but fail in every later reader (issue 33, F3).
    pub fn parse(text: JsonText, line: usize) -> Option<Entry> {
        if nested_deeper_than(text.as_str().as_bytes(), MAX_RECORD_DEPTH) {
            return None;
        }
        let source = text.clone();
        let raw = RawObject::parse(source.as_str()).ok()?;
        let code = type_code(raw.get_str("type").as_deref());
        let id = raw.get_str("id").map(CompactString::from);
        let parent_id = raw.get_str("parentId").map(CompactString::from);
        let has_timestamp = raw.get_str("timestamp").is_some();
        let is_message = code == type_code(Some(types::MESSAGE));
        let body = match raw.get("message") {
            Some(message) if is_message && message.get().starts_with('{') => {
                EntryBody::Message(Box::new(parse_message_head(text.sub(message.get()))))
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
            id,
            parent_id,
            body,
            type_code: code,
            has_timestamp,
            modified: false,
        })
    }

    /// Builds an entry from an object value (new or modified entries).
    pub fn from_value(value: &Value, line: usize) -> Option<Entry> {
        Entry::parse(JsonText::owned(to_js_string(value)), line)
    }

    /// The record's `type`, when it is a string.
    pub fn entry_type(&self) -> Option<Cow<'_, str>> {
        match self.type_code {
            NO_TYPE => None,
            OTHER_TYPE => RawObject::parse(self.text.as_str())
                .ok()?
                .get_str("type")
                .map(|ty| Cow::Owned(ty.into_owned())),
            known => Some(Cow::Borrowed(KNOWN_TYPES[usize::from(known) - 1])),
        }
    }

    pub fn is_type(&self, ty: &str) -> bool {
        match type_code(Some(ty)) {
            OTHER_TYPE => self.type_code == OTHER_TYPE && self.entry_type().as_deref() == Some(ty),
            code => self.type_code == code,
        }
    }

    /// Whether the entry bounds the model's context: a `compaction`, or OpenClaw's `reset`
    /// (which bounds it the same way, without a summary). The latest one on a path wins.
    pub fn is_boundary(&self) -> bool {
        self.is_type(types::COMPACTION) || self.is_type(types::RESET)
    }

    /// The record's `timestamp`, when it is a string (read from the text).
    pub fn timestamp(&self) -> Option<String> {
        if !self.has_timestamp {
            return None;
        }
        RawObject::parse(self.text.as_str())
            .ok()?
            .get_str("timestamp")
            .map(Cow::into_owned)
    }

    pub fn message(&self) -> Option<&MessageHead> {
        match &self.body {
            EntryBody::Message(head) => Some(head),
            EntryBody::Fields(_) | EntryBody::InertRun { .. } => None,
        }
    }

    /// The fields of a non-message entry (parsed on the first call, then kept).
    pub fn fields(&self) -> Option<&Map<String, Value>> {
        match &self.body {
            EntryBody::Fields(lazy) => Some(lazy.get_or_parse(self.text.as_str())),
            EntryBody::Message(_) | EntryBody::InertRun { .. } => None,
        }
    }

    /// A record nothing reads beyond listing it in file order: no string `id`, `parentId` or
    /// `timestamp` and no `type` pi knows. Nothing can point at it (parents and labels point
    /// by id), no pass over every entry looks at it (labels, session names, custom entries,
    /// models and activity times are found by type or timestamp), and only as the file's last
    /// record can it be a leaf, whose context is then empty (pi-mono 0.58.3
    /// `session-manager.ts`, `_buildIndex` and `buildSessionContext`).
    pub fn is_inert(&self) -> bool {
        self.id.is_none()
            && self.parent_id.is_none()
            && !self.has_timestamp
            && !self.modified
            && matches!(self.type_code, NO_TYPE | OTHER_TYPE)
            && matches!(self.body, EntryBody::Fields(_) | EntryBody::InertRun { .. })
    }

    /// How many records this entry holds: 1, or the length of an inert run.
    pub fn records_held(&self) -> usize {
        match self.body {
            EntryBody::InertRun { count } => count,
            _ => 1,
        }
    }

    /// Takes `next`, the record of the line right after this entry's last, into this entry's
    /// inert run (making one), when both are inert and slices of one buffer with nothing but a
    /// line break and blanks between them. Returns whether it did.
    pub(crate) fn absorb_inert(&mut self, next: &Entry) -> bool {
        let held = self.records_held();
        if next.line != self.line + held
            || next.records_held() != 1
            || !self.is_inert()
            || !next.is_inert()
        {
            return false;
        }
        let Some(joined) = self.text.through(&next.text) else {
            return false;
        };
        let gap = &joined.as_str()[self.text.len()..joined.len() - next.text.len()];
        if gap.bytes().filter(|&b| b == b'\n').count() != 1
            || !gap
                .bytes()
                .all(|b| matches!(b, b'\n' | b' ' | b'\t' | b'\r'))
        {
            return false;
        }
        self.text = joined;
        self.type_code = NO_TYPE;
        self.body = EntryBody::InertRun { count: held + 1 };
        true
    }

    /// The records this entry holds, in file order: a clone of itself, or each record of an
    /// inert run parsed again from its line.
    pub fn held_records(&self) -> Vec<Entry> {
        match self.body {
            EntryBody::InertRun { .. } => self
                .text
                .as_str()
                .split('\n')
                .enumerate()
                .filter_map(|(k, line)| {
                    let text = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\r'));
                    Entry::parse(self.text.sub(text), self.line + k)
                })
                .collect(),
            _ => vec![self.clone()],
        }
    }

    /// Splits the last record off an inert run and returns it (`None` for any other entry).
    pub(crate) fn split_last_record(&mut self) -> Option<Entry> {
        let EntryBody::InertRun { count } = self.body else {
            return None;
        };
        let text = self.text.as_str();
        let cut = text.rfind('\n')?;
        let blank = |c| matches!(c, ' ' | '\t' | '\r');
        let last = Entry::parse(
            self.text.sub(text[cut + 1..].trim_matches(blank)),
            self.line + count - 1,
        )?;
        let front = self.text.sub(text[..cut].trim_end_matches(blank));
        // Both parts are parsed before the run changes, so a failure leaves it whole.
        if count == 2 {
            *self = Entry::parse(front, self.line)?;
        } else {
            self.text = front;
            self.body = EntryBody::InertRun { count: count - 1 };
        }
        Some(last)
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
            EntryBody::Message(_) | EntryBody::InertRun { .. } => None,
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
        self.timestamp().as_deref().and_then(crate::base::iso_to_ms)
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
        assert_eq!(e.entry_type().as_deref(), Some("future_thing"));
        assert!(e.is_type("future_thing") && !e.is_type("label"));
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

    /// An entry per line is the bulk of an open session's memory (issue 17, finding 12).
    #[test]
    fn an_entry_stays_small() {
        assert!(
            std::mem::size_of::<Entry>() <= 112,
            "{}",
            std::mem::size_of::<Entry>()
        );
    }

    #[test]
    fn inert_runs_absorb_split_and_give_their_records_back() {
        use std::sync::Arc;
        let text = "{}\n {\"a\":1}\r\n{\"type\":\"x\"}\n{\"id\":\"i\"}\n{}";
        let buf: Arc<str> = Arc::from(text);
        let at = |needle: &str, line: usize| {
            let start = text.match_indices(needle).next().unwrap().0;
            Entry::parse(JsonText::slice(&buf, start..start + needle.len()), line).unwrap()
        };
        let mut run = at("{}", 1);
        assert!(run.absorb_inert(&at(r#"{"a":1}"#, 2)));
        assert!(run.absorb_inert(&at(r#"{"type":"x"}"#, 3)));
        assert_eq!(run.records_held(), 3);
        assert!(run.is_inert() && run.entry_type().is_none() && run.fields().is_none());
        // An entry with an id is not inert; a record from another line number is not next.
        assert!(!run.absorb_inert(&at(r#"{"id":"i"}"#, 4)));
        assert!(!run.absorb_inert(&at(r#"{"type":"x"}"#, 5)));
        // Not slices of one buffer: never joined.
        assert!(!run.absorb_inert(&Entry::parse(JsonText::owned("{}".into()), 4).unwrap()));
        let records: Vec<(usize, String)> = run
            .held_records()
            .iter()
            .map(|e| (e.line, e.text.as_str().to_owned()))
            .collect();
        assert_eq!(
            records,
            [
                (1, "{}".to_owned()),
                (2, r#"{"a":1}"#.to_owned()),
                (3, r#"{"type":"x"}"#.to_owned())
            ]
        );
        assert_eq!(records[2].1, run.held_records()[2].text.as_str());
        assert_eq!(run.held_records()[2].entry_type().as_deref(), Some("x"));
        let last = run.split_last_record().unwrap();
        assert_eq!((last.line, last.text.as_str()), (3, r#"{"type":"x"}"#));
        assert_eq!(run.records_held(), 2);
        let second = run.split_last_record().unwrap();
        assert_eq!((second.line, second.text.as_str()), (2, r#"{"a":1}"#));
        assert_eq!((run.records_held(), run.text.as_str()), (1, "{}"));
        assert!(run.fields().is_some(), "a single record again");
        assert!(run.split_last_record().is_none());
    }

    #[test]
    fn types_and_timestamps_are_read_back_from_the_text() {
        let e = Entry::parse(
            JsonText::owned(
                r#"{"type":"t\u0031","timestamp":"2026-01-01T00:00:01.000Z","type":"label"}"#
                    .into(),
            ),
            1,
        )
        .unwrap();
        // The last duplicate key wins, as in `JSON.parse`.
        assert!(e.is_type(types::LABEL) && !e.is_type("t1"));
        assert_eq!(e.entry_type().as_deref(), Some("label"));
        assert_eq!(e.timestamp().as_deref(), Some("2026-01-01T00:00:01.000Z"));
        assert_eq!(e.timestamp_ms(), Some(1_767_225_601_000));
        let other = Entry::parse(
            JsonText::owned(r#"{"type":"t\u0031","timestamp":5}"#.into()),
            1,
        )
        .unwrap();
        assert!(other.is_type("t1") && !other.is_type(types::LABEL));
        assert_eq!(other.timestamp(), None);
        assert!(other.is_inert());
    }
}
