//! Writing a body straight from the stored message bytes: a JSON byte writer, the test of
//! whether a stored JSON text is already written as `JSON.stringify` writes it (so it can be
//! copied as it is), and the replay layer of `transform.rs` over borrowed views of the stored
//! messages instead of parsed value trees.
//!
//! Every reader here answers `None` for a shape it does not handle (a block that is not an
//! object, an id that is not a string, ...): the builder then falls back to the value-tree
//! path, which handles everything, so both paths always give the same bytes.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::model::Model;
use crate::base::{is_js_whitespace, parse_value, write_js};
use crate::transcript::{skip_ws, string_end, value_end, ContentItem, Message, Transcript};

/// The output buffer of a body.
#[derive(Default)]
pub struct Out {
    pub buf: Vec<u8>,
}

impl Out {
    pub fn with_capacity(n: usize) -> Out {
        Out {
            buf: Vec::with_capacity(n),
        }
    }

    /// Bytes written as they are (JSON punctuation and keys known to need no escaping).
    #[inline]
    pub fn raw(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// A value as `JSON.stringify` writes it.
    pub fn value(&mut self, v: &Value) {
        // Writing to a Vec cannot fail.
        let _ = write_js(&mut self.buf, v);
    }

    /// A string literal, escaped as `JSON.stringify` escapes it.
    pub fn str(&mut self, s: &str) {
        let _ = serde_json::to_writer(&mut self.buf, s);
    }

    /// A stored JSON value: copied when it is already in `JSON.stringify`'s form, else read
    /// and written again (as the value-tree path writes it).
    pub fn copy(&mut self, text: &str) {
        if is_canonical(text) {
            self.raw(text);
        } else {
            let v = parse_value(text).unwrap_or(Value::Null);
            self.value(&v);
        }
    }

    /// A stored JSON string value as a string literal: [`RawStr`].
    pub fn copy_str(&mut self, s: &RawStr<'_>) {
        match s {
            RawStr::Canonical(inner) => {
                self.buf.push(b'"');
                self.raw(inner);
                self.buf.push(b'"');
            }
            RawStr::Parsed(owned) => self.str(owned),
            RawStr::Plain(s) => self.str(s),
        }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }
}

/// A field read as pi-ai reads a string it expects (`str_of`, `text_of`): `Some(None)` when it
/// is not a string (read as `""`), `None` when the string cannot be read.
#[allow(clippy::option_option)]
pub fn text_raw(raw: Option<&str>) -> Option<Option<RawStr<'_>>> {
    match raw {
        Some(r) if r.starts_with('"') => RawStr::of(r).map(Some),
        _ => Some(None),
    }
}

/// The inner texts of `texts` joined by `\n` (JSON-escaped, without quotes; a text that is
/// not a string is empty), as `texts.join("\n")` of a tool result's texts.
pub fn write_lines(out: &mut Out, texts: &[Option<RawStr<'_>>]) {
    for (n, text) in texts.iter().enumerate() {
        if n > 0 {
            out.raw("\\n");
        }
        if let Some(text) = text {
            text.write_inner(out);
        }
    }
}

/// A stored string: its inner text when that is already escaped as `JSON.stringify` escapes
/// (copied as it is), else the string read (lone surrogates as U+FFFD, as `parse_value`).
pub enum RawStr<'a> {
    Canonical(&'a str),
    Parsed(String),
    /// A string of a value tree (the value path, `payload::view`).
    Plain(&'a str),
}

impl<'a> RawStr<'a> {
    /// `None` when `raw` is not a string.
    pub fn of(text: &'a str) -> Option<RawStr<'a>> {
        if text.len() < 2 || !text.starts_with('"') {
            return None;
        }
        let inner = &text[1..text.len() - 1];
        if canonical_escapes(inner.as_bytes()) {
            return Some(RawStr::Canonical(inner));
        }
        match parse_value(text) {
            Ok(Value::String(s)) => Some(RawStr::Parsed(s)),
            _ => None,
        }
    }

    /// Whether the string it holds is empty.
    pub fn is_empty(&self) -> bool {
        match self {
            RawStr::Canonical(inner) | RawStr::Plain(inner) => inner.is_empty(),
            RawStr::Parsed(s) => s.is_empty(),
        }
    }

    /// `js_trim(s).is_empty()` of the string it holds.
    pub fn is_blank(&self) -> bool {
        match self {
            RawStr::Parsed(s) => s.chars().all(is_js_whitespace),
            RawStr::Plain(s) => s.chars().all(is_js_whitespace),
            RawStr::Canonical(inner) => canonical_is_blank(inner),
        }
    }

    /// The string itself.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            RawStr::Parsed(s) => Cow::Borrowed(s),
            RawStr::Plain(s) => Cow::Borrowed(s),
            RawStr::Canonical(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
            RawStr::Canonical(inner) => match parse_value(&format!("\"{inner}\"")) {
                Ok(Value::String(s)) => Cow::Owned(s),
                _ => Cow::Borrowed(""),
            },
        }
    }

    /// The inner text as written in the output (escaped, without quotes).
    pub fn write_inner(&self, out: &mut Out) {
        match self {
            RawStr::Canonical(inner) => out.raw(inner),
            RawStr::Parsed(_) | RawStr::Plain(_) => {
                let s = self.text();
                let start = out.buf.len();
                out.str(&s);
                // Drop the quotes the literal writer added.
                out.buf.remove(start);
                out.buf.pop();
            }
        }
    }
}

/// Whether a canonical string's inner text is all JavaScript whitespace. Its escapes are only
/// the short ones and `\u00XX` control characters.
fn canonical_is_blank(inner: &str) -> bool {
    let bytes = inner.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                match bytes[i + 1] {
                    b'n' | b't' | b'r' | b'f' => i += 2,
                    // \u000b (vertical tab) is whitespace; other control characters are not.
                    b'u' if &bytes[i + 2..i + 6] == b"000b" => i += 6,
                    _ => return false,
                }
            }
            b' ' => i += 1,
            b if b < 0x80 => return false,
            _ => {
                let c = inner[i..].chars().next().unwrap_or('x');
                if !is_js_whitespace(c) {
                    return false;
                }
                i += c.len_utf8();
            }
        }
    }
    true
}

/// Whether the escapes of a string's inner bytes are those `JSON.stringify` writes: `\"`,
/// `\\`, `\b`, `\f`, `\n`, `\r`, `\t` and `\u00xx` (lower-case hex) for the other control
/// characters. Any other escape (`\/`, `\u00e9`, a surrogate) is written differently.
fn canonical_escapes(inner: &[u8]) -> bool {
    let mut i = 0;
    while let Some(pos) = find_backslash(&inner[i..]) {
        let at = i + pos;
        match inner.get(at + 1) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i = at + 2,
            Some(b'u') => {
                let Some(hex) = inner.get(at + 2..at + 6) else {
                    return false;
                };
                let ok = hex[0] == b'0'
                    && hex[1] == b'0'
                    && matches!(hex[2], b'0' | b'1')
                    && matches!(hex[3], b'0'..=b'9' | b'a'..=b'f')
                    // These five have short forms.
                    && !(hex[2] == b'0' && matches!(hex[3], b'8' | b'9' | b'a' | b'c' | b'd'));
                if !ok {
                    return false;
                }
                i = at + 6;
            }
            _ => return false,
        }
    }
    true
}

/// Whether a (valid) JSON text is exactly what `JSON.stringify` of its value writes: no
/// whitespace, strings escaped as [`canonical_escapes`], integers of at most 15 digits
/// without a leading zero (any other number is read and written again), no duplicate key.
pub fn is_canonical(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    let ok = canonical_value(bytes, &mut i, 0);
    ok && i == bytes.len()
}

fn canonical_string(b: &[u8], i: &mut usize) -> Option<(usize, usize)> {
    // b[*i] == '"'
    let start = *i + 1;
    let mut j = start;
    loop {
        let pos = memchr::memchr2(b'"', b'\\', &b[j..])?;
        j += pos;
        if b[j] == b'"' {
            break;
        }
        j += 2;
    }
    if !canonical_escapes(&b[start..j]) {
        return None;
    }
    *i = j + 1;
    Some((start, j))
}

/// The members of an object or the elements of an array, from its opening byte at `*i` to past
/// its `close`: each read by `item`, with commas between and no whitespace.
fn canonical_items(
    b: &[u8],
    i: &mut usize,
    close: u8,
    mut item: impl FnMut(&mut usize) -> bool,
) -> bool {
    *i += 1;
    if b.get(*i) == Some(&close) {
        *i += 1;
        return true;
    }
    loop {
        if !item(i) {
            return false;
        }
        match b.get(*i) {
            Some(b',') => *i += 1,
            Some(&c) if c == close => {
                *i += 1;
                return true;
            }
            _ => return false,
        }
    }
}

fn canonical_value(b: &[u8], i: &mut usize, depth: usize) -> bool {
    if depth > 128 {
        return false;
    }
    match b.get(*i) {
        Some(b'"') => canonical_string(b, i).is_some(),
        Some(b'{') => {
            let mut keys: Vec<&[u8]> = Vec::new();
            canonical_items(b, i, b'}', |i| {
                if b.get(*i) != Some(&b'"') {
                    return false;
                }
                let Some((s, e)) = canonical_string(b, i) else {
                    return false;
                };
                let key = &b[s..e];
                if keys.contains(&key) {
                    return false;
                }
                keys.push(key);
                if b.get(*i) != Some(&b':') {
                    return false;
                }
                *i += 1;
                canonical_value(b, i, depth + 1)
            })
        }
        Some(b'[') => canonical_items(b, i, b']', |i| canonical_value(b, i, depth + 1)),
        Some(b't') => literal(b, i, b"true"),
        Some(b'f') => literal(b, i, b"false"),
        Some(b'n') => literal(b, i, b"null"),
        Some(b'-' | b'0'..=b'9') => {
            let start = *i;
            if b[*i] == b'-' {
                *i += 1;
            }
            let digits = *i;
            while matches!(b.get(*i), Some(b'0'..=b'9')) {
                *i += 1;
            }
            let n = *i - digits;
            if matches!(b.get(*i), Some(b'.' | b'e' | b'E')) {
                return false;
            }
            // "-0" is read as a float; a leading zero is not JSON.
            let leading_zero = b[digits] == b'0' && (n > 1 || digits > start);
            (1..=15).contains(&n) && !leading_zero
        }
        _ => false,
    }
}

fn literal(b: &[u8], i: &mut usize, lit: &[u8]) -> bool {
    if b.get(*i..*i + lit.len()) == Some(lit) {
        *i += lit.len();
        true
    } else {
        false
    }
}

/// JavaScript truthiness of a stored value, as [`crate::base::is_truthy`] of its parsed value.
pub fn raw_truthy(text: &str) -> bool {
    match text.as_bytes().first() {
        Some(b'n' | b'f') => false,
        Some(b't' | b'[' | b'{') => true,
        Some(b'"') => text.len() > 2,
        _ => parse_value(text).is_ok_and(|v| crate::base::is_truthy(&v)),
    }
}

/// Calls `field(key, raw value)` for each field of the object `text`, in order. `None` when
/// `text` is not an object or a key holds an escape (compared as written, it could differ
/// from the key it stands for).
fn for_each_field<'a>(text: &'a str, mut field: impl FnMut(&'a str, &'a str)) -> Option<()> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(());
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let key = &text[i + 1..key_end - 1];
        if key.contains('\\') {
            return None;
        }
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = value_end(b, i)?;
        field(key, text.get(i..end)?);
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some(()),
            _ => return None,
        }
    }
}

/// The elements of a stored array, as raw texts (`None` when it is not an array).
pub fn array_items(text: &str) -> Option<Vec<&str>> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let mut items = Vec::new();
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        return Some(items);
    }
    loop {
        let end = value_end(b, i)?;
        items.push(text.get(i..end)?);
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => return Some(items),
            _ => return None,
        }
    }
}

/// A field read as a plain string: `Some(None)` when absent or `null` (what the value-tree
/// path reads as no string), `Some(Some(s))` for a string without escapes, `None` (not
/// handled here) otherwise.
#[inline]
pub fn plain(raw: Option<&str>) -> Option<Option<&str>> {
    match raw {
        None | Some("null") => Some(None),
        Some(r) if r.len() >= 2 && r.starts_with('"') => {
            let inner = &r[1..r.len() - 1];
            find_backslash(inner.as_bytes())
                .is_none()
                .then_some(Some(inner))
        }
        Some(_) => None,
    }
}

/// The first backslash of `b`. Short strings (roles, types, ids) are read byte by byte: a
/// vector search costs more to start than they take to read.
#[inline]
fn find_backslash(b: &[u8]) -> Option<usize> {
    if b.len() < 32 {
        b.iter().position(|&c| c == b'\\')
    } else {
        memchr::memchr(b'\\', b)
    }
}

/// The fields of a message the builders read, as raw JSON texts (the last of duplicates, as
/// `JSON.parse` keeps).
#[derive(Default, Clone, Copy)]
pub struct MsgFields<'a> {
    pub role: Option<&'a str>,
    pub content: Option<&'a str>,
    pub provider: Option<&'a str>,
    pub api: Option<&'a str>,
    pub model: Option<&'a str>,
    pub stop_reason: Option<&'a str>,
    pub tool_call_id: Option<&'a str>,
    pub tool_name: Option<&'a str>,
    pub is_error: Option<&'a str>,
    /// The stored message these were read from, when known: its cached layout then gives
    /// the content blocks without scanning the text again.
    pub message: Option<&'a Message>,
}

impl<'a> MsgFields<'a> {
    /// The fields of a stored message, from its cached layout.
    pub fn of(message: &'a Message) -> Option<MsgFields<'a>> {
        // In the order of `MESSAGE_KEYS`.
        let [role, content, provider, api, model, stop_reason, tool_call_id, tool_name, is_error, _] =
            message.layout().message_fields(message.as_str())?;
        Some(MsgFields {
            role,
            content,
            provider,
            api,
            model,
            stop_reason,
            tool_call_id,
            tool_name,
            is_error,
            message: Some(message),
        })
    }

    /// Calls `visit` with each block of an array `content` (`None` from `visit`, or a block
    /// that is not an object of plain keys, stops with `None`); nothing when `content` is
    /// not an array.
    pub fn for_each_block(
        &self,
        mut visit: impl FnMut(BlockFields<'a>) -> Option<()>,
    ) -> Option<()> {
        let Some(content) = self.content.filter(|c| c.starts_with('[')) else {
            return Some(());
        };
        if let Some(message) = self.message {
            if let Some(items) = message.layout().content_items(message.as_str()) {
                for item in items {
                    visit(BlockFields::of(&item)?)?;
                }
                return Some(());
            }
        }
        for item in array_items(content)? {
            visit(BlockFields::parse(item)?)?;
        }
        Some(())
    }
}

/// The fields of a content block the builders read, as raw JSON texts.
#[derive(Default, Clone, Copy)]
pub struct BlockFields<'a> {
    pub kind: Option<&'a str>,
    pub text: Option<&'a str>,
    pub thinking: Option<&'a str>,
    pub thinking_signature: Option<&'a str>,
    pub redacted: Option<&'a str>,
    pub id: Option<&'a str>,
    pub name: Option<&'a str>,
    pub arguments: Option<&'a str>,
    pub mime_type: Option<&'a str>,
    pub data: Option<&'a str>,
    /// A Responses text block's message item id (openai-responses-shared.ts).
    pub text_signature: Option<&'a str>,
    pub thought_signature: Option<&'a str>,
    /// The whole block's stored text (a compaction block is sent from its `raw` field).
    pub item: Option<&'a str>,
}

impl<'a> BlockFields<'a> {
    /// The fields of a content block, from its message's cached layout.
    #[inline]
    pub fn of(item: &ContentItem<'a>) -> Option<BlockFields<'a>> {
        // In the order of `BLOCK_KEYS`.
        let [kind, text, thinking, thinking_signature, redacted, id, name, arguments, mime_type, data, text_signature, thought_signature] =
            item.fields()?;
        Some(BlockFields {
            kind,
            text,
            thinking,
            thinking_signature,
            redacted,
            id,
            name,
            arguments,
            mime_type,
            data,
            text_signature,
            thought_signature,
            item: Some(item.text),
        })
    }

    pub fn parse(text: &'a str) -> Option<BlockFields<'a>> {
        let mut fields = BlockFields::read(|field| for_each_field(text, field))?;
        fields.item = Some(text);
        Some(fields)
    }

    /// The stored `raw` field of a compaction block (see `transcript::COMPACTION_BLOCK_TYPE`):
    /// the provider's block, to be sent verbatim; `None` when it is not an object.
    pub fn compaction_raw(&self) -> Option<&'a str> {
        let mut found = None;
        for_each_field(self.item?, |key, value| {
            if key == "raw" {
                found = Some(value);
            }
        })?;
        found.filter(|v| v.starts_with('{'))
    }

    fn read(
        fields: impl FnOnce(&mut dyn FnMut(&'a str, &'a str)) -> Option<()>,
    ) -> Option<BlockFields<'a>> {
        let mut f = BlockFields::default();
        fields(&mut |key, value| {
            let slot = match key {
                "type" => &mut f.kind,
                "text" => &mut f.text,
                "thinking" => &mut f.thinking,
                "thinkingSignature" => &mut f.thinking_signature,
                "redacted" => &mut f.redacted,
                "id" => &mut f.id,
                "name" => &mut f.name,
                "arguments" => &mut f.arguments,
                "mimeType" => &mut f.mime_type,
                "data" => &mut f.data,
                "textSignature" => &mut f.text_signature,
                "thoughtSignature" => &mut f.thought_signature,
                _ => return,
            };
            *slot = Some(value);
        })?;
        Some(f)
    }
}

/// One content block of a replayed assistant turn.
pub struct Block<'a> {
    pub kind: BlockKind,
    pub fields: BlockFields<'a>,
    /// A tool call's id after normalisation, when it changed.
    pub new_id: Option<String>,
}

/// The calls of the last assistant turn sent, and how many of them the synthetic results
/// written so far passed: a synthetic result (`transform.rs`) answers its turn's unanswered
/// calls, in order. The writers that name the call a synthetic result answers (OpenAI
/// Completions, Mistral) track it here.
#[derive(Default)]
pub struct PendingCalls<'b, 'a> {
    calls: &'b [Block<'a>],
    next: usize,
}

impl<'b, 'a> PendingCalls<'b, 'a> {
    /// An assistant turn's blocks, about to be sent: a turn with tool calls becomes the one
    /// later synthetic results answer. Returns `blocks`.
    pub fn sent(&mut self, blocks: &'b [Block<'a>]) -> &'b [Block<'a>] {
        if blocks.iter().any(|b| b.kind == BlockKind::ToolCall) {
            self.calls = blocks;
            self.next = 0;
        }
        blocks
    }

    /// The call a synthetic result with this id answers: the next tool call of the turn with
    /// that id (after normalisation). `None` when there is none.
    pub fn answer(&mut self, id: &str) -> Option<&'b Block<'a>> {
        let (at, call) = self
            .calls
            .iter()
            .enumerate()
            .skip(self.next)
            .find(|(_, b)| {
                b.kind == BlockKind::ToolCall
                    && match &b.new_id {
                        Some(new_id) => new_id == id,
                        None => b
                            .fields
                            .id
                            .and_then(RawStr::of)
                            .is_some_and(|i| i.text() == id),
                    }
            })?;
        self.next = at + 1;
        Some(call)
    }
}

/// What the replay layer made of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Text,
    Thinking,
    ToolCall,
    /// Thinking or text of another model as `{"type": "text", "text": ...}` (`fields.text`
    /// is that text, absent when the source block had none).
    ConvertedText,
    /// Any other type, kept as it is.
    Other,
}

/// One message after the replay layer.
pub enum Replayed<'a> {
    User(MsgFields<'a>),
    /// Its blocks are `blocks[range]` of [`Replay`].
    Assistant(MsgFields<'a>, std::ops::Range<usize>),
    ToolResult {
        fields: MsgFields<'a>,
        /// The id after normalisation, when it was remapped.
        new_id: Option<String>,
    },
    /// The synthetic error result of a call left unanswered (transform-messages.ts).
    Synthetic {
        id: String,
    },
}

/// The replayed messages and the blocks of their assistant turns.
pub struct Replay<'a> {
    pub messages: Vec<Replayed<'a>>,
    pub blocks: Vec<Block<'a>>,
}

/// `transformMessages` (see `transform.rs`) over the stored messages; `normalize` maps a
/// tool-call id of another model. `None` when a message has a shape handled only by the
/// value-tree path.
pub fn replay<'a>(
    messages: &'a Transcript,
    model: &Model,
    normalize: &dyn Fn(&str) -> String,
) -> Option<Replay<'a>> {
    // A remapped id's stored text -> the block holding its new id (the last one wins).
    let mut id_map: FxHashMap<&'a str, u32> = FxHashMap::default();
    let mut blocks: Vec<Block<'a>> = Vec::with_capacity(messages.len());
    let mut result: Vec<Replayed<'a>> = Vec::with_capacity(messages.len() + 8);
    // The tool calls of the last assistant turn still waiting for results (block indices),
    // and the results seen since (their stored id and remapping block).
    let mut pending: Vec<u32> = Vec::new();
    let mut answered: Vec<(&'a str, Option<u32>)> = Vec::new();
    // Synthetic results for the pending calls no result answered (transform-messages.ts).
    let flush = |pending: &mut Vec<u32>,
                 answered: &mut Vec<(&'a str, Option<u32>)>,
                 blocks: &[Block<'a>],
                 result: &mut Vec<Replayed<'a>>|
     -> Option<()> {
        for at in pending.drain(..) {
            let call = blocks[at as usize].new_id.as_deref();
            let stored = plain(blocks[at as usize].fields.id)?.unwrap_or_default();
            let id = call.unwrap_or(stored);
            let is_answered = answered.iter().any(|&(result_id, remapped)| {
                let new = remapped.and_then(|r| blocks[r as usize].new_id.as_deref());
                match new.filter(|n| !n.is_empty()) {
                    Some(new) => new == id,
                    None => result_id == id,
                }
            });
            if !is_answered {
                result.push(Replayed::Synthetic { id: id.to_owned() });
            }
        }
        answered.clear();
        Some(())
    };
    for message in messages.messages() {
        let fields = MsgFields::of(message)?;
        match plain(fields.role)? {
            Some("user") => {
                if !pending.is_empty() {
                    flush(&mut pending, &mut answered, &blocks, &mut result)?;
                }
                result.push(Replayed::User(fields));
            }
            Some("assistant") => {
                let start = blocks.len();
                replay_assistant(&fields, model, normalize, &mut id_map, &mut blocks)?;
                if !pending.is_empty() {
                    flush(&mut pending, &mut answered, &blocks, &mut result)?;
                }
                // An errored or aborted turn is dropped, its calls included.
                if matches!(plain(fields.stop_reason)?, Some("error" | "aborted")) {
                    continue;
                }
                let calls =
                    (start..blocks.len()).filter(|&i| blocks[i].kind == BlockKind::ToolCall);
                let before = pending.len();
                pending.extend(calls.map(|i| i as u32));
                if pending.len() > before {
                    answered.clear();
                }
                result.push(Replayed::Assistant(fields, start..blocks.len()));
            }
            Some("toolResult") => {
                let id = plain(fields.tool_call_id)?;
                let remapped = id.and_then(|id| id_map.get(id).copied());
                let new_id = remapped
                    .and_then(|at| blocks[at as usize].new_id.clone())
                    .filter(|n| !n.is_empty());
                if let Some(stored) = id {
                    answered.push((stored, remapped));
                }
                result.push(Replayed::ToolResult { fields, new_id });
            }
            // Other roles reach no builder's output; keep the pass simple.
            _ => return None,
        }
    }
    Some(Replay {
        messages: result,
        blocks,
    })
}

/// Whether an assistant turn was written by `model` (transform-messages.ts `isSameModel`);
/// `None` when a field is not a plain string.
pub fn is_same_model(fields: &MsgFields<'_>, model: &Model) -> Option<bool> {
    Some(
        plain(fields.provider)? == Some(model.provider.as_str())
            && plain(fields.api)? == Some(model.api.as_str())
            && plain(fields.model)? == Some(model.id.as_str()),
    )
}

/// The blocks of one assistant turn after the replay layer, appended to `out`; the ids of
/// another model's calls that `normalize` changed are mapped (stored id -> block index).
pub fn replay_assistant<'a>(
    fields: &MsgFields<'a>,
    model: &Model,
    normalize: &dyn Fn(&str) -> String,
    id_map: &mut FxHashMap<&'a str, u32>,
    out: &mut Vec<Block<'a>>,
) -> Option<()> {
    let same_model = is_same_model(fields, model)?;
    if !fields.content?.starts_with('[') {
        return None;
    }
    fields.for_each_block(|block| {
        let keep = |kind| Block {
            kind,
            fields: block,
            new_id: None,
        };
        let converted = |text| Block {
            kind: BlockKind::ConvertedText,
            fields: BlockFields {
                text,
                ..BlockFields::default()
            },
            new_id: None,
        };
        match plain(block.kind)? {
            Some("thinking") => {
                if block.redacted.is_some_and(raw_truthy) {
                    if same_model {
                        out.push(keep(BlockKind::Thinking));
                    }
                    return Some(());
                }
                // A non-empty string; escapes are fine (a Responses signature is a serialised
                // reasoning item).
                let signed = block
                    .thinking_signature
                    .is_some_and(|s| s.starts_with('"') && s.len() > 2);
                if same_model && signed {
                    out.push(keep(BlockKind::Thinking));
                    return Some(());
                }
                let Some(thinking) = block.thinking else {
                    return Some(());
                };
                if RawStr::of(thinking)?.is_blank() {
                    return Some(());
                }
                if same_model {
                    out.push(keep(BlockKind::Thinking));
                } else {
                    out.push(converted(Some(thinking)));
                }
            }
            Some("text") => {
                if same_model {
                    out.push(keep(BlockKind::Text));
                } else {
                    out.push(converted(block.text));
                }
            }
            Some("toolCall") => {
                if same_model {
                    out.push(keep(BlockKind::ToolCall));
                    return Some(());
                }
                let id = plain(block.id)?.unwrap_or_default();
                let new_id = normalize(id);
                let new_id = if new_id == id {
                    None
                } else {
                    id_map.insert(id, u32::try_from(out.len()).ok()?);
                    Some(new_id)
                };
                out.push(Block {
                    kind: BlockKind::ToolCall,
                    fields: block,
                    new_id,
                });
            }
            _ => out.push(keep(BlockKind::Other)),
        }
        Some(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_texts_are_those_json_stringify_writes() {
        for ok in [
            r#"{"a":1,"b":[true,false,null,"x\n\"\\\u0001"],"c":{}}"#,
            r#""é😀\u001f""#,
            "[]",
            "-12",
            "0",
        ] {
            assert!(is_canonical(ok), "{ok}");
        }
        for not in [
            r#"{"a": 1}"#,
            r#"{"a":1,"a":2}"#,
            r#""\u00e9""#,
            r#""\/""#,
            r#""\u000a""#,
            r#""\ud800""#,
            "1.5",
            "1e3",
            "-0",
            "01",
            "1234567890123456",
        ] {
            assert!(!is_canonical(not), "{not}");
        }
    }

    #[test]
    fn blank_strings_follow_js_trim() {
        let blank = |t: &str| RawStr::of(t).unwrap().is_blank();
        assert!(blank(r#"" \n\t\u000b\u3000""#));
        assert!(blank(r#""""#));
        assert!(!blank(r#"" \u0001""#));
        assert!(!blank(r#""\u0085""#));
        assert!(blank(r#""\ufeff""#));
        assert!(!blank(r#"" x ""#));
    }
}
