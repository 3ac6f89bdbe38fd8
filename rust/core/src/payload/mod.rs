//! Provider request payloads: the body pi-ai (pi-mono 0.58.3 `packages/ai`) builds for a model,
//! a context and the stream options, one builder per API, after `transformMessages`
//! (`src/providers/transform-messages.ts`), the cross-provider replay layer they all start with.
//!
//! Files: `model` (the model, options and JSON helpers), `transform` (replay layer), then one
//! file per API family: `anthropic`, `openai_completions`, `openai_responses` (plain, Azure and
//! Codex), `google` (Generative AI, Vertex and Cloud Code Assist), `mistral`.

mod anthropic;
mod google;
mod mistral;
mod model;
mod openai_completions;
mod openai_responses;
mod raw;
mod transform;

use serde_json::{Map, Value};

use crate::base::write_js;
use crate::transcript::{convert_to_llm, Transcript};

pub use model::{strip_lone_surrogate_escapes, Model};
pub use transform::{transform_messages, Normalizer};

/// Why no payload could be built.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// The model's `api` has no builder here.
    #[error("unsupported api: {0}")]
    UnsupportedApi(String),
    /// The model or options are not of the shape pi-ai expects.
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
    /// pi-ai itself throws while building the body for this input (the reason is its message).
    #[error("{0}")]
    Upstream(String),
}

/// What a payload is built from, besides the messages.
pub struct PayloadRequest {
    pub model: Value,
    pub system_prompt: Option<String>,
    pub tools: Option<Value>,
    pub options: Map<String, Value>,
    /// The options are pi-ai's `SimpleStreamOptions` (`streamSimple*`), not the provider's own.
    pub simple: bool,
    /// The clock of synthetic tool results (`Date.now()` upstream).
    pub now_ms: i64,
}

/// A request body. Builders that write the messages straight from the stored bytes keep them
/// as JSON text beside the rest of the body, so the body is written without a value tree of
/// the messages ever being built.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The body; its `messages` is a placeholder when `messages_json` is set.
    body: Value,
    /// The JSON text of `body["messages"]`, when written from the stored bytes.
    messages_json: Option<Vec<u8>>,
}

impl From<Value> for Payload {
    fn from(body: Value) -> Payload {
        Payload {
            body,
            messages_json: None,
        }
    }
}

impl Payload {
    /// The body as `JSON.stringify` writes it.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match (&self.messages_json, &self.body) {
            (Some(messages), Value::Object(fields)) => {
                out.push(b'{');
                for (n, (key, value)) in fields.iter().enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    let _ = serde_json::to_writer(&mut *out, key);
                    out.push(b':');
                    if key == "messages" {
                        out.extend_from_slice(messages);
                    } else {
                        let _ = write_js(&mut *out, value);
                    }
                }
                out.push(b'}');
            }
            _ => {
                let _ = write_js(&mut *out, &self.body);
            }
        }
    }

    pub fn to_json(&self) -> Vec<u8> {
        let extra = self.messages_json.as_ref().map_or(0, Vec::len);
        let mut out = Vec::with_capacity(extra + 4096);
        self.write_json(&mut out);
        out
    }

    /// The body as a value tree.
    pub fn to_value(&self) -> Value {
        match &self.messages_json {
            None => self.body.clone(),
            Some(_) => crate::base::parse_value(&String::from_utf8_lossy(&self.to_json()))
                .unwrap_or(Value::Null),
        }
    }

    /// The body's top-level keys, in order.
    pub fn keys(&self) -> Vec<&str> {
        self.body
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

/// The request body for `request.model`'s API over `messages` (AgentMessages: `convertToLlm`
/// runs first, so plain pi Messages pass through unchanged).
pub fn build_payload(
    request: &PayloadRequest,
    messages: &Transcript,
) -> Result<Payload, PayloadError> {
    let model = Model::from_value(&request.model)?;
    let llm = convert_to_llm(messages);
    let context = model::Context {
        system_prompt: request.system_prompt.as_deref(),
        llm: &llm,
        tools: request.tools.as_ref(),
        values: std::cell::Cell::new(None),
    };
    // Each API: its builder, and how it maps pi-ai's SimpleStreamOptions (`streamSimple*`)
    // onto its own stream options first.
    type SimpleMapper = fn(&Model, &model::Options<'_>) -> serde_json::Map<String, Value>;
    type Builder =
        fn(&Model, &model::Context<'_>, &model::Options<'_>, i64) -> Result<Payload, PayloadError>;
    let (map_simple, build): (SimpleMapper, Builder) = match model.api.as_str() {
        "anthropic-messages" => (anthropic::simple_options, anthropic::build),
        "openai-completions" => (openai_completions::simple_options, |m, c, o, n| {
            openai_completions::build(m, c, o, n).map(Payload::from)
        }),
        "openai-responses" | "azure-openai-responses" | "openai-codex-responses" => {
            (openai_responses::simple_options, |m, c, o, n| {
                openai_responses::build(m, c, o, n).map(Payload::from)
            })
        }
        "google-generative-ai" | "google-vertex" | "google-gemini-cli" => {
            (google::simple_options, |m, c, o, n| {
                google::build(m, c, o, n).map(Payload::from)
            })
        }
        "mistral-conversations" => (mistral::simple_options, |m, c, o, n| {
            mistral::build(m, c, o, n).map(Payload::from)
        }),
        other => return Err(PayloadError::UnsupportedApi(other.to_owned())),
    };
    let given = model::Options::new(&request.options);
    let mapped;
    let options = if request.simple {
        mapped = map_simple(&model, &given);
        model::Options::new(&mapped)
    } else {
        given
    };
    build(&model, &context, &options, request.now_ms)
}
