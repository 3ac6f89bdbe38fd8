//! Read-only views of message fields, parsed from a message's JSON text without building a
//! value tree, and the shared tool-call helpers of OpenClaw 2026.3.13
//! `src/agents/tool-call-id.ts`.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::base::{js_trim, parse_value, to_js_string, JsonText, RawObject};

/// The assistant block types that are tool calls: pi's `toolCall` and the provider-shaped
/// names real OpenClaw files contain (OpenClaw 2026.3.13 `src/agents/tool-call-id.ts`,
/// `extractToolCallsFromAssistant`). The one definition: pairing, history sanitation,
/// tool-call id rewriting, input checks and token counting use it, and Python reads it as
/// `clawctx._core._TOOL_CALL_TYPES`.
pub const PAIRING_TOOL_CALL_TYPES: [&str; 3] = ["toolCall", "toolUse", "functionCall"];
/// Snake-case call blocks (`tool_use`, `tool_call`, `function_call`): never paired, and in
/// OpenClaw 2026.3.13 `src/agents/session-transcript-repair.ts` (`repairToolCallInputs`) not
/// checked either, only redacted.
pub const SNAKE_CASE_TOOL_CALL_TYPES: [&str; 3] = ["tool_use", "tool_call", "function_call"];
/// Block types that count as tool calls for input sanitation (`repairToolCallInputs` of later
/// OpenClaw; 2026.3.13 checks the pairing three). Wider than pairing's, so a snake_case call
/// never gets a synthetic result (upstream quirk).
pub const INPUT_TOOL_CALL_TYPES: [&str; 6] = {
    let [a, b, c] = PAIRING_TOOL_CALL_TYPES;
    let [d, e, f] = SNAKE_CASE_TOOL_CALL_TYPES;
    [a, b, c, d, e, f]
};

/// The longest tool-call name the input repair keeps (`repairToolCallInputs`).
pub const TOOL_CALL_NAME_MAX_CHARS: usize = 64;

/// Whether the input repair keeps a tool-call block of type `ty` exactly as it is, when no
/// allowed-name list applies: a call with its input, a non-blank id and a valid name with no
/// surrounding whitespace, or a snake_case call; neither named `sessions_spawn` (whose
/// attachments may be redacted). `false` means the repair reads the block. The rule the facts'
/// pass records for a message (`MessageFacts::tool_call_inputs_kept`) and the repair skips by.
pub(crate) fn call_block_kept_as_is(
    ty: &str,
    has_input: bool,
    id: Option<&str>,
    name: Option<&str>,
) -> bool {
    let spawn = |name: &str| js_trim(name).eq_ignore_ascii_case("sessions_spawn");
    if SNAKE_CASE_TOOL_CALL_TYPES.contains(&ty) {
        return !name.is_some_and(spawn);
    }
    has_input
        && id.is_some_and(|id| !js_trim(id).is_empty())
        && name.is_some_and(|name| {
            js_trim(name) == name
                && name.len() <= TOOL_CALL_NAME_MAX_CHARS
                && is_valid_name_chars(name)
                && !spawn(name)
        })
}

/// Tool-call names of `[A-Za-z0-9_-]`, not empty.
pub(crate) fn is_valid_name_chars(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

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

    pub fn role(&self) -> Option<Cow<'a, str>> {
        self.raw.get_str("role")
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
