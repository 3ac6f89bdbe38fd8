//! Context pruning of old tool results (OpenClaw 2026.3.13's cache-ttl extension,
//! `src/agents/pi-extensions/context-pruning/`: settings.ts, tools.ts, pruner.ts): settings,
//! tool matching, the pruner's own char estimate, soft trim and hard clear.

use serde_json::{json, Map, Value};

use super::facts::MessageFacts;
use super::list::{Message, SoftTrim, Transcript};
use crate::base::utf16_len;
use crate::base::{is_truthy, js_trim, to_js_string, JsonText};

pub const CHARS_PER_TOKEN_ESTIMATE: u64 = 4;
/// Chars charged for tool-call arguments that cannot be serialized.
pub const UNSERIALIZABLE_ARGUMENT_CHARS: u64 = 128;
pub const DEFAULT_PLACEHOLDER: &str = "[Old tool result content cleared]";
/// What an image of a pruned tool result becomes (OpenClaw 2026.3.13
/// `src/agents/pi-extensions/context-pruning/pruner.ts`, `PRUNED_CONTEXT_IMAGE_MARKER`).
pub const PRUNED_IMAGE_MARKER: &str = "[image removed during context pruning]";

#[derive(Debug, Clone, PartialEq)]
pub struct HardClear {
    pub enabled: bool,
    pub placeholder: String,
}

/// `computeEffectiveSettings` output (settings.ts).
#[derive(Debug, Clone, PartialEq)]
pub struct PruningSettings {
    pub ttl_ms: u64,
    pub keep_last_assistants: u64,
    pub soft_trim_ratio: f64,
    pub hard_clear_ratio: f64,
    pub min_prunable_tool_chars: u64,
    /// `{allow?: [...], deny?: [...]}` as given.
    pub tools: Value,
    pub soft_trim: SoftTrim,
    pub hard_clear: HardClear,
}

impl Default for PruningSettings {
    fn default() -> Self {
        PruningSettings {
            ttl_ms: 5 * 60 * 1000,
            keep_last_assistants: 3,
            soft_trim_ratio: 0.3,
            hard_clear_ratio: 0.5,
            min_prunable_tool_chars: 50_000,
            tools: Value::Object(Map::new()),
            soft_trim: SoftTrim {
                max_chars: 4000,
                head_chars: 1500,
                tail_chars: 1500,
            },
            hard_clear: HardClear {
                enabled: true,
                placeholder: DEFAULT_PLACEHOLDER.to_owned(),
            },
        }
    }
}

fn finite(value: Option<&Value>) -> Option<f64> {
    value.and_then(Value::as_f64).filter(|f| f.is_finite())
}

fn count(value: Option<&Value>, default: u64) -> u64 {
    finite(value).map_or(default, |f| f.floor().max(0.0) as u64)
}

fn ratio(value: Option<&Value>, default: f64) -> f64 {
    finite(value).map_or(default, |f| f.clamp(0.0, 1.0))
}

/// One `<number><unit>?` token at the start of `text`: the number is `\d+(\.\d+)?` (ASCII
/// digits), the unit `ms`, `s`, `m`, `h` or `d` (`ms` before `m`). Returns the value, the unit
/// factor (if a unit was there) and the bytes consumed.
fn duration_token(text: &str) -> Option<(f64, Option<f64>, usize)> {
    let bytes = text.as_bytes();
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut end = digits(0);
    if end == 0 {
        return None;
    }
    if bytes.get(end) == Some(&b'.') {
        let fraction = digits(end + 1);
        if fraction > 0 {
            end += 1 + fraction;
        }
    }
    let value: f64 = text[..end].parse().ok()?;
    let rest = &text[end..];
    let unit = [
        ("ms", 1.0),
        ("s", 1000.0),
        ("m", 60_000.0),
        ("h", 3_600_000.0),
        ("d", 86_400_000.0),
    ]
    .into_iter()
    .find(|(name, _)| rest.starts_with(name));
    Some(match unit {
        Some((name, factor)) => (value, Some(factor), end + name.len()),
        None => (value, None, end),
    })
}

/// OpenClaw 2026.3.13 `src/cli/parse-duration.ts` (`parseDurationMs`) with the default unit
/// minutes, as `computeEffectiveSettings` calls it: the trimmed, lower-cased text is one
/// `<number><unit>?` token (a bare number is minutes) or gap-free unit-bearing tokens
/// (`1h30m`, `2m500ms`) that are added up; the result is rounded. Anything else is `None`.
pub fn parse_duration_ms(text: &str) -> Option<u64> {
    let text = js_trim(text).to_lowercase();
    if text.is_empty() {
        return None;
    }
    let mut total = 0.0;
    let mut pos = 0;
    while pos < text.len() {
        let (value, factor, used) = duration_token(&text[pos..])?;
        let factor = match factor {
            Some(factor) => factor,
            // Only a lone token may leave out its unit.
            None if pos == 0 && used == text.len() => 60_000.0,
            None => return None,
        };
        total += value * factor;
        pos += used;
    }
    let ms = total.round();
    ms.is_finite().then_some(ms as u64)
}

impl PruningSettings {
    /// `computeEffectiveSettings(raw)`: `None` unless `raw` is an object with
    /// `mode: "cache-ttl"`; otherwise the defaults with valid overrides applied.
    pub fn from_config(raw: &Value) -> Option<PruningSettings> {
        let obj = raw.as_object()?;
        if obj.get("mode").and_then(Value::as_str) != Some("cache-ttl") {
            return None;
        }
        let mut s = PruningSettings::default();
        if let Some(ttl) = obj
            .get("ttl")
            .and_then(Value::as_str)
            .and_then(parse_duration_ms)
        {
            s.ttl_ms = ttl;
        }
        s.keep_last_assistants = count(obj.get("keepLastAssistants"), s.keep_last_assistants);
        s.soft_trim_ratio = ratio(obj.get("softTrimRatio"), s.soft_trim_ratio);
        s.hard_clear_ratio = ratio(obj.get("hardClearRatio"), s.hard_clear_ratio);
        s.min_prunable_tool_chars =
            count(obj.get("minPrunableToolChars"), s.min_prunable_tool_chars);
        // Upstream takes `tools` when it is truthy (`if (cfg.tools)`): null keeps the default.
        if let Some(tools) = obj.get("tools").filter(|t| is_truthy(t)) {
            s.tools = tools.clone();
        }
        if let Some(soft) = obj.get("softTrim").and_then(Value::as_object) {
            s.soft_trim.max_chars = count(soft.get("maxChars"), s.soft_trim.max_chars);
            s.soft_trim.head_chars = count(soft.get("headChars"), s.soft_trim.head_chars);
            s.soft_trim.tail_chars = count(soft.get("tailChars"), s.soft_trim.tail_chars);
        }
        if let Some(hard) = obj.get("hardClear").and_then(Value::as_object) {
            if let Some(enabled) = hard.get("enabled").and_then(Value::as_bool) {
                s.hard_clear.enabled = enabled;
            }
            if let Some(placeholder) = hard
                .get("placeholder")
                .and_then(Value::as_str)
                .map(js_trim)
                .filter(|p| !p.is_empty())
            {
                s.hard_clear.placeholder = placeholder.to_owned();
            }
        }
        Some(s)
    }

    /// The effective settings in OpenClaw's camelCase shape.
    pub fn to_value(&self) -> Value {
        json!({
            "mode": "cache-ttl",
            "ttlMs": self.ttl_ms,
            "keepLastAssistants": self.keep_last_assistants,
            "softTrimRatio": self.soft_trim_ratio,
            "hardClearRatio": self.hard_clear_ratio,
            "minPrunableToolChars": self.min_prunable_tool_chars,
            "tools": self.tools,
            "softTrim": {
                "maxChars": self.soft_trim.max_chars,
                "headChars": self.soft_trim.head_chars,
                "tailChars": self.soft_trim.tail_chars,
            },
            "hardClear": {"enabled": self.hard_clear.enabled, "placeholder": self.hard_clear.placeholder},
        })
    }

    /// Reads the effective-settings shape back (the inverse of [`PruningSettings::to_value`]);
    /// missing or invalid fields keep their defaults.
    pub fn from_effective(value: &Value) -> PruningSettings {
        let d = PruningSettings::default();
        let soft = value.get("softTrim");
        let hard = value.get("hardClear");
        PruningSettings {
            ttl_ms: count(value.get("ttlMs"), d.ttl_ms),
            keep_last_assistants: count(value.get("keepLastAssistants"), d.keep_last_assistants),
            soft_trim_ratio: finite(value.get("softTrimRatio")).unwrap_or(d.soft_trim_ratio),
            hard_clear_ratio: finite(value.get("hardClearRatio")).unwrap_or(d.hard_clear_ratio),
            min_prunable_tool_chars: count(
                value.get("minPrunableToolChars"),
                d.min_prunable_tool_chars,
            ),
            tools: value.get("tools").cloned().unwrap_or(d.tools),
            soft_trim: SoftTrim {
                max_chars: count(soft.and_then(|s| s.get("maxChars")), d.soft_trim.max_chars),
                head_chars: count(
                    soft.and_then(|s| s.get("headChars")),
                    d.soft_trim.head_chars,
                ),
                tail_chars: count(
                    soft.and_then(|s| s.get("tailChars")),
                    d.soft_trim.tail_chars,
                ),
            },
            hard_clear: HardClear {
                enabled: hard
                    .and_then(|h| h.get("enabled"))
                    .and_then(Value::as_bool)
                    .unwrap_or(d.hard_clear.enabled),
                placeholder: hard
                    .and_then(|h| h.get("placeholder"))
                    .and_then(Value::as_str)
                    .map_or(d.hard_clear.placeholder, str::to_owned),
            },
        }
    }
}

/// JavaScript line terminators, which `.` in a regex without the `s` flag does not match.
fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// A glob of tools.ts: the anchored regex upstream builds, `*` → `.*` (any run of characters
/// except line terminators) and every other character literal; `"*"` alone matches anything.
fn glob_matches(pattern: &str, name: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if !pattern.contains('*') {
        return pattern == name;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // reachable[j]: the pattern prefix consumed so far can match name[..j].
    let mut reachable = vec![false; n.len() + 1];
    reachable[0] = true;
    for &pc in &p {
        let mut next = vec![false; n.len() + 1];
        if pc == '*' {
            for j in 0..=n.len() {
                next[j] = reachable[j] || (j > 0 && next[j - 1] && !is_line_terminator(n[j - 1]));
            }
        } else {
            for j in 1..=n.len() {
                next[j] = reachable[j - 1] && n[j - 1] == pc;
            }
        }
        reachable = next;
    }
    reachable[n.len()]
}

/// Tool allow/deny matching (tools.ts, `makeToolPrunablePredicate`): trimmed, lowercased; deny
/// wins; an empty allow list allows everything.
#[derive(Debug, Clone, Default)]
pub struct ToolMatcher {
    allow: Vec<String>,
    deny: Vec<String>,
}

impl ToolMatcher {
    pub fn new<'a>(
        allow: impl IntoIterator<Item = &'a str>,
        deny: impl IntoIterator<Item = &'a str>,
    ) -> ToolMatcher {
        let norm = |items: &mut dyn Iterator<Item = &'a str>| -> Vec<String> {
            items
                .map(|p| js_trim(p).to_lowercase())
                .filter(|p| !p.is_empty())
                .collect()
        };
        ToolMatcher {
            allow: norm(&mut allow.into_iter()),
            deny: norm(&mut deny.into_iter()),
        }
    }

    /// From the settings' `tools` value (`{allow: [...], deny: [...]}`).
    pub fn from_tools(tools: &Value) -> ToolMatcher {
        let list = |key: &str| -> Vec<&str> {
            tools
                .get(key)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default()
        };
        ToolMatcher::new(list("allow"), list("deny"))
    }

    pub fn is_prunable(&self, tool_name: &str) -> bool {
        let name = js_trim(tool_name).to_lowercase();
        if self.deny.iter().any(|p| glob_matches(p, &name)) {
            return false;
        }
        self.allow.is_empty() || self.allow.iter().any(|p| glob_matches(p, &name))
    }
}

fn block_type(block: &Value) -> Option<&str> {
    block.get("type").and_then(Value::as_str)
}

/// Keeps a UTF-16 cut from splitting a surrogate pair: returns the char boundary at or after
/// `units` code units from the start (a pair straddling the cut is kept whole).
fn utf16_prefix(s: &str, units: u64) -> &str {
    let mut seen = 0u64;
    for (i, c) in s.char_indices() {
        if seen >= units {
            return &s[..i];
        }
        seen += c.len_utf16() as u64;
    }
    s
}

/// The last `units` UTF-16 code units (a pair straddling the cut is kept whole; no units is
/// the empty string).
fn utf16_suffix(s: &str, units: u64) -> &str {
    if units == 0 {
        return "";
    }
    let mut seen = 0u64;
    for (i, c) in s.char_indices().rev() {
        seen += c.len_utf16() as u64;
        if seen >= units {
            return &s[i..];
        }
    }
    s
}

/// Soft trim of one tool result's text (pruner.ts, `softTrimToolResultMessage`), or `None` when
/// it is not eligible.
pub fn soft_trimmed_text(parts: &[&str], soft: &SoftTrim) -> Option<String> {
    if parts.is_empty() {
        return None;
    }
    let raw_len: u64 = parts.iter().map(|p| utf16_len(p)).sum::<u64>() + parts.len() as u64 - 1;
    if raw_len <= soft.max_chars || soft.head_chars + soft.tail_chars >= raw_len {
        return None;
    }
    let joined = parts.join("\n");
    let head = utf16_prefix(&joined, soft.head_chars);
    let tail = utf16_suffix(&joined, soft.tail_chars);
    Some(format!(
        "{head}\n...\n{tail}\n\n[Tool result trimmed: kept first {} chars and last {} chars of {raw_len} chars.]",
        soft.head_chars, soft.tail_chars
    ))
}

/// `message` with its content replaced by one text block, as a new message (its pruner chars
/// come from its facts).
fn with_text_content(message: &Value, text: &str) -> Message {
    let mut next = message.clone();
    if let Some(obj) = next.as_object_mut() {
        obj.insert("content".into(), json!([{"type": "text", "text": text}]));
    }
    Message::new(JsonText::owned(to_js_string(&next)))
}

/// `pruneContextMessages` (pruner.ts, as in 2026.3.13): returns the input itself when nothing
/// is pruned.
/// Roles, char counts and image flags come from the messages' cached facts; only the tool
/// results that are actually trimmed or cleared are parsed.
pub fn prune_context(
    input: &Transcript,
    settings: &PruningSettings,
    context_window_tokens: Option<f64>,
) -> Transcript {
    let Some(window) = context_window_tokens.filter(|w| w.is_finite() && *w > 0.0) else {
        return input.clone();
    };
    let char_window = window * CHARS_PER_TOKEN_ESTIMATE as f64;
    input.compute_facts();
    let messages = input.messages();
    let facts: Vec<&MessageFacts> = messages.iter().map(|m| m.facts()).collect();

    let cutoff = if settings.keep_last_assistants == 0 {
        messages.len()
    } else {
        let mut seen = 0;
        let found = (0..messages.len()).rev().find(|&i| {
            if facts[i].is_role("assistant") {
                seen += 1;
            }
            seen as u64 == settings.keep_last_assistants
        });
        match found {
            Some(i) => i,
            None => return input.clone(),
        }
    };
    // A provider compaction block (`COMPACTION_BLOCK_TYPE`) is a boundary: nothing before its
    // message is sent, so nothing there is counted or pruned (the block itself never is: only
    // tool results are).
    let boundary = super::compaction_boundary(input, None).map_or(0, |(i, _)| i);
    let start = facts
        .iter()
        .position(|f| f.is_role("user"))
        .unwrap_or(messages.len())
        .max(boundary);

    let mut chars: Vec<u64> = facts
        .iter()
        .enumerate()
        .map(|(i, f)| if i < boundary { 0 } else { f.pruning_chars })
        .collect();
    let mut total: u64 = chars.iter().sum();
    if (total as f64) / char_window < settings.soft_trim_ratio {
        return input.clone();
    }

    let matcher = ToolMatcher::from_tools(&settings.tools);
    let mut changed: Vec<Option<Message>> = vec![None; messages.len()];
    let mut prunable: Vec<usize> = Vec::new();
    for i in start..cutoff.max(start) {
        let f = facts[i];
        if !f.is_role("toolResult") || !matcher.is_prunable(f.tool_name.as_deref().unwrap_or("")) {
            continue;
        }
        prunable.push(i);
        // Soft trim looks at the text parts joined with "\n". A result with images is always
        // rewritten (each image becomes a marker); a text-only one only when its joined parts
        // exceed maxChars, so skip the parse when they cannot.
        if !f.has_image
            && (f.text_parts == 0
                || f.pruning_chars + f.text_parts - 1 <= settings.soft_trim.max_chars)
        {
            continue;
        }
        let trimmed = messages[i].soft_trimmed(&settings.soft_trim, |message| {
            let value = message.to_value().unwrap_or(Value::Null);
            let blocks: &[Value] = value
                .get("content")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice);
            let has_images = blocks.iter().any(|b| block_type(b) == Some("image"));
            let parts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| match block_type(b) {
                    Some("text") => b.get("text").and_then(Value::as_str),
                    Some("image") => Some(PRUNED_IMAGE_MARKER),
                    _ => None,
                })
                .collect();
            let text = match soft_trimmed_text(&parts, &settings.soft_trim) {
                Some(text) => text,
                None if has_images => parts.join("\n"),
                None => return None,
            };
            Some(with_text_content(&value, &text))
        });
        if let Some(next) = trimmed {
            let next_chars = next.facts().pruning_chars;
            total = total - chars[i] + next_chars;
            chars[i] = next_chars;
            changed[i] = Some(next);
        }
    }

    let ratio = |total: u64| (total as f64) / char_window;
    if ratio(total) >= settings.hard_clear_ratio && settings.hard_clear.enabled {
        let prunable_chars: u64 = prunable.iter().map(|&i| chars[i]).sum();
        if prunable_chars >= settings.min_prunable_tool_chars {
            for &i in &prunable {
                if ratio(total) < settings.hard_clear_ratio {
                    break;
                }
                // Clearing replaces the content, so a soft trim before makes no difference.
                let base = messages[i].to_value().unwrap_or(Value::Null);
                let next = with_text_content(&base, &settings.hard_clear.placeholder);
                let next_chars = next.facts().pruning_chars;
                total = total - chars[i] + next_chars;
                chars[i] = next_chars;
                changed[i] = Some(next);
            }
        }
    }

    if changed.iter().all(Option::is_none) {
        return input.clone();
    }
    let out = messages
        .iter()
        .zip(changed)
        .map(|(message, next)| next.unwrap_or_else(|| message.clone()))
        .collect();
    Transcript::from_messages(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("5"), Some(300_000));
        assert_eq!(parse_duration_ms(" 1.5H "), Some(5_400_000));
        assert_eq!(parse_duration_ms("250ms"), Some(250));
        assert_eq!(parse_duration_ms("2d"), Some(172_800_000));
        assert_eq!(parse_duration_ms("x"), None);
        assert_eq!(parse_duration_ms("5 m"), None);
        assert_eq!(parse_duration_ms("1.2.3"), None);
        assert_eq!(parse_duration_ms("1h30m"), Some(5_400_000));
        assert_eq!(parse_duration_ms("1m1m"), Some(120_000));
        assert_eq!(parse_duration_ms("1d2h"), Some(93_600_000));
        assert_eq!(parse_duration_ms("2m500ms"), Some(120_500));
        assert_eq!(parse_duration_ms("1h 30m"), None);
        assert_eq!(parse_duration_ms("1h30"), None);
        assert_eq!(parse_duration_ms("1e3"), None);
        assert_eq!(parse_duration_ms(""), None);
    }

    #[test]
    fn globs() {
        assert!(glob_matches("ex*", "exec"));
        assert!(glob_matches("*", "x"));
        assert!(glob_matches("a*c*e", "abcde"));
        assert!(!glob_matches("a*c*e", "abde"));
        assert!(!glob_matches("exec", "exec2"));
        assert!(!glob_matches("ex*", "ex\nec"));
        assert!(glob_matches("*", "ex\nec"));
        assert!(glob_matches("a*b", "ab"));
        let m = ToolMatcher::new(["ex*"], ["exec"]);
        assert!(!m.is_prunable("Exec"));
        assert!(!m.is_prunable("Browser"));
        assert!(m.is_prunable("exa"));
    }

    #[test]
    fn soft_trims_are_cached_per_message_and_settings() {
        let long = "line of tool output\n".repeat(2000);
        let mut texts = vec![r#"{"role":"user","content":"go"}"#.to_owned()];
        for i in 0..4 {
            texts.push(format!(
                r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"c{i}","name":"exec","arguments":{{}}}}]}}"#
            ));
            texts.push(
                serde_json::json!({"role": "toolResult", "toolCallId": format!("c{i}"),
                    "toolName": "exec", "content": [{"type": "text", "text": long}]})
                .to_string(),
            );
        }
        let input = Transcript::new(texts.into_iter().map(JsonText::owned).collect());
        let settings = PruningSettings {
            min_prunable_tool_chars: u64::MAX, // soft trims only
            ..PruningSettings::default()
        };
        let window = Some(20_000.0);
        let first = prune_context(&input, &settings, window);
        let second = prune_context(&input, &settings, window);
        assert_eq!(first, second);
        let trimmed: Vec<usize> = (0..input.messages().len())
            .filter(|&i| first.messages()[i] != input.messages()[i])
            .collect();
        assert!(!trimmed.is_empty());
        for &i in &trimmed {
            // The second request reuses the first one's trimmed message.
            assert!(first.messages()[i].is_same(&second.messages()[i]));
            assert!(first.messages()[i]
                .as_str()
                .contains("[Tool result trimmed: kept first 1500"));
        }
        // Other settings are not served from the cache.
        let shorter = PruningSettings {
            soft_trim: SoftTrim {
                max_chars: 4000,
                head_chars: 100,
                tail_chars: 100,
            },
            ..settings.clone()
        };
        let other = prune_context(&input, &shorter, window);
        for &i in &trimmed {
            assert!(other.messages()[i]
                .as_str()
                .contains("kept first 100 chars and last 100"));
        }
        assert_eq!(prune_context(&input, &settings, window), first);
    }

    #[test]
    fn soft_trim_texts_match_upstream() {
        let soft = SoftTrim {
            max_chars: 5,
            head_chars: 7,
            tail_chars: 3,
        };
        assert_eq!(
            soft_trimmed_text(&["AAAAA", "BBBBB"], &soft).unwrap(),
            "AAAAA\nB\n...\nBBB\n\n[Tool result trimmed: kept first 7 chars and last 3 chars of 11 chars.]"
        );
        let long = "abcdefghij".repeat(1000);
        let soft = SoftTrim {
            max_chars: 10,
            head_chars: 6,
            tail_chars: 6,
        };
        assert_eq!(
            soft_trimmed_text(&[&long], &soft).unwrap(),
            "abcdef\n...\nefghij\n\n[Tool result trimmed: kept first 6 chars and last 6 chars of 10000 chars.]"
        );
    }

    #[test]
    fn surrogate_pairs_are_never_split() {
        let s = "ab😀cd";
        assert_eq!(utf16_prefix(s, 3), "ab😀");
        assert_eq!(utf16_suffix(s, 3), "😀cd");
        assert_eq!(utf16_prefix(s, 2), "ab");
    }
}
