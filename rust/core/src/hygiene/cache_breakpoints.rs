//! Anthropic prompt-cache breakpoints (`cache_control`) and the two rules the Messages API
//! enforces on them (Claude platform docs, `build-with-claude/prompt-caching`; anthropic 2.10
//! `types/cache_control_ephemeral_param.py`):
//! - at most 4 breakpoints in one request;
//! - in prefix order (`tools`, then `system`, then `messages`), a breakpoint with the longer
//!   TTL (`"1h"`) never comes after one with the shorter (`"5m"`, the default).
//!
//! A marker is any non-null `cache_control` on a tool, a system block, a message's content
//! block or a block nested in one (a `tool_result`'s content).

use serde_json::Value;

use super::validate::Violation;
use crate::transcript::Transcript;

/// Anthropic's limit on breakpoints per request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ttl {
    Short,
    Long,
}

/// One marker: the message it is in (0 for tools and system), its JSON path and TTL.
struct Marker {
    index: usize,
    path: String,
    ttl: Result<Ttl, String>,
}

fn ttl_of(cache_control: &Value) -> Result<Ttl, String> {
    match cache_control.get("ttl") {
        None | Some(Value::Null) => Ok(Ttl::Short),
        Some(Value::String(t)) if t == "5m" => Ok(Ttl::Short),
        Some(Value::String(t)) if t == "1h" => Ok(Ttl::Long),
        Some(other) => Err(other.to_string()),
    }
}

fn marker_of(value: &Value, index: usize, path: String, out: &mut Vec<Marker>) {
    if let Some(cc) = value.get("cache_control").filter(|v| !v.is_null()) {
        out.push(Marker {
            index,
            path,
            ttl: ttl_of(cc),
        });
    }
}

/// The markers of a list of blocks, and of the blocks nested in their `content`.
fn block_markers(blocks: &[Value], index: usize, prefix: &str, out: &mut Vec<Marker>) {
    for (j, block) in blocks.iter().enumerate() {
        let path = format!("{prefix}[{j}]");
        marker_of(block, index, path.clone(), out);
        if let Some(Value::Array(inner)) = block.get("content") {
            block_markers(inner, index, &format!("{path}.content"), out);
        }
    }
}

/// Whether a message's stored text may hold a `cache_control` key: the plain key, or any
/// escaped ASCII character (a key may be written with `\u00XX` escapes).
fn may_hold_marker(text: &str) -> bool {
    text.contains("cache_control") || text.contains("\\u00")
}

/// The broken breakpoint rules of a request made of `tools`, `system` (a string or a list of
/// blocks) and `messages` (Anthropic message params or pi messages with block-level
/// `cache_control`). Rules: `too-many-cache-breakpoints` (on each marker past the 4th),
/// `cache-ttl-order` (a `1h` marker after a `5m` one), `invalid-cache-ttl`. `index` is the
/// message holding the marker (0 for tools and system); the detail starts with its path.
pub fn cache_breakpoint_issues(
    tools: Option<&Value>,
    system: Option<&Value>,
    messages: &Transcript,
) -> Vec<Violation> {
    let mut markers = Vec::new();
    if let Some(Value::Array(tools)) = tools {
        for (i, tool) in tools.iter().enumerate() {
            marker_of(tool, 0, format!("tools[{i}]"), &mut markers);
        }
    }
    if let Some(Value::Array(blocks)) = system {
        block_markers(blocks, 0, "system", &mut markers);
    }
    for (i, message) in messages.messages().iter().enumerate() {
        let text = message.text();
        if !may_hold_marker(text.as_str()) {
            continue;
        }
        let Ok(value) = text.to_value() else {
            continue;
        };
        if let Some(Value::Array(blocks)) = value.get("content") {
            block_markers(blocks, i, &format!("messages[{i}].content"), &mut markers);
        }
    }
    let mut issues = Vec::new();
    let mut shortest_before: Option<(Ttl, &str)> = None;
    for (n, marker) in markers.iter().enumerate() {
        if n >= MAX_CACHE_BREAKPOINTS {
            issues.push(Violation {
                index: marker.index,
                rule: "too-many-cache-breakpoints",
                detail: format!(
                    "{}: cache breakpoint {} of {}; a request takes at most {MAX_CACHE_BREAKPOINTS}",
                    marker.path,
                    n + 1,
                    markers.len()
                ),
            });
        }
        match &marker.ttl {
            Err(ttl) => issues.push(Violation {
                index: marker.index,
                rule: "invalid-cache-ttl",
                detail: format!(
                    "{}: cache_control ttl {ttl} is not \"5m\" or \"1h\"",
                    marker.path
                ),
            }),
            Ok(ttl) => {
                if let Some((Ttl::Short, at)) = shortest_before {
                    if *ttl == Ttl::Long {
                        issues.push(Violation {
                            index: marker.index,
                            rule: "cache-ttl-order",
                            detail: format!(
                                "{}: a 1h breakpoint after the 5m one at {at}; longer TTLs \
                                 must come first (tools, system, messages)",
                                marker.path
                            ),
                        });
                    }
                }
                if shortest_before.is_none_or(|(t, _)| *ttl < t) {
                    shortest_before = Some((*ttl, marker.path.as_str()));
                }
            }
        }
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transcript(messages: &[Value]) -> Transcript {
        Transcript::from_values(messages)
    }

    fn rules(issues: &[Violation]) -> Vec<(usize, &'static str)> {
        issues.iter().map(|v| (v.index, v.rule)).collect()
    }

    #[test]
    fn four_breakpoints_pass_and_a_fifth_is_reported() {
        let cc = json!({"type": "ephemeral"});
        let tools = json!([{"name": "a", "cache_control": cc}]);
        let system = json!([{"type": "text", "text": "s", "cache_control": cc}]);
        let message = |n: usize| {
            json!({"role": "user", "content": [{"type": "text", "text": format!("m{n}"),
                "cache_control": cc}]})
        };
        let two = transcript(&[message(0), message(1)]);
        assert!(cache_breakpoint_issues(Some(&tools), Some(&system), &two).is_empty());
        let three = transcript(&[message(0), message(1), message(2)]);
        let found = cache_breakpoint_issues(Some(&tools), Some(&system), &three);
        assert_eq!(rules(&found), [(2, "too-many-cache-breakpoints")]);
        assert!(found[0].detail.starts_with("messages[2].content[0]"));
    }

    #[test]
    fn a_long_ttl_after_a_short_one_is_reported() {
        let long = json!({"type": "ephemeral", "ttl": "1h"});
        let short = json!({"type": "ephemeral"});
        let tools = json!([{"name": "a", "cache_control": short}]);
        let system = json!([{"type": "text", "text": "s", "cache_control": long}]);
        let none = transcript(&[]);
        let found = cache_breakpoint_issues(Some(&tools), Some(&system), &none);
        assert_eq!(rules(&found), [(0, "cache-ttl-order")]);
        assert!(
            found[0].detail.starts_with("system[0]"),
            "{}",
            found[0].detail
        );
        // Long first, then short: fine; nested in a tool_result too.
        let messages = transcript(&[json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": "t", "content": [{"type": "text", "text": "x",
            "cache_control": {"type": "ephemeral", "ttl": "5m"}}]}]})]);
        assert!(cache_breakpoint_issues(None, Some(&system), &messages).is_empty());
        let tools_long = json!([{"name": "a", "cache_control": long}]);
        let late_long = transcript(&[
            json!({"role": "user", "content": [{"type": "text", "text": "x", "cache_control": short}]}),
            json!({"role": "user", "content": [{"type": "text", "text": "y", "cache_control": long}]}),
        ]);
        let found = cache_breakpoint_issues(Some(&tools_long), None, &late_long);
        assert_eq!(rules(&found), [(1, "cache-ttl-order")]);
    }

    #[test]
    fn an_unknown_ttl_and_escaped_keys_are_seen() {
        let escaped = crate::base::JsonText::owned(
            r#"{"role":"user","content":[{"type":"text","text":"x","cache\u005fcontrol":{"type":"ephemeral","ttl":"2h"}}]}"#
                .to_owned(),
        );
        let messages = Transcript::new(vec![escaped]);
        let found = cache_breakpoint_issues(None, None, &messages);
        assert_eq!(rules(&found), [(0, "invalid-cache-ttl")]);
    }
}
