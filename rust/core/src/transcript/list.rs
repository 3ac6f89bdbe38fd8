//! A transcript: an ordered list of AgentMessages, each kept as JSON text. Messages read from a
//! file are slices of the file buffer, so serializing an unmodified transcript writes the
//! original bytes.

use std::any::Any;
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use super::facts::{scan_message, MessageFacts};
use super::layout::MessageLayout;
use super::send_shape::SendShape;
use crate::base::{to_js_string, JsonText, RawObject};

/// The soft-trim settings of context pruning ([`prune_context`](super::prune_context)):
/// the key of the trimmed message cached with each [`Message`].
#[derive(Debug, Clone, PartialEq)]
pub struct SoftTrim {
    pub max_chars: u64,
    pub head_chars: u64,
    pub tail_chars: u64,
}

/// What a per-message rewrite depended on besides the message: the pass, and the values it
/// read from elsewhere (for the tool-call id sanitation, the ids the session-wide mapping gave
/// this message's ids). The key of the rewrite cached with each [`Message`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RewriteKey {
    pub pass: &'static str,
    pub inputs: Vec<String>,
}

/// What a per-message pass does to one message: keeps it, drops it, or puts another in its
/// place ([`Transcript::edit_messages`]); also what the pass's rewrite cache holds.
#[derive(Clone)]
pub(crate) enum Edit {
    Keep,
    Drop,
    Replace(Message),
}

impl Edit {
    /// `Keep` for `None`, `Replace(m)` for `Some(m)`.
    pub(crate) fn replacing(message: Option<Message>) -> Edit {
        message.map_or(Edit::Keep, Edit::Replace)
    }

    /// The edit a value-returning pass means ([`Transcript::map_messages`]): `None` keeps,
    /// `Some(Value::Null)` drops, any other value replaces (serialized like `JSON.stringify`).
    pub(crate) fn from_value(value: Option<Value>) -> Edit {
        match value {
            None => Edit::Keep,
            Some(Value::Null) => Edit::Drop,
            Some(value) => Edit::Replace(Message::new(JsonText::owned(to_js_string(&value)))),
        }
    }
}

/// The rewrites cached with a message: one per pass, with its key and result.
type Rewrites = Vec<(RewriteKey, Edit)>;

/// A pass's cached rewrite of a message, looked up with the inputs the pass has now
/// ([`Message::cached_edit`]).
pub(crate) enum CachedEdit {
    /// Cached under these inputs: the edit to apply.
    Hit(Edit),
    /// Cached under other inputs (the first cached stays): compute, do not cache.
    OtherInputs,
    /// Nothing cached for the pass yet.
    Missing,
}

/// One message: its JSON text and, computed on first use and then shared by every transcript
/// that holds the message, its [`MessageFacts`].
#[derive(Clone)]
pub struct Message(Arc<MessageInner>);

struct MessageInner {
    text: JsonText,
    /// Boxed: most messages of a large session never need their facts computed.
    facts: OnceLock<Box<MessageFacts>>,
    /// The message soft-trimmed by pruning (pruner.ts) under the settings it was first trimmed
    /// with: a session's tool results are trimmed again on every request, and the trim parses
    /// and rewrites the whole result.
    soft_trim: OnceLock<Box<(SoftTrim, Option<Message>)>>,
    /// The message as hygiene passes rewrote it (`None`: unchanged), one entry per pass under
    /// the first key it was rewritten with: the passes run again on every request, and a
    /// rewrite that comes back as the same message keeps the facts, layout and request shape
    /// later passes cached with it (`hygiene/tool_call_ids.rs`, `hygiene/sanitize.rs`).
    rewrites: OnceLock<Box<Mutex<Rewrites>>>,
    /// Where its fields are, for the readers that copy stored bytes (request payloads are
    /// built from the same messages on every request).
    layout: OnceLock<Box<MessageLayout>>,
    /// A value a later stage derived from the message (the request payloads keep the message
    /// as their writer wrote it), for the first one set; see [`Message::derived`].
    derived: OnceLock<Box<dyn Any + Send + Sync>>,
    /// What the request guard reads of it (hygiene/request_guard.rs), checked on every request.
    send_shape: OnceLock<Box<SendShape>>,
}

impl Message {
    pub fn new(text: JsonText) -> Message {
        Message(Arc::new(MessageInner {
            text,
            facts: OnceLock::new(),
            soft_trim: OnceLock::new(),
            rewrites: OnceLock::new(),
            layout: OnceLock::new(),
            derived: OnceLock::new(),
            send_shape: OnceLock::new(),
        }))
    }

    /// A message whose facts and request shape are known without reading its text: a rewrite
    /// that changed only fields they record, and set them as they are in the new text
    /// (`hygiene/tool_call_ids.rs`), saves the next pass a parse.
    pub(crate) fn with_known_facts(
        text: JsonText,
        facts: MessageFacts,
        shape: SendShape,
    ) -> Message {
        let message = Message::new(text);
        let _ = message.0.facts.set(Box::new(facts));
        let _ = message.0.send_shape.set(Box::new(shape));
        message
    }

    /// `trim(self)` (this message soft-trimmed under `soft`, or `None` when it is not
    /// trimmed), cached with the message for the first settings it is asked with.
    pub(crate) fn soft_trimmed(
        &self,
        soft: &SoftTrim,
        trim: impl FnOnce(&Message) -> Option<Message>,
    ) -> Option<Message> {
        if let Some(cached) = self.0.soft_trim.get() {
            if cached.0 == *soft {
                return cached.1.clone();
            }
            return trim(self);
        }
        let trimmed = trim(self);
        // (Another thread may have cached the same result meanwhile: equal either way.)
        let _ = self
            .0
            .soft_trim
            .set(Box::new((soft.clone(), trimmed.clone())));
        trimmed
    }

    /// Whether `pass` cached a rewrite with the message (under any inputs).
    pub(crate) fn has_cached_rewrite(&self, pass: &str) -> bool {
        self.0.rewrites.get().is_some_and(|rewrites| {
            let rewrites = rewrites.lock().unwrap_or_else(|e| e.into_inner());
            rewrites.iter().any(|(key, _)| key.pass == pass)
        })
    }

    /// The rewrite `pass` cached with the message, if cached under `inputs` (compared in
    /// place: a hit clones only the edit).
    pub(crate) fn cached_edit(&self, pass: &str, inputs: &[String]) -> CachedEdit {
        let Some(rewrites) = self.0.rewrites.get() else {
            return CachedEdit::Missing;
        };
        let rewrites = rewrites.lock().unwrap_or_else(|e| e.into_inner());
        match rewrites.iter().find(|(key, _)| key.pass == pass) {
            None => CachedEdit::Missing,
            Some((key, edit)) if key.inputs == inputs => CachedEdit::Hit(edit.clone()),
            Some(_) => CachedEdit::OtherInputs,
        }
    }

    /// Caches `result` as the message's rewrite by `key.pass` under `key`, unless that pass
    /// cached one already (the first stays: asked with another key, the pass computes its
    /// rewrite again).
    pub(crate) fn cache_rewrite(&self, key: RewriteKey, result: Edit) {
        let rewrites = self.0.rewrites.get_or_init(Box::default);
        let mut rewrites = rewrites.lock().unwrap_or_else(|e| e.into_inner());
        if !rewrites.iter().any(|(cached, _)| cached.pass == key.pass) {
            rewrites.push((key, result));
        }
    }

    pub fn text(&self) -> &JsonText {
        &self.0.text
    }

    /// Whether the message's facts are computed already.
    pub(crate) fn has_facts(&self) -> bool {
        self.0.facts.get().is_some()
    }

    /// Whether both are the same message (not merely equal text).
    pub fn is_same(&self, other: &Message) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Where the message's fields are (one pass over its text, then cached).
    pub fn layout(&self) -> &MessageLayout {
        self.0
            .layout
            .get_or_init(|| Box::new(MessageLayout::scan(self.0.text.as_str())))
    }

    /// The value a later stage derived from this message and cached with it, when one of type
    /// `T` is set. One value is kept (the first set): a stage that derives several (one per
    /// target model, say) finds the others absent and computes them again, which is slower,
    /// never wrong, as long as the value records what it was derived under.
    pub fn derived<T: Any>(&self) -> Option<&T> {
        self.0.derived.get()?.downcast_ref::<T>()
    }

    /// Caches `value` as [`Message::derived`] unless a value is cached already.
    pub fn set_derived<T: Any + Send + Sync>(&self, value: T) {
        let _ = self.0.derived.set(Box::new(value));
    }

    /// The message's `role` when it is a string: read from the facts when they are computed,
    /// else from the layout when that is (a plain string needs no parse), else from the facts.
    pub fn role(&self) -> Option<&str> {
        if self.has_facts() {
            return self.facts().role.as_deref();
        }
        if let Some(layout) = self.0.layout.get() {
            let text = self.0.text.as_str();
            if let Some(Some(raw)) = layout.role(text) {
                let inner = raw
                    .strip_prefix('"')
                    .and_then(|r| r.strip_suffix('"'))
                    .filter(|r| !r.contains('\\'));
                if let Some(inner) = inner {
                    return Some(inner);
                }
            }
        }
        self.facts().role.as_deref()
    }

    /// What the request guard reads of the message (one parse of its text, then cached).
    pub fn send_shape(&self) -> &SendShape {
        if let Some(shape) = self.0.send_shape.get() {
            return shape;
        }
        // With the facts when they are not computed yet; after facts alone, a pass of its own.
        self.request_facts();
        self.0
            .send_shape
            .get_or_init(|| Box::new(scan_message(&self.0.text).1))
    }

    /// The message's facts (one pass over its text, then cached).
    pub fn facts(&self) -> &MessageFacts {
        self.0
            .facts
            .get_or_init(|| Box::new(MessageFacts::scan(&self.0.text)))
    }

    /// [`facts`](Message::facts) on the request path: the pass that computes them also
    /// caches the [`send_shape`](Message::send_shape) the request guard reads later, so a
    /// request reads each message once. Readers that hold many messages for other ends (a
    /// scan, an estimate) use `facts` and keep no shape (a few hundred bytes a message).
    pub fn request_facts(&self) -> &MessageFacts {
        self.0.facts.get_or_init(|| {
            let (facts, shape) = scan_message(&self.0.text);
            let _ = self.0.send_shape.set(Box::new(shape));
            Box::new(facts)
        })
    }
}

impl Deref for Message {
    type Target = JsonText;
    fn deref(&self) -> &JsonText {
        &self.0.text
    }
}

impl From<JsonText> for Message {
    fn from(text: JsonText) -> Message {
        Message::new(text)
    }
}

impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.is_same(other) || self.0.text == other.0.text
    }
}

impl Eq for Message {}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.text.fmt(f)
    }
}

/// Messages of at least this many bytes without facts get them computed on all cores
/// ([`Transcript::compute_facts`]).
const PARALLEL_FACTS_MIN_BYTES: usize = 1 << 20;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    messages: Vec<Message>,
}

impl Transcript {
    /// Computes the facts of the messages that have none yet, on all cores when about
    /// [`PARALLEL_FACTS_MIN_BYTES`] of messages or more lack them. The operations that read
    /// every message's facts call this first. The bytes lacking facts are estimated from every
    /// 16th message, so that a transcript whose facts are computed costs little; a wrong
    /// estimate only changes where the facts are computed, never what they are.
    pub(crate) fn compute_facts(&self) {
        self.compute_facts_from(PARALLEL_FACTS_MIN_BYTES, Message::facts);
    }

    /// [`compute_facts`](Transcript::compute_facts) with each message's request shape
    /// ([`Message::request_facts`]), from a quarter of the size: the hygiene passes that edit
    /// messages call it first, so the one parse of each message of a request runs on all cores
    /// (a request's context is often under a megabyte, and its parse the largest part of it).
    pub(crate) fn compute_request_facts(&self) {
        self.compute_facts_from(PARALLEL_FACTS_MIN_BYTES / 4, Message::request_facts);
    }

    fn compute_facts_from(&self, min_bytes: usize, compute: fn(&Message) -> &MessageFacts) {
        use rayon::prelude::*;
        const STRIDE: usize = 16;
        let pending: usize = self
            .messages
            .iter()
            .step_by(STRIDE)
            .filter(|m| !m.has_facts())
            .map(|m| m.text().as_str().len() * STRIDE)
            .sum();
        if pending >= min_bytes && rayon::current_num_threads() > 1 {
            self.messages.par_iter().for_each(|m| {
                compute(m);
            });
        }
    }

    pub fn new(messages: Vec<JsonText>) -> Self {
        Transcript {
            messages: messages.into_iter().map(Message::new).collect(),
        }
    }

    pub fn from_messages(messages: Vec<Message>) -> Self {
        Transcript { messages }
    }

    /// Parses a JSON array of message objects. Each element keeps its exact text.
    pub fn from_json(text: &str) -> Result<Transcript, serde_json::Error> {
        match Self::parse_array(JsonText::owned(text.to_owned())) {
            Ok(t) => Ok(t),
            // Lone surrogate escapes: read a sanitized copy instead (see json.rs).
            Err(e) => match crate::base::replace_lone_surrogate_escapes(text) {
                Some(fixed) => Self::parse_array(JsonText::owned(fixed)),
                None => Err(e),
            },
        }
    }

    fn parse_array(owned: JsonText) -> Result<Transcript, serde_json::Error> {
        let items: Vec<&serde_json::value::RawValue> = serde_json::from_str(owned.as_str())?;
        let mut messages = Vec::with_capacity(items.len());
        for item in items {
            if RawObject::parse(item.get()).is_err() {
                return Err(serde::de::Error::custom(
                    "every transcript element must be a JSON object",
                ));
            }
            messages.push(Message::new(owned.sub(item.get())));
        }
        Ok(Transcript { messages })
    }

    /// Builds a transcript from message values (serialized like `JSON.stringify`).
    pub fn from_values(values: &[Value]) -> Transcript {
        Transcript::new(
            values
                .iter()
                .map(|v| JsonText::owned(to_js_string(v)))
                .collect(),
        )
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&Message> {
        self.messages.get(i)
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }

    /// The JSON array: `[` + messages joined by `,` + `]`, each message from its own text.
    pub fn to_json(&self) -> String {
        let total: usize = self.messages.iter().map(|m| m.len() + 1).sum();
        let mut out = String::with_capacity(total + 2);
        out.push('[');
        for (i, message) in self.messages.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(message.as_str());
        }
        out.push(']');
        out
    }

    /// A transcript with each message kept, dropped or replaced as `edit` says; a clone of
    /// `self` when every message is kept (kept messages keep their text and cached facts).
    pub(crate) fn edit_messages(
        &self,
        mut edit: impl FnMut(usize, &Message) -> Edit,
    ) -> Transcript {
        self.compute_request_facts();
        let mut out = Vec::with_capacity(self.len());
        let mut changed = false;
        for (i, message) in self.messages.iter().enumerate() {
            match edit(i, message) {
                Edit::Keep => out.push(message.clone()),
                Edit::Drop => changed = true,
                Edit::Replace(next) => {
                    changed = true;
                    out.push(next);
                }
            }
        }
        if changed {
            Transcript { messages: out }
        } else {
            self.clone()
        }
    }

    /// A transcript with messages replaced or dropped by `edit`: `None` keeps the message as it
    /// is (same text, same cached facts), `Some(Value::Null)` drops it, any other value replaces
    /// it (serialized like `JSON.stringify`). Returns a clone of `self` when nothing changed.
    pub fn map_messages(
        &self,
        mut edit: impl FnMut(usize, &Message) -> Option<Value>,
    ) -> Transcript {
        self.edit_messages(|i, message| Edit::from_value(edit(i, message)))
    }

    /// [`Transcript::map_messages`] for edits that give a message: `None` keeps the message,
    /// `Some(m)` puts `m` in its place (the transcript itself when every message is kept).
    pub fn map_to_messages(
        &self,
        mut edit: impl FnMut(usize, &Message) -> Option<Message>,
    ) -> Transcript {
        self.edit_messages(|i, message| Edit::replacing(edit(i, message)))
    }

    /// The value of the top-level field `key` of every message that has one, as
    /// `(index, value)` pairs. Only messages whose text mentions `"key"` are parsed, so asking
    /// for a rare field (such as `provenance`) costs one substring scan per message.
    pub fn top_level_values(&self, key: &str) -> Vec<(usize, Value)> {
        let needle = format!("\"{key}\"");
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        let mut found = Vec::new();
        for (i, message) in self.messages.iter().enumerate() {
            if finder.find(message.as_str().as_bytes()).is_none() {
                continue;
            }
            let Ok(object) = RawObject::parse(message.as_str()) else {
                continue;
            };
            if let Some(raw) = object.get(key) {
                if let Ok(value) = crate::base::parse_value(raw.get()) {
                    found.push((i, value));
                }
            }
        }
        found
    }

    /// The length of [`Transcript::to_json`]'s output in bytes.
    pub fn json_len(&self) -> usize {
        2 + self.messages.iter().map(|m| m.len()).sum::<usize>()
            + self.messages.len().saturating_sub(1)
    }

    /// Writes [`Transcript::to_json`]'s output into `out`, which must be exactly
    /// [`Transcript::json_len`] bytes long.
    pub fn write_json(&self, out: &mut [u8]) {
        assert_eq!(
            out.len(),
            self.json_len(),
            "buffer length must be json_len()"
        );
        out[0] = b'[';
        let mut at = 1;
        for (i, message) in self.messages.iter().enumerate() {
            if i > 0 {
                out[at] = b',';
                at += 1;
            }
            let bytes = message.as_str().as_bytes();
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        }
        out[at] = b']';
    }

    /// The `role` of message `i`.
    pub fn role(&self, i: usize) -> Option<String> {
        self.messages.get(i)?.facts().role.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The role read from a computed layout is the one the facts give, for every shape.
    #[test]
    fn role_from_the_layout_is_the_role_from_the_facts() {
        for text in [
            r#"{"role":"user","content":"x"}"#,
            r#"{"role":"us\u0065r"}"#,
            r#"{"role":"user","role":"assistant"}"#,
            r#"{"role":5}"#,
            r#"{"role":null}"#,
            r#"{"content":[],"content":[],"role":"toolResult"}"#,
            r#"{"content":"x"}"#,
            r#"[1]"#,
            r#"{ "role" : "custom" }"#,
        ] {
            let facts_first = Message::new(JsonText::owned(text.to_owned()));
            let expected = facts_first.facts().role.clone();
            let layout_first = Message::new(JsonText::owned(text.to_owned()));
            layout_first.layout();
            assert_eq!(layout_first.role(), expected.as_deref(), "{text}");
            assert!(layout_first.has_facts() || expected.is_some(), "{text}");
        }
    }

    #[test]
    fn transcript_facts_computed_on_all_cores_equal_the_lazy_ones() {
        let kinds = [
            r#"{"role":"user","content":"hello 中文 😀"}"#.to_owned(),
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"toolCall","id":"c1","name":"exec","arguments":{"cmd":"ls"}}],"stopReason":"toolUse","usage":{"input":10,"output":5,"totalTokens":15}}"#.to_owned(),
            serde_json::json!({"role": "toolResult", "toolCallId": "c1", "toolName": "exec",
                "content": [{"type": "text", "text": "x\n".repeat(3000)}]}).to_string(),
            r#"{"role":"bashExecution","command":"ls","output":"a"}"#.to_owned(),
            r#"{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop"}"#
                .to_owned(),
        ];
        let texts: Vec<String> = (0..1200).map(|i| kinds[i % kinds.len()].clone()).collect();
        let total: usize = texts.iter().map(String::len).sum();
        assert!(total >= PARALLEL_FACTS_MIN_BYTES);
        let build = || Transcript::new(texts.iter().cloned().map(JsonText::owned).collect());
        let (eager, lazy) = (build(), build());
        eager.compute_facts();
        if rayon::current_num_threads() > 1 {
            assert!(eager.messages().iter().all(Message::has_facts));
        }
        assert!(!lazy.messages().iter().any(Message::has_facts));
        for (a, b) in eager.messages().iter().zip(lazy.messages()) {
            assert_eq!(a.facts(), b.facts());
        }
        // On the request path (every hygiene pass that edits messages starts with it) the
        // shapes come along, from a quarter of the size.
        let quarter = Transcript::new(
            texts[..texts.len() / 3]
                .iter()
                .cloned()
                .map(JsonText::owned)
                .collect(),
        );
        let edited = quarter.edit_messages(|_, _| Edit::Keep);
        assert!(edited.messages()[0].is_same(&quarter.messages()[0]));
        if rayon::current_num_threads() > 1 {
            assert!(quarter
                .messages()
                .iter()
                .all(|m| m.has_facts() && m.0.send_shape.get().is_some()));
        }
        for (a, b) in quarter.messages().iter().zip(build().messages()) {
            assert_eq!((a.facts(), a.send_shape()), (b.facts(), b.send_shape()));
        }
    }

    #[test]
    fn json_round_trip_keeps_bytes() {
        let text =
            r#"[{"role":"user","content":"hi", "n":1.50},{"role":"assistant","content":[]}]"#;
        let t = Transcript::from_json(text).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(
            t.to_json(),
            r#"[{"role":"user","content":"hi", "n":1.50},{"role":"assistant","content":[]}]"#
        );
        assert_eq!(t.role(1).as_deref(), Some("assistant"));
        let mut buf = vec![0u8; t.json_len()];
        t.write_json(&mut buf);
        assert_eq!(buf, t.to_json().as_bytes());
        let empty = Transcript::default();
        let mut buf = vec![0u8; empty.json_len()];
        empty.write_json(&mut buf);
        assert_eq!(buf, b"[]");
        assert!(Transcript::from_json("[1]").is_err());
        assert!(Transcript::from_json("{}").is_err());
        assert_eq!(Transcript::from_json("[]").unwrap().to_json(), "[]");
    }
}
