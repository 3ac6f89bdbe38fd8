//! Compaction planning (pi-mono 0.58.3 `packages/coding-agent/src/core/compaction/compaction.ts`
//! and `utils.ts`): the settings and the trigger (`shouldCompact`), the cut point and the
//! preparation (`findCutPoint`, `prepareCompaction`), and the summary requests, prompt texts and
//! final summary (`generateSummary`, `compact`). No model is called here: the caller
//! turns each [`SummaryRequest`] into text and hands the texts back to
//! [`Preparation::compose_summary`]; [`Preparation::compaction_entry`] is the entry pi appends.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::base::utf16_len;
use crate::base::{is_truthy, object, to_js_string, JsonText};
use crate::base::{Error, Result};
use crate::session::{types, Entry};
use crate::session::{NewEntry, Session};
use crate::transcript::convert_to_llm;
use crate::transcript::estimate_context_tokens;
use crate::transcript::{Message, Transcript};

// ---- format facts (pi's exact texts) ---------------------------------------------------------

/// `SUMMARIZATION_SYSTEM_PROMPT` (utils.ts): the system prompt of every summary request.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

/// `SUMMARIZATION_PROMPT`: the instructions of a first summary (no previous summary).
pub const SUMMARIZATION_PROMPT: &str = "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.\n\nUse this EXACT format:\n\n## Goal\n[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]\n\n## Constraints & Preferences\n- [Any constraints, preferences, or requirements mentioned by user]\n- [Or \"(none)\" if none were mentioned]\n\n## Progress\n### Done\n- [x] [Completed tasks/changes]\n\n### In Progress\n- [ ] [Current work]\n\n### Blocked\n- [Issues preventing progress, if any]\n\n## Key Decisions\n- **[Decision]**: [Brief rationale]\n\n## Next Steps\n1. [Ordered list of what should happen next]\n\n## Critical Context\n- [Any data, examples, or references needed to continue]\n- [Or \"(none)\" if not applicable]\n\nKeep each section concise. Preserve exact file paths, function names, and error messages.";

/// `UPDATE_SUMMARIZATION_PROMPT`: the instructions when a previous summary is merged.
pub const UPDATE_SUMMARIZATION_PROMPT: &str = "The messages above are NEW conversation messages to incorporate into the existing summary provided in <previous-summary> tags.\n\nUpdate the existing structured summary with new information. RULES:\n- PRESERVE all existing information from the previous summary\n- ADD new progress, decisions, and context from the new messages\n- UPDATE the Progress section: move items from \"In Progress\" to \"Done\" when completed\n- UPDATE \"Next Steps\" based on what was accomplished\n- PRESERVE exact file paths, function names, and error messages\n- If something is no longer relevant, you may remove it\n\nUse this EXACT format:\n\n## Goal\n[Preserve existing goals, add new ones if the task expanded]\n\n## Constraints & Preferences\n- [Preserve existing, add new ones discovered]\n\n## Progress\n### Done\n- [x] [Include previously done items AND newly completed items]\n\n### In Progress\n- [ ] [Current work - update based on progress]\n\n### Blocked\n- [Current blockers - remove if resolved]\n\n## Key Decisions\n- **[Decision]**: [Brief rationale] (preserve all previous, add new)\n\n## Next Steps\n1. [Update based on current state]\n\n## Critical Context\n- [Preserve important context, add new if needed]\n\nKeep each section concise. Preserve exact file paths, function names, and error messages.";

/// `TURN_PREFIX_SUMMARIZATION_PROMPT`: the instructions for the prefix of a split turn.
pub const TURN_PREFIX_SUMMARIZATION_PROMPT: &str = "This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.\n\nSummarize the prefix to provide context for the retained suffix:\n\n## Original Request\n[What did the user ask for in this turn?]\n\n## Early Progress\n- [Key decisions and work done in the prefix]\n\n## Context for Suffix\n- [Information needed to understand the retained recent work]\n\nBe concise. Focus on what's needed to understand the kept suffix.";

/// The history summary of a split turn with nothing before the turn (`compact`).
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// Joins the history summary and the turn-prefix summary of a split turn (`compact`).
pub const TURN_CONTEXT_SEPARATOR: &str = "\n\n---\n\n**Turn Context (split turn):**\n\n";

/// Tool results are cut to this many UTF-16 units when serialized (utils.ts,
/// `serializeConversation`).
pub const TOOL_RESULT_MAX_CHARS: u64 = 2000;

// ---- settings and trigger (compaction.ts: DEFAULT_COMPACTION_SETTINGS, shouldCompact) -------

/// pi's `DEFAULT_COMPACTION_SETTINGS.reserveTokens`.
pub const DEFAULT_RESERVE_TOKENS: u64 = 16384;
/// pi's `DEFAULT_COMPACTION_SETTINGS.keepRecentTokens`.
pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20000;
/// OpenClaw's `DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR`.
pub const DEFAULT_RESERVE_TOKENS_FLOOR: u64 = 20000;

/// pi's `CompactionSettings` (`DEFAULT_COMPACTION_SETTINGS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionSettings {
    pub enabled: bool,
    /// Tokens kept free for the model's answer (and the summary budget). Signed: pi-mono
    /// 0.58.3 `compaction.ts` (`shouldCompact`) computes with any number, a negative one too.
    pub reserve_tokens: i64,
    /// Tokens of recent messages kept verbatim.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: DEFAULT_RESERVE_TOKENS as i64,
            keep_recent_tokens: DEFAULT_KEEP_RECENT_TOKENS,
        }
    }
}

impl CompactionSettings {
    /// OpenClaw's `ensurePiCompactionReserveTokens`: `reserve_tokens` raised to at least
    /// `floor` (a larger value is kept).
    pub fn with_reserve_floor(self, floor: u64) -> Self {
        CompactionSettings {
            reserve_tokens: self
                .reserve_tokens
                .max(i64::try_from(floor).unwrap_or(i64::MAX)),
            ..self
        }
    }

    /// `maxTokens` of the history summary: `floor(0.8 × reserveTokens)` (`generateSummary`).
    pub fn summary_max_tokens(&self) -> u64 {
        (0.8 * self.reserve_tokens as f64).floor() as u64
    }

    /// `maxTokens` of the turn-prefix summary: `floor(0.5 × reserveTokens)`.
    pub fn turn_prefix_max_tokens(&self) -> u64 {
        (0.5 * self.reserve_tokens as f64).floor() as u64
    }

    /// The settings in pi's camelCase shape.
    pub fn to_value(&self) -> Value {
        json!({
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        })
    }

    /// Settings from pi's shape (`enabled`, `reserveTokens`, `keepRecentTokens`; missing keys
    /// take the defaults) or OpenClaw's `agents.defaults.compaction`, whose
    /// `reserveTokensFloor` is applied when present. Other keys are ignored, so a whole
    /// OpenClaw compaction config can be passed.
    pub fn from_value(value: &Value) -> Result<Self> {
        let Some(map) = value.as_object() else {
            return Err(Error::InvalidArgument(
                "compaction settings must be an object".into(),
            ));
        };
        let count = |key: &str, default: u64| -> Result<u64> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(v) => v.as_u64().ok_or_else(|| {
                    Error::InvalidArgument(format!("{key} must be a non-negative integer"))
                }),
            }
        };
        let enabled = match map.get("enabled") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(Error::InvalidArgument("enabled must be a boolean".into())),
        };
        let settings = CompactionSettings {
            enabled,
            reserve_tokens: match map.get("reserveTokens") {
                None | Some(Value::Null) => DEFAULT_RESERVE_TOKENS as i64,
                Some(v) => v.as_i64().ok_or_else(|| {
                    Error::InvalidArgument("reserveTokens must be an integer".into())
                })?,
            },
            keep_recent_tokens: count("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS)?,
        };
        Ok(match map.get("reserveTokensFloor") {
            None | Some(Value::Null) => settings,
            Some(_) => settings.with_reserve_floor(count("reserveTokensFloor", 0)?),
        })
    }
}

/// `shouldCompact`: enabled and `context_tokens > context_window − reserve`
/// (strictly greater).
pub fn should_compact(
    context_tokens: f64,
    context_window: f64,
    settings: &CompactionSettings,
) -> bool {
    settings.enabled && context_tokens > context_window - settings.reserve_tokens as f64
}

// ---- cut point (compaction.ts: findCutPoint, findValidCutPoints, findTurnStartIndex) --------

/// pi's `CutPointResult`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// Index of the first entry kept verbatim.
    pub first_kept_entry_index: usize,
    /// The entry that starts the turn being split (`None` = JavaScript's −1).
    pub turn_start_index: Option<usize>,
    /// The cut lands inside a turn (the cut entry is not a user message).
    pub is_split_turn: bool,
}

fn message_role(entry: &Entry) -> Option<&str> {
    if !entry.is_type(types::MESSAGE) {
        return None;
    }
    entry.message().and_then(|m| m.role.as_deref())
}

/// `findValidCutPoints`: messages of the roles that may open the kept part (never a tool
/// result, which must follow its call), plus `branch_summary` and `custom_message` entries.
fn is_valid_cut_point(entry: &Entry) -> bool {
    matches!(
        message_role(entry),
        Some(
            "bashExecution"
                | "custom"
                | "branchSummary"
                | "compactionSummary"
                | "user"
                | "assistant"
        )
    ) || entry.is_type(types::BRANCH_SUMMARY)
        || entry.is_type(types::CUSTOM_MESSAGE)
}

/// `findTurnStartIndex`'s test: user-role entries start a turn.
fn is_turn_start(entry: &Entry) -> bool {
    matches!(message_role(entry), Some("user" | "bashExecution"))
        || entry.is_type(types::BRANCH_SUMMARY)
        || entry.is_type(types::CUSTOM_MESSAGE)
}

/// pi's `estimateTokens` of a `message` entry's message (0 when it has none).
fn entry_message_tokens(entry: &Entry) -> u64 {
    entry.message().map_or(0, |m| m.json.facts().pi_tokens())
}

/// `findCutPoint(entries, start, end, keepRecentTokens)`, over `entries[start..end]`
/// (`end` is clamped to the length).
pub fn find_cut_point(
    entries: &[&Entry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    find_cut_point_by(entries, start, end, keep_recent_tokens, |i| {
        entry_message_tokens(entries[i])
    })
}

/// [`find_cut_point`] with the token estimate of the `message` entry at an index supplied by
/// the caller (the preparation reuses the messages it derived, facts cached).
fn find_cut_point_by(
    entries: &[&Entry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
    tokens: impl Fn(usize) -> u64,
) -> CutPoint {
    let end = end.min(entries.len());
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| is_valid_cut_point(entries[i]))
        .collect();
    let Some(&first) = cut_points.first() else {
        return CutPoint {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };
    // Walk back from the newest entry, summing message entries only; at the first index where
    // the sum reaches the budget, cut at the first cut point at or after it. Quirk: with no
    // such cut point (or when the budget is never reached) the cut stays at the first one.
    let mut cut = first;
    let mut accumulated = 0u64;
    for i in (start..end).rev() {
        if !entries[i].is_type(types::MESSAGE) {
            continue;
        }
        accumulated += tokens(i);
        if accumulated >= keep_recent_tokens {
            if let Some(&c) = cut_points.get(cut_points.partition_point(|&c| c < i)) {
                cut = c;
            }
            break;
        }
    }
    // Take in the non-message entries (settings changes, labels, custom_message, ...) right
    // before the cut, up to a message, a compaction or the start.
    while cut > start {
        let previous = entries[cut - 1];
        if previous.is_type(types::COMPACTION) || previous.is_type(types::MESSAGE) {
            break;
        }
        cut -= 1;
    }
    let turn_start = if message_role(entries[cut]) == Some("user") {
        None
    } else {
        (start..=cut).rev().find(|&i| is_turn_start(entries[i]))
    };
    CutPoint {
        first_kept_entry_index: cut,
        turn_start_index: turn_start,
        is_split_turn: turn_start.is_some(),
    }
}

// ---- preparation (compaction.ts: prepareCompaction; utils.ts: file operations) --------------

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
fn js_sort(items: &mut [String]) {
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
    /// Index of the previous compaction in the path.
    pub previous_compaction_index: Option<usize>,
    /// Id of the path's last entry (the leaf the preparation is for).
    pub leaf_id: Option<String>,
}

/// `prepareCompaction(pathEntries, settings)`. `None` when the last entry is
/// a compaction, when the path is empty, or when the first kept entry has no id.
pub fn prepare_compaction(path: &[&Entry], settings: &CompactionSettings) -> Option<Preparation> {
    if path.last()?.is_type(types::COMPACTION) {
        return None;
    }
    let previous = path.iter().rposition(|e| e.is_type(types::COMPACTION));
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
        previous_summary: previous.and_then(|p| path[p].str_field("summary").map(str::to_owned)),
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

// ---- serialization and prompts (utils.ts: serializeConversation; compaction.ts) -------------

/// JavaScript's `String(value)` of a JSON value (`Array.prototype.join` of an array).
fn js_to_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => to_js_string(value),
        Value::Array(items) => items
            .iter()
            .map(|v| join_element(Some(v)))
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// An element as `Array.prototype.join` writes it: `undefined` and `null` are empty.
fn join_element(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(v) => js_to_string(v),
    }
}

/// A template-literal operand: `${undefined}` is `"undefined"`.
fn template(value: Option<&Value>) -> String {
    value.map_or_else(|| "undefined".to_owned(), js_to_string)
}

/// The `text` of the `text` blocks, concatenated (a string content is taken as it is).
fn text_content(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .map(|b| join_element(b.get("text")))
            .collect(),
        _ => String::new(),
    }
}

/// `truncateForSummary`: the first `max` UTF-16 units and a note of how many were cut. A
/// surrogate pair straddling the cut is kept whole (JavaScript would leave half of it).
fn truncate_for_summary(text: &str, max: u64) -> String {
    let length = utf16_len(text);
    if length <= max {
        return text.to_owned();
    }
    let mut units = 0u64;
    let mut cut = text.len();
    for (i, c) in text.char_indices() {
        if units >= max {
            cut = i;
            break;
        }
        units += c.len_utf16() as u64;
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..cut],
        length - max
    )
}

/// `name(k=<JSON v>, ...)` of a tool call.
fn tool_call_text(block: &Map<String, Value>) -> String {
    let args = match block.get("arguments") {
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", to_js_string(v)))
            .collect::<Vec<_>>(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{i}={}", to_js_string(v)))
            .collect(),
        // JavaScript's Object.entries throws for null/undefined and finds nothing useful in
        // other scalars: no arguments.
        _ => Vec::new(),
    };
    format!("{}({})", template(block.get("name")), args.join(", "))
}

/// `serializeConversation(convertToLlm(messages))` (utils.ts). Messages that are already
/// LLM messages pass through the conversion unchanged. Differences from JavaScript, where it
/// would throw: a tool result with string content is serialized as that text; non-object
/// blocks and non-array contents are skipped.
pub fn serialize_conversation(messages: &Transcript) -> String {
    let llm = convert_to_llm(messages);
    let mut parts: Vec<String> = Vec::with_capacity(llm.len());
    for message in llm.messages() {
        let Ok(value) = message.to_value() else {
            continue;
        };
        match value.get("role").and_then(Value::as_str) {
            Some("user") => {
                let content = text_content(value.get("content"));
                if !content.is_empty() {
                    parts.push(format!("[User]: {content}"));
                }
            }
            Some("assistant") => {
                let (mut text, mut thinking, mut calls) = (Vec::new(), Vec::new(), Vec::new());
                let blocks = value.get("content").and_then(Value::as_array);
                for block in blocks.into_iter().flatten().filter_map(Value::as_object) {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => text.push(join_element(block.get("text"))),
                        Some("thinking") => thinking.push(join_element(block.get("thinking"))),
                        Some("toolCall") => calls.push(tool_call_text(block)),
                        _ => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Some("toolResult") => {
                let content = text_content(value.get("content"));
                if !content.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate_for_summary(&content, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
            _ => {}
        }
    }
    parts.join("\n\n")
}

/// The history summary prompt (`generateSummary`): the conversation, the previous summary if any
/// (non-empty), and the initial or update instructions with the optional additional focus.
pub fn history_prompt(
    conversation: &str,
    previous_summary: Option<&str>,
    custom_instructions: Option<&str>,
) -> String {
    let previous = previous_summary.filter(|s| !s.is_empty());
    let mut prompt = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(previous) = previous {
        prompt.push_str("<previous-summary>\n");
        prompt.push_str(previous);
        prompt.push_str("\n</previous-summary>\n\n");
    }
    prompt.push_str(if previous.is_some() {
        UPDATE_SUMMARIZATION_PROMPT
    } else {
        SUMMARIZATION_PROMPT
    });
    if let Some(focus) = custom_instructions.filter(|s| !s.is_empty()) {
        prompt.push_str("\n\nAdditional focus: ");
        prompt.push_str(focus);
    }
    prompt
}

/// The turn-prefix summary prompt: the conversation and the turn-prefix instructions.
pub fn turn_prefix_prompt(conversation: &str) -> String {
    format!("<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}")
}

/// `formatFileOperations` (utils.ts): `""`, or `"\n\n"` and the non-empty sections.
pub fn format_file_operations(read_files: &[String], modified_files: &[String]) -> String {
    let mut sections = Vec::with_capacity(2);
    if !read_files.is_empty() {
        sections.push(format!(
            "<read-files>\n{}\n</read-files>",
            read_files.join("\n")
        ));
    }
    if !modified_files.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            modified_files.join("\n")
        ));
    }
    if sections.is_empty() {
        return String::new();
    }
    format!("\n\n{}", sections.join("\n\n"))
}

/// The final summary (`compact`). With a turn-prefix summary: the history summary (or
/// `"No prior history."` when there is none), the split-turn separator and the prefix summary;
/// otherwise the history summary. Then the file lists.
pub fn compose_summary(
    history: Option<&str>,
    turn_prefix: Option<&str>,
    read_files: &[String],
    modified_files: &[String],
) -> String {
    let mut summary = match turn_prefix {
        Some(prefix) => format!(
            "{}{TURN_CONTEXT_SEPARATOR}{prefix}",
            history.unwrap_or(NO_PRIOR_HISTORY)
        ),
        None => history.unwrap_or_default().to_owned(),
    };
    summary.push_str(&format_file_operations(read_files, modified_files));
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::IdSource;
    use crate::session::index_entries;
    use crate::session::{build_session_context, LeafSelector};

    /// Entries as pi's tests build them: ids `test-id-N`, each the child of the previous one.
    struct Builder {
        entries: Vec<Entry>,
    }

    impl Builder {
        fn new() -> Self {
            Builder {
                entries: Vec::new(),
            }
        }

        fn push(&mut self, mut fields: Value) -> String {
            let id = format!("test-id-{}", self.entries.len());
            let parent = self
                .entries
                .last()
                .and_then(|e| e.id.as_deref().map(str::to_owned));
            let map = fields.as_object_mut().unwrap();
            map.insert("id".into(), id.clone().into());
            map.insert("parentId".into(), parent.map_or(Value::Null, Value::from));
            map.insert("timestamp".into(), "2026-01-01T00:00:00.000Z".into());
            self.entries.push(Entry::from_value(&fields, 0).unwrap());
            id
        }

        fn message(&mut self, message: Value) -> String {
            self.push(json!({"type": "message", "message": message}))
        }

        fn user(&mut self, text: &str) -> String {
            self.message(json!({"role": "user", "content": text, "timestamp": 1}))
        }

        fn assistant(&mut self, text: &str) -> String {
            self.message(assistant_blocks(json!([{"type": "text", "text": text}])))
        }

        fn refs(&self) -> Vec<&Entry> {
            self.entries.iter().collect()
        }
    }

    fn assistant_blocks(blocks: Value) -> Value {
        json!({"role": "assistant", "content": blocks, "provider": "anthropic",
               "model": "claude-sonnet-4-5", "stopReason": "stop", "timestamp": 2})
    }

    fn tool_call(name: &str, path: &str) -> Value {
        json!({"type": "toolCall", "id": format!("c-{name}-{path}"), "name": name,
               "arguments": {"path": path}})
    }

    fn roles(t: &Transcript) -> Vec<String> {
        (0..t.len())
            .map(|i| t.role(i).unwrap_or_default())
            .collect()
    }

    #[test]
    fn should_compact_is_strict() {
        let s = CompactionSettings {
            enabled: true,
            reserve_tokens: 10000,
            keep_recent_tokens: 20000,
        };
        assert!(should_compact(95000.0, 100000.0, &s));
        assert!(!should_compact(89000.0, 100000.0, &s));
        assert!(!should_compact(90000.0, 100000.0, &s));
        assert!(should_compact(90000.5, 100000.0, &s));
        let off = CompactionSettings {
            enabled: false,
            ..s
        };
        assert!(!should_compact(95000.0, 100000.0, &off));
    }

    #[test]
    fn settings_defaults_floor_and_budgets() {
        let s = CompactionSettings::default();
        assert_eq!((s.reserve_tokens, s.keep_recent_tokens), (16384, 20000));
        assert_eq!(s.summary_max_tokens(), 13107);
        assert_eq!(s.turn_prefix_max_tokens(), 8192);
        assert_eq!(
            s.with_reserve_floor(DEFAULT_RESERVE_TOKENS_FLOOR)
                .reserve_tokens,
            20000
        );
        let big = CompactionSettings {
            reserve_tokens: 32000,
            ..s
        };
        assert_eq!(big.with_reserve_floor(20000).reserve_tokens, 32000);
        let parsed =
            CompactionSettings::from_value(&json!({"reserveTokensFloor": 24000, "mode": "x"}))
                .unwrap();
        assert_eq!(parsed.reserve_tokens, 24000);
        assert_eq!(CompactionSettings::from_value(&s.to_value()).unwrap(), s);
        // pi computes with a negative reserve too (conformance case pi_should_compact-052).
        assert_eq!(
            CompactionSettings::from_value(&json!({"reserveTokens": -1}))
                .unwrap()
                .reserve_tokens,
            -1
        );
        assert!(CompactionSettings::from_value(&json!({"reserveTokens": 1.5})).is_err());
        assert!(CompactionSettings::from_value(&json!({"enabled": 1})).is_err());
    }

    #[test]
    fn cut_point_in_ten_turns_is_a_user_or_assistant_message() {
        let mut b = Builder::new();
        for i in 0..10 {
            b.user(&format!("User {i}"));
            b.assistant(&format!("Assistant {i}"));
        }
        let cut = find_cut_point(&b.refs(), 0, b.entries.len(), 2500);
        let role = message_role(&b.entries[cut.first_kept_entry_index]);
        assert!(matches!(role, Some("user" | "assistant")));
        // Users are 2 tokens, assistants 3: from the end the sum is 3, 5, 8, 10, 13, ... A
        // budget of 10 is reached at the user message 16 (not split); 11 at the assistant 15,
        // which splits the turn that user message 14 started.
        let cut = find_cut_point(&b.refs(), 0, b.entries.len(), 10);
        assert_eq!(
            cut,
            CutPoint {
                first_kept_entry_index: 16,
                turn_start_index: None,
                is_split_turn: false
            }
        );
        let cut = find_cut_point(&b.refs(), 0, b.entries.len(), 11);
        assert_eq!(cut.first_kept_entry_index, 15);
        assert_eq!(cut.turn_start_index, Some(14));
        assert!(cut.is_split_turn);
    }

    #[test]
    fn cut_point_small_cases() {
        let mut b = Builder::new();
        b.assistant("a");
        assert_eq!(
            find_cut_point(&b.refs(), 0, 1, 1000).first_kept_entry_index,
            0
        );
        let mut b = Builder::new();
        for t in ["1", "a", "2", "b"] {
            if t.parse::<u8>().is_ok() {
                b.user(t);
            } else {
                b.assistant(t);
            }
        }
        let cut = find_cut_point(&b.refs(), 0, 4, 50000);
        assert_eq!(cut.first_kept_entry_index, 0);
        assert!(!cut.is_split_turn);
        // No valid cut point: the start, not split.
        let mut b = Builder::new();
        b.message(json!({"role": "toolResult", "toolCallId": "x", "content": []}));
        b.push(json!({"type": "label", "targetId": "test-id-0", "label": "l"}));
        let cut = find_cut_point(&b.refs(), 1, 2, 0);
        assert_eq!(
            cut,
            CutPoint {
                first_kept_entry_index: 1,
                turn_start_index: None,
                is_split_turn: false
            }
        );
    }

    #[test]
    fn split_turn_starts_at_the_turns_user_message() {
        let mut b = Builder::new();
        b.user("Turn 1");
        b.assistant("A1");
        b.user("Turn 2");
        b.assistant(&"x".repeat(4000)); // 1000 tokens
        b.assistant(&"y".repeat(4000));
        b.assistant(&"z".repeat(4000));
        let cut = find_cut_point(&b.refs(), 0, 6, 3000);
        assert_eq!(cut.first_kept_entry_index, 3);
        assert_eq!(cut.turn_start_index, Some(2));
        assert!(cut.is_split_turn);
    }

    #[test]
    fn cut_takes_in_preceding_non_message_entries_and_never_a_tool_result() {
        let mut b = Builder::new();
        b.user("u1");
        b.message(assistant_blocks(json!([tool_call("read", "/a")])));
        b.message(json!({"role": "toolResult", "toolCallId": "c-read-/a", "content": [{"type": "text", "text": "r".repeat(400)}]}));
        b.push(json!({"type": "model_change", "provider": "p", "modelId": "m"}));
        b.push(json!({"type": "thinking_level_change", "thinkingLevel": "high"}));
        b.user("u2");
        // The tool result (100 tokens) reaches the budget at index 2: the first cut point at
        // or after it is the user message at 5, extended back over the two settings entries.
        let cut = find_cut_point(&b.refs(), 0, 6, 50);
        assert_eq!(cut.first_kept_entry_index, 3);
        // The cut entry is not a user message, so the turn is "split" from u1 (upstream quirk).
        assert_eq!(cut.turn_start_index, Some(0));
        assert!(cut.is_split_turn);
        // Extension stops at the range start.
        let cut = find_cut_point(&b.refs(), 4, 6, 1);
        assert_eq!(cut.first_kept_entry_index, 4);
        assert_eq!(cut.turn_start_index, None);
    }

    #[test]
    fn budget_reached_past_the_last_cut_point_falls_back_to_the_first() {
        let mut b = Builder::new();
        b.user("u");
        b.message(assistant_blocks(json!([tool_call("read", "/a")])));
        b.message(json!({"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": "r".repeat(400)}]}));
        // Reached at the tool result (index 2): no cut point at or after it, so the cut stays
        // at the first cut point and everything is kept.
        let cut = find_cut_point(&b.refs(), 0, 3, 10);
        assert_eq!(cut.first_kept_entry_index, 0);
        assert!(!cut.is_split_turn);
    }

    #[test]
    fn entry_messages_for_summaries() {
        let mut b = Builder::new();
        b.push(json!({"type": "branch_summary", "fromId": "root", "summary": ""}));
        b.push(
            json!({"type": "custom_message", "customType": "t", "content": "c", "display": true}),
        );
        b.push(json!({"type": "compaction", "summary": "S", "firstKeptEntryId": "x", "tokensBefore": 5}));
        b.push(json!({"type": "label", "targetId": "x"}));
        let m: Vec<Option<Value>> = b
            .entries
            .iter()
            .map(|e| entry_message(e).map(|m| m.to_value().unwrap()))
            .collect();
        assert_eq!(
            m[0],
            Some(
                json!({"role": "branchSummary", "summary": "", "fromId": "root", "timestamp": 1767225600000i64})
            )
        );
        assert_eq!(
            m[1],
            Some(
                json!({"role": "custom", "customType": "t", "content": "c", "display": true, "timestamp": 1767225600000i64})
            )
        );
        assert_eq!(
            m[2],
            Some(
                json!({"role": "compactionSummary", "summary": "S", "tokensBefore": 5, "timestamp": 1767225600000i64})
            )
        );
        assert_eq!(m[3], None);
    }

    #[test]
    fn preparation_without_previous_compaction() {
        let mut b = Builder::new();
        b.user("u1");
        b.message(assistant_blocks(json!([
            tool_call("read", "/r"),
            tool_call("edit", "/e"),
            tool_call("read", "/e")
        ])));
        b.user(&"u".repeat(400));
        b.assistant(&"a".repeat(400));
        let settings = CompactionSettings {
            keep_recent_tokens: 150,
            ..Default::default()
        };
        let prep = prepare_compaction(&b.refs(), &settings).unwrap();
        assert_eq!(prep.cut.first_kept_entry_index, 2);
        assert_eq!(prep.first_kept_entry_id, "test-id-2");
        assert!(!prep.cut.is_split_turn);
        assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
        assert!(prep.turn_prefix_messages.is_empty());
        assert_eq!(prep.previous_summary, None);
        // No usage: the estimate of every message; the calls are 3 × (4 + 13) chars.
        assert_eq!(prep.tokens_before, 1 + 13 + 100 + 100);
        assert_eq!(
            prep.file_lists(),
            (vec!["/r".to_owned()], vec!["/e".to_owned()])
        );
        let requests = prep.summary_requests(Some("focus"));
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].kind, SummaryKind::History);
        assert_eq!(requests[0].max_tokens, 13107);
        assert!(requests[0]
            .prompt
            .starts_with("<conversation>\n[User]: u1\n\n[Assistant tool calls]: read(path=\"/r\"); edit(path=\"/e\"); read(path=\"/e\")\n</conversation>\n\nThe messages above are a conversation"));
        assert!(requests[0]
            .prompt
            .ends_with("error messages.\n\nAdditional focus: focus"));
        assert_eq!(
            prep.compose_summary(Some("S"), None),
            "S\n\n<read-files>\n/r\n</read-files>\n\n<modified-files>\n/e\n</modified-files>"
        );
    }

    #[test]
    fn preparation_after_a_compaction_skips_what_it_kept() {
        let mut b = Builder::new();
        b.user("1");
        b.assistant("a");
        let u2 = b.user("2");
        b.message(assistant_blocks(json!([tool_call("write", "/w")])));
        b.push(json!({"type": "compaction", "summary": "First", "firstKeptEntryId": u2,
                      "tokensBefore": 9, "details": {"readFiles": ["/old", 3], "modifiedFiles": ["/m"]}}));
        b.user(&"3".repeat(40));
        b.assistant(&"c".repeat(40));
        b.user(&"4".repeat(40));
        b.assistant(&"d".repeat(40));
        let settings = CompactionSettings {
            keep_recent_tokens: 20,
            ..Default::default()
        };
        let prep = prepare_compaction(&b.refs(), &settings).unwrap();
        assert_eq!(prep.previous_compaction_index, Some(4));
        assert_eq!(prep.previous_summary.as_deref(), Some("First"));
        assert_eq!(prep.cut.first_kept_entry_index, 7);
        // Upstream quirk of `prepareCompaction`: u2 and its assistant (kept by the first
        // compaction) are not summarized.
        assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
        // tokensBefore counts the previous compaction as a compactionSummary (ceil(5/4) = 2).
        assert_eq!(prep.tokens_before, 2 + 4 * 10);
        assert_eq!(
            prep.file_lists(),
            (vec!["/old".to_owned()], vec!["/m".to_owned()])
        );
        let prompt = &prep.summary_requests(None)[0].prompt;
        assert!(prompt.contains(
            "</conversation>\n\n<previous-summary>\nFirst\n</previous-summary>\n\nThe messages above are NEW"
        ));
        // fromHook compactions contribute no file lists.
        b.entries[4] = Entry::from_value(
            &json!({"type": "compaction", "id": "test-id-4", "parentId": "test-id-3",
                    "summary": "First", "firstKeptEntryId": "test-id-2", "tokensBefore": 9,
                    "fromHook": true, "details": {"readFiles": ["/old"]}}),
            0,
        )
        .unwrap();
        let prep = prepare_compaction(&b.refs(), &settings).unwrap();
        assert_eq!(prep.file_lists(), (vec![], vec![]));
    }

    #[test]
    fn preparation_of_a_split_turn() {
        let mut b = Builder::new();
        b.user("old");
        b.assistant("old answer");
        b.user("Turn 2");
        b.message(assistant_blocks(json!([tool_call("read", "/p")])));
        b.assistant(&"y".repeat(4000));
        b.assistant(&"z".repeat(4000));
        let settings = CompactionSettings {
            keep_recent_tokens: 1500,
            ..Default::default()
        };
        let prep = prepare_compaction(&b.refs(), &settings).unwrap();
        assert_eq!(prep.cut.first_kept_entry_index, 4);
        assert_eq!(prep.cut.turn_start_index, Some(2));
        assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
        assert_eq!(roles(&prep.turn_prefix_messages), ["user", "assistant"]);
        assert_eq!(prep.file_lists().0, vec!["/p".to_owned()]);
        let requests = prep.summary_requests(Some("ignored for the prefix"));
        let kinds: Vec<_> = requests.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [SummaryKind::History, SummaryKind::TurnPrefix]);
        assert_eq!(requests[1].max_tokens, 8192);
        assert_eq!(
            requests[1].prompt,
            format!(
                "<conversation>\n[User]: Turn 2\n\n[Assistant tool calls]: read(path=\"/p\")\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"
            )
        );
        assert_eq!(
            prep.compose_summary(Some("H"), Some("P")),
            "H\n\n---\n\n**Turn Context (split turn):**\n\nP\n\n<read-files>\n/p\n</read-files>"
        );
        // A split turn at the start: nothing to summarize before it, one request.
        let mut b = Builder::new();
        b.user("Turn");
        b.assistant(&"y".repeat(4000));
        b.assistant(&"z".repeat(4000));
        let prep = prepare_compaction(&b.refs(), &settings).unwrap();
        assert!(prep.messages_to_summarize.is_empty());
        let requests = prep.summary_requests(None);
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].kind, SummaryKind::TurnPrefix);
        assert_eq!(
            prep.compose_summary(None, Some("P")),
            "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nP"
        );
    }

    #[test]
    fn nothing_to_prepare() {
        let mut b = Builder::new();
        assert!(prepare_compaction(&b.refs(), &CompactionSettings::default()).is_none());
        b.user("u");
        b.push(json!({"type": "compaction", "summary": "S", "firstKeptEntryId": "test-id-0", "tokensBefore": 1}));
        assert!(prepare_compaction(&b.refs(), &CompactionSettings::default()).is_none());
        // An entry without an id where the cut lands: "needs migration".
        let entry = Entry::from_value(
            &json!({"type": "message", "message": {"role": "user", "content": "x"}}),
            0,
        )
        .unwrap();
        assert!(prepare_compaction(&[&entry], &CompactionSettings::default()).is_none());
    }

    #[test]
    fn serialization_rules() {
        let t = Transcript::from_values(&[
            json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}),
            json!({"role": "user", "content": ""}),
            assistant_blocks(json!([
                {"type": "thinking", "thinking": "t1"}, {"type": "text", "text": "x"},
                {"type": "thinking", "thinking": "t2"}, {"type": "text", "text": "y"},
                {"type": "toolCall", "name": "bash", "arguments": {"cmd": "ls", "n": 1.0, "o": {"k": [true]}}}
            ])),
            json!({"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": "ok"}]}),
            json!({"role": "toolResult", "toolCallId": "c", "content": []}),
            json!({"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0}),
            json!({"role": "mystery"}),
        ]);
        assert_eq!(
            serialize_conversation(&t),
            "[User]: ab\n\n[Assistant thinking]: t1\nt2\n\n[Assistant]: x\ny\n\n[Assistant tool calls]: bash(cmd=\"ls\", n=1, o={\"k\":[true]})\n\n[Tool result]: ok\n\n[User]: Ran `ls`\n(no output)"
        );
    }

    #[test]
    fn tool_results_are_truncated_to_2000_units() {
        let long = Transcript::from_values(&[
            json!({"role": "toolResult", "content": [{"type": "text", "text": "x".repeat(5000)}]}),
        ]);
        let text = serialize_conversation(&long);
        assert_eq!(
            text,
            format!(
                "[Tool result]: {}\n\n[... 3000 more characters truncated]",
                "x".repeat(2000)
            )
        );
        let short = "x".repeat(1500);
        let t = Transcript::from_values(&[
            json!({"role": "toolResult", "content": [{"type": "text", "text": short}]}),
        ]);
        assert_eq!(
            serialize_conversation(&t),
            format!("[Tool result]: {short}")
        );
        // A surrogate pair across the cut stays whole; the count is JavaScript's.
        let text = format!("{}😀{}", "x".repeat(1999), "y".repeat(10));
        let cut = truncate_for_summary(&text, 2000);
        assert_eq!(
            cut,
            format!(
                "{}😀\n\n[... 11 more characters truncated]",
                "x".repeat(1999)
            )
        );
    }

    #[test]
    fn prompts_and_file_sections() {
        assert_eq!(
            history_prompt("C", Some(""), None),
            format!("<conversation>\nC\n</conversation>\n\n{SUMMARIZATION_PROMPT}")
        );
        assert_eq!(
            history_prompt("C", Some("P"), Some("")),
            format!("<conversation>\nC\n</conversation>\n\n<previous-summary>\nP\n</previous-summary>\n\n{UPDATE_SUMMARIZATION_PROMPT}")
        );
        assert_eq!(format_file_operations(&[], &[]), "");
        assert_eq!(
            format_file_operations(&[], &["/m".into(), "/n".into()]),
            "\n\n<modified-files>\n/m\n/n\n</modified-files>"
        );
        let mut files = vec!["\u{FF61}".to_owned(), "😀".to_owned(), "b".to_owned()];
        js_sort(&mut files);
        assert_eq!(files, ["b", "😀", "\u{FF61}"]);
    }

    struct Counter(u32);
    impl IdSource for Counter {
        fn next_id(&mut self) -> String {
            self.0 += 1;
            format!("{:08x}", self.0)
        }
    }

    #[test]
    fn compacted_session_context_is_summary_then_kept_messages() {
        let mut session = Session::in_memory("/repo", Some("s"), 0);
        let mut ids = Counter(0);
        for (i, text) in ["one", "two", "three"].iter().enumerate() {
            let user = json!({"role": "user", "content": text.repeat(100), "timestamp": i});
            session
                .append(NewEntry::Message(user), &mut ids, 1000)
                .unwrap();
            session
                .append(
                    NewEntry::Message(assistant_blocks(json!([{"type": "text", "text": "ok"}]))),
                    &mut ids,
                    1000,
                )
                .unwrap();
        }
        let settings = CompactionSettings {
            keep_recent_tokens: 100,
            ..Default::default()
        };
        let prep = prepare_session_compaction(&session, &settings).unwrap();
        // 75 + 75 + 125 tokens of user text and 3 × 1 of assistant text.
        assert_eq!(prep.tokens_before, 278);
        assert_eq!(prep.first_kept_entry_id, "00000005");
        let summary = prep.compose_summary(Some("the summary"), None);
        let entry = prep.compaction_entry(summary);
        let id = session.append(entry, &mut ids, 2000).unwrap();
        let text = session.get_entry(&id).unwrap().text.as_str().to_owned();
        assert_eq!(
            text,
            r#"{"type":"compaction","id":"00000007","parentId":"00000006","timestamp":"1970-01-01T00:00:02.000Z","summary":"the summary","firstKeptEntryId":"00000005","tokensBefore":278,"details":{"readFiles":[],"modifiedFiles":[]},"fromHook":false}"#
        );
        let index = index_entries(session.stored_entries());
        let context = build_session_context(
            session.stored_entries(),
            &index,
            LeafSelector::Index(session.leaf_index().unwrap()),
        );
        assert_eq!(
            roles(&context.messages),
            ["compactionSummary", "user", "assistant"]
        );
        assert!(prepare_session_compaction(&session, &settings).is_none());
    }
}
