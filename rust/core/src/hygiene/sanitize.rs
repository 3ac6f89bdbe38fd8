//! Transcript hygiene passes of `sanitizeSessionHistory` (OpenClaw 2026.3.13
//! `src/agents/pi-embedded-runner/google.ts` and the `src/agents/pi-embedded-helpers/` it calls).
//! Each pass takes a transcript and returns it unchanged (the same messages) when it does not
//! apply; only the messages a pass changes are parsed in full and re-serialized.

use base64::Engine;
use serde_json::{json, Map, Value};

use super::policy::{SanitizeMode, ThoughtSignatureOptions};
use crate::base::{js_trim, to_js_string, JsonText};
use crate::transcript::{
    CachedEdit, ContentShape, Edit, Message, RewriteKey, Transcript, PAIRING_TOOL_CALL_TYPES,
};

/// bootstrap.ts, `sanitizeGoogleTurnOrdering`: the user turn prepended for Google when a
/// transcript starts with the assistant.
pub const GOOGLE_BOOTSTRAP_TEXT: &str = "(session bootstrap)";
/// turns.ts, `stripDanglingAnthropicToolUses`: the text of an assistant left without blocks.
pub const TOOL_CALLS_OMITTED_TEXT: &str = "[tool calls omitted]";
/// google.ts, `annotateInterSessionUserMessages`.
pub const INTER_SESSION_PREFIX: &str = "[Inter-session message]";

#[cfg(test)]
thread_local! {
    /// Messages parsed by [`object`] on this thread (the tests count the parses a pass makes).
    static PARSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn object(message: &Message) -> Map<String, Value> {
    #[cfg(test)]
    PARSED.with(|n| n.set(n.get() + 1));
    match message.to_value() {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

// ---- inter-session marker (google.ts: annotateInterSessionUserMessages) --------------------

/// `annotateInterSessionUserMessages`: user messages with `provenance.kind == "inter_session"`
/// get `"[Inter-session message]"` (plus `sourceSession=`, `sourceChannel=`, `sourceTool=`) in
/// front of their text, unless the text already starts with that exact prefix (OpenClaw
/// 2026.3.13 `src/agents/pi-embedded-runner/google.ts`).
pub fn annotate_inter_session_messages(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        if !message.request_facts().is_role("user") || !message.as_str().contains("inter_session") {
            return None;
        }
        let mut obj = object(message);
        let provenance = obj.get("provenance")?.as_object()?.clone();
        if provenance.get("kind").and_then(Value::as_str) != Some("inter_session") {
            return None;
        }
        let mut prefix = INTER_SESSION_PREFIX.to_owned();
        for (key, label) in [
            ("sourceSessionKey", "sourceSession"),
            ("sourceChannel", "sourceChannel"),
            ("sourceTool", "sourceTool"),
        ] {
            // `normalizeInputProvenance` (OpenClaw 2026.3.13 `src/sessions/input-provenance.ts`):
            // string fields trimmed, blank ones absent.
            if let Some(value) = provenance
                .get(key)
                .and_then(Value::as_str)
                .map(js_trim)
                .filter(|v| !v.is_empty())
            {
                prefix.push_str(&format!(" {label}={value}"));
            }
        }
        let content = obj.get_mut("content")?;
        match content {
            Value::String(text) => {
                if text.starts_with(prefix.as_str()) {
                    return None;
                }
                *text = format!("{prefix}\n{text}");
            }
            // A merged turn (validateAnthropicTurns) holds the annotated text in a later block;
            // annotating its first block again would change it on every pass.
            Value::Array(blocks)
                if blocks.iter().any(|b| {
                    block_type(b) == Some("text")
                        && b.get("text")
                            .and_then(Value::as_str)
                            .is_some_and(|t| t.starts_with(prefix.as_str()))
                }) =>
            {
                return None;
            }
            Value::Array(blocks) => match blocks.iter_mut().find(|b| {
                block_type(b) == Some("text") && b.get("text").is_some_and(Value::is_string)
            }) {
                Some(block) => {
                    let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                    if text.starts_with(prefix.as_str()) {
                        return None;
                    }
                    block["text"] = Value::from(format!("{prefix}\n{text}"));
                }
                None => blocks.insert(0, json!({"type": "text", "text": prefix})),
            },
            _ => return None,
        }
        Some(Value::Object(obj))
    })
}

/// Later OpenClaw, not 2026.3.13's `sanitizeSessionHistory` (upstream recognises these in
/// `src/agents/pi-embedded-subscribe.handlers.messages.ts`): assistant messages mirrored from
/// delivery (`provider "openclaw"`, `model
/// "delivery-mirror"`) are not sent to Anthropic.
pub fn drop_delivery_mirror_messages(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        if !message.request_facts().is_role("assistant")
            || !message.as_str().contains("delivery-mirror")
        {
            return None;
        }
        let obj = object(message);
        let mirror = obj.get("provider").and_then(Value::as_str) == Some("openclaw")
            && obj.get("model").and_then(Value::as_str) == Some("delivery-mirror");
        mirror.then_some(Value::Null)
    })
}

// ---- thought signatures (pi-embedded-helpers/bootstrap.ts: stripThoughtSignatures) ---------

fn base64_digit(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    }
}

/// `isBase64Signature` of OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/bootstrap.ts`:
/// whitespace removed, only base64/base64url characters, and decoding then re-encoding (in
/// the alphabet the value uses) gives the value back, trailing `=` aside. Decoding is Node's
/// lenient one: it stops at the first `=` and ignores the bits of an incomplete last group.
fn is_base64_signature(value: &str) -> bool {
    let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.is_empty()
        || !compact
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-'))
    {
        return false;
    }
    let url = compact.contains(['-', '_']);
    let mut bytes = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for digit in compact
        .bytes()
        .take_while(|b| *b != b'=')
        .filter_map(base64_digit)
    {
        acc = (acc << 6) | digit;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bytes.is_empty() {
        return false;
    }
    let engine = if url {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
    } else {
        base64::engine::general_purpose::STANDARD_NO_PAD
    };
    engine.encode(&bytes) == compact.trim_end_matches('=')
}

/// Whether a signature field must be stripped under `options` (`None`: default mode): by
/// default string values starting with `msg_`; base64-only: every present value that is not a
/// base64 string (numbers, `null` and objects included).
fn strips(value: &Value, options: Option<ThoughtSignatureOptions>) -> bool {
    match (options, value.as_str()) {
        (Some(o), text) if o.allow_base64_only => !text.is_some_and(is_base64_signature),
        (_, Some(text)) => text.starts_with("msg_"),
        _ => false,
    }
}

/// Strips thought signatures from the blocks of one assistant content array; true if changed.
fn strip_signatures_in(blocks: &mut [Value], options: Option<ThoughtSignatureOptions>) -> bool {
    let camel = options.is_some_and(|o| o.include_camel_case);
    let mut changed = false;
    for block in blocks.iter_mut() {
        let Some(obj) = block.as_object_mut() else {
            continue;
        };
        let keys: &[&str] = if camel {
            &["thought_signature", "thoughtSignature"]
        } else {
            &["thought_signature"]
        };
        for key in keys {
            if obj.get(*key).is_some_and(|v| strips(v, options)) {
                obj.shift_remove(*key);
                changed = true;
            }
        }
    }
    changed
}

/// `stripThoughtSignatures` over every assistant message (bootstrap.ts). `options: None` is
/// the default mode (strip `thought_signature` values starting with `msg_`).
pub fn strip_thought_signatures(
    input: &Transcript,
    options: Option<ThoughtSignatureOptions>,
) -> Transcript {
    input.map_messages(|_, message| {
        if !message.request_facts().is_role("assistant") || !message.as_str().contains("hought") {
            return None;
        }
        let mut obj = object(message);
        let changed = obj
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .is_some_and(|b| strip_signatures_in(b, options));
        changed.then_some(Value::Object(obj))
    })
}

// ---- non-image parts (pi-embedded-helpers/images.ts: sanitizeSessionMessagesImages) ----------

/// The non-image rules of `sanitizeSessionMessagesImages` (images.ts): tool results
/// whose content is not an array get `[]` (Quirk, kept for compatibility: string tool output is
/// dropped from the replayed history, as upstream does); assistants other than errored ones
/// get, in `full` mode only, their thought signatures stripped unless `preserve_signatures`
/// and lose blank text blocks, and are dropped if nothing remains (OpenClaw 2026.3.13
/// `src/agents/pi-embedded-helpers/images.ts`). Image blocks are left to the image pass.
pub fn sanitize_message_blocks(
    input: &Transcript,
    mode: SanitizeMode,
    preserve_signatures: bool,
    signature_options: Option<ThoughtSignatureOptions>,
) -> Transcript {
    // What an assistant's rewrite reads besides the message: the key of the cached rewrites.
    let assistant_inputs = [
        format!("{mode:?}"),
        preserve_signatures.to_string(),
        format!("{signature_options:?}"),
    ];
    input.edit_messages(|_, message| {
        let facts = message.request_facts();
        match facts.role.as_deref() {
            Some("toolResult") => {
                // Most results already hold an array, which the facts say: no value tree.
                if facts.exact && facts.content_is_array {
                    return Edit::Keep;
                }
                let mut obj = object(message);
                if obj.get("content").is_some_and(Value::is_array) {
                    return Edit::Keep;
                }
                obj.insert("content".into(), json!([]));
                Edit::from_value(Some(Value::Object(obj)))
            }
            // Outside `full` mode an assistant is left as it is: not parsed at all. In it, the
            // outcome (most often: unchanged) is cached with the message for these options.
            Some("assistant")
                if mode == SanitizeMode::Full && facts.stop_reason.as_deref() != Some("error") =>
            {
                edited_once(message, BLOCKS_PASS, &assistant_inputs, |message| {
                    sanitized_assistant_blocks(message, preserve_signatures, signature_options)
                })
            }
            _ => Edit::Keep,
        }
    })
}

/// The assistant rule of [`sanitize_message_blocks`] in `full` mode: thought signatures
/// stripped unless `preserve_signatures`, blank text blocks dropped, `Value::Null` (drop the
/// message) when no block is left, `None` when nothing changed.
fn sanitized_assistant_blocks(
    message: &Message,
    preserve_signatures: bool,
    signature_options: Option<ThoughtSignatureOptions>,
) -> Option<Value> {
    // The request shape (read in the facts' pass) says when nothing can change: content that
    // is not an array, or a non-empty one without blank text blocks and, when signatures
    // are stripped, without a signature field.
    let shape = message.send_shape();
    match shape.content {
        ContentShape::Blocks { total, .. }
            if total > 0
                && shape.blank_text_blocks == 0
                && (preserve_signatures || shape.thought_signature_blocks == 0) =>
        {
            return None;
        }
        ContentShape::Blocks { .. } => {}
        _ => return None,
    }
    let mut obj = object(message);
    let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
    let mut changed = !preserve_signatures && strip_signatures_in(blocks, signature_options);
    let before = blocks.len();
    blocks.retain(|b| {
        !(block_type(b) == Some("text")
            && b.get("text")
                .and_then(Value::as_str)
                .is_some_and(|t| js_trim(t).is_empty()))
    });
    if blocks.is_empty() {
        return Some(Value::Null);
    }
    changed |= blocks.len() != before;
    changed.then_some(Value::Object(obj))
}

// ---- thinking (pi-embedded-runner/thinking.ts: dropThinkingBlocks) -----------------------------

/// `dropThinkingBlocks` (as in 2026.3.13): removes `thinking` blocks from assistants; an
/// emptied message gets
/// `[{"type":"text","text":""}]`.
pub fn drop_thinking_blocks(input: &Transcript) -> Transcript {
    input.map_to_messages(|_, message| {
        let facts = message.request_facts();
        // The facts count the thinking blocks: a message without any is not parsed.
        if !facts.is_role("assistant") || (facts.exact && facts.thinking_blocks == 0) {
            return None;
        }
        // The rewrite depends on the message alone: cached with it, the next request gets
        // the same message back (see `Message::cached_edit`).
        rewritten_once(message, DROP_THINKING_PASS, |message| {
            let mut obj = object(message);
            let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
            let before = blocks.len();
            blocks.retain(|b| block_type(b) != Some("thinking"));
            if blocks.len() == before {
                return None;
            }
            if blocks.is_empty() {
                blocks.push(json!({"type": "text", "text": ""}));
            }
            Some(Value::Object(obj))
        })
    })
}

/// The passes whose rewrites are cached with each message, as cache keys.
const DROP_THINKING_PASS: &str = "drop_thinking_blocks";
const ZERO_USAGE_PASS: &str = "zero_stale_usage";
const BLOCKS_PASS: &str = "sanitize_message_blocks";
const STRIP_DETAILS_PASS: &str = "strip_tool_result_details";
const NORMALIZE_USAGE_PASS: &str = "normalize_usage";

/// The edit `rewrite(message)` means (`None` keeps, `Value::Null` drops, any other value
/// replaces), cached with `message` under `pass` and `inputs` (what the rewrite reads besides
/// the message, such as the pass's options): the passes run again on every request over the
/// same messages, and the cached edit gives back the very message rewritten last time, with
/// everything later passes cached on it. Asked with other inputs than those cached, the edit
/// is computed again and not cached (the first stays).
fn edited_once(
    message: &Message,
    pass: &'static str,
    inputs: &[String],
    rewrite: impl FnOnce(&Message) -> Option<Value>,
) -> Edit {
    let cached = message.cached_edit(pass, inputs);
    if let CachedEdit::Hit(edit) = cached {
        return edit;
    }
    let edit = Edit::from_value(rewrite(message));
    if matches!(cached, CachedEdit::Missing) {
        let key = RewriteKey {
            pass,
            inputs: inputs.to_vec(),
        };
        message.cache_rewrite(key, edit.clone());
    }
    edit
}

/// [`edited_once`] for a pass whose rewrite depends on the message alone and never drops it:
/// the rewritten message, `None` when unchanged.
fn rewritten_once(
    message: &Message,
    pass: &'static str,
    rewrite: impl FnOnce(&Message) -> Option<Value>,
) -> Option<Message> {
    match edited_once(message, pass, &[], rewrite) {
        Edit::Replace(rewritten) => Some(rewritten),
        Edit::Keep | Edit::Drop => None,
    }
}

/// `stripToolResultDetails`: removes `details` from tool results (never sent to a model).
pub fn strip_tool_result_details(input: &Transcript) -> Transcript {
    input.map_to_messages(|_, message| {
        if !message.request_facts().is_role("toolResult") {
            return None;
        }
        // Most tool results pi writes carry `details`: the outcome is cached with each (and
        // the lookup comes first: the scan reads the whole result, often kilobytes).
        rewritten_once(message, STRIP_DETAILS_PASS, |message| {
            if !message.as_str().contains("\"details\"") {
                return None;
            }
            let mut obj = object(message);
            obj.shift_remove("details").map(|_| Value::Object(obj))
        })
    })
}

/// Drops every tool result whose id an earlier tool result already answered (first wins, as
/// the pairing repair counts duplicates). The pairing repair itself keeps a second same-id
/// result inside one span when nothing else in the span changes (upstream quirk, kept for
/// compatibility); `sanitize_session_history` runs this after it so no provider receives two
/// results for one call (a clawctx addition).
pub fn drop_duplicate_tool_results(input: &Transcript) -> Transcript {
    let mut seen = std::collections::HashSet::new();
    input.map_messages(|_, message| {
        let facts = message.request_facts();
        let id = facts
            .tool_result_id
            .as_deref()
            .filter(|_| facts.is_role("toolResult"))?;
        (!seen.insert(id.to_owned())).then_some(Value::Null)
    })
}

// ---- usage hygiene (pi-embedded-runner/google.ts) ----------------------------------------------

/// The zero usage snapshot (google.ts, `stripStaleAssistantUsageBeforeLatestCompaction`).
pub fn zero_usage() -> Value {
    json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

/// [`zero_usage`], built once.
fn zero_usage_ref() -> &'static Value {
    static ZERO: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    ZERO.get_or_init(zero_usage)
}

/// `parseMessageTimestamp`: a finite number, or a string `Date.parse` reads.
fn timestamp_ms(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => crate::base::iso_to_ms(s).map(|ms| ms as f64),
        _ => None,
    }
}

/// `typeof value === "object" && value !== null` (arrays included).
fn is_js_object(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Object(_) | Value::Array(_)))
}

/// `stripStaleAssistantUsageBeforeLatestCompaction` of OpenClaw 2026.3.13
/// `src/agents/pi-embedded-runner/google.ts`: when a `compactionSummary` message exists, the
/// object `usage` of every assistant before the latest one (by position, or by a timestamp at
/// or before the summary's) becomes the zero snapshot, so usage-based estimates do not count
/// compacted context.
pub fn zero_stale_usage(input: &Transcript) -> Transcript {
    let messages = input.messages();
    let Some(summary_index) = messages
        .iter()
        .rposition(|m| m.request_facts().is_role("compactionSummary"))
    else {
        return input.clone();
    };
    let summary = &messages[summary_index];
    let summary_time = if summary.request_facts().exact {
        summary.request_facts().timestamp_ms
    } else {
        timestamp_ms(
            summary
                .to_value()
                .ok()
                .as_ref()
                .and_then(|v| v.get("timestamp")),
        )
    };
    let stale = |i: usize, time: Option<f64>| {
        i < summary_index || matches!((time, summary_time), (Some(t), Some(s)) if t <= s)
    };
    let zeroed = |message: &Message| {
        let mut obj = object(message);
        if !is_js_object(obj.get("usage")) || obj.get("usage") == Some(zero_usage_ref()) {
            return None;
        }
        obj.insert("usage".into(), zero_usage());
        Some(Value::Object(obj))
    };
    input.map_to_messages(|i, message| {
        let facts = message.request_facts();
        if !facts.is_role("assistant") {
            return None;
        }
        // Decided from the facts (usage, timestamp): only a message zeroed here is parsed,
        // and its zeroed form (which depends on the message alone) is cached with it.
        if facts.exact {
            let usage = facts.usage.as_ref();
            if !is_js_object(usage)
                || !stale(i, facts.timestamp_ms)
                || usage == Some(zero_usage_ref())
            {
                return None;
            }
            return rewritten_once(message, ZERO_USAGE_PASS, zeroed);
        }
        let obj = object(message);
        if !is_js_object(obj.get("usage")) || !stale(i, timestamp_ms(obj.get("timestamp"))) {
            return None;
        }
        zeroed(message).map(|value| Message::new(JsonText::owned(to_js_string(&value))))
    })
}

/// A finite number, as `asFiniteNumber`/`toFiniteCostNumber` accept it.
fn finite(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| v.as_f64().is_some_and(f64::is_finite))
}

/// `a ?? b ?? …` over fields of `usage`: the first one that is neither absent nor null.
fn first_present<'a>(usage: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter()
        .filter_map(|k| usage.get(*k))
        .find(|v| !v.is_null())
}

fn as_num(value: Option<&Value>) -> f64 {
    value.and_then(Value::as_f64).unwrap_or(0.0)
}

/// `normalizeAssistantUsageSnapshot` (google.ts, with `normalizeUsage` of `src/agents/usage.ts`):
/// `{input, output, cacheRead, cacheWrite, totalTokens, cost?}` read from the usage and its
/// provider-specific aliases, or the zero snapshot when nothing numeric is found.
fn usage_snapshot(usage: Option<&Value>) -> Value {
    let Some(Value::Object(raw)) = usage.filter(|v| crate::base::is_truthy(v)) else {
        return zero_usage();
    };
    let details_cached = raw
        .get("prompt_tokens_details")
        .and_then(|d| d.get("cached_tokens"))
        .filter(|v| !v.is_null());
    let read = |keys: &[&str]| finite(first_present(raw, keys));
    let mut input = read(&[
        "input",
        "inputTokens",
        "input_tokens",
        "promptTokens",
        "prompt_tokens",
    ])
    .cloned();
    if input.as_ref().is_some_and(|v| as_num(Some(v)) < 0.0) {
        input = Some(Value::from(0));
    }
    let output = read(&[
        "output",
        "outputTokens",
        "output_tokens",
        "completionTokens",
        "completion_tokens",
    ])
    .cloned();
    let cache_read = finite(
        first_present(
            raw,
            &[
                "cacheRead",
                "cache_read",
                "cache_read_input_tokens",
                "cached_tokens",
            ],
        )
        .or(details_cached),
    )
    .cloned();
    let cache_write = read(&["cacheWrite", "cache_write", "cache_creation_input_tokens"]).cloned();
    let total = read(&["total", "totalTokens", "total_tokens"]).cloned();
    if input.is_none()
        && output.is_none()
        && cache_read.is_none()
        && cache_write.is_none()
        && total.is_none()
    {
        return zero_usage();
    }
    let or_zero = |v: Option<Value>| v.unwrap_or_else(|| Value::from(0));
    let sum = as_num(input.as_ref())
        + as_num(output.as_ref())
        + as_num(cache_read.as_ref())
        + as_num(cache_write.as_ref());
    let mut out = Map::new();
    out.insert("input".into(), or_zero(input));
    out.insert("output".into(), or_zero(output));
    out.insert("cacheRead".into(), or_zero(cache_read));
    out.insert("cacheWrite".into(), or_zero(cache_write));
    out.insert(
        "totalTokens".into(),
        total.unwrap_or_else(|| json_number(sum)),
    );
    if let Some(cost) = cost_snapshot(raw.get("cost")) {
        out.insert("cost".into(), cost);
    }
    Value::Object(out)
}

/// `normalizeAssistantUsageCost` (google.ts): the finite cost fields (0 for the others, the
/// total defaulting to their sum), or `None` when the cost is not an object with any.
fn cost_snapshot(cost: Option<&Value>) -> Option<Value> {
    let Some(Value::Object(cost)) = cost else {
        return None;
    };
    let keys = ["input", "output", "cacheRead", "cacheWrite", "total"];
    let values: Vec<Option<Value>> = keys.iter().map(|k| finite(cost.get(*k)).cloned()).collect();
    if values.iter().all(Option::is_none) {
        return None;
    }
    let sum: f64 = values[..4].iter().map(|v| as_num(v.as_ref())).sum();
    let mut out = Map::new();
    for (key, value) in keys.iter().zip(values) {
        let fallback = if *key == "total" {
            json_number(sum)
        } else {
            Value::from(0)
        };
        out.insert((*key).into(), value.unwrap_or(fallback));
    }
    Some(Value::Object(out))
}

/// `===` of two JSON values where both must be numbers.
fn same_number(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a.and_then(Value::as_f64), b.and_then(Value::as_f64)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// `ensureAssistantUsageSnapshots` of OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/google.ts`:
/// every assistant's usage becomes its normalized snapshot, unless the stored usage already
/// has exactly the snapshot's numbers (and cost), in which case it is kept as it is.
pub fn normalize_usage(input: &Transcript) -> Transcript {
    input.map_to_messages(|_, message| {
        let facts = message.request_facts();
        if !facts.is_role("assistant") {
            return None;
        }
        // The outcome is cached with the message; the first time, the facts' copy of the
        // stored usage decides whether it is kept, without parsing the message.
        rewritten_once(message, NORMALIZE_USAGE_PASS, |message| {
            if facts.exact && keeps_usage(facts.usage.as_ref()) {
                return None;
            }
            let mut obj = object(message);
            let usage = obj.get("usage");
            if keeps_usage(usage) {
                return None;
            }
            let snapshot = usage_snapshot(usage);
            obj.insert("usage".into(), snapshot);
            Some(Value::Object(obj))
        })
    })
}

/// Whether `ensureAssistantUsageSnapshots` keeps a stored usage as it is: an object with
/// exactly its snapshot's numbers (and cost).
fn keeps_usage(usage: Option<&Value>) -> bool {
    let Some(Value::Object(stored)) = usage else {
        return false;
    };
    let snapshot = usage_snapshot(usage);
    let numbers_match = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"]
        .iter()
        .all(|k| same_number(stored.get(*k), snapshot.get(*k)));
    let cost_matches = match (snapshot.get("cost"), stored.get("cost")) {
        (Some(cost), Some(Value::Object(stored_cost))) => {
            ["input", "output", "cacheRead", "cacheWrite", "total"]
                .iter()
                .all(|k| same_number(stored_cost.get(*k), cost.get(*k)))
        }
        (None, None) => true,
        _ => false,
    };
    numbers_match && cost_matches
}

fn json_number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::from(0), Value::Number)
    }
}

// ---- turn validation (pi-embedded-helpers/turns.ts: validate*Turns) ----------------------------

/// `validateGeminiTurns` (turns.ts): merges consecutive assistant messages.
pub fn validate_gemini_turns(input: &Transcript) -> Transcript {
    let messages = input.messages();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut merged_value: Option<Map<String, Value>> = None;
    let mut last_role: Option<&str> = None;
    let mut changed = false;
    let flush = |merged: &mut Option<Map<String, Value>>, out: &mut Vec<Message>| {
        if let Some(obj) = merged.take() {
            out.push(Message::new(JsonText::owned(to_js_string(&Value::Object(
                obj,
            )))));
        }
    };
    for message in messages {
        let role = message.request_facts().role.as_deref();
        match role {
            None => {
                // Role-less messages pass through without resetting the last role.
                flush(&mut merged_value, &mut out);
                out.push(message.clone());
                continue;
            }
            Some("assistant") if last_role == Some("assistant") => {
                changed = true;
                let mut earlier = match merged_value.take() {
                    Some(obj) => obj,
                    None => object(&out.pop().expect("the previous assistant was emitted")),
                };
                let later = object(message);
                let mut content = merged_content(earlier.get("content"));
                content.extend(merged_content(later.get("content")));
                match later.get("content") {
                    // Nothing to say and no array on the later side: keep its content as it is
                    // (upstream writes `[]`, an assistant the next sanitize pass drops).
                    Some(value) if content.is_empty() && !value.is_array() => {
                        earlier.insert("content".into(), value.clone());
                    }
                    None if content.is_empty() => {
                        earlier.shift_remove("content");
                    }
                    _ => {
                        earlier.insert("content".into(), Value::Array(content));
                    }
                }
                // Upstream overwrites these only with truthy later values.
                for key in ["usage", "stopReason", "errorMessage"] {
                    if let Some(v) = later.get(key).filter(|v| crate::base::is_truthy(v)) {
                        earlier.insert(key.into(), v.clone());
                    }
                }
                merged_value = Some(earlier);
            }
            _ => {
                flush(&mut merged_value, &mut out);
                out.push(message.clone());
            }
        }
        last_role = role;
    }
    flush(&mut merged_value, &mut out);
    if changed {
        Transcript::from_messages(out)
    } else {
        input.clone()
    }
}

/// Result ids that answer calls, from the messages after an assistant up to the next one
/// (`stripDanglingAnthropicToolUses`): tool results, `tool` role messages, and result blocks
/// inside user content.
fn answered_ids(messages: &[Message]) -> std::collections::HashSet<String> {
    let mut ids = std::collections::HashSet::new();
    for message in messages {
        let facts = message.request_facts();
        if facts.is_role("assistant") {
            break;
        }
        match facts.role.as_deref() {
            Some("toolResult") | Some("tool") => {
                let obj = object(message);
                for key in ["toolCallId", "toolUseId", "tool_call_id", "tool_use_id"] {
                    if let Some(id) = obj
                        .get(key)
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                    {
                        ids.insert(id.to_owned());
                    }
                }
            }
            Some("user") if message.as_str().contains("ool") => {
                let obj = object(message);
                for block in obj
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if matches!(
                        block_type(block),
                        Some("toolResult" | "tool_result" | "tool")
                    ) {
                        for key in ["toolCallId", "toolUseId", "tool_use_id", "tool_call_id"] {
                            if let Some(id) = block
                                .get(key)
                                .and_then(Value::as_str)
                                .filter(|s| !s.is_empty())
                            {
                                ids.insert(id.to_owned());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    ids
}

/// Dangling-tool-call stripping (`stripDanglingAnthropicToolUses`): tool calls no later message
/// answers are removed;
/// an assistant left with no blocks gets `[tool calls omitted]` (or `[]` if it errored).
pub fn strip_dangling_tool_calls(input: &Transcript) -> Transcript {
    let messages = input.messages();
    input.map_messages(|i, message| {
        let facts = message.request_facts();
        if !facts.is_role("assistant") || !facts.has_input_tool_call_blocks {
            return None;
        }
        let answered = answered_ids(&messages[i + 1..]);
        let mut obj = object(message);
        let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
        let before = blocks.len();
        blocks.retain(|b| {
            let is_call = block_type(b).is_some_and(|t| PAIRING_TOOL_CALL_TYPES.contains(&t));
            !is_call
                || b.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| answered.contains(id))
        });
        if blocks.len() == before {
            return None;
        }
        if blocks.is_empty() {
            let errored = matches!(facts.stop_reason.as_deref(), Some("aborted" | "error"));
            if !errored {
                blocks.push(json!({"type": "text", "text": TOOL_CALLS_OMITTED_TEXT}));
            }
        }
        Some(Value::Object(obj))
    })
}

fn content_array(value: Option<&Value>) -> Vec<Value> {
    value.and_then(Value::as_array).cloned().unwrap_or_default()
}

/// The blocks a message brings into a merged turn. Upstream counts a string content as empty
/// and so deletes its text; here a non-blank string becomes one text block (clawctx hardening:
/// the merge must not lose what was said, and a merged turn left empty would be dropped by the
/// next sanitize pass, so the first pass would not be a fixed point).
fn merged_content(value: Option<&Value>) -> Vec<Value> {
    match value {
        Some(Value::String(text)) if !js_trim(text).is_empty() => {
            vec![json!({"type": "text", "text": text})]
        }
        _ => content_array(value),
    }
}

fn is_object_message(message: &Message) -> bool {
    message.request_facts().is_object
}

/// `stripDanglingAnthropicToolUses` of OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/turns.ts`:
/// an assistant directly followed by a `user` message keeps only the `toolUse` blocks that user
/// message answers with a `toolResult` block (`toolUseId`); falsy blocks go, a content that is
/// not an array becomes `[]`, and one emptied entirely gets `[tool calls omitted]`.
fn strip_unanswered_tool_uses(input: &Transcript) -> Transcript {
    let messages = input.messages();
    input.map_messages(|i, message| {
        let facts = message.request_facts();
        if !facts.is_role("assistant") {
            return None;
        }
        let next = messages.get(i + 1)?;
        if !next.request_facts().is_role("user") {
            return None;
        }
        // Only falsy elements and `toolUse` blocks can go: without either (or without an array
        // content) neither message is parsed.
        if facts.exact
            && (!facts.content_is_array
                || (!facts.falsy_elements && !facts.has_input_tool_call_blocks))
        {
            return None;
        }
        let answered: Vec<Value> = content_array(object(next).get("content"))
            .iter()
            .filter(|b| block_type(b) == Some("toolResult"))
            .filter_map(|b| {
                b.get("toolUseId")
                    .filter(|v| crate::base::is_truthy(v))
                    .cloned()
            })
            .collect();
        let mut obj = object(message);
        // A content that is not an array holds no tool uses. Upstream replaces it with `[]`,
        // deleting an assistant's string text, and the emptied turn is dropped by the next
        // sanitize pass; it is kept as it is (clawctx hardening).
        if !obj.get("content").is_some_and(Value::is_array) {
            return None;
        }
        let original = content_array(obj.get("content"));
        let filtered: Vec<Value> = original
            .iter()
            .filter(|b| crate::base::is_truthy(b))
            .filter(|b| {
                block_type(b) != Some("toolUse") || {
                    let id = b
                        .get("id")
                        .filter(|v| crate::base::is_truthy(v))
                        .cloned()
                        .unwrap_or_else(|| Value::from(""));
                    answered.contains(&id)
                }
            })
            .cloned()
            .collect();
        let content = if !original.is_empty() && filtered.is_empty() {
            vec![json!({"type": "text", "text": TOOL_CALLS_OMITTED_TEXT})]
        } else {
            filtered
        };
        if obj.get("content") == Some(&Value::Array(content.clone())) {
            return None;
        }
        obj.insert("content".into(), Value::Array(content));
        Some(Value::Object(obj))
    })
}

/// `validateAnthropicTurns` of OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/turns.ts`:
/// strips tool uses the directly following user message does not answer
/// (`stripDanglingAnthropicToolUses`), then merges consecutive user messages (content arrays
/// concatenated, a string content as a text block where upstream counts it as empty; the later
/// message's other fields; `timestamp` = later ?? earlier). Messages without a role do not
/// interrupt a run of users: a user after them merges into the last user. Assistants are never
/// merged or dropped. The stricter
/// dangling-call strip is [`strip_dangling_tool_calls`].
pub fn validate_anthropic_turns(input: &Transcript) -> Transcript {
    let stripped = strip_unanswered_tool_uses(input);
    let mut out: Vec<Message> = Vec::with_capacity(stripped.len());
    let mut changed = stripped != *input;
    let mut last_role: Option<String> = None;
    for message in stripped.messages() {
        let role = message.request_facts().role.clone();
        let Some(role) = role.filter(|_| is_object_message(message)) else {
            out.push(message.clone());
            continue;
        };
        if role == "user" && last_role.as_deref() == Some("user") {
            // The later user merges into the last user, past role-less messages in between
            // (left where they are). Upstream merges into whatever message came last, so a
            // role-less one became a user next to the earlier user, merged on the next pass.
            let target = out
                .iter()
                .rposition(|m| m.request_facts().is_role("user") && is_object_message(m));
            if let Some(target) = target {
                let earlier = object(&out[target]);
                let mut later = object(message);
                let mut content = merged_content(earlier.get("content"));
                content.extend(merged_content(later.get("content")));
                later.insert("content".into(), Value::Array(content));
                if later.get("timestamp").is_none_or(Value::is_null) {
                    match earlier.get("timestamp") {
                        Some(ts) => later.insert("timestamp".into(), ts.clone()),
                        None => later.shift_remove("timestamp"),
                    };
                }
                out[target] = Message::new(JsonText::owned(to_js_string(&Value::Object(later))));
                changed = true;
                continue;
            }
        }
        out.push(message.clone());
        last_role = Some(role);
    }
    if changed {
        Transcript::from_messages(out)
    } else {
        input.clone()
    }
}

// ---- Google turn ordering (bootstrap.ts: sanitizeGoogleTurnOrdering) ---------------------------

/// `sanitizeGoogleTurnOrdering` (bootstrap.ts): a transcript that starts with an assistant gets a
/// `"(session bootstrap)"` user turn in front. Messages that `convertToLlm` never sends (no
/// role, an unknown one) are looked past: upstream looks at the first message only, so an
/// assistant behind such a message reached the provider first (clawctx hardening).
pub fn sanitize_google_turn_ordering(input: &Transcript, now_ms: i64) -> Transcript {
    let sent = |m: &&Message| {
        matches!(
            m.request_facts().role.as_deref(),
            Some(
                "user"
                    | "assistant"
                    | "toolResult"
                    | "bashExecution"
                    | "custom"
                    | "branchSummary"
                    | "compactionSummary"
            )
        )
    };
    let Some(first) = input.messages().iter().find(sent) else {
        return input.clone();
    };
    if !first.request_facts().is_role("assistant") {
        return input.clone();
    }
    let bootstrap = json!({"role": "user", "content": GOOGLE_BOOTSTRAP_TEXT, "timestamp": now_ms});
    let mut out = vec![Message::new(JsonText::owned(to_js_string(&bootstrap)))];
    out.extend(input.messages().iter().cloned());
    Transcript::from_messages(out)
}

// ---- OpenAI Responses reasoning ---------------------------------------------------------------

/// `parseOpenAIReasoningSignature` of OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/openai.ts`:
/// whether a `thinkingSignature` (an object, or a string holding one) is an OpenAI reasoning
/// item (`id` starting `rs_`, `type` `reasoning` or `reasoning.*`).
fn is_openai_reasoning_signature(value: Option<&Value>) -> bool {
    let Some(value) = value.filter(|v| crate::base::is_truthy(v)) else {
        return false;
    };
    let parsed;
    let candidate = match value {
        Value::String(text) => {
            let trimmed = js_trim(text);
            if !trimmed.starts_with('{') || !trimmed.ends_with('}') {
                return false;
            }
            // As every reader: `JSON.parse` takes 1e400 (Infinity) and lone surrogates.
            match crate::base::parse_value(trimmed) {
                Ok(v) => {
                    parsed = v;
                    &parsed
                }
                Err(_) => return false,
            }
        }
        other => other,
    };
    let id = candidate.get("id").and_then(Value::as_str).unwrap_or("");
    let kind = candidate.get("type").and_then(Value::as_str).unwrap_or("");
    id.starts_with("rs_") && (kind == "reasoning" || kind.starts_with("reasoning."))
}

/// `downgradeOpenAIReasoningBlocks` of OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/openai.ts`:
/// OpenAI Responses rejects a replayed reasoning item without the item that followed it, so a
/// `thinking` block whose signature is a reasoning item and that no non-thinking block follows
/// in its assistant turn is dropped; an assistant left with no content is dropped too.
pub fn downgrade_openai_reasoning(input: &Transcript) -> Transcript {
    input.map_messages(|_, message| {
        if !message.request_facts().is_role("assistant") || !message.as_str().contains("rs_") {
            return None;
        }
        let mut obj = object(message);
        let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
        let is_thinking = |b: &Value| b.is_object() && block_type(b) == Some("thinking");
        let keep: Vec<bool> = (0..blocks.len())
            .map(|i| {
                let block = &blocks[i];
                !is_thinking(block)
                    || !is_openai_reasoning_signature(block.get("thinkingSignature"))
                    || blocks[i + 1..].iter().any(|b| !is_thinking(b))
            })
            .collect();
        if keep.iter().all(|k| *k) {
            return None;
        }
        let mut flags = keep.into_iter();
        blocks.retain(|_| flags.next().unwrap_or(true));
        if blocks.is_empty() {
            return Some(Value::Null);
        }
        Some(Value::Object(obj))
    })
}

/// `downgradeOpenAIFunctionCallReasoningPairs` of OpenClaw 2026.3.13
/// `src/agents/pi-embedded-helpers/openai.ts`: a tool call whose id pairs a call id with an
/// `fc_*` item id (`call_…|fc_…`) and that no reasoning item precedes in its assistant turn
/// keeps only the call id (OpenAI rejects the item id without its reasoning item); the tool
/// results directly after that assistant follow (`toolCallId`, `toolUseId`).
pub fn downgrade_openai_function_call_pairs(input: &Transcript) -> Transcript {
    let mut pending: std::collections::HashMap<String, String> = Default::default();
    input.map_messages(|_, message| {
        let role = message.request_facts().role.clone();
        if !is_object_message(message) {
            pending.clear();
            return None;
        }
        match role.as_deref() {
            Some("assistant") => {
                pending.clear();
                let mut obj = object(message);
                let blocks = obj.get_mut("content").and_then(Value::as_array_mut)?;
                let mut seen_reasoning = false;
                for block in blocks.iter_mut() {
                    if !block.is_object() {
                        continue;
                    }
                    if block_type(block) == Some("thinking")
                        && is_openai_reasoning_signature(block.get("thinkingSignature"))
                    {
                        seen_reasoning = true;
                        continue;
                    }
                    if !block_type(block).is_some_and(|t| PAIRING_TOOL_CALL_TYPES.contains(&t)) {
                        continue;
                    }
                    let Some(id) = block.get("id").and_then(Value::as_str).map(str::to_owned)
                    else {
                        continue;
                    };
                    let Some(separator) = id.find('|') else {
                        continue;
                    };
                    let (call_id, item_id) = (&id[..separator], &id[separator + 1..]);
                    if separator == 0 || item_id.is_empty() || seen_reasoning {
                        continue;
                    }
                    if !item_id.starts_with("fc_") {
                        continue;
                    }
                    pending.insert(id.clone(), call_id.to_owned());
                    block["id"] = Value::from(call_id);
                }
                (!pending.is_empty()).then_some(Value::Object(obj))
            }
            Some("toolResult") if !pending.is_empty() => {
                let mut obj = object(message);
                let mut changed = false;
                for key in ["toolCallId", "toolUseId"] {
                    let next = obj
                        .get(key)
                        .and_then(Value::as_str)
                        .and_then(|id| pending.get(id))
                        .cloned();
                    if let Some(next) = next {
                        obj.insert(key.into(), Value::from(next));
                        changed = true;
                    }
                }
                changed.then_some(Value::Object(obj))
            }
            _ => {
                pending.clear();
                None
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The pass's output: for each input message, `None` when the same message object came
    /// back, else the value of what replaced it (`Null` when dropped is not used here).
    fn outcome(input: &Transcript, output: &Transcript) -> Vec<Option<Value>> {
        assert_eq!(input.len(), output.len());
        input
            .messages()
            .iter()
            .zip(output.messages())
            .map(|(a, b)| (!a.is_same(b)).then(|| b.to_value().unwrap()))
            .collect()
    }

    /// `pass(input)` and how many messages it parsed.
    fn counted(
        pass: impl Fn(&Transcript) -> Transcript,
        input: &Transcript,
    ) -> (Transcript, usize) {
        for m in input.messages() {
            m.request_facts();
        }
        PARSED.with(|n| n.set(0));
        let out = pass(input);
        (out, PARSED.with(std::cell::Cell::get))
    }

    #[test]
    fn sanitize_message_blocks_parses_only_tool_results_without_an_array() {
        let input = Transcript::from_values(&[
            json!({"role":"toolResult","toolCallId":"a","content":[{"type":"text","text":"r"}]}),
            json!({"role":"toolResult","toolCallId":"b","content":"text"}),
            json!({"role":"toolResult","toolCallId":"c"}),
            json!({"role":"assistant","content":[{"type":"text","text":" "}]}),
        ]);
        let (out, parsed) = counted(
            |t| sanitize_message_blocks(t, SanitizeMode::ImagesOnly, false, None),
            &input,
        );
        assert_eq!(parsed, 2);
        assert_eq!(
            outcome(&input, &out),
            vec![
                None,
                Some(json!({"role":"toolResult","toolCallId":"b","content":[]})),
                Some(json!({"role":"toolResult","toolCallId":"c","content":[]})),
                None,
            ]
        );
    }

    /// In `full` mode an assistant is parsed only when its request shape shows something to
    /// change: a blank text block, an empty content array, or a signature to strip.
    #[test]
    fn sanitize_message_blocks_in_full_mode_parses_only_assistants_it_may_change() {
        let input = Transcript::from_values(&[
            json!({"role":"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall","id":"c","name":"n","arguments":{}}]}),
            json!({"role":"assistant","content":"plain"}),
            json!({"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":" \n"}]}),
            json!({"role":"assistant","content":[{"type":"thinking","thinking":"t","thought_signature":"msg_1"}]}),
            json!({"role":"assistant","content":[{"type":"thinking","thinking":"t","thought_signature":"sig"}]}),
        ]);
        let (out, parsed) = counted(
            |t| sanitize_message_blocks(t, SanitizeMode::Full, false, None),
            &input,
        );
        assert_eq!(parsed, 3);
        assert_eq!(
            outcome(&input, &out),
            vec![
                None,
                None,
                Some(json!({"role":"assistant","content":[{"type":"text","text":"a"}]})),
                Some(json!({"role":"assistant","content":[{"type":"thinking","thinking":"t"}]})),
                None,
            ]
        );
        // Signatures kept: the assistants with one are not parsed either.
        let (_, parsed) = counted(
            |t| sanitize_message_blocks(t, SanitizeMode::Full, true, None),
            &Transcript::new(input.messages().iter().map(|m| m.text().clone()).collect()),
        );
        assert_eq!(parsed, 1);
        // An empty content array is parsed, and the message dropped.
        let empty = Transcript::from_values(&[json!({"role":"assistant","content":[]})]);
        let (out, parsed) = counted(
            |t| sanitize_message_blocks(t, SanitizeMode::Full, false, None),
            &empty,
        );
        assert_eq!((out.len(), parsed), (0, 1));
    }

    #[test]
    fn drop_thinking_blocks_parses_only_messages_with_thinking() {
        let input = Transcript::from_values(&[
            json!({"role":"assistant","content":[{"type":"text","text":"a \"thinking\" word"}]}),
            json!({"role":"assistant","content":[{"type":"thinking","thinking":""},{"type":"text","text":"b"}]}),
            json!({"role":"assistant","content":[{"type":"thinking","thinking":"t"}]}),
            json!({"role":"user","content":[{"type":"thinking","thinking":"t"}]}),
            json!({"role":"assistant","content":"thinking"}),
        ]);
        let (out, parsed) = counted(drop_thinking_blocks, &input);
        assert_eq!(parsed, 2);
        assert_eq!(
            outcome(&input, &out),
            vec![
                None,
                Some(json!({"role":"assistant","content":[{"type":"text","text":"b"}]})),
                Some(json!({"role":"assistant","content":[{"type":"text","text":""}]})),
                None,
                None,
            ]
        );
    }

    /// A second run over the same messages gives back the very messages the first rewrote,
    /// parsing nothing, and equal to a run over fresh copies.
    #[test]
    fn drop_thinking_and_zero_usage_rewrites_are_cached_with_the_message() {
        let used = json!({"input": 5, "output": 1});
        let input = Transcript::from_values(&[
            json!({"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a"}],"usage":used,"timestamp":1}),
            json!({"role":"assistant","content":[{"type":"text","text":"b"}],"usage":used,"timestamp":2}),
            json!({"role":"compactionSummary","summary":"s","timestamp":5}),
            json!({"role":"assistant","content":[{"type":"thinking","thinking":"u"}],"usage":used,"timestamp":9}),
        ]);
        for pass in [drop_thinking_blocks, zero_stale_usage] {
            let fresh =
                || Transcript::new(input.messages().iter().map(|m| m.text().clone()).collect());
            let t = fresh();
            let (first, _) = counted(pass, &t);
            let (second, parsed) = counted(pass, &t);
            assert_eq!(parsed, 0);
            assert_eq!(first.to_json(), pass(&fresh()).to_json());
            for (a, b) in first.messages().iter().zip(second.messages()) {
                assert!(a.is_same(b));
            }
            assert!(!first.messages()[0].is_same(&t.messages()[0]));
        }
    }

    /// Block sanitation (full mode), details stripping and usage normalisation cache their
    /// outcome with each message too, kept, dropped or rewritten: a second run parses nothing
    /// and gives back the same messages, equal to a run over fresh copies.
    #[test]
    fn block_details_and_usage_rewrites_are_cached_with_the_message() {
        let input = Transcript::from_values(&[
            json!({"role":"assistant","content":[{"type":"text","text":"kept"}],"usage":{"input":1}}),
            json!({"role":"assistant","content":[{"type":"text","text":" "},{"type":"text","text":"b"}]}),
            json!({"role":"assistant","content":[{"type":"text","text":"  "}]}),
            json!({"role":"toolResult","toolCallId":"a","content":[],"details":{"exit":0}}),
            json!({"role":"assistant","content":[{"type":"text","text":"c","thought_signature":"msg_1"}]}),
        ]);
        let full = |t: &Transcript| sanitize_message_blocks(t, SanitizeMode::Full, false, None);
        let passes: [&dyn Fn(&Transcript) -> Transcript; 3] =
            [&full, &strip_tool_result_details, &normalize_usage];
        for pass in passes {
            let fresh =
                || Transcript::new(input.messages().iter().map(|m| m.text().clone()).collect());
            let t = fresh();
            let (first, parsed_first) = counted(pass, &t);
            let (second, parsed) = counted(pass, &t);
            assert!(parsed_first > 0);
            assert_eq!(parsed, 0);
            assert_eq!(first.to_json(), pass(&fresh()).to_json());
            assert_eq!(first.len(), second.len());
            for (a, b) in first.messages().iter().zip(second.messages()) {
                assert!(a.is_same(b));
            }
        }
        // The block pass's cache is keyed by its options: asked to keep signatures, the same
        // messages are judged again (the signature stays), not served the cached strip.
        let t = Transcript::new(input.messages().iter().map(|m| m.text().clone()).collect());
        let stripped = full(&t);
        assert_eq!(stripped.len(), 4);
        assert!(!stripped.to_json().contains("thought_signature"));
        let (kept, parsed) = counted(
            |t| sanitize_message_blocks(t, SanitizeMode::Full, true, None),
            &t,
        );
        assert!(parsed > 0);
        assert!(kept.to_json().contains("\"thought_signature\":\"msg_1\""));
        assert_eq!(full(&t).to_json(), stripped.to_json());
    }

    #[test]
    fn zero_stale_usage_parses_only_messages_it_zeroes() {
        let used = json!({"input": 5, "output": 1});
        let input = Transcript::from_values(&[
            json!({"role":"assistant","usage":used,"timestamp":1}),
            json!({"role":"assistant","usage":zero_usage(),"timestamp":2}),
            json!({"role":"assistant","usage":"n/a","timestamp":3}),
            json!({"role":"compactionSummary","summary":"s","timestamp":"2026-01-01T00:00:10.000Z"}),
            json!({"role":"assistant","usage":used,"timestamp":"2026-01-01T00:00:09.000Z"}),
            json!({"role":"assistant","usage":used,"timestamp":1767225611000_i64}),
            json!({"role":"assistant","usage":[1],"timestamp":1767225610000_i64}),
            json!({"role":"assistant","usage":used}),
            json!({"role":"user","usage":used,"timestamp":1}),
        ]);
        let zeroed = |mut v: Value| {
            v["usage"] = zero_usage();
            Some(v)
        };
        let values: Vec<Value> = input
            .messages()
            .iter()
            .map(|m| m.to_value().unwrap())
            .collect();
        let (out, parsed) = counted(zero_stale_usage, &input);
        assert_eq!(parsed, 3);
        assert_eq!(
            outcome(&input, &out),
            vec![
                zeroed(values[0].clone()),
                None,
                None,
                None,
                zeroed(values[4].clone()),
                None,
                zeroed(values[6].clone()),
                None,
                None,
            ]
        );
    }

    #[test]
    fn normalize_usage_parses_only_messages_it_rewrites() {
        let snapshot = json!({"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7});
        let input = Transcript::from_values(&[
            json!({"role":"assistant","content":[],"usage":snapshot}),
            json!({"role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":4}}),
            json!({"role":"assistant","content":[]}),
            json!({"role":"assistant","content":[],"usage":null}),
            json!({"role":"assistant","content":[],"usage":{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{"total":1}}}),
            json!({"role":"user","content":"u"}),
        ]);
        let (out, parsed) = counted(normalize_usage, &input);
        assert_eq!(parsed, 4);
        assert_eq!(
            outcome(&input, &out),
            vec![
                None,
                Some(json!({"role":"assistant","content":[],"usage":snapshot})),
                Some(json!({"role":"assistant","content":[],"usage":zero_usage()})),
                Some(json!({"role":"assistant","content":[],"usage":zero_usage()})),
                Some(
                    json!({"role":"assistant","content":[],"usage":{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,
                    "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":1}}})
                ),
                None,
            ]
        );
    }

    #[test]
    fn validate_anthropic_turns_parses_only_turns_that_change() {
        let input = Transcript::from_values(&[
            json!({"role":"user","content":"q","timestamp":1}),
            json!({"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{}}]}),
            json!({"role":"toolResult","toolCallId":"c","content":[]}),
            json!({"role":"assistant","content":[{"type":"text","text":"a"}]}),
            json!({"role":"user","content":"u1"}),
            json!({"role":"user","content":[{"type":"text","text":"u2"}]}),
            json!({"role":"assistant","content":[{"type":"text","text":"b"},null,""]}),
            json!({"role":"user","content":"u3"}),
            json!({"role":"assistant","content":"plain"}),
            json!({"role":"user","content":"u4"}),
        ]);
        // The dangling-call strip reads the assistant and the user after it; the merge both users.
        let (out, parsed) = counted(validate_anthropic_turns, &input);
        assert_eq!(parsed, 4);
        assert_eq!(out.len(), 9);
        for (i, j) in [(0, 0), (1, 1), (2, 2), (3, 3), (7, 6), (8, 7), (9, 8)] {
            assert!(out.messages()[j].is_same(&input.messages()[i]), "{i}");
        }
        assert_eq!(
            out.messages()[4].to_value().unwrap(),
            json!({"role":"user","content":[{"type":"text","text":"u1"},{"type":"text","text":"u2"}]})
        );
        assert_eq!(
            out.messages()[5].to_value().unwrap(),
            json!({"role":"assistant","content":[{"type":"text","text":"b"}]})
        );
    }
}
