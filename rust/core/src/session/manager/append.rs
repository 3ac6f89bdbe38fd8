//! Appends under the file's lock (pi's `SessionManager.append*`), one entry at a time or a
//! turn of several messages in one write, with pi's key order for each entry type.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::super::entry::{types, Entry};
use super::super::lines::{nested_deeper_than, MAX_RECORD_DEPTH};
use super::super::persist::LockedFile;
use super::super::read::probe_before;
use super::*;
use crate::base::{generate_entry_id, IdSource};
use crate::base::{js_trim, ms_to_iso, to_js_string, JsonText};
use crate::base::{Error, Result};

/// A new entry to append, with the fields pi writes for it (`SessionManager.append*`).
#[derive(Debug, Clone)]
pub enum NewEntry {
    Message(Value),
    ThinkingLevelChange(String),
    ModelChange {
        provider: String,
        model_id: String,
    },
    Compaction {
        summary: String,
        first_kept_entry_id: String,
        tokens_before: Value,
        details: Option<Value>,
        from_hook: Option<bool>,
    },
    Custom {
        custom_type: String,
        data: Option<Value>,
    },
    CustomMessage {
        custom_type: String,
        content: Value,
        display: bool,
        details: Option<Value>,
    },
    Label {
        target_id: String,
        label: Option<String>,
    },
    SessionInfo {
        name: String,
    },
    /// `branchWithSummary`: a child of `branch_from` (`None` = a new root), with
    /// `fromId` = `branch_from` or `"root"`.
    BranchSummary {
        branch_from: Option<String>,
        summary: String,
        details: Option<Value>,
        from_hook: Option<bool>,
    },
}

impl Session {
    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::InvalidArgument(
                "the session was opened read-only".into(),
            ));
        }
        Ok(())
    }

    /// An append to a file whose migration is not saved yet would add current-version lines to
    /// an old-version file: refused until `save_migrated`.
    fn check_migration_saved(&self) -> Result<()> {
        if self.header.modified && self.path.is_some() {
            return Err(Error::Conflict {
                path: self.path.clone().unwrap_or_default(),
                reason: format!(
                    "the file is a version {} session; call save_migrated() (or open with rewrite_migrated) before appending",
                    self.file_version
                ),
            });
        }
        Ok(())
    }

    /// A fresh entry id not used in this session, drawn from `ids` (`generateId`).
    pub fn next_entry_id(&self, ids: &mut dyn IdSource) -> String {
        generate_entry_id(ids, |c| self.index.contains(&self.entries, c))
    }

    /// Appends an entry as a child of the leaf and moves the leaf to it. The line is written
    /// (under the lock) before the session changes in memory, so memory never runs ahead of
    /// the file. Returns the new id.
    pub fn append(
        &mut self,
        entry: NewEntry,
        ids: &mut dyn IdSource,
        now_ms: i64,
    ) -> Result<String> {
        let id = self.next_free_entry_id(ids)?;
        self.append_with_id(entry, id, now_ms)
    }

    /// [`Session::append`] with an id drawn beforehand by [`Session::next_entry_id`].
    pub fn append_with_id(&mut self, entry: NewEntry, id: String, now_ms: i64) -> Result<String> {
        self.check_writable()?;
        // A label or branch target that a cold session does not hold may be in the past.
        let target = match &entry {
            NewEntry::Label { target_id, .. } => Some(target_id.as_str()),
            NewEntry::BranchSummary {
                branch_from: Some(from),
                ..
            } => Some(from.as_str()),
            _ => None,
        };
        if target.is_some_and(|t| !self.index.contains(&self.entries, t)) {
            self.load_past()?;
        }
        if self.index.contains(&self.entries, id.as_str()) || id.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "entry id {id:?} is empty or already used"
            )));
        }
        let parent = match &entry {
            NewEntry::BranchSummary { branch_from, .. } => branch_from.clone(),
            _ => self.leaf_id().map(str::to_owned),
        };
        match &entry {
            NewEntry::Label { target_id, .. }
                if !self.index.contains(&self.entries, target_id.as_str()) =>
            {
                return Err(Error::EntryNotFound(target_id.clone()));
            }
            NewEntry::BranchSummary {
                branch_from: Some(from),
                ..
            } if !self.index.contains(&self.entries, from.as_str()) => {
                return Err(Error::EntryNotFound(from.clone()));
            }
            NewEntry::Message(message) => validate_message(message)?,
            _ => {}
        }
        self.check_migration_saved()?;
        let value = entry_value(entry, &id, parent, now_ms);
        let text = to_js_string(&value);
        // Never write a line the readers would skip (issue 33, N3): a message read back from a
        // file nests at most one level less than its line, so it is always accepted again.
        if nested_deeper_than(text.as_bytes(), MAX_RECORD_DEPTH) {
            return Err(Error::InvalidArgument(format!(
                "the entry would be nested deeper than {MAX_RECORD_DEPTH} levels (its message or data deeper than {} levels), which JSON readers cannot read back",
                MAX_RECORD_DEPTH - 1
            )));
        }
        let mut line = self.disk_lines + 1;
        if let Some(path) = &self.path {
            let mut file = LockedFile::open(path, false, self.write.lock_timeout)?;
            let mut bytes = Vec::with_capacity(text.len() + 1);
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(b'\n');
            let outcome = file.append_lines(&bytes, self.write.fsync)?;
            // Advance what counts as read only when nobody else wrote since our last read;
            // otherwise `refresh` reads their lines (and skips ours, already known).
            let nothing_unread = outcome.start == self.disk_len && self.tail_start == self.disk_len;
            if nothing_unread && !outcome.terminated_torn_line {
                self.disk_len = outcome.end;
                self.disk_lines = line;
                let probe = probe_before(&bytes, bytes.len());
                self.record_tail(outcome.end, file.identity(), &probe);
            } else if outcome.terminated_torn_line {
                line += 1;
            }
        } else {
            self.disk_lines = line;
        }
        // The line is on disk already; an entry the reader could not parse back would be
        // missing from memory until the next open, so say so instead of panicking.
        let entry = Entry::parse(JsonText::owned(text), line).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "entry {id:?} was written but cannot be read back; open the session again"
            ))
        })?;
        self.entries.push(entry);
        let i = self.entries.len() - 1;
        self.index_entry(i);
        Ok(id)
    }
}

// ---- turns: several messages appended in one write, once --------------------------------

/// What [`Session::append_turn`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnAppend {
    /// The ids of the turn's entries, in order.
    pub ids: Vec<String>,
    /// The turn was on the branch already (same key): nothing was written.
    pub duplicate: bool,
}

impl Session {
    /// The ids of the turn with this key on the leaf's branch, searched from the leaf back to
    /// `since` (an entry id, excluded: where the turn was to be appended) or the root. A cold
    /// session reads back only when the branch leaves the part it holds.
    pub fn find_turn(&mut self, key: &str, since: Option<&str>) -> Result<Option<Vec<String>>> {
        'walk: loop {
            // Entries from the leaf back, newest first.
            let mut newer: Vec<&str> = Vec::new();
            let mut at = self.leaf;
            let mut steps = 0usize;
            while let Some(i) = at {
                let entry = &self.entries[i];
                let Some(id) = entry.id.as_deref() else { break };
                if since == Some(id) || steps > self.entries.len() {
                    break; // reached `since`, or a cycle
                }
                steps += 1;
                if let Some(mark) = super::super::TurnMark::of_text(entry.text.as_str()) {
                    if mark.part == 1 && mark.key.as_deref() == Some(key) {
                        let later = usize::try_from(mark.of - 1).unwrap_or(usize::MAX);
                        let mut ids = vec![id.to_owned()];
                        ids.extend(newer.iter().rev().take(later).map(|s| (*s).to_owned()));
                        return Ok(Some(ids));
                    }
                }
                newer.push(id);
                at = match entry.parent_id.as_deref() {
                    None => None,
                    Some(parent) if parent == id => None,
                    Some(parent) => match self.index_of(parent) {
                        Some(p) => Some(p),
                        None if self.cold.is_some() => {
                            self.load_past()?;
                            continue 'walk;
                        }
                        None => None,
                    },
                };
            }
            return Ok(None);
        }
    }

    /// Appends `messages` as one turn: children of the leaf in order, the leaf moved to the
    /// last. Every message is checked and every line built before the file is touched; the
    /// lines go out in one locked write with one fsync, and memory changes only after it
    /// succeeded (a failed write is cut back off the file). `ids` are the new ids, one per
    /// message (drawn with [`Session::next_entry_id`]). With a `key`, a turn with that key
    /// already on the branch (see [`Session::find_turn`]) is not written again: its ids come
    /// back with `duplicate`. Entries of a turn of two or more carry the turn mark (see
    /// `session/turn.rs`), which lets an open drop a turn a crash cut short.
    pub fn append_turn(
        &mut self,
        messages: Vec<Value>,
        key: Option<&str>,
        since: Option<&str>,
        ids: Vec<String>,
        now_ms: i64,
    ) -> Result<TurnAppend> {
        self.check_writable()?;
        if ids.len() != messages.len() {
            return Err(Error::InvalidArgument(
                "one new id is needed per message".into(),
            ));
        }
        for (i, message) in messages.iter().enumerate() {
            validate_message(message).map_err(|e| match e {
                Error::InvalidArgument(reason) => {
                    Error::InvalidArgument(format!("message {i} of the turn: {reason}"))
                }
                other => other,
            })?;
        }
        if let Some(key) = key {
            if key.is_empty() {
                return Err(Error::InvalidArgument("the turn key is empty".into()));
            }
            if let Some(found) = self.find_turn(key, since)? {
                return Ok(TurnAppend {
                    ids: found,
                    duplicate: true,
                });
            }
        }
        if messages.is_empty() {
            return Ok(TurnAppend {
                ids: Vec::new(),
                duplicate: false,
            });
        }
        let mut seen = HashSet::new();
        for id in &ids {
            if id.is_empty() || self.index.contains(&self.entries, id.as_str()) || !seen.insert(id)
            {
                return Err(Error::InvalidArgument(format!(
                    "entry id {id:?} is empty or already used"
                )));
            }
        }
        self.check_migration_saved()?;
        let count = messages.len() as u64;
        let mut parent = self.leaf_id().map(str::to_owned);
        let mut texts = Vec::with_capacity(messages.len());
        let mut bytes = Vec::new();
        for (i, (message, id)) in messages.into_iter().zip(&ids).enumerate() {
            let mut value = entry_value(NewEntry::Message(message), id, parent.take(), now_ms);
            if count > 1 || key.is_some() {
                let mark = super::super::TurnMark {
                    key: (i == 0).then(|| key.map(str::to_owned)).flatten(),
                    part: i as u64 + 1,
                    of: count,
                };
                if let Value::Object(map) = &mut value {
                    map.insert(super::super::TURN_FIELD.to_owned(), mark.to_value());
                }
            }
            let text = to_js_string(&value);
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(b'\n');
            texts.push(text);
            parent = Some(id.clone());
        }
        // Parsed before the write: an entry that could not be read back fails the turn here.
        let mut entries = Vec::with_capacity(texts.len());
        for (i, text) in texts.into_iter().enumerate() {
            let entry = Entry::parse(JsonText::owned(text), 0).ok_or_else(|| {
                Error::InvalidArgument(format!("message {i} of the turn cannot be read back"))
            })?;
            entries.push(entry);
        }
        let mut line = self.disk_lines + 1;
        if let Some(path) = &self.path {
            let mut file = LockedFile::open(path, false, self.write.lock_timeout)?;
            // A turn a killed writer left cut short goes before ours follows it.
            file.cut_short_turn()?;
            let outcome = file.append_lines(&bytes, self.write.fsync)?;
            let nothing_unread = outcome.start == self.disk_len && self.tail_start == self.disk_len;
            if nothing_unread && !outcome.terminated_torn_line {
                self.disk_len = outcome.end;
                self.disk_lines += entries.len();
                let probe = probe_before(&bytes, bytes.len());
                self.record_tail(outcome.end, file.identity(), &probe);
            } else if outcome.terminated_torn_line {
                line += 1;
            }
        } else {
            self.disk_lines += entries.len();
        }
        for mut entry in entries {
            entry.line = line;
            line += 1;
            self.entries.push(entry);
            let i = self.entries.len() - 1;
            self.index_entry(i);
        }
        Ok(TurnAppend {
            ids,
            duplicate: false,
        })
    }
}

fn validate_message(message: &Value) -> Result<()> {
    let Some(obj) = message.as_object() else {
        return Err(Error::InvalidArgument("a message must be an object".into()));
    };
    match obj.get("role").and_then(Value::as_str).map(js_trim) {
        Some("branchSummary" | "compactionSummary") => Err(Error::InvalidArgument(
            "branchSummary and compactionSummary messages are synthesized from entries; use branch_with_summary() or append_compaction()".into(),
        )),
        Some(role) if !role.is_empty() => Ok(()),
        _ => Err(Error::InvalidArgument("a message needs a non-empty string \"role\"".into())),
    }
}

/// The entry object with pi's key order for each type (session-manager.ts).
fn entry_value(entry: NewEntry, id: &str, parent: Option<String>, now_ms: i64) -> Value {
    let head = |ty: &str| -> Vec<(&'static str, Option<Value>)> {
        vec![
            ("type", Some(Value::from(ty))),
            ("id", Some(Value::from(id))),
            (
                "parentId",
                Some(parent.clone().map_or(Value::Null, Value::from)),
            ),
            ("timestamp", Some(Value::from(ms_to_iso(now_ms)))),
        ]
    };
    let build = |fields: Vec<(&'static str, Option<Value>)>| -> Value {
        let mut map = Map::new();
        for (k, v) in fields {
            if let Some(v) = v {
                map.insert(k.to_owned(), v);
            }
        }
        Value::Object(map)
    };
    match entry {
        NewEntry::Message(message) => {
            build([head(types::MESSAGE), vec![("message", Some(message))]].concat())
        }
        NewEntry::ThinkingLevelChange(level) => build(
            [
                head(types::THINKING_LEVEL_CHANGE),
                vec![("thinkingLevel", Some(level.into()))],
            ]
            .concat(),
        ),
        NewEntry::ModelChange { provider, model_id } => build(
            [
                head(types::MODEL_CHANGE),
                vec![
                    ("provider", Some(provider.into())),
                    ("modelId", Some(model_id.into())),
                ],
            ]
            .concat(),
        ),
        NewEntry::Compaction {
            summary,
            first_kept_entry_id,
            tokens_before,
            details,
            from_hook,
        } => build(
            [
                head(types::COMPACTION),
                vec![
                    ("summary", Some(summary.into())),
                    ("firstKeptEntryId", Some(first_kept_entry_id.into())),
                    ("tokensBefore", Some(tokens_before)),
                    ("details", details),
                    ("fromHook", from_hook.map(Value::from)),
                ],
            ]
            .concat(),
        ),
        NewEntry::BranchSummary {
            branch_from,
            summary,
            details,
            from_hook,
        } => build(
            [
                head(types::BRANCH_SUMMARY),
                vec![
                    (
                        "fromId",
                        Some(branch_from.unwrap_or_else(|| "root".to_owned()).into()),
                    ),
                    ("summary", Some(summary.into())),
                    ("details", details),
                    ("fromHook", from_hook.map(Value::from)),
                ],
            ]
            .concat(),
        ),
        // custom and custom_message put their own fields before id/parentId/timestamp.
        NewEntry::Custom { custom_type, data } => {
            let mut fields = vec![
                ("type", Some(Value::from(types::CUSTOM))),
                ("customType", Some(custom_type.into())),
                ("data", data),
            ];
            fields.extend(head(types::CUSTOM).into_iter().skip(1));
            build(fields)
        }
        NewEntry::CustomMessage {
            custom_type,
            content,
            display,
            details,
        } => {
            let mut fields = vec![
                ("type", Some(Value::from(types::CUSTOM_MESSAGE))),
                ("customType", Some(custom_type.into())),
                ("content", Some(content)),
                ("display", Some(display.into())),
                ("details", details),
            ];
            fields.extend(head(types::CUSTOM_MESSAGE).into_iter().skip(1));
            build(fields)
        }
        NewEntry::Label { target_id, label } => build(
            [
                head(types::LABEL),
                vec![
                    ("targetId", Some(target_id.into())),
                    ("label", label.map(Value::from)),
                ],
            ]
            .concat(),
        ),
        NewEntry::SessionInfo { name } => build(
            [
                head(types::SESSION_INFO),
                vec![("name", Some(js_trim(&name).to_owned().into()))],
            ]
            .concat(),
        ),
    }
}
