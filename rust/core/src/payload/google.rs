//! The Google bodies of pi-mono 0.58.3 `packages/ai/src/providers/`: `google.ts` and
//! `google-vertex.ts` (`buildParams`: the `@google/genai` `GenerateContentParameters`, before
//! the SDK turns it into REST) and `google-gemini-cli.ts` (`buildRequest`: the Cloud Code
//! Assist body, Antigravity included), over `google-shared.ts` (`convertMessages`,
//! `convertTools`). `convertMessages` is written once, by the writers below (`write_user`,
//! `write_model_turn`, `write_function_response` and the turn merging of `Contents`), for both
//! the bytes path and the value path (`payload::view`).

use serde_json::{json, Map, Value};

use super::model::{
    ascii_prefix, base_options, blocks_of, clamp_reasoning, number, sanitize_id_chars, Build,
    Context, Model, Options,
};
use super::raw::{self, Block, BlockFields, BlockKind, Out, RawStr, Replayed};
use super::transform::transform;
use super::view::{kind_of, result_parts, write_id, BlockKey, BlockView, Field, MsgView};
use super::{Payload, PayloadError};
use crate::base::parse_value;
use crate::transcript::Transcript;

/// google-shared.ts `SKIP_THOUGHT_SIGNATURE`: sent for unsigned calls to gemini-3.
const SKIP_THOUGHT_SIGNATURE: &str = "skip_thought_signature_validator";

/// google-gemini-cli.ts `ANTIGRAVITY_SYSTEM_INSTRUCTION`.
const ANTIGRAVITY_SYSTEM_INSTRUCTION: &str = concat!(
    "You are Antigravity, a powerful agentic AI coding assistant designed by the Google Deepmind team working on Advanced Agentic Coding.",
    "You are pair programming with a USER to solve their coding task. The task may require creating a new codebase, modifying or debugging an existing codebase, or simply answering a question.",
    "**Absolute paths only**",
    "**Proactiveness**",
);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Gemini3 {
    Pro,
    Flash,
}

/// `/gemini-3(?:\.\d+)?-(pro|flash)/` on the lowercased id (`any_minor`), or the gemini-cli
/// form `/gemini-3(?:\.1)?-(pro|flash)/`.
fn gemini3_kind(id: &str, any_minor: bool) -> Option<Gemini3> {
    let id = id.to_lowercase();
    let mut found = None;
    for (at, _) in id.match_indices("gemini-3") {
        let mut rest = &id[at + "gemini-3".len()..];
        let try_tail = |rest: &str| {
            if rest.starts_with("-pro") {
                Some(Gemini3::Pro)
            } else if rest.starts_with("-flash") {
                Some(Gemini3::Flash)
            } else {
                None
            }
        };
        if let Some(kind) = try_tail(rest) {
            found = found.or(Some(kind));
            continue;
        }
        if let Some(after_dot) = rest.strip_prefix('.') {
            let digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            let ok = if any_minor {
                digits > 0
            } else {
                after_dot.starts_with('1')
            };
            if ok {
                rest = &after_dot[if any_minor { digits } else { 1 }..];
                if let Some(kind) = try_tail(rest) {
                    found = found.or(Some(kind));
                }
            }
        }
    }
    found
}

fn gemini3_level(effort: &str, kind: Gemini3) -> &'static str {
    match (kind, effort) {
        (Gemini3::Pro, "minimal" | "low") => "LOW",
        (Gemini3::Pro, _) => "HIGH",
        (_, "minimal") => "MINIMAL",
        (_, "low") => "LOW",
        (_, "medium") => "MEDIUM",
        _ => "HIGH",
    }
}

/// `requiresToolCallId` (google-shared.ts).
fn requires_tool_call_id(id: &str) -> bool {
    id.starts_with("claude-") || id.starts_with("gpt-oss-")
}

/// A thought signature is replayed only to the same provider and model, and only when it is
/// base64 whose length is a multiple of 4 (`isValidThoughtSignature`).
fn valid_signature(signature: Option<&str>) -> Option<&str> {
    let s = signature.filter(|s| !s.is_empty())?;
    if s.len() % 4 != 0 {
        return None;
    }
    let body = s.trim_end_matches('=');
    let pad = s.len() - body.len();
    let ok = !body.is_empty()
        && pad <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    ok.then_some(s)
}

/// The `thinking` option (`GoogleOptions.thinking`) the simple stream functions build.
struct Thinking {
    enabled: bool,
    level: Option<&'static str>,
    budget: Option<f64>,
}

fn thinking_option(options: &Options<'_>) -> Thinking {
    let t = options.get("thinking");
    Thinking {
        enabled: t
            .and_then(|t| t.get("enabled"))
            .is_some_and(crate::base::is_truthy),
        level: t
            .and_then(|t| t.get("level"))
            .and_then(Value::as_str)
            .and_then(|l| match l {
                "MINIMAL" => Some("MINIMAL"),
                "LOW" => Some("LOW"),
                "MEDIUM" => Some("MEDIUM"),
                "HIGH" => Some("HIGH"),
                "THINKING_LEVEL_UNSPECIFIED" => Some("THINKING_LEVEL_UNSPECIFIED"),
                _ => None,
            }),
        budget: t
            .and_then(|t| t.get("budgetTokens"))
            .and_then(Value::as_f64),
    }
}

/// `streamSimpleGoogle` / `streamSimpleGoogleVertex` / `streamSimpleGoogleGeminiCli`.
pub(super) fn simple_options(model: &Model, simple: &Options<'_>) -> Map<String, Value> {
    let mut out = base_options(model, simple.map);
    let Some(level) = simple.truthy("reasoning").and_then(Value::as_str) else {
        out.insert("thinking".to_owned(), json!({"enabled": false}));
        return out;
    };
    let effort = clamp_reasoning(level);
    let cli = model.api == "google-gemini-cli";
    if let Some(kind) = gemini3_kind(&model.id, !cli) {
        out.insert(
            "thinking".to_owned(),
            json!({"enabled": true, "level": gemini3_level(effort, kind)}),
        );
        return out;
    }
    let custom = simple.get("thinkingBudgets").and_then(|b| b.get(effort));
    if cli {
        let base_max = out.get("maxTokens").and_then(Value::as_f64).unwrap_or(0.0);
        let (max_tokens, budget) = super::model::adjust_max_tokens_for_thinking(
            base_max,
            model.max_tokens,
            effort,
            simple.get("thinkingBudgets"),
        );
        out.insert("maxTokens".to_owned(), number(max_tokens));
        out.insert(
            "thinking".to_owned(),
            json!({"enabled": true, "budgetTokens": number(budget)}),
        );
        return out;
    }
    // google.ts `getGoogleBudget`.
    let budget = match custom {
        Some(v) => v.clone(),
        None => {
            let table: Option<[i64; 4]> = if model.id.contains("2.5-pro") {
                Some([128, 2048, 8192, 32768])
            } else if model.id.contains("2.5-flash") {
                Some([128, 2048, 8192, 24576])
            } else {
                None
            };
            let i = match effort {
                "minimal" => 0,
                "low" => 1,
                "medium" => 2,
                _ => 3,
            };
            Value::from(table.map_or(-1, |t| t[i]))
        }
    };
    out.insert(
        "thinking".to_owned(),
        json!({"enabled": true, "budgetTokens": budget}),
    );
    out
}

pub(super) fn build(input: &Build<'_>) -> Result<Payload, PayloadError> {
    let (model, context, options, now_ms) = input.parts();
    if model.api == "google-gemini-cli" {
        return build_cli(model, context, options, now_ms);
    }
    let (contents_json, from_bytes) = contents(model, context, now_ms)?;
    let mut config = Map::new();
    if let Some(t) = options.get("temperature") {
        config.insert("temperature".to_owned(), t.clone());
    }
    if let Some(m) = options.get("maxTokens") {
        config.insert("maxOutputTokens".to_owned(), m.clone());
    }
    if let Some(prompt) = context.system() {
        config.insert("systemInstruction".to_owned(), json!(prompt));
    }
    let tools = context.tools().filter(|t| !t.is_empty());
    if let Some(tools) = tools {
        config.insert("tools".to_owned(), convert_tools(tools, false));
        if options.truthy("toolChoice").is_some() {
            return Err(PayloadError::Invalid {
                what: "options",
                reason: "toolChoice on the Google APIs needs @google/genai's FunctionCallingConfigMode (not supported)".to_owned(),
            });
        }
    }
    let thinking = thinking_option(options);
    if thinking.enabled && model.reasoning {
        config.insert("thinkingConfig".to_owned(), thinking_config(&thinking));
    }
    // `contents` is written in place of its placeholder by `Payload`.
    Ok(Payload::spliced_from(
        json!({"model": model.id, "contents": null, "config": config}),
        &["contents"],
        contents_json,
        from_bytes,
    ))
}

/// The `contents` array's JSON text, and whether it was written straight from the stored
/// messages (when every message has a shape that path reads) rather than from value trees.
fn contents(
    model: &Model,
    context: &Context<'_>,
    now_ms: i64,
) -> Result<(Vec<u8>, bool), PayloadError> {
    let json = context
        .raw
        .then(|| write_contents_raw(context.llm, model))
        .flatten();
    Ok(match json {
        Some(json) => (json, true),
        None => (convert_messages(model, context, now_ms)?, false),
    })
}

fn thinking_config(thinking: &Thinking) -> Value {
    let mut tc = Map::new();
    tc.insert("includeThoughts".to_owned(), Value::Bool(true));
    if let Some(level) = thinking.level {
        tc.insert("thinkingLevel".to_owned(), json!(level));
    } else if let Some(budget) = thinking.budget {
        tc.insert("thinkingBudget".to_owned(), number(budget));
    }
    Value::Object(tc)
}

/// The random tail of gemini-cli's `requestId` (`Math.random().toString(36).slice(2, 11)`).
fn random_suffix() -> String {
    let mut n = u64::from_le_bytes(
        uuid::Uuid::new_v4().as_bytes()[..8]
            .try_into()
            .unwrap_or([0; 8]),
    );
    let mut s = String::new();
    for _ in 0..9 {
        s.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
    }
    s
}

fn build_cli(
    model: &Model,
    context: &Context<'_>,
    options: &Options<'_>,
    now_ms: i64,
) -> Result<Payload, PayloadError> {
    let Some(raw_key) = options.truthy("apiKey").and_then(Value::as_str) else {
        return Err(PayloadError::Upstream(
            "Google Cloud Code Assist requires OAuth authentication. Use /login to authenticate."
                .to_owned(),
        ));
    };
    let key: Value = serde_json::from_str(raw_key).map_err(|_| {
        PayloadError::Upstream(
            "Invalid Google Cloud Code Assist credentials. Use /login to re-authenticate."
                .to_owned(),
        )
    })?;
    let project = key.get("projectId").filter(|v| crate::base::is_truthy(v));
    let token = key.get("token").filter(|v| crate::base::is_truthy(v));
    let (Some(project), Some(_)) = (project, token) else {
        return Err(PayloadError::Upstream(
            "Missing token or projectId in Google Cloud credentials. Use /login to re-authenticate."
                .to_owned(),
        ));
    };
    let antigravity = model.provider == "google-antigravity";
    let (contents_json, from_bytes) = contents(model, context, now_ms)?;
    let mut generation = Map::new();
    if let Some(t) = options.get("temperature") {
        generation.insert("temperature".to_owned(), t.clone());
    }
    if let Some(m) = options.get("maxTokens") {
        generation.insert("maxOutputTokens".to_owned(), m.clone());
    }
    let thinking = thinking_option(options);
    if thinking.enabled && model.reasoning {
        generation.insert("thinkingConfig".to_owned(), thinking_config(&thinking));
    }
    let mut request = Map::new();
    // Written in place of this placeholder by `Payload`.
    request.insert("contents".to_owned(), Value::Null);
    if let Some(session) = options.get("sessionId") {
        request.insert("sessionId".to_owned(), session.clone());
    }
    let mut system_parts = Vec::new();
    if let Some(prompt) = context.system() {
        system_parts.push(json!({"text": prompt}));
        request.insert(
            "systemInstruction".to_owned(),
            json!({"parts": system_parts}),
        );
    }
    if !generation.is_empty() {
        request.insert("generationConfig".to_owned(), Value::Object(generation));
    }
    if let Some(tools) = context.tools().filter(|t| !t.is_empty()) {
        let use_parameters = model.id.starts_with("claude-");
        request.insert("tools".to_owned(), convert_tools(tools, use_parameters));
        if options.truthy("toolChoice").is_some() {
            return Err(PayloadError::Invalid {
                what: "options",
                reason: "toolChoice on the Google APIs needs @google/genai's FunctionCallingConfigMode (not supported)".to_owned(),
            });
        }
    }
    if antigravity {
        let mut parts = vec![
            json!({"text": ANTIGRAVITY_SYSTEM_INSTRUCTION}),
            json!({"text": format!("Please ignore following [ignore]{ANTIGRAVITY_SYSTEM_INSTRUCTION}[/ignore]")}),
        ];
        parts.extend(system_parts);
        request.insert(
            "systemInstruction".to_owned(),
            json!({"role": "user", "parts": parts}),
        );
    }
    let mut body = Map::new();
    body.insert("project".to_owned(), project.clone());
    body.insert("model".to_owned(), json!(model.id));
    body.insert("request".to_owned(), Value::Object(request));
    if antigravity {
        body.insert("requestType".to_owned(), json!("agent"));
    }
    body.insert(
        "userAgent".to_owned(),
        json!(if antigravity {
            "antigravity"
        } else {
            "pi-coding-agent"
        }),
    );
    let prefix = if antigravity { "agent" } else { "pi" };
    body.insert(
        "requestId".to_owned(),
        json!(format!("{prefix}-{now_ms}-{}", random_suffix())),
    );
    Ok(Payload::spliced_from(
        Value::Object(body),
        &["request", "contents"],
        contents_json,
        from_bytes,
    ))
}

fn convert_tools(tools: &[Value], use_parameters: bool) -> Value {
    let declarations: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let mut d = Map::new();
            for key in ["name", "description"] {
                if let Some(v) = tool.get(key) {
                    d.insert(key.to_owned(), v.clone());
                }
            }
            if let Some(p) = tool.get("parameters") {
                let key = if use_parameters {
                    "parameters"
                } else {
                    "parametersJsonSchema"
                };
                d.insert(key.to_owned(), p.clone());
            }
            Value::Object(d)
        })
        .collect();
    json!([{"functionDeclarations": declarations}])
}

/// google-shared.ts `convertMessages` over value trees: the replay layer of `transform.rs`,
/// then the same writers as the bytes path ([`write_contents_raw`]).
fn convert_messages(
    model: &Model,
    context: &Context<'_>,
    now_ms: i64,
) -> Result<Vec<u8>, PayloadError> {
    let rules = Rules::of(model);
    let normalize = |id: &str, _: &Value| rules.normalize(id);
    let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
    let mut contents = Contents::new(4096);
    for msg in &messages {
        // The value path's readers never answer `None`.
        let _ = match msg.get("role").and_then(Value::as_str) {
            Some("user") => contents.turn(|out| write_user(out, msg, rules.accepts_images)),
            Some("assistant") => {
                let field = |key: &str| msg.get(key).and_then(Value::as_str);
                let same = field("provider") == Some(model.provider.as_str())
                    && field("model") == Some(model.id.as_str());
                let blocks = blocks_of(msg).iter().map(|b| (kind_of(b), b, None));
                // transform.rs already took another model's call signatures away.
                contents.turn(|out| write_model_turn(out, &rules, same, true, blocks))
            }
            Some("toolResult") => contents
                .response(|out| write_function_response(out, msg, None, &rules))
                .map(|images| contents.images(&images)),
            _ => Some(()),
        };
    }
    Ok(contents.finish())
}

/// [`convert_messages`] written straight from the stored messages: unmodified text, thought
/// signatures, call arguments, results and image data are copied from the stored bytes; ids
/// pi-ai rewrites are written fresh. `None` when a message has a shape only the value-tree
/// path handles (the caller then runs that).
fn write_contents_raw(messages: &Transcript, model: &Model) -> Option<Vec<u8>> {
    let rules = Rules::of(model);
    let normalize = |id: &str| rules.normalize(id);
    let replay = raw::replay(messages, model, &normalize)?;
    let total: usize = messages.messages().iter().map(|m| m.len()).sum();
    let mut contents = Contents::new(total + 64);
    // The blocks of the last assistant turn replayed: the calls a synthetic result answers.
    let mut last_calls: &[Block<'_>] = &[];
    for msg in &replay.messages {
        match msg {
            Replayed::User(fields) => {
                contents.turn(|out| write_user(out, fields, rules.accepts_images))?;
            }
            Replayed::Assistant(fields, range) => {
                last_calls = &replay.blocks[range.clone()];
                let same = raw::plain(fields.provider)? == Some(model.provider.as_str())
                    && raw::plain(fields.model)? == Some(model.id.as_str());
                // transformMessages' own test (`raw::is_same_model`: provider, api and
                // model): only then does a call keep its `thoughtSignature`, which the replay
                // layer leaves stored.
                let calls_signed = same && raw::plain(fields.api)? == Some(model.api.as_str());
                let blocks = last_calls
                    .iter()
                    .map(|b| (b.kind, b.fields, b.new_id.as_deref()));
                contents.turn(|out| write_model_turn(out, &rules, same, calls_signed, blocks))?;
            }
            Replayed::ToolResult { fields, new_id } => {
                let images = contents.response(|out| {
                    write_function_response(out, fields, new_id.as_deref(), &rules)
                })?;
                contents.images(&images);
            }
            Replayed::Synthetic { id } => {
                // The result transform-messages.ts adds, read by the same writer.
                let result = synthetic_result(id, synthetic_name(last_calls, id)?)?;
                contents.response(|out| write_function_response(out, &result, None, &rules))?;
            }
        }
    }
    Some(contents.finish())
}

/// transform-messages.ts's synthetic error result for the unanswered call `id` whose stored
/// `name` is given (`None` when it has none); `None` when that name cannot be read.
fn synthetic_result(id: &str, name: Option<&str>) -> Option<Value> {
    let mut result = Map::new();
    result.insert("role".to_owned(), json!("toolResult"));
    result.insert("toolCallId".to_owned(), json!(id));
    if let Some(name) = name {
        result.insert("toolName".to_owned(), parse_value(name).ok()?);
    }
    result.insert(
        "content".to_owned(),
        json!([{"type": "text", "text": "No result provided"}]),
    );
    result.insert("isError".to_owned(), Value::Bool(true));
    Some(Value::Object(result))
}

/// The `contents` array as both paths write it. Consecutive tool results share one user turn
/// of `functionResponse` parts (upstream pushes onto the previous turn's parts while that is
/// a user turn holding one), also across a user or model turn that has nothing to send.
struct Contents {
    out: Out,
    /// Whether a turn has been written.
    any: bool,
    /// Whether the last turn is a user turn of function responses still open
    /// (`...,"parts":[...` without its `]}`): the next tool result joins it.
    open: bool,
}

impl Contents {
    fn new(capacity: usize) -> Contents {
        let mut out = Out::with_capacity(capacity);
        out.raw("[");
        Contents {
            out,
            any: false,
            open: false,
        }
    }

    /// A user or model turn, written by `write` (`false`: nothing to send, nothing kept, and
    /// an open turn of function responses stays open).
    fn turn(&mut self, write: impl FnOnce(&mut Out) -> Option<bool>) -> Option<()> {
        let start = self.out.len();
        if self.open {
            self.out.raw("]}");
        }
        if self.any {
            self.out.raw(",");
        }
        if write(&mut self.out)? {
            self.any = true;
            self.open = false;
        } else {
            self.out.buf.truncate(start);
        }
        Some(())
    }

    /// A `functionResponse` part written by `write`, in the open user turn or a new one.
    fn response<T>(&mut self, write: impl FnOnce(&mut Out) -> Option<T>) -> Option<T> {
        if self.open {
            self.out.raw(",");
        } else {
            if self.any {
                self.out.raw(",");
            }
            self.out.raw(r#"{"role":"user","parts":["#);
        }
        let written = write(&mut self.out)?;
        self.any = true;
        self.open = true;
        Some(written)
    }

    /// The images of a tool result a model without multimodal function responses gets, in a
    /// user turn of their own right after it.
    fn images<'a, B: BlockView<'a>>(&mut self, images: &[B]) {
        if images.is_empty() {
            return;
        }
        let out = &mut self.out;
        out.raw(r#"]},{"role":"user","parts":[{"text":"Tool result image:"}"#);
        for image in images {
            out.raw(",");
            write_inline_data(out, *image);
        }
        out.raw("]}");
        self.open = false;
    }

    fn finish(mut self) -> Vec<u8> {
        if self.open {
            self.out.raw("]}");
        }
        self.out.raw("]");
        self.out.buf
    }
}

/// What the rules depend on in the model of a request.
struct Rules {
    accepts_images: bool,
    /// `requiresToolCallId`: calls and responses carry their `id`.
    needs_id: bool,
    /// Unsigned calls are sent with [`SKIP_THOUGHT_SIGNATURE`].
    gemini3: bool,
    /// google-shared.ts `supportsMultimodalFunctionResponse` (case-sensitive there).
    multimodal_response: bool,
}

impl Rules {
    fn of(model: &Model) -> Rules {
        Rules {
            accepts_images: model.accepts_images,
            needs_id: requires_tool_call_id(&model.id),
            gemini3: model.id.to_lowercase().contains("gemini-3"),
            multimodal_response: model.id.contains("gemini-3"),
        }
    }

    /// The tool-call id normalizer google.ts passes to `transformMessages`.
    #[inline]
    fn normalize(&self, id: &str) -> String {
        if self.needs_id {
            ascii_prefix(&sanitize_id_chars(id), 64).to_owned()
        } else {
            id.to_owned()
        }
    }
}

// The rules of google-shared.ts `convertMessages`, once for both paths (`payload::view`).

/// The thought signatures a block carries, beyond the fields of [`BlockView`].
trait Signed<'a>: BlockView<'a> {
    fn text_signature(&self) -> Option<Field<'a>>;
    fn thought_signature(&self) -> Option<Field<'a>>;
}

impl<'a> Signed<'a> for BlockFields<'a> {
    fn text_signature(&self) -> Option<Field<'a>> {
        self.text_signature.map(Field::Raw)
    }

    fn thought_signature(&self) -> Option<Field<'a>> {
        self.thought_signature.map(Field::Raw)
    }
}

impl<'a> Signed<'a> for &'a Value {
    fn text_signature(&self) -> Option<Field<'a>> {
        self.get("textSignature").map(Field::Value)
    }

    fn thought_signature(&self) -> Option<Field<'a>> {
        self.get("thoughtSignature").map(Field::Value)
    }
}

/// A comma before every part but the first.
fn sep(out: &mut Out, any: &mut bool) {
    if *any {
        out.raw(",");
    }
    *any = true;
}

/// `,"thoughtSignature":...` when the signature is a string that passes
/// [`valid_signature`]; whether it was written.
fn write_signature(out: &mut Out, signature: Option<Field<'_>>) -> Option<bool> {
    let Some(signature) = (match signature {
        Some(field) => field.str()?,
        None => None,
    }) else {
        return Some(false);
    };
    let text = signature.text();
    let Some(valid) = valid_signature(Some(&text)) else {
        return Some(false);
    };
    out.raw(r#","thoughtSignature":"#);
    out.str(valid);
    Some(true)
}

/// `{inlineData: {mimeType, data}}` of an image block (the fields it has).
fn write_inline_data<'a>(out: &mut Out, block: impl BlockView<'a>) {
    let data = block.field(BlockKey::Data);
    out.raw(r#"{"inlineData":{"#);
    if let Some(mime) = block.field(BlockKey::MimeType) {
        out.raw(r#""mimeType":"#);
        mime.copy(out);
        if data.is_some() {
            out.raw(",");
        }
    }
    if let Some(data) = data {
        out.raw(r#""data":"#);
        data.copy(out);
    }
    out.raw("}}");
}

/// A user message; `false` when it has no part to send (the caller drops what was written).
fn write_user<'a>(out: &mut Out, msg: impl MsgView<'a>, accepts_images: bool) -> Option<bool> {
    let Some(content) = msg.content() else {
        return Some(false);
    };
    // A string is sent even when blank.
    if let Some(text) = content.str()? {
        out.raw(r#"{"role":"user","parts":[{"text":"#);
        out.copy_str(&text);
        out.raw("}]}");
        return Some(true);
    }
    if !content.is_array() {
        return Some(false);
    }
    out.raw(r#"{"role":"user","parts":["#);
    let mut any = false;
    msg.for_each_block(|block| {
        if block.is("text")? {
            // `{text: item.text}`: an absent text is dropped, any other value kept.
            if let Some(text) = block.field(BlockKey::Text) {
                sep(out, &mut any);
                out.raw(r#"{"text":"#);
                text.copy(out);
                out.raw("}");
            }
        } else if accepts_images {
            sep(out, &mut any);
            write_inline_data(out, block);
        }
        Some(())
    })?;
    out.raw("]}");
    Some(any)
}

/// An assistant message as a `model` turn, from its blocks after the replay layer (what each
/// became, the block, a call's new id); `false` when it has no part to send. `same`:
/// upstream's `isSameProviderAndModel` (signatures are replayed only then); `calls_signed`:
/// whether the replay layer left the calls their `thoughtSignature`.
fn write_model_turn<'a, 'i, B: Signed<'a>>(
    out: &mut Out,
    rules: &Rules,
    same: bool,
    calls_signed: bool,
    blocks: impl Iterator<Item = (BlockKind, B, Option<&'i str>)>,
) -> Option<bool> {
    out.raw(r#"{"role":"model","parts":["#);
    let mut any = false;
    for (kind, block, new_id) in blocks {
        match kind {
            BlockKind::Text | BlockKind::ConvertedText => {
                let Some(text) = block.str(BlockKey::Text)?.filter(|t| !t.is_blank()) else {
                    continue;
                };
                sep(out, &mut any);
                out.raw(r#"{"text":"#);
                out.copy_str(&text);
                // A text of another model was rebuilt without its signature.
                if same {
                    write_signature(out, block.text_signature())?;
                }
                out.raw("}");
            }
            // Kept only for the same model (else turned into text by the replay layer).
            BlockKind::Thinking => {
                let Some(thinking) = block.str(BlockKey::Thinking)?.filter(|t| !t.is_blank())
                else {
                    continue;
                };
                sep(out, &mut any);
                out.raw(if same {
                    r#"{"thought":true,"text":"#
                } else {
                    r#"{"text":"#
                });
                out.copy_str(&thinking);
                if same {
                    write_signature(out, block.field(BlockKey::ThinkingSignature))?;
                }
                out.raw("}");
            }
            BlockKind::ToolCall => {
                sep(out, &mut any);
                out.raw(r#"{"functionCall":{"name":"#);
                match block.field(BlockKey::Name) {
                    Some(name) => name.copy(out),
                    None => out.raw("null"),
                }
                out.raw(r#","args":"#);
                match block.field(BlockKey::Arguments).filter(|a| !a.is_null()) {
                    Some(args) => args.copy(out),
                    None => out.raw("{}"),
                }
                if rules.needs_id {
                    write_id(out, r#","id":"#, new_id, block.field(BlockKey::Id));
                }
                out.raw("}");
                let signed =
                    same && calls_signed && write_signature(out, block.thought_signature())?;
                if !signed && rules.gemini3 {
                    out.raw(r#","thoughtSignature":""#);
                    out.raw(SKIP_THOUGHT_SIGNATURE);
                    out.raw("\"");
                }
                out.raw("}");
            }
            BlockKind::Other => {}
        }
    }
    out.raw("]}");
    Some(any)
}

/// A tool result as one `functionResponse` part; the images still to send in a turn of their
/// own (models without multimodal function responses: [`Contents::images`]).
fn write_function_response<'a, M: MsgView<'a>>(
    out: &mut Out,
    msg: M,
    new_id: Option<&str>,
    rules: &Rules,
) -> Option<Vec<M::Block>> {
    let (texts, mut images) = result_parts(msg, rules.accepts_images)?;
    out.raw(r#"{"functionResponse":{"#);
    if let Some(name) = msg.tool_name() {
        out.raw(r#""name":"#);
        name.copy(out);
        out.raw(",");
    }
    out.raw(if msg.is_error().is_some_and(Field::truthy) {
        r#""response":{"error":"#
    } else {
        r#""response":{"output":"#
    });
    // The texts joined by newlines; when that is empty, a word for the images.
    let joined_empty = match texts.as_slice() {
        [] => true,
        [one] => one.as_ref().is_none_or(RawStr::is_empty),
        _ => false,
    };
    if !joined_empty {
        out.raw("\"");
        raw::write_lines(out, &texts);
        out.raw("\"");
    } else if !images.is_empty() {
        out.raw(r#""(see attached image)""#);
    } else {
        out.raw(r#""""#);
    }
    out.raw("}");
    if rules.multimodal_response && !images.is_empty() {
        out.raw(r#","parts":["#);
        for (n, image) in images.iter().enumerate() {
            if n > 0 {
                out.raw(",");
            }
            write_inline_data(out, *image);
        }
        out.raw("]");
        images.clear();
    }
    if rules.needs_id {
        write_id(out, r#","id":"#, new_id, msg.tool_call_id());
    }
    out.raw("}}");
    Some(images)
}

/// The stored `name` of the unanswered call `id` of the last assistant turn, which
/// transform-messages.ts's synthetic result carries as its `toolName` (`Some(None)` when it
/// has none). `None` when the id is not that of exactly one call there (left to the value
/// path).
#[allow(clippy::option_option)]
fn synthetic_name<'a>(calls: &[Block<'a>], id: &str) -> Option<Option<&'a str>> {
    let mut found = None;
    for call in calls.iter().filter(|b| b.kind == BlockKind::ToolCall) {
        let call_id = match &call.new_id {
            Some(new_id) => new_id.as_str(),
            None => raw::plain(call.fields.id)?.unwrap_or_default(),
        };
        if call_id == id {
            if found.is_some() {
                return None;
            }
            found = Some(call.fields.name.filter(|n| *n != "null"));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{
        bench_transcript, paths_agree, request, transcript, without_request_id,
    };
    use super::*;

    #[test]
    fn gemini3_ids_are_recognised() {
        assert!(gemini3_kind("gemini-3-pro-preview", true) == Some(Gemini3::Pro));
        assert!(gemini3_kind("gemini-3.5-flash", true) == Some(Gemini3::Flash));
        assert!(gemini3_kind("gemini-3.5-flash", false).is_none());
        assert!(gemini3_kind("gemini-2.5-pro", true).is_none());
    }

    fn google_model(api: &str, provider: &str, id: &str, images: bool) -> Value {
        let input = if images {
            json!(["text", "image"])
        } else {
            json!(["text"])
        };
        json!({"id": id, "name": id, "api": api, "provider": provider,
            "baseUrl": "https://example.invalid", "reasoning": true, "input": input,
            "maxTokens": 8192})
    }

    /// Both paths over every prefix of `lines` for `model` (bytes equal, the gemini-cli
    /// `requestId` tail aside); whether the whole transcript took the bytes path.
    fn both_paths(model: &Value, lines: &[&str]) -> bool {
        let transcript = transcript(lines);
        let mut options = Map::new();
        options.insert(
            "apiKey".to_owned(),
            json!(r#"{"token":"t","projectId":"p"}"#),
        );
        options.insert("reasoning".to_owned(), json!("high"));
        let request = request(model, Some("sys"), options, true);
        let mut taken = false;
        for n in 0..=lines.len() {
            let prefix = Transcript::from_messages(transcript.messages()[..n].to_vec());
            let fast = paths_agree(&request, &prefix, without_request_id).expect("both build");
            taken = fast.written_from_bytes();
            let text = without_request_id(&fast.to_json());
            assert!(
                text.contains(r#""contents":["#),
                "no contents array: {text}"
            );
        }
        taken
    }

    /// Gemini's own shapes: signatures of the same model (valid or not), of the same model
    /// through another API, `thought` parts, unsigned gemini-3 calls, call ids for Claude and
    /// gpt-oss, tool results grouped into one user turn (also across a skipped user message),
    /// images inline or in a turn of their own, synthetic results with their call's name.
    #[test]
    fn gemini_turns_take_the_bytes_path_and_match_the_value_path() {
        let sig = "Ei1BcqbonxrzPc5S+/==";
        let same = |api: &str, model: &str| {
            format!(r#""api":"{api}","provider":"google","model":"{model}","stopReason":"toolUse""#)
        };
        for (api, provider, id, images) in [
            (
                "google-generative-ai",
                "google",
                "gemini-3-pro-preview",
                true,
            ),
            ("google-vertex", "google", "gemini-2.5-pro", true),
            ("google-generative-ai", "google", "gemini-2.5-pro", false),
            (
                "google-gemini-cli",
                "google-antigravity",
                "claude-sonnet-4-5",
                true,
            ),
            (
                "google-gemini-cli",
                "google-gemini-cli",
                "gemini-3-flash",
                true,
            ),
        ] {
            let here = same(api, id).replace("\"google\"", &format!("\"{provider}\""));
            let lines = [
                r#"{"role":"user","content":"  ","timestamp":1}"#.to_owned(),
                r#"{"role":"user","content":[{"type":"text"},{"type":"text","text":null},{"type":"image","data":"QQ==","mimeType":"image/png"},{"type":"odd"},{"type":"text","text":"caf\u00e9 \/ ok"}]}"#.to_owned(),
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"plan","thinkingSignature":"{sig}"}},{{"type":"thinking","thinking":"bad sig","thinkingSignature":"abc"}},{{"type":"thinking","thinking":" \n"}},{{"type":"text","text":"said","textSignature":"ab=="}},{{"type":"text","text":"unsigned"}},{{"type":"toolCall","id":"c1","name":"read","arguments":{{"path":"a"}},"thoughtSignature":"{sig}"}},{{"type":"toolCall","id":"c|2","name":"bash","arguments":null}},{{"type":"toolCall","id":"c3","name":"ls","arguments":{{}}}},{{"type":"toolCall","id":"c4","arguments":{{}}}}],{here}}}"#
                ),
                r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"line\n"},{"type":"image","data":"AAAA","mimeType":"image/jpeg"}],"isError":false}"#.to_owned(),
                r#"{"role":"user","content":[]}"#.to_owned(),
                r#"{"role":"toolResult","toolCallId":"c|2","toolName":null,"content":[{"type":"image","data":"BBBB","mimeType":"image/png"}],"isError":true}"#.to_owned(),
                r#"{"role":"user","content":"next"}"#.to_owned(),
                r#"{"role":"assistant","content":[{"type":"thinking","thinking":"other","thinkingSignature":"c2ln"},{"type":"text","text":"txt","textSignature":"c2ln"},{"type":"toolCall","id":"call|x/y","name":"grep","arguments":{"q":1},"thoughtSignature":"c2ln"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x","stopReason":"toolUse"}"#.to_owned(),
                r#"{"role":"toolResult","toolCallId":"call|x/y","toolName":"grep","content":[{"type":"text","text":""},{"type":"text","text":""}],"isError":false}"#.to_owned(),
                r#"{"role":"toolResult","toolCallId":"nobody","toolName":"grep","content":[{"type":"text","text":""}]}"#.to_owned(),
                r#"{"role":"assistant","content":[{"type":"text","text":"broken"}],"api":"x","provider":"y","model":"z","stopReason":"error"}"#.to_owned(),
                format!(
                    r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"via vertex","thinkingSignature":"{sig}"}},{{"type":"toolCall","id":"v1","name":"read","arguments":{{}},"thoughtSignature":"{sig}"}}],"api":"other-api","provider":"{provider}","model":"{id}","stopReason":"toolUse"}}"#
                ),
                r#"{"role":"toolResult","toolCallId":"v1","toolName":"read","content":"not blocks","isError":false}"#.to_owned(),
                r#"{"role":"user","content":"last"}"#.to_owned(),
            ];
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let model = google_model(api, provider, id, images);
            assert!(both_paths(&model, &lines), "{model}: bytes path not taken");
        }
    }

    /// Two unanswered calls with one id: their synthetic results are left to the value path.
    #[test]
    fn synthetic_results_of_a_shared_id_match_through_the_value_path() {
        let lines = [
            r#"{"role":"user","content":"go"}"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"d","name":"a","arguments":{}},{"type":"toolCall","id":"d","name":"b","arguments":{}}],"api":"x","provider":"y","model":"z","stopReason":"toolUse"}"#,
            r#"{"role":"user","content":"again"}"#,
        ];
        let model = google_model(
            "google-gemini-cli",
            "google-antigravity",
            "claude-sonnet-4-5",
            true,
        );
        assert!(!both_paths(&model, &lines));
    }

    /// The body's bytes (built and written) of a 5,000-message transcript shaped as
    /// `benches/test_payload.py`'s `make_messages` (user, assistant turn of OpenAI Responses
    /// with thinking, text and a call, tool result), for gemini-2.5-pro. Kept out of line so
    /// callgrind can count it: see the `measure_*` tests.
    #[inline(never)]
    fn body_of_5000_messages(raw: bool) -> Vec<u8> {
        let transcript = bench_transcript(5000);
        let request = request(
            &google_model("google-generative-ai", "google", "gemini-2.5-pro", true),
            Some("You are a coding agent. Be concise."),
            Map::new(),
            true,
        );
        let body = measured(&request, &transcript, raw);
        assert!(body.len() > 500_000, "{} bytes", body.len());
        body
    }

    #[inline(never)]
    fn measured(
        request: &super::super::PayloadRequest,
        messages: &Transcript,
        raw: bool,
    ) -> Vec<u8> {
        super::super::build_payload_with(request, messages, raw)
            .unwrap()
            .to_json()
    }

    /// Instruction counts of both paths (by hand, see the README of the benches):
    /// `valgrind --tool=callgrind --toggle-collect='*google*tests*measured*' <test binary>
    /// --ignored --exact payload::google::tests::measure_bytes_path`.
    #[test]
    #[ignore = "measurement driver, run under callgrind by hand"]
    fn measure_bytes_path() {
        body_of_5000_messages(true);
    }

    #[test]
    #[ignore = "measurement driver, run under callgrind by hand"]
    fn measure_value_path() {
        body_of_5000_messages(false);
    }

    #[test]
    fn signatures_must_be_padded_base64() {
        assert_eq!(valid_signature(Some("abcd")), Some("abcd"));
        assert_eq!(valid_signature(Some("abc")), None);
        assert_eq!(valid_signature(Some("ab=c")), None);
        assert_eq!(valid_signature(Some("ab==")), Some("ab=="));
    }
}
