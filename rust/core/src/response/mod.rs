//! Provider replies read back into pi's `AssistantMessage`, as pi-ai 0.58.3 builds it from a
//! provider stream (pi-mono `packages/ai/src/providers/*.ts`).
//!
//! The reply arrives as one text: raw SSE (`event:`/`data:` frames), a JSON array of wire
//! events (the objects of the SSE `data:` lines, in order), or one JSON object (a non-streaming
//! response body). Each API family reads the events as pi-ai's provider code does and reports
//! the final message plus the types of the events pi-ai pushes on the way.

mod anthropic;
mod partial_json;
mod sse;

use serde_json::{Map, Value};
use thiserror::Error;

pub use partial_json::parse_streaming_json;

/// A reply that cannot be read as the model's API at all (pi-ai never sees such a reply, so
/// it has no message for it). A reply pi-ai reads but fails on gives a message with
/// `stopReason: "error"` instead.
#[derive(Debug, Error)]
pub enum ResponseError {
    /// `model["api"]` names an API this reader does not handle.
    #[error("parse_response does not read replies for api {0:?}")]
    UnsupportedApi(String),
    /// The model dict lacks a field pi-ai copies into the message.
    #[error("model is missing {0:?}")]
    Model(&'static str),
    /// A `data:` line or the JSON text is not JSON.
    #[error("reply is not valid JSON at event {index}: {reason}")]
    Json { index: usize, reason: String },
    /// The reply is in another API's shape than the model's.
    #[error("reply looks like a {found} reply, but the model's api is {api}")]
    WrongApi { found: &'static str, api: String },
    /// The reply is neither SSE, a JSON array of events nor a response body.
    #[error("reply is not SSE text, a JSON array of events or a response body: {0}")]
    Shape(String),
}

/// The message pi-ai returns and the types of the events it pushed, in order.
#[derive(Debug)]
pub struct ParsedResponse {
    pub message: Value,
    pub events: Vec<&'static str>,
}

/// Reads `reply` (SSE text, a JSON array of wire events or a response body) for `model` as
/// pi-ai's provider for `model["api"]` does; `now_ms` is the message's `timestamp`.
pub fn parse_response(
    model: &Value,
    reply: &str,
    now_ms: f64,
) -> Result<ParsedResponse, ResponseError> {
    let api = model
        .get("api")
        .and_then(Value::as_str)
        .ok_or(ResponseError::Model("api"))?;
    let events = read_events(reply)?;
    if let Some(found) = other_dialect(api, &events) {
        return Err(ResponseError::WrongApi {
            found,
            api: api.to_owned(),
        });
    }
    match api {
        "anthropic-messages" => anthropic::parse(model, events, now_ms),
        other => Err(ResponseError::UnsupportedApi(other.to_owned())),
    }
}

/// One wire event: its SSE `event:` name when it came in a frame that had one, and its data.
#[derive(Debug)]
pub(crate) struct WireEvent {
    pub name: Option<String>,
    pub data: Value,
}

/// What the reply text holds.
pub(crate) enum Reply {
    /// Stream events in order.
    Events(Vec<WireEvent>),
    /// One non-streaming response body.
    Body(Value),
}

fn read_events(reply: &str) -> Result<Reply, ResponseError> {
    let head = reply.trim_start_matches(crate::base::is_js_whitespace);
    let json_err = |index, e: serde_json::Error| ResponseError::Json {
        index,
        reason: e.to_string(),
    };
    if head.starts_with('[') {
        let value = crate::base::parse_value(head).map_err(|e| json_err(0, e))?;
        let Value::Array(items) = value else {
            unreachable!("text starting with [ parsed to an array")
        };
        let mut out = Vec::with_capacity(items.len());
        for (index, data) in items.into_iter().enumerate() {
            if !data.is_object() {
                return Err(ResponseError::Shape(format!(
                    "event {index} is not a JSON object"
                )));
            }
            out.push(WireEvent { name: None, data });
        }
        return Ok(Reply::Events(out));
    }
    if head.starts_with('{') {
        let value = crate::base::parse_value(head).map_err(|e| json_err(0, e))?;
        return Ok(Reply::Body(value));
    }
    if head.is_empty() {
        return Ok(Reply::Events(Vec::new()));
    }
    sse::split(reply).map(Reply::Events)
}

/// The API family a reply's events unmistakably belong to, when that is not `api`'s: an
/// OpenAI chat chunk, a Responses event, a Gemini chunk or an Anthropic event each carry a
/// field no other dialect sends.
fn other_dialect(api: &str, reply: &Reply) -> Option<&'static str> {
    let family = |data: &Value| -> Option<&'static str> {
        let obj = data.as_object()?;
        if let Some(object) = obj.get("object").and_then(Value::as_str) {
            if object.starts_with("chat.completion") {
                return Some("openai-completions");
            }
            if object == "response" {
                return Some("openai-responses");
            }
        }
        if obj.contains_key("candidates") || obj.contains_key("usageMetadata") {
            return Some("google-generative-ai");
        }
        let kind = obj.get("type").and_then(Value::as_str)?;
        if kind.starts_with("response.") {
            return Some("openai-responses");
        }
        if kind.starts_with("message_") || kind.starts_with("content_block_") || kind == "message" {
            return Some("anthropic-messages");
        }
        None
    };
    let own = match api {
        "anthropic-messages" => "anthropic-messages",
        "openai-completions" | "mistral-conversations" => "openai-completions",
        "openai-responses" | "azure-openai-responses" | "openai-codex-responses" => {
            "openai-responses"
        }
        _ => "google-generative-ai",
    };
    let first = match reply {
        Reply::Body(body) => family(body),
        Reply::Events(events) => events.iter().find_map(|e| family(&e.data)),
    }?;
    (first != own).then_some(first)
}

/// pi's empty usage record.
pub(crate) struct Usage {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total: f64,
    pub cost: [f64; 5],
}

impl Usage {
    pub fn zero() -> Self {
        Self {
            input: 0.0,
            output: 0.0,
            cache_read: 0.0,
            cache_write: 0.0,
            total: 0.0,
            cost: [0.0; 5],
        }
    }

    /// `calculateCost` (pi-mono `packages/ai/src/models.ts`): price per million tokens times
    /// the count, per field, and the total their sum, in float64 without rounding.
    pub fn calculate_cost(&mut self, model: &Value) {
        let price = |key: &str| {
            model
                .get("cost")
                .and_then(|c| c.get(key))
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
        };
        self.cost[0] = price("input") / 1e6 * self.input;
        self.cost[1] = price("output") / 1e6 * self.output;
        self.cost[2] = price("cacheRead") / 1e6 * self.cache_read;
        self.cost[3] = price("cacheWrite") / 1e6 * self.cache_write;
        self.cost[4] = self.cost[0] + self.cost[1] + self.cost[2] + self.cost[3];
    }

    fn to_value(&self) -> Value {
        let mut cost = Map::new();
        for (key, v) in ["input", "output", "cacheRead", "cacheWrite", "total"]
            .iter()
            .zip(self.cost)
        {
            cost.insert((*key).to_owned(), number(v));
        }
        let mut usage = Map::new();
        usage.insert("input".into(), number(self.input));
        usage.insert("output".into(), number(self.output));
        usage.insert("cacheRead".into(), number(self.cache_read));
        usage.insert("cacheWrite".into(), number(self.cache_write));
        usage.insert("totalTokens".into(), number(self.total));
        usage.insert("cost".into(), Value::Object(cost));
        Value::Object(usage)
    }
}

/// A JavaScript number as JSON: integral values as integers, as `JSON.stringify` writes them.
pub(crate) fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
        // Exact: |v| < 2^53 and integral.
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// A token count as pi-ai reads it (`x || 0`): a number, or 0.
pub(crate) fn count(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64).unwrap_or(0.0)
}

/// The message pi-ai returns, field order as pi-ai builds it.
pub(crate) fn message(
    model: &Value,
    content: Vec<Value>,
    usage: &Usage,
    stop_reason: &str,
    error_message: Option<String>,
    now_ms: f64,
) -> Result<Value, ResponseError> {
    let text = |key: &'static str| {
        model
            .get(key)
            .cloned()
            .filter(Value::is_string)
            .ok_or(ResponseError::Model(key))
    };
    let mut m = Map::new();
    m.insert("role".into(), Value::from("assistant"));
    m.insert("content".into(), Value::Array(content));
    m.insert("api".into(), text("api")?);
    m.insert("provider".into(), text("provider")?);
    m.insert("model".into(), text("id")?);
    m.insert("usage".into(), usage.to_value());
    m.insert("stopReason".into(), Value::from(stop_reason));
    m.insert("timestamp".into(), number(now_ms));
    if let Some(e) = error_message {
        m.insert("errorMessage".into(), Value::from(e));
    }
    Ok(Value::Object(m))
}
