//! The facts every transcript operation needs about a message, computed in one pass over its
//! JSON text and cached with the message, so a chain of operations (input sanitation, pairing,
//! truncation, estimation, pruning) parses each message once.
//!
//! The pass deserializes into small borrowed structs: string fields that only need a length
//! are measured on serde's unescaped view and never copied. Messages the fast pass cannot read
//! (duplicate keys and other oddities) fall back to a full parse with the same rules.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize as DeriveDeserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::estimate::IMAGE_CHARS;
use super::estimate::{IMAGE_CHAR_ESTIMATE, OTHER_ROLE_CHARS};
use super::message::INPUT_TOOL_CALL_TYPES;
use super::message::{call_block_kept_as_is, ToolCallRef, PAIRING_TOOL_CALL_TYPES};
use super::send_shape::{CallShape, ContentShape, SendShape};
use crate::base::{js_trim, utf16_len};
use crate::base::{parse_value, JsonText};

/// What the operations know about a message without parsing it again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageFacts {
    pub role: Option<String>,
    /// The message parses as a JSON object (`to_value` gives `Value::Object`).
    pub is_object: bool,
    /// An object whose fields were read one by one: the block and usage facts below describe
    /// it exactly. False when the fast pass and the full parse both failed to read it; the
    /// passes that skip a message by its facts parse such a message instead.
    pub exact: bool,
    pub stop_reason: Option<String>,
    /// Pairing tool calls of an assistant (OpenClaw 2026.3.13 `src/agents/tool-call-id.ts`,
    /// `extractToolCallsFromAssistant`).
    pub tool_calls: Vec<ToolCallRef>,
    /// The assistant has a block of one of the six input-sanitation types
    /// (`INPUT_TOOL_CALL_TYPES` in message.rs).
    pub has_input_tool_call_blocks: bool,
    /// Every such block is one the input repair keeps as it is
    /// (`message::call_block_kept_as_is`); `false` also when the message was read
    /// by the full-parse fallback (duplicate keys and other oddities): the repair reads it.
    pub tool_call_inputs_kept: bool,
    /// `toolCallId` / `toolUseId` of a tool result (tool-call-id.ts, `extractToolResultId`).
    pub tool_result_id: Option<String>,
    pub tool_name: Option<String>,
    /// pi's `estimateTokens` characters (pi-mono 0.58.3 compaction.ts, UTF-16).
    pub pi_chars: u64,
    /// The context pruner's characters (OpenClaw pruner.ts, `estimateMessageChars`).
    pub pruning_chars: u64,
    /// The content holds an image block.
    pub has_image: bool,
    /// Text blocks (with string text) in an array content.
    pub text_parts: u64,
    /// `calculateContextTokens(usage)` when the message has a `usage` object.
    pub usage_tokens: Option<u64>,
    /// UTF-16 length of the text the message shows: `content` as a string, or its text blocks.
    pub text_chars: u64,
    /// UTF-16 length of its thinking blocks.
    pub thinking_chars: u64,
    /// `content` is an array.
    pub content_is_array: bool,
    /// Block objects of an array content whose `type` is `"thinking"`
    /// (`dropThinkingBlocks` removes them).
    pub thinking_blocks: u32,
    /// An array content holds a falsy element (`null`, `false`, `0`, `""`), which
    /// `stripDanglingAnthropicToolUses` filters out.
    pub falsy_elements: bool,
    /// An assistant's `usage` as stored (`None` when absent or `null`).
    pub usage: Option<Value>,
    /// `parseMessageTimestamp` of an assistant's or a compaction summary's `timestamp`: a
    /// finite number, or a string `Date.parse` reads.
    pub timestamp_ms: Option<f64>,
}

impl MessageFacts {
    pub fn is_role(&self, role: &str) -> bool {
        self.role.as_deref() == Some(role)
    }

    /// The derived reader also reads an array (fields by position): such a message is no
    /// object, and its facts are not exact.
    fn object(mut self, is_object: bool) -> MessageFacts {
        self.is_object = is_object;
        self.exact &= is_object;
        self
    }

    /// pi's `estimateTokens`.
    pub fn pi_tokens(&self) -> u64 {
        self.pi_chars.div_ceil(4)
    }

    /// Computes the facts of one message's JSON text.
    pub fn scan(text: &JsonText) -> MessageFacts {
        match serde_json::from_str::<Scan<'_>>(text.as_str()) {
            Ok(scan) => scan.into_facts().object(is_object_text(text.as_str())),
            Err(_) => match parse_value(text.as_str()) {
                Ok(value) => fallback_facts(&value),
                Err(_) => MessageFacts::default(),
            },
        }
    }
}

/// The facts of one message's JSON text and its request shape, from one pass over the text
/// (the request guard and the hygiene passes read both of every message of a request).
pub fn scan_message(text: &JsonText) -> (MessageFacts, SendShape) {
    match serde_json::from_str::<Scan<'_>>(text.as_str()) {
        Ok(scan) => {
            let is_object = is_object_text(text.as_str());
            // A value that is not an object has no fields (`Value::get` reads none).
            let shape = if is_object {
                scan.send_shape()
            } else {
                SendShape::default()
            };
            (scan.into_facts().object(is_object), shape)
        }
        Err(_) => match parse_value(text.as_str()) {
            Ok(value) => (fallback_facts(&value), SendShape::of_value(&value)),
            Err(_) => (MessageFacts::default(), SendShape::default()),
        },
    }
}

/// The facts of a message the borrowed pass could not read (duplicate keys, lone surrogate
/// escapes), from its parsed value: the input repair reads such a message itself, since the
/// raw reader it uses may not see the value the parse kept.
fn fallback_facts(value: &Value) -> MessageFacts {
    MessageFacts {
        tool_call_inputs_kept: false,
        ..facts_from_value(value)
    }
}

/// Whether JSON text that parses starts an object (JSON whitespace skipped).
fn is_object_text(text: &str) -> bool {
    text.trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
}

/// `parseMessageTimestamp` (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/google.ts`) of a
/// `timestamp` field: a finite number, or a string `Date.parse` reads; `None` otherwise.
#[derive(Debug, Clone, Copy, Default)]
struct TimestampScan(Option<f64>);

impl<'de> Deserialize<'de> for TimestampScan {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TimestampScan;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TimestampScan, E> {
                Ok(TimestampScan(crate::base::iso_to_ms(v).map(|ms| ms as f64)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<TimestampScan, E> {
                Ok(TimestampScan(None))
            }
            // As `serde_json::Number::as_f64`.
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<TimestampScan, E> {
                Ok(TimestampScan(Some(v as f64)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TimestampScan, E> {
                Ok(TimestampScan(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<TimestampScan, E> {
                Ok(TimestampScan(Some(v).filter(|f| f.is_finite())))
            }
            fn visit_unit<E: de::Error>(self) -> Result<TimestampScan, E> {
                Ok(TimestampScan(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TimestampScan, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(TimestampScan(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TimestampScan, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(TimestampScan(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A string field reduced to what is needed: its UTF-16 length (`None` when not a string).
#[derive(Debug, Clone, Copy, Default)]
struct StrLen(Option<u64>);

impl<'de> Deserialize<'de> for StrLen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrOnly {
            of: |v: &str| StrLen(Some(utf16_len(v))),
            other: StrLen(None),
        })
    }
}

/// Reads a field that matters only when it is a string: `of(text)` for a string, `other` for
/// any other value (skipped).
struct StrOnly<T, F> {
    of: F,
    other: T,
}

impl<'de, T, F: FnOnce(&str) -> T> Visitor<'de> for StrOnly<T, F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok((self.of)(v))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<T, E> {
        Ok(self.other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<T, E> {
        Ok(self.other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<T, E> {
        Ok(self.other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<T, E> {
        Ok(self.other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(self.other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(self.other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(self.other)
    }
}

/// A text field reduced to its UTF-16 length and whether it is blank (`js_trim` empty), for
/// the estimators and the request guard; `None` when not a string.
#[derive(Debug, Clone, Copy, Default)]
struct TextLen(Option<(u64, bool)>);

impl TextLen {
    fn len(self) -> Option<u64> {
        self.0.map(|(len, _)| len)
    }

    fn is_blank(self) -> bool {
        self.0.is_some_and(|(_, blank)| blank)
    }

    fn has_text(self) -> bool {
        self.0.is_some_and(|(_, blank)| !blank)
    }

    fn of(text: &str) -> TextLen {
        TextLen(Some((utf16_len(text), js_trim(text).is_empty())))
    }
}

impl<'de> Deserialize<'de> for TextLen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrOnly {
            of: TextLen::of,
            other: TextLen(None),
        })
    }
}

/// A field that is truthy as JavaScript reads it (`base::is_truthy`).
#[derive(Debug, Clone, Copy, Default)]
struct Truthy(bool);

impl<'de> Deserialize<'de> for Truthy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Truthy;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Truthy, E> {
                Ok(Truthy(!v.is_empty()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Truthy, E> {
                Ok(Truthy(v))
            }
            // As `serde_json::Number::as_f64`.
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Truthy, E> {
                Ok(Truthy(v != 0))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Truthy, E> {
                Ok(Truthy(v != 0))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Truthy, E> {
                Ok(Truthy(v != 0.0 && !v.is_nan()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Truthy, E> {
                Ok(Truthy(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Truthy, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Truthy(true))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Truthy, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Truthy(true))
            }
        }
        d.deserialize_any(V)
    }
}

/// A field that is present, whatever its value (`null` too).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

/// A field kept only when it is a string.
#[derive(Debug, Clone, Default)]
struct LenientStr<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for LenientStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = LenientStr<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(LenientStr(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LenientStr(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LenientStr(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientStr(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientStr(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<'a> LenientStr<'a> {
    fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

#[derive(DeriveDeserialize)]
struct BlockScan<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: LenientStr<'a>,
    #[serde(borrow, default)]
    id: LenientStr<'a>,
    #[serde(borrow, default)]
    name: LenientStr<'a>,
    #[serde(default)]
    text: TextLen,
    #[serde(default)]
    thinking: TextLen,
    #[serde(rename = "textSignature", default)]
    text_signature: StrLen,
    #[serde(default)]
    redacted: Truthy,
    /// Gemini's thought signatures (`stripThoughtSignatures` reads both spellings).
    #[serde(rename = "thought_signature", default, deserialize_with = "present")]
    thought_signature: bool,
    #[serde(rename = "thoughtSignature", default, deserialize_with = "present")]
    thought_signature_camel: bool,
    /// `Some("null")` for an explicit null (`Option` alone would read it as absent).
    #[serde(borrow, default, deserialize_with = "present_raw")]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present_raw")]
    input: Option<&'a RawValue>,
}

fn present_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&'de RawValue>::deserialize(d).map(Some)
}

/// A content element: a block object, a falsy value (JavaScript's), or anything else.
enum Element<'a> {
    Block(Box<BlockScan<'a>>),
    Falsy,
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Element<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Element<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content element")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                BlockScan::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|b| Element::Block(Box::new(b)))
            }
            // Falsy as `base::is_truthy` reads a value.
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Element::falsy_if(v.is_empty()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Element::falsy_if(!v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Element::falsy_if(v == 0))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Element::falsy_if(v == 0))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Element::falsy_if(v == 0.0 || v.is_nan()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Element::Falsy)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Element::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl Element<'_> {
    fn falsy_if(falsy: bool) -> Self {
        if falsy {
            Element::Falsy
        } else {
            Element::Other
        }
    }
}

/// `content`: a string (its length), a list of elements, or something else.
enum ContentScan<'a> {
    Text(TextLen),
    Blocks(Vec<Element<'a>>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for ContentScan<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = ContentScan<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("message content")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ContentScan::Text(TextLen::of(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(4));
                while let Some(element) = seq.next_element::<Element<'a>>()? {
                    blocks.push(element);
                }
                Ok(ContentScan::Blocks(blocks))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ContentScan::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ContentScan::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ContentScan::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ContentScan::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ContentScan::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ContentScan::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(DeriveDeserialize)]
struct Scan<'a> {
    #[serde(borrow, default)]
    role: LenientStr<'a>,
    #[serde(rename = "stopReason", borrow, default)]
    stop_reason: LenientStr<'a>,
    #[serde(borrow, default)]
    provider: LenientStr<'a>,
    #[serde(borrow, default)]
    api: LenientStr<'a>,
    #[serde(borrow, default)]
    model: LenientStr<'a>,
    #[serde(borrow, default)]
    content: Option<ContentScan<'a>>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: LenientStr<'a>,
    #[serde(rename = "toolUseId", borrow, default)]
    tool_use_id: LenientStr<'a>,
    #[serde(rename = "toolName", borrow, default)]
    tool_name: LenientStr<'a>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(default)]
    command: StrLen,
    #[serde(default)]
    output: StrLen,
    #[serde(default)]
    summary: StrLen,
    #[serde(default)]
    timestamp: TimestampScan,
}

/// `JSON.stringify(value).length` without building the string.
fn stringified_len(raw: &RawValue) -> u64 {
    match parse_value(raw.get()) {
        Ok(value) => {
            let mut counter = Utf16Counter(0);
            let _ = crate::base::write_js(&mut counter, &value);
            counter.0
        }
        Err(_) => 0,
    }
}

/// Counts the UTF-16 code units of UTF-8 bytes written to it.
struct Utf16Counter(u64);

impl std::io::Write for Utf16Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            // One unit per character start; a 4-byte sequence is a surrogate pair.
            if b & 0xC0 != 0x80 {
                self.0 += 1;
            }
            if b >= 0xF0 {
                self.0 += 1;
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Scan<'_> {
    /// [`SendShape::of_value`] of the scanned message (the two are checked against each
    /// other in the tests below).
    fn send_shape(&self) -> SendShape {
        let role = self.role.get();
        let is_assistant = role == Some("assistant");
        let owned = |field: &LenientStr<'_>| field.get().map(str::to_owned);
        let mut shape = SendShape {
            role: role.map(str::to_owned),
            ..SendShape::default()
        };
        if is_assistant {
            shape.stop_reason = owned(&self.stop_reason);
            shape.provider = owned(&self.provider);
            shape.api = owned(&self.api);
            shape.model = owned(&self.model);
        }
        if role == Some("toolResult") {
            shape.result_id = owned(&self.tool_call_id);
            shape.result_name = owned(&self.tool_name);
        }
        shape.content = match &self.content {
            Some(ContentScan::Text(text)) if text.is_blank() => ContentShape::BlankString,
            Some(ContentScan::Text(_)) => ContentShape::Text,
            Some(ContentScan::Blocks(elements)) => {
                let mut not_blank = 0u32;
                for element in elements {
                    let Element::Block(block) = element else {
                        not_blank += 1;
                        continue;
                    };
                    let ty = block.ty.get();
                    if ty == Some("text") && block.text.is_blank() {
                        shape.blank_text_blocks += 1;
                    } else {
                        not_blank += 1;
                    }
                    if block.thought_signature || block.thought_signature_camel {
                        shape.thought_signature_blocks += 1;
                    }
                    if !is_assistant {
                        continue;
                    }
                    match ty {
                        Some("text") => {
                            shape.text_blocks += 1;
                            if block.text_signature.0.unwrap_or(0) == 0 {
                                shape.unsigned_text_blocks += 1;
                            }
                        }
                        Some("thinking") if !block.redacted.0 && block.thinking.has_text() => {
                            shape.thinking_blocks += 1;
                        }
                        Some("compaction") => shape.compaction_blocks += 1,
                        Some("toolCall") => shape.calls.push(CallShape {
                            id: block.id.get().unwrap_or_default().to_owned(),
                            name: owned(&block.name),
                        }),
                        _ => {}
                    }
                }
                ContentShape::Blocks {
                    total: u32::try_from(elements.len()).unwrap_or(u32::MAX),
                    not_blank,
                }
            }
            _ => ContentShape::Missing,
        };
        shape
    }

    fn into_facts(self) -> MessageFacts {
        let role = self.role.get().map(str::to_owned);
        let mut facts = MessageFacts {
            role,
            is_object: true,
            exact: true,
            ..Default::default()
        };
        let role = facts.role.as_deref();
        let is_assistant = role == Some("assistant");
        if is_assistant {
            facts.stop_reason = self.stop_reason.get().map(str::to_owned);
            facts.usage = self.usage.and_then(|u| parse_value(u.get()).ok());
            facts.usage_tokens = facts
                .usage
                .as_ref()
                .filter(|u| u.is_object())
                .map(super::estimate::usage_tokens);
        }
        if is_assistant || role == Some("compactionSummary") {
            facts.timestamp_ms = self.timestamp.0;
        }
        if role == Some("toolResult") {
            facts.tool_result_id = self
                .tool_call_id
                .get()
                .filter(|s| !s.is_empty())
                .or(self.tool_use_id.get().filter(|s| !s.is_empty()))
                .map(str::to_owned);
            facts.tool_name = self.tool_name.get().map(str::to_owned);
        }
        // Content sums shared by the two estimators.
        let (mut text, mut thinking, mut images, mut call_chars_pi, mut call_chars_pruner) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut inputs_kept = true;
        let mut content_string: Option<u64> = None;
        match &self.content {
            Some(ContentScan::Text(len)) => content_string = len.len(),
            Some(ContentScan::Blocks(blocks)) => {
                facts.content_is_array = true;
                for element in blocks {
                    let block = match element {
                        Element::Block(block) => block,
                        Element::Falsy => {
                            facts.falsy_elements = true;
                            continue;
                        }
                        Element::Other => continue,
                    };
                    let ty = block.ty.get();
                    match ty {
                        Some("text") => {
                            if let Some(len) = block.text.len() {
                                text += len;
                                facts.text_parts += 1;
                            }
                        }
                        Some("thinking") => {
                            thinking += block.thinking.len().unwrap_or(0);
                            facts.thinking_blocks += 1;
                        }
                        Some("image") => images += 1,
                        _ => {}
                    }
                    if is_assistant {
                        if let Some(t) = ty {
                            if INPUT_TOOL_CALL_TYPES.contains(&t) {
                                facts.has_input_tool_call_blocks = true;
                                let has_input = [block.arguments, block.input]
                                    .iter()
                                    .any(|raw| raw.is_some_and(|raw| raw.get() != "null"));
                                inputs_kept &= call_block_kept_as_is(
                                    t,
                                    has_input,
                                    block.id.get(),
                                    block.name.get(),
                                );
                            }
                            if PAIRING_TOOL_CALL_TYPES.contains(&t) {
                                if let Some(id) = block.id.get().filter(|id| !id.is_empty()) {
                                    facts.tool_calls.push(ToolCallRef {
                                        id: id.to_owned(),
                                        name: block.name.get().map(str::to_owned),
                                    });
                                }
                            }
                            if t == "toolCall" {
                                // pi: JSON.stringify(arguments) (null is "null"; a missing value
                                // would throw upstream and counts 0); the pruner: arguments ?? {}.
                                let args = block.arguments.map_or(0, stringified_len);
                                call_chars_pi += block.name.get().map_or(0, utf16_len) + args;
                                call_chars_pruner += match block.arguments {
                                    Some(raw) if raw.get() != "null" => args,
                                    _ => 2, // JSON.stringify({})
                                };
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        facts.tool_call_inputs_kept = inputs_kept;
        facts.has_image = images > 0;
        facts.text_chars = content_string.unwrap_or(text);
        facts.thinking_chars = thinking;
        let (pi, pruner) = match role {
            Some("user") => (
                content_string.unwrap_or(text),
                content_string.unwrap_or(text + images * IMAGE_CHAR_ESTIMATE),
            ),
            // The pruner reads assistant and tool-result content only block by block (pruner.ts).
            Some("assistant") => (
                text + thinking + call_chars_pi,
                text + thinking + call_chars_pruner,
            ),
            Some("toolResult") => (
                content_string.unwrap_or(text + images * IMAGE_CHARS),
                if content_string.is_some() {
                    0
                } else {
                    text + images * IMAGE_CHAR_ESTIMATE
                },
            ),
            Some("custom") => (
                content_string.unwrap_or(text + images * IMAGE_CHARS),
                OTHER_ROLE_CHARS,
            ),
            Some("bashExecution") => (
                self.command.0.unwrap_or(0) + self.output.0.unwrap_or(0),
                OTHER_ROLE_CHARS,
            ),
            Some("branchSummary" | "compactionSummary") => {
                (self.summary.0.unwrap_or(0), OTHER_ROLE_CHARS)
            }
            _ => (0, OTHER_ROLE_CHARS),
        };
        facts.pi_chars = pi;
        facts.pruning_chars = pruner;
        facts
    }
}

/// The same facts from a parsed value (the fallback path, and the reference in tests).
pub fn facts_from_value(value: &Value) -> MessageFacts {
    let text = crate::base::to_js_string(value);
    match serde_json::from_str::<Scan<'_>>(&text) {
        Ok(scan) => scan.into_facts().object(value.is_object()),
        Err(_) => MessageFacts {
            role: value.get("role").and_then(Value::as_str).map(str::to_owned),
            is_object: value.is_object(),
            pi_chars: super::estimate::estimate_chars(value),
            pruning_chars: super::estimate::estimate_message_chars(value),
            ..Default::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts(v: Value) -> MessageFacts {
        MessageFacts::scan(&JsonText::owned(crate::base::to_js_string(&v)))
    }

    #[test]
    fn estimators_agree_with_the_value_based_rules() {
        let samples = [
            json!({"role":"user","content":"héllo\n😀"}),
            json!({"role":"user","content":[{"type":"text","text":"ab"},{"type":"image","data":"x"},null,5]}),
            json!({"role":"assistant","content":[{"type":"text","text":"a\"b"},{"type":"thinking","thinking":"tt"},{"type":"toolCall","id":"c1","name":"read","arguments":{"p":"é","n":1.0}},{"type":"toolCall","id":"c2","name":"x"}],"stopReason":"toolUse","usage":{"input":3,"output":4}}),
            json!({"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"r"},{"type":"image"}]}),
            json!({"role":"bashExecution","command":"ls","output":"out"}),
            json!({"role":"compactionSummary","summary":"sum"}),
            json!({"role":"custom","content":"c"}),
            json!({"role":"assistant","content":"plain"}),
            json!({"role":"assistant","content":[{"type":"toolCall","id":"n1","name":"x","arguments":null},{"type":"toolCall","id":"n2","name":"y"}]}),
            json!({"role":"toolResult","content":"plain"}),
            json!({"role":"other"}),
            json!({"role":"thinking-bad","content":[{"type":"thinking"},{"type":"text"}]}),
        ];
        for v in samples {
            let f = facts(v.clone());
            assert_eq!(
                f.pi_chars,
                super::super::estimate::estimate_chars(&v),
                "{v}"
            );
            assert_eq!(
                f.pruning_chars,
                super::super::estimate::estimate_message_chars(&v),
                "{v}"
            );
        }
    }

    #[test]
    fn pairing_facts() {
        let f = facts(
            json!({"role":"assistant","content":[{"type":"toolUse","id":"a","name":"n","input":{}},{"type":"tool_use","id":"b"},{"type":"toolCall","id":""}],"stopReason":"error","usage":{"totalTokens":9}}),
        );
        assert_eq!(
            f.tool_calls,
            vec![ToolCallRef {
                id: "a".into(),
                name: Some("n".into())
            }]
        );
        assert!(f.has_input_tool_call_blocks);
        assert_eq!(f.stop_reason.as_deref(), Some("error"));
        assert_eq!(f.usage_tokens, Some(9));
        let r =
            facts(json!({"role":"toolResult","toolCallId":"","toolUseId":"u","toolName":" x "}));
        assert_eq!(r.tool_result_id.as_deref(), Some("u"));
        assert_eq!(r.tool_name.as_deref(), Some(" x "));
    }

    #[test]
    fn facts_the_hygiene_passes_decide_by() {
        let f = facts(
            json!({"role":"assistant","timestamp":"2026-01-01T00:00:00.000Z",
            "usage":{"input":1},"content":[{"type":"thinking"},{"type":"thinking","thinking":"x"},"s",1,{}]}),
        );
        assert!(f.is_object && f.exact && f.content_is_array && !f.falsy_elements);
        assert_eq!(f.thinking_blocks, 2);
        assert_eq!(f.usage, Some(json!({"input":1})));
        assert_eq!(f.timestamp_ms, Some(1767225600000.0));
        for falsy in [json!(null), json!(false), json!(0), json!(0.0), json!("")] {
            let f = facts(json!({"role":"assistant","content":[{"type":"text","text":"a"},falsy]}));
            assert!(f.falsy_elements, "{falsy}");
        }
        let f = facts(json!({"role":"assistant","timestamp":12.5,"usage":null,"content":"c"}));
        assert!(!f.content_is_array && f.usage.is_none());
        assert_eq!(f.timestamp_ms, Some(12.5));
        assert_eq!(
            facts(json!({"role":"user","timestamp":3})).timestamp_ms,
            None
        );
        // An array reads as a struct by position: the role is seen, but it is no object.
        let f = MessageFacts::scan(&JsonText::owned(r#" ["assistant"]"#.into()));
        assert_eq!(f.role.as_deref(), Some("assistant"));
        assert!(!f.is_object && !f.exact);
        let f = MessageFacts::scan(&JsonText::owned(
            r#"{"role":"assistant","timestamp":1e400}"#.into(),
        ));
        assert!(f.is_object && f.exact);
        assert_eq!(f.timestamp_ms, None);
        assert!(!MessageFacts::scan(&JsonText::owned("{".into())).is_object);
    }

    #[test]
    fn duplicate_keys_fall_back_to_a_full_parse() {
        let f = MessageFacts::scan(&JsonText::owned(
            r#"{"role":"user","content":"a","content":"abcd"}"#.into(),
        ));
        assert_eq!(f.role.as_deref(), Some("user"));
        assert_eq!(f.pi_chars, 4);
    }

    /// The request shape from the facts' pass is the one read from the parsed value.
    fn assert_shape_as_value(text: &str) {
        let scanned = scan_message(&JsonText::owned(text.into())).1;
        let from_value = parse_value(text)
            .map(|v| SendShape::of_value(&v))
            .unwrap_or_default();
        assert_eq!(scanned, from_value, "{text}");
    }

    #[test]
    fn the_request_shape_is_read_in_the_facts_pass() {
        for text in [
            r#"{"role":"assistant","stopReason":"toolUse","provider":"openai","api":"openai-responses","model":"gpt-5","content":[{"type":"text","text":" \u00a0\n","textSignature":""},{"type":"text","text":"hi","textSignature":"sig"},{"type":"text","text":"x","textSignature":1},{"type":"thinking","thinking":"t","redacted":0},{"type":"thinking","thinking":"t","redacted":"yes"},{"type":"thinking","thinking":"\ufeff"},{"type":"compaction"},{"type":"toolCall","id":7,"name":"read"},{"type":"toolCall","id":"c\u0031","name":null,"thought_signature":null},{"thoughtSignature":"s"},null,0,"x",[1]]}"#,
            r#"{"role":"toolResult","toolCallId":"call|1","toolName":"bash","content":"  "}"#,
            r#"{"role":"toolResult","toolCallId":5,"content":"out"}"#,
            r#"{"role":"user","content":[]}"#,
            r#"{"role":"user","content":{"type":"text"}}"#,
            r#"{"role":"user","content":null,"provider":"p"}"#,
            r#"{"role":"user","content":"a","content":"  "}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"a","text":" "}]}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","redacted":1e400}]}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","redacted":[]}]}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","redacted":-0.0}]}"#,
            r#"["assistant",[{"type":"text","text":""}]]"#,
            r#""assistant""#,
            r#"{"role":"assistant","#,
        ] {
            assert_shape_as_value(text);
        }
    }

    /// Message-shaped values: a top-level object of message fields whose `content` is most
    /// often an array of block objects, with values of every JSON type.
    fn arbitrary_message() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let word = prop::sample::select(vec![
            "assistant",
            "toolResult",
            "user",
            "text",
            "thinking",
            "toolCall",
            "compaction",
            "",
            " ",
            "\u{a0}\n",
            "\u{feff}",
            "x",
            "msg_1",
            "error",
            "aborted",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-2i64..3).prop_map(Value::from),
            prop::sample::select(vec![0.0f64, -0.0, 0.5]).prop_map(Value::from),
            word.clone().prop_map(|w: &str| Value::from(w)),
        ];
        let any_value = leaf.clone().prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec(inner, 0..3).prop_map(|values| {
                    Value::Object(
                        values
                            .into_iter()
                            .enumerate()
                            .map(|(i, v)| (format!("k{i}"), v))
                            .collect(),
                    )
                }),
            ]
        });
        /// An object with some of `fields` (each value from its own strategy, or absent).
        fn object(
            fields: Vec<(&'static str, BoxedStrategy<Value>)>,
        ) -> impl Strategy<Value = Value> {
            let (keys, values): (Vec<_>, Vec<_>) = fields
                .into_iter()
                .map(|(key, value)| (key, prop::option::weighted(0.8, value)))
                .unzip();
            values.prop_map(move |values| {
                Value::Object(
                    keys.iter()
                        .zip(values)
                        .filter_map(|(key, value)| Some(((*key).to_owned(), value?)))
                        .collect(),
                )
            })
        }
        let either = |a: &'static [&'static str]| {
            prop_oneof![
                3 => prop::sample::select(a.to_vec()).prop_map(Value::from),
                1 => leaf.clone(),
            ]
            .boxed()
        };
        let blank_or_text = either(&["", " ", "\u{a0}\n", "\u{feff}", "x", "msg_1"]);
        let truthy = leaf.clone().boxed();
        let block = prop_oneof![
            4 => object(vec![
                ("type", either(&["text", "thinking", "toolCall", "compaction", "image"])),
                ("text", blank_or_text.clone()),
                ("thinking", blank_or_text.clone()),
                ("textSignature", blank_or_text.clone()),
                ("redacted", truthy.clone()),
                ("thought_signature", blank_or_text.clone()),
                ("thoughtSignature", blank_or_text.clone()),
                ("id", blank_or_text.clone()),
                ("name", blank_or_text.clone()),
                ("arguments", any_value.clone().boxed()),
            ]),
            1 => any_value.clone(),
        ];
        let content = prop_oneof![
            4 => prop::collection::vec(block, 0..6).prop_map(Value::Array),
            1 => blank_or_text.clone(),
            1 => any_value.clone(),
        ]
        .boxed();
        let roles = either(&["assistant", "toolResult", "user", "custom"]);
        object(vec![
            ("role", roles),
            ("content", content),
            (
                "stopReason",
                either(&["stop", "toolUse", "error", "aborted"]),
            ),
            ("provider", blank_or_text.clone()),
            ("api", blank_or_text.clone()),
            ("model", blank_or_text.clone()),
            ("toolCallId", blank_or_text.clone()),
            ("toolName", blank_or_text),
            ("usage", any_value.boxed()),
        ])
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        #[test]
        fn any_message_has_the_request_shape_of_its_value(value in arbitrary_message()) {
            assert_shape_as_value(&crate::base::to_js_string(&value));
        }
    }
}
