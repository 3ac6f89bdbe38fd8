//! Heartbeat hygiene of a transcript (mirrors OpenClaw 2026.3.13 `src/auto-reply/heartbeat.ts`):
//! the `HEARTBEAT_OK` acknowledgement token and filtering acknowledged heartbeat exchanges out
//! of a transcript. Removing such an exchange from the session file is the session stage's
//! `prune_heartbeat_transcript`.

use serde_json::value::RawValue;

use crate::base::utf16_len;
use crate::base::{is_js_whitespace, js_trim, raw_as_str, RawObject};
use crate::transcript::MessageView;
use crate::transcript::{Message, Transcript};

/// The acknowledgement token (`src/auto-reply/tokens.ts`, `HEARTBEAT_TOKEN`).
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
/// The user text later OpenClaw versions store in the transcript for a heartbeat poll (not in
/// 2026.3.13).
pub const HEARTBEAT_TRANSCRIPT_PROMPT: &str = "[OpenClaw heartbeat poll]";

// ---- stripHeartbeatToken (heartbeat.ts) ----------------------------------------------------

/// `mode` of `stripHeartbeatToken`: a heartbeat reply may carry up to `maxAckChars` of text
/// around the token and still be an acknowledgement; a message only when nothing is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StripMode {
    Heartbeat,
    /// Upstream's default.
    #[default]
    Message,
}

crate::base::python_class! {
    (name = "StripResult", module = "clawctx._core.hygiene", get_all)
    /// `stripHeartbeatToken`'s `{shouldSkip, text, didStrip}`. Also a 3-sequence: it unpacks as
    /// `should_skip, text, did_strip = result` and equals the tuple of its fields.
    // Its Python methods are in `heartbeat_py.rs`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct StripResult {
        /// Deliver nothing: the reply was blank, only the token, or (heartbeat mode) the token with
        /// at most `max_ack_chars` of other text.
        pub should_skip: bool,
        /// What remains to deliver (`""` when skipped).
        pub text: String,
        /// The token was found at an edge and removed.
        pub did_strip: bool,
    }
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

/// `stripHeartbeatToken(raw, {mode, maxAckChars})` (heartbeat.ts). `max_ack_chars` is the
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

// ---- filterHeartbeatPairs (later OpenClaw heartbeat-filter.ts, not in 2026.3.13) -----------

/// Which user messages are heartbeat prompts and which assistant replies acknowledge them.
#[derive(Debug, Clone, PartialEq)]
pub struct HeartbeatMatcher {
    /// The configured prompt: a user text that starts with it (both trimmed) is a heartbeat.
    /// `None` or blank: only the task-prompt and transcript-prompt rules apply.
    pub heartbeat_prompt: Option<String>,
    /// A user text equal to [`HEARTBEAT_TRANSCRIPT_PROMPT`] is a heartbeat (later OpenClaw).
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

/// `filterHeartbeatPairs` (later OpenClaw `src/auto-reply/heartbeat-filter.ts`, not in
/// 2026.3.13): removes every adjacent (heartbeat user prompt,
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
            && messages[i].request_facts().is_role("user")
            && messages[i + 1].request_facts().is_role("assistant")
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

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
}
