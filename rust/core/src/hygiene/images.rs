//! The transcript side of image sanitization (OpenClaw 2026.3.13
//! `src/agents/pi-embedded-helpers/images.ts`, blocks by `src/agents/tool-images.ts`): finding
//! the image blocks `sanitizeSessionMessagesImages` would hand to the image code, and writing
//! the sanitized blocks back.
//!
//! Decoding and re-encoding images happens in Python (Pillow, `clawctx.images`); this module
//! makes sure only the image blocks cross over. Messages whose cached facts show no image block
//! are skipped without being parsed, and a block's `data` is borrowed from the message text
//! when it has no escapes.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::base::Error;
use crate::base::{raw_as_str, to_js_string, JsonText, RawObject};
use crate::transcript::MessageView;
use crate::transcript::{Message, Transcript};

/// One image block (`type: "image"` with string `data` and string `mimeType`) that
/// `sanitizeSessionMessagesImages` sanitizes.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageBlockRef<'a> {
    /// Index of the message in the transcript.
    pub message_index: usize,
    /// Index of the block in the message's `content` array.
    pub block_index: usize,
    /// `toolResult`, `user` or `assistant`.
    pub role: &'a str,
    /// The block's `data`, untrimmed.
    pub data: Cow<'a, str>,
    /// The block's `mimeType`.
    pub mime_type: Cow<'a, str>,
    /// A tool result's `details.imageSanitization.maxDimensionPx` (a number), which replaces
    /// the caller's limit for this result's blocks (images.ts).
    pub max_dimension_px: Option<f64>,
    /// A tool result's `details.imageSanitization.maxBytes` (a number).
    pub max_bytes: Option<f64>,
}

/// The per-result limit overrides of a tool result (images.ts, `sanitizeSessionMessagesImages`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Overrides {
    max_dimension_px: Option<f64>,
    max_bytes: Option<f64>,
}

impl Overrides {
    /// An image block of the message at `message_index` under these overrides (the raw and the
    /// value-tree scan both list them so).
    fn block<'a>(
        self,
        message_index: usize,
        block_index: usize,
        role: &'a str,
        data: Cow<'a, str>,
        mime_type: Cow<'a, str>,
    ) -> ImageBlockRef<'a> {
        ImageBlockRef {
            message_index,
            block_index,
            role,
            data,
            mime_type,
            max_dimension_px: self.max_dimension_px,
            max_bytes: self.max_bytes,
        }
    }
}

/// Whether `sanitizeSessionMessagesImages` image-sanitizes the array content of a message with
/// this role: tool results, users, errored assistants and every other assistant with array
/// content (in both sanitize modes). Other roles are left alone.
fn sanitizes_role(role: &str) -> bool {
    matches!(role, "toolResult" | "user" | "assistant")
}

/// The image blocks of `transcript` that `sanitizeSessionMessagesImages` would sanitize, in
/// transcript and block order.
///
/// Uses the cached [`MessageFacts`](crate::transcript::MessageFacts) to skip messages without an
/// image block; only messages holding one are parsed (field by field, without building value
/// trees for other blocks). A tool result with string content has no blocks: upstream turns
/// such content into `[]` (an upstream quirk) and clawctx leaves it as it is.
pub fn find_image_blocks(transcript: &Transcript) -> Vec<ImageBlockRef<'_>> {
    find_image_blocks_to_sanitize(transcript, None)
}

/// [`find_image_blocks`], leaving out the blocks that tool-images.ts
/// (`resizeImageBase64IfNeeded`) would keep exactly as they are
/// under `limits` (see [`KeepLimits::keeps`]) when `limits` is given: those need no image
/// work, so they never reach Python.
pub fn find_image_blocks_to_sanitize<'a>(
    transcript: &'a Transcript,
    limits: Option<&KeepLimits>,
) -> Vec<ImageBlockRef<'a>> {
    let mut found = Vec::new();
    for (index, message) in transcript.messages().iter().enumerate() {
        let facts = message.request_facts();
        if !facts.has_image {
            continue;
        }
        let Some(role) = facts.role.as_deref().filter(|r| sanitizes_role(r)) else {
            continue;
        };
        let start = found.len();
        if !scan_raw(message, index, role, &mut found) {
            scan_value(message, index, role, &mut found);
        }
        if let Some(limits) = limits {
            let mut i = start;
            while i < found.len() {
                if limits.keeps(&found[i]) {
                    found.remove(i);
                } else {
                    i += 1;
                }
            }
        }
    }
    found
}

/// The fast path: field by field over the raw text. Returns false (having added nothing) when
/// the text needs the lenient parser (lone surrogate escapes and other oddities).
fn scan_raw<'a>(
    message: &'a Message,
    index: usize,
    role: &'a str,
    found: &mut Vec<ImageBlockRef<'a>>,
) -> bool {
    let text: &'a JsonText = message.text();
    let Some(view) = MessageView::parse(text) else {
        return false;
    };
    let Some(content) = view.raw.get("content") else {
        return true;
    };
    if !content.get().starts_with('[') {
        return true;
    }
    let Ok(blocks) = serde_json::from_str::<Vec<&'a RawValue>>(content.get()) else {
        return false;
    };
    let overrides = if role == "toolResult" {
        match view.raw.get("details") {
            Some(details) => match raw_overrides(details) {
                Some(o) => o,
                None => return false,
            },
            None => Overrides::default(),
        }
    } else {
        Overrides::default()
    };
    let start = found.len();
    for (block_index, block) in blocks.into_iter().enumerate() {
        if !block.get().starts_with('{') {
            continue;
        }
        let Ok(fields) = RawObject::parse(block.get()) else {
            found.truncate(start);
            return false;
        };
        if fields.get_str("type").as_deref() != Some("image") {
            continue;
        }
        let (Some(data), Some(mime_type)) = (
            fields.get("data").and_then(raw_as_str),
            fields.get("mimeType").and_then(raw_as_str),
        ) else {
            continue;
        };
        found.push(overrides.block(index, block_index, role, data, mime_type));
    }
    true
}

/// `details.imageSanitization.{maxDimensionPx,maxBytes}` from a raw `details` value; `None`
/// when the value cannot be read field by field.
fn raw_overrides(details: &RawValue) -> Option<Overrides> {
    if !details.get().starts_with('{') {
        return Some(Overrides::default());
    }
    let details = RawObject::parse(details.get()).ok()?;
    let Some(record) = details.get("imageSanitization") else {
        return Some(Overrides::default());
    };
    if !record.get().starts_with('{') {
        return Some(Overrides::default());
    }
    let record = RawObject::parse(record.get()).ok()?;
    let number = |key: &str| {
        record
            .get(key)
            .and_then(|raw| crate::base::parse_value(raw.get()).ok())
            .and_then(|v| number_of(&v))
    };
    Some(Overrides {
        max_dimension_px: number("maxDimensionPx"),
        max_bytes: number("maxBytes"),
    })
}

/// A JSON number as `f64` (`typeof value === "number"`).
fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// The lenient path: the whole message as a value (owned data).
fn scan_value<'a>(
    message: &'a Message,
    index: usize,
    role: &'a str,
    found: &mut Vec<ImageBlockRef<'a>>,
) {
    let Ok(value) = message.text().to_value() else {
        return;
    };
    let Some(blocks) = value.get("content").and_then(Value::as_array) else {
        return;
    };
    let overrides = if role == "toolResult" {
        let record = value
            .get("details")
            .and_then(|d| d.get("imageSanitization"))
            .filter(|r| r.is_object());
        Overrides {
            max_dimension_px: record
                .and_then(|r| r.get("maxDimensionPx"))
                .and_then(number_of),
            max_bytes: record.and_then(|r| r.get("maxBytes")).and_then(number_of),
        }
    } else {
        Overrides::default()
    };
    for (block_index, block) in blocks.iter().enumerate() {
        if block.get("type").and_then(Value::as_str) != Some("image") {
            continue;
        }
        let (Some(data), Some(mime_type)) = (
            block.get("data").and_then(Value::as_str),
            block.get("mimeType").and_then(Value::as_str),
        ) else {
            continue;
        };
        found.push(overrides.block(
            index,
            block_index,
            role,
            Cow::Owned(data.to_owned()),
            Cow::Owned(mime_type.to_owned()),
        ));
    }
}

/// Default limits and guards of `src/agents/image-sanitization.ts` and tool-images.ts for
/// [`find_image_blocks_to_sanitize`]; a tool result's
/// overrides replace the first two for its blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeepLimits {
    pub max_dimension_px: f64,
    pub max_bytes: f64,
    /// Payloads whose decoded size (estimated as `len * 3 / 4`) exceeds this are not kept.
    pub max_input_bytes: f64,
}

impl KeepLimits {
    /// Whether `resizeImageBase64IfNeeded` keeps `block` exactly as it is: its `data` is plain
    /// base64 with nothing to trim, the mime type inferred from its prefix
    /// (`inferMimeTypeFromBase64`) is its own, the header of a PNG, GIF, JPEG or WebP gives
    /// dimensions within the maximum side and the decoded size is within `max_bytes`.
    /// Limits are normalized as `clawctx.images` does (side
    /// floored, both at least 1). Anything else is left to the image code.
    pub fn keeps(&self, block: &ImageBlockRef<'_>) -> bool {
        let data: &str = &block.data;
        if let Some(inferred) = infer_mime_type(data) {
            if inferred != block.mime_type {
                return false;
            }
        }
        if (data.len() / 4 * 3 + data.len() % 4 * 3 / 4) as f64 > self.max_input_bytes {
            return false;
        }
        let Some(probe) = probe_base64_image(data) else {
            return false;
        };
        let max_side = block
            .max_dimension_px
            .unwrap_or(self.max_dimension_px)
            .floor()
            .max(1.0);
        let max_bytes = block.max_bytes.unwrap_or(self.max_bytes).max(1.0);
        probe.width as f64 <= max_side
            && probe.height as f64 <= max_side
            && probe.decoded_len as f64 <= max_bytes
    }
}

/// tool-images.ts, `inferMimeTypeFromBase64`: the mime type a base64 payload's first
/// characters identify.
pub fn infer_mime_type(trimmed: &str) -> Option<&'static str> {
    if trimmed.starts_with("/9j/") {
        Some("image/jpeg")
    } else if trimmed.starts_with("iVBOR") {
        Some("image/png")
    } else if trimmed.starts_with("R0lGOD") {
        Some("image/gif")
    } else {
        None
    }
}

/// What an image header tells without decoding pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageProbe {
    pub width: u32,
    pub height: u32,
    /// Size of the decoded payload in bytes.
    pub decoded_len: usize,
}

/// Reads the dimensions of a PNG, GIF, JPEG or WebP image from its base64 payload, decoding
/// only the header bytes it needs. `None` unless `data` is plain base64 (alphabet characters,
/// then at most two `=`; no whitespace) of one of those formats with a readable header and
/// non-zero dimensions.
pub fn probe_base64_image(data: &str) -> Option<ImageProbe> {
    let b64 = Base64::new(data)?;
    let (width, height) = match b64.read(0, 4)?.as_slice() {
        [0x89, b'P', b'N', b'G'] => png_size(&b64),
        [b'G', b'I', b'F', b'8'] => gif_size(&b64),
        [0xFF, 0xD8, ..] => jpeg_size(&b64),
        [b'R', b'I', b'F', b'F'] => webp_size(&b64),
        _ => None,
    }?;
    (width > 0 && height > 0).then_some(ImageProbe {
        width,
        height,
        decoded_len: b64.len,
    })
}

/// Decodes base64 the way Node's `Buffer.from(data, "base64")` does: URL-safe `-` and `_` are
/// read as `+` and `/`, other characters outside the alphabet (whitespace, …) are skipped,
/// decoding stops at the first `=`, and trailing bits that do not make a byte are dropped.
pub fn decode_base64_lenient(data: &str) -> Vec<u8> {
    let bytes = data.as_bytes();
    let end = memchr::memchr(b'=', bytes).unwrap_or(bytes.len());
    let mut decoder = LenientDecoder {
        out: Vec::with_capacity(end / 4 * 3 + 2),
        bits: 0,
        nbits: 0,
    };
    let mut chunks = bytes[..end].chunks_exact(4);
    for chunk in chunks.by_ref() {
        let s = chunk.iter().map(|&c| SEXTETS[usize::from(c)]);
        let (word, bad) = s.fold((0u32, 0u8), |(w, bad), v| {
            (w << 6 | u32::from(v & 63), bad | v)
        });
        if decoder.nbits == 0 && bad & 0x80 == 0 {
            // The common case: four alphabet characters on a byte boundary.
            decoder.out.extend_from_slice(&word.to_be_bytes()[1..]);
        } else {
            chunk.iter().for_each(|&c| decoder.push(c));
        }
    }
    chunks.remainder().iter().for_each(|&c| decoder.push(c));
    decoder.out
}

struct LenientDecoder {
    out: Vec<u8>,
    bits: u32,
    nbits: u32,
}

impl LenientDecoder {
    fn push(&mut self, c: u8) {
        let v = match c {
            b'-' => 62,
            b'_' => 63,
            _ => match SEXTETS[usize::from(c)] {
                0xFF => return,
                v => u32::from(v),
            },
        };
        self.bits = self.bits << 6 | v;
        self.nbits += 6;
        if self.nbits >= 8 {
            self.nbits -= 8;
            self.out.push((self.bits >> self.nbits) as u8);
            self.bits &= (1 << self.nbits) - 1;
        }
    }
}

/// Random access to the bytes of plain base64 text.
struct Base64<'a> {
    text: &'a [u8],
    /// Decoded length.
    len: usize,
}

/// The value of each base64 alphabet character; 0xFF for other bytes.
const SEXTETS: [u8; 256] = {
    let mut table = [0xFF; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};

fn sextet(c: u8) -> Option<u32> {
    match SEXTETS[usize::from(c)] {
        0xFF => None,
        v => Some(u32::from(v)),
    }
}

/// Whether every byte is a base64 alphabet character (branch-free per chunk, so it runs at
/// memory speed on megabyte payloads).
fn all_base64(bytes: &[u8]) -> bool {
    bytes.chunks(64).all(|chunk| {
        chunk
            .iter()
            .fold(0u8, |bad, &c| bad | (SEXTETS[usize::from(c)] >> 7))
            == 0
    })
}

impl<'a> Base64<'a> {
    fn new(data: &'a str) -> Option<Base64<'a>> {
        let bytes = data.as_bytes();
        let body = bytes
            .strip_suffix(b"==")
            .or_else(|| bytes.strip_suffix(b"="))
            .unwrap_or(bytes);
        if !all_base64(body) {
            return None;
        }
        Some(Base64 {
            text: body,
            len: body.len() * 3 / 4,
        })
    }

    fn byte(&self, index: usize) -> Option<u8> {
        if index >= self.len {
            return None;
        }
        let (group, offset) = (index / 3, index % 3);
        let chars = &self.text[group * 4..];
        let bits = |i: usize| chars.get(i).and_then(|&c| sextet(c)).unwrap_or(0);
        let word = bits(0) << 18 | bits(1) << 12 | bits(2) << 6 | bits(3);
        Some((word >> (16 - 8 * offset as u32)) as u8)
    }

    fn read(&self, start: usize, n: usize) -> Option<Vec<u8>> {
        (start..start.checked_add(n)?)
            .map(|i| self.byte(i))
            .collect()
    }

    fn u16_be(&self, at: usize) -> Option<u32> {
        let b = self.read(at, 2)?;
        Some(u32::from(b[0]) << 8 | u32::from(b[1]))
    }

    fn u16_le(&self, at: usize) -> Option<u32> {
        let b = self.read(at, 2)?;
        Some(u32::from(b[1]) << 8 | u32::from(b[0]))
    }
}

fn png_size(b: &Base64<'_>) -> Option<(u32, u32)> {
    let head = b.read(0, 24)?;
    if head[..8] != *b"\x89PNG\r\n\x1a\n" || head[12..16] != *b"IHDR" {
        return None;
    }
    let be32 = |s: &[u8]| u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
    Some((be32(&head[16..20]), be32(&head[20..24])))
}

fn gif_size(b: &Base64<'_>) -> Option<(u32, u32)> {
    let head = b.read(0, 10)?;
    if head[..6] != *b"GIF87a" && head[..6] != *b"GIF89a" {
        return None;
    }
    Some((b.u16_le(6)?, b.u16_le(8)?))
}

/// Walks the JPEG markers to the first frame header (SOF0–SOF15 except DHT, JPG and DAC).
fn jpeg_size(b: &Base64<'_>) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        if b.byte(at)? != 0xFF {
            return None;
        }
        at += 1;
        let mut marker = b.byte(at)?;
        while marker == 0xFF {
            // Fill bytes before a marker.
            at += 1;
            marker = b.byte(at)?;
        }
        at += 1;
        match marker {
            0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => {
                return Some((b.u16_be(at + 5)?, b.u16_be(at + 3)?));
            }
            0x01 | 0xD0..=0xD7 => {}
            0xD8..=0xDA => return None,
            _ => {
                let length = b.u16_be(at)? as usize;
                if length < 2 {
                    return None;
                }
                at += length;
            }
        }
    }
}

fn webp_size(b: &Base64<'_>) -> Option<(u32, u32)> {
    let head = b.read(0, 30)?;
    if head[8..12] != *b"WEBP" {
        return None;
    }
    let le24 = |s: &[u8]| u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16;
    match &head[12..16] {
        b"VP8 " if head[23..26] == [0x9D, 0x01, 0x2A] => Some((
            (u32::from(head[26]) | u32::from(head[27]) << 8) & 0x3FFF,
            (u32::from(head[28]) | u32::from(head[29]) << 8) & 0x3FFF,
        )),
        b"VP8L" if head[20] == 0x2F => {
            let bits = u32::from_le_bytes([head[21], head[22], head[23], head[24]]);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        b"VP8X" => Some((le24(&head[24..27]) + 1, le24(&head[27..30]) + 1)),
        _ => None,
    }
}

/// How a content block is rewritten.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockEdit {
    /// The block becomes this value (an image replaced by a text block,
    /// `sanitizeContentBlocksImages`).
    Replace(Value),
    /// These fields are set on the block object, which keeps its other fields and their order
    /// (`{...block, data, mimeType}`, `sanitizeContentBlocksImages`).
    Merge(Map<String, Value>),
}

/// One block to rewrite: `content[block_index]` of message `message_index`.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockReplacement {
    pub message_index: usize,
    pub block_index: usize,
    pub edit: BlockEdit,
}

/// A new transcript with the given content blocks rewritten. Messages without a replacement
/// are shared with the input (their exact text is kept); an edited message is written like
/// `JSON.stringify`. Several edits of one block apply in order. No replacements give a clone
/// of the input.
///
/// Errors (`InvalidArgument`) when a message index is out of range, the message has no
/// `content` array, a block index is out of range, or a merge targets a block that is not an
/// object.
pub fn replace_content_blocks(
    transcript: &Transcript,
    replacements: Vec<BlockReplacement>,
) -> Result<Transcript, Error> {
    if replacements.is_empty() {
        return Ok(transcript.clone());
    }
    let mut by_message: BTreeMap<usize, Vec<(usize, BlockEdit)>> = BTreeMap::new();
    for r in replacements {
        if r.message_index >= transcript.len() {
            return Err(Error::InvalidArgument(format!(
                "message index {} out of range (the transcript has {} messages)",
                r.message_index,
                transcript.len()
            )));
        }
        by_message
            .entry(r.message_index)
            .or_default()
            .push((r.block_index, r.edit));
    }
    let mut messages = transcript.messages().to_vec();
    for (message_index, edits) in by_message {
        let mut value = messages[message_index]
            .text()
            .to_value()
            .map_err(|e| Error::InvalidArgument(format!("message {message_index}: {e}")))?;
        let Some(content) = value.get_mut("content").and_then(Value::as_array_mut) else {
            return Err(Error::InvalidArgument(format!(
                "message {message_index} has no content array"
            )));
        };
        for (block_index, edit) in edits {
            let len = content.len();
            let Some(block) = content.get_mut(block_index) else {
                return Err(Error::InvalidArgument(format!(
                    "block index {block_index} out of range (message {message_index} has {len} blocks)"
                )));
            };
            match edit {
                BlockEdit::Replace(new) => *block = new,
                BlockEdit::Merge(fields) => {
                    let Some(object) = block.as_object_mut() else {
                        return Err(Error::InvalidArgument(format!(
                            "block {block_index} of message {message_index} is not an object"
                        )));
                    };
                    for (key, field) in fields {
                        object.insert(key, field);
                    }
                }
            }
        }
        messages[message_index] = Message::new(JsonText::owned(to_js_string(&value)));
    }
    Ok(Transcript::from_messages(messages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transcript(values: Vec<Value>) -> Transcript {
        Transcript::from_values(&values)
    }

    fn image(data: &str) -> Value {
        json!({"type": "image", "data": data, "mimeType": "image/png"})
    }

    #[test]
    fn finds_blocks_by_role_and_skips_others() {
        let t = transcript(vec![
            json!({"role": "user", "content": [{"type": "text", "text": "a"}, image("u1")]}),
            json!({"role": "user", "content": "no blocks"}),
            json!({"role": "assistant", "stopReason": "error", "content": [image("e1")]}),
            json!({"role": "assistant", "stopReason": "stop", "content": [image("a1"), {"type": "image", "data": 5, "mimeType": "x"}, {"type": "image", "data": "no mime"}]}),
            json!({"role": "toolResult", "toolCallId": "c", "content": [image("t1"), image("t2")],
                   "details": {"imageSanitization": {"maxDimensionPx": 800, "maxBytes": "9"}}}),
            json!({"role": "custom", "content": [image("c1")]}),
            json!({"role": "toolResult", "content": [image("t3")], "details": {"imageSanitization": [1]}}),
        ]);
        let found = find_image_blocks(&t);
        type Summary<'a> = (usize, usize, &'a str, &'a str, Option<f64>, Option<f64>);
        let summary: Vec<Summary<'_>> = found
            .iter()
            .map(|b| {
                (
                    b.message_index,
                    b.block_index,
                    b.role,
                    b.data.as_ref(),
                    b.max_dimension_px,
                    b.max_bytes,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (0, 1, "user", "u1", None, None),
                (2, 0, "assistant", "e1", None, None),
                (3, 0, "assistant", "a1", None, None),
                (4, 0, "toolResult", "t1", Some(800.0), None),
                (4, 1, "toolResult", "t2", Some(800.0), None),
                (6, 0, "toolResult", "t3", None, None),
            ]
        );
        assert!(matches!(found[0].data, Cow::Borrowed(_)));
        assert_eq!(found[0].mime_type, "image/png");
    }

    #[test]
    fn lenient_path_matches_fast_path() {
        // Duplicate keys (the last wins, as in JSON.parse), escapes, a lone surrogate escape
        // kept verbatim (as session files keep it), odd details.
        let texts = [
            r#"{"role":"toolResult","content":[{"type":"image","data":"x","data":"a\/b","mimeType":"image/png"}],"details":{"imageSanitization":{"maxBytes":10,"maxBytes":20.5}}}"#,
            r#"{"role":"toolResult","content":[{"type":"image","data":"\ud800","mimeType":"m"},7,{"type":"image","data":"q","mimeType":"m","type":"text"}],"details":{"imageSanitization":{"maxDimensionPx":-3}}}"#,
            r#"{"role":"toolResult","content":[{"type":"image","data":"d","mimeType":"m"}],"details":[1]}"#,
            r#"{"role":"user","content":[{"type":"image","data":"d","mimeType":"m"}],"details":{"imageSanitization":{"maxBytes":1}}}"#,
        ];
        let t = Transcript::new(texts.iter().map(|s| JsonText::owned((*s).into())).collect());
        for (i, message) in t.messages().iter().enumerate() {
            let role = message.facts().role.as_deref().unwrap();
            let (mut fast, mut lenient) = (Vec::new(), Vec::new());
            assert!(scan_raw(message, i, role, &mut fast));
            scan_value(message, i, role, &mut lenient);
            assert_eq!(fast, lenient, "{}", texts[i]);
        }
        let found = find_image_blocks(&t);
        assert_eq!(found.len(), 4);
        assert_eq!(
            (found[0].data.as_ref(), found[0].max_bytes),
            ("a/b", Some(20.5))
        );
        assert_eq!(found[1].data, "\u{FFFD}");
        assert_eq!(found[1].max_dimension_px, Some(-3.0));
        assert_eq!(
            found[3].max_bytes, None,
            "overrides are read from tool results only"
        );
    }

    #[test]
    fn replaces_and_merges_keeping_other_messages() {
        let text = r#"[{"role":"user","content":[{"type":"image","data":" x ","extra":1,"mimeType":"a"}]}, {"role":"user","content":"keep  me"}]"#;
        let t = Transcript::from_json(text).unwrap();
        let mut fields = Map::new();
        fields.insert("data".into(), json!("y"));
        fields.insert("mimeType".into(), json!("image/jpeg"));
        let out = replace_content_blocks(
            &t,
            vec![BlockReplacement {
                message_index: 0,
                block_index: 0,
                edit: BlockEdit::Merge(fields),
            }],
        )
        .unwrap();
        assert_eq!(
            out.to_json(),
            r#"[{"role":"user","content":[{"type":"image","data":"y","extra":1,"mimeType":"image/jpeg"}]},{"role":"user","content":"keep  me"}]"#
        );
        assert_eq!(out.messages()[1], t.messages()[1]);
        let replaced = replace_content_blocks(
            &t,
            vec![BlockReplacement {
                message_index: 0,
                block_index: 0,
                edit: BlockEdit::Replace(json!({"type": "text", "text": "gone"})),
            }],
        )
        .unwrap();
        assert_eq!(
            replaced.messages()[0].as_str(),
            r#"{"role":"user","content":[{"type":"text","text":"gone"}]}"#
        );
        assert_eq!(replace_content_blocks(&t, vec![]).unwrap(), t);
    }

    fn encode(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let word = chunk
                .iter()
                .enumerate()
                .fold(0u32, |w, (i, &b)| w | u32::from(b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(ALPHABET[(word >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        while !out.len().is_multiple_of(4) {
            out.push('=');
        }
        out
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(width.to_be_bytes());
        b.extend(height.to_be_bytes());
        b.extend([8, 2, 0, 0, 0, 1, 2, 3, 4]);
        b
    }

    fn jpeg(width: u16, height: u16) -> Vec<u8> {
        let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 16];
        b.extend(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
        b.extend([0xFF, 0xFF, 0xDB, 0, 3, 7]); // a fill byte, then a short DQT
        b.extend([0xFF, 0xC2, 0, 11, 8]);
        b.extend(height.to_be_bytes());
        b.extend(width.to_be_bytes());
        b.extend([1, 1, 0x11, 0, 0xFF, 0xD9]);
        b
    }

    #[test]
    fn probes_headers_of_each_format() {
        let probe = |bytes: &[u8]| {
            probe_base64_image(&encode(bytes)).map(|p| (p.width, p.height, p.decoded_len))
        };
        let p = png(4000, 3000);
        assert_eq!(probe(&p), Some((4000, 3000, p.len())));
        assert_eq!(probe(&png(0, 5)), None);
        assert_eq!(probe(&p[..20]), None, "a header cut short");
        let mut gif = b"GIF89a".to_vec();
        gif.extend([0x2C, 0x01, 0x10, 0x00, 0, 0, 0]);
        assert_eq!(probe(&gif), Some((300, 16, gif.len())));
        let j = jpeg(1201, 17);
        assert_eq!(probe(&j), Some((1201, 17, j.len())));
        assert_eq!(probe(&j[..j.len() - 14]), None, "no frame header");
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\x10\0\0\0".to_vec();
        webp.extend([0x1F, 0x03, 0x00, 0x57, 0x02, 0x00]); // 800 x 600
        assert_eq!(probe(&webp), Some((800, 600, webp.len())));
        let mut lossless = b"RIFF\0\0\0\0WEBPVP8L\x05\0\0\0\x2F".to_vec();
        let bits: u32 = (640 - 1) | (480 - 1) << 14;
        lossless.extend(bits.to_le_bytes());
        lossless.extend([0; 5]);
        assert_eq!(probe(&lossless), Some((640, 480, lossless.len())));
        let mut lossy = b"RIFF\0\0\0\0WEBPVP8 \x0a\0\0\0\0\0\0\x9d\x01\x2a".to_vec();
        lossy.extend([0x40, 0x01, 0xF0, 0x40]); // 320 x 240, scale bits set
        assert_eq!(probe(&lossy), Some((320, 240, lossy.len())));
        assert_eq!(probe(b"BM not supported"), None);
        // Only plain base64: whitespace, URL-safe characters or inner padding defer to Python.
        let text = encode(&p);
        for bad in [
            format!(" {text}"),
            format!("{}\n{}", &text[..8], &text[8..]),
            text.replace('+', "-"),
            format!("{}=A", &text[..12]),
        ] {
            if bad != text {
                assert_eq!(probe_base64_image(&bad), None, "{bad}");
            }
        }
        assert_eq!(
            probe_base64_image(&text[..text.len() - 1]).map(|p| p.width),
            Some(4000)
        );
    }

    #[test]
    fn lenient_decoding_follows_node() {
        let bytes: Vec<u8> = (0..=255u8).chain(0..=100).collect();
        let text = encode(&bytes);
        assert_eq!(decode_base64_lenient(&text), bytes);
        let messy: String = text
            .replace('+', "-")
            .replace('/', "_")
            .chars()
            .enumerate()
            .flat_map(|(i, c)| {
                if i % 7 == 3 {
                    vec![' ', c, '\n']
                } else {
                    vec![c]
                }
            })
            .collect();
        assert_eq!(decode_base64_lenient(&messy), bytes);
        assert_eq!(decode_base64_lenient("QUJD"), b"ABC");
        assert_eq!(decode_base64_lenient("QUI"), b"AB");
        assert_eq!(
            decode_base64_lenient("QUJDR"),
            b"ABC",
            "a lone trailing character"
        );
        assert_eq!(
            decode_base64_lenient("QQ==QUJD"),
            b"A",
            "stops at the first ="
        );
        assert_eq!(decode_base64_lenient("Q\u{e9}UJD!"), b"ABC");
        assert_eq!(decode_base64_lenient(""), b"");
    }

    #[test]
    fn keep_limits_follow_rule_23_and_overrides() {
        let limits = KeepLimits {
            max_dimension_px: 1200.0,
            max_bytes: 5.0 * 1024.0 * 1024.0,
            max_input_bytes: 64.0 * 1024.0 * 1024.0,
        };
        let block = |data: String, mime: &'static str, dim: Option<f64>, bytes: Option<f64>| {
            ImageBlockRef {
                message_index: 0,
                block_index: 0,
                role: "toolResult",
                data: Cow::Owned(data),
                mime_type: Cow::Borrowed(mime),
                max_dimension_px: dim,
                max_bytes: bytes,
            }
        };
        let small = encode(&png(1200, 800));
        assert!(limits.keeps(&block(small.clone(), "image/png", None, None)));
        assert!(
            !limits.keeps(&block(small.clone(), "image/jpeg", None, None)),
            "mime changes"
        );
        assert!(!limits.keeps(&block(small.clone(), "image/png", Some(1199.9), None)));
        assert!(limits.keeps(&block(small.clone(), "image/png", Some(1200.7), None)));
        assert!(!limits.keeps(&block(small.clone(), "image/png", None, Some(20.0))));
        assert!(!limits.keeps(&block(format!("{small} "), "image/png", None, None)));
        let tight = KeepLimits {
            max_input_bytes: 10.0,
            ..limits
        };
        assert!(!tight.keeps(&block(small.clone(), "image/png", None, None)));
        let big = encode(&jpeg(1201, 10));
        assert!(!limits.keeps(&block(big.clone(), "image/jpeg", None, None)));
        assert!(limits.keeps(&block(big, "image/jpeg", Some(2000.0), None)));
        let unknown = encode(b"BM\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert!(!limits.keeps(&block(unknown, "image/bmp", None, None)));

        let t = transcript(vec![json!({"role": "user", "content": [
            {"type": "image", "data": small, "mimeType": "image/png"},
            {"type": "image", "data": encode(&png(1300, 10)), "mimeType": "image/png"},
        ]})]);
        let all = find_image_blocks(&t);
        let to_do = find_image_blocks_to_sanitize(&t, Some(&limits));
        assert_eq!(all.len(), 2);
        assert_eq!(to_do, all[1..].to_vec());
    }

    #[test]
    fn bad_indices_are_errors() {
        let t = transcript(vec![
            json!({"role": "user", "content": [image("a")]}),
            json!({"role": "user", "content": "s"}),
        ]);
        let edit = || BlockEdit::Replace(json!(null));
        for (m, b) in [(2, 0), (0, 1), (1, 0)] {
            let r = replace_content_blocks(
                &t,
                vec![BlockReplacement {
                    message_index: m,
                    block_index: b,
                    edit: edit(),
                }],
            );
            assert!(matches!(r, Err(Error::InvalidArgument(_))), "{m} {b}");
        }
        let t2 = transcript(vec![json!({"role": "user", "content": ["str"]})]);
        let r = replace_content_blocks(
            &t2,
            vec![BlockReplacement {
                message_index: 0,
                block_index: 0,
                edit: BlockEdit::Merge(Map::new()),
            }],
        );
        assert!(matches!(r, Err(Error::InvalidArgument(_))));
    }
}
