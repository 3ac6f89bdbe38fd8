//! The request guard: clawctx's safe default. Given the messages a request is built from and
//! the model it goes to, it tells whether the body pi-ai would build from them is one the
//! provider accepts, and when it is not, rewrites them into the canonical shape every provider
//! accepts. Valid messages are returned as they are, so wherever the recorded release's output
//! is already valid the default sends exactly that.
//!
//! The check models what reaches the provider (pi-mono 0.58.3
//! `packages/ai/src/providers/transform-messages.ts`): assistant turns that ended in `error` or
//! `aborted` are skipped; a call still unanswered when the next user or assistant message
//! arrives gets a synthetic result; tool-call ids of another model's turns are normalised for
//! Anthropic. What the providers then reject (their request rules; the validators of
//! `wire/validate.py` check the bodies themselves):
//! - a tool result that does not directly follow the assistant turn that made the call (an
//!   orphan: after a user message, after a skipped turn, before any call) or answers it twice;
//! - a tool-call id used twice in one request (Anthropic `tool_use` ids, OpenAI `call_id`s and
//!   Responses item ids), empty, or outside `^[a-zA-Z0-9_-]+$` for Anthropic;
//! - a call left unanswered at the end of the request;
//! - an assistant turn first, for Anthropic, Bedrock and Gemini.
//!
//! The repair follows what later OpenClaw releases fixed (`docs/reference/transcript-hygiene.md`
//! after 2026.3.13): pairing by call *occurrence*, repeated ids made unique, results moved up to
//! their call, orphans and second results dropped, skipped turns left out, and a synthetic result
//! (Codex-style "aborted" on OpenAI routes) for a call that has none.

use rustc_hash::{FxHashMap, FxHashSet, FxHasher};
use serde_json::{json, Value};
use std::hash::Hasher;

use super::sanitize::GOOGLE_BOOTSTRAP_TEXT;
use super::validate::ProviderFamily;
use crate::base::{to_js_string, JsonText};
use crate::transcript::{Message, SendShape, Transcript};

/// pi-ai's synthetic result text (transform-messages.ts).
pub const PI_AI_SYNTHETIC_RESULT_TEXT: &str = "No result provided";
/// The output later OpenClaw releases give an unanswered call on OpenAI routes (as Codex does).
pub const ABORTED_RESULT_TEXT: &str = "aborted";

/// Where a request goes: the model's provider, API and id (what decides a turn is the target
/// model's own, and so whether pi-ai normalises its tool-call ids).
#[derive(Debug, Clone, Copy, Default)]
pub struct GuardTarget<'a> {
    pub provider: Option<&'a str>,
    pub api: Option<&'a str>,
    pub model_id: Option<&'a str>,
    /// The ids are sent as they are stored (a writer that does not normalise them, such as
    /// the interop converters), not as pi-ai normalises another model's.
    pub verbatim_ids: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdRule {
    /// Anthropic Messages and Bedrock: other models' ids normalised, `^[a-zA-Z0-9_-]+$`.
    Anthropic,
    /// OpenAI Responses: `call_id|item_id`; both parts must be unique.
    Responses,
    /// OpenAI Chat Completions: another model's `call_id|item_id` sent as its `call_id` part,
    /// sanitized and cut to 40 (and any id cut to 40 for the `openai` provider).
    Chat {
        openai_provider: bool,
    },
    Plain,
}

impl GuardTarget<'_> {
    fn family(&self) -> ProviderFamily {
        ProviderFamily::resolve(self.provider, self.api)
    }

    fn id_rule(&self) -> IdRule {
        match self.api.map(str::trim) {
            Some("openai-responses" | "azure-openai-responses" | "openai-codex-responses") => {
                IdRule::Responses
            }
            Some("openai-completions") => IdRule::Chat {
                openai_provider: self.provider.map(str::trim) == Some("openai"),
            },
            _ if self.family() == ProviderFamily::Anthropic => IdRule::Anthropic,
            _ => IdRule::Plain,
        }
    }

    fn needs_user_first(&self) -> bool {
        matches!(
            self.family(),
            ProviderFamily::Anthropic | ProviderFamily::Gemini
        )
    }

    /// Whether the turn is the target model's own (transform-messages.ts `isSameModel`).
    fn is_same_model(&self, shape: &SendShape) -> bool {
        self.verbatim_ids
            || shape.provider.as_deref() == self.provider
                && shape.api.as_deref() == self.api
                && self
                    .model_id
                    .is_none_or(|id| shape.model.as_deref() == Some(id))
    }

    fn synthetic_text(&self) -> &'static str {
        if self.family() == ProviderFamily::OpenAi {
            ABORTED_RESULT_TEXT
        } else {
            PI_AI_SYNTHETIC_RESULT_TEXT
        }
    }
}

/// anthropic.ts `normalizeToolCallId`: `[^a-zA-Z0-9_-]` → `_` (per UTF-16 unit), 64 at most.
pub fn anthropic_tool_call_id(id: &str) -> String {
    let mut out = crate::base::sanitize_id_chars(id);
    out.truncate(64);
    out
}

fn is_anthropic_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// One thing that makes the request invalid: the message index and a rule name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardIssue {
    pub index: usize,
    pub rule: &'static str,
    pub detail: String,
}

/// How a call's id reaches the provider, and its Responses item id.
fn sent_ids(id: &str, rule: IdRule, same_model: bool) -> (String, Option<String>) {
    match rule {
        IdRule::Anthropic if !same_model => (anthropic_tool_call_id(id), None),
        IdRule::Responses => {
            let mut parts = id.splitn(2, '|');
            let call = parts.next().unwrap_or_default().to_owned();
            (call, parts.next().map(str::to_owned))
        }
        IdRule::Chat { openai_provider } if !same_model => {
            (chat_tool_call_id(id, openai_provider), None)
        }
        _ => (id.to_owned(), None),
    }
}

/// openai-completions.ts `normalizeToolCallId` (applied to another model's turns): a
/// `call_id|item_id` id becomes its `call_id` part with `[^a-zA-Z0-9_-]` → `_` (per UTF-16
/// unit) cut to 40; for the `openai` provider any longer id is cut to 40 UTF-16 units.
pub fn chat_tool_call_id(id: &str, openai_provider: bool) -> String {
    if let Some((call, _)) = id.split_once('|') {
        let mut out = crate::base::sanitize_id_chars(call);
        out.truncate(40);
        return out;
    }
    if openai_provider {
        return crate::base::utf16_prefix_owned(id, 40);
    }
    id.to_owned()
}

/// Whether OpenAI Responses would give two message items of this turn the same id: pi-ai's
/// `convertResponsesMessages` ids a text block's item by its `textSignature`, else
/// `msg_<index>` of the message, and a replayed turn of another model has its signatures
/// dropped and its thinking turned into text (transform-messages.ts).
fn shares_message_item_id(shape: &SendShape, same_model: bool) -> bool {
    if same_model {
        shape.unsigned_text_blocks >= 2
    } else {
        shape.text_blocks + shape.thinking_blocks >= 2
    }
}

/// Roles `convertToLlm` sends on the user side (AgentMessages included).
fn is_user_side(role: Option<&str>) -> bool {
    matches!(
        role,
        Some("user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
    )
}

/// A user-side message the target's converter sends at all. pi-ai's Anthropic and OpenAI
/// converters leave out one of blank text only; its Google converters
/// (`google-shared.ts` `convertMessages`) send blank text as it is, so for Gemini only a
/// user message without content is not sent.
fn user_is_sent(shape: &SendShape, target: GuardTarget<'_>) -> bool {
    if target.family() == ProviderFamily::Gemini {
        return match shape.content {
            crate::transcript::ContentShape::Blocks { total, .. } => total > 0,
            crate::transcript::ContentShape::Missing => !shape.is_role("user"),
            _ => true,
        };
    }
    shape.user_turn_is_sent()
}

/// An assistant turn a converter sends at all (one with only blank text or nothing is left
/// out by every converter).
fn assistant_is_sent(shape: &SendShape) -> bool {
    !shape.calls.is_empty()
        || matches!(shape.content, crate::transcript::ContentShape::Blocks { not_blank, .. } if not_blank > 0)
}

/// Why a request built from `messages` for `target` would be rejected (empty: it is valid).
/// `followed_by_user`: a user message comes after these (the prompt), which flushes the last
/// turn's unanswered calls into synthetic results.
pub fn request_issues(
    messages: &Transcript,
    target: GuardTarget<'_>,
    followed_by_user: bool,
) -> Vec<GuardIssue> {
    let rule = target.id_rule();
    let mut issues = Vec::new();
    let mut used: FxHashSet<String> = FxHashSet::default();
    let mut used_items: FxHashSet<String> = FxHashSet::default();
    // transform-messages.ts: result ids follow their call's normalised id.
    let mut id_map: FxHashMap<String, String> = FxHashMap::default();
    let mut pending: Vec<String> = Vec::new();
    let mut pending_names: Vec<Option<String>> = Vec::new();
    let mut pending_at = 0usize;
    let mut answered: FxHashSet<String> = FxHashSet::default();
    let mut run_open = false;
    let mut first_is_assistant: Option<(bool, usize)> = None;
    // The last turn sent was a model turn without calls (Gemini: a function-call turn must
    // follow a user turn or a function response).
    let mut after_plain_model_turn = false;
    for (i, message) in messages.messages().iter().enumerate() {
        let shape = message.send_shape();
        let role = shape.role.as_deref();
        if role == Some("assistant") {
            run_open = false;
            pending.clear();
            pending_names.clear();
            answered.clear();
            if shape.is_failed_assistant() {
                continue;
            }
            if assistant_is_sent(shape) && first_is_assistant.is_none() {
                first_is_assistant = Some((true, i));
            }
            if target.family() == ProviderFamily::Gemini
                && after_plain_model_turn
                && !shape.calls.is_empty()
            {
                issues.push(issue(
                    i,
                    "function-call-turn-misplaced",
                    "a model turn with function calls directly follows another model turn".into(),
                ));
            }
            if assistant_is_sent(shape) {
                after_plain_model_turn = shape.calls.is_empty();
            }
            let same = target.is_same_model(shape);
            if rule == IdRule::Responses && shares_message_item_id(shape, same) {
                issues.push(issue(
                    i,
                    "duplicate-item-id",
                    "two text blocks of one turn become message items with one id".into(),
                ));
            }
            for call in &shape.calls {
                let (key, item) = sent_ids(&call.id, rule, same);
                if call.id.is_empty() || key.is_empty() {
                    issues.push(issue(i, "empty-call-id", "a tool call has no id".into()));
                } else if rule == IdRule::Anthropic && !is_anthropic_id(&key) {
                    issues.push(issue(
                        i,
                        "invalid-call-id",
                        format!("tool call id {key:?} has characters outside [a-zA-Z0-9_-]"),
                    ));
                }
                if !used.insert(key.clone()) {
                    issues.push(issue(
                        i,
                        "duplicate-call-id",
                        format!("tool call id {key} is used twice"),
                    ));
                }
                if let Some(item) = item.filter(|s| !s.is_empty()) {
                    if !used_items.insert(item.clone()) {
                        issues.push(issue(
                            i,
                            "duplicate-item-id",
                            format!("function call item id {item} is used twice"),
                        ));
                    }
                }
                if key != call.id && rule != IdRule::Responses {
                    id_map.insert(call.id.clone(), key.clone());
                }
                pending.push(key);
                pending_names.push(call.name.clone());
            }
            run_open = !pending.is_empty();
            pending_at = i;
        } else if role == Some("toolResult") {
            let raw = shape.result_id.as_deref().unwrap_or_default();
            let key = match rule {
                IdRule::Responses => raw.split('|').next().unwrap_or_default().to_owned(),
                _ => id_map.get(raw).cloned().unwrap_or_else(|| raw.to_owned()),
            };
            let slot = pending.iter().position(|k| *k == key);
            if !run_open || slot.is_none() {
                issues.push(issue(
                    i,
                    "result-without-call",
                    format!("tool result {raw:?} does not directly follow its call"),
                ));
            } else if target.family() == ProviderFamily::Gemini
                && slot.and_then(|k| pending_names[k].as_ref()) != shape.result_name.as_ref()
            {
                // Gemini pairs a functionResponse with its functionCall by name.
                issues.push(issue(
                    i,
                    "result-name-mismatch",
                    format!("tool result {raw:?} names another tool than its call"),
                ));
            } else if !answered.insert(key) {
                issues.push(issue(
                    i,
                    "duplicate-result",
                    format!("tool call {raw:?} is answered twice"),
                ));
            }
            if first_is_assistant.is_none() {
                first_is_assistant = Some((false, i));
            }
            after_plain_model_turn = false;
        } else if is_user_side(role) {
            // transformMessages flushes the unanswered calls as synthetic results here.
            run_open = false;
            pending.clear();
            answered.clear();
            if user_is_sent(shape, target) {
                after_plain_model_turn = false;
                if first_is_assistant.is_none() {
                    first_is_assistant = Some((false, i));
                }
            }
        }
    }
    if run_open && !followed_by_user {
        for key in pending.iter().filter(|k| !answered.contains(*k)) {
            issues.push(issue(
                pending_at,
                "call-without-result",
                format!("tool call {key} is never answered"),
            ));
        }
    }
    if let Some((true, i)) = first_is_assistant {
        if target.needs_user_first() {
            issues.push(issue(
                i,
                "first-turn-not-user",
                "the first turn sent must be a user turn".into(),
            ));
        }
    }
    issues
}

fn issue(index: usize, rule: &'static str, detail: String) -> GuardIssue {
    GuardIssue {
        index,
        rule,
        detail,
    }
}

/// What [`guard_request`] changed, by kind (all zero when the messages were valid).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuardReport {
    /// Tool-call ids replaced (repeated, empty or not sendable), with their results.
    pub renamed_call_ids: usize,
    /// Assistant turns that ended in an error or abort, left out (pi-ai skips them too).
    pub dropped_failed_turns: usize,
    /// Results that answer no call of the turn before them.
    pub dropped_orphan_results: usize,
    /// Second results for one call.
    pub dropped_duplicate_results: usize,
    /// Results moved up to directly after their call (past a user message).
    pub moved_results: usize,
    /// Synthetic results for calls that had none.
    pub synthetic_results: usize,
    /// A user turn put in front of an assistant-first history.
    pub prepended_user_turn: bool,
    /// Turns whose text blocks were joined so OpenAI Responses gives them one message item.
    pub joined_text_blocks: usize,
    /// Results given their call's tool name (Gemini pairs them by name).
    pub renamed_results: usize,
    /// Model turns without calls merged into the function-call turn right after them
    /// (Gemini: a function-call turn must follow a user turn or a function response).
    pub merged_model_turns: usize,
}

impl GuardReport {
    pub fn changed(&self) -> bool {
        *self != GuardReport::default()
    }

    /// The non-zero counts as `(kind, count)`.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        [
            ("renamed_call_ids", self.renamed_call_ids),
            ("dropped_failed_turns", self.dropped_failed_turns),
            ("dropped_orphan_results", self.dropped_orphan_results),
            ("dropped_duplicate_results", self.dropped_duplicate_results),
            ("moved_results", self.moved_results),
            ("synthetic_results", self.synthetic_results),
            ("prepended_user_turn", usize::from(self.prepended_user_turn)),
            ("joined_text_blocks", self.joined_text_blocks),
            ("renamed_results", self.renamed_results),
            ("merged_model_turns", self.merged_model_turns),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect()
    }
}

/// A fresh call id for the `k`-th call of `message`: derived from the message's own text, so
/// the same history gives the same ids on every request (the prompt cache keeps its prefix);
/// letters, digits and `_` only, so every provider's normaliser keeps it as it is.
fn fresh_id(message: &Message, k: usize, used: &FxHashSet<String>) -> String {
    let mut attempt = 0u64;
    loop {
        let mut hasher = FxHasher::default();
        hasher.write(message.text().as_str().as_bytes());
        hasher.write_usize(k);
        hasher.write_u64(attempt);
        let id = format!("call_{:016x}", hasher.finish());
        if !used.contains(&id) {
            return id;
        }
        attempt += 1;
    }
}

fn message_of(value: &Value) -> Message {
    Message::new(JsonText::owned(to_js_string(value)))
}

/// `message` with the text blocks that would share one Responses message item id joined into
/// the first of them (with a blank line between): for another model's turn every text and
/// thinking text (which pi-ai replays as text), for the target model's own the text blocks
/// without a `textSignature`. Tool calls and the rest keep their places.
fn join_texts(message: &Message, same_model: bool) -> Message {
    let Ok(mut value) = message.text().to_value() else {
        return message.clone();
    };
    let Some(blocks) = value.get_mut("content").and_then(Value::as_array_mut) else {
        return message.clone();
    };
    let joins = |block: &Value| -> Option<String> {
        let ty = block.get("type").and_then(Value::as_str)?;
        let field = match ty {
            "text" => "text",
            "thinking" if !same_model => "thinking",
            _ => return None,
        };
        if ty == "thinking" && block.get("redacted").is_some_and(crate::base::is_truthy) {
            return None;
        }
        if same_model
            && block
                .get("textSignature")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        {
            return None;
        }
        let text = block.get(field).and_then(Value::as_str)?;
        // A blank thinking block is not replayed; a blank text block is (as an empty item).
        (ty == "text" || !crate::base::js_trim(text).is_empty()).then(|| text.to_owned())
    };
    let mut joined: Vec<String> = Vec::new();
    let mut at: Option<usize> = None;
    let mut kept: Vec<Value> = Vec::with_capacity(blocks.len());
    for block in blocks.drain(..) {
        match joins(&block) {
            Some(text) => {
                if at.is_none() {
                    at = Some(kept.len());
                    kept.push(Value::Null);
                }
                joined.push(text);
            }
            None => kept.push(block),
        }
    }
    if let Some(at) = at {
        joined.retain(|t| !crate::base::js_trim(t).is_empty());
        kept[at] = json!({"type": "text", "text": joined.join("\n\n")});
    }
    *blocks = kept;
    message_of(&value)
}

/// `message` with the `toolCall` blocks' ids replaced as `renames` says (`k`-th call → id).
fn rename_calls(message: &Message, renames: &[(usize, String)]) -> Message {
    let Ok(mut value) = message.text().to_value() else {
        return message.clone();
    };
    if let Some(blocks) = value.get_mut("content").and_then(Value::as_array_mut) {
        let mut k = 0usize;
        for block in blocks.iter_mut() {
            if block.get("type").and_then(Value::as_str) != Some("toolCall") {
                continue;
            }
            if let Some((_, id)) = renames.iter().find(|(at, _)| *at == k) {
                if let Some(obj) = block.as_object_mut() {
                    obj.insert("id".to_owned(), Value::String(id.clone()));
                }
            }
            k += 1;
        }
    }
    message_of(&value)
}

fn with_result_id(message: &Message, id: &str) -> Message {
    let Ok(mut value) = message.text().to_value() else {
        return message.clone();
    };
    if let Some(obj) = value.as_object_mut() {
        obj.insert("toolCallId".to_owned(), Value::String(id.to_owned()));
    }
    message_of(&value)
}

fn with_result_name(message: &Message, name: Option<&str>) -> Message {
    let Ok(mut value) = message.text().to_value() else {
        return message.clone();
    };
    if let Some(obj) = value.as_object_mut() {
        match name {
            Some(name) => obj.insert("toolName".to_owned(), Value::String(name.to_owned())),
            None => obj.shift_remove("toolName"),
        };
    }
    message_of(&value)
}

/// Where the last turn sent in `out` is, when it is a model turn without calls (what a
/// function-call turn may not directly follow on Gemini). Unsent messages (blank user text,
/// empty assistant turns) are looked past, as the converters leave them out.
fn plain_model_turn_before(out: &[Message], target: GuardTarget<'_>) -> Option<usize> {
    for (at, message) in out.iter().enumerate().rev() {
        let s = message.send_shape();
        if s.is_role("assistant") {
            if !assistant_is_sent(s) {
                continue;
            }
            return s.calls.is_empty().then_some(at);
        }
        if s.is_role("toolResult") || (is_user_side(s.role.as_deref()) && user_is_sent(s, target)) {
            return None;
        }
    }
    None
}

/// One model turn of `previous`'s blocks followed by `current`'s, with `current`'s fields
/// (OpenClaw's `validateGeminiTurns` merges consecutive assistant turns the same way). When
/// only `current` is the target model's, `previous`'s blocks are made what pi-ai replays for
/// another model (thinking as text, no signatures), so no foreign signature is sent as own.
fn merge_model_turns(
    previous: &Message,
    previous_same: bool,
    current: &Message,
    current_same: bool,
) -> Message {
    let (Ok(prev), Ok(mut cur)) = (previous.text().to_value(), current.text().to_value()) else {
        return current.clone();
    };
    let mut blocks: Vec<Value> = match prev.get("content") {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
        _ => Vec::new(),
    };
    if current_same && !previous_same {
        blocks = blocks
            .into_iter()
            .filter_map(|block| {
                let ty = block.get("type").and_then(Value::as_str)?;
                let text_of = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_owned);
                match ty {
                    "text" => text_of("text").map(|t| json!({"type": "text", "text": t})),
                    "thinking" => text_of("thinking")
                        .filter(|t| !crate::base::js_trim(t).is_empty())
                        .map(|t| json!({"type": "text", "text": t})),
                    _ => Some(block),
                }
            })
            .collect();
    }
    match cur.get_mut("content") {
        Some(Value::Array(items)) => {
            blocks.append(items);
            *items = blocks;
        }
        Some(Value::String(text)) => {
            blocks.push(json!({"type": "text", "text": text}));
            if let Some(obj) = cur.as_object_mut() {
                obj.insert("content".to_owned(), Value::Array(blocks));
            }
        }
        _ => {
            if let Some(obj) = cur.as_object_mut() {
                obj.insert("content".to_owned(), Value::Array(blocks));
            }
        }
    }
    message_of(&cur)
}

fn synthetic_result(id: &str, name: Option<&str>, text: &str, now_ms: i64) -> Message {
    let mut value = json!({"role": "toolResult", "toolCallId": id});
    if let (Some(name), Some(obj)) = (name, value.as_object_mut()) {
        obj.insert("toolName".to_owned(), Value::String(name.to_owned()));
    }
    if let Some(obj) = value.as_object_mut() {
        obj.insert(
            "content".to_owned(),
            json!([{"type": "text", "text": text}]),
        );
        obj.insert("isError".to_owned(), Value::Bool(true));
        obj.insert("timestamp".to_owned(), Value::from(now_ms));
    }
    message_of(&value)
}

/// The messages as the provider accepts them: `messages` itself when
/// [`request_issues`] finds nothing, else the canonical repair (see the module doc).
pub fn guard_request(
    messages: &Transcript,
    target: GuardTarget<'_>,
    followed_by_user: bool,
    now_ms: i64,
) -> (Transcript, GuardReport) {
    if request_issues(messages, target, followed_by_user).is_empty() {
        return (messages.clone(), GuardReport::default());
    }
    let (out, report) = repair(messages, target, now_ms);
    debug_assert!(
        request_issues(&out, target, followed_by_user).is_empty(),
        "the guard's repair must be valid: {:?}",
        request_issues(&out, target, followed_by_user)
    );
    (out, report)
}

struct Call {
    original: String,
    id: String,
    name: Option<String>,
}

fn repair(
    messages: &Transcript,
    target: GuardTarget<'_>,
    now_ms: i64,
) -> (Transcript, GuardReport) {
    let rule = target.id_rule();
    let input = messages.messages();
    let mut report = GuardReport::default();
    let mut out: Vec<Message> = Vec::with_capacity(input.len() + 4);
    let mut used: FxHashSet<String> = FxHashSet::default();
    let mut used_items: FxHashSet<String> = FxHashSet::default();
    // pi-ai's id map (transform-messages.ts): once another model's id is normalised, every
    // later result with that id is remapped, including the results of a later turn that
    // uses the same id unnormalised; such a turn's call must get a fresh id.
    let mut normalized: FxHashMap<String, String> = FxHashMap::default();
    let mut i = 0;
    while i < input.len() {
        let message = &input[i];
        let shape = message.send_shape();
        if shape.is_failed_assistant() {
            report.dropped_failed_turns += 1;
            i += 1;
            continue;
        }
        if shape.is_role("toolResult") {
            report.dropped_orphan_results += 1;
            i += 1;
            continue;
        }
        if !shape.is_role("assistant") {
            out.push(message.clone());
            i += 1;
            continue;
        }
        // An assistant turn: its calls with sendable, unique ids.
        let same = target.is_same_model(shape);
        let mut calls: Vec<Call> = Vec::with_capacity(shape.calls.len());
        let mut renames: Vec<(usize, String)> = Vec::new();
        for (k, call) in shape.calls.iter().enumerate() {
            let (key, item) = sent_ids(&call.id, rule, same);
            let item = item.filter(|s| !s.is_empty());
            let remapped_later = normalized
                .get(&call.id)
                .is_some_and(|mapped| *mapped != key);
            let bad = call.id.is_empty()
                || key.is_empty()
                || (rule == IdRule::Anthropic && !is_anthropic_id(&key))
                || used.contains(&key)
                || item.as_ref().is_some_and(|it| used_items.contains(it))
                || remapped_later;
            let id = if bad {
                let id = fresh_id(message, k, &used);
                renames.push((k, id.clone()));
                report.renamed_call_ids += 1;
                used.insert(id.clone());
                id
            } else {
                if key != call.id && rule != IdRule::Responses {
                    normalized.insert(call.id.clone(), key.clone());
                }
                used.insert(key);
                if let Some(item) = item {
                    used_items.insert(item);
                }
                call.id.clone()
            };
            calls.push(Call {
                original: call.id.clone(),
                id,
                name: call.name.clone(),
            });
        }
        // Its results: the first unanswered occurrence of each call id before the next turn
        // that is sent; everything else there is kept after them, results not theirs dropped.
        let mut results: Vec<Option<Message>> = vec![None; calls.len()];
        let mut deferred: Vec<Message> = Vec::new();
        let mut j = i + 1;
        while j < input.len() {
            let next = input[j].send_shape();
            if next.is_role("assistant") && !next.is_failed_assistant() {
                break;
            }
            if next.is_failed_assistant() {
                report.dropped_failed_turns += 1;
            } else if next.is_role("toolResult") {
                let raw = next.result_id.as_deref().unwrap_or_default();
                let slot = calls
                    .iter()
                    .enumerate()
                    .position(|(k, c)| c.original == raw && results[k].is_none());
                match slot {
                    Some(k) => {
                        let call = &calls[k];
                        let mut result = if call.id == call.original {
                            input[j].clone()
                        } else {
                            with_result_id(&input[j], &call.id)
                        };
                        if target.family() == ProviderFamily::Gemini
                            && next.result_name.as_ref() != call.name.as_ref()
                        {
                            result = with_result_name(&result, call.name.as_deref());
                            report.renamed_results += 1;
                        }
                        if !deferred.is_empty() {
                            report.moved_results += 1;
                        }
                        results[k] = Some(result);
                    }
                    None if calls.iter().any(|c| c.original == raw) => {
                        report.dropped_duplicate_results += 1;
                    }
                    None => report.dropped_orphan_results += 1,
                }
            } else {
                deferred.push(input[j].clone());
            }
            j += 1;
        }
        let mut sent = if renames.is_empty() {
            message.clone()
        } else {
            rename_calls(message, &renames)
        };
        if rule == IdRule::Responses && shares_message_item_id(shape, same) {
            sent = join_texts(&sent, same);
            report.joined_text_blocks += 1;
        }
        if target.family() == ProviderFamily::Gemini && !calls.is_empty() {
            // Every plain model turn in the run before it, nearest first.
            while let Some(at) = plain_model_turn_before(&out, target) {
                let previous = out.remove(at);
                let previous_same = target.is_same_model(previous.send_shape());
                sent = merge_model_turns(&previous, previous_same, &sent, same);
                report.merged_model_turns += 1;
            }
        }
        out.push(sent);
        for (call, result) in calls.iter().zip(results) {
            out.push(result.unwrap_or_else(|| {
                report.synthetic_results += 1;
                synthetic_result(
                    &call.id,
                    call.name.as_deref(),
                    target.synthetic_text(),
                    now_ms,
                )
            }));
        }
        out.extend(deferred);
        i = j;
    }
    if target.needs_user_first() {
        let first = out.iter().position(|m| {
            let s = m.send_shape();
            s.is_role("toolResult")
                || (is_user_side(s.role.as_deref()) && user_is_sent(s, target))
                || (s.is_role("assistant") && assistant_is_sent(s))
        });
        if let Some(at) = first.filter(|at| out[*at].send_shape().is_role("assistant")) {
            // The blank user messages before it are sent by no writer: the bootstrap turn
            // takes their place, so a later pass that joins consecutive user turns finds
            // nothing to join (the repair stays a fixed point).
            let mut k = 0usize;
            out.retain(|m| {
                k += 1;
                let s = m.send_shape();
                !(k <= at && s.is_role("user") && !user_is_sent(s, target))
            });
            let bootstrap =
                json!({"role": "user", "content": GOOGLE_BOOTSTRAP_TEXT, "timestamp": now_ms});
            out.insert(0, message_of(&bootstrap));
            report.prepended_user_turn = true;
        }
    }
    (Transcript::from_messages(out), report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transcript(lines: &[&str]) -> Transcript {
        Transcript::new(
            lines
                .iter()
                .map(|l| JsonText::owned((*l).to_owned()))
                .collect(),
        )
    }

    const ANTHROPIC: GuardTarget<'static> = GuardTarget {
        provider: Some("anthropic"),
        api: Some("anthropic-messages"),
        model_id: Some("claude-x"),
        verbatim_ids: false,
    };

    fn call(id: &str) -> String {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"{id}","name":"read","arguments":{{}}}}],"provider":"anthropic","api":"anthropic-messages","model":"claude-x","stopReason":"toolUse"}}"#
        )
    }

    fn result(id: &str) -> String {
        format!(
            r#"{{"role":"toolResult","toolCallId":"{id}","toolName":"read","content":[{{"type":"text","text":"ok"}}],"isError":false}}"#
        )
    }

    const USER: &str = r#"{"role":"user","content":"hi"}"#;

    #[test]
    fn a_valid_history_is_returned_as_it_is() {
        let lines = [USER.to_owned(), call("a"), result("a"), USER.to_owned()];
        let t = transcript(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let (out, report) = guard_request(&t, ANTHROPIC, true, 5);
        assert!(!report.changed());
        assert!(out.messages()[1].is_same(&t.messages()[1]));
    }

    #[test]
    fn a_repeated_id_is_renamed_with_its_own_result() {
        let lines = [
            USER.to_owned(),
            call("a"),
            result("a"),
            call("a"),
            result("a"),
        ];
        let t = transcript(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            request_issues(&t, ANTHROPIC, true)[0].rule,
            "duplicate-call-id"
        );
        let (out, report) = guard_request(&t, ANTHROPIC, true, 5);
        assert_eq!(report.renamed_call_ids, 1);
        assert_eq!(out.len(), 5);
        let renamed = out.messages()[3].send_shape().calls[0].id.clone();
        assert!(renamed.starts_with("call_"));
        assert_eq!(
            out.messages()[4].send_shape().result_id.as_deref(),
            Some(renamed.as_str())
        );
        // Deterministic: the same history gives the same id.
        let (again, _) = guard_request(&t, ANTHROPIC, true, 9);
        assert_eq!(again.messages()[3].send_shape().calls[0].id, renamed);
    }

    #[test]
    fn a_result_after_a_user_message_moves_up_and_orphans_go() {
        let lines = [
            result("z"),
            USER.to_owned(),
            call("a"),
            USER.to_owned(),
            result("a"),
            result("a"),
        ];
        let t = transcript(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let (out, report) = guard_request(&t, ANTHROPIC, false, 5);
        assert_eq!(report.dropped_orphan_results, 1);
        assert_eq!(report.moved_results, 1);
        assert_eq!(report.dropped_duplicate_results, 1);
        let roles: Vec<_> = out
            .messages()
            .iter()
            .map(|m| m.send_shape().role.clone().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "toolResult", "user"]);
    }

    #[test]
    fn failed_turns_go_and_unanswered_calls_get_a_result() {
        let failed = r#"{"role":"assistant","content":[{"type":"toolCall","id":"b","name":"x","arguments":{}}],"stopReason":"aborted"}"#;
        let lines = [call("a"), failed.to_owned(), result("b")];
        let t = transcript(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let issues = request_issues(&t, ANTHROPIC, false);
        assert!(issues.iter().any(|i| i.rule == "first-turn-not-user"));
        assert!(issues.iter().any(|i| i.rule == "result-without-call"));
        let (out, report) = guard_request(&t, ANTHROPIC, false, 5);
        assert!(report.prepended_user_turn);
        assert_eq!(report.dropped_failed_turns, 1);
        assert_eq!(report.synthetic_results, 1);
        assert_eq!(report.dropped_orphan_results, 1);
        assert_eq!(out.len(), 3);
        assert!(request_issues(&out, ANTHROPIC, false).is_empty());
    }

    #[test]
    fn responses_ids_are_unique_by_call_and_item() {
        let target = GuardTarget {
            provider: Some("openai"),
            api: Some("openai-responses"),
            model_id: Some("gpt-5"),
            verbatim_ids: false,
        };
        let lines = [
            USER.to_owned(),
            call("c1|fc_1"),
            result("c1|fc_1"),
            call("c1"),
            result("c1"),
        ];
        let t = transcript(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(request_issues(&t, target, true)
            .iter()
            .any(|i| i.rule == "duplicate-call-id"));
        let (out, _) = guard_request(&t, target, true, 5);
        assert!(request_issues(&out, target, true).is_empty());
    }

    #[test]
    fn a_gemini_function_call_turn_after_a_model_turn_takes_its_blocks() {
        let gemini = GuardTarget {
            provider: Some("google"),
            api: Some("google-generative-ai"),
            model_id: Some("gemini-x"),
            verbatim_ids: false,
        };
        let said = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"sig"},{"type":"text","text":"On it."}],"provider":"anthropic","api":"anthropic-messages","model":"claude-x","stopReason":"stop"}"#;
        let calls = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"provider":"google","api":"google-generative-ai","model":"gemini-x","stopReason":"toolUse"}"#;
        let lines = [USER, said, calls, &result("c1")];
        let messages = transcript(&lines);
        let rules: Vec<_> = request_issues(&messages, gemini, true)
            .iter()
            .map(|i| i.rule)
            .collect();
        assert_eq!(rules, ["function-call-turn-misplaced"]);
        // Anthropic accepts two assistant turns in a row here: nothing to do.
        assert!(request_issues(&messages, ANTHROPIC, true)
            .iter()
            .all(|i| i.rule != "function-call-turn-misplaced"));
        let (out, report) = guard_request(&messages, gemini, true, 0);
        assert_eq!(report.merged_model_turns, 1);
        assert!(request_issues(&out, gemini, true).is_empty());
        let merged = out.messages()[1].text().to_value().unwrap();
        // Another model's thinking goes in as text, no foreign signature; the call's turn
        // keeps its own fields.
        assert_eq!(
            merged["content"],
            json!([
                {"type": "text", "text": "hm"},
                {"type": "text", "text": "On it."},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
            ])
        );
        assert_eq!(merged["provider"], "google");
        assert_eq!(out.messages().len(), 3);
        // A blank user message between: pi-ai's Google converters send it, so the call turn
        // follows a user turn (and a blank first user message is a user turn first).
        let blank = r#"{"role":"user","content":" "}"#;
        let between = transcript(&[blank, said, blank, calls, &result("c1")]);
        assert!(request_issues(&between, gemini, true).is_empty());
        // Answered calls in between: the turn is where Gemini wants it.
        let fine = transcript(&[USER, &call("a1"), &result("a1"), calls, &result("c1")]);
        assert!(request_issues(&fine, gemini, true).is_empty());
    }

    #[test]
    fn the_bootstrap_turn_takes_the_place_of_blank_user_messages() {
        let said = r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"anthropic","api":"anthropic-messages","model":"claude-x","stopReason":"stop"}"#;
        let blank = r#"{"role":"user","content":""}"#;
        let messages = transcript(&[blank, blank, said]);
        let (out, report) = guard_request(&messages, ANTHROPIC, true, 0);
        assert!(report.prepended_user_turn);
        let roles: Vec<_> = out
            .messages()
            .iter()
            .map(|m| m.text().to_value().unwrap()["content"].clone())
            .collect();
        assert_eq!(
            roles,
            [
                json!(GOOGLE_BOOTSTRAP_TEXT),
                json!([{"type": "text", "text": "hi"}])
            ]
        );
        let (again, second) = guard_request(&out, ANTHROPIC, true, 0);
        assert!(!second.changed());
        assert_eq!(again.to_json(), out.to_json());
    }

    #[test]
    fn chat_ids_that_meet_once_pi_ai_normalises_them_are_made_unique() {
        let chat = GuardTarget {
            provider: Some("openai"),
            api: Some("openai-completions"),
            model_id: Some("gpt-4o"),
            verbatim_ids: false,
        };
        // Another model's `call_abc|fc_1` is sent as `call_abc`: the same id as the turn before.
        let lines = [
            USER,
            &call("call_abc"),
            &result("call_abc"),
            &call("call_abc|fc_1"),
            &result("call_abc|fc_1"),
        ];
        let messages = transcript(&lines);
        let rules: Vec<_> = request_issues(&messages, chat, true)
            .iter()
            .map(|i| i.rule)
            .collect();
        assert_eq!(rules, ["duplicate-call-id"]);
        let (out, report) = guard_request(&messages, chat, true, 0);
        assert_eq!(report.renamed_call_ids, 1);
        assert!(request_issues(&out, chat, true).is_empty());
        assert_eq!(chat_tool_call_id("call_é|fc", false), "call__");
        assert_eq!(chat_tool_call_id(&"x".repeat(50), true).len(), 40);
        assert_eq!(chat_tool_call_id(&"x".repeat(50), false).len(), 50);
    }
}
