//! The Mistral body of pi-mono 0.58.3 `packages/ai/src/providers/mistral.ts`
//! (`buildChatPayload`, `toChatMessages`, `toFunctionTools`, `streamSimpleMistral`): the
//! `@mistralai/mistralai` request object, camelCase as the SDK takes it.

use serde_json::{json, Map, Value};

use super::model::{
    base_options, blocks_of, clamp_reasoning, js_stringify, result_texts, str_of, Context, Model,
    Options,
};
use super::openai_completions::{synthetic_call, write_stringified};
use super::raw::{self, text_raw, Block, BlockFields, BlockKind, MsgFields, Out, RawStr, Replayed};
use super::transform::{transform, MistralIds};
use super::{Payload, PayloadError};
use crate::base::{is_js_whitespace, is_truthy, js_trim};

const NO_IMAGES: &str = "(image omitted: model does not support images)";

pub(super) fn simple_options(model: &Model, simple: &Options<'_>) -> Map<String, Value> {
    let mut out = base_options(model, simple.map);
    let reasoning = simple
        .truthy("reasoning")
        .and_then(Value::as_str)
        .map(clamp_reasoning);
    if model.reasoning && reasoning.is_some() {
        out.insert("promptMode".to_owned(), json!("reasoning"));
    }
    out
}

pub(super) fn build(
    model: &Model,
    context: &Context<'_>,
    options: &Options<'_>,
    now_ms: i64,
) -> Result<Payload, PayloadError> {
    // The messages straight from the stored bytes when every message has a shape that path
    // reads, else through value trees.
    let messages_json = context
        .raw
        .then(|| write_messages_raw(model, context))
        .flatten();
    let mut chat = Vec::new();
    if messages_json.is_none() {
        let ids = MistralIds::default();
        let normalize = |id: &str, _: &Value| ids.normalize(id);
        let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
        chat = to_chat_messages(&messages, model.accepts_images);
    }
    let mut payload = Map::new();
    payload.insert("model".to_owned(), json!(model.id));
    payload.insert("stream".to_owned(), Value::Bool(true));
    if let Some(tools) = context.tools().filter(|t| !t.is_empty()) {
        let tools: Vec<Value> = tools
            .iter()
            .map(|tool| {
                let mut function = Map::new();
                for key in ["name", "description", "parameters"] {
                    if let Some(v) = tool.get(key) {
                        function.insert(key.to_owned(), v.clone());
                    }
                }
                function.insert("strict".to_owned(), Value::Bool(false));
                json!({"type": "function", "function": function})
            })
            .collect();
        payload.insert("tools".to_owned(), Value::Array(tools));
    }
    if let Some(t) = options.get("temperature") {
        payload.insert("temperature".to_owned(), t.clone());
    }
    if let Some(m) = options.get("maxTokens") {
        payload.insert("maxTokens".to_owned(), m.clone());
    }
    if let Some(choice) = options.truthy("toolChoice") {
        let choice = match choice {
            Value::String(_) => choice.clone(),
            other => {
                json!({"type": "function", "function": {"name": other.get("function").and_then(|f| f.get("name")).cloned().unwrap_or(Value::Null)}})
            }
        };
        payload.insert("toolChoice".to_owned(), choice);
    }
    if let Some(mode) = options.truthy("promptMode") {
        payload.insert("promptMode".to_owned(), mode.clone());
    }
    if messages_json.is_some() {
        // Written in place of this placeholder by `Payload`.
        payload.insert("messages".to_owned(), Value::Null);
    } else {
        if let Some(prompt) = context.system() {
            chat.insert(0, json!({"role": "system", "content": prompt}));
        }
        payload.insert("messages".to_owned(), Value::Array(chat));
    }
    // Key order as the SDK object is built (messages second).
    let mut ordered = Map::new();
    for key in ["model", "stream", "messages"] {
        if let Some(v) = payload.shift_remove(key) {
            ordered.insert(key.to_owned(), v);
        }
    }
    ordered.extend(payload);
    Ok(Payload::spliced(
        Value::Object(ordered),
        &["messages"],
        messages_json,
    ))
}

fn image_url(block: &Value) -> Value {
    json!({
        "type": "image_url",
        "imageUrl": format!("data:{};base64,{}", str_of(block, "mimeType"), str_of(block, "data")),
    })
}

/// mistral.ts `buildToolResultText`.
fn tool_result_text(text: &str, has_images: bool, supports_images: bool, is_error: bool) -> String {
    let trimmed = js_trim(text);
    let prefix = if is_error { "[tool error] " } else { "" };
    if !trimmed.is_empty() {
        let suffix = if has_images && !supports_images {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        return format!("{prefix}{trimmed}{suffix}");
    }
    if has_images {
        let body = if supports_images {
            "(see attached image)"
        } else {
            NO_IMAGES
        };
        return format!("{prefix}{body}");
    }
    format!("{prefix}(no tool output)")
}

fn to_chat_messages(messages: &[Value], supports_images: bool) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    for msg in messages {
        match msg.get("role").and_then(Value::as_str) {
            Some("user") => {
                let items = match msg.get("content") {
                    Some(Value::String(s)) => {
                        out.push(json!({"role": "user", "content": s}));
                        continue;
                    }
                    Some(Value::Array(items)) => items,
                    _ => continue,
                };
                let had_images = items.iter().any(|i| i["type"] == "image");
                let content: Vec<Value> = items
                    .iter()
                    .filter(|i| i["type"] == "text" || supports_images)
                    .map(|i| {
                        if i["type"] == "text" {
                            json!({"type": "text", "text": str_of(i, "text")})
                        } else {
                            image_url(i)
                        }
                    })
                    .collect();
                if !content.is_empty() {
                    out.push(json!({"role": "user", "content": content}));
                } else if had_images && !supports_images {
                    out.push(json!({"role": "user", "content": NO_IMAGES}));
                }
            }
            Some("assistant") => {
                let mut parts = Vec::new();
                let mut calls = Vec::new();
                for block in blocks_of(msg) {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            let text = str_of(block, "text");
                            if !js_trim(text).is_empty() {
                                parts.push(json!({"type": "text", "text": text}));
                            }
                        }
                        Some("thinking") => {
                            let text = str_of(block, "thinking");
                            if !js_trim(text).is_empty() {
                                parts.push(json!({"type": "thinking", "thinking": [{"type": "text", "text": text}]}));
                            }
                        }
                        _ => {
                            let args = match block.get("arguments") {
                                Some(v) if is_truthy(v) => v.clone(),
                                _ => json!({}),
                            };
                            let mut call = Map::new();
                            if let Some(id) = block.get("id") {
                                call.insert("id".to_owned(), id.clone());
                            }
                            call.insert("type".to_owned(), json!("function"));
                            call.insert(
                                "function".to_owned(),
                                json!({"name": block.get("name").cloned().unwrap_or(Value::Null), "arguments": js_stringify(&args)}),
                            );
                            calls.push(Value::Object(call));
                        }
                    }
                }
                if parts.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = Map::new();
                m.insert("role".to_owned(), json!("assistant"));
                if !parts.is_empty() {
                    m.insert("content".to_owned(), Value::Array(parts));
                }
                if !calls.is_empty() {
                    m.insert("toolCalls".to_owned(), Value::Array(calls));
                }
                out.push(Value::Object(m));
            }
            _ => {
                let content = blocks_of(msg);
                let texts = result_texts(content);
                let has_images = content.iter().any(|c| c["type"] == "image");
                let is_error = msg.get("isError").is_some_and(is_truthy);
                let text =
                    tool_result_text(&texts.join("\n"), has_images, supports_images, is_error);
                let mut parts = vec![json!({"type": "text", "text": text})];
                if supports_images {
                    parts.extend(
                        content
                            .iter()
                            .filter(|c| c["type"] == "image")
                            .map(image_url),
                    );
                }
                let mut m = Map::new();
                m.insert("role".to_owned(), json!("tool"));
                if let Some(id) = msg.get("toolCallId") {
                    m.insert("toolCallId".to_owned(), id.clone());
                }
                if let Some(name) = msg.get("toolName") {
                    m.insert("name".to_owned(), name.clone());
                }
                m.insert("content".to_owned(), Value::Array(parts));
                out.push(Value::Object(m));
            }
        }
    }
    out
}

/// [`to_chat_messages`] (with the system message first) written straight from the stored
/// messages: unmodified text, tool arguments and image data are copied from the stored bytes.
/// `None` when a message has a shape only the value-tree path handles (the caller then runs
/// that).
fn write_messages_raw(model: &Model, context: &Context<'_>) -> Option<Vec<u8>> {
    let ids = MistralIds::default();
    let normalize = |id: &str| ids.normalize(id);
    let replay = raw::replay(context.llm, model, &normalize)?;
    let total: usize = context.llm.messages().iter().map(|m| m.len()).sum();
    let mut out = Out::with_capacity(total + 256);
    out.raw("[");
    let mut any = false;
    if let Some(prompt) = context.system() {
        out.raw(r#"{"role":"system","content":"#);
        out.str(prompt);
        out.raw("}");
        any = true;
    }
    // The calls of the last assistant turn sent, and how many of them the synthetic results
    // written so far passed: those results answer its unanswered calls, in order.
    let mut calls: &[Block<'_>] = &[];
    let mut next_call = 0;
    for msg in &replay.messages {
        let start = out.len();
        if any {
            out.raw(",");
        }
        let wrote = match msg {
            Replayed::User(fields) => write_user(&mut out, fields, model.accepts_images)?,
            Replayed::Assistant(_, range) => {
                let blocks = &replay.blocks[range.clone()];
                if blocks.iter().any(|b| b.kind == BlockKind::ToolCall) {
                    calls = blocks;
                    next_call = 0;
                }
                write_assistant(&mut out, blocks)?
            }
            Replayed::ToolResult { fields, new_id } => {
                write_tool_result(&mut out, fields, new_id.as_deref(), model.accepts_images)?;
                true
            }
            Replayed::Synthetic { id } => {
                let (at, call) = synthetic_call(calls, next_call, id)?;
                next_call = at + 1;
                out.raw(r#"{"role":"tool","toolCallId":"#);
                out.str(id);
                if let Some(name) = call.fields.name.filter(|n| *n != "null") {
                    out.raw(r#","name":"#);
                    out.copy(name);
                }
                out.raw(
                    r#","content":[{"type":"text","text":"[tool error] No result provided"}]}"#,
                );
                true
            }
        };
        if wrote {
            any = true;
        } else {
            out.buf.truncate(start);
        }
    }
    out.raw("]");
    Some(out.buf)
}

/// An `image_url` part: `data:` URL of the block's `mimeType` and `data` (`""` for a field
/// that is not a string, as `str_of`).
fn write_image(out: &mut Out, block: &BlockFields<'_>) -> Option<()> {
    out.raw(r#"{"type":"image_url","imageUrl":""#);
    raw::write_data_url(out, block)?;
    out.raw(r#""}"#);
    Some(())
}

/// A user message; `false` when it has nothing to send (nothing written then).
fn write_user(out: &mut Out, fields: &MsgFields<'_>, supports_images: bool) -> Option<bool> {
    let Some(content) = fields.content else {
        return Some(false);
    };
    match content.as_bytes().first() {
        Some(b'"') => {
            out.raw(r#"{"role":"user","content":"#);
            out.copy_str(&RawStr::of(content)?);
            out.raw("}");
            Some(true)
        }
        Some(b'[') => {
            let start = out.len();
            out.raw(r#"{"role":"user","content":["#);
            let mut any = false;
            let mut had_images = false;
            for item in raw::array_items(content)? {
                let block = BlockFields::parse(item)?;
                had_images |= block.is("image")?;
                let is_text = block.is("text")?;
                if !is_text && !supports_images {
                    continue;
                }
                if any {
                    out.raw(",");
                }
                any = true;
                if is_text {
                    out.raw(r#"{"type":"text","text":"#);
                    match text_raw(block.text)? {
                        Some(text) => out.copy_str(&text),
                        None => out.raw(r#""""#),
                    }
                    out.raw("}");
                } else {
                    write_image(out, &block)?;
                }
            }
            if any {
                out.raw("]}");
            } else if had_images && !supports_images {
                out.buf.truncate(start);
                out.raw(r#"{"role":"user","content":"#);
                out.str(NO_IMAGES);
                out.raw("}");
            } else {
                return Some(false);
            }
            Some(true)
        }
        _ => Some(false),
    }
}

/// An assistant message; `false` when it has nothing to send (nothing written then). Every
/// block that is neither text nor thinking is sent as a tool call, as upstream.
fn write_assistant(out: &mut Out, blocks: &[Block<'_>]) -> Option<bool> {
    let start = out.len();
    out.raw(r#"{"role":"assistant""#);
    let mut parts = 0;
    for block in blocks {
        let f = &block.fields;
        let (text, thinking) = match block.kind {
            BlockKind::Text | BlockKind::ConvertedText => (f.text, false),
            BlockKind::Thinking => (f.thinking, true),
            BlockKind::ToolCall | BlockKind::Other => continue,
        };
        let Some(text) = text_raw(text)?.filter(|t| !t.is_blank()) else {
            continue;
        };
        out.raw(if parts == 0 { r#","content":["# } else { "," });
        parts += 1;
        if thinking {
            out.raw(r#"{"type":"thinking","thinking":[{"type":"text","text":"#);
            out.copy_str(&text);
            out.raw("}]}");
        } else {
            out.raw(r#"{"type":"text","text":"#);
            out.copy_str(&text);
            out.raw("}");
        }
    }
    if parts > 0 {
        out.raw("]");
    }
    let mut calls = 0;
    for block in blocks
        .iter()
        .filter(|b| matches!(b.kind, BlockKind::ToolCall | BlockKind::Other))
    {
        let f = &block.fields;
        out.raw(if calls == 0 { r#","toolCalls":["# } else { "," });
        calls += 1;
        out.raw("{");
        if out.id(r#""id":"#, block.new_id.as_deref(), f.id) {
            out.raw(",");
        }
        out.raw(r#""type":"function","function":{"name":"#);
        match f.name {
            Some(name) => out.copy(name),
            None => out.raw("null"),
        }
        out.raw(r#","arguments":"#);
        match f.arguments.filter(|a| raw::raw_truthy(a)) {
            Some(args) => write_stringified(out, args),
            None => out.raw(r#""{}""#),
        }
        out.raw("}}");
    }
    if calls > 0 {
        out.raw("]");
    }
    if parts == 0 && calls == 0 {
        out.buf.truncate(start);
        return Some(false);
    }
    out.raw("}");
    Some(true)
}

/// Whether a canonical string's inner text (see [`RawStr`]) starts or ends with JavaScript
/// whitespace, or is empty: then `js_trim` would change it.
fn trim_changes(inner: &str) -> bool {
    let b = inner.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return true;
    };
    let ws_escape = |c: u8| matches!(c, b'n' | b't' | b'r' | b'f');
    let leading = match first {
        b'\\' => match b.get(1) {
            Some(&c) if ws_escape(c) => true,
            Some(b'u') => b.get(2..6) == Some(b"000b"),
            _ => false,
        },
        c if c < 0x80 => c == b' ',
        _ => inner.chars().next().is_some_and(is_js_whitespace),
    };
    if leading {
        return true;
    }
    // Backslashes just before the last byte: an odd run makes it an escape's letter.
    let run = |end: usize| b[..end].iter().rev().take_while(|&&c| c == b'\\').count();
    match last {
        // The second half of `\\`.
        b'\\' => false,
        c if c < 0x80 => {
            if run(b.len() - 1) % 2 == 1 {
                ws_escape(c)
            } else if b.len() >= 6
                && &b[b.len() - 6..b.len() - 4] == b"\\u"
                && run(b.len() - 6) % 2 == 0
            {
                &b[b.len() - 4..] == b"000b"
            } else {
                c == b' '
            }
        }
        _ => inner.chars().next_back().is_some_and(is_js_whitespace),
    }
}

/// A tool result ([`tool_result_text`] and its images).
fn write_tool_result(
    out: &mut Out,
    fields: &MsgFields<'_>,
    new_id: Option<&str>,
    supports_images: bool,
) -> Option<()> {
    let (texts, images) = raw::result_parts(fields, true)?;
    out.raw(r#"{"role":"tool""#);
    out.id_member(r#","toolCallId":"#, new_id, fields.tool_call_id);
    if let Some(name) = fields.tool_name {
        out.raw(r#","name":"#);
        out.copy(name);
    }
    out.raw(r#","content":[{"type":"text","text":""#);
    if fields.is_error.is_some_and(raw::raw_truthy) {
        out.raw("[tool error] ");
    }
    let has_images = !images.is_empty();
    // The texts joined by newlines, trimmed: one text that needs no trim is copied.
    let single = match texts.as_slice() {
        [Some(RawStr::Canonical(inner))] if !trim_changes(inner) => Some(*inner),
        _ => None,
    };
    let wrote_text = if let Some(inner) = single {
        out.raw(inner);
        true
    } else {
        let joined: Vec<String> = texts
            .iter()
            .map(|t| {
                t.as_ref()
                    .map(|t| t.text().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        let joined = joined.join("\n");
        let trimmed = js_trim(&joined);
        if trimmed.is_empty() {
            false
        } else {
            RawStr::Parsed(trimmed.to_owned()).write_inner(out);
            true
        }
    };
    if wrote_text {
        if has_images && !supports_images {
            out.raw("\\n[tool image omitted: model does not support images]");
        }
    } else if has_images {
        out.raw(if supports_images {
            "(see attached image)"
        } else {
            NO_IMAGES
        });
    } else {
        out.raw("(no tool output)");
    }
    out.raw(r#""}"#);
    if supports_images {
        for image in &images {
            out.raw(",");
            write_image(out, image)?;
        }
    }
    out.raw("]}");
    Some(())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::test_support::prefixes_agree;
    use super::trim_changes;
    use crate::base::{js_trim, parse_value};

    /// Both paths on `lines` and each prefix: the same bytes, and whether the bytes path was
    /// taken each time.
    fn both_paths(model: &Value, lines: &[&str], system: Option<&str>) -> Vec<bool> {
        prefixes_agree(model, lines, system)
            .into_iter()
            .map(|taken| taken.expect("both paths build"))
            .collect()
    }

    /// Stored texts in forms `JSON.stringify` would not write, tool outputs that need a trim
    /// (escaped or literal whitespace at either end, a literal backslash before an `n`),
    /// blocks of other types sent as tool calls, falsy arguments, unanswered calls (one
    /// without a name), ids of another model, images the model does or does not take.
    const LINES: [&str; 14] = [
        r#"{"role":"user","content":"hi \u00e9\/ x\n"}"#,
        r#"{"role":"user","content":[{"type":"text","text":"  "},{"type":"image","data":"QQ==","mimeType":"image/png"},{"type":"text","text":5},{"type":"image","data":"AA\u0041"}]}"#,
        r#"{"role":"user","content":[{"type":"image","data":"QQ==","mimeType":"image/png"}]}"#,
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"plan \u00e9","thinkingSignature":"s"},{"type":"text","text":" "},{"type":"text","text":"a\/b"},{"type":"image","data":"x"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"x": 1.50,"x":2}},{"type":"toolCall","id":"c2","name":null,"arguments":""},{"type":"toolCall","id":"c3","arguments":0}],"api":"mistral-conversations","provider":"mistral","model":"m","stopReason":"toolUse"}"#,
        r#"{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"  out\n"},{"type":"image","data":"R0l","mimeType":"image/gif"}],"isError":false}"#,
        r#"{"role":"user","content":"next"}"#,
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"other think","thinkingSignature":"sig"},{"type":"text","text":"other text"},{"type":"toolCall","id":"call_1|fc_2","name":"bash","arguments":{}},{"type":"toolCall","id":"call-1|fc_3","name":"read","arguments":{"p":1}}],"api":"openai-responses","provider":"openai","model":"gpt-5","stopReason":"toolUse"}"#,
        r#"{"role":"toolResult","toolCallId":"call_1|fc_2","toolName":null,"content":[{"type":"text","text":"ends \\n"}],"isError":true}"#,
        r#"{"role":"toolResult","toolCallId":"call-1|fc_3","content":[{"type":"text","text":"a"},{"type":"text","text":"b\u000b"}],"isError":1}"#,
        r#"{"role":"toolResult","toolCallId":"zz","toolName":"t","content":[{"type":"text","text":"\u00a0tab\t"}]}"#,
        r#"{"role":"toolResult","toolCallId":"zz","toolName":"t","content":[{"type":"text","text":"  "},{"type":"image","data":"R0l","mimeType":"image/gif"}]}"#,
        r#"{"role":"toolResult","content":"not blocks"}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"err"}],"api":"x","provider":"y","model":"z","stopReason":"error"}"#,
        r#"{"role":"user","content":[{"type":"text","text":"last"}]}"#,
    ];

    fn model(images: bool) -> Value {
        let input = if images {
            json!(["text", "image"])
        } else {
            json!(["text"])
        };
        json!({"id": "m", "name": "m", "api": "mistral-conversations", "provider": "mistral",
            "baseUrl": "https://api.mistral.ai", "reasoning": true, "input": input,
            "maxTokens": 8192})
    }

    #[test]
    fn stored_bytes_path_writes_what_the_value_path_writes() {
        for (m, system) in [(model(true), Some("sys")), (model(false), None)] {
            let taken = both_paths(&m, &LINES, system);
            assert!(taken.iter().all(|t| *t), "{m}: {taken:?}");
        }
    }

    #[test]
    fn trim_changes_follows_js_trim() {
        for text in [
            "",
            " ",
            "a",
            " a",
            "a ",
            "a\n",
            "\na",
            "a\\n",
            "a\\",
            "\\",
            "a\u{b}",
            "\u{b}a",
            "a\u{1}",
            "\u{a0}a",
            "a\u{3000}",
            "a\u{feff}",
            "é",
            "a\"",
            "a\\\\n",
            "\u{85}",
        ] {
            let stored = serde_json::to_string(text).unwrap();
            let inner = &stored[1..stored.len() - 1];
            let Ok(Value::String(read)) = parse_value(&stored) else {
                panic!("{stored}");
            };
            let expected = read.is_empty() || js_trim(&read).len() != read.len();
            assert_eq!(trim_changes(inner), expected, "{stored}");
        }
    }
}
