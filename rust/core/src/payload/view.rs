//! One description of an API's message rules for both of a builder's paths: the writers read
//! a message and its content blocks through [`MsgView`] and [`BlockView`], which the stored
//! message (its cached layout, the bytes path: [`MsgFields`], [`BlockFields`]) and its value
//! tree (the value path, after `transform.rs`: `&Value`) both implement, and write JSON text
//! into an [`Out`]. A rule (which blocks go where, which fields are kept or renamed) is then
//! written once; the two paths differ only in how they read a field (copied from the stored
//! text, or written from the value) and in their replay layer (`raw::replay*` over the stored
//! messages, `transform.rs` over value trees). The `payload_paths` fuzz target and the
//! payload tests check that both give the same bytes.
//!
//! A reader answers `None` where the bytes path cannot read a shape (an escaped key, a block
//! that is not an object): the builder then runs the value path, whose readers never do.

use serde_json::Value;

use super::raw::{self, BlockFields, MsgFields, Out, RawStr};
use crate::base::{is_truthy, parse_value, to_js_string};

/// A field's value: its stored JSON text, or a value of a value tree.
#[derive(Clone, Copy)]
pub enum Field<'a> {
    Raw(&'a str),
    Value(&'a Value),
}

impl<'a> Field<'a> {
    /// The value as pi-ai reads a string it expects: `Some(None)` when it is not a string,
    /// `None` when a stored string cannot be read.
    #[allow(clippy::option_option)]
    #[inline]
    pub fn str(self) -> Option<Option<RawStr<'a>>> {
        match self {
            Field::Raw(text) => raw::text_raw(Some(text)),
            Field::Value(Value::String(s)) => Some(Some(RawStr::Plain(s))),
            Field::Value(_) => Some(None),
        }
    }

    /// The value as `JSON.stringify` writes it.
    #[inline]
    pub fn copy(self, out: &mut Out) {
        match self {
            Field::Raw(text) => out.copy(text),
            Field::Value(v) => out.value(v),
        }
    }

    /// JavaScript truthiness.
    pub fn truthy(self) -> bool {
        match self {
            Field::Raw(text) => raw::raw_truthy(text),
            Field::Value(v) => is_truthy(v),
        }
    }

    /// `JSON.stringify` of the value, as a string literal (tool arguments sent as text).
    pub fn write_stringified(self, out: &mut Out) {
        match self {
            // The stored text itself when it is already in `JSON.stringify`'s form.
            Field::Raw(text) if raw::is_canonical(text) => out.str(text),
            Field::Raw(text) => out.str(&to_js_string(&parse_value(text).unwrap_or(Value::Null))),
            Field::Value(v) => out.str(&to_js_string(v)),
        }
    }

    pub fn is_array(self) -> bool {
        match self {
            Field::Raw(text) => text.starts_with('['),
            Field::Value(v) => v.is_array(),
        }
    }

    pub fn is_null(self) -> bool {
        match self {
            Field::Raw(text) => text == "null",
            Field::Value(v) => v.is_null(),
        }
    }

    /// The value read as a plain string ([`raw::plain`]): `Some(None)` when absent, `null` or
    /// (in a value tree) not a string; `None` when a stored value is neither a plain string
    /// nor absent or `null` (the bytes path does not read it).
    #[inline]
    pub fn plain(field: Option<Field<'a>>) -> Option<Option<&'a str>> {
        match field {
            None => Some(None),
            Some(Field::Raw(text)) => raw::plain(Some(text)),
            Some(Field::Value(Value::String(s))) => Some(Some(s)),
            // Any other value is no string the rules look for.
            Some(Field::Value(_)) => Some(None),
        }
    }
}

/// Writes an optional field read as a string ([`Field::str`]): `""` when it is not one.
pub fn write_opt_str(out: &mut Out, s: Option<&RawStr<'_>>) {
    match s {
        Some(s) => out.copy_str(s),
        None => out.raw(r#""""#),
    }
}

/// `key` and an id: `new_id` (written fresh) when the replay layer gave one, else the stored
/// field; nothing when there is neither.
pub fn write_id(out: &mut Out, key: &str, new_id: Option<&str>, stored: Option<Field<'_>>) {
    match (new_id, stored) {
        (Some(id), _) => {
            out.raw(key);
            out.str(id);
        }
        (None, Some(field)) => {
            out.raw(key);
            field.copy(out);
        }
        (None, None) => {}
    }
}

/// The opening of a Chat-Completions-shaped `function` call that OpenAI Completions and Mistral
/// share: `{"id":…,"type":"function","function":{"name":…`. The caller writes the arguments its
/// API wants and closes the call with `}}`.
pub fn open_function_call<'a>(out: &mut Out, call: impl BlockView<'a>, new_id: Option<&str>) {
    out.raw("{");
    let id = call.field(BlockKey::Id);
    if new_id.is_some() || id.is_some() {
        write_id(out, r#""id":"#, new_id, id);
        out.raw(",");
    }
    out.raw(r#""type":"function","function":{"name":"#);
    match call.field(BlockKey::Name) {
        Some(name) => name.copy(out),
        None => out.raw("null"),
    }
}

/// A content block, as the writers read it.
pub trait BlockView<'a>: Copy {
    fn field(&self, key: BlockKey) -> Option<Field<'a>>;

    /// A compaction block's provider block (`raw`, when it is an object), sent verbatim.
    fn compaction_raw(&self) -> Option<Field<'a>>;

    /// `block.type === t` (`None` when the type cannot be read).
    #[inline]
    fn is(&self, t: &str) -> Option<bool> {
        Some(Field::plain(self.field(BlockKey::Type))? == Some(t))
    }

    /// A field read as a string ([`Field::str`]); absent reads as not a string.
    #[allow(clippy::option_option)]
    #[inline]
    fn str(&self, key: BlockKey) -> Option<Option<RawStr<'a>>> {
        match self.field(key) {
            Some(f) => f.str(),
            None => Some(None),
        }
    }
}

/// The content-block fields the writers read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BlockKey {
    Type,
    Text,
    Thinking,
    ThinkingSignature,
    Redacted,
    Id,
    Name,
    Arguments,
    MimeType,
    Data,
}

impl BlockKey {
    /// The key as stored.
    pub fn name(self) -> &'static str {
        match self {
            BlockKey::Type => "type",
            BlockKey::Text => "text",
            BlockKey::Thinking => "thinking",
            BlockKey::ThinkingSignature => "thinkingSignature",
            BlockKey::Redacted => "redacted",
            BlockKey::Id => "id",
            BlockKey::Name => "name",
            BlockKey::Arguments => "arguments",
            BlockKey::MimeType => "mimeType",
            BlockKey::Data => "data",
        }
    }
}

impl<'a> BlockView<'a> for BlockFields<'a> {
    #[inline]
    fn field(&self, key: BlockKey) -> Option<Field<'a>> {
        let raw = match key {
            BlockKey::Type => self.kind,
            BlockKey::Text => self.text,
            BlockKey::Thinking => self.thinking,
            BlockKey::ThinkingSignature => self.thinking_signature,
            BlockKey::Redacted => self.redacted,
            BlockKey::Id => self.id,
            BlockKey::Name => self.name,
            BlockKey::Arguments => self.arguments,
            BlockKey::MimeType => self.mime_type,
            BlockKey::Data => self.data,
        };
        raw.map(Field::Raw)
    }

    fn compaction_raw(&self) -> Option<Field<'a>> {
        BlockFields::compaction_raw(self).map(Field::Raw)
    }
}

impl<'a> BlockView<'a> for &'a Value {
    #[inline]
    fn field(&self, key: BlockKey) -> Option<Field<'a>> {
        self.get(key.name()).map(Field::Value)
    }

    fn compaction_raw(&self) -> Option<Field<'a>> {
        self.get("raw").filter(|v| v.is_object()).map(Field::Value)
    }
}

/// A message, as the writers read it.
pub trait MsgView<'a>: Copy {
    type Block: BlockView<'a>;

    fn content(&self) -> Option<Field<'a>>;
    fn tool_call_id(&self) -> Option<Field<'a>>;
    fn is_error(&self) -> Option<Field<'a>>;
    fn tool_name(&self) -> Option<Field<'a>>;

    /// Calls `visit` with each block of an array content (nothing when the content is not an
    /// array); `None` from `visit`, or a block the reader cannot read, stops with `None`.
    fn for_each_block(&self, visit: impl FnMut(Self::Block) -> Option<()>) -> Option<()>;
}

impl<'a> MsgView<'a> for &MsgFields<'a> {
    type Block = BlockFields<'a>;

    fn content(&self) -> Option<Field<'a>> {
        self.content.map(Field::Raw)
    }

    fn tool_call_id(&self) -> Option<Field<'a>> {
        self.tool_call_id.map(Field::Raw)
    }

    fn is_error(&self) -> Option<Field<'a>> {
        self.is_error.map(Field::Raw)
    }

    fn tool_name(&self) -> Option<Field<'a>> {
        self.tool_name.map(Field::Raw)
    }

    #[inline]
    fn for_each_block(&self, visit: impl FnMut(BlockFields<'a>) -> Option<()>) -> Option<()> {
        MsgFields::for_each_block(self, visit)
    }
}

impl<'a> MsgView<'a> for &'a Value {
    type Block = &'a Value;

    fn content(&self) -> Option<Field<'a>> {
        self.get("content").map(Field::Value)
    }

    fn tool_call_id(&self) -> Option<Field<'a>> {
        self.get("toolCallId").map(Field::Value)
    }

    fn is_error(&self) -> Option<Field<'a>> {
        self.get("isError").map(Field::Value)
    }

    fn tool_name(&self) -> Option<Field<'a>> {
        self.get("toolName").map(Field::Value)
    }

    fn for_each_block(&self, mut visit: impl FnMut(&'a Value) -> Option<()>) -> Option<()> {
        for block in super::model::blocks_of(self) {
            visit(block)?;
        }
        Some(())
    }
}

/// What the replay layer made of a block of an assistant turn ([`raw::BlockKind`]), read from
/// a value tree after `transform.rs` (which already turned another model's thinking into
/// text and dropped what it drops).
pub fn kind_of(block: &Value) -> raw::BlockKind {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => raw::BlockKind::Text,
        Some("thinking") => raw::BlockKind::Thinking,
        Some("toolCall") => raw::BlockKind::ToolCall,
        _ => raw::BlockKind::Other,
    }
}

/// `data:{mimeType};base64,{data}` of an image block, JSON-escaped without quotes (a field
/// that is not a string is empty, as `str_of` reads it).
pub fn write_data_url<'a>(out: &mut Out, block: impl BlockView<'a>) -> Option<()> {
    out.raw("data:");
    if let Some(mime) = block.str(BlockKey::MimeType)? {
        mime.write_inner(out);
    }
    out.raw(";base64,");
    if let Some(data) = block.str(BlockKey::Data)? {
        data.write_inner(out);
    }
    Some(())
}

/// The parts of a tool result the builders send: its text blocks (as [`Field::str`] reads
/// them) and, when `images`, its image blocks, each in order; `None` when a block cannot be
/// read.
#[allow(clippy::type_complexity)]
pub fn result_parts<'a, M: MsgView<'a>>(
    msg: M,
    images: bool,
) -> Option<(Vec<Option<RawStr<'a>>>, Vec<M::Block>)> {
    let mut texts = Vec::new();
    let mut found = Vec::new();
    msg.for_each_block(|block| {
        if block.is("text")? {
            texts.push(block.str(BlockKey::Text)?);
        } else if images && block.is("image")? {
            found.push(block);
        }
        Some(())
    })?;
    Some((texts, found))
}
