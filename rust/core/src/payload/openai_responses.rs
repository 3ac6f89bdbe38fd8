//! The Responses API bodies of pi-mono 0.58.3 `packages/ai/src/providers/`:
//! `openai-responses.ts`, `azure-openai-responses.ts` and `openai-codex-responses.ts`
//! (`buildParams` / `buildRequestBody`), over `openai-responses-shared.ts`
//! (`convertResponsesMessages`, `convertResponsesTools`).

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::model::{
    blocks_of, effort_options, sanitize_id_chars, short_hash, strip_lone_surrogate_escapes, Build,
    Context, Model, Options,
};
use super::raw::{self, BlockFields, BlockKind, MsgFields, Out, RawStr, Replayed};
use super::transform::transform;
use super::view::{
    kind_of, result_parts, write_data_url, write_opt_str, BlockKey, BlockView, Field, MsgView,
};
use super::{Payload, PayloadError};

/// Which of the three APIs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    OpenAI,
    Azure,
    Codex,
}

/// `streamSimple*`: `SimpleStreamOptions` → the provider's options (the same for all three).
pub(super) fn simple_options(model: &Model, simple: &Options<'_>) -> Map<String, Value> {
    effort_options(model, simple)
}

pub(super) fn build(input: &Build<'_>) -> Result<Payload, PayloadError> {
    let (model, context, options, now_ms) = input.parts();
    let flavor = match model.api.as_str() {
        "azure-openai-responses" => Flavor::Azure,
        "openai-codex-responses" => Flavor::Codex,
        _ => Flavor::OpenAI,
    };
    let allowed: &[&str] = match flavor {
        Flavor::Azure => &[
            "openai",
            "openai-codex",
            "opencode",
            "azure-openai-responses",
        ],
        _ => &["openai", "openai-codex", "opencode"],
    };
    let juice_wanted = flavor != Flavor::Codex
        && model.reasoning
        && options.truthy("reasoningEffort").is_none()
        && options.truthy("reasoningSummary").is_none()
        && match flavor {
            // The built-in models are named `GPT-5…`: only custom lowercase names match.
            Flavor::OpenAI => model.name.starts_with("gpt-5"),
            _ => model.name.to_lowercase().starts_with("gpt-5"),
        };
    let input = Input {
        model,
        allowed,
        include_system: flavor != Flavor::Codex,
        juice: juice_wanted,
    };
    // The input items straight from the stored bytes when every message has a shape that path
    // reads, else through value trees.
    let input_json = context
        .raw
        .then(|| write_input_raw(&input, context))
        .flatten();
    let from_bytes = input_json.is_some();
    let input_json = match input_json {
        Some(json) => json,
        None => convert_input(&input, context, now_ms)?,
    };
    // Written in place of this placeholder by `Payload`.
    let input = Value::Null;
    let mut params = Map::new();
    if flavor == Flavor::Codex {
        params.insert("model".to_owned(), json!(model.id));
        params.insert("store".to_owned(), Value::Bool(false));
        params.insert("stream".to_owned(), Value::Bool(true));
        if let Some(prompt) = context.system_prompt {
            params.insert("instructions".to_owned(), json!(prompt));
        }
        params.insert("input".to_owned(), input);
        let verbosity = options
            .truthy("textVerbosity")
            .cloned()
            .unwrap_or_else(|| json!("medium"));
        params.insert("text".to_owned(), json!({"verbosity": verbosity}));
        params.insert("include".to_owned(), json!(["reasoning.encrypted_content"]));
        if let Some(key) = options.get("sessionId") {
            params.insert("prompt_cache_key".to_owned(), key.clone());
        }
        params.insert("tool_choice".to_owned(), json!("auto"));
        params.insert("parallel_tool_calls".to_owned(), Value::Bool(true));
        if let Some(t) = options.get("temperature") {
            params.insert("temperature".to_owned(), t.clone());
        }
        if let Some(tools) = context.tools() {
            params.insert("tools".to_owned(), convert_tools(tools, Value::Null));
        }
        if let Some(effort) = options.get("reasoningEffort") {
            let effort = match effort.as_str() {
                Some(e) => json!(codex_clamp_effort(&model.id, e)),
                None => effort.clone(),
            };
            let summary = match options.get("reasoningSummary") {
                Some(s) if !s.is_null() => s.clone(),
                _ => json!("auto"),
            };
            params.insert(
                "reasoning".to_owned(),
                json!({"effort": effort, "summary": summary}),
            );
        }
        return Ok(Payload::spliced_from(
            Value::Object(params),
            &["input"],
            input_json,
            from_bytes,
        ));
    }

    if flavor == Flavor::Azure {
        let deployment = options
            .truthy("azureDeploymentName")
            .cloned()
            .unwrap_or_else(|| json!(model.id));
        params.insert("model".to_owned(), deployment);
        params.insert("input".to_owned(), input);
        params.insert("stream".to_owned(), Value::Bool(true));
        if let Some(key) = options.get("sessionId") {
            params.insert("prompt_cache_key".to_owned(), key.clone());
        }
    } else {
        // openai-responses.ts `resolveCacheRetention` (PI_CACHE_RETENTION is not read).
        let retention = options
            .truthy("cacheRetention")
            .and_then(Value::as_str)
            .unwrap_or("short");
        params.insert("model".to_owned(), json!(model.id));
        params.insert("input".to_owned(), input);
        params.insert("stream".to_owned(), Value::Bool(true));
        if retention != "none" {
            if let Some(key) = options.get("sessionId") {
                params.insert("prompt_cache_key".to_owned(), key.clone());
            }
        }
        if retention == "long" && model.base_url.contains("api.openai.com") {
            params.insert("prompt_cache_retention".to_owned(), json!("24h"));
        }
        params.insert("store".to_owned(), Value::Bool(false));
    }
    if let Some(max) = options.truthy("maxTokens") {
        params.insert("max_output_tokens".to_owned(), max.clone());
    }
    if let Some(t) = options.get("temperature") {
        params.insert("temperature".to_owned(), t.clone());
    }
    if flavor == Flavor::OpenAI {
        if let Some(tier) = options.get("serviceTier") {
            params.insert("service_tier".to_owned(), tier.clone());
        }
    }
    if let Some(tools) = context.tools() {
        params.insert("tools".to_owned(), convert_tools(tools, Value::Bool(false)));
    }
    if model.reasoning {
        let effort = options.truthy("reasoningEffort");
        let summary = options.truthy("reasoningSummary");
        if effort.is_some() || summary.is_some() {
            params.insert(
                "reasoning".to_owned(),
                json!({
                    "effort": effort.cloned().unwrap_or_else(|| json!("medium")),
                    "summary": summary.cloned().unwrap_or_else(|| json!("auto")),
                }),
            );
            params.insert("include".to_owned(), json!(["reasoning.encrypted_content"]));
        }
    }
    Ok(Payload::spliced_from(
        Value::Object(params),
        &["input"],
        input_json,
        from_bytes,
    ))
}

/// openai-codex-responses.ts `clampReasoningEffort`.
fn codex_clamp_effort<'e>(model_id: &str, effort: &'e str) -> &'e str {
    let id = model_id.rsplit('/').next().unwrap_or(model_id);
    let newer = ["gpt-5.2", "gpt-5.3", "gpt-5.4"]
        .iter()
        .any(|p| id.starts_with(p));
    if newer && effort == "minimal" {
        return "low";
    }
    if id == "gpt-5.1" && effort == "xhigh" {
        return "high";
    }
    if id == "gpt-5.1-codex-mini" {
        return if matches!(effort, "high" | "xhigh") {
            "high"
        } else {
            "medium"
        };
    }
    effort
}

/// `parseTextSignature`: `(id, phase)` from a legacy id or `{"v":1,"id",phase?}` JSON.
fn parse_text_signature(signature: &str) -> (String, Option<&'static str>) {
    plain_text_signature(signature).unwrap_or_else(|| parse_text_signature_json(signature))
}

fn parse_text_signature_json(signature: &str) -> (String, Option<&'static str>) {
    if signature.starts_with('{') {
        let stripped = strip_lone_surrogate_escapes(signature);
        let text = stripped.as_deref().unwrap_or(signature);
        if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) {
            if obj.get("v").and_then(Value::as_f64) == Some(1.0) {
                if let Some(Value::String(id)) = obj.get("id") {
                    let phase = match obj.get("phase").and_then(Value::as_str) {
                        Some("commentary") => Some("commentary"),
                        Some("final_answer") => Some("final_answer"),
                        _ => None,
                    };
                    return (id.clone(), phase);
                }
            }
        }
    }
    (signature.to_owned(), None)
}

/// [`parse_text_signature`] of the form pi-ai writes, `{"v":1,"id":"…"}` with an optional
/// `"phase"`, when its strings hold no escape or control character (read without a parser);
/// `None` for any other text.
fn plain_text_signature(signature: &str) -> Option<(String, Option<&'static str>)> {
    let plain = |s: &str| !s.bytes().any(|b| b < 0x20 || b == b'\\');
    let rest = signature.strip_prefix(r#"{"v":1,"id":""#)?;
    let (id, rest) = rest.split_once('"')?;
    let phase = match rest {
        "}" => None,
        _ => {
            let phase = rest.strip_prefix(r#","phase":""#)?.strip_suffix(r#""}"#)?;
            if phase.contains('"') || !plain(phase) {
                return None;
            }
            match phase {
                "commentary" => Some("commentary"),
                "final_answer" => Some("final_answer"),
                _ => None,
            }
        }
    };
    plain(id).then(|| (id.to_owned(), phase))
}

/// The `fc_`-prefixed, sanitised `call|item` id (`convertResponsesMessages`'s normalizer).
fn normalize_pair(id: &str) -> String {
    let mut parts = id.split('|');
    let call = sanitize_id_chars(parts.next().unwrap_or_default());
    let mut item = sanitize_id_chars(parts.next().unwrap_or("undefined"));
    if !item.starts_with("fc") {
        item = format!("fc_{item}");
    }
    let cut = |s: &str| s[..s.len().min(64)].trim_end_matches('_').to_owned();
    format!("{}|{}", cut(&call), cut(&item))
}

/// The tool-call id normalizer `convertResponsesMessages` passes to `transformMessages`: only
/// `call|item` ids of a provider that knows them are rewritten.
fn normalize_id(model: &Model, allowed: &[&str], id: &str) -> String {
    if !allowed.contains(&model.provider.as_str()) || !id.contains('|') {
        return id.to_owned();
    }
    normalize_pair(id)
}

/// The id (and phase) of the message item of an assistant text block with this
/// `textSignature` (`""` when it has none), the `index`th message of the context.
fn message_item_id(signature: &str, index: usize) -> (String, Option<&'static str>) {
    let (id, phase) = if signature.is_empty() {
        (String::new(), None)
    } else {
        parse_text_signature(signature)
    };
    let id = if id.is_empty() {
        format!("msg_{index}")
    } else if id.encode_utf16().count() > 64 {
        format!("msg_{}", short_hash(&id))
    } else {
        id
    };
    (id, phase)
}

/// The reasoning item a thinking block's `thinkingSignature` holds (`JSON.parse` of it).
fn reasoning_item(signature: &str) -> Result<Value, PayloadError> {
    // A lone surrogate escape parses in JS; drop it, as the deviation for replayed reasoning
    // items says.
    let stripped = strip_lone_surrogate_escapes(signature);
    serde_json::from_str::<Value>(stripped.as_deref().unwrap_or(signature))
        .map_err(|_| PayloadError::Upstream(json_parse_message(signature)))
}

/// How the `input` array is made, besides the messages.
struct Input<'m> {
    model: &'m Model,
    /// The providers whose `call|item` tool-call ids are normalised.
    allowed: &'m [&'m str],
    /// The system prompt as the first item (not for Codex, which sends it as `instructions`).
    include_system: bool,
    /// The `# Juice: 0 !important` developer item at the end (openai-responses.ts and
    /// azure-openai-responses.ts, for GPT-5 models without reasoning options).
    juice: bool,
}

const JUICE_ITEM: &str =
    r##"{"role":"developer","content":[{"type":"input_text","text":"# Juice: 0 !important"}]}"##;

/// openai-responses-shared.ts `convertResponsesMessages` over value trees: the replay layer of
/// `transform.rs`, then the same writers as the bytes path ([`write_input_raw`]).
fn convert_input(
    input: &Input<'_>,
    context: &Context<'_>,
    now_ms: i64,
) -> Result<Vec<u8>, PayloadError> {
    let model = input.model;
    let normalize = |id: &str, _: &Value| normalize_id(model, input.allowed, id);
    let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
    let mut w = Items::new(4096, input, context.system());
    // `msg_<index>` ids count the messages that were not skipped as empty.
    let mut index = 0usize;
    for msg in &messages {
        let counted = match msg.get("role").and_then(Value::as_str) {
            Some("user") => write_user(&mut w, msg, model),
            Some("assistant") => {
                let blocks = blocks_of(msg).iter().map(|b| (kind_of(b), b, None));
                write_assistant(&mut w, msg, blocks, model, index)
            }
            Some("toolResult") => write_tool_result(&mut w, msg, None, model).map(|()| true),
            // Any other role sends nothing but still counts.
            _ => Some(true),
        };
        // The value path's readers never answer `None`: only a reasoning item that is not
        // JSON stops it, with pi-ai's error.
        let Some(counted) = counted else {
            return Err(w.error.take().unwrap_or_else(|| PayloadError::Invalid {
                what: "message",
                reason: "a shape the Responses writers do not read".to_owned(),
            }));
        };
        index += usize::from(counted);
    }
    Ok(w.finish(input.juice))
}

/// The message V8's `JSON.parse` throws for text that is not JSON (its usual form).
fn json_parse_message(text: &str) -> String {
    let first = text.chars().next().unwrap_or(' ');
    let head: String = text.chars().take(10).collect();
    let ellipsis = if text.chars().count() > 10 { "..." } else { "" };
    format!("Unexpected token '{first}', \"{head}\"{ellipsis} is not valid JSON")
}

fn convert_tools(tools: &[Value], strict: Value) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| {
                let mut out = Map::new();
                out.insert("type".to_owned(), json!("function"));
                for key in ["name", "description", "parameters"] {
                    if let Some(v) = tool.get(key) {
                        out.insert(key.to_owned(), v.clone());
                    }
                }
                out.insert("strict".to_owned(), strict.clone());
                Value::Object(out)
            })
            .collect(),
    )
}

/// [`convert_input`] written straight from the stored messages: unmodified text, tool
/// arguments, results, image data and replayed reasoning items are copied from the stored
/// bytes. `None` when a message has a shape only the value-tree path handles (the caller then
/// runs that).
fn write_input_raw(input: &Input<'_>, context: &Context<'_>) -> Option<Vec<u8>> {
    let model = input.model;
    let normalize = |id: &str| normalize_id(model, input.allowed, id);
    let replay = raw::replay(context.llm, model, &normalize)?;
    let total: usize = context.llm.messages().iter().map(|m| m.len()).sum();
    let mut w = Items::new(total + 256, input, context.system());
    // `msg_<index>` ids count the messages that were not skipped as empty.
    let mut index = 0usize;
    for msg in &replay.messages {
        let counted = match msg {
            Replayed::User(fields) => write_user(&mut w, fields, model)?,
            Replayed::Assistant(fields, range) => {
                let blocks = replay.blocks[range.clone()]
                    .iter()
                    .map(|b| (b.kind, b.fields, b.new_id.as_deref()));
                write_assistant(&mut w, fields, blocks, model, index)?
            }
            Replayed::ToolResult { fields, new_id } => {
                write_tool_result(&mut w, fields, new_id.as_deref(), model)?;
                true
            }
            // What the value path's writer makes of transform.rs's synthetic result (one
            // text, "No result provided").
            Replayed::Synthetic { id } => {
                w.open();
                w.out.raw(r#"{"type":"function_call_output","call_id":"#);
                w.out.str(id.split('|').next().unwrap_or_default());
                w.out.raw(r#","output":"No result provided"}"#);
                true
            }
        };
        index += usize::from(counted);
    }
    Some(w.finish(input.juice))
}

/// The items of the `input` array being written, by both paths.
struct Items {
    out: Out,
    /// Whether an item was written (the next one needs a comma).
    any: bool,
    /// pi-ai's error for the input, when a writer stopped on one (a reasoning item that is
    /// not JSON).
    error: Option<PayloadError>,
}

impl Items {
    /// The array opened, with the system prompt as its first item when `input` sends it
    /// there (a `developer` item for reasoning models).
    fn new(capacity: usize, input: &Input<'_>, system: Option<&str>) -> Items {
        let mut w = Items {
            out: Out::with_capacity(capacity),
            any: false,
            error: None,
        };
        w.out.raw("[");
        if let Some(prompt) = system.filter(|_| input.include_system) {
            w.open();
            w.out.raw(if input.model.reasoning {
                r#"{"role":"developer","content":"#
            } else {
                r#"{"role":"system","content":"#
            });
            w.out.str(prompt);
            w.out.raw("}");
        }
        w
    }

    /// Before an item.
    fn open(&mut self) {
        if self.any {
            self.out.raw(",");
        }
        self.any = true;
    }

    /// Where the items stand, to go back to with [`Items::reset`].
    fn mark(&self) -> (usize, bool) {
        (self.out.len(), self.any)
    }

    fn reset(&mut self, (len, any): (usize, bool)) {
        self.out.buf.truncate(len);
        self.any = any;
    }

    /// The array closed, after the juice item when `juice`.
    fn finish(mut self, juice: bool) -> Vec<u8> {
        if juice {
            self.open();
            self.out.raw(JUICE_ITEM);
        }
        self.out.raw("]");
        self.out.buf
    }
}

/// The string a stored string stands for. A canonical text's escapes are only the short ones
/// and `\u00XX` control characters, so it is decoded here without a parser.
fn decoded<'s>(s: &'s RawStr<'_>) -> Cow<'s, str> {
    let RawStr::Canonical(inner) = s else {
        return s.text();
    };
    let b = inner.as_bytes();
    let Some(first) = memchr::memchr(b'\\', b) else {
        return Cow::Borrowed(inner);
    };
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut at = first;
    loop {
        out.extend_from_slice(&b[i..at]);
        let (byte, len) = match b.get(at + 1) {
            Some(b'"') => (b'"', 2),
            Some(b'\\') => (b'\\', 2),
            Some(b'b') => (0x08, 2),
            Some(b'f') => (0x0c, 2),
            Some(b'n') => (b'\n', 2),
            Some(b'r') => (b'\r', 2),
            Some(b't') => (b'\t', 2),
            Some(b'u') => match inner.get(at + 4..at + 6).map(|h| u8::from_str_radix(h, 16)) {
                Some(Ok(byte)) if byte < 0x20 => (byte, 6),
                _ => return s.text(),
            },
            _ => return s.text(),
        };
        out.push(byte);
        i = at + len;
        match memchr::memchr(b'\\', &b[i..]) {
            Some(pos) => at = i + pos,
            None => break,
        }
    }
    out.extend_from_slice(&b[i..]);
    String::from_utf8(out).map_or_else(|_| s.text(), Cow::Owned)
}

// The rules of openai-responses-shared.ts `convertResponsesMessages`, once for both paths
// (`payload::view`).

/// The fields only these rules read, beyond [`MsgView`] and [`BlockView`]: of a message, who
/// wrote it; of a text block, its message item id.
#[derive(Clone, Copy)]
enum Extra {
    Model,
    Provider,
    Api,
    TextSignature,
}

trait ExtraView<'a> {
    fn extra(&self, key: Extra) -> Option<Field<'a>>;
}

impl<'a> ExtraView<'a> for &MsgFields<'a> {
    #[inline]
    fn extra(&self, key: Extra) -> Option<Field<'a>> {
        match key {
            Extra::Model => self.model,
            Extra::Provider => self.provider,
            Extra::Api => self.api,
            Extra::TextSignature => None,
        }
        .map(Field::Raw)
    }
}

impl<'a> ExtraView<'a> for BlockFields<'a> {
    #[inline]
    fn extra(&self, key: Extra) -> Option<Field<'a>> {
        match key {
            Extra::TextSignature => self.text_signature.map(Field::Raw),
            _ => None,
        }
    }
}

impl<'a> ExtraView<'a> for &'a Value {
    #[inline]
    fn extra(&self, key: Extra) -> Option<Field<'a>> {
        let name = match key {
            Extra::Model => "model",
            Extra::Provider => "provider",
            Extra::Api => "api",
            Extra::TextSignature => "textSignature",
        };
        self.get(name).map(Field::Value)
    }
}

/// A field read as pi-ai reads a string it expects ([`Field::str`]): absent reads as not a
/// string.
#[allow(clippy::option_option)]
#[inline]
fn str_field(field: Option<Field<'_>>) -> Option<Option<RawStr<'_>>> {
    match field {
        Some(f) => f.str(),
        None => Some(None),
    }
}

/// The string a field holds, `""` when it is not one (`str_of`).
#[inline]
fn text_of<'s>(s: &'s Option<RawStr<'_>>) -> Cow<'s, str> {
    s.as_ref().map(decoded).unwrap_or_default()
}

/// A tool call's id, or the `toolCallId` of its result: the one the replay layer gave, else
/// the stored one (`""` when it is not a string).
#[inline]
fn call_id<'s>(new_id: Option<&'s str>, stored: &'s Option<RawStr<'_>>) -> Cow<'s, str> {
    match new_id {
        Some(id) => Cow::Borrowed(id),
        None => text_of(stored),
    }
}

/// `{"type":"input_image","detail":"auto","image_url":"data:<mimeType>;base64,<data>"}`: the
/// escaped inner texts of both strings make the escaped text of the URL.
fn write_input_image<'a>(out: &mut Out, block: impl BlockView<'a>) -> Option<()> {
    out.raw(r#"{"type":"input_image","detail":"auto","image_url":""#);
    write_data_url(out, block)?;
    out.raw(r#""}"#);
    Some(())
}

/// A user message; whether it counts as a message (`false` when its content had no part to
/// send, nothing written then).
fn write_user<'a>(w: &mut Items, msg: impl MsgView<'a>, model: &Model) -> Option<bool> {
    let Some(content) = msg.content() else {
        return Some(true);
    };
    if let Some(text) = content.str()? {
        w.open();
        w.out
            .raw(r#"{"role":"user","content":[{"type":"input_text","text":"#);
        w.out.copy_str(&text);
        w.out.raw("}]}");
        return Some(true);
    }
    if !content.is_array() {
        // Any other content sends nothing but still counts.
        return Some(true);
    }
    let mark = w.mark();
    w.open();
    w.out.raw(r#"{"role":"user","content":["#);
    let mut parts = 0usize;
    msg.for_each_block(|block| {
        let is_text = block.is("text")?;
        if !is_text && !model.accepts_images {
            return Some(());
        }
        if parts > 0 {
            w.out.raw(",");
        }
        parts += 1;
        if is_text {
            w.out.raw(r#"{"type":"input_text","text":"#);
            write_opt_str(&mut w.out, block.str(BlockKey::Text)?.as_ref());
            w.out.raw("}");
        } else {
            write_input_image(&mut w.out, block)?;
        }
        Some(())
    })?;
    if parts == 0 {
        w.reset(mark);
        return Some(false);
    }
    w.out.raw("]}");
    Some(true)
}

/// Whether a field holds the string `want` (`str_of(msg, key) === want`).
#[inline]
fn holds<'a>(msg: &impl ExtraView<'a>, key: Extra, want: &str) -> Option<bool> {
    Some(text_of(&str_field(msg.extra(key))?) == want)
}

/// An assistant message's items from its blocks after the replay layer (what each became,
/// the block, a tool call's new id); whether it counts as a message (`false` when it had
/// none, nothing written then).
fn write_assistant<'a, 'i, B: BlockView<'a> + ExtraView<'a>>(
    w: &mut Items,
    msg: impl ExtraView<'a>,
    blocks: impl Iterator<Item = (BlockKind, B, Option<&'i str>)>,
    model: &Model,
    index: usize,
) -> Option<bool> {
    let mark = w.mark();
    // A call's `fc_` item id is only valid for the model that made it.
    let different_model = !holds(&msg, Extra::Model, &model.id)?
        && holds(&msg, Extra::Provider, &model.provider)?
        && holds(&msg, Extra::Api, &model.api)?;
    let mut wrote = false;
    for (kind, block, new_id) in blocks {
        match kind {
            BlockKind::Thinking => {
                let signature = block.str(BlockKey::ThinkingSignature)?;
                let signature = text_of(&signature);
                if signature.is_empty() {
                    continue;
                }
                w.open();
                if let Err(e) = write_reasoning_item(&mut w.out, &signature) {
                    w.error = Some(e);
                    return None;
                }
            }
            BlockKind::Text | BlockKind::ConvertedText => {
                let signature = str_field(block.extra(Extra::TextSignature))?;
                let (id, phase) = message_item_id(&text_of(&signature), index);
                w.open();
                w.out.raw(
                    r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"#,
                );
                write_opt_str(&mut w.out, block.str(BlockKey::Text)?.as_ref());
                w.out
                    .raw(r#","annotations":[]}],"status":"completed","id":"#);
                w.out.str(&id);
                if let Some(phase) = phase {
                    w.out.raw(r#","phase":"#);
                    w.out.str(phase);
                }
                w.out.raw("}");
            }
            BlockKind::ToolCall => {
                let stored = block.str(BlockKey::Id)?;
                let id = call_id(new_id, &stored);
                let mut parts = id.split('|');
                let call_id = parts.next().unwrap_or_default();
                let item_id = parts
                    .next()
                    .filter(|item| !(different_model && item.starts_with("fc_")));
                w.open();
                w.out.raw(r#"{"type":"function_call""#);
                if let Some(item_id) = item_id {
                    w.out.raw(r#","id":"#);
                    w.out.str(item_id);
                }
                w.out.raw(r#","call_id":"#);
                w.out.str(call_id);
                w.out.raw(r#","name":"#);
                match block.field(BlockKey::Name) {
                    Some(name) => name.copy(&mut w.out),
                    None => w.out.raw("null"),
                }
                if let Some(arguments) = block.field(BlockKey::Arguments) {
                    // `JSON.stringify(arguments)` as a string.
                    w.out.raw(r#","arguments":"#);
                    arguments.write_stringified(&mut w.out);
                }
                w.out.raw("}");
            }
            // A server compaction item, verbatim (`payload::compaction_view` left only the
            // latest, first in its turn, and nothing before it).
            BlockKind::Other => {
                if !block.is("compaction")? {
                    continue;
                }
                let Some(raw) = block.compaction_raw() else {
                    continue;
                };
                w.open();
                raw.copy(&mut w.out);
            }
        }
        wrote = true;
    }
    if !wrote {
        w.reset(mark);
    }
    Some(wrote)
}

/// A replayed reasoning item (`JSON.parse` of the signature): its text as it is when
/// `JSON.stringify` would write it so, else parsed and written again; pi-ai's error when it
/// is not JSON.
fn write_reasoning_item(out: &mut Out, signature: &str) -> Result<(), PayloadError> {
    // A control character can only stand inside a string, where JSON does not allow it.
    if raw::is_canonical(signature) && !signature.bytes().any(|b| b < 0x20) {
        out.raw(signature);
    } else {
        out.value(&reasoning_item(signature)?);
    }
    Ok(())
}

/// A `function_call_output` item (openai-responses-shared.ts, tool results); `new_id` is the
/// id the replay layer gave its call, when it changed.
fn write_tool_result<'a>(
    w: &mut Items,
    msg: impl MsgView<'a>,
    new_id: Option<&str>,
    model: &Model,
) -> Option<()> {
    let stored = str_field(msg.tool_call_id())?;
    let id = call_id(new_id, &stored);
    let (texts, images) = result_parts(msg, true)?;
    // `texts.join("\n")` is empty only for no text or one empty text.
    let text_empty = match texts.as_slice() {
        [] => true,
        [only] => only.as_ref().is_none_or(RawStr::is_empty),
        _ => false,
    };
    let write_text = |out: &mut Out| {
        out.raw("\"");
        raw::write_lines(out, &texts);
        out.raw("\"");
    };
    w.open();
    w.out.raw(r#"{"type":"function_call_output","call_id":"#);
    w.out.str(id.split('|').next().unwrap_or_default());
    w.out.raw(r#","output":"#);
    if !images.is_empty() && model.accepts_images {
        w.out.raw("[");
        if !text_empty {
            w.out.raw(r#"{"type":"input_text","text":"#);
            write_text(&mut w.out);
            w.out.raw("},");
        }
        for (n, image) in images.into_iter().enumerate() {
            if n > 0 {
                w.out.raw(",");
            }
            write_input_image(&mut w.out, image)?;
        }
        w.out.raw("]");
    } else if text_empty {
        w.out.raw(r#""(see attached image)""#);
    } else {
        write_text(&mut w.out);
    }
    w.out.raw("}");
    Some(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{lossy, paths_agree, request, transcript};
    use super::*;

    #[test]
    fn pair_ids_are_sanitised_prefixed_and_trimmed() {
        assert_eq!(normalize_pair("call+1|abc/="), "call_1|fc_abc");
        assert_eq!(normalize_pair("c|fc_x"), "c|fc_x");
    }

    #[test]
    fn codex_effort_clamps() {
        assert_eq!(codex_clamp_effort("openai/gpt-5.2-codex", "minimal"), "low");
        assert_eq!(codex_clamp_effort("gpt-5.1-codex-mini", "low"), "medium");
        assert_eq!(codex_clamp_effort("gpt-5.1", "xhigh"), "high");
    }

    fn model(provider: &str, api: &str, id: &str, reasoning: bool, images: bool) -> Value {
        let input = if images {
            json!(["text", "image"])
        } else {
            json!(["text"])
        };
        json!({"id": id, "name": id, "api": api, "provider": provider,
            "baseUrl": "https://api.openai.com/v1", "reasoning": reasoning,
            "input": input, "maxTokens": 128000})
    }

    /// Both paths' bodies (they must be equal, or both fail alike); whether the bytes path
    /// was taken.
    fn both_paths(
        model: &Value,
        messages: &crate::transcript::Transcript,
        system: Option<&str>,
    ) -> bool {
        let request = request(model, system, Map::new(), false);
        paths_agree(&request, messages, lossy).is_some_and(|fast| fast.written_from_bytes())
    }

    /// Responses shapes in stored forms `JSON.stringify` would not write: reasoning items
    /// replayed from `thinkingSignature` (whitespace, escapes, floats, lone surrogates, a
    /// redacted one), message item ids from `textSignature` (v1 JSON with a phase, legacy,
    /// longer than 64 units, escaped, not a string), `call|item` ids (escaped, another
    /// model's `fc_` item, remapped), tool results with images, empty and odd contents,
    /// skipped messages before a `msg_<index>` id, synthetic results. Every prefix, on each
    /// flavour, with and without images and reasoning, with and without a system prompt.
    #[test]
    fn stored_bytes_path_writes_what_the_value_path_writes() {
        let lines = [
            r#"{"role":"user","content":"hi \u00e9\/ there\n"}"#,
            r#"{"role":"user","content":[]}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"{ \"type\": \"reasoning\", \"id\":\"rs_1\", \"summary\": [ ], \"n\": 1.50 }"},{"type":"thinking","thinking":"t2","thinkingSignature":"{\"type\":\"reasoning\",\"id\":\"rs_2\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"caf\\u00e9 \\ud800 x\"}],\"encrypted_content\":\"gAA\/=\"}"},{"type":"thinking","thinking":"t3","thinkingSignature":"{\"type\":\"reasoning\",\"id\":\"rs_3\",\"summary\":[],\"encrypted_content\":\"gAAé\"}"},{"type":"thinking","thinking":"","redacted":true,"thinkingSignature":"{\"type\":\"reasoning\",\"id\":\"rs_4\"}"},{"type":"thinking","thinking":"unsigned","thinkingSignature":""},{"type":"thinking","thinking":"num","thinkingSignature":5},{"type":"text","text":"a\u0001","textSignature":"{\"v\":1,\"id\":\"msg_a\",\"phase\":\"final_answer\"}"},{"type":"text","text":"b","textSignature":"msg_legacy"},{"type":"text","text":" ","textSignature":"msg_0123456789012345678901234567890123456789012345678901234567890123456789"},{"type":"text","text":7,"textSignature":"{\"v\" : 1, \"id\" : \"msg_\\u0062\"}"},{"type":"text","textSignature":9},{"type":"toolCall","id":"call_1|fc_1","name":"bash","arguments":{"a": 1.50, "b":[1e2,-0,12345678901234567890],"a":"dup"}},{"type":"toolCall","id":"call_2|fc_2","name":"read","arguments":null},{"type":"toolCall","id":"call_3","arguments":{}},{"type":"toolCall","id":"call_4|fc_4","name":"x"}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse"}"#,
            r#"{"role":"toolResult","toolCallId":"call_1|fc_1","toolName":"bash","content":[{"type":"text","text":"out\n"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":""}],"isError":false}"#,
            r#"{"role":"toolResult","toolCallId":"call_2|fc_2","content":[{"type":"image","data":"QQ\u003d\u003d","mimeType":"image\/jpeg"}],"isError":true}"#,
            r#"{"role":"toolResult","toolCallId":"call_3","content":[{"type":"text","text":""}]}"#,
            r#"{"role":"toolResult","toolCallId":"call_4|fc_4","content":"not an array"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"other model","textSignature":"msg_o"},{"type":"thinking","thinking":"their thoughts","thinkingSignature":"{}"},{"type":"toolCall","id":"call_5|fc_5","name":"bash","arguments":{"x":"y"}}],"api":"openai-responses","provider":"openai","model":"gpt-4o","stopReason":"toolUse"}"#,
            r#"{ "role" : "user" , "content" : [ {"type":"text","text":"  "}, {"type":"image","data":"QQ==","mimeType":"image/jpeg"}, {"type":"text","text":"look"} ] }"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"toolu_01+x/y","name":"bash","arguments":{"c":"ls"}},{"type":"toolCall","id":"a|b/c","name":"bash","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x","stopReason":"toolUse"}"#,
            r#"{"role":"toolResult","toolCallId":"a|b/c","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}],"isError":false}"#,
            r#"{"role":"assistant","content":[{"type":"other","x":1}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"stop"}"#,
            r#"{"role":"user","content":null}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"err"}],"api":"x","provider":"y","model":"z","stopReason":"error"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"after skips"}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"stop"}"#,
            r#"{"role":"user","content":[{"type":"image","data":"QQ==","mimeType":"image/png"}]}"#,
            r#"{"role":"user","content":"last"}"#,
        ];
        let all = transcript(&lines);
        let models = [
            model("openai", "openai-responses", "gpt-5", true, true),
            model("openai", "openai-responses", "gpt-5", false, false),
            model("openai", "openai-responses", "gpt-4o", true, true),
            model("opencode", "openai-responses", "gpt-5", true, true),
            model(
                "azure-openai-responses",
                "azure-openai-responses",
                "gpt-5",
                true,
                true,
            ),
            model(
                "openai-codex",
                "openai-codex-responses",
                "gpt-5",
                true,
                true,
            ),
        ];
        for model in &models {
            for system in [None, Some("sys \"prompt\"\n\u{1}é")] {
                for n in 0..=lines.len() {
                    let prefix =
                        crate::transcript::Transcript::from_messages(all.messages()[..n].to_vec());
                    // Every shape here is one the bytes path reads.
                    assert!(both_paths(model, &prefix, system), "{n} messages, {model}");
                }
            }
        }
        // Shapes it hands over: a call id with an escape; the value path writes both.
        let escaped_id = lines[2].replace("call_1|fc_1", r"call\u005f1|fc_1");
        let mut odd = lines.to_vec();
        odd[2] = &escaped_id;
        for model in &models {
            assert!(!both_paths(model, &transcript(&odd), Some("sys")));
        }
    }

    /// A signature that is not JSON is pi-ai's error on both paths; one with a control
    /// character in a string too (JSON does not allow it).
    #[test]
    fn unparsable_reasoning_items_fail_on_both_paths() {
        let gpt5 = model("openai", "openai-responses", "gpt-5", true, true);
        for signature in [r#""opaque""#, r#""{\"a\":\"x\ny\"}""#, r#""{\"a\":1} x""#] {
            let line = format!(
                r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"t","thinkingSignature":{signature}}}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"stop"}}"#
            );
            let messages = transcript(&[line.as_str()]);
            let request = request(&gpt5, None, Map::new(), false);
            let fast = super::super::build_payload_with(&request, &messages, true);
            assert!(
                matches!(fast, Err(PayloadError::Upstream(_))),
                "{signature}"
            );
            assert!(!both_paths(&gpt5, &messages, None));
        }
    }

    /// `benches/test_payload.py`'s `make_messages(n)` (user, assistant from `gpt-5` with
    /// thinking, text and a call, tool result), with reasoning items and message ids when
    /// `signed`.
    fn bench_messages(n: usize, signed: bool) -> crate::transcript::Transcript {
        let mut lines = Vec::with_capacity(n);
        let mut i = 0;
        while lines.len() < n {
            lines.push(format!(
                r#"{{"role":"user","content":"Step {i}: run the tests in pkg{i}.","timestamp":{i}}}"#
            ));
            let call = format!("call_{i}|fc_{i:08x}+/=");
            let (thinking_sig, text_sig) = if signed {
                (
                    format!(
                        r#","thinkingSignature":"{{\"type\":\"reasoning\",\"id\":\"rs_{i:048x}\",\"summary\":[{{\"type\":\"summary_text\",\"text\":\"I should run pytest for pkg{i}.\"}}],\"encrypted_content\":\"gAAAAAB{}\"}}""#,
                        "x".repeat(400)
                    ),
                    format!(
                        r#","textSignature":"{{\"v\":1,\"id\":\"msg_{i:048x}\",\"phase\":\"commentary\"}}""#
                    ),
                )
            } else {
                (String::new(), String::new())
            };
            lines.push(format!(
                r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"I should run pytest for pkg{i}."{thinking_sig}}},{{"type":"text","text":"Running the tests of pkg{i} now."{text_sig}}},{{"type":"toolCall","id":"{call}","name":"bash","arguments":{{"command":"pytest pkg{i} -q","timeout":120}}}}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse","timestamp":{i}}}"#
            ));
            let output = format!("{i} passed in 0.{}s\\n", i % 10).repeat(4);
            lines.push(format!(
                r#"{{"role":"toolResult","toolCallId":"{call}","toolName":"bash","content":[{{"type":"text","text":"{output}"}}],"isError":false,"timestamp":{i}}}"#
            ));
            i += 1;
        }
        lines.truncate(n);
        crate::transcript::Transcript::new(
            lines
                .into_iter()
                .map(crate::base::JsonText::owned)
                .collect(),
        )
    }

    fn bench_request(id: &str) -> super::super::PayloadRequest {
        super::super::PayloadRequest {
            guard: false,
            model: model("openai", "openai-responses", id, true, true),
            system_prompt: Some("You are a coding agent. Be concise.".to_owned()),
            tools: None,
            options: Map::new(),
            simple: false,
            now_ms: 0,
        }
    }

    #[inline(never)]
    fn measured_bytes_path(
        request: &super::super::PayloadRequest,
        t: &crate::transcript::Transcript,
    ) -> Vec<u8> {
        let payload = super::super::build_payload_with(request, t, true).unwrap();
        assert!(payload.written_from_bytes());
        payload.to_json()
    }

    #[inline(never)]
    fn measured_value_path(
        request: &super::super::PayloadRequest,
        t: &crate::transcript::Transcript,
    ) -> Vec<u8> {
        super::super::build_payload_with(request, t, false)
            .unwrap()
            .to_json()
    }

    /// Both paths over 5,000 messages, for instruction counts (run under callgrind, toggling
    /// collection on `measured_*`; the command is in the report of this change).
    fn measure(id: &str, signed: bool) {
        let t = bench_messages(5000, signed);
        let request = bench_request(id);
        // The transcript's cached message facts, as after its first use (not measured).
        super::super::build_payload_with(&request, &t, true).unwrap();
        let fast = measured_bytes_path(&request, &t);
        let slow = measured_value_path(&request, &t);
        assert!(fast == slow);
    }

    /// The model that made the turns (unsigned thinking is dropped).
    #[test]
    #[ignore = "a measurement"]
    fn measure_same_model() {
        measure("gpt-5", false);
    }

    /// The model that made the turns, replaying its reasoning items and message ids.
    #[test]
    #[ignore = "a measurement"]
    fn measure_same_model_signed() {
        measure("gpt-5", true);
    }

    /// Another model of the provider (thinking as text, ids normalised).
    #[test]
    #[ignore = "a measurement"]
    fn measure_other_model() {
        measure("gpt-4o", false);
    }

    /// The parser-free readers give what the parsers give, on the texts they accept.
    #[test]
    fn fast_readers_agree_with_the_parsers() {
        for signature in [
            r#"{"v":1,"id":"msg_1"}"#,
            r#"{"v":1,"id":"msg_1","phase":"commentary"}"#,
            r#"{"v":1,"id":"msg_1","phase":"final_answer"}"#,
            r#"{"v":1,"id":"msg_1","phase":"other"}"#,
            r#"{"v":1,"id":"","phase":"commentary"}"#,
            r#"{"v":1,"id":"é😀"}"#,
            r#"{"v":1,"id":"a\"b"}"#,
            r#"{"v":1,"id":"a\u0062"}"#,
            "{\"v\":1,\"id\":\"a\nb\"}",
            r#"{"v":1,"id":"a","phase":"x\"y"}"#,
            r#"{"v":1,"id":"a","phase":"commentary"} "#,
            r#"{"v":1,"id":"a"}x"#,
            r#"{"v":1,"id":"a","other":1}"#,
            "msg_legacy",
        ] {
            let json = parse_text_signature_json(signature);
            if let Some(fast) = plain_text_signature(signature) {
                assert_eq!(fast, json, "{signature}");
            }
            assert_eq!(parse_text_signature(signature), json, "{signature}");
        }
        assert!(plain_text_signature(r#"{"v":1,"id":"msg_1","phase":"commentary"}"#).is_some());
        for text in [
            r#""""#,
            r#""plain é""#,
            r#""a\"b\\c\n\t\r\b\f\u0001\u001f end""#,
            r#""\\""#,
            r#""\u00e9\/""#,
        ] {
            let s = RawStr::of(text).unwrap();
            assert_eq!(decoded(&s), s.text(), "{text}");
        }
    }

    #[test]
    fn signatures_parse_as_upstream() {
        assert_eq!(
            parse_text_signature(r#"{"v":1,"id":"msg_1","phase":"commentary"}"#),
            ("msg_1".to_owned(), Some("commentary"))
        );
        assert_eq!(
            parse_text_signature("msg_legacy"),
            ("msg_legacy".to_owned(), None)
        );
        assert!(!short_hash("x".repeat(80).as_str()).is_empty());
    }
}
