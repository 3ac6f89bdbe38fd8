//! Tool-use / tool-result pairing repair (OpenClaw 2026.3.13
//! `src/agents/session-transcript-repair.ts`, `repairToolUseResultPairing`).
//!
//! Strict providers reject a transcript unless every tool call of an assistant turn is answered
//! by exactly one tool result right after it. The repair moves results up to their assistant,
//! drops duplicates (first wins, transcript-wide) and orphans, and inserts a synthetic error
//! result for every call left without one.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::list::{Message, Transcript};
use super::message::{edit_message, ToolCallRef};
use super::shared::SharedTranscript;
use crate::base::{js_trim, to_js_string, JsonText};

/// `makeMissingToolResult`: the text of a synthetic missing result.
pub const MISSING_TOOL_RESULT_TEXT: &str =
    "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair.";

/// What happens to an assistant turn that ended in `error` or `aborted` and its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErroredAssistantPolicy {
    /// OpenClaw 2026.3.13 (baseline): the turn is kept as it is, and results that follow it are
    /// dropped as orphans; no synthetic results are made for it.
    #[default]
    Baseline,
    /// OpenClaw 2026.5 `"preserve"`: the turn keeps the results that answer its calls (in call
    /// order); missing ones are not synthesized.
    Preserve,
    /// OpenClaw 2026.5 `"drop"`: the turn and its results are removed.
    Drop,
}

#[derive(Debug, Clone, Default)]
pub struct PairingOptions {
    /// `timestamp` of synthetic results.
    pub now_ms: i64,
    pub errored_assistant_policy: ErroredAssistantPolicy,
    /// Text of synthetic results instead of [`MISSING_TOOL_RESULT_TEXT`] (2026.5
    /// `missingToolResultText`, e.g. `"aborted"` for OpenAI Responses replay).
    pub missing_tool_result_text: Option<String>,
}

crate::base::python_class! {
    (name = "PairingReport", module = "clawctx._core.transcript", get_all)
    /// Result of `repair_tool_pairing`.
    #[derive(Debug, Clone)]
    pub struct PairingReport {
        /// The repaired transcript.
        // The input itself when nothing was flagged (upstream quirk: so a second same-id result in
        // one span can survive); the binding then shows the caller's own object.
        pub messages: SharedTranscript,
        /// The synthetic results inserted, in order (a `Transcript`).
        pub added: SharedTranscript,
        /// Tool results dropped because an earlier result answered the same id.
        pub dropped_duplicate_count: usize,
        /// Tool results dropped because no earlier call has their id.
        pub dropped_orphan_count: usize,
        /// Whether results were moved next to their calls.
        // Upstream's flag: true whenever anything changed, and also whenever an assistant's span
        // held both results and other messages (even if their order was already right).
        pub moved: bool,
    }
}

/// The synthetic result for a call (`makeMissingToolResult`).
pub fn missing_tool_result(call: &ToolCallRef, text: &str, now_ms: i64) -> JsonText {
    let value = json!({
        "role": "toolResult",
        "toolCallId": call.id,
        "toolName": call.name.as_deref().unwrap_or("unknown"),
        "content": [{"type": "text", "text": text}],
        "isError": true,
        "timestamp": now_ms,
    });
    JsonText::owned(to_js_string(&value))
}

/// `normalizeToolResultName`: a trimmed `toolName`, else the call's name, else `"unknown"` when
/// the name was a (blank) string. `None` when nothing changes.
fn normalized_tool_name(tool_name: Option<&str>, fallback: Option<&str>) -> Option<String> {
    if let Some(name) = tool_name {
        let trimmed = js_trim(name);
        if !trimmed.is_empty() {
            return (trimmed != name).then(|| trimmed.to_owned());
        }
    }
    if let Some(fallback) = fallback.map(js_trim).filter(|f| !f.is_empty()) {
        return Some(fallback.to_owned());
    }
    tool_name.map(|_| "unknown".to_owned())
}

/// Whether a result is exactly the synthetic result [`missing_tool_result`] makes for a call
/// named `call_name` with `text`. Upstream writes the call's raw name there (`""`, or
/// `" read "` untrimmed) and then renames such a result on every later pass (`"unknown"`,
/// `"read"`); leaving it alone keeps the first pass upstream's and makes the second a no-op.
fn is_synthetic_result(message: &Message, call_name: Option<&str>, text: &str) -> bool {
    let Ok(Value::Object(obj)) = message.text().to_value() else {
        return false;
    };
    obj.get("toolName").and_then(Value::as_str) == Some(call_name.unwrap_or("unknown"))
        && obj.get("isError") == Some(&Value::Bool(true))
        && obj.get("content") == Some(&json!([{"type": "text", "text": text}]))
}

/// Records a result id as emitted; false when it was emitted before (first wins across the
/// transcript, as upstream).
fn push_result(seen: &mut HashSet<String>, id: &str) -> bool {
    seen.insert(id.to_owned())
}

/// `repairToolUseResultPairing` with the 2026.5 options.
pub fn repair_tool_pairing(input: &Transcript, options: &PairingOptions) -> PairingReport {
    input.compute_facts();
    let messages = input.messages();
    let text = options
        .missing_tool_result_text
        .as_deref()
        .unwrap_or(MISSING_TOOL_RESULT_TEXT);
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut added = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let (mut dropped_duplicate_count, mut dropped_orphan_count) = (0, 0);
    let (mut changed, mut moved) = (false, false);

    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        let this = message.facts();
        match this.role.as_deref() {
            Some("assistant") => {}
            Some("toolResult") => {
                dropped_orphan_count += 1;
                changed = true;
                i += 1;
                continue;
            }
            _ => {
                out.push(message.clone());
                i += 1;
                continue;
            }
        }
        let errored = matches!(this.stop_reason.as_deref(), Some("error" | "aborted"));
        let baseline_errored =
            errored && options.errored_assistant_policy == ErroredAssistantPolicy::Baseline;
        if baseline_errored || this.tool_calls.is_empty() {
            out.push(message.clone());
            i += 1;
            continue;
        }

        // The span: everything up to the next assistant.
        let call_ids: HashSet<&str> = this.tool_calls.iter().map(|c| c.id.as_str()).collect();
        let names: HashMap<&str, Option<&str>> = this
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_deref()))
            .collect();
        // The call a synthetic result was made for: the first with its id.
        let mut first_names: HashMap<&str, Option<&str>> = HashMap::new();
        for c in &this.tool_calls {
            first_names
                .entry(c.id.as_str())
                .or_insert(c.name.as_deref());
        }
        let mut span_results: HashMap<String, Message> = HashMap::new();
        let mut remainder: Vec<Message> = Vec::new();
        let mut j = i + 1;
        while j < messages.len() && !messages[j].facts().is_role("assistant") {
            let next = &messages[j];
            let next_facts = next.facts();
            j += 1;
            if !next_facts.is_role("toolResult") {
                remainder.push(next.clone());
                continue;
            }
            match next_facts
                .tool_result_id
                .as_deref()
                .filter(|id| call_ids.contains(id))
            {
                Some(id) => {
                    if seen.contains(id) {
                        dropped_duplicate_count += 1;
                        changed = true;
                        continue;
                    }
                    let fallback = names.get(id).copied().flatten();
                    let normalized =
                        match normalized_tool_name(next_facts.tool_name.as_deref(), fallback) {
                            Some(name)
                                if !is_synthetic_result(
                                    next,
                                    first_names.get(id).copied().flatten(),
                                    text,
                                ) =>
                            {
                                changed = true;
                                Message::new(edit_message(next, |obj| {
                                    obj.insert("toolName".into(), Value::from(name));
                                }))
                            }
                            _ => next.clone(),
                        };
                    // A later result for the same id in this span is ignored without a flag
                    // (an upstream quirk).
                    span_results.entry(id.to_owned()).or_insert(normalized);
                }
                None => {
                    dropped_orphan_count += 1;
                    changed = true;
                }
            }
        }

        if errored {
            // 2026.5 policies; the baseline never gets here.
            if options.errored_assistant_policy == ErroredAssistantPolicy::Preserve {
                out.push(message.clone());
                for call in &this.tool_calls {
                    if let Some(result) = span_results.get(&call.id) {
                        if push_result(&mut seen, &call.id) {
                            out.push(result.clone());
                        } else {
                            dropped_duplicate_count += 1;
                            changed = true;
                        }
                    }
                }
            } else {
                changed = true;
            }
            out.extend(remainder);
            i = j;
            continue;
        }

        out.push(message.clone());
        if !span_results.is_empty() && !remainder.is_empty() {
            moved = true;
            changed = true;
        }
        for call in &this.tool_calls {
            let result = match span_results.get(&call.id) {
                Some(result) => result.clone(),
                None => {
                    // A call id repeated in one assistant gets a second synthetic result that
                    // is then dropped as a duplicate, exactly as upstream counts it.
                    let synthetic = missing_tool_result(call, text, options.now_ms);
                    added.push(synthetic.clone());
                    changed = true;
                    Message::new(synthetic)
                }
            };
            if push_result(&mut seen, &call.id) {
                out.push(result);
            } else {
                dropped_duplicate_count += 1;
                changed = true;
            }
        }
        out.extend(remainder);
        i = j;
    }

    let flagged = changed || moved;
    PairingReport {
        messages: if flagged {
            Transcript::from_messages(out)
        } else {
            input.clone()
        }
        .into(),
        added: Transcript::new(added).into(),
        dropped_duplicate_count,
        dropped_orphan_count,
        moved: flagged,
    }
}
