//! The Mistral body of pi-mono 0.58.3 `packages/ai/src/providers/mistral.ts`
//! (`buildChatPayload`, `toChatMessages`, `toFunctionTools`, `streamSimpleMistral`): the
//! `@mistralai/mistralai` request object, camelCase as the SDK takes it.

use serde_json::{json, Map, Value};

use super::model::{
    base_options, blocks_of, clamp_reasoning, function_tools, Build, Context, Model, Options,
};
use super::raw::{self, BlockKind, Out, PendingCalls, RawStr, Replayed};
use super::transform::{transform, MistralIds};
use super::view::{
    kind_of, open_function_call, result_parts, write_data_url, write_id, write_opt_str, BlockKey,
    BlockView, Field, MsgView,
};
use super::{Payload, PayloadError};
use crate::base::{is_js_whitespace, js_trim};

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

pub(super) fn build(input: &Build<'_>) -> Result<Payload, PayloadError> {
    let (model, context, options, now_ms) = input.parts();
    // The messages straight from the stored bytes when every message has a shape that path
    // reads, else through value trees.
    let messages_json = context
        .raw
        .then(|| write_messages_raw(model, context))
        .flatten();
    let from_bytes = messages_json.is_some();
    let messages_json = match messages_json {
        Some(json) => json,
        None => {
            let ids = MistralIds::default();
            let normalize = |id: &str, _: &Value| ids.normalize(id);
            let messages = transform(context.take_messages()?, model, Some(&normalize), now_ms);
            to_chat_messages(&messages, context.system(), model.accepts_images)
        }
    };
    let mut payload = Map::new();
    payload.insert("model".to_owned(), json!(model.id));
    payload.insert("stream".to_owned(), Value::Bool(true));
    if let Some(tools) = context.tools().filter(|t| !t.is_empty()) {
        payload.insert("tools".to_owned(), function_tools(tools, true));
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
    // Written in place of this placeholder by `Payload`.
    payload.insert("messages".to_owned(), Value::Null);
    // Key order as the SDK object is built (messages second).
    let mut ordered = Map::new();
    for key in ["model", "stream", "messages"] {
        if let Some(v) = payload.shift_remove(key) {
            ordered.insert(key.to_owned(), v);
        }
    }
    ordered.extend(payload);
    Ok(Payload::spliced_from(
        Value::Object(ordered),
        &["messages"],
        messages_json,
        from_bytes,
    ))
}

/// mistral.ts `toChatMessages` over value trees (after `transform.rs`), with the system
/// message first: the same writers as the bytes path ([`write_messages_raw`]).
fn to_chat_messages(messages: &[Value], system: Option<&str>, supports_images: bool) -> Vec<u8> {
    let mut chat = Chat::new(4096, system);
    for msg in messages {
        // The value path's readers never answer `None`.
        let _ = chat.item(|out| match msg.get("role").and_then(Value::as_str) {
            Some("user") => write_user(out, msg, supports_images),
            Some("assistant") => {
                let blocks = blocks_of(msg).iter().map(|b| (kind_of(b), b, None));
                write_assistant(out, blocks)
            }
            _ => {
                write_tool_result(out, msg, None, supports_images)?;
                Some(true)
            }
        });
    }
    chat.finish()
}

/// The messages array as both paths write it: the system message, then the items.
struct Chat {
    out: Out,
    any: bool,
}

impl Chat {
    fn new(capacity: usize, system: Option<&str>) -> Chat {
        let mut out = Out::with_capacity(capacity);
        out.raw("[");
        if let Some(prompt) = system {
            out.raw(r#"{"role":"system","content":"#);
            out.str(prompt);
            out.raw("}");
        }
        Chat {
            out,
            any: system.is_some(),
        }
    }

    /// One message, written by `write` (`false`: nothing to send, nothing kept).
    fn item(&mut self, write: impl FnOnce(&mut Out) -> Option<bool>) -> Option<()> {
        let start = self.out.len();
        if self.any {
            self.out.raw(",");
        }
        if write(&mut self.out)? {
            self.any = true;
        } else {
            self.out.buf.truncate(start);
        }
        Some(())
    }

    fn finish(mut self) -> Vec<u8> {
        self.out.raw("]");
        self.out.buf
    }
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
    let mut chat = Chat::new(total + 256, context.system());
    let mut pending = PendingCalls::default();
    for msg in &replay.messages {
        chat.item(|out| match msg {
            Replayed::User(fields) => write_user(out, fields, model.accepts_images),
            Replayed::Assistant(_, range) => {
                let blocks = pending
                    .sent(&replay.blocks[range.clone()])
                    .iter()
                    .map(|b| (b.kind, b.fields, b.new_id.as_deref()));
                write_assistant(out, blocks)
            }
            Replayed::ToolResult { fields, new_id } => {
                write_tool_result(out, fields, new_id.as_deref(), model.accepts_images)?;
                Some(true)
            }
            Replayed::Synthetic { id } => {
                let call = pending.answer(id)?;
                out.raw(r#"{"role":"tool","toolCallId":"#);
                out.str(id);
                if let Some(name) = call.fields.name.filter(|n| *n != "null") {
                    out.raw(r#","name":"#);
                    out.copy(name);
                }
                out.raw(
                    r#","content":[{"type":"text","text":"[tool error] No result provided"}]}"#,
                );
                Some(true)
            }
        })?;
    }
    Some(chat.finish())
}

// The rules of mistral.ts `toChatMessages`, once for both paths (`payload::view`).

/// An `image_url` part: `data:` URL of the block's `mimeType` and `data` (`""` for a field
/// that is not a string, as `str_of`).
fn write_image<'a>(out: &mut Out, block: impl BlockView<'a>) -> Option<()> {
    out.raw(r#"{"type":"image_url","imageUrl":""#);
    write_data_url(out, block)?;
    out.raw(r#""}"#);
    Some(())
}

/// A user message; `false` when it has nothing to send (nothing written then).
fn write_user<'a>(out: &mut Out, msg: impl MsgView<'a>, supports_images: bool) -> Option<bool> {
    let Some(content) = msg.content() else {
        return Some(false);
    };
    if let Some(s) = content.str()? {
        out.raw(r#"{"role":"user","content":"#);
        out.copy_str(&s);
        out.raw("}");
        return Some(true);
    }
    if !content.is_array() {
        return Some(false);
    }
    let start = out.len();
    out.raw(r#"{"role":"user","content":["#);
    let mut any = false;
    let mut had_images = false;
    msg.for_each_block(|block| {
        had_images |= block.is("image")?;
        let is_text = block.is("text")?;
        if !is_text && !supports_images {
            return Some(());
        }
        if any {
            out.raw(",");
        }
        any = true;
        if is_text {
            out.raw(r#"{"type":"text","text":"#);
            write_opt_str(out, block.str(BlockKey::Text)?.as_ref());
            out.raw("}");
        } else {
            write_image(out, block)?;
        }
        Some(())
    })?;
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

/// An assistant message from its blocks after the replay layer (what each became, the block,
/// a tool call's new id); `false` when it has nothing to send (nothing written then). Every
/// block that is neither text nor thinking is sent as a tool call, as upstream.
fn write_assistant<'a, 'i, B: BlockView<'a>>(
    out: &mut Out,
    blocks: impl Iterator<Item = (BlockKind, B, Option<&'i str>)> + Clone,
) -> Option<bool> {
    let start = out.len();
    out.raw(r#"{"role":"assistant""#);
    let mut parts = 0;
    for (kind, block, _) in blocks.clone() {
        let (text, thinking) = match kind {
            BlockKind::Text | BlockKind::ConvertedText => (BlockKey::Text, false),
            BlockKind::Thinking => (BlockKey::Thinking, true),
            BlockKind::ToolCall | BlockKind::Other => continue,
        };
        let Some(text) = block.str(text)?.filter(|t| !t.is_blank()) else {
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
    for (_, block, new_id) in
        blocks.filter(|(kind, _, _)| matches!(kind, BlockKind::ToolCall | BlockKind::Other))
    {
        out.raw(if calls == 0 { r#","toolCalls":["# } else { "," });
        calls += 1;
        open_function_call(out, block, new_id);
        out.raw(r#","arguments":"#);
        match block.field(BlockKey::Arguments).filter(|a| a.truthy()) {
            Some(args) => args.write_stringified(out),
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

/// A tool result (mistral.ts `buildToolResultText` and its images).
fn write_tool_result<'a>(
    out: &mut Out,
    msg: impl MsgView<'a>,
    new_id: Option<&str>,
    supports_images: bool,
) -> Option<()> {
    let (texts, images) = result_parts(msg, true)?;
    out.raw(r#"{"role":"tool""#);
    write_id(out, r#","toolCallId":"#, new_id, msg.tool_call_id());
    if let Some(name) = msg.tool_name() {
        out.raw(r#","name":"#);
        name.copy(out);
    }
    out.raw(r#","content":[{"type":"text","text":""#);
    if msg.is_error().is_some_and(Field::truthy) {
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
        for image in images {
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

    use super::super::test_support::bytes_path_taken;
    use super::trim_changes;
    use crate::base::{js_trim, parse_value};

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
            let taken = bytes_path_taken(&m, &LINES, system);
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
