//! The conversation text and prompts of the summary requests (pi-mono 0.58.3
//! `packages/coding-agent/src/core/compaction/utils.ts`: `serializeConversation`;
//! `compaction.ts`: the prompt builders).

use serde_json::{Map, Value};

use super::prompts::{
    NO_PRIOR_HISTORY, SUMMARIZATION_PROMPT, TOOL_RESULT_MAX_CHARS, TURN_CONTEXT_SEPARATOR,
    TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
};
use crate::base::{to_js_string, utf16_len};
use crate::transcript::{convert_to_llm, Transcript};

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
pub(super) fn truncate_for_summary(text: &str, max: u64) -> String {
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
