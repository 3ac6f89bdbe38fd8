//! Read-only views of message fields, parsed from a message's JSON text without building a
//! value tree, plus the shared helpers of hot-path §3.1.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::json::{parse_value, raw_as_str, to_js_string, JsonText, RawObject};

/// Block types that count as tool calls for pairing (§3.1.1).
pub const PAIRING_TOOL_CALL_TYPES: [&str; 3] = ["toolCall", "toolUse", "functionCall"];

/// The top-level fields of one message.
pub struct MessageView<'a> {
    pub raw: RawObject<'a>,
}

impl<'a> MessageView<'a> {
    pub fn parse(text: &'a JsonText) -> Option<MessageView<'a>> {
        RawObject::parse(text.as_str())
            .ok()
            .map(|raw| MessageView { raw })
    }

    pub fn str_field(&self, key: &str) -> Option<Cow<'a, str>> {
        self.raw.get_str(key)
    }

    pub fn role(&self) -> Option<Cow<'a, str>> {
        self.str_field("role")
    }

    pub fn stop_reason(&self) -> Option<Cow<'a, str>> {
        self.str_field("stopReason")
    }

    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.raw.get(key)
    }

    /// The `content` array's elements, if `content` is an array.
    pub fn content_blocks(&self) -> Option<Vec<&'a RawValue>> {
        let content = self.raw.get("content")?;
        if !content.get().starts_with('[') {
            return None;
        }
        serde_json::from_str(content.get()).ok()
    }
}

/// A tool call as pairing sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRef {
    pub id: String,
    pub name: Option<String>,
}

/// `extractToolCallsFromAssistant` (§3.1.1): blocks of a pairing type with a non-empty
/// string `id`, in order.
pub fn extract_tool_calls(view: &MessageView<'_>) -> Vec<ToolCallRef> {
    let Some(blocks) = view.content_blocks() else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|block| {
            let b = RawObject::parse(block.get()).ok()?;
            let ty = b.get_str("type")?;
            if !PAIRING_TOOL_CALL_TYPES.contains(&ty.as_ref()) {
                return None;
            }
            let id = b.get_str("id").filter(|id| !id.is_empty())?;
            Some(ToolCallRef {
                id: id.into_owned(),
                name: b.get_str("name").map(Cow::into_owned),
            })
        })
        .collect()
}

/// `extractToolResultId` (§3.1.2): `toolCallId`, else `toolUseId`, each if a non-empty string.
pub fn tool_result_id(view: &MessageView<'_>) -> Option<String> {
    ["toolCallId", "toolUseId"]
        .iter()
        .find_map(|key| view.str_field(key).filter(|id| !id.is_empty()))
        .map(Cow::into_owned)
}

/// Parses a message, applies `edit` to its object, and serializes it like `JSON.stringify`.
pub fn edit_message(
    text: &JsonText,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) -> JsonText {
    let mut value = text.to_value().unwrap_or(Value::Null);
    if let Some(obj) = value.as_object_mut() {
        edit(obj);
    }
    JsonText::owned(to_js_string(&value))
}

/// Reads a raw value as a `Value` (`Null` when unreadable).
pub fn raw_value(raw: &RawValue) -> Value {
    parse_value(raw.get()).unwrap_or(Value::Null)
}

/// A string field read from raw JSON, if it is a string.
pub fn raw_str(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    raw.and_then(raw_as_str)
}
