//! Splitting a session file into lines and salvaging records from damaged lines.
//!
//! pi and OpenClaw split on `"\n"` and drop every line `JSON.parse` rejects (pi-mono 0.58.3
//! session-manager.ts `parseSessionEntries`; OpenClaw 2026.3.13 `src/agents/session-file-repair.ts`
//! `repairSessionFileIfNeeded`). That silently loses real records in the ways files actually get
//! damaged: a crash
//! tears the last line and the next writer appends right after it (`<torn>{"type":...}`), a
//! filesystem leaves a run of NUL bytes, an editor adds a UTF-8 BOM or invalid UTF-8 sneaks
//! in. [`salvage_line`] recovers every complete record from such a line; the loader and the
//! repair both use it, and both report what they dropped.

use std::borrow::Cow;

use serde_json::Value;

use crate::base::{parse_value, RawObject};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One line of a file: its bytes without the `"\n"` terminator.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// 1-based line number.
    pub number: usize,
    /// Byte offset of the line's first byte in the file.
    pub offset: usize,
    /// The line without its `"\n"` (a CR of a CRLF ending is still there).
    pub bytes: &'a [u8],
    /// Whether a `"\n"` ended the line (false only for an unterminated last line).
    pub terminated: bool,
}

/// Iterates over the lines of `buf`. A final empty segment after the last `"\n"` is not a line.
pub fn split_lines(buf: &[u8]) -> impl Iterator<Item = Line<'_>> {
    let mut offset = 0;
    let mut number = 0;
    std::iter::from_fn(move || {
        if offset >= buf.len() {
            return None;
        }
        number += 1;
        let start = offset;
        match memchr::memchr(b'\n', &buf[start..]) {
            Some(pos) => {
                offset = start + pos + 1;
                Some(Line {
                    number,
                    offset: start,
                    bytes: &buf[start..start + pos],
                    terminated: true,
                })
            }
            None => {
                offset = buf.len();
                Some(Line {
                    number,
                    offset: start,
                    bytes: &buf[start..],
                    terminated: false,
                })
            }
        }
    })
}

/// True when the line holds nothing but JSON whitespace (space, tab, CR).
pub fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// The line as text with surrounding JSON whitespace trimmed, if it is valid UTF-8 without a
/// BOM (the precondition of the fast path; the caller still has to parse it).
pub fn clean_text(bytes: &[u8]) -> Option<&str> {
    if bytes.starts_with(BOM) {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    Some(text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r')))
}

/// The fast path: the line is valid UTF-8 without BOM and parses as one JSON object.
/// Returns the record text (the line with surrounding whitespace trimmed).
pub fn clean_record(bytes: &[u8]) -> Option<&str> {
    clean_text(bytes).filter(|text| RawObject::parse(text).is_ok())
}

/// The deepest nesting of arrays and objects a record may have (the record itself is level 1).
///
/// serde_json, which every reader of the core parses records and messages with, fails on the
/// 128th nested container; pi's `JSON.stringify` has no limit, so another tool can write a
/// deeper line. Such a line is refused as a whole, the same way everywhere: the open skips it
/// as damaged (and reports it), `repair` removes it (with a backup), and an append refuses to
/// write one, so whatever a session returns can be handed back to it (issue 33, F3/N2/N3).
pub const MAX_RECORD_DEPTH: usize = 127;

/// Whether the JSON text nests arrays and objects deeper than `limit` levels. A byte scan that
/// skips string contents (with `memchr`); the text need not be valid JSON.
pub fn nested_deeper_than(text: &[u8], limit: usize) -> bool {
    // Each level takes at least two bytes (its opening and closing bracket).
    if text.len() <= 2 * limit {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                // Skip to the closing quote: past every backslash and the byte it escapes.
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &text[i..]) {
                        Some(p) if text[i + p] == b'\\' => {
                            i += p + 2;
                            if i >= text.len() {
                                return false;
                            }
                        }
                        Some(p) => {
                            i += p;
                            break;
                        }
                        None => return false,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// Why a record nested deeper than [`MAX_RECORD_DEPTH`] is refused.
pub fn too_deep_reason() -> String {
    format!("record nested deeper than {MAX_RECORD_DEPTH} levels (JSON readers stop at 128)")
}

/// What was wrong with a line that did not pass [`clean_record`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Damage {
    pub bom: bool,
    pub invalid_utf8: bool,
    pub nul_bytes: bool,
    /// Bytes that belonged to no record (a torn record, garbage) and were dropped.
    pub garbage_bytes: usize,
    /// The line held a valid JSON value that is not an object.
    pub not_object: bool,
}

impl Damage {
    /// A short human-readable reason, e.g. `"torn or invalid JSON (57 bytes dropped)"`.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.garbage_bytes > 0 {
            parts.push(format!(
                "torn or invalid JSON ({} bytes dropped)",
                self.garbage_bytes
            ));
        }
        if self.not_object {
            parts.push("JSON value is not an object".to_owned());
        }
        if self.nul_bytes {
            parts.push("NUL bytes".to_owned());
        }
        if self.invalid_utf8 {
            parts.push("invalid UTF-8 replaced with U+FFFD".to_owned());
        }
        if self.bom {
            parts.push("UTF-8 byte order mark removed".to_owned());
        }
        parts.join(", ")
    }
}

/// The records recovered from a damaged line, in order, as JSON texts.
#[derive(Debug, Clone)]
pub struct Salvage {
    pub records: Vec<String>,
    pub damage: Damage,
}

/// Content-block `type`s: an object with one of these types inside a torn line is part of a
/// message, never an entry of its own.
const BLOCK_TYPES: &[&str] = &[
    "text",
    "image",
    "thinking",
    "redacted_thinking",
    "toolCall",
    "toolUse",
    "tool_use",
    "tool_result",
    "functionCall",
    "function_call",
    "input_text",
    "output_text",
];

/// Does this object look like a session entry (so that it may be cut out of a torn line)?
/// Every entry pi writes has a string `type` first and a string `timestamp`.
fn looks_like_entry(value: &Value) -> bool {
    let Some(obj) = value.as_object() else {
        return false;
    };
    let Some(ty) = obj.get("type").and_then(Value::as_str) else {
        return false;
    };
    if ty == "session" {
        return true;
    }
    !BLOCK_TYPES.contains(&ty) && obj.get("timestamp").is_some_and(Value::is_string)
}

/// Recovers the records in a line that failed the fast path.
///
/// Steps: drop a BOM; decode UTF-8 lossily; split on runs of NUL bytes (a zero-filled block
/// left by a crash); in each piece parse JSON values back to back (`{..}{..}` glued records are
/// all kept); when parsing fails, skip to the next `{"type":` that starts a complete
/// entry-like object and drop the bytes in between. Cost is linear in the line length times the
/// nesting depth at the tear, not quadratic: candidate objects nested inside a torn record
/// either complete quickly (and are rejected as content blocks) or enclose the tear.
pub fn salvage_line(bytes: &[u8]) -> Salvage {
    let mut damage = Damage::default();
    let mut rest = bytes;
    if rest.starts_with(BOM) {
        // A BOM can stand at the start of the file or of a file concatenated onto another.
        damage.bom = true;
        rest = &rest[BOM.len()..];
    }
    let text: Cow<'_, str> = match std::str::from_utf8(rest) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => {
            damage.invalid_utf8 = true;
            String::from_utf8_lossy(rest)
        }
    };
    let mut records = Vec::new();
    if text.contains('\0') {
        damage.nul_bytes = true;
    }
    for piece in text.split('\0') {
        salvage_piece(piece, &mut records, &mut damage);
    }
    Salvage { records, damage }
}

fn salvage_piece(piece: &str, records: &mut Vec<String>, damage: &mut Damage) {
    let trimmed = piece.trim_matches(|c| [' ', '\t', '\r', '\n'].contains(&c));
    if trimmed.is_empty() {
        return;
    }
    // Whole piece is one value (the common case after removing a BOM or fixing UTF-8).
    if let Some(record) = parse_record(trimmed) {
        records.push(record);
        return;
    }
    if let Ok(value) = parse_value(trimmed) {
        if !value.is_object() {
            damage.not_object = true;
            damage.garbage_bytes += trimmed.len();
            return;
        }
    }
    let mut pos = 0;
    while pos < trimmed.len() {
        let consumed = take_records(&trimmed[pos..], records);
        pos += consumed;
        pos += leading_ws(&trimmed[pos..]);
        if pos >= trimmed.len() {
            break;
        }
        match next_entry_start(trimmed, pos + 1) {
            Some(next) => {
                damage.garbage_bytes += next - pos;
                pos = next;
            }
            None => {
                damage.garbage_bytes += trimmed.len() - pos;
                break;
            }
        }
    }
}

fn leading_ws(s: &str) -> usize {
    s.len()
        - s.trim_start_matches(|c| [' ', '\t', '\r', '\n'].contains(&c))
            .len()
}

/// Parses `text` as exactly one JSON object. (Lone surrogate escapes pass: `RawValue` does not
/// decode strings, and [`parse_value`] reads them as U+FFFD later, so such lines stay verbatim.)
fn parse_record(text: &str) -> Option<String> {
    RawObject::parse(text).is_ok().then(|| text.to_owned())
}

/// Parses objects back to back from the start of `text`; returns the bytes consumed by
/// complete objects.
fn take_records(text: &str, records: &mut Vec<String>) -> usize {
    let mut consumed = 0;
    loop {
        let rest = &text[consumed..];
        let ws = leading_ws(rest);
        let Some((len, record)) = first_object(&rest[ws..]) else {
            return consumed;
        };
        if !looks_like_entry(&parse_value(&record).unwrap_or(Value::Null)) {
            // Records cut out of a damaged line must each look like an entry; a bare object
            // (`{"a":1}xyz`) is not one, and anything else ends the run.
            return consumed;
        }
        records.push(record);
        consumed += ws + len;
    }
}

/// The first complete JSON object at the start of `text`: its length and text.
fn first_object(text: &str) -> Option<(usize, String)> {
    if !text.starts_with('{') {
        return None;
    }
    let mut stream =
        serde_json::Deserializer::from_str(text).into_iter::<&serde_json::value::RawValue>();
    match stream.next() {
        Some(Ok(raw)) => Some((stream.byte_offset(), raw.get().to_owned())),
        _ => None,
    }
}

/// Finds the next offset `>= from` where a complete entry-like object starts.
fn next_entry_start(text: &str, from: usize) -> Option<usize> {
    let finder = memchr::memmem::Finder::new(b"{\"type\":");
    let bytes = text.as_bytes();
    let mut at = from;
    while at < bytes.len() {
        let found = at + finder.find(&bytes[at..])?;
        if let Some((_, record)) = first_object(&text[found..]) {
            if parse_value(&record)
                .map(|v| looks_like_entry(&v))
                .unwrap_or(false)
            {
                return Some(found);
            }
        }
        at = found + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_ending_in_an_escape_is_not_read_past_its_end() {
        // Found by the session_bytes fuzz target: a backslash as the last byte of a string.
        let mut text = vec![b' '; 300];
        text.extend_from_slice(b"\"a\\");
        assert!(!nested_deeper_than(&text, 127));
        assert!(!nested_deeper_than(b"\"\\", 0));
    }

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(!nested_deeper_than(deep(127).as_bytes(), MAX_RECORD_DEPTH));
        assert!(nested_deeper_than(deep(128).as_bytes(), MAX_RECORD_DEPTH));
        // Brackets inside strings, after escaped quotes and backslashes, do not count.
        let quoted = format!(r#"{{"a":"\\","b":"\"{}","c":[]}}"#, "[".repeat(300));
        assert!(!nested_deeper_than(quoted.as_bytes(), MAX_RECORD_DEPTH));
        // Siblings do not add up.
        let wide = format!("[{}]", vec![deep(100); 5].join(","));
        assert!(!nested_deeper_than(wide.as_bytes(), MAX_RECORD_DEPTH));
        // Agrees with the reader: serde_json parses 127 levels and refuses 128.
        assert!(serde_json::from_str::<Value>(&deep(127)).is_ok());
        assert!(serde_json::from_str::<Value>(&deep(128)).is_err());
    }

    const A: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#;
    const B: &str = r#"{"type":"label","id":"b2","parentId":"a1","timestamp":"2026-01-01T00:00:01.000Z","targetId":"a1","label":"x"}"#;

    #[test]
    fn splits_lines_with_and_without_final_newline() {
        let lines: Vec<_> = split_lines(b"a\r\nb\n\nc").collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].bytes, b"a\r");
        assert_eq!(lines[2].bytes, b"");
        assert_eq!(lines[3].bytes, b"c");
        assert!(!lines[3].terminated);
        assert_eq!(lines[3].offset, 6);
        assert_eq!(split_lines(b"x\n").count(), 1);
    }

    #[test]
    fn clean_record_accepts_crlf_and_rejects_bom() {
        assert_eq!(clean_record(format!("{A}\r").as_bytes()), Some(A));
        assert!(clean_record(format!("\u{FEFF}{A}").as_bytes()).is_none());
    }

    #[test]
    fn torn_prefix_then_record_keeps_the_record() {
        let torn = &A[..70];
        let line = format!("{torn}{B}");
        let s = salvage_line(line.as_bytes());
        assert_eq!(s.records, vec![B.to_owned()]);
        assert_eq!(s.damage.garbage_bytes, 70);
    }

    #[test]
    fn torn_record_with_content_blocks_salvages_nothing() {
        let torn = &A[..A.len() - 10];
        let s = salvage_line(torn.as_bytes());
        assert!(s.records.is_empty(), "{:?}", s.records);
        assert_eq!(s.damage.garbage_bytes, torn.len());
    }

    #[test]
    fn glued_records_are_all_kept() {
        let line = format!("{A}{B}");
        let s = salvage_line(line.as_bytes());
        assert_eq!(s.records, vec![A.to_owned(), B.to_owned()]);
        assert_eq!(s.damage.garbage_bytes, 0);
    }

    #[test]
    fn record_then_torn_record() {
        let line = format!("{A}{}", &B[..30]);
        let s = salvage_line(line.as_bytes());
        assert_eq!(s.records, vec![A.to_owned()]);
        assert_eq!(s.damage.garbage_bytes, 30);
    }

    #[test]
    fn nul_runs_split_records() {
        let line = format!("\0\0\0{A}\0\0{B}\0");
        let s = salvage_line(line.as_bytes());
        assert_eq!(s.records, vec![A.to_owned(), B.to_owned()]);
        assert!(s.damage.nul_bytes);
    }

    #[test]
    fn bom_and_invalid_utf8() {
        let mut line = b"\xEF\xBB\xBF".to_vec();
        line.extend_from_slice(br#"{"type":"session","id":"x","t":"a"#);
        line.push(0xFF);
        line.extend_from_slice(br#""}"#);
        let s = salvage_line(&line);
        assert_eq!(
            s.records,
            vec!["{\"type\":\"session\",\"id\":\"x\",\"t\":\"a\u{FFFD}\"}".to_owned()]
        );
        assert!(s.damage.bom && s.damage.invalid_utf8);
    }

    #[test]
    fn lone_surrogate_lines_are_clean_and_kept_verbatim() {
        let line = br#"{"type":"x","t":"\ud800"}"#;
        assert!(clean_record(line).is_some());
        let mut with_bom = BOM.to_vec();
        with_bom.extend_from_slice(line);
        assert_eq!(
            salvage_line(&with_bom).records,
            vec![r#"{"type":"x","t":"\ud800"}"#.to_owned()]
        );
    }

    #[test]
    fn non_object_json_is_reported() {
        let s = salvage_line(b"[1,2]");
        assert!(s.records.is_empty());
        assert!(s.damage.not_object);
    }

    #[test]
    fn a_non_entry_object_in_a_damaged_line_is_not_a_record() {
        let s = salvage_line(br#"{"a":1}xyz"#);
        assert!(s.records.is_empty());
        assert_eq!(s.damage.garbage_bytes, 10);
    }

    #[test]
    fn pure_garbage() {
        let s = salvage_line(b"not json at all");
        assert!(s.records.is_empty());
        assert_eq!(s.damage.garbage_bytes, 15);
    }
}
