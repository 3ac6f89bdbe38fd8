//! The pieces every builder shares: the pi-ai `Model` fields that steer a payload, the options
//! object, the context, the `SimpleStreamOptions` mapping of pi-mono 0.58.3
//! `packages/ai/src/providers/simple-options.ts`, and small JavaScript-semantics helpers.

use serde_json::{json, Map, Value};

use super::PayloadError;
use crate::base::is_truthy;
use crate::transcript::Transcript;

/// The fields of a pi-ai `Model` (`packages/ai/src/types.ts`) that a payload depends on.
pub struct Model {
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    pub base_url: String,
    pub reasoning: bool,
    /// `model.input.includes("image")`.
    pub accepts_images: bool,
    pub max_tokens: f64,
    /// `model.compat` (an object, or `None`).
    pub compat: Option<Map<String, Value>>,
}

fn required_str(value: &Value, key: &'static str) -> Result<String, PayloadError> {
    match value.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(PayloadError::Invalid {
            what: "model",
            reason: format!("`{key}` must be a string"),
        }),
    }
}

impl Model {
    pub fn from_value(value: &Value) -> Result<Model, PayloadError> {
        if !value.is_object() {
            return Err(PayloadError::Invalid {
                what: "model",
                reason: "expected an object".to_owned(),
            });
        }
        let accepts_images = match value.get("input") {
            Some(Value::Array(items)) => items.iter().any(|i| i.as_str() == Some("image")),
            _ => false,
        };
        Ok(Model {
            id: required_str(value, "id")?,
            name: value
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            api: required_str(value, "api")?,
            provider: required_str(value, "provider")?,
            base_url: value
                .get("baseUrl")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            reasoning: value.get("reasoning").is_some_and(is_truthy),
            accepts_images,
            max_tokens: value
                .get("maxTokens")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            compat: value.get("compat").and_then(Value::as_object).cloned(),
        })
    }

    /// `model.compat?.[key]`, when set (not `undefined`).
    pub fn compat(&self, key: &str) -> Option<&Value> {
        self.compat.as_ref().and_then(|c| c.get(key))
    }

    /// `supportsXhigh` of pi-mono 0.58.3 `packages/ai/src/models.ts`.
    pub fn supports_xhigh(&self) -> bool {
        ["gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6"]
            .iter()
            .any(|p| self.id.contains(p))
    }
}

/// A provider options object (or `SimpleStreamOptions`), read with JavaScript's rules.
pub struct Options<'a> {
    pub map: &'a Map<String, Value>,
}

impl<'a> Options<'a> {
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Options { map }
    }

    /// The value, when the key is present (JSON has no `undefined`).
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.map.get(key).and_then(Value::as_str)
    }

    /// The value when it is truthy (`options?.key` used in a condition).
    pub fn truthy(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| is_truthy(v))
    }
}

/// What a builder (`<api>::build`) writes a body from: the model, the context, its stream
/// options (pi-ai's `SimpleStreamOptions` already mapped onto them) and the clock of synthetic
/// tool results (`Date.now()` upstream).
#[derive(Clone, Copy)]
pub struct Build<'a> {
    pub model: &'a Model,
    pub context: &'a Context<'a>,
    pub options: &'a Options<'a>,
    pub now_ms: i64,
}

impl<'a> Build<'a> {
    #[allow(clippy::type_complexity)]
    pub fn parts(&self) -> (&'a Model, &'a Context<'a>, &'a Options<'a>, i64) {
        (self.model, self.context, self.options, self.now_ms)
    }
}

/// A pi-ai `Context`.
pub struct Context<'a> {
    pub system_prompt: Option<&'a str>,
    /// The messages after `convertToLlm`, as stored.
    pub llm: &'a Transcript,
    pub tools: Option<&'a Value>,
    /// Builders may write the messages straight from the stored bytes (off only in the tests
    /// that compare both paths).
    pub raw: bool,
    /// Value trees handed back by a converter for the next (see [`Context::put_back`]).
    pub values: std::cell::Cell<Option<Vec<Value>>>,
}

impl Context<'_> {
    /// The messages read into value trees.
    pub fn take_messages(&self) -> Result<Vec<Value>, PayloadError> {
        if let Some(values) = self.values.take() {
            return Ok(values);
        }
        let mut values = Vec::with_capacity(self.llm.len());
        for message in self.llm.messages() {
            let value = message.to_value().map_err(|e| PayloadError::Invalid {
                what: "message",
                reason: e.to_string(),
            })?;
            values.push(value);
        }
        Ok(values)
    }

    /// Hands taken messages back, for the next [`Context::take_messages`].
    pub fn put_back(&self, values: Vec<Value>) {
        self.values.set(Some(values));
    }

    /// `context.systemPrompt` when truthy.
    pub fn system(&self) -> Option<&str> {
        self.system_prompt.filter(|s| !s.is_empty())
    }

    /// `context.tools` when truthy.
    pub fn tools(&self) -> Option<&[Value]> {
        self.tools.and_then(Value::as_array).map(Vec::as_slice)
    }
}

/// A JavaScript number as JSON: integral values as integers, as `JSON.stringify` writes them.
pub fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.007_199_254_740_992e15 {
        Value::from(value as i64)
    } else {
        Value::from(value)
    }
}

/// `buildBaseOptions` (simple-options.ts) as the options object the provider stream receives:
/// `temperature`, `maxTokens` (default `min(model.maxTokens, 32000)`), `cacheRetention`,
/// `sessionId`, `metadata` and `apiKey`.
pub fn base_options(model: &Model, simple: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for key in [
        "temperature",
        "apiKey",
        "cacheRetention",
        "sessionId",
        "metadata",
    ] {
        if let Some(v) = simple.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    let max_tokens = match simple.get("maxTokens") {
        Some(v) if is_truthy(v) => v.clone(),
        _ => number(model.max_tokens.min(32000.0)),
    };
    out.insert("maxTokens".to_owned(), max_tokens);
    out
}

/// [`base_options`] with `reasoningEffort` from `reasoning` (clamped where the model has no
/// `xhigh`): the part `streamSimpleOpenAICompletions` (openai-completions.ts) and
/// `streamSimpleOpenAIResponses` (openai-responses.ts, also Azure and Codex) share.
pub fn effort_options(model: &Model, simple: &Options<'_>) -> Map<String, Value> {
    let mut out = base_options(model, simple.map);
    if let Some(level) = simple.get("reasoning").and_then(Value::as_str) {
        let level = if model.supports_xhigh() {
            level
        } else {
            clamp_reasoning(level)
        };
        out.insert("reasoningEffort".to_owned(), Value::from(level));
    }
    out
}

/// `clampReasoning` (simple-options.ts): `xhigh` becomes `high`.
pub fn clamp_reasoning(level: &str) -> &str {
    if level == "xhigh" {
        "high"
    } else {
        level
    }
}

/// `adjustMaxTokensForThinking` (simple-options.ts): `(maxTokens, thinkingBudget)`.
pub fn adjust_max_tokens_for_thinking(
    base_max_tokens: f64,
    model_max_tokens: f64,
    level: &str,
    custom_budgets: Option<&Value>,
) -> (f64, f64) {
    let level = clamp_reasoning(level);
    let default = match level {
        "minimal" => 1024.0,
        "low" => 2048.0,
        "medium" => 8192.0,
        _ => 16384.0,
    };
    let mut budget = custom_budgets
        .and_then(|b| b.get(level))
        .and_then(Value::as_f64)
        .unwrap_or(default);
    let max_tokens = (base_max_tokens + budget).min(model_max_tokens);
    if max_tokens <= budget {
        budget = (max_tokens - 1024.0).max(0.0);
    }
    (max_tokens, budget)
}

/// The `tools` of a Chat-Completions-shaped request (OpenAI Completions, Mistral): each tool's
/// `name`, `description` and `parameters` under `{"type":"function","function":…}`, with
/// `"strict": false` where the API takes it (openai-completions.ts `convertTools`; the tool
/// list of mistral.ts).
pub fn function_tools(tools: &[Value], with_strict: bool) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let mut function = Map::new();
                for key in ["name", "description", "parameters"] {
                    if let Some(v) = tool.get(key) {
                        function.insert(key.to_owned(), v.clone());
                    }
                }
                if with_strict {
                    function.insert("strict".to_owned(), Value::Bool(false));
                }
                json!({"type": "function", "function": function})
            })
            .collect(),
    )
}

pub use crate::base::sanitize_id_chars;

/// `s.slice(0, n)` for an ASCII string (the output of [`sanitize_id_chars`]).
pub fn ascii_prefix(s: &str, n: usize) -> &str {
    &s[..s.len().min(n)]
}

/// pi-ai `shortHash` (`src/utils/hash.ts`): two 32-bit multiplicative hashes over the UTF-16
/// units, printed in base 36.
pub fn short_hash(s: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in s.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    if n == 0 {
        return "0".to_owned();
    }
    let mut digits = Vec::new();
    while n > 0 {
        digits.push(char::from_digit(n % 36, 36).unwrap_or('0'));
        n /= 36;
    }
    digits.iter().rev().collect()
}

/// A message's content blocks, or none when its content is a string or absent.
pub fn blocks_of(msg: &Value) -> &[Value] {
    msg.get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The JSON text with every escape of an unpaired UTF-16 surrogate (`\udXXX`) removed: the
/// effect of pi-ai's `sanitizeSurrogates` (`src/utils/sanitize-unicode.ts`) on every string,
/// applied before parsing since Rust strings cannot hold lone surrogates. `None` when the text
/// has none.
pub fn strip_lone_surrogate_escapes(text: &str) -> Option<String> {
    crate::base::rewrite_lone_surrogate_escapes(text, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_removed_and_pairs_kept() {
        assert_eq!(
            strip_lone_surrogate_escapes(r#""a\ud800b\ud83d\ude00c\udc00""#).as_deref(),
            Some(r#""ab\ud83d\ude00c""#)
        );
        assert_eq!(strip_lone_surrogate_escapes(r#""\\ud800""#), None);
    }

    #[test]
    fn a_trailing_backslash_is_not_a_panic() {
        // The text comes from Python as it is; its last byte may be a lone backslash.
        assert_eq!(strip_lone_surrogate_escapes("abc\\"), None);
        assert_eq!(strip_lone_surrogate_escapes("\\"), None);
    }

    #[test]
    fn id_chars_follow_utf16_units() {
        assert_eq!(sanitize_id_chars("a|b😀"), "a_b__");
    }

    #[test]
    fn thinking_budget_shrinks_below_the_cap() {
        assert_eq!(
            adjust_max_tokens_for_thinking(32000.0, 64000.0, "high", None),
            (48384.0, 16384.0)
        );
        assert_eq!(
            adjust_max_tokens_for_thinking(4096.0, 8192.0, "xhigh", None),
            (8192.0, 7168.0)
        );
    }
}
