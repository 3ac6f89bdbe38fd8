//! Provider replies read back into pi's `AssistantMessage`, as pi-ai 0.58.3 builds it from a
//! provider stream (pi-mono `packages/ai/src/providers/*.ts`).
//!
//! The reply arrives as one text: raw SSE (`event:`/`data:` frames), a JSON array of wire
//! events (the objects of the SSE `data:` lines, in order), or one JSON object (a non-streaming
//! response body). Each API family reads the events as pi-ai's provider code does and reports
//! the final message plus the types of the events pi-ai pushes on the way.

mod anthropic;
mod google;
mod mistral;
mod openai_completions;
mod partial_json;
mod responses;
mod scan;
mod sse;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use thiserror::Error;

pub use partial_json::parse_streaming_json;
pub use sse::SseDecoder;

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
    /// The incremental reader was used after it finished or after it refused a reply.
    #[error("the reply reader is closed: {0}")]
    Closed(&'static str),
}

/// The message pi-ai returns and the types of the events it pushed, in order.
#[derive(Debug)]
pub struct ParsedResponse {
    pub message: Value,
    pub events: Vec<&'static str>,
}

/// One event pi-ai pushes while it reads a stream: its `AssistantMessageEvent` without the
/// `partial` message (ask the reader for that), with `contentIndex` and, for the `*_delta`
/// events, the delta text when the reader keeps deltas.
#[derive(Debug, Clone, PartialEq)]
pub struct PiEvent {
    pub kind: &'static str,
    pub content_index: Option<usize>,
    pub delta: Option<String>,
}

/// Where an API reader pushes pi's events. The batch reader keeps only the types; the
/// incremental one keeps the deltas too.
#[derive(Debug, Default)]
pub struct PiEvents {
    events: Vec<PiEvent>,
    keep_deltas: bool,
}

impl PiEvents {
    fn new(keep_deltas: bool) -> Self {
        Self {
            events: Vec::new(),
            keep_deltas,
        }
    }

    /// An event without a delta (`start`, `text_start`, `toolcall_end`, ...).
    pub(crate) fn push(&mut self, kind: &'static str, content_index: Option<usize>) {
        self.events.push(PiEvent {
            kind,
            content_index,
            delta: None,
        });
    }

    /// A `text_delta`, `thinking_delta` or `toolcall_delta` event.
    pub(crate) fn delta(&mut self, kind: &'static str, content_index: usize, delta: &str) {
        let delta = self.keep_deltas.then(|| delta.to_owned());
        self.events.push(PiEvent {
            kind,
            content_index: Some(content_index),
            delta,
        });
    }
}

/// Why an API reader stops reading.
#[derive(Debug)]
pub(crate) enum Stop {
    /// pi-ai (or the SDK under it) throws this message: the stream ends in `error`.
    Thrown(String),
    /// The reply cannot be read at all: a typed error, no message.
    Invalid(ResponseError),
}

impl From<ResponseError> for Stop {
    fn from(e: ResponseError) -> Self {
        Stop::Invalid(e)
    }
}

/// A reader's content block: as the partial message shows it while the stream runs, and as
/// the final message keeps it.
pub(crate) trait ReplyBlock {
    fn to_value(&self) -> Value;
    fn into_value(self) -> Value;
}

/// A block kept as pi's object itself.
impl ReplyBlock for Map<String, Value> {
    fn to_value(&self) -> Value {
        Value::Object(self.clone())
    }

    fn into_value(self) -> Value {
        Value::Object(self)
    }
}

/// A block as the final message keeps it, from pi's fields and a tool call's `partialJson`:
/// `arguments` parsed again where the JSON grew since they were last parsed, and `partialJson`
/// kept (pi-ai's Anthropic and Responses readers leave it on the block).
fn final_block(
    mut fields: Map<String, Value>,
    partial_json: Option<String>,
    args_stale: bool,
) -> Value {
    if let Some(p) = partial_json {
        if args_stale {
            fields.insert("arguments".into(), parse_streaming_json(&p));
        }
        fields.insert("partialJson".into(), Value::from(p));
    }
    Value::Object(fields)
}

/// The [`ApiReader`] accessors of a reader that holds the message so far in its `blocks` (of a
/// [`ReplyBlock`] type), `usage` and `stop_reason` fields.
macro_rules! reply_accessors {
    () => {
        fn content(&self) -> Vec<Value> {
            self.blocks
                .iter()
                .map(super::ReplyBlock::to_value)
                .collect()
        }

        fn usage(&self) -> &super::Usage {
            &self.usage
        }

        fn stop_reason(&self) -> &'static str {
            self.stop_reason
        }

        fn into_content(self: Box<Self>, _failed: bool) -> Vec<Value> {
            self.blocks
                .into_iter()
                .map(super::ReplyBlock::into_value)
                .collect()
        }
    };
}
use reply_accessors;

/// One API family's reader: pi-ai's provider loop (`for await (const event of stream)`) as a
/// state machine fed one wire event at a time.
pub(crate) trait ApiReader: Send + Sync {
    /// pi-ai's opening push: `start`, before the first wire event.
    fn begin(&mut self, out: &mut PiEvents) {
        out.push("start", None);
    }
    /// The reader's `Date.now()` (the `now_ms` the message is stamped with), for what pi-ai
    /// derives from the clock besides the timestamp (Gemini's made-up call ids).
    fn set_clock(&mut self, _now_ms: f64) {}
    /// One wire event: its SSE `event:` name when the frame had one, and the raw JSON text of
    /// its data.
    fn event(&mut self, name: Option<&str>, data: &str, out: &mut PiEvents) -> Result<(), Stop>;
    /// The stream ended: what pi-ai throws after its loop, if anything.
    fn end(&mut self, out: &mut PiEvents) -> Result<(), Stop>;
    /// The content blocks so far, as the partial message holds them.
    fn content(&self) -> Vec<Value>;
    /// The usage so far.
    fn usage(&self) -> &Usage;
    /// pi's stop reason so far.
    fn stop_reason(&self) -> &'static str;
    /// The final content as pi-ai leaves it; `failed` when the stream ended in an error.
    fn into_content(self: Box<Self>, failed: bool) -> Vec<Value>;
    /// Safe by default: when the stream stopped before the provider's own end (Anthropic's
    /// `message_stop`, ...), what the message's `errorMessage` says. pi-ai's SDKs end such a
    /// cut stream as if it were whole; clawctx marks it failed, so a half reply (a tool call
    /// cut inside its arguments) is never stored as a finished turn. `None`: it ended whole.
    fn cut_short(&self) -> Option<String> {
        None
    }
}

/// The reader and the body converter of one API.
struct ApiEntry {
    /// The dialect family `other_dialect` compares replies with.
    family: &'static str,
    new_reader: fn(&Value, &Value) -> Box<dyn ApiReader>,
    body_events: BodyEvents,
}

/// A non-streaming body as the wire events its stream would have carried (name, JSON text).
type BodyEvents = fn(&Value) -> Result<Vec<(Option<String>, String)>, ResponseError>;

/// The APIs read, one line each.
fn api_entry(api: &str) -> Option<ApiEntry> {
    Some(match api {
        "anthropic-messages" => ApiEntry {
            family: "anthropic-messages",
            new_reader: anthropic::new_reader,
            body_events: anthropic::body_events,
        },
        "openai-completions" => ApiEntry {
            family: "openai-completions",
            new_reader: openai_completions::new_reader,
            body_events: openai_completions::body_events,
        },
        "openai-responses" => ApiEntry {
            family: "openai-responses",
            new_reader: responses::new_reader,
            body_events: responses::body_events,
        },
        "azure-openai-responses" => ApiEntry {
            family: "openai-responses",
            new_reader: responses::new_azure_reader,
            body_events: responses::body_events,
        },
        "openai-codex-responses" => ApiEntry {
            family: "openai-responses",
            new_reader: responses::new_codex_reader,
            body_events: responses::codex_body_events,
        },
        // Mistral's chunks are chat-completion chunks (`object: "chat.completion.chunk"`).
        "mistral-conversations" => ApiEntry {
            family: "openai-completions",
            new_reader: mistral::new_reader,
            body_events: mistral::body_events,
        },
        "google-generative-ai" | "google-vertex" => ApiEntry {
            family: "google-generative-ai",
            new_reader: google::new_reader,
            body_events: google::body_events,
        },
        "google-gemini-cli" => ApiEntry {
            family: "google-gemini-cli",
            new_reader: google::new_cli_reader,
            body_events: google::body_events,
        },
        _ => return None,
    })
}

/// The APIs [`parse_response`] reads, in the order of pi-ai's `KnownApi`.
pub fn response_apis() -> Vec<&'static str> {
    [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "azure-openai-responses",
        "openai-codex-responses",
        "mistral-conversations",
        "google-generative-ai",
        "google-vertex",
        "google-gemini-cli",
    ]
    .into_iter()
    .filter(|api| api_entry(api).is_some())
    .collect()
}

/// Reads `reply` (SSE text, a JSON array of wire events or a response body) for `model` as
/// pi-ai's provider for `model["api"]` does; `now_ms` is the message's `timestamp`.
pub fn parse_response(
    model: &Value,
    reply: &str,
    now_ms: f64,
) -> Result<ParsedResponse, ResponseError> {
    parse_response_with(model, &Value::Null, reply, now_ms, false)
}

/// [`parse_response`] with the provider options pi-ai's stream function took (`serviceTier`,
/// ...; `null` for none).
pub fn parse_response_with(
    model: &Value,
    options: &Value,
    reply: &str,
    now_ms: f64,
    exact: bool,
) -> Result<ParsedResponse, ResponseError> {
    let mut reader = StreamReader::new(model, options, now_ms, false)?;
    reader.set_exact(exact);
    let head = reply.trim_start_matches(crate::base::is_js_whitespace);
    if head.starts_with('[') {
        for (name, data) in event_list(head)? {
            reader.feed_event(name.as_deref(), &data)?;
        }
    } else if head.starts_with('{') {
        let body = crate::base::parse_value(head).map_err(|e| ResponseError::Json {
            index: 0,
            reason: e.to_string(),
        })?;
        reader.feed_body(&body)?;
    } else if !head.is_empty() {
        reader.feed_sse_text(reply)?;
    }
    reader.finish()
}

/// A JSON array of wire events as (no name, raw JSON text) pairs.
fn event_list(text: &str) -> Result<Vec<(Option<String>, String)>, ResponseError> {
    let check = |index: usize, raw: &str| {
        if raw.starts_with('{') {
            Ok(())
        } else {
            Err(ResponseError::Shape(format!(
                "event {index} is not a JSON object"
            )))
        }
    };
    if let Ok(raws) = serde_json::from_str::<Vec<&RawValue>>(text) {
        let mut out = Vec::with_capacity(raws.len());
        for (index, raw) in raws.into_iter().enumerate() {
            check(index, raw.get())?;
            out.push((None, raw.get().to_owned()));
        }
        return Ok(out);
    }
    // What `JSON.parse` accepts and serde does not as raw text (lone surrogate escapes,
    // numbers beyond a double): parse leniently, then write each event back.
    let value = crate::base::parse_value(text).map_err(|e| ResponseError::Json {
        index: 0,
        reason: e.to_string(),
    })?;
    let Value::Array(items) = value else {
        return Err(ResponseError::Shape("not a JSON array".into()));
    };
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let text = crate::base::to_js_string(item);
        check(index, &text)?;
        out.push((None, text));
    }
    Ok(out)
}

/// pi-ai reading one reply, fed as it arrives: wire events one at a time, SSE bytes in any
/// chunks, or one non-streaming body. The events pi-ai pushed are taken with
/// [`take_events`](Self::take_events), the message so far with [`partial`](Self::partial), the
/// final message with [`finish`](Self::finish).
pub struct StreamReader {
    model: Value,
    api: String,
    family: &'static str,
    reader: Box<dyn ApiReader>,
    body_events: BodyEvents,
    out: PiEvents,
    /// Every event type pushed so far (the batch result).
    kinds: Vec<&'static str>,
    now_ms: f64,
    sse: SseDecoder,
    /// What pi-ai threw, once it did: later events are not read.
    thrown: Option<String>,
    /// The dialect check is done once an event's family is known.
    dialect_known: bool,
    events_fed: usize,
    /// How many of `out.events` are already in `kinds`.
    noted: usize,
    closed: Option<&'static str>,
    /// Exactly as the recorded release: a stream cut short ends as pi-ai ends it.
    exact: bool,
}

impl StreamReader {
    /// A reader for `model["api"]`; `keep_deltas` keeps each delta's text in the events.
    pub fn new(
        model: &Value,
        options: &Value,
        now_ms: f64,
        keep_deltas: bool,
    ) -> Result<Self, ResponseError> {
        let api = model
            .get("api")
            .and_then(Value::as_str)
            .ok_or(ResponseError::Model("api"))?;
        let entry = api_entry(api).ok_or_else(|| ResponseError::UnsupportedApi(api.to_owned()))?;
        for key in ["provider", "id"] {
            if !model.get(key).is_some_and(Value::is_string) {
                return Err(ResponseError::Model(key));
            }
        }
        let mut reader = (entry.new_reader)(model, options);
        reader.set_clock(now_ms);
        let mut out = PiEvents::new(keep_deltas);
        reader.begin(&mut out);
        let mut this = Self {
            model: model.clone(),
            api: api.to_owned(),
            family: entry.family,
            reader,
            body_events: entry.body_events,
            out,
            kinds: Vec::new(),
            now_ms,
            // The openai SDK's `Stream` (Chat Completions, Responses, Azure) ends at
            // `data: [DONE]`; codex's `parseSSE`, Anthropic's and Google's readers skip it.
            sse: SseDecoder::new(matches!(
                api,
                "openai-completions" | "openai-responses" | "azure-openai-responses"
            )),
            thrown: None,
            dialect_known: false,
            events_fed: 0,
            noted: 0,
            closed: None,
            exact: false,
        };
        this.note_kinds();
        Ok(this)
    }

    /// The model API the reply is read as.
    pub fn api(&self) -> &str {
        &self.api
    }

    /// How many wire events were fed so far.
    pub fn events_fed(&self) -> usize {
        self.events_fed
    }

    /// `exact`: read exactly as pi-ai 0.58.3 does, also where it takes a cut stream for a
    /// whole one (see [`ApiReader::cut_short`]).
    pub fn set_exact(&mut self, exact: bool) {
        self.exact = exact;
    }

    /// Records the types of the events pushed since the last note.
    fn note_kinds(&mut self) {
        let new = &self.out.events[self.noted..];
        self.kinds.extend(new.iter().map(|e| e.kind));
        if self.out.keep_deltas {
            self.noted = self.out.events.len();
        } else {
            // The batch path keeps only the types.
            self.out.events.clear();
            self.noted = 0;
        }
    }

    fn open(&self) -> Result<(), ResponseError> {
        match self.closed {
            Some(why) => Err(ResponseError::Closed(why)),
            None => Ok(()),
        }
    }

    /// One wire event: its SSE `event:` name (if its frame had one) and its JSON text.
    pub fn feed_event(&mut self, name: Option<&str>, data: &str) -> Result<(), ResponseError> {
        self.open()?;
        let index = self.events_fed;
        self.events_fed += 1;
        if self.thrown.is_some() {
            return Ok(()); // pi-ai stopped reading at the throw
        }
        if !self.dialect_known {
            if let Ok(value) = crate::base::parse_value(data) {
                if let Some(found) = dialect_of(&value) {
                    self.dialect_known = true;
                    if found != self.family {
                        self.closed = Some("the reply is another API's");
                        return Err(ResponseError::WrongApi {
                            found,
                            api: self.api.clone(),
                        });
                    }
                }
            }
        }
        let result = self.reader.event(name, data, &mut self.out);
        self.note_kinds();
        match result {
            Ok(()) => Ok(()),
            Err(Stop::Thrown(message)) => {
                self.thrown = Some(message);
                Ok(())
            }
            Err(Stop::Invalid(ResponseError::Json { reason, .. })) => {
                self.closed = Some("the reply was refused");
                Err(ResponseError::Json { index, reason })
            }
            Err(Stop::Invalid(e)) => {
                self.closed = Some("the reply was refused");
                Err(e)
            }
        }
    }

    /// A chunk of SSE bytes, cut anywhere (inside a line or a UTF-8 character too).
    pub fn feed_sse(&mut self, chunk: &[u8]) -> Result<(), ResponseError> {
        self.open()?;
        let mut sse = std::mem::take(&mut self.sse);
        let result = sse.feed_with(chunk, &mut |name, data| self.feed_event(name, data));
        self.sse = sse;
        result
    }

    /// SSE text (already UTF-8), in any chunks.
    pub fn feed_sse_text(&mut self, text: &str) -> Result<(), ResponseError> {
        self.open()?;
        let mut sse = std::mem::take(&mut self.sse);
        let result = sse.feed_text_with(text, &mut |name, data| self.feed_event(name, data));
        self.sse = sse;
        result
    }

    fn feed_frames(&mut self, frames: Vec<sse::Frame>) -> Result<(), ResponseError> {
        for frame in frames {
            self.feed_event(frame.name.as_deref(), &frame.data)?;
        }
        Ok(())
    }

    /// A whole non-streaming response body, read as the stream that would have carried it.
    pub fn feed_body(&mut self, body: &Value) -> Result<(), ResponseError> {
        self.open()?;
        if let Some(found) = dialect_of(body) {
            if found != self.family {
                self.closed = Some("the reply is another API's");
                return Err(ResponseError::WrongApi {
                    found,
                    api: self.api.clone(),
                });
            }
        }
        self.dialect_known = true;
        for (name, data) in (self.body_events)(body)? {
            self.feed_event(name.as_deref(), &data)?;
        }
        Ok(())
    }

    /// The events pi-ai pushed since the last call.
    pub fn take_events(&mut self) -> Vec<PiEvent> {
        self.noted = 0;
        std::mem::take(&mut self.out.events)
    }

    /// The message so far, as pi-ai's `partial` shows it.
    pub fn partial(&self) -> Result<Value, ResponseError> {
        message(
            &self.model,
            self.reader.content(),
            self.reader.usage(),
            self.reader.stop_reason(),
            None,
            self.now_ms,
        )
    }

    /// The stream ended: pi-ai's final message, the events pushed at the end (the rest of a
    /// last SSE frame, `done` or `error`) and every event type pushed.
    pub fn finish_with_events(
        self,
    ) -> Result<(Value, Vec<PiEvent>, Vec<&'static str>), ResponseError> {
        let mut last = Vec::new();
        let parsed = self.finish_inner(&mut last)?;
        Ok((parsed.message, last, parsed.events))
    }

    /// The stream ended: pi-ai's final message and every event type it pushed.
    pub fn finish(self) -> Result<ParsedResponse, ResponseError> {
        let mut ignored = Vec::new();
        self.finish_inner(&mut ignored)
    }

    fn finish_inner(mut self, last: &mut Vec<PiEvent>) -> Result<ParsedResponse, ResponseError> {
        self.open()?;
        let frames = self.sse.finish()?;
        self.feed_frames(frames)?;
        let outcome = match self.thrown.take() {
            Some(message) => Err(message),
            None => match self.reader.end(&mut self.out) {
                Ok(()) => match self.reader.cut_short() {
                    Some(message) if !self.exact => Err(message),
                    _ => Ok(()),
                },
                Err(Stop::Thrown(message)) => Err(message),
                Err(Stop::Invalid(e)) => return Err(e),
            },
        };
        self.note_kinds();
        let mut stop_reason = self.reader.stop_reason();
        let usage = self.reader.usage().clone();
        // pi-ai's providers end with `if (output.stopReason === "aborted" || ... "error")
        // throw new Error("An unknown error occurred")`; the catch sets `error`.
        let error_message = match outcome {
            Ok(()) if stop_reason == "error" || stop_reason == "aborted" => {
                Some("An unknown error occurred".to_owned())
            }
            Ok(()) => None,
            Err(text) => Some(text),
        };
        let failed = error_message.is_some();
        let kind = if failed {
            stop_reason = "error";
            "error"
        } else {
            "done"
        };
        self.out.push(kind, None);
        self.note_kinds();
        last.extend(self.take_events());
        let content = self.reader.into_content(failed);
        let message = message(
            &self.model,
            content,
            &usage,
            stop_reason,
            error_message,
            self.now_ms,
        )?;
        Ok(ParsedResponse {
            message,
            events: self.kinds,
        })
    }
}
/// The API family a wire event or body unmistakably belongs to: an OpenAI chat chunk, a
/// Responses event, a Gemini chunk or an Anthropic event each carry a field no other dialect
/// sends. `None` when the object could be any API's.
fn dialect_of(data: &Value) -> Option<&'static str> {
    let obj = data.as_object()?;
    if let Some(object) = obj.get("object").and_then(Value::as_str) {
        if object.starts_with("chat.completion") {
            return Some("openai-completions");
        }
        if object == "response" {
            return Some("openai-responses");
        }
    }
    // Cloud Code Assist wraps each Gemini chunk: `{"response": {...}, "traceId"}`.
    if obj
        .get("response")
        .and_then(Value::as_object)
        .is_some_and(|r| r.contains_key("candidates") || r.contains_key("usageMetadata"))
    {
        return Some("google-gemini-cli");
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
}

/// pi's usage record.
#[derive(Debug, Clone)]
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

/// `JSON.parse` of one event's data; a text that is not JSON refuses the reply (the driver
/// fills in the event's index).
pub(crate) fn event_json(data: &str) -> Result<Value, Stop> {
    crate::base::parse_value(data).map_err(|e| {
        let clipped: String = data.chars().take(80).collect();
        Stop::Invalid(ResponseError::Json {
            index: 0,
            reason: format!("{e} in data {clipped:?}"),
        })
    })
}
