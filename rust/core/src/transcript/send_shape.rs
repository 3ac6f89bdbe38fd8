//! What the request guard (`hygiene::request_guard`) needs to know of one message to tell
//! whether a request built from it is one the provider accepts: its role, how an assistant
//! turn ended and which model wrote it, its pi tool calls (`type: "toolCall"`, the only block
//! pi-ai sends as a call), a tool result's id, and whether it holds blank text. Computed once
//! per message, in the same pass over its text as its facts (`facts::scan_message`), and
//! cached with it, so a session's history is read once, not on every request.

use serde_json::Value;

use crate::base::js_trim;

/// A `toolCall` block as pi-ai reads it (`transform-messages.ts`): its id (`""` when it is
/// not a string) and its name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallShape {
    pub id: String,
    pub name: Option<String>,
}

/// How a message's `content` looks to a provider converter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ContentShape {
    /// Absent, `null`, or not a string or array.
    #[default]
    Missing,
    /// A string of whitespace only (or empty).
    BlankString,
    /// A string with text.
    Text,
    /// An array of blocks: how many, and how many of them are not blank text.
    Blocks { total: u32, not_blank: u32 },
}

/// The request-relevant shape of one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendShape {
    pub role: Option<String>,
    /// Assistant only.
    pub stop_reason: Option<String>,
    /// Assistant only: who wrote it (`provider`, `api`, `model`).
    pub provider: Option<String>,
    pub api: Option<String>,
    pub model: Option<String>,
    /// Assistant only: the `toolCall` blocks, in order.
    pub calls: Vec<CallShape>,
    /// Tool result only: `toolCallId` when it is a string, and `toolName`.
    pub result_id: Option<String>,
    pub result_name: Option<String>,
    pub content: ContentShape,
    /// Text blocks whose text is a string of whitespace only.
    pub blank_text_blocks: u32,
    /// Assistant only: text blocks (blank ones too), and those of them without a
    /// `textSignature` (OpenAI Responses gives each its own message item, its id from the
    /// signature).
    pub text_blocks: u32,
    pub unsigned_text_blocks: u32,
    /// Assistant only: thinking blocks with text that are not redacted (another model's
    /// become text when replayed).
    pub thinking_blocks: u32,
    /// Assistant only: provider compaction blocks (`COMPACTION_BLOCK_TYPE`).
    pub compaction_blocks: u32,
    /// Blocks with a `thought_signature` or `thoughtSignature` field (any value), which
    /// `stripThoughtSignatures` may remove.
    pub thought_signature_blocks: u32,
}

fn string_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl SendShape {
    /// A user-side message a converter sends at all: one of blank text only is left out by
    /// every payload writer (pi-ai's converters skip empty user content).
    pub fn user_turn_is_sent(&self) -> bool {
        match self.content {
            ContentShape::Text => true,
            ContentShape::Blocks { not_blank, .. } => not_blank > 0,
            ContentShape::BlankString => false,
            // Summaries, bash executions and custom messages carry their text elsewhere.
            ContentShape::Missing => !self.is_role("user"),
        }
    }

    /// The shape of a message value (anything that is not an object has no role).
    pub fn of_value(value: &Value) -> SendShape {
        let role = string_field(value, "role");
        let mut shape = SendShape {
            role,
            ..SendShape::default()
        };
        let is_assistant = shape.role.as_deref() == Some("assistant");
        if is_assistant {
            shape.stop_reason = string_field(value, "stopReason");
            shape.provider = string_field(value, "provider");
            shape.api = string_field(value, "api");
            shape.model = string_field(value, "model");
        }
        if shape.role.as_deref() == Some("toolResult") {
            shape.result_id = string_field(value, "toolCallId");
            shape.result_name = string_field(value, "toolName");
        }
        shape.content = match value.get("content") {
            Some(Value::String(s)) if js_trim(s).is_empty() => ContentShape::BlankString,
            Some(Value::String(_)) => ContentShape::Text,
            Some(Value::Array(blocks)) => {
                let mut not_blank = 0u32;
                for block in blocks {
                    let ty = block.get("type").and_then(Value::as_str);
                    let blank_text = ty == Some("text")
                        && block
                            .get("text")
                            .and_then(Value::as_str)
                            .is_some_and(|t| js_trim(t).is_empty());
                    if blank_text {
                        shape.blank_text_blocks += 1;
                    } else {
                        not_blank += 1;
                    }
                    if block.get("thought_signature").is_some()
                        || block.get("thoughtSignature").is_some()
                    {
                        shape.thought_signature_blocks += 1;
                    }
                    if is_assistant && ty == Some("text") {
                        shape.text_blocks += 1;
                        let signed = block
                            .get("textSignature")
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty());
                        if !signed {
                            shape.unsigned_text_blocks += 1;
                        }
                    }
                    if is_assistant
                        && ty == Some("thinking")
                        && !block.get("redacted").is_some_and(crate::base::is_truthy)
                        && block
                            .get("thinking")
                            .and_then(Value::as_str)
                            .is_some_and(|t| !js_trim(t).is_empty())
                    {
                        shape.thinking_blocks += 1;
                    }
                    if is_assistant && ty == Some("compaction") {
                        shape.compaction_blocks += 1;
                    }
                    if is_assistant && ty == Some("toolCall") {
                        shape.calls.push(CallShape {
                            id: block
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                            name: string_field(block, "name"),
                        });
                    }
                }
                ContentShape::Blocks {
                    total: u32::try_from(blocks.len()).unwrap_or(u32::MAX),
                    not_blank,
                }
            }
            _ => ContentShape::Missing,
        };
        shape
    }

    pub fn is_role(&self, role: &str) -> bool {
        self.role.as_deref() == Some(role)
    }

    /// An assistant turn pi-ai's `transformMessages` skips (it ended in an error or abort).
    pub fn is_failed_assistant(&self) -> bool {
        self.is_role("assistant")
            && matches!(self.stop_reason.as_deref(), Some("error" | "aborted"))
    }
}
