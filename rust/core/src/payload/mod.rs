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
    // Each API: its builder, and how it maps pi-ai's SimpleStreamOptions (`streamSimple*`)
    // onto its own stream options first.
    type SimpleMapper = fn(&Model, &model::Options<'_>) -> serde_json::Map<String, Value>;
    type Builder =
        fn(&Model, &model::Context<'_>, &model::Options<'_>, i64) -> Result<Value, PayloadError>;
    let (map_simple, build): (SimpleMapper, Builder) = match model.api.as_str() {
        "anthropic-messages" => (anthropic::simple_options, anthropic::build),
        "openai-completions" => (
            openai_completions::simple_options,
            openai_completions::build,
        ),
        "openai-responses" | "azure-openai-responses" | "openai-codex-responses" => {
            (openai_responses::simple_options, openai_responses::build)
        }
        "google-generative-ai" | "google-vertex" | "google-gemini-cli" => {
            (google::simple_options, google::build)
        }
        "mistral-conversations" => (mistral::simple_options, mistral::build),
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
