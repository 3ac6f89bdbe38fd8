//! Heartbeat hygiene (hot-path §7.13 and §2.7): the `HEARTBEAT_OK` acknowledgement token,
//! filtering acknowledged heartbeat exchanges out of a transcript, and removing an acknowledged
//! heartbeat exchange from the session file after the run.
//!
//! Upstream truncates the file back to the byte size it had before the run, which also cuts
//! whatever another writer appended meanwhile. [`prune_heartbeat_transcript`] removes only the
//! lines of the heartbeat exchange ([`ExchangeRule`] says which those are), under the session's
//! exclusive lock: a plain truncation when the exchange is everything after the mark, an atomic
//! rewrite of the tail (every other line keeps its bytes) when other lines are interleaved, and
//! nothing at all when that would be unsafe (the file shrank, was replaced, changed before the
//! mark, or a kept line descends from a removed one).

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::json::{is_js_whitespace, js_trim, parse_value, raw_as_str, RawObject};
use crate::lines::{clean_record, split_lines};
use crate::message::MessageView;
use crate::persist::{replace_atomically, LockedFile, WriteOptions};
use crate::tokens::utf16_len;
use crate::transcript::{Message, Transcript};

/// The acknowledgement token (§7.13 rule 44).
pub const HEARTBEAT_TOKEN: &str = "HEARTBEAT_OK";
/// How much text may accompany the token in an acknowledgement (UTF-16 units).
pub const DEFAULT_HEARTBEAT_ACK_MAX_CHARS: u64 = 300;
/// The default heartbeat prompt (the user message of a heartbeat run).
pub const DEFAULT_HEARTBEAT_PROMPT: &str = "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK.";
/// The first line of a heartbeat prompt built from periodic tasks.
pub const HEARTBEAT_TASK_PROMPT_PREFIX: &str =
    "Run the following periodic tasks (only those due based on their intervals):";
/// The closing instruction of a task heartbeat prompt.
pub const HEARTBEAT_TASK_PROMPT_ACK: &str = "After completing all due tasks, reply HEARTBEAT_OK.";
/// [L] The user text later versions store in the transcript for a heartbeat poll.
pub const HEARTBEAT_TRANSCRIPT_PROMPT: &str = "[OpenClaw heartbeat poll]";

/// How many bytes before the mark are compared to detect a file changed in place.
const MARK_FINGERPRINT_BYTES: u64 = 4096;

// ---- stripHeartbeatToken (§7.13 rule 45) ---------------------------------------------------

/// `mode` of `stripHeartbeatToken`: a heartbeat reply may carry up to `maxAckChars` of text
/// around the token and still be an acknowledgement; a message only when nothing is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StripMode {
    Heartbeat,
    /// Upstream's default.
    #[default]
    Message,
}

/// `{shouldSkip, text, didStrip}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripResult {
    /// The reply is an acknowledgement (or empty): deliver nothing.
    pub should_skip: bool,
    /// What remains to deliver (empty when skipped).
    pub text: String,
    /// The token was found at an edge and removed.
    pub did_strip: bool,
}

impl StripResult {
    fn skip(did_strip: bool) -> StripResult {
        StripResult {
            should_skip: true,
            text: String::new(),
            did_strip,
        }
    }
}

/// The effective `maxAckChars`: a finite number clamped to ≥ 0; anything else (absent, NaN,
/// infinite) is [`DEFAULT_HEARTBEAT_ACK_MAX_CHARS`].
pub fn resolve_ack_max_chars(value: Option<f64>) -> f64 {
    match value {
        Some(v) if v.is_finite() => v.max(0.0),
        _ => DEFAULT_HEARTBEAT_ACK_MAX_CHARS as f64,
    }
}

/// JavaScript's `Number(string)`: trimmed; empty is 0; decimal literals (with exponent),
/// `0x`/`0o`/`0b` integers and `±Infinity`; anything else NaN.
pub fn js_number(s: &str) -> f64 {
    let s = js_trim(s);
    if s.is_empty() {
        return 0.0;
    }
    match s {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    let bytes = s.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' {
        let radix = match bytes[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let mut value = 0.0f64;
            for c in s[2..].chars() {
                match c.to_digit(radix) {
                    Some(d) => value = value * f64::from(radix) + f64::from(d),
                    None => return f64::NAN,
                }
            }
            return value;
        }
    }
    if is_decimal_literal(bytes) {
        s.parse().unwrap_or(f64::NAN)
    } else {
        f64::NAN
    }
}

/// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`
fn is_decimal_literal(b: &[u8]) -> bool {
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

fn trim_start_js(s: &str) -> &str {
    s.trim_start_matches(is_js_whitespace)
}

fn trim_end_js(s: &str) -> &str {
    s.trim_end_matches(is_js_whitespace)
}

/// `s.replace(/\s+/g, " ").trim()`.
fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for part in s.split(is_js_whitespace).filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

/// The lightweight markup normalization: every `<…>` tag becomes a space, every `&nbsp;` (any
/// case) a space, then leading and trailing runs of `*`, `` ` ``, `~`, `_` are removed.
fn strip_markup(text: &str) -> String {
    // /<[^>]*>/g: a tag runs from "<" to the next ">"; without one, nothing more matches.
    let mut untagged = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        untagged.push_str(&rest[..open]);
        untagged.push(' ');
        rest = &rest[open + close + 1..];
    }
    untagged.push_str(rest);
    // /&nbsp;/gi (ASCII, so byte matching never splits a character).
    let mut spaced = String::with_capacity(untagged.len());
    let bytes = untagged.as_bytes();
    let mut copied = 0;
    let mut i = 0;
    while i + 6 <= bytes.len() {
        if bytes[i..i + 6].eq_ignore_ascii_case(b"&nbsp;") {
            spaced.push_str(&untagged[copied..i]);
            spaced.push(' ');
            i += 6;
            copied = i;
        } else {
            i += 1;
        }
    }
    spaced.push_str(&untagged[copied..]);
    let wrapper = |c: char| matches!(c, '*' | '`' | '~' | '_');
    spaced
        .trim_start_matches(wrapper)
        .trim_end_matches(wrapper)
        .to_owned()
}

/// Whether `text` ends with the token followed by at most 4 non-word UTF-16 units
/// (`/HEARTBEAT_OK[^\w]{0,4}$/`); returns the token's byte offset. The match can only be the
/// last occurrence: an earlier one is followed by the token's own word characters.
fn token_at_end(text: &str) -> Option<usize> {
    let idx = text.rfind(HEARTBEAT_TOKEN)?;
    let after = &text[idx + HEARTBEAT_TOKEN.len()..];
    let non_word = !after
        .bytes()
        .any(|b| b.is_ascii_alphanumeric() || b == b'_');
    (non_word && utf16_len(after) <= 4).then_some(idx)
}

/// `stripTokenAtEdges`: removes the token from the start (with the whitespace after it) and
/// from the end (with up to 4 trailing non-word characters when nothing precedes it; otherwise
/// the text after the token stays, so `"done HEARTBEAT_OK."` becomes `"done."`) until neither
/// applies, then collapses whitespace. A token in the middle stays.
fn strip_token_at_edges(raw: &str) -> (String, bool) {
    let mut text = js_trim(raw).to_owned();
    if text.is_empty() || !text.contains(HEARTBEAT_TOKEN) {
        return (text, false);
    }
    let mut did_strip = false;
    loop {
        let next = js_trim(&text);
        if let Some(after) = next.strip_prefix(HEARTBEAT_TOKEN) {
            text = trim_start_js(after).to_owned();
            did_strip = true;
            continue;
        }
        let Some(idx) = token_at_end(next) else {
            break;
        };
        let before = trim_end_js(&next[..idx]);
        text = if before.is_empty() {
            String::new()
        } else {
            let after = trim_start_js(&next[idx + HEARTBEAT_TOKEN.len()..]);
            trim_end_js(&format!("{before}{after}")).to_owned()
        };
        did_strip = true;
    }
    (collapse_whitespace(&text), did_strip)
}

/// `stripHeartbeatToken(raw, {mode, maxAckChars})` (§7.13 rule 45). `max_ack_chars` is the
/// resolved limit ([`resolve_ack_max_chars`]), compared with the UTF-16 length of what remains.
pub fn strip_heartbeat_token(raw: &str, mode: StripMode, max_ack_chars: f64) -> StripResult {
    let trimmed = js_trim(raw);
    if trimmed.is_empty() {
        return StripResult::skip(false);
    }
    let normalized = strip_markup(trimmed);
    if !trimmed.contains(HEARTBEAT_TOKEN) && !normalized.contains(HEARTBEAT_TOKEN) {
        return StripResult {
            should_skip: false,
            text: trimmed.to_owned(),
            did_strip: false,
        };
    }
    let original = strip_token_at_edges(trimmed);
    // The raw text wins when stripping it left something; otherwise the normalized text.
    let (text, did_strip) = if original.1 && !original.0.is_empty() {
        original
    } else {
        strip_token_at_edges(&normalized)
    };
    if !did_strip {
        return StripResult {
            should_skip: false,
            text: trimmed.to_owned(),
            did_strip: false,
        };
    }
    if text.is_empty() {
        return StripResult::skip(true);
    }
    let rest = js_trim(&text);
    if mode == StripMode::Heartbeat && (utf16_len(rest) as f64) <= max_ack_chars {
        return StripResult::skip(true);
    }
    StripResult {
        should_skip: false,
        text: rest.to_owned(),
        did_strip: true,
    }
}

// ---- filterHeartbeatPairs (§7.13 rule 46) --------------------------------------------------

/// Which user messages are heartbeat prompts and which assistant replies acknowledge them.
#[derive(Debug, Clone, PartialEq)]
pub struct HeartbeatMatcher {
    /// The configured prompt: a user text that starts with it (both trimmed) is a heartbeat.
    /// `None` or blank: only the task-prompt and transcript-prompt rules apply.
    pub heartbeat_prompt: Option<String>,
    /// [L] A user text equal to [`HEARTBEAT_TRANSCRIPT_PROMPT`] is a heartbeat.
    pub transcript_prompt: bool,
    /// The resolved `maxAckChars` of the acknowledgement test.
    pub ack_max_chars: f64,
}

impl Default for HeartbeatMatcher {
    fn default() -> Self {
        HeartbeatMatcher {
            heartbeat_prompt: Some(DEFAULT_HEARTBEAT_PROMPT.to_owned()),
            transcript_prompt: true,
            ack_max_chars: DEFAULT_HEARTBEAT_ACK_MAX_CHARS as f64,
        }
    }
}

/// `resolveMessageText(content)`: a string content is the text; an array gives its text blocks'
/// `text` joined, and whether it held anything else (a non-object, an object without `type`, a
/// block of another type or with a non-string `text`); absent or `null` content is empty text;
/// any other content is empty text plus "non-text".
fn resolve_message_text(content: Option<&RawValue>) -> (String, bool) {
    let Some(content) = content else {
        return (String::new(), false);
    };
    let json = content.get();
    if json.starts_with('"') {
        return (raw_as_str(content).unwrap_or_default().into_owned(), false);
    }
    if json == "null" {
        return (String::new(), false);
    }
    let Ok(blocks) = serde_json::from_str::<Vec<&RawValue>>(json) else {
        return (String::new(), true);
    };
    let mut text = String::new();
    let mut non_text = false;
    for block in blocks {
        let Ok(obj) = RawObject::parse(block.get()) else {
            non_text = true;
            continue;
        };
        let is_text = obj.get("type").and_then(raw_as_str).as_deref() == Some("text");
        match obj.get_str("text").filter(|_| is_text) {
            Some(t) => text.push_str(&t),
            None => non_text = true,
        }
    }
    (text, non_text)
}

impl HeartbeatMatcher {
    /// `isHeartbeatUserMessage`: role `user` and a trimmed text that equals the transcript
    /// prompt, starts with the configured prompt, or starts with the task prefix and contains
    /// the task acknowledgement.
    pub fn is_heartbeat_user(&self, message: &RawObject<'_>) -> bool {
        if message.get_str("role").as_deref() != Some("user") {
            return false;
        }
        let (text, _) = resolve_message_text(message.get("content"));
        let trimmed = js_trim(&text);
        if trimmed.is_empty() {
            return false;
        }
        if self.transcript_prompt && trimmed == HEARTBEAT_TRANSCRIPT_PROMPT {
            return true;
        }
        let prompt = self.heartbeat_prompt.as_deref().map(js_trim).unwrap_or("");
        if !prompt.is_empty() && trimmed.starts_with(prompt) {
            return true;
        }
        trimmed.starts_with(HEARTBEAT_TASK_PROMPT_PREFIX)
            && trimmed.contains(HEARTBEAT_TASK_PROMPT_ACK)
    }

    /// `isHeartbeatOkResponse`: role `assistant`, nothing but text blocks, and the text strips
    /// to a skip in heartbeat mode. (An assistant without content, or with `[]`, strips to a
    /// skip too, as upstream.)
    pub fn is_heartbeat_ack(&self, message: &RawObject<'_>) -> bool {
        if message.get_str("role").as_deref() != Some("assistant") {
            return false;
        }
        let (text, non_text) = resolve_message_text(message.get("content"));
        !non_text
            && strip_heartbeat_token(&text, StripMode::Heartbeat, self.ack_max_chars).should_skip
    }
}

fn message_object(message: &Message) -> Option<RawObject<'_>> {
    MessageView::parse(message.text()).map(|view| view.raw)
}

/// `filterHeartbeatPairs` (§7.13 rule 46, [L]): removes every adjacent (heartbeat user prompt,
/// acknowledging assistant) pair, scanning left to right. Returns the input (a cheap clone)
/// when nothing is removed.
pub fn filter_heartbeat_pairs(input: &Transcript, matcher: &HeartbeatMatcher) -> Transcript {
    let messages = input.messages();
    if messages.len() < 2 {
        return input.clone();
    }
    let mut kept: Vec<Message> = Vec::with_capacity(messages.len());
    let mut removed = false;
    let mut i = 0;
    while i < messages.len() {
        let pair = i + 1 < messages.len()
            && messages[i].facts().is_role("user")
            && messages[i + 1].facts().is_role("assistant")
            && message_object(&messages[i]).is_some_and(|m| matcher.is_heartbeat_user(&m))
            && message_object(&messages[i + 1]).is_some_and(|m| matcher.is_heartbeat_ack(&m));
        if pair {
            removed = true;
            i += 2;
            continue;
        }
        kept.push(messages[i].clone());
        i += 1;
    }
    if removed {
        Transcript::from_messages(kept)
    } else {
        input.clone()
    }
}

// ---- on-disk pruning (§2.7) ----------------------------------------------------------------

/// The state of a session file recorded before a heartbeat run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptMark {
    pub path: PathBuf,
    /// The file's byte size before the run.
    pub size: u64,
    /// The size is at a line boundary (0, or the byte before it is `"\n"`). Nothing is pruned
    /// from a mark inside a line.
    pub at_line_boundary: bool,
    /// `(device, inode)` of the file, to notice a replacement.
    file_id: Option<(u64, u64)>,
    /// The last bytes before the mark, to notice a file changed in place.
    fingerprint: Vec<u8>,
}

#[cfg(unix)]
fn file_id(file: &File) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_file: &File) -> Option<(u64, u64)> {
    None
}

fn read_range(file: &File, path: &Path, start: u64, len: u64) -> Result<Vec<u8>> {
    let mut reader = file;
    reader
        .seek(io::SeekFrom::Start(start))
        .map_err(|e| Error::io(path, e))?;
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    reader
        .take(len)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io(path, e))?;
    Ok(buf)
}

impl TranscriptMark {
    /// Records the size of `path` under the session's exclusive lock, so no locked writer is
    /// in the middle of a line. Fails with [`Error::NotFound`] for a missing file and
    /// [`Error::Lock`] when the lock cannot be taken in time.
    pub fn capture(path: &Path, options: WriteOptions) -> Result<TranscriptMark> {
        let lock = LockedFile::open(path, false, options.lock_timeout)?;
        let file = lock.try_clone_file().map_err(|e| Error::io(path, e))?;
        let size = lock.len()?;
        let start = size.saturating_sub(MARK_FINGERPRINT_BYTES);
        let fingerprint = read_range(&file, path, start, size - start)?;
        Ok(TranscriptMark {
            path: path.to_path_buf(),
            size,
            at_line_boundary: size == 0 || fingerprint.last() == Some(&b'\n'),
            file_id: file_id(&file),
            fingerprint,
        })
    }
}

/// Which lines after the mark belong to the heartbeat exchange.
#[derive(Debug, Clone)]
pub enum ExchangeRule {
    /// The entries appended through the caller's session handle during the run, as they were
    /// written (each with its `"id"`). A line belongs to the exchange when it is a record equal
    /// to one of them. All of them must be found after the mark, or nothing is removed.
    Entries(Vec<Value>),
    /// Without a session handle, by content: the first `message` entry after the mark whose
    /// message is a heartbeat prompt ([`HeartbeatMatcher::is_heartbeat_user`]), followed by its
    /// descendants through `parentId` (one child each, no user message among them) up to and
    /// including the first acknowledging assistant message. Entries of other types in that
    /// chain (a model change, a cache-ttl custom entry) belong to it as well.
    Content(HeartbeatMatcher),
}

/// What [`prune_heartbeat_transcript`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneAction {
    /// Nothing was changed (see the reason).
    Unchanged,
    /// The file was truncated back to the mark: the exchange was all that followed it.
    Truncated,
    /// Other writers' lines were interleaved: the file was replaced atomically by the prefix
    /// up to the mark plus every kept line with its original bytes.
    Rewritten,
}

impl PruneAction {
    pub fn as_str(self) -> &'static str {
        match self {
            PruneAction::Unchanged => "unchanged",
            PruneAction::Truncated => "truncated",
            PruneAction::Rewritten => "rewritten",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneReport {
    pub action: PruneAction,
    /// Lines of the heartbeat exchange removed.
    pub removed_lines: usize,
    pub removed_bytes: u64,
    /// The `id`s of the removed entries, in file order.
    pub removed_ids: Vec<String>,
    /// Lines after the mark that were kept (other writers' lines).
    pub kept_lines: usize,
    /// Why nothing was changed (`None` when something was removed).
    pub reason: Option<String>,
}

impl PruneReport {
    fn unchanged(reason: impl Into<String>) -> PruneReport {
        PruneReport {
            action: PruneAction::Unchanged,
            removed_lines: 0,
            removed_bytes: 0,
            removed_ids: Vec::new(),
            kept_lines: 0,
            reason: Some(reason.into()),
        }
    }
}

/// Another writer changed the file while it was being rewritten (the rewrite is abandoned).
#[derive(Debug)]
struct Raced(&'static str);

impl std::fmt::Display for Raced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Raced {}

/// One line after the mark.
struct TailLine<'a> {
    /// The line with its `"\n"` (absent only for an unterminated last line).
    bytes: &'a [u8],
    /// The record on the line, if it is one clean JSON object.
    record: Option<&'a str>,
}

impl<'a> TailLine<'a> {
    fn object(&self) -> Option<RawObject<'a>> {
        self.record.and_then(|r| RawObject::parse(r).ok())
    }

    fn str_field(&self, key: &str) -> Option<String> {
        self.object()?.get_str(key).map(|s| s.into_owned())
    }
}

fn tail_lines(tail: &[u8]) -> Vec<TailLine<'_>> {
    split_lines(tail)
        .map(|line| {
            let end = line.offset + line.bytes.len() + usize::from(line.terminated);
            TailLine {
                bytes: &tail[line.offset..end],
                record: clean_record(line.bytes),
            }
        })
        .collect()
}

/// The exchange's line indices by [`ExchangeRule::Entries`], or why there is none.
fn select_entries(lines: &[TailLine<'_>], expected: &[Value]) -> Result<Vec<usize>, String> {
    if expected.is_empty() {
        return Err("nothing was appended through the session during the run".into());
    }
    let mut wanted: HashMap<&str, &Value> = HashMap::new();
    for value in expected {
        let Some(id) = value.get("id").and_then(Value::as_str) else {
            return Err("an entry of the run has no string \"id\"".into());
        };
        wanted.insert(id, value);
    }
    let mut selected = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(id) = line.str_field("id") else {
            continue;
        };
        let Some(value) = wanted.get(id.as_str()) else {
            continue;
        };
        if line.record.and_then(|r| parse_value(r).ok()).as_ref() == Some(*value) {
            wanted.remove(id.as_str());
            selected.push(i);
        }
    }
    if !wanted.is_empty() {
        return Err(format!(
            "{} of the run's {} entries were not found after the mark",
            wanted.len(),
            expected.len()
        ));
    }
    Ok(selected)
}

/// The exchange's line indices by [`ExchangeRule::Content`], or why there is none.
fn select_content(
    lines: &[TailLine<'_>],
    matcher: &HeartbeatMatcher,
) -> Result<Vec<usize>, String> {
    let ids: Vec<Option<String>> = lines.iter().map(|l| l.str_field("id")).collect();
    let mut children: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(parent) = line.str_field("parentId") {
            children.entry(parent).or_default().push(i);
        }
    }
    // The message of a `message` entry, as a raw object.
    let message = |i: usize| -> Option<RawObject<'_>> {
        let obj = lines[i].object()?;
        if obj.get_str("type").as_deref() != Some("message") {
            return None;
        }
        RawObject::parse(obj.get("message")?.get()).ok()
    };
    for start in 0..lines.len() {
        let is_prompt = message(start).is_some_and(|m| matcher.is_heartbeat_user(&m));
        if !is_prompt {
            continue;
        }
        let mut chain = vec![start];
        let mut current = start;
        let complete = loop {
            let Some(id) = &ids[current] else {
                break false;
            };
            let kids = children.get(id).map(Vec::as_slice).unwrap_or_default();
            let [child] = kids else {
                break false;
            };
            if *child <= current {
                break false;
            }
            chain.push(*child);
            match message(*child) {
                Some(m) if m.get_str("role").as_deref() == Some("user") => break false,
                Some(m) if matcher.is_heartbeat_ack(&m) => break true,
                _ => current = *child,
            }
        };
        if complete {
            return Ok(chain);
        }
    }
    Err("no complete heartbeat exchange (prompt … acknowledgement) after the mark".into())
}

/// Removes the heartbeat exchange recorded after `mark` from the session file, under the
/// session's exclusive lock (see the module docs). Never touches the bytes before the mark,
/// never removes a line [`ExchangeRule`] does not select, and changes nothing when
/// - the file no longer exists, was replaced, shrank below the mark, or its bytes just before
///   the mark changed;
/// - the mark is not at a line boundary;
/// - the exchange is not found (for `Entries`: not all of it);
/// - a kept line names a removed entry as its `parentId` (removing would orphan it).
///
/// Fails with [`Error::Lock`] when the lock cannot be taken in time.
pub fn prune_heartbeat_transcript(
    mark: &TranscriptMark,
    rule: &ExchangeRule,
    options: WriteOptions,
    now_ms: i64,
) -> Result<PruneReport> {
    let path = &mark.path;
    let lock = match LockedFile::open(path, false, options.lock_timeout) {
        Ok(lock) => lock,
        Err(Error::NotFound { .. }) => {
            return Ok(PruneReport::unchanged("the file no longer exists"))
        }
        Err(e) => return Err(e),
    };
    let file = lock.try_clone_file().map_err(|e| Error::io(path, e))?;
    if mark.file_id.is_some() && file_id(&file) != mark.file_id {
        return Ok(PruneReport::unchanged(
            "the file was replaced since the mark",
        ));
    }
    let len = lock.len()?;
    if len < mark.size {
        return Ok(PruneReport::unchanged("the file shrank below the mark"));
    }
    if !mark.at_line_boundary {
        return Ok(PruneReport::unchanged(
            "the mark is not at a line boundary (the file ended in an unterminated line)",
        ));
    }
    let start = mark.size - mark.fingerprint.len() as u64;
    if read_range(&file, path, start, mark.fingerprint.len() as u64)? != mark.fingerprint {
        return Ok(PruneReport::unchanged(
            "the bytes before the mark changed since it was recorded",
        ));
    }
    if len == mark.size {
        return Ok(PruneReport::unchanged("nothing was written after the mark"));
    }
    let tail = read_range(&file, path, mark.size, len - mark.size)?;
    let lines = tail_lines(&tail);
    let selected = match rule {
        ExchangeRule::Entries(expected) => select_entries(&lines, expected),
        ExchangeRule::Content(matcher) => select_content(&lines, matcher),
    };
    let selected: HashSet<usize> = match selected {
        Ok(s) => s.into_iter().collect(),
        Err(reason) => return Ok(PruneReport::unchanged(reason)),
    };
    let removed_ids: Vec<String> = (0..lines.len())
        .filter(|i| selected.contains(i))
        .filter_map(|i| lines[i].str_field("id"))
        .collect();
    let removed: HashSet<&str> = removed_ids.iter().map(String::as_str).collect();
    let orphaned = (0..lines.len()).filter(|i| !selected.contains(i)).any(|i| {
        lines[i]
            .str_field("parentId")
            .is_some_and(|p| removed.contains(p.as_str()))
    });
    if orphaned {
        return Ok(PruneReport::unchanged(
            "a line written by another writer after the mark descends from the heartbeat exchange",
        ));
    }
    let removed_bytes: u64 = selected.iter().map(|&i| lines[i].bytes.len() as u64).sum();
    let kept_lines = lines.len() - selected.len();
    let action = if kept_lines == 0 {
        // Re-checked right before cutting: a writer that ignores the lock may have appended.
        if lock.len()? != len {
            return Ok(PruneReport::unchanged(
                "the file grew while it was being pruned",
            ));
        }
        file.set_len(mark.size).map_err(|e| Error::io(path, e))?;
        if options.fsync {
            file.sync_data().map_err(|e| Error::io(path, e))?;
        }
        PruneAction::Truncated
    } else {
        let replaced = replace_atomically(path, "heartbeat", now_ms, |w| {
            let mut prefix = &file;
            prefix.seek(io::SeekFrom::Start(0))?;
            let copied = io::copy(&mut prefix.take(mark.size), w)?;
            if copied != mark.size {
                return Err(io::Error::other(Raced(
                    "the file shrank while it was copied",
                )));
            }
            for (i, line) in lines.iter().enumerate() {
                if !selected.contains(&i) {
                    w.write_all(line.bytes)?;
                }
            }
            w.flush()?;
            if lock.len().ok() != Some(len) {
                return Err(io::Error::other(Raced(
                    "the file grew while it was being pruned",
                )));
            }
            Ok(())
        });
        match replaced {
            Ok(()) => PruneAction::Rewritten,
            Err(e) if e.get_ref().is_some_and(|r| r.is::<Raced>()) => {
                return Ok(PruneReport::unchanged(e.to_string()))
            }
            Err(e) => return Err(Error::io(path, e)),
        }
    };
    drop(lock);
    Ok(PruneReport {
        action,
        removed_lines: selected.len(),
        removed_bytes,
        removed_ids,
        kept_lines,
        reason: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;
    use std::time::Duration;

    fn strip(text: &str, mode: StripMode) -> StripResult {
        strip_heartbeat_token(text, mode, 300.0)
    }

    fn result(should_skip: bool, text: &str, did_strip: bool) -> StripResult {
        StripResult {
            should_skip,
            text: text.to_owned(),
            did_strip,
        }
    }

    #[test]
    fn heartbeat_strip_rules() {
        use StripMode::{Heartbeat, Message};
        assert_eq!(strip("", Message), result(true, "", false));
        assert_eq!(strip(" \n\t", Heartbeat), result(true, "", false));
        assert_eq!(strip("hello", Heartbeat), result(false, "hello", false));
        assert_eq!(strip("HEARTBEAT_OK", Message), result(true, "", true));
        assert_eq!(
            strip("<b>HEARTBEAT_OK</b>", Message),
            result(true, "", true)
        );
        assert_eq!(
            strip("&NBSP;HEARTBEAT_OK&nbsp;", Message),
            result(true, "", true)
        );
        assert_eq!(strip("_HEARTBEAT_OK_", Message), result(true, "", true));
        // Quirk: stripping the raw text left "****", and a raw result that stripped and left
        // text wins over the normalized one.
        assert_eq!(
            strip("**HEARTBEAT_OK**", Message),
            result(false, "****", true)
        );
        assert_eq!(strip("**HEARTBEAT_OK**", Heartbeat), result(true, "", true));
        assert_eq!(
            strip("HEARTBEAT_OK HEARTBEAT_OK", Message),
            result(true, "", true)
        );
        // The token at the start goes first and leaves what follows it.
        assert_eq!(strip("HEARTBEAT_OK.", Message), result(false, ".", true));
        assert_eq!(
            strip("x HEARTBEAT_OK!!!!", Message),
            result(false, "x!!!!", true)
        );
        assert_eq!(
            strip("x HEARTBEAT_OK!!!!!", Heartbeat),
            result(false, "x HEARTBEAT_OK!!!!!", false)
        );
        assert_eq!(
            strip("I should not respond HEARTBEAT_OK.", Message),
            result(false, "I should not respond.", true)
        );
        assert_eq!(
            strip("a HEARTBEAT_OK b", Heartbeat),
            result(false, "a HEARTBEAT_OK b", false)
        );
        assert_eq!(
            strip("HEARTBEAT_OK  all\n\n good", Message),
            result(false, "all good", true)
        );
        assert_eq!(
            strip("HEARTBEAT_OK all good", Heartbeat),
            result(true, "", true)
        );
        // Two emoji are four UTF-16 units, three are six.
        assert_eq!(
            strip("x HEARTBEAT_OK😀😀", Message),
            result(false, "x😀😀", true)
        );
        assert_eq!(
            strip("x HEARTBEAT_OK😀😀😀", Message),
            result(false, "x HEARTBEAT_OK😀😀😀", false)
        );
    }

    #[test]
    fn ack_max_chars_boundary_counts_utf16() {
        let rest = "é".repeat(10);
        let text = format!("HEARTBEAT_OK {rest}");
        assert!(strip_heartbeat_token(&text, StripMode::Heartbeat, 10.0).should_skip);
        assert!(!strip_heartbeat_token(&text, StripMode::Heartbeat, 9.0).should_skip);
        let emoji = format!("HEARTBEAT_OK {}", "😀".repeat(5));
        assert!(strip_heartbeat_token(&emoji, StripMode::Heartbeat, 10.0).should_skip);
        assert!(!strip_heartbeat_token(&emoji, StripMode::Heartbeat, 9.0).should_skip);
        assert_eq!(resolve_ack_max_chars(None), 300.0);
        assert_eq!(resolve_ack_max_chars(Some(f64::NAN)), 300.0);
        assert_eq!(resolve_ack_max_chars(Some(-5.0)), 0.0);
    }

    #[test]
    fn js_number_parsing() {
        assert_eq!(js_number(" 12 "), 12.0);
        assert_eq!(js_number(""), 0.0);
        assert_eq!(js_number("0x10"), 16.0);
        assert_eq!(js_number("1e2"), 100.0);
        assert_eq!(js_number(".5"), 0.5);
        assert_eq!(js_number("5."), 5.0);
        assert_eq!(js_number("-Infinity"), f64::NEG_INFINITY);
        for bad in ["abc", "1_000", "inf", "NaN", "0x", "1e", "-0x10", "."] {
            assert!(js_number(bad).is_nan(), "{bad}");
        }
    }

    fn user(content: Value) -> Value {
        json!({"role": "user", "content": content, "timestamp": 1})
    }

    fn assistant(content: Value) -> Value {
        json!({"role": "assistant", "content": content, "timestamp": 2})
    }

    #[test]
    fn filter_removes_only_acknowledged_heartbeat_pairs() {
        let matcher = HeartbeatMatcher::default();
        let input = Transcript::from_values(&[
            user(json!("hi")),
            user(json!(DEFAULT_HEARTBEAT_PROMPT)),
            assistant(json!([{"type": "text", "text": "HEARTBEAT_OK"}])),
            user(json!([{"type": "text", "text": HEARTBEAT_TRANSCRIPT_PROMPT}])),
            assistant(
                json!([{"type": "text", "text": "HEARTBEAT_OK"}, {"type": "toolCall", "id": "c", "name": "read", "arguments": {}}]),
            ),
        ]);
        let out = filter_heartbeat_pairs(&input, &matcher);
        assert_eq!(out.len(), 3);
        assert_eq!(out.messages()[0], input.messages()[0]);
        assert_eq!(out.messages()[1], input.messages()[3]);
        let no_transcript = HeartbeatMatcher {
            transcript_prompt: false,
            ..HeartbeatMatcher::default()
        };
        let pair = Transcript::from_values(&[
            user(json!(HEARTBEAT_TRANSCRIPT_PROMPT)),
            assistant(json!("HEARTBEAT_OK")),
        ]);
        assert!(filter_heartbeat_pairs(&pair, &matcher).is_empty());
        assert_eq!(filter_heartbeat_pairs(&pair, &no_transcript), pair);
    }

    fn entry(id: &str, parent: Option<&str>, message: Value) -> Value {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z", "message": message})
    }

    fn line(v: &Value) -> String {
        format!("{}\n", crate::json::to_js_string(v))
    }

    fn options() -> WriteOptions {
        WriteOptions {
            fsync: false,
            lock_timeout: Duration::from_millis(200),
        }
    }

    #[test]
    fn heartbeat_prune_truncates_or_rewrites_keeping_foreign_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let prefix = format!(
            "{}{}",
            line(
                &json!({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"})
            ),
            line(&entry("a", None, user(json!("hi"))))
        );
        fs::write(&p, &prefix).unwrap();
        let mark = TranscriptMark::capture(&p, options()).unwrap();
        assert_eq!(mark.size, prefix.len() as u64);
        let prompt = entry("h1", Some("a"), user(json!(DEFAULT_HEARTBEAT_PROMPT)));
        let ack = entry(
            "h2",
            Some("h1"),
            assistant(json!([{"type": "text", "text": "HEARTBEAT_OK"}])),
        );
        let foreign = "{\"type\":\"custom\",\"id\":\"f1\",\"parentId\":\"a\"}\r\n";
        let content = ExchangeRule::Content(HeartbeatMatcher::default());

        fs::write(&p, format!("{prefix}{}{}", line(&prompt), line(&ack))).unwrap();
        let report = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap();
        assert_eq!(report.action, PruneAction::Truncated);
        assert_eq!(report.removed_ids, ["h1", "h2"]);
        assert_eq!(fs::read_to_string(&p).unwrap(), prefix);

        fs::write(
            &p,
            format!("{prefix}{}{foreign}{}", line(&prompt), line(&ack)),
        )
        .unwrap();
        let rule = ExchangeRule::Entries(vec![prompt.clone(), ack.clone()]);
        let report = prune_heartbeat_transcript(&mark, &rule, options(), 2).unwrap();
        assert_eq!(report.action, PruneAction::Rewritten, "{report:?}");
        assert_eq!(report.kept_lines, 1);
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            format!("{prefix}{foreign}")
        );
    }

    #[test]
    fn heartbeat_prune_refuses_unsafe_cases() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let prompt = entry("h1", None, user(json!(DEFAULT_HEARTBEAT_PROMPT)));
        let ack = entry("h2", Some("h1"), assistant(json!("HEARTBEAT_OK")));
        let child = entry("c", Some("h2"), user(json!("next")));
        let content = ExchangeRule::Content(HeartbeatMatcher::default());

        // Unterminated last line at the mark.
        fs::write(&p, "{\"type\":\"session\",\"id\":\"s\"}").unwrap();
        let mark = TranscriptMark::capture(&p, options()).unwrap();
        assert!(!mark.at_line_boundary);
        fs::write(
            &p,
            format!(
                "{{\"type\":\"session\",\"id\":\"s\"}}\n{}{}",
                line(&prompt),
                line(&ack)
            ),
        )
        .unwrap();
        let report = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap();
        assert_eq!(report.action, PruneAction::Unchanged);

        // A foreign entry that descends from the acknowledgement.
        fs::write(&p, "").unwrap();
        let mark = TranscriptMark::capture(&p, options()).unwrap();
        let body = format!("{}{}{}", line(&prompt), line(&ack), line(&child));
        fs::write(&p, &body).unwrap();
        let report = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap();
        assert_eq!(report.action, PruneAction::Unchanged);
        assert!(report.reason.unwrap().contains("descends"));
        assert_eq!(fs::read_to_string(&p).unwrap(), body);

        // No acknowledgement: nothing is an exchange.
        let body = format!(
            "{}{}",
            line(&prompt),
            line(&entry(
                "x",
                Some("h1"),
                assistant(json!("Alert: disk full"))
            ))
        );
        fs::write(&p, &body).unwrap();
        let report = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap();
        assert_eq!(report.action, PruneAction::Unchanged);
        assert_eq!(fs::read_to_string(&p).unwrap(), body);

        // Lock held elsewhere.
        let _held = LockedFile::open(&p, false, Duration::from_secs(1)).unwrap();
        let err = prune_heartbeat_transcript(&mark, &content, options(), 1).unwrap_err();
        assert!(matches!(err, Error::Lock { .. }), "{err}");
    }
}
