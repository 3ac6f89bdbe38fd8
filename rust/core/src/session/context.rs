//! `buildSessionContext` (pi-mono 0.58.3 `packages/coding-agent/src/core/session-manager.ts`):
//! the messages on the path from the root to a leaf,
//! with the latest compaction and branch summaries applied. OpenClaw's `reset` entry bounds
//! the context as a compaction does, without a summary: the latest of the two on the path
//! wins (OpenClaw `docs/reference/session-management-compaction.md`, "Model context follows
//! the latest reset or compaction boundary").

use serde_json::{Map, Value};

use super::entry::{types, Entry};
use super::tree::{path_to_root, IdIndex};
use crate::base::{is_truthy, object, to_js_string, JsonText};
use crate::transcript::{Message, Transcript};

/// Which leaf to build the context for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafSelector<'a> {
    /// `leafId === null`: an empty context.
    Null,
    /// `leafId` undefined: the last entry of the array.
    Last,
    /// An id; an unknown (or empty) id falls back to the last entry, as in pi.
    Id(&'a str),
    /// An entry index (the session's own leaf pointer).
    Index(usize),
}

/// The result of building a context.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    pub messages: Transcript,
    /// `"off"` unless a `thinking_level_change` on the path says otherwise.
    pub thinking_level: Value,
    /// `{provider, modelId}` from the last model change or assistant message on the path.
    pub model: Option<Value>,
}

impl SessionContext {
    pub fn empty() -> Self {
        SessionContext {
            messages: Transcript::default(),
            thinking_level: Value::from("off"),
            model: None,
        }
    }
}

/// The leaf an id/index selector names (`None`: the empty context).
pub fn resolve_leaf(entries: &[Entry], index: &IdIndex, leaf: LeafSelector<'_>) -> Option<usize> {
    match leaf {
        LeafSelector::Null => None,
        LeafSelector::Index(i) if i < entries.len() => Some(i),
        LeafSelector::Id(id) if !id.is_empty() => {
            index.get(entries, id).or(entries.len().checked_sub(1))
        }
        _ => entries.len().checked_sub(1),
    }
}

/// A built context in a form that can be extended when entries are appended after its leaf.
#[derive(Debug, Clone)]
pub struct ContextState {
    pub leaf: usize,
    pub thinking_level: Value,
    /// The last model_change or assistant on the path (read only when asked).
    pub model_source: Option<usize>,
    pub messages: Vec<Message>,
}

impl ContextState {
    /// The context as returned to callers.
    pub fn to_context(&self, entries: &[Entry]) -> SessionContext {
        let model = self.model_source.map(|i| model_of(&entries[i]));
        SessionContext {
            messages: Transcript::from_messages(self.messages.clone()),
            thinking_level: self.thinking_level.clone(),
            model,
        }
    }

    /// Extends the state with `segment` (entries after its leaf, root→leaf order). `None` when
    /// the segment holds a compaction or a reset, which changes what comes before it.
    pub fn extended(&self, entries: &[Entry], segment: &[usize]) -> Option<ContextState> {
        if segment.iter().any(|&i| entries[i].is_boundary()) {
            return None;
        }
        let mut next = self.clone();
        for &i in segment {
            next.note_settings(&entries[i], i);
            push_entry_message(&entries[i], &mut next.messages);
        }
        next.leaf = *segment.last()?;
        Some(next)
    }

    fn note_settings(&mut self, entry: &Entry, i: usize) {
        match entry.entry_type().as_deref() {
            Some(types::THINKING_LEVEL_CHANGE) => {
                self.thinking_level = entry.field("thinkingLevel").cloned().unwrap_or(Value::Null);
            }
            Some(types::MODEL_CHANGE) => self.model_source = Some(i),
            Some(types::MESSAGE)
                if entry
                    .message()
                    .is_some_and(|m| m.role.as_deref() == Some("assistant")) =>
            {
                self.model_source = Some(i);
            }
            _ => {}
        }
    }

    /// The state for a root→leaf `path` (`buildSessionContext`: model and thinking level from the
    /// path, the latest compaction's summary, then the entries it keeps and those after it).
    /// A reset later than every compaction is the boundary instead: no summary, then the
    /// entries from its `firstKeptEntryId` (none without one) and those after it.
    pub fn for_path(entries: &[Entry], path: &[usize]) -> ContextState {
        let mut state = ContextState {
            leaf: path.last().copied().unwrap_or(0),
            thinking_level: Value::from("off"),
            model_source: None,
            messages: Vec::new(),
        };
        let mut boundary: Option<usize> = None;
        for (position, &i) in path.iter().enumerate() {
            state.note_settings(&entries[i], i);
            if entries[i].is_boundary() {
                boundary = Some(position);
            }
        }
        let messages = &mut state.messages;
        match boundary {
            Some(position) => {
                let entry = &entries[path[position]];
                if entry.is_type(types::COMPACTION) {
                    messages.push(compaction_summary_message(entry));
                }
                let first_kept = entry.field("firstKeptEntryId");
                let mut found = false;
                for &i in &path[..position] {
                    if !found
                        && first_kept.is_some_and(|k| {
                            entries[i]
                                .id
                                .as_deref()
                                .is_some_and(|id| Some(&Value::from(id)) == Some(k))
                        })
                    {
                        found = true;
                    }
                    if found {
                        push_entry_message(&entries[i], messages);
                    }
                }
                for &i in &path[position + 1..] {
                    push_entry_message(&entries[i], messages);
                }
            }
            None => {
                for &i in path {
                    push_entry_message(&entries[i], messages);
                }
            }
        }
        state
    }
}

/// Builds the context of `entries` (file order, header excluded) for `leaf`.
pub fn build_session_context(
    entries: &[Entry],
    index: &IdIndex,
    leaf: LeafSelector<'_>,
) -> SessionContext {
    let Some(leaf_index) = resolve_leaf(entries, index, leaf) else {
        return SessionContext::empty();
    };
    let path = path_to_root(entries, index, leaf_index);
    ContextState::for_path(entries, &path).to_context(entries)
}

/// `{provider, modelId}` set by a model_change or assistant message entry (`buildSessionContext`).
pub(crate) fn model_of(entry: &Entry) -> Value {
    match entry.message() {
        Some(head) => {
            let (provider, model) = head.provider_and_model();
            model_value(provider, model)
        }
        None => model_value(
            entry.field("provider").cloned(),
            entry.field("modelId").cloned(),
        ),
    }
}

/// `{provider, modelId}` as pi-mono 0.58.3 builds it (`session-manager.ts`,
/// `buildSessionContext`): a field whose source is absent is `undefined` there, so it is
/// left out (`{}` when both are).
fn model_value(provider: Option<Value>, model_id: Option<Value>) -> Value {
    let mut map = Map::new();
    if let Some(provider) = provider {
        map.insert("provider".into(), provider);
    }
    if let Some(model_id) = model_id {
        map.insert("modelId".into(), model_id);
    }
    Value::Object(map)
}

/// `new Date(entry.timestamp).getTime()` (pi-mono 0.58.3 `session-manager.ts`) as JSON: an
/// ISO string is parsed, a number is taken as epoch milliseconds (truncated, within the Date
/// range), `null` is 0 and a boolean 0 or 1; anything else is NaN, which `JSON.stringify`
/// writes as `null`.
fn timestamp_value(entry: &Entry) -> Value {
    const MAX_TIME_MS: f64 = 8.64e15;
    match entry.field("timestamp") {
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite() && f.abs() <= MAX_TIME_MS)
            .map_or(Value::Null, |f| Value::from(f.trunc() as i64)),
        Some(Value::Null) => Value::from(0),
        Some(Value::Bool(b)) => Value::from(i64::from(*b)),
        Some(Value::String(iso)) => crate::base::iso_to_ms(iso).map_or(Value::Null, Value::from),
        _ => Value::Null,
    }
}

/// Entry → message (`buildSessionContext`'s "append": message, custom_message, branch_summary).
fn push_entry_message(entry: &Entry, out: &mut Vec<Message>) {
    match entry.entry_type().as_deref() {
        // A `message` whose `message` is not an object has nothing to send; pi would pass the
        // raw value along and fail later in convertToLlm.
        Some(types::MESSAGE) => {
            if let Some(head) = entry.message() {
                out.push(head.json.clone());
            }
        }
        Some(types::CUSTOM_MESSAGE) => {
            let get = |k: &str| entry.field(k).cloned();
            let message = object([
                ("role", Some(Value::from("custom"))),
                ("customType", get("customType")),
                ("content", get("content")),
                ("display", get("display")),
                ("details", get("details")),
                ("timestamp", Some(timestamp_value(entry))),
            ]);
            out.push(Message::new(JsonText::owned(to_js_string(&message))));
        }
        Some(types::BRANCH_SUMMARY) => {
            if let Some(summary) = entry.field("summary").filter(|s| is_truthy(s)) {
                let message = object([
                    ("role", Some(Value::from("branchSummary"))),
                    ("summary", Some(summary.clone())),
                    ("fromId", entry.field("fromId").cloned()),
                    ("timestamp", Some(timestamp_value(entry))),
                ]);
                out.push(Message::new(JsonText::owned(to_js_string(&message))));
            }
        }
        _ => {}
    }
}

fn compaction_summary_message(entry: &Entry) -> Message {
    let message = object([
        ("role", Some(Value::from("compactionSummary"))),
        ("summary", entry.field("summary").cloned()),
        ("tokensBefore", entry.field("tokensBefore").cloned()),
        ("timestamp", Some(timestamp_value(entry))),
    ]);
    Message::new(JsonText::owned(to_js_string(&message)))
}
