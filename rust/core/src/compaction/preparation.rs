//! What a compaction summarizes and the entry it appends (pi-mono 0.58.3
//! `packages/coding-agent/src/core/compaction/compaction.ts`: `prepareCompaction`, `compact`;
//! `utils.ts`: file operations).

use std::collections::HashSet;

use serde_json::{json, Value};

use super::cut_point::{find_cut_point_by, CutPoint};
use super::prompts::SUMMARIZATION_SYSTEM_PROMPT;
use super::serialize::{
    compose_summary, history_prompt, serialize_conversation, turn_prefix_prompt,
};
use super::settings::CompactionSettings;
use crate::base::{is_truthy, object, to_js_string, JsonText};
use crate::session::{types, Entry};
use crate::session::{NewEntry, Session};
use crate::transcript::{estimate_context_tokens, message_compaction};
use crate::transcript::{Message, Transcript};

/// `getMessageFromEntry`: the message an entry contributes to a summary.
/// Unlike the context builder, a `branch_summary` with an empty summary still counts.
pub fn entry_message(entry: &Entry) -> Option<Message> {
    let timestamp = || Some(entry.timestamp_ms().map_or(Value::Null, Value::from));
    let get = |key: &str| entry.field(key).cloned();
    let value = match entry.entry_type().as_deref()? {
        types::MESSAGE => return entry.message().map(|m| m.json.clone()),
        types::CUSTOM_MESSAGE => object([
            ("role", Some(Value::from("custom"))),
            ("customType", get("customType")),
            ("content", get("content")),
            ("display", get("display")),
            ("details", get("details")),
            ("timestamp", timestamp()),
        ]),
        types::BRANCH_SUMMARY => object([
            ("role", Some(Value::from("branchSummary"))),
            ("summary", get("summary")),
            ("fromId", get("fromId")),
            ("timestamp", timestamp()),
        ]),
        types::COMPACTION => object([
            ("role", Some(Value::from("compactionSummary"))),
            ("summary", get("summary")),
            ("tokensBefore", get("tokensBefore")),
            ("timestamp", timestamp()),
        ]),
        _ => return None,
    };
    Some(Message::new(JsonText::owned(to_js_string(&value))))
}

/// JavaScript's default `Array.prototype.sort` order: UTF-16 code units.
pub(super) fn js_sort(items: &mut [String]) {
    items.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
}

/// pi's `FileOperations` (utils.ts, `extractFileOpsFromMessage`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOperations {
    pub read: HashSet<String>,
    pub written: HashSet<String>,
    pub edited: HashSet<String>,
}

impl FileOperations {
    /// A previous compaction's `details` (`readFiles` → read, `modifiedFiles` → edited), unless
    /// it came from a hook. Non-string list items are skipped (pi never writes them).
    pub fn add_compaction_details(&mut self, entry: &Entry) {
        if entry.field("fromHook").is_some_and(is_truthy) {
            return;
        }
        let Some(details) = entry.field("details").filter(|d| is_truthy(d)) else {
            return;
        };
        let strings = |key: &str| -> Vec<String> {
            details
                .get(key)
                .and_then(Value::as_array)
                .map(|files| {
                    files
                        .iter()
                        .filter_map(|f| f.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }

    /// `extractFileOpsFromMessage`: the string `arguments.path` of an assistant's `read`,
    /// `write` and `edit` tool calls.
    pub fn add_message(&mut self, message: &Message) {
        let facts = message.facts();
        if !facts.is_role("assistant") || !facts.has_input_tool_call_blocks {
            return;
        }
        let Ok(value) = message.to_value() else {
            return;
        };
        let Some(blocks) = value.get("content").and_then(Value::as_array) else {
            return;
        };
        for block in blocks {
            let Some(block) = block.as_object() else {
                continue;
            };
            if block.get("type").and_then(Value::as_str) != Some("toolCall")
                || !block.contains_key("name")
            {
                continue;
            }
            let Some(args) = block.get("arguments").filter(|a| is_truthy(a)) else {
                continue;
            };
            let Some(path) = args
                .get("path")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
            else {
                continue;
            };
            let set = match block.get("name").and_then(Value::as_str) {
                Some("read") => &mut self.read,
                Some("write") => &mut self.written,
                Some("edit") => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_owned());
        }
    }

    /// `computeFileLists`: `(readFiles, modifiedFiles)` = (sorted read − modified,
    /// sorted edited ∪ written).
    pub fn lists(&self) -> (Vec<String>, Vec<String>) {
        let modified: HashSet<&String> = self.edited.iter().chain(&self.written).collect();
        let mut read: Vec<String> = self
            .read
            .iter()
            .filter(|f| !modified.contains(f))
            .cloned()
            .collect();
        let mut modified: Vec<String> = modified.into_iter().cloned().collect();
        js_sort(&mut read);
        js_sort(&mut modified);
        (read, modified)
    }
}

/// Which summary a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryKind {
    /// The messages before the kept part (or before the split turn).
    History,
    /// The start of a split turn whose end is kept.
    TurnPrefix,
}

impl SummaryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryKind::History => "history",
            SummaryKind::TurnPrefix => "turn_prefix",
        }
    }
}

/// One summarization call pi would make (`generateSummary`): a single user message with `prompt`,
/// `system_prompt`, and at most `max_tokens` of output. pi asks for reasoning effort "high"
/// when the model supports reasoning.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    pub kind: SummaryKind,
    pub prompt: String,
    pub system_prompt: &'static str,
    pub max_tokens: u64,
    /// The messages the prompt serializes.
    pub messages: Transcript,
}

/// pi's `CompactionPreparation`, with the cut point it was made from. Indices are
/// positions in the path the preparation was made for.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation {
    pub cut: CutPoint,
    pub first_kept_entry_id: String,
    pub messages_to_summarize: Transcript,
    pub turn_prefix_messages: Transcript,
    pub previous_summary: Option<String>,
    pub tokens_before: u64,
    pub file_ops: FileOperations,
    pub settings: CompactionSettings,
    /// Index of the previous compaction (or OpenClaw `reset`, the latest boundary) in the path.
    pub previous_compaction_index: Option<usize>,
    /// Id of the path's last entry (the leaf the preparation is for).
    pub leaf_id: Option<String>,
}

/// `prepareCompaction(pathEntries, settings)`. `None` when the last entry is
/// a compaction, when the path is empty, or when the first kept entry has no id.
///
/// OpenClaw's `reset` entry is a boundary as a compaction is: the latest of the two bounds the
/// history (a reset gives no previous summary and no file lists), and a path ending in a
/// reset has nothing to compact.
pub fn prepare_compaction(path: &[&Entry], settings: &CompactionSettings) -> Option<Preparation> {
    if path.last()?.is_boundary() {
        return None;
    }
    let previous = path.iter().rposition(|e| e.is_boundary());
    let boundary_start = previous.map_or(0, |p| p + 1);
    let end = path.len();
    // Derived once for [max(prev, 0), end): the token estimate counts the previous compaction
    // as a compactionSummary message (pi's `tokensBefore`); facts are computed once and shared.
    let usage_start = previous.unwrap_or(0);
    let derived: Vec<Option<Message>> = path[usage_start..end]
        .iter()
        .map(|e| entry_message(e))
        .collect();
    let at = |i: usize| derived[i - usage_start].as_ref();
    let usage = Transcript::from_messages(derived.iter().flatten().cloned().collect());
    let tokens_before = estimate_context_tokens(&usage).tokens;

    // A provider compaction block with a readable summary (`transcript::COMPACTION_BLOCK_TYPE`)
    // is a boundary too: nothing before its message needs summarizing again, and its summary is
    // the previous summary. An opaque one (a Responses item) is not: a local compaction past it
    // replaces it, so the history it stands for is summarized here.
    let server = (boundary_start..end).rev().find_map(|i| {
        at(i)
            .and_then(message_compaction)
            .flatten()
            .map(|summary| (i, summary))
    });
    let boundary_start = server.as_ref().map_or(boundary_start, |(i, _)| *i);
    let cut = find_cut_point_by(
        path,
        boundary_start,
        end,
        settings.keep_recent_tokens,
        |i| at(i).map_or(0, |m| m.facts().pi_tokens()),
    );
    let first_kept_entry_id = path
        .get(cut.first_kept_entry_index)?
        .id
        .clone()
        .filter(|id| !id.is_empty())?;
    let collect = |range: std::ops::Range<usize>| {
        Transcript::from_messages(range.filter_map(|i| at(i).cloned()).collect())
    };
    let (history_end, turn_prefix_messages) = match cut.turn_start_index {
        Some(turn_start) if cut.is_split_turn => {
            (turn_start, collect(turn_start..cut.first_kept_entry_index))
        }
        _ => (cut.first_kept_entry_index, Transcript::default()),
    };
    let messages_to_summarize = collect(boundary_start..history_end);

    let mut file_ops = FileOperations::default();
    if let Some(p) = previous {
        file_ops.add_compaction_details(path[p]);
    }
    for message in messages_to_summarize
        .messages()
        .iter()
        .chain(turn_prefix_messages.messages())
    {
        file_ops.add_message(message);
    }
    Some(Preparation {
        cut,
        first_kept_entry_id: first_kept_entry_id.into(),
        messages_to_summarize,
        turn_prefix_messages,
        previous_summary: match server {
            Some((_, summary)) => Some(summary),
            None => previous.and_then(|p| path[p].str_field("summary").map(str::to_owned)),
        },
        tokens_before,
        file_ops,
        settings: *settings,
        previous_compaction_index: previous,
        leaf_id: path.last().and_then(|e| e.id.as_deref().map(str::to_owned)),
    })
}

/// [`prepare_compaction`] on a session's current branch (root → leaf).
pub fn prepare_session_compaction(
    session: &Session,
    settings: &CompactionSettings,
) -> Option<Preparation> {
    let leaf = session.leaf_index()?;
    let entries = session.stored_entries();
    let path: Vec<&Entry> = session
        .path_to(leaf)
        .into_iter()
        .map(|i| &entries[i])
        .collect();
    prepare_compaction(&path, settings)
}

impl Preparation {
    /// The summary calls pi's `compact()` makes: for a split turn with a prefix, a history
    /// request (only when there is history) and a turn-prefix request; otherwise one history
    /// request (even when nothing is to be summarized, as in pi).
    pub fn summary_requests(&self, custom_instructions: Option<&str>) -> Vec<SummaryRequest> {
        let history = || SummaryRequest {
            kind: SummaryKind::History,
            prompt: history_prompt(
                &serialize_conversation(&self.messages_to_summarize),
                self.previous_summary.as_deref(),
                custom_instructions,
            ),
            system_prompt: SUMMARIZATION_SYSTEM_PROMPT,
            max_tokens: self.settings.summary_max_tokens(),
            messages: self.messages_to_summarize.clone(),
        };
        if !self.cut.is_split_turn || self.turn_prefix_messages.is_empty() {
            return vec![history()];
        }
        let mut requests = Vec::with_capacity(2);
        if !self.messages_to_summarize.is_empty() {
            requests.push(history());
        }
        requests.push(SummaryRequest {
            kind: SummaryKind::TurnPrefix,
            prompt: turn_prefix_prompt(&serialize_conversation(&self.turn_prefix_messages)),
            system_prompt: SUMMARIZATION_SYSTEM_PROMPT,
            max_tokens: self.settings.turn_prefix_max_tokens(),
            messages: self.turn_prefix_messages.clone(),
        });
        requests
    }

    /// `(readFiles, modifiedFiles)`.
    pub fn file_lists(&self) -> (Vec<String>, Vec<String>) {
        self.file_ops.lists()
    }

    /// The compaction entry's `details`: `{readFiles, modifiedFiles}`.
    pub fn details(&self) -> Value {
        let (read, modified) = self.file_lists();
        json!({"readFiles": read, "modifiedFiles": modified})
    }

    /// The final summary (as pi's `compact` composes it) from the texts the requests produced.
    pub fn compose_summary(&self, history: Option<&str>, turn_prefix: Option<&str>) -> String {
        let (read, modified) = self.file_lists();
        compose_summary(history, turn_prefix, &read, &modified)
    }

    /// The `compaction` entry pi appends for `summary` (`fromHook: false`: pi's own summary).
    pub fn compaction_entry(&self, summary: String) -> NewEntry {
        NewEntry::Compaction {
            summary,
            first_kept_entry_id: self.first_kept_entry_id.clone(),
            tokens_before: Value::from(self.tokens_before),
            details: Some(self.details()),
            from_hook: Some(false),
        }
    }
}
