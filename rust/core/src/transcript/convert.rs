//! `convertToLlm` (pi-mono 0.58.3 `packages/coding-agent/src/core/messages.ts`): AgentMessages →
//! the user/assistant/toolResult messages an
//! LLM provider accepts, with pi's exact wrapper texts.

use serde_json::{json, Value};

use super::list::{Message, Transcript};
use crate::base::{object, to_js_string, JsonText};

/// messages.ts, `BRANCH_SUMMARY_PREFIX` (note: no newline before `</summary>`).
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";
/// messages.ts, `COMPACTION_SUMMARY_PREFIX`.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";

/// Converts every message; unchanged roles keep their exact text, unknown roles are dropped.
pub fn convert_to_llm(messages: &Transcript) -> Transcript {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages.messages() {
        match message.role() {
            Some("user" | "assistant" | "toolResult") => out.push(message.clone()),
            Some(role @ ("bashExecution" | "custom" | "branchSummary" | "compactionSummary")) => {
                let Ok(value) = message.to_value() else {
                    continue;
                };
                if let Some(converted) = convert_message(role, &value) {
                    out.push(Message::new(JsonText::owned(to_js_string(&converted))));
                }
            }
            _ => {}
        }
    }
    Transcript::from_messages(out)
}

fn user_text(text: String, timestamp: Option<&Value>) -> Value {
    user_content(json!([{"type": "text", "text": text}]), timestamp)
}

fn user_content(content: Value, timestamp: Option<&Value>) -> Value {
    object([
        ("role", Some(Value::from("user"))),
        ("content", Some(content)),
        ("timestamp", timestamp.cloned()),
    ])
}

/// JavaScript string coercion of a template-literal operand.
fn js_string(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) => "null".to_owned(),
        Some(v @ Value::Number(_)) => to_js_string(v),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                if v.is_null() {
                    String::new()
                } else {
                    js_string(Some(v))
                }
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
    }
}

fn convert_message(role: &str, message: &Value) -> Option<Value> {
    let timestamp = message.get("timestamp");
    match role {
        "bashExecution" => {
            if message
                .get("excludeFromContext")
                .is_some_and(crate::base::is_truthy)
            {
                return None;
            }
            Some(user_text(bash_execution_text(message), timestamp))
        }
        "custom" => {
            let content = match message.get("content") {
                Some(Value::String(s)) => json!([{"type": "text", "text": s}]),
                Some(other) => other.clone(),
                None => Value::Null,
            };
            Some(user_content(content, timestamp))
        }
        "branchSummary" => {
            let summary = js_string(message.get("summary"));
            Some(user_text(
                format!("{BRANCH_SUMMARY_PREFIX}{summary}{BRANCH_SUMMARY_SUFFIX}"),
                timestamp,
            ))
        }
        "compactionSummary" => {
            let summary = js_string(message.get("summary"));
            Some(user_text(
                format!("{COMPACTION_SUMMARY_PREFIX}{summary}{COMPACTION_SUMMARY_SUFFIX}"),
                timestamp,
            ))
        }
        _ => None,
    }
}

/// messages.ts, `bashExecutionToText`: the text a `bashExecution` message becomes.
pub fn bash_execution_text(message: &Value) -> String {
    let command = js_string(message.get("command"));
    let mut text = format!("Ran `{command}`\n");
    let output = message.get("output");
    let has_output = output.is_some_and(crate::base::is_truthy);
    if has_output {
        text.push_str("```\n");
        text.push_str(&js_string(output));
        text.push_str("\n```");
    } else {
        text.push_str("(no output)");
    }
    if message.get("cancelled").is_some_and(crate::base::is_truthy) {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = message.get("exitCode").and_then(Value::as_f64) {
        if code != 0.0 {
            text.push_str("\n\nCommand exited with code ");
            text.push_str(&js_string(message.get("exitCode")));
        }
    }
    if message.get("truncated").is_some_and(crate::base::is_truthy) {
        if let Some(path) = message
            .get("fullOutputPath")
            .filter(|p| crate::base::is_truthy(p))
        {
            text.push_str("\n\n[Output truncated. Full output: ");
            text.push_str(&js_string(Some(path)));
            text.push(']');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(values: Vec<Value>) -> Vec<Value> {
        let t = convert_to_llm(&Transcript::from_values(&values));
        t.messages().iter().map(|m| m.to_value().unwrap()).collect()
    }

    #[test]
    fn bash_execution_variants() {
        let out = convert(vec![
            json!({"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":false,"timestamp":5}),
            json!({"role":"bashExecution","command":"false","output":"","exitCode":1,"cancelled":false,"truncated":false,"timestamp":6}),
            json!({"role":"bashExecution","command":"sleep","output":"x","exitCode":null,"cancelled":true,"truncated":true,"fullOutputPath":"/tmp/o","timestamp":7}),
            json!({"role":"bashExecution","command":"hidden","output":"x","exitCode":0,"excludeFromContext":true,"timestamp":8}),
        ]);
        assert_eq!(out.len(), 3);
        assert_eq!(
            out[0],
            json!({"role":"user","content":[{"type":"text","text":"Ran `ls`\n```\na\nb\n```"}],"timestamp":5})
        );
        assert_eq!(
            out[1]["content"][0]["text"],
            "Ran `false`\n(no output)\n\nCommand exited with code 1"
        );
        assert_eq!(
            out[2]["content"][0]["text"],
            "Ran `sleep`\n```\nx\n```\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/o]"
        );
    }

    #[test]
    fn summaries_and_custom() {
        let out = convert(vec![
            json!({"role":"branchSummary","summary":"S","fromId":"x","timestamp":1}),
            json!({"role":"compactionSummary","summary":"C","tokensBefore":9,"timestamp":2}),
            json!({"role":"custom","customType":"t","content":"hello","display":true,"timestamp":3}),
            json!({"role":"custom","customType":"t","content":[{"type":"text","text":"a"}],"display":false,"timestamp":4}),
            json!({"role":"mystery","timestamp":5}),
        ]);
        assert_eq!(out.len(), 4);
        assert_eq!(
            out[0]["content"][0]["text"],
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nS</summary>"
        );
        assert_eq!(
            out[1]["content"][0]["text"],
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\nC\n</summary>"
        );
        assert_eq!(
            out[2],
            json!({"role":"user","content":[{"type":"text","text":"hello"}],"timestamp":3})
        );
        assert_eq!(out[3]["content"], json!([{"type":"text","text":"a"}]));
    }

    #[test]
    fn pass_through_keeps_bytes() {
        let t =
            Transcript::from_json(r#"[{"role":"user","content":"x" ,"timestamp":1.0}]"#).unwrap();
        assert_eq!(
            convert_to_llm(&t).to_json(),
            r#"[{"role":"user","content":"x" ,"timestamp":1.0}]"#
        );
    }
}
