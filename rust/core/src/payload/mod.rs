//! Provider request payloads: the body pi-ai (pi-mono 0.58.3 `packages/ai`) builds for a model,
//! a context and the stream options, one builder per API, after `transformMessages`
//! (`src/providers/transform-messages.ts`), the cross-provider replay layer they all start with.
//!
//! Files: `model` (the model, options and JSON helpers), `transform` (replay layer), then one
//! file per API family: `anthropic`, `openai_completions`, `openai_responses` (plain, Azure and
//! Codex), `google` (Generative AI, Vertex and Cloud Code Assist), `mistral`; `raw` (writing
//! from the stored bytes) and `view` (the message and block readers both paths share, so an
//! API's writers serve both); `cache_diff`, where a body stops extending the previous one as a
//! prompt cache sees it; and `request_id`, a body's text without its random `requestId` (for
//! comparing two builds).

mod anthropic;
mod cache_diff;
mod context_management;
mod google;
mod mistral;
mod model;
mod openai_completions;
mod openai_responses;
mod raw;
mod request_id;
#[cfg(test)]
mod test_support;
mod transform;
mod view;

use serde_json::{Map, Value};

use crate::base::write_js;
use crate::hygiene::{guard_request, GuardReport, GuardTarget};
use crate::transcript::{
    compaction_send_view, convert_to_llm, has_compaction_blocks, CompactionTarget, Transcript,
};

pub use cache_diff::{
    body_layout, cache_diff, cache_diff_after, BodyLayout, BreakCause, CacheBreak, CacheDiffError,
};
pub use model::{strip_lone_surrogate_escapes, Model};
pub use request_id::without_request_id;
pub use transform::{
    derive_mistral_id as derive_mistral_tool_call_id, transform_messages, Normalizer,
};

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
    /// Run the request guard first (`hygiene::guard_request`): clawctx's safe default. Off
    /// reproduces pi-ai exactly, invalid requests included.
    pub guard: bool,
}

/// A request body. Builders that write the messages straight from the stored bytes keep them
/// as JSON text beside the rest of the body, so the body is written without a value tree of
/// the messages ever being built.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The body; the value at `spliced.path` is a placeholder when `spliced` is set.
    body: Value,
    spliced: Option<Spliced>,
    /// What the request guard changed in the messages (nothing when they were valid).
    pub guard: GuardReport,
    /// HTTP headers the body needs (`anthropic-beta` for context management), in order;
    /// empty for every body pi-ai itself builds.
    pub headers: Vec<(String, String)>,
}

/// JSON text written in place of the body's value at `path` (object keys from the top).
#[derive(Debug, Clone)]
struct Spliced {
    path: &'static [&'static str],
    json: Vec<u8>,
    /// Written from the stored bytes (else by the same writer from value trees).
    from_bytes: bool,
}

impl From<Value> for Payload {
    fn from(body: Value) -> Payload {
        Payload {
            body,
            spliced: None,
            guard: GuardReport::default(),
            headers: Vec::new(),
        }
    }
}

impl Payload {
    /// A body whose value at `path` (a placeholder in `body`) is the JSON text `json`, when
    /// there is one; the caller inserts the placeholder so the key keeps its place.
    pub(crate) fn spliced(
        body: Value,
        path: &'static [&'static str],
        json: Option<Vec<u8>>,
    ) -> Payload {
        Payload {
            body,
            spliced: json.map(|json| Spliced {
                path,
                json,
                from_bytes: true,
            }),
            guard: GuardReport::default(),
            headers: Vec::new(),
        }
    }

    /// [`Payload::spliced`] with the JSON text always given, written from the stored bytes
    /// (`from_bytes`) or from value trees by the same writer (`payload::view`).
    pub(crate) fn spliced_from(
        body: Value,
        path: &'static [&'static str],
        json: Vec<u8>,
        from_bytes: bool,
    ) -> Payload {
        let mut payload = Payload::spliced(body, path, Some(json));
        if let Some(s) = &mut payload.spliced {
            s.from_bytes = from_bytes;
        }
        payload
    }

    /// Whether the messages were written from their stored bytes (the bytes path) rather
    /// than from value trees.
    pub fn written_from_bytes(&self) -> bool {
        self.spliced.as_ref().is_some_and(|s| s.from_bytes)
    }

    /// The body as `JSON.stringify` writes it.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match &self.spliced {
            Some(s) => {
                write_with_splice(out, &self.body, s.path, &s.json);
            }
            None => {
                let _ = write_js(&mut *out, &self.body);
            }
        }
    }

    /// The body as [`Payload::write_json`] writes it, in two parts: the JSON text of the
    /// messages written from the stored bytes (empty when there is none) and the rest of the
    /// body with the place where that text goes. Lets a caller write the body into its own
    /// buffer without copying the messages twice.
    pub fn json_parts(&self) -> (&[u8], Vec<u8>, usize) {
        match &self.spliced {
            Some(s) => {
                let mut rest = Vec::with_capacity(4096);
                let at = write_with_splice(&mut rest, &self.body, s.path, &[]);
                let at = at.unwrap_or(rest.len());
                (&s.json, rest, at)
            }
            None => {
                let mut rest = Vec::with_capacity(4096);
                self.write_json(&mut rest);
                let at = rest.len();
                (&[], rest, at)
            }
        }
    }

    pub fn to_json(&self) -> Vec<u8> {
        let extra = self.spliced.as_ref().map_or(0, |s| s.json.len());
        let mut out = Vec::with_capacity(extra + 4096);
        self.write_json(&mut out);
        out
    }

    /// The body as a value tree.
    pub fn to_value(&self) -> Value {
        match &self.spliced {
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

/// `value` as `JSON.stringify` writes it, with `json` in place of the value at `path`; gives
/// where `json` was written (`None` when `path` is not in `value`).
fn write_with_splice(
    out: &mut Vec<u8>,
    value: &Value,
    path: &[&str],
    json: &[u8],
) -> Option<usize> {
    let (Some((first, rest)), Value::Object(fields)) = (path.split_first(), value) else {
        if path.is_empty() {
            let at = out.len();
            out.extend_from_slice(json);
            return Some(at);
        }
        let _ = write_js(&mut *out, value);
        return None;
    };
    let mut at = None;
    out.push(b'{');
    for (n, (key, field)) in fields.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        let _ = serde_json::to_writer(&mut *out, key);
        out.push(b':');
        if key == first {
            at = at.or(write_with_splice(out, field, rest, json));
        } else {
            let _ = write_js(&mut *out, field);
        }
    }
    out.push(b'}');
    at
}

/// The request body for `request.model`'s API over `messages` (AgentMessages: `convertToLlm`
/// runs first, so plain pi Messages pass through unchanged).
pub fn build_payload(
    request: &PayloadRequest,
    messages: &Transcript,
) -> Result<Payload, PayloadError> {
    build_payload_with(request, messages, true)
}

/// The top-level fields of a `POST /responses` body that `POST /responses/compact` also takes
/// (openai 3.51 `types/responses/response_compact_params.py`), in the create body's order.
const COMPACT_FIELDS: [&str; 6] = [
    "model",
    "input",
    "instructions",
    "prompt_cache_key",
    "prompt_cache_retention",
    "service_tier",
];

/// The body of OpenAI's `POST /responses/compact` for `request.model` (an OpenAI Responses
/// API): the create body's `model`, `input` (the same input items), `instructions`, prompt
/// cache and service-tier fields, plus `previous_response_id` from the `previousResponseId`
/// option. The fields only a generating request takes (`stream`, `store`, `tools`, `reasoning`,
/// `context_management`, ...) are left out.
pub fn build_compact_payload(
    request: &PayloadRequest,
    messages: &Transcript,
) -> Result<Payload, PayloadError> {
    let model = Model::from_value(&request.model)?;
    if !matches!(
        model.api.as_str(),
        "openai-responses" | "azure-openai-responses" | "openai-codex-responses"
    ) {
        return Err(PayloadError::Invalid {
            what: "model",
            reason: format!(
                "/responses/compact is an OpenAI Responses endpoint, not for api {:?}",
                model.api
            ),
        });
    }
    let previous = match request.options.get("previousResponseId") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if !id.is_empty() => Some(id.clone()),
        Some(other) => {
            return Err(PayloadError::Invalid {
                what: "previousResponseId",
                reason: format!("expected a non-empty string, got {other}"),
            })
        }
    };
    let mut payload = build_payload(request, messages)?;
    if let Value::Object(body) = &mut payload.body {
        body.retain(|key, _| COMPACT_FIELDS.contains(&key.as_str()));
        if let Some(id) = previous {
            body.insert("previous_response_id".to_owned(), Value::String(id));
        }
    }
    Ok(payload)
}

/// [`build_payload`] through value trees alone, never writing from the stored bytes: the
/// reference the bytes path must match byte for byte (the `payload_paths` fuzz target and the
/// payload tests compare the two).
pub fn build_payload_from_values(
    request: &PayloadRequest,
    messages: &Transcript,
) -> Result<Payload, PayloadError> {
    build_payload_with(request, messages, false)
}

/// [`build_payload`], writing from the stored bytes where a builder can (`raw`) or always
/// through value trees.
fn build_payload_with(
    request: &PayloadRequest,
    messages: &Transcript,
    raw: bool,
) -> Result<Payload, PayloadError> {
    let model = Model::from_value(&request.model)?;
    if raw {
        // The bytes path reads every message's layout; `convert_to_llm` then takes the
        // roles from it instead of computing each message's facts.
        for message in messages.messages() {
            message.layout();
        }
    }
    let llm = convert_to_llm(messages);
    let (llm, guard) = if request.guard {
        let target = GuardTarget {
            provider: Some(&model.provider),
            api: Some(&model.api),
            model_id: Some(&model.id),
            verbatim_ids: false,
        };
        guard_request(&llm, target, false, request.now_ms)
    } else {
        (llm, GuardReport::default())
    };
    // Provider-side compaction blocks (`transcript::COMPACTION_BLOCK_TYPE`): the request
    // starts at the latest one the target can use, sent verbatim to its own provider and API,
    // as a summary message elsewhere; the others are dropped. Nothing changes without them.
    let llm = if has_compaction_blocks(&llm) {
        let target = CompactionTarget {
            provider: Some(&model.provider),
            api: Some(&model.api),
        };
        let view = compaction_send_view(&llm, target);
        // Another provider's summary comes as pi's compaction summary message: converted here.
        if view
            .messages()
            .iter()
            .any(|m| m.role() == Some("compactionSummary"))
        {
            convert_to_llm(&view)
        } else {
            view
        }
    } else {
        llm
    };
    let context = model::Context {
        system_prompt: request.system_prompt.as_deref(),
        llm: &llm,
        tools: request.tools.as_ref(),
        raw,
        values: std::cell::Cell::new(None),
    };
    // Each API: its builder, and how it maps pi-ai's SimpleStreamOptions (`streamSimple*`)
    // onto its own stream options first.
    type SimpleMapper = fn(&Model, &model::Options<'_>) -> serde_json::Map<String, Value>;
    type Builder = fn(&model::Build<'_>) -> Result<Payload, PayloadError>;
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
    let mut payload = build(&model::Build {
        model: &model,
        context: &context,
        options: &options,
        now_ms: request.now_ms,
    })?;
    payload.guard = guard;
    add_context_management(&mut payload, request, &model, &llm)?;
    Ok(payload)
}

/// The provider-side context-management options (`contextManagement`, `promptCacheKey`; see
/// `context_management`), read from the options as given (pi-ai's `SimpleStreamOptions`
/// mapping does not know them) and added to the top level of the built body. Without them the
/// body is untouched.
fn add_context_management(
    payload: &mut Payload,
    request: &PayloadRequest,
    model: &Model,
    llm: &Transcript,
) -> Result<(), PayloadError> {
    let option = request
        .options
        .get(context_management::OPTION)
        .filter(|v| !v.is_null());
    let cache_key = request
        .options
        .get(context_management::PROMPT_CACHE_KEY_OPTION)
        .filter(|v| !v.is_null());
    if option.is_none() && cache_key.is_none() {
        return Ok(());
    }
    let responses = matches!(
        model.api.as_str(),
        "openai-responses" | "azure-openai-responses" | "openai-codex-responses"
    );
    let unsupported = |what: &'static str| PayloadError::Invalid {
        what,
        reason: format!("not supported for api {:?}", model.api),
    };
    let Value::Object(body) = &mut payload.body else {
        return Ok(());
    };
    if let Some(option) = option {
        if model.api == "anthropic-messages" {
            let cm =
                context_management::anthropic(option, &request.model, request.tools.as_ref(), llm)?;
            body.insert("context_management".to_owned(), cm.config);
            payload.headers.extend(context_management::merge_betas(
                &request.model,
                &request.options,
                &cm.betas,
            ));
        } else if responses {
            let entries = context_management::responses(option)?;
            body.insert("context_management".to_owned(), entries);
        } else {
            return Err(unsupported("contextManagement"));
        }
    }
    if let Some(key) = cache_key {
        if !responses {
            return Err(unsupported("promptCacheKey"));
        }
        // Replaces the key pi-ai derives from `sessionId` (in its place), else is added.
        body.insert(
            "prompt_cache_key".to_owned(),
            context_management::prompt_cache_key(key)?,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::test_support::{paths_agree, request, transcript, without_request_id};
    use super::*;
    use crate::base::parse_value;

    /// Builds with both paths, checks they agree, and says whether the bytes path was taken.
    fn both_paths(
        model: &Value,
        messages: &Transcript,
        options: Map<String, Value>,
        simple: bool,
    ) -> bool {
        let request = request(model, Some("sys"), options, simple);
        // Twice: the second build reads what the first cached with each message.
        let fast = build_payload_with(&request, messages, true);
        let again = build_payload_with(&request, messages, true);
        match (&fast, &again) {
            (Ok(a), Ok(b)) => assert_eq!(
                without_request_id(&a.to_json()),
                without_request_id(&b.to_json()),
                "model {model}"
            ),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            _ => panic!("the second build disagrees with the first"),
        }
        paths_agree(&request, messages, without_request_id).is_some_and(|p| p.written_from_bytes())
    }

    fn anthropic_model(provider: &str, api: &str, id: &str) -> Value {
        serde_json::json!({"id": id, "name": id, "api": api, "provider": provider,
            "baseUrl": "https://api.anthropic.com", "reasoning": true,
            "input": ["text", "image"], "maxTokens": 64000})
    }

    /// Stored texts in forms `JSON.stringify` would not write (whitespace, needless escapes,
    /// floats, duplicate keys, lone surrogates) and odd shapes: the bytes path must give what
    /// the value-tree path gives, or hand over to it.
    #[test]
    fn stored_bytes_path_writes_what_the_value_path_writes() {
        let lines = [
            r#"{"role":"user","content":"plain \u00e9\/ text\n","timestamp":1}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"think \ud800 x","thinkingSignature":"sig"},{"type":"text","text":" "},{"type":"text","text":"hi\u0001\t"},{"type":"toolCall","id":"call|1","name":"bash","arguments":{"a": 1.50, "b":[1e2,-0,12345678901234567890],"a":"dup"}}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse"}"#,
            r#"{"role":"toolResult","toolCallId":"call|1","toolName":"bash","content":[{"type":"text","text":"out\n"},{"type":"text","text":"more"}],"isError":false}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"mine","thinkingSignature":"s1"},{"type":"thinking","thinking":"","redacted":true,"thinkingSignature":"opaque"},{"type":"toolCall","id":"c2","name":"read","arguments":null},{"type":"toolCall","id":"c3","name":"bash","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x","stopReason":"toolUse"}"#,
            r#"{"role":"toolResult","toolCallId":"c2","content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"isError":true}"#,
            r#"{ "role" : "user" , "content" : [ {"type":"text","text":"  "}, {"type":"image","data":"QQ==","mimeType":"image/jpeg"}, {"type":"text","text":"look"} ] }"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"err"}],"api":"x","provider":"y","model":"z","stopReason":"error"}"#,
            r#"{"role":"user","content":"last"}"#,
        ];
        let transcript = transcript(&lines);
        for (provider, api, id) in [
            ("anthropic", "anthropic-messages", "claude-x"),
            ("openai", "openai-responses", "gpt-5"),
            ("openai", "openai-responses", "gpt-4o"),
            ("azure-openai-responses", "azure-openai-responses", "gpt-5"),
            ("openai-codex", "openai-codex-responses", "gpt-5.2-codex"),
        ] {
            let model = anthropic_model(provider, api, id);
            // The model's own API, for the builders with a bytes path of their own.
            both_paths(&model, &transcript, Map::new(), false);
            for n in 0..lines.len() {
                let prefix = Transcript::from_messages(transcript.messages()[..n].to_vec());
                both_paths(&model, &prefix, Map::new(), true);
            }
            for api_here in [
                "anthropic-messages",
                "openai-completions",
                "mistral-conversations",
            ] {
                let model_here = {
                    let mut m = model.clone();
                    m["api"] = Value::from(api_here);
                    m
                };
                both_paths(&model_here, &transcript, Map::new(), false);
                let mut oauth = Map::new();
                oauth.insert("apiKey".to_owned(), Value::from("sk-ant-oat-1"));
                oauth.insert("cacheRetention".to_owned(), Value::from("long"));
                both_paths(&model_here, &transcript, oauth, false);
                // Every prefix, so each message kind ends the body once (cache breakpoint).
                for n in 0..lines.len() {
                    let prefix = Transcript::from_messages(transcript.messages()[..n].to_vec());
                    both_paths(&model_here, &prefix, Map::new(), true);
                }
            }
            // The Google APIs (gemini-cli needs its OAuth key), over the same turns: "claude-x"
            // sends call ids, "gpt-5" does not.
            for google_api in ["google-generative-ai", "google-vertex", "google-gemini-cli"] {
                let mut m = model.clone();
                m["api"] = Value::from(google_api);
                let mut options = Map::new();
                options.insert(
                    "apiKey".to_owned(),
                    Value::from(r#"{"token":"t","projectId":"p"}"#),
                );
                for n in 0..=lines.len() {
                    let prefix = Transcript::from_messages(transcript.messages()[..n].to_vec());
                    both_paths(&m, &prefix, options.clone(), true);
                }
            }
        }
    }

    /// Provider compaction blocks (`transcript::COMPACTION_BLOCK_TYPE`): both paths write the
    /// same body, the bytes path is taken, and the block goes first and verbatim to its own
    /// provider only.
    #[test]
    fn compaction_blocks_are_written_alike_on_both_paths() {
        let anthropic_block = r#"{"type":"compaction","api":"anthropic-messages","content":"sum é","raw":{"type":"compaction","content":"sum é","encrypted_content":"E","signature":"S","tool_changes":[]}}"#;
        let item = r#"{"type":"compaction","api":"openai-responses","content":null,"raw":{"type":"compaction","id":"cmp_1","encrypted_content":"X"}}"#;
        let lines = [
            r#"{"role":"user","content":"before","timestamp":1}"#.to_owned(),
            format!(
                r#"{{"role":"assistant","content":[{{"type":"text","text":"t"}},{anthropic_block}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x","stopReason":"stop"}}"#
            ),
            format!(
                r#"{{"role":"assistant","content":[{item},{{"type":"text","text":"u"}}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"stop"}}"#
            ),
            r#"{"role":"user","content":"after"}"#.to_owned(),
        ];
        let transcript = Transcript::new(
            lines
                .iter()
                .map(|l| crate::base::JsonText::owned(l.clone()))
                .collect(),
        );
        for (provider, api, id, first) in [
            ("anthropic", "anthropic-messages", "claude-x", "messages"),
            ("openai", "openai-responses", "gpt-5", "input"),
        ] {
            let model = anthropic_model(provider, api, id);
            assert!(both_paths(&model, &transcript, Map::new(), false), "{api}");
            let request = PayloadRequest {
                guard: true,
                model: model.clone(),
                system_prompt: None,
                tools: None,
                options: Map::new(),
                simple: false,
                now_ms: 7,
            };
            let body = build_payload(&request, &transcript).unwrap().to_value();
            let text = body[first].to_string();
            assert!(!text.contains("before"), "{api}: {text}");
            if api == "anthropic-messages" {
                // The Responses item is no boundary here: the Anthropic block starts it.
                assert_eq!(body["messages"][0]["content"][0]["signature"], "S");
                assert!(!text.contains("cmp_1"));
            } else {
                assert_eq!(body["input"][0]["id"], "cmp_1");
                assert!(!text.contains(r#""S""#));
            }
        }
    }

    /// The two parts a caller writes into its own buffer make the same body.
    #[test]
    fn json_parts_make_the_body() {
        let lines = [
            r#"{"role":"user","content":"hi"}"#,
            r#"{"role":"user","content":"x"}"#,
        ];
        let transcript = transcript(&lines);
        for (api, raw) in [("anthropic-messages", true), ("anthropic-messages", false)] {
            let request = PayloadRequest {
                guard: false,
                model: anthropic_model("anthropic", api, "claude-x"),
                system_prompt: Some("sys".to_owned()),
                tools: None,
                options: Map::new(),
                simple: false,
                now_ms: 0,
            };
            let payload = build_payload_with(&request, &transcript, raw).unwrap();
            let (json, rest, at) = payload.json_parts();
            let mut joined = rest[..at].to_vec();
            joined.extend_from_slice(json);
            joined.extend_from_slice(&rest[at..]);
            assert_eq!(joined, payload.to_json());
        }
    }

    /// Pending tool calls across turns (synthetic results for the unanswered, errored turns,
    /// an id reused by a same-model call after another model's remapped one, results before
    /// their call): the bytes path's single pass gives what the value path gives.
    #[test]
    fn pairing_edge_cases_match_the_value_path() {
        let other = r#""api":"openai-responses","provider":"openai","model":"gpt-5""#;
        let same = r#""api":"anthropic-messages","provider":"anthropic","model":"claude-x""#;
        let call = |id: &str| {
            format!(r#"{{"type":"toolCall","id":"{id}","name":"bash","arguments":{{}}}}"#)
        };
        let assistant = |origin: &str, calls: &[&str], stop: &str| {
            let blocks: Vec<String> = calls.iter().map(|c| call(c)).collect();
            format!(
                r#"{{"role":"assistant","content":[{}],{origin},"stopReason":"{stop}"}}"#,
                blocks.join(",")
            )
        };
        let result = |id: &str| {
            format!(
                r#"{{"role":"toolResult","toolCallId":"{id}","content":[{{"type":"text","text":"ok"}}],"isError":false}}"#
            )
        };
        let user = r#"{"role":"user","content":"next"}"#.to_owned();
        let sequences: Vec<Vec<String>> = vec![
            vec![
                assistant(other, &["a|1", "b|2"], "toolUse"),
                result("a|1"),
                user.clone(),
            ],
            vec![
                assistant(other, &["a|1"], "toolUse"),
                assistant(other, &["c|3"], "toolUse"),
                result("c|3"),
            ],
            vec![
                assistant(other, &["a|1"], "error"),
                result("a|1"),
                user.clone(),
            ],
            vec![
                assistant(other, &["x|1"], "toolUse"),
                result("x|1"),
                assistant(same, &["x|1"], "toolUse"),
                result("x|1"),
                user.clone(),
            ],
            vec![
                result("z|9"),
                assistant(other, &["z|9"], "toolUse"),
                user.clone(),
            ],
            vec![
                assistant(same, &["s1", "s2"], "toolUse"),
                result("s2"),
                result("s1"),
                user.clone(),
            ],
            vec![
                assistant(other, &["|"], "toolUse"),
                result("|"),
                user.clone(),
            ],
            vec![
                assistant(other, &["a|1", "a|1"], "toolUse"),
                result("a|1"),
                user.clone(),
            ],
        ];
        let model = anthropic_model("anthropic", "anthropic-messages", "claude-x");
        for lines in sequences {
            let transcript = Transcript::new(
                lines
                    .iter()
                    .map(|l| crate::base::JsonText::owned(l.clone()))
                    .collect(),
            );
            assert!(
                both_paths(&model, &transcript, Map::new(), false),
                "{lines:?}"
            );
            // The same messages (and what they cached) in other places: a result whose call
            // is missing keeps its stored id, a turn last gets the cache breakpoint.
            let all = transcript.messages();
            for n in 0..all.len() {
                for part in [&all[n..], &all[..n]] {
                    let part = Transcript::from_messages(part.to_vec());
                    both_paths(&model, &part, Map::new(), false);
                }
            }
        }
    }

    /// The APIs whose builder writes the messages from the stored bytes, and how many of their
    /// recorded cases must take that path (the others hold shapes only the value path reads).
    const BYTES_PATH_APIS: [(&str, usize); 9] = [
        ("anthropic-messages", 30),
        ("openai-completions", 39),
        ("mistral-conversations", 29),
        ("google-generative-ai", 38),
        ("google-vertex", 30),
        ("google-gemini-cli", 28),
        // One recorded case is pi-ai's error on a signature that is not JSON.
        ("openai-responses", 39),
        ("azure-openai-responses", 30),
        ("openai-codex-responses", 30),
    ];

    /// The recorded pi-ai cases (`../shared/conformance-payload`, where present): for every
    /// API both paths give the same bytes, and for the APIs with a bytes path it is taken.
    #[test]
    fn recorded_cases_give_the_same_bytes_on_both_paths() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/conformance-payload");
        let Ok(listing) = std::fs::read_dir(&dir) else {
            eprintln!("skipped: {} not found", dir.display());
            return;
        };
        let mut raw_taken: std::collections::BTreeMap<String, usize> = Default::default();
        let mut files: Vec<_> = listing
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "jsonl")
                    && !p.ends_with("transform-messages.jsonl")
            })
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for line in text.split('\n').filter(|l| !l.trim().is_empty()) {
                let case = parse_value(line).unwrap();
                let input = &case["input"];
                let messages = Transcript::from_values(
                    input["context"]["messages"]
                        .as_array()
                        .unwrap_or(&Vec::new()),
                );
                let request = PayloadRequest {
                    guard: false,
                    model: input["model"].clone(),
                    system_prompt: input["context"]["systemPrompt"].as_str().map(str::to_owned),
                    tools: input["context"].get("tools").cloned(),
                    options: case["params"]["options"]
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                    simple: case["fn"] == "stream_simple",
                    now_ms: 1_767_225_600_000,
                };
                let api = input["model"]["api"].as_str().unwrap_or("").to_owned();
                let fast = build_payload_with(&request, &messages, true);
                let slow = build_payload_with(&request, &messages, false);
                // Again, from what the first build cached with each message.
                if let (Ok(fast), Ok(again)) =
                    (&fast, &build_payload_with(&request, &messages, true))
                {
                    assert_eq!(
                        without_request_id(&fast.to_json()),
                        without_request_id(&again.to_json()),
                        "{} (second build)",
                        case["id"]
                    );
                }
                match (fast, slow) {
                    (Ok(fast), Ok(slow)) => {
                        *raw_taken.entry(api).or_default() +=
                            usize::from(fast.written_from_bytes());
                        assert_eq!(
                            without_request_id(&fast.to_json()),
                            without_request_id(&slow.to_json()),
                            "{}",
                            case["id"]
                        );
                    }
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                    _ => panic!("paths disagree on {}", case["id"]),
                }
            }
        }
        for (api, at_least) in BYTES_PATH_APIS {
            let taken = raw_taken.get(api).copied().unwrap_or(0);
            assert!(taken >= at_least, "{api}: bytes path taken {taken} times");
        }
    }
}
