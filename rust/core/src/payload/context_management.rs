//! Provider-side context management, added to a built body as opt-in request options (none of
//! it is sent by pi-ai 0.58.3, so a body without these options stays byte-for-byte pi-ai's).
//!
//! - Anthropic Messages: `context_management.edits` (`clear_thinking_20251015`,
//!   `clear_tool_uses_20250919`, `compact_20260112`; anthropic 2.10
//!   `types/beta/beta_context_management_config_param.py`) with the beta headers they need;
//!   `"auto"` is OpenClaw 2026.9's server-side pruning (openclaw/docs
//!   `docs/concepts/session-pruning.md`), derived from the model's context window.
//! - OpenAI Responses: `context_management: [{"type": "compaction", "compact_threshold": N}]`
//!   (openai 3.51 `types/responses/response_create_params.py`) and `prompt_cache_key`.
//!
//! The fields are added to the top level of the body after the builder ran, so the two ways a
//! builder writes its messages (value trees or stored bytes) share this one place.

use serde_json::{json, Map, Value};

use super::PayloadError;
use crate::transcript::Transcript;

/// The beta header of the clearing edits (Anthropic context-editing docs).
pub const CONTEXT_MANAGEMENT_BETA: &str = "context-management-2025-06-27";
/// The beta header of the `compact_20260112` edit (Anthropic compaction docs).
pub const COMPACT_BETA: &str = "compact-2026-01-12";

/// The option key (camelCase, as pi-ai's stream options are spelled).
pub const OPTION: &str = "contextManagement";
/// An explicit `prompt_cache_key` (OpenAI Responses).
pub const PROMPT_CACHE_KEY_OPTION: &str = "promptCacheKey";

fn invalid(reason: impl Into<String>) -> PayloadError {
    PayloadError::Invalid {
        what: "contextManagement",
        reason: reason.into(),
    }
}

/// A non-negative JSON integer (`true` and `1.5` are refused).
fn count(value: &Value, what: &str) -> Result<u64, PayloadError> {
    value.as_u64().ok_or_else(|| {
        invalid(format!(
            "{what} must be a non-negative integer, got {value}"
        ))
    })
}

/// `N` or `{"type": <one of kinds>, "value": N}`; a bare `N` means `default_kind`.
fn counted(
    value: &Value,
    what: &str,
    default_kind: &str,
    kinds: &[&str],
) -> Result<Value, PayloadError> {
    if let Value::Object(fields) = value {
        let kind = fields.get("type").and_then(Value::as_str).unwrap_or("");
        if !kinds.contains(&kind) {
            return Err(invalid(format!(
                "{what}.type must be one of {kinds:?}, got {:?}",
                fields.get("type").unwrap_or(&Value::Null)
            )));
        }
        if let Some(extra) = fields.keys().find(|k| *k != "type" && *k != "value") {
            return Err(invalid(format!("{what} has an unknown field {extra:?}")));
        }
        let n = count(fields.get("value").unwrap_or(&Value::Null), what)?;
        return Ok(json!({"type": kind, "value": n}));
    }
    let n = count(value, what)?;
    Ok(json!({"type": default_kind, "value": n}))
}

fn string_list(value: &Value, what: &str) -> Result<Vec<String>, PayloadError> {
    let items = value
        .as_array()
        .ok_or_else(|| invalid(format!("{what} must be a list of tool names")))?;
    items
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid(format!("{what} must hold strings, got {v}")))
        })
        .collect()
}

/// `true` (the provider's defaults: `{}`) or an object of camelCase settings.
fn settings<'v>(
    value: &'v Value,
    what: &str,
    allowed: &[&str],
) -> Result<Option<&'v Map<String, Value>>, PayloadError> {
    match value {
        Value::Bool(true) => Ok(None),
        Value::Object(fields) => {
            if let Some(extra) = fields.keys().find(|k| !allowed.contains(&k.as_str())) {
                return Err(invalid(format!(
                    "{what} has an unknown setting {extra:?} (known: {})",
                    allowed.join(", ")
                )));
            }
            Ok(Some(fields))
        }
        other => Err(invalid(format!(
            "{what} must be true or an object of settings, got {other}"
        ))),
    }
}

/// `clearToolUses` → a `clear_tool_uses_20250919` edit (fields in the SDK's order).
fn clear_tool_uses(value: &Value) -> Result<Value, PayloadError> {
    const KNOWN: [&str; 5] = [
        "trigger",
        "keep",
        "clearAtLeast",
        "excludeTools",
        "clearToolInputs",
    ];
    let mut edit = Map::new();
    edit.insert("type".to_owned(), json!("clear_tool_uses_20250919"));
    if let Some(s) = settings(value, "clearToolUses", &KNOWN)? {
        if let Some(v) = s.get("trigger") {
            let trigger = counted(
                v,
                "clearToolUses.trigger",
                "input_tokens",
                &["input_tokens", "tool_uses"],
            )?;
            edit.insert("trigger".to_owned(), trigger);
        }
        if let Some(v) = s.get("keep") {
            let keep = counted(v, "clearToolUses.keep", "tool_uses", &["tool_uses"])?;
            edit.insert("keep".to_owned(), keep);
        }
        if let Some(v) = s.get("clearAtLeast") {
            let at_least = counted(
                v,
                "clearToolUses.clearAtLeast",
                "input_tokens",
                &["input_tokens"],
            )?;
            edit.insert("clear_at_least".to_owned(), at_least);
        }
        if let Some(v) = s.get("excludeTools") {
            let names = string_list(v, "clearToolUses.excludeTools")?;
            edit.insert("exclude_tools".to_owned(), json!(names));
        }
        if let Some(v) = s.get("clearToolInputs") {
            let inputs = match v {
                Value::Bool(b) => Value::Bool(*b),
                other => json!(string_list(other, "clearToolUses.clearToolInputs")?),
            };
            edit.insert("clear_tool_inputs".to_owned(), inputs);
        }
    }
    Ok(Value::Object(edit))
}

/// `clearThinking` → a `clear_thinking_20251015` edit: `keep` is a number of turns or `"all"`.
fn clear_thinking(value: &Value) -> Result<Value, PayloadError> {
    let mut edit = Map::new();
    edit.insert("type".to_owned(), json!("clear_thinking_20251015"));
    if let Some(s) = settings(value, "clearThinking", &["keep"])? {
        match s.get("keep") {
            None => {}
            Some(Value::String(all)) if all == "all" => {
                edit.insert("keep".to_owned(), json!({"type": "all"}));
            }
            Some(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("all") => {
                if o.len() > 1 {
                    return Err(invalid(
                        "clearThinking.keep {\"type\": \"all\"} takes no value",
                    ));
                }
                edit.insert("keep".to_owned(), json!({"type": "all"}));
            }
            Some(v) => {
                let keep = counted(
                    v,
                    "clearThinking.keep",
                    "thinking_turns",
                    &["thinking_turns"],
                )?;
                edit.insert("keep".to_owned(), keep);
            }
        }
    }
    Ok(Value::Object(edit))
}

/// `compact` → a `compact_20260112` edit.
fn compact(value: &Value) -> Result<Value, PayloadError> {
    let mut edit = Map::new();
    edit.insert("type".to_owned(), json!("compact_20260112"));
    let known = ["trigger", "instructions", "pauseAfterCompaction"];
    if let Some(s) = settings(value, "compact", &known)? {
        if let Some(v) = s.get("trigger") {
            let trigger = counted(v, "compact.trigger", "input_tokens", &["input_tokens"])?;
            edit.insert("trigger".to_owned(), trigger);
        }
        match s.get("instructions") {
            None => {}
            Some(Value::String(text)) if !text.trim().is_empty() => {
                edit.insert("instructions".to_owned(), json!(text));
            }
            Some(other) => {
                return Err(invalid(format!(
                    "compact.instructions must be a non-blank string, got {other}"
                )))
            }
        }
        match s.get("pauseAfterCompaction") {
            None => {}
            Some(Value::Bool(b)) => {
                edit.insert("pause_after_compaction".to_owned(), Value::Bool(*b));
            }
            Some(other) => {
                return Err(invalid(format!(
                    "compact.pauseAfterCompaction must be a bool, got {other}"
                )))
            }
        }
    }
    Ok(Value::Object(edit))
}

/// `*` matches any run of characters; names compare case-insensitively (OpenClaw normalises
/// tool names to lower case before its allow/deny checks).
fn glob_match(pattern: &str, name: &str) -> bool {
    let pattern = pattern.trim().to_lowercase();
    let name = name.to_lowercase();
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || !name.ends_with(last) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// OpenClaw 2026.9's server-side pruning for a model with context window `window`:
/// `exclude_tools` holds the current and historical tool names that `deny` excludes or that
/// fall outside `allow` when it is given (session-pruning.md, "Derived parameters").
fn auto_edit(
    window: f64,
    allow: Option<&[String]>,
    deny: &[String],
    tool_names: &[String],
) -> Value {
    let trigger = (window * 0.3).floor().max(50_000.0) as u64;
    let at_least = (window * 0.05).floor().max(12_500.0) as u64;
    let mut excluded: Vec<&str> = Vec::new();
    for name in tool_names {
        let denied = deny.iter().any(|p| glob_match(p, name));
        let outside = allow.is_some_and(|a| !a.iter().any(|p| glob_match(p, name)));
        if (denied || outside) && !excluded.contains(&name.as_str()) {
            excluded.push(name);
        }
    }
    json!({
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": trigger},
        "keep": {"type": "tool_uses", "value": 3},
        "clear_at_least": {"type": "input_tokens", "value": at_least},
        "exclude_tools": excluded,
        "clear_tool_inputs": false,
    })
}

/// The tool names of the request and of every tool call in the messages, first seen first.
fn tool_names(tools: Option<&Value>, messages: &Transcript) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    };
    for tool in tools.and_then(Value::as_array).into_iter().flatten() {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            add(name);
        }
    }
    for message in messages.messages() {
        for call in &message.send_shape().calls {
            if let Some(name) = &call.name {
                add(name);
            }
        }
    }
    names
}

/// What the Anthropic body gets: the `context_management` object and the beta headers it needs.
pub struct AnthropicContextManagement {
    pub config: Value,
    pub betas: Vec<&'static str>,
}

/// The betas an `edits` list needs.
fn betas_of(edits: &[Value]) -> Vec<&'static str> {
    let mut betas = Vec::new();
    let clears = edits.iter().any(|e| {
        matches!(
            e.get("type").and_then(Value::as_str),
            Some("clear_tool_uses_20250919" | "clear_thinking_20251015")
        )
    });
    if clears {
        betas.push(CONTEXT_MANAGEMENT_BETA);
    }
    if edits
        .iter()
        .any(|e| e.get("type").and_then(Value::as_str) == Some("compact_20260112"))
    {
        betas.push(COMPACT_BETA);
    }
    betas
}

/// Reads the `contextManagement` option for an Anthropic body: `"auto"`, or an object with
/// `auto` (plus `toolsAllow` / `toolsDeny`), `clearToolUses`, `clearThinking`, `compact`, or
/// `edits` (the SDK's own list, passed through unchanged as OpenClaw does). Edits come out in
/// the order the API wants: `clear_thinking_20251015` first (context-editing docs), clearing
/// before compaction (OpenClaw's order).
pub fn anthropic(
    option: &Value,
    model: &Value,
    tools: Option<&Value>,
    messages: &Transcript,
) -> Result<AnthropicContextManagement, PayloadError> {
    let auto_only = Map::from_iter([("auto".to_owned(), Value::Bool(true))]);
    let fields = match option {
        Value::String(s) if s == "auto" => &auto_only,
        Value::Object(fields) => fields,
        other => {
            return Err(invalid(format!(
                "expected \"auto\" or an object of settings, got {other}"
            )))
        }
    };
    const KNOWN: [&str; 7] = [
        "auto",
        "toolsAllow",
        "toolsDeny",
        "clearToolUses",
        "clearThinking",
        "compact",
        "edits",
    ];
    if let Some(extra) = fields.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        let hint = if extra == "compactThreshold" {
            " (compactThreshold is for OpenAI Responses; use compact here)"
        } else {
            ""
        };
        return Err(invalid(format!(
            "unknown setting {extra:?} for anthropic-messages{hint}; known: {}",
            KNOWN.join(", ")
        )));
    }
    if let Some(edits) = fields.get("edits") {
        if fields.len() > 1 {
            return Err(invalid(
                "edits (passed through as given) takes no other setting",
            ));
        }
        let list = edits
            .as_array()
            .filter(|l| {
                l.iter()
                    .all(|e| e.get("type").is_some_and(Value::is_string))
            })
            .ok_or_else(|| invalid("edits must be a list of objects with a string type"))?;
        return Ok(AnthropicContextManagement {
            config: json!({"edits": list}),
            betas: betas_of(list),
        });
    }
    let auto = match fields.get("auto") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => return Err(invalid(format!("auto must be a bool, got {other}"))),
    };
    let allow = fields
        .get("toolsAllow")
        .filter(|v| !v.is_null())
        .map(|v| string_list(v, "toolsAllow"))
        .transpose()?;
    let deny = fields
        .get("toolsDeny")
        .filter(|v| !v.is_null())
        .map(|v| string_list(v, "toolsDeny"))
        .transpose()?
        .unwrap_or_default();
    if !auto && (allow.is_some() || !deny.is_empty()) {
        return Err(invalid(
            "toolsAllow / toolsDeny only apply to auto (give clearToolUses.excludeTools instead)",
        ));
    }
    if auto && fields.contains_key("clearToolUses") {
        return Err(invalid(
            "auto already sets the clear_tool_uses edit; give either auto or clearToolUses",
        ));
    }
    let mut edits = Vec::new();
    if let Some(v) = fields.get("clearThinking") {
        edits.push(clear_thinking(v)?);
    }
    if auto {
        let window = model
            .get("contextWindow")
            .and_then(Value::as_f64)
            .filter(|w| w.is_finite() && *w > 0.0)
            .ok_or_else(|| {
                invalid("auto needs the model's contextWindow (a positive number of tokens)")
            })?;
        let names = tool_names(tools, messages);
        edits.push(auto_edit(window, allow.as_deref(), &deny, &names));
    } else if let Some(v) = fields.get("clearToolUses") {
        edits.push(clear_tool_uses(v)?);
    }
    if let Some(v) = fields.get("compact") {
        edits.push(compact(v)?);
    }
    if edits.is_empty() {
        return Err(invalid(
            "no edit given: use \"auto\", or set clearToolUses, clearThinking or compact",
        ));
    }
    Ok(AnthropicContextManagement {
        betas: betas_of(&edits),
        config: json!({ "edits": edits }),
    })
}

/// Reads the `contextManagement` option for an OpenAI Responses body: `{"compactThreshold": N}`
/// gives `[{"type": "compaction", "compact_threshold": N}]`; `{"compaction": true}` the same
/// without a threshold (the server's default).
pub fn responses(option: &Value) -> Result<Value, PayloadError> {
    let Value::Object(fields) = option else {
        return Err(invalid(format!(
            "expected {{\"compactThreshold\": N}} for OpenAI Responses, got {option}"
        )));
    };
    if let Some(extra) = fields
        .keys()
        .find(|k| !["compactThreshold", "compaction"].contains(&k.as_str()))
    {
        return Err(invalid(format!(
            "unknown setting {extra:?} for OpenAI Responses; known: compactThreshold, compaction"
        )));
    }
    let mut entry = Map::new();
    entry.insert("type".to_owned(), json!("compaction"));
    match fields.get("compaction") {
        None | Some(Value::Bool(true)) => {}
        Some(other) => {
            return Err(invalid(format!(
                "compaction must be true when given, got {other}"
            )))
        }
    }
    if let Some(v) = fields.get("compactThreshold") {
        let n = count(v, "compactThreshold")?;
        if n == 0 {
            return Err(invalid(
                "compactThreshold must be a positive number of tokens",
            ));
        }
        entry.insert("compact_threshold".to_owned(), json!(n));
    } else if !fields.contains_key("compaction") {
        return Err(invalid("give compactThreshold (or compaction: true)"));
    }
    Ok(json!([Value::Object(entry)]))
}

/// `promptCacheKey`: a non-empty string.
pub fn prompt_cache_key(option: &Value) -> Result<Value, PayloadError> {
    match option {
        Value::String(s) if !s.is_empty() => Ok(option.clone()),
        other => Err(PayloadError::Invalid {
            what: "promptCacheKey",
            reason: format!("expected a non-empty string, got {other}"),
        }),
    }
}

/// The `anthropic-beta` value: the betas already asked for in `model.headers` and
/// `options.headers` (comma-separated), then `betas`, each once.
pub fn merge_betas(
    model: &Value,
    options: &Map<String, Value>,
    betas: &[&str],
) -> Option<(String, String)> {
    if betas.is_empty() {
        return None;
    }
    let mut all: Vec<String> = Vec::new();
    let given = [model.get("headers"), options.get("headers")];
    for headers in given.into_iter().flatten().filter_map(Value::as_object) {
        for (name, value) in headers {
            if !name.eq_ignore_ascii_case("anthropic-beta") {
                continue;
            }
            for beta in value.as_str().unwrap_or_default().split(',') {
                let beta = beta.trim();
                if !beta.is_empty() && !all.iter().any(|b| b == beta) {
                    all.push(beta.to_owned());
                }
            }
        }
    }
    for beta in betas {
        if !all.iter().any(|b| b == beta) {
            all.push((*beta).to_owned());
        }
    }
    Some(("anthropic-beta".to_owned(), all.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(window: Option<u64>) -> Value {
        let mut m = json!({"id": "claude-x", "api": "anthropic-messages", "provider": "anthropic"});
        if let Some(w) = window {
            m["contextWindow"] = json!(w);
        }
        m
    }

    #[test]
    fn auto_derives_openclaw_parameters_from_the_window() {
        let empty = Transcript::from_values(&[]);
        let cm = anthropic(&json!("auto"), &model(Some(200_000)), None, &empty).unwrap();
        let edit = &cm.config["edits"][0];
        assert_eq!(edit["trigger"]["value"], 60_000);
        assert_eq!(edit["clear_at_least"]["value"], 12_500);
        assert_eq!(edit["keep"], json!({"type": "tool_uses", "value": 3}));
        assert_eq!(edit["clear_tool_inputs"], false);
        assert_eq!(cm.betas, vec![CONTEXT_MANAGEMENT_BETA]);
        // Small windows use the floors, large ones the fractions (floored).
        let small = anthropic(&json!("auto"), &model(Some(32_000)), None, &empty).unwrap();
        assert_eq!(small.config["edits"][0]["trigger"]["value"], 50_000);
        let big = anthropic(&json!("auto"), &model(Some(1_000_003)), None, &empty).unwrap();
        assert_eq!(big.config["edits"][0]["trigger"]["value"], 300_000);
        assert_eq!(big.config["edits"][0]["clear_at_least"]["value"], 50_000);
        assert!(anthropic(&json!("auto"), &model(None), None, &empty).is_err());
    }

    #[test]
    fn edits_come_in_the_required_order() {
        let empty = Transcript::from_values(&[]);
        let option =
            json!({"compact": true, "clearToolUses": true, "clearThinking": {"keep": "all"}});
        let cm = anthropic(&option, &model(None), None, &empty).unwrap();
        let kinds: Vec<&str> = cm.config["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "clear_thinking_20251015",
                "clear_tool_uses_20250919",
                "compact_20260112"
            ]
        );
        assert_eq!(cm.betas, vec![CONTEXT_MANAGEMENT_BETA, COMPACT_BETA]);
    }

    #[test]
    fn globs_match_case_insensitively() {
        assert!(glob_match("browser*", "Browser_open"));
        assert!(glob_match("*_read", "fs_read"));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b*c", "axxc"));
        assert!(!glob_match("ab*ba", "aba"));
        assert!(glob_match("exec", "EXEC"));
        assert!(!glob_match("exec", "exec2"));
    }

    #[test]
    fn bad_values_are_refused() {
        let empty = Transcript::from_values(&[]);
        for option in [
            json!("manual"),
            json!({"clearToolUses": {"trigger": -1}}),
            json!({"clearToolUses": {"trigger": 1.5}}),
            json!({"clearToolUses": {"keep": {"type": "input_tokens", "value": 3}}}),
            json!({"clearToolUses": {"bogus": 1}}),
            json!({"clearThinking": {"keep": "some"}}),
            json!({"compact": {"instructions": ""}}),
            json!({"compact": "yes"}),
            json!({}),
            json!({"compactThreshold": 1000}),
            json!({"toolsDeny": ["x"], "clearToolUses": true}),
        ] {
            assert!(
                anthropic(&option, &model(Some(1000)), None, &empty).is_err(),
                "{option}"
            );
        }
        assert!(responses(&json!({"compactThreshold": 0})).is_err());
        assert!(responses(&json!("auto")).is_err());
        assert!(responses(&json!({})).is_err());
    }

    #[test]
    fn betas_merge_with_the_given_ones() {
        let m = json!({"headers": {"anthropic-beta": "a-1, context-management-2025-06-27"}});
        let mut options = Map::new();
        options.insert("headers".to_owned(), json!({"Anthropic-Beta": "b-2"}));
        let (_, value) =
            merge_betas(&m, &options, &[CONTEXT_MANAGEMENT_BETA, COMPACT_BETA]).unwrap();
        assert_eq!(
            value,
            "a-1,context-management-2025-06-27,b-2,compact-2026-01-12"
        );
        assert!(merge_betas(&m, &options, &[]).is_none());
    }
}
