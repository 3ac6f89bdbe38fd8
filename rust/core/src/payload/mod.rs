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
mod transform;

use serde_json::{Map, Value};

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

/// The request body for `request.model`'s API over `messages` (AgentMessages: `convertToLlm`
/// runs first, so plain pi Messages pass through unchanged).
pub fn build_payload(
    request: &PayloadRequest,
    messages: &Transcript,
) -> Result<Value, PayloadError> {
    let model = Model::from_value(&request.model)?;
    let llm = convert_to_llm(messages);
    let mut values = Vec::with_capacity(llm.len());
    for message in llm.messages() {
        let value = message.to_value().map_err(|e| PayloadError::Invalid {
            what: "message",
            reason: e.to_string(),
        })?;
        values.push(value);
    }
    let context = model::Context {
        system_prompt: request.system_prompt.as_deref(),
        messages: std::cell::Cell::new(values),
        tools: request.tools.as_ref(),
    };
    let options = model::Options::new(&request.options);
    match model.api.as_str() {
        "anthropic-messages" => {
            anthropic::build(&model, &context, &options, request.simple, request.now_ms)
        }
        "openai-completions" => {
            openai_completions::build(&model, &context, &options, request.simple, request.now_ms)
        }
        "openai-responses" | "azure-openai-responses" | "openai-codex-responses" => {
            openai_responses::build(&model, &context, &options, request.simple, request.now_ms)
        }
        "google-generative-ai" | "google-vertex" | "google-gemini-cli" => {
            google::build(&model, &context, &options, request.simple, request.now_ms)
        }
        "mistral-conversations" => {
            mistral::build(&model, &context, &options, request.simple, request.now_ms)
        }
        other => Err(PayloadError::UnsupportedApi(other.to_owned())),
    }
}
