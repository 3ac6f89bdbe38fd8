//! Provider-side compaction blocks in pi's assistant messages: an Anthropic `compaction`
//! content block (beta `compact-2026-01-12`, `BetaCompactionBlock`) or an OpenAI Responses
//! `compaction` output item (`ResponseCompactionItem`), as `parse_response` stores them:
//!
//! ```json
//! {"type": "compaction", "api": "anthropic-messages", "content": "summary" | null,
//!  "raw": {the provider's block or item, verbatim}}
//! ```
//!
//! `api` is the API that returned it (its server alone can read the opaque parts back),
//! `content` the readable summary when the provider gives one (Anthropic; a Responses item is
//! encrypted, so `null`), `raw` what is sent back, unchanged.
//!
//! The provider's replay rule makes such a block a boundary: the server continues from it, and
//! nothing before it is needed (Anthropic drops every block before it and refuses a compaction
//! block that is not the first block of the conversation, `compaction_block_misplaced`; the
//! Responses API lets the caller leave out every input item before the latest compaction item).
//! [`compaction_send_view`] is the transcript a request to one provider is built from.

use serde_json::{json, Map, Value};

use super::list::{Message, Transcript};
use crate::base::js_trim;

/// The `type` of the block.
pub const COMPACTION_BLOCK_TYPE: &str = "compaction";

/// Where a request goes: the model's provider and API.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompactionTarget<'a> {
    pub provider: Option<&'a str>,
    pub api: Option<&'a str>,
}

/// Whether the message holds a compaction block: from its send shape, read once per message
/// and cached with it (the request guard reads the same shape on every request).
fn may_hold(message: &Message) -> bool {
    message.role() == Some("assistant") && message.send_shape().compaction_blocks > 0
}

fn is_block(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some(COMPACTION_BLOCK_TYPE)
        && block.get("raw").is_some_and(Value::is_object)
}

/// The readable summary of a compaction block (a non-blank `content` string).
pub fn compaction_summary(block: &Value) -> Option<&str> {
    block
        .get("content")
        .and_then(Value::as_str)
        .filter(|s| !js_trim(s).is_empty())
}

/// Whether the block carries context the provider can continue from: Anthropic's summary
/// (`content` non-empty: a `null` one is a failed compaction, a server no-op), a Responses
/// item's `encrypted_content`.
pub fn compaction_carries_context(block: &Value) -> bool {
    let raw = &block["raw"];
    let non_empty = |key: &str| {
        raw.get(key)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    match block.get("api").and_then(Value::as_str) {
        Some("anthropic-messages") => non_empty("content"),
        _ => non_empty("encrypted_content") || non_empty("content"),
    }
}

/// The text the estimators count for a compaction block: its summary and its opaque parts
/// (what the provider bills it as context), `content` and `encrypted_content` of the raw block.
pub fn compaction_counted_text(block: &Value) -> String {
    let raw = &block["raw"];
    let mut text = String::new();
    for key in ["content", "encrypted_content"] {
        if let Some(s) = raw.get(key).and_then(Value::as_str) {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(s);
        }
    }
    text
}

/// The compaction blocks of a message, parsed: `(message value, block indices)`; `None` when
/// it holds none.
fn blocks_of(message: &Message) -> Option<(Value, Vec<usize>)> {
    if !may_hold(message) {
        return None;
    }
    let value = message.to_value().ok()?;
    let at: Vec<usize> = value
        .get("content")?
        .as_array()?
        .iter()
        .enumerate()
        .filter(|(_, b)| is_block(b))
        .map(|(i, _)| i)
        .collect();
    (!at.is_empty()).then_some((value, at))
}

fn errored(message: &Value) -> bool {
    matches!(
        message.get("stopReason").and_then(Value::as_str),
        Some("error" | "aborted")
    )
}

/// Whether `block` of `message` is sent verbatim to `target`: the same API and provider
/// (the opaque parts are the provider's own).
fn is_own(block: &Value, message: &Value, target: CompactionTarget<'_>) -> bool {
    let api = block.get("api").and_then(Value::as_str);
    api.is_some()
        && api == target.api
        && message.get("provider").and_then(Value::as_str) == target.provider
}

/// The latest compaction boundary of `messages`: the index of the last assistant message (not
/// errored or aborted) holding a compaction block that carries context, and that block's index.
/// With a `target`, only blocks that target can use count: its own (sent verbatim) or another
/// provider's with a readable summary. Without one, any block that carries context.
pub fn compaction_boundary(
    messages: &Transcript,
    target: Option<CompactionTarget<'_>>,
) -> Option<(usize, usize)> {
    for (i, message) in messages.messages().iter().enumerate().rev() {
        let Some((value, at)) = blocks_of(message) else {
            continue;
        };
        if errored(&value) {
            continue;
        }
        let blocks = value["content"].as_array()?;
        let usable = at.iter().rev().copied().find(|&b| {
            let block = &blocks[b];
            if !compaction_carries_context(block) {
                return false;
            }
            match target {
                None => true,
                Some(t) => is_own(block, &value, t) || compaction_summary(block).is_some(),
            }
        });
        if let Some(b) = usable {
            return Some((i, b));
        }
    }
    None
}

/// Whether `message` is a compaction boundary ([`compaction_boundary`] without a target): `None`
/// when it is not; else the readable summary of its last block that carries context, if any.
#[allow(clippy::option_option)]
pub fn message_compaction(message: &Message) -> Option<Option<String>> {
    let (value, at) = blocks_of(message)?;
    if errored(&value) {
        return None;
    }
    let blocks = value["content"].as_array()?;
    let block = at
        .iter()
        .rev()
        .map(|&b| &blocks[b])
        .find(|b| compaction_carries_context(b))?;
    Some(compaction_summary(block).map(str::to_owned))
}

/// Whether any message of `messages` may hold a compaction block (cheap test).
pub fn has_compaction_blocks(messages: &Transcript) -> bool {
    messages.messages().iter().any(may_hold)
}

/// The transcript a request to `target` is built from, per the providers' replay rules:
/// - the latest boundary ([`compaction_boundary`] for `target`) starts it: the messages before
///   it are left out;
/// - a boundary block of the target's own provider and API becomes the first block of its
///   assistant turn, sent verbatim; the message's other compaction blocks are dropped (only the
///   last one with content is sent, else Anthropic answers `compaction_block_ambiguous`);
/// - another provider's boundary block with a readable summary becomes pi's compaction summary
///   message (`compactionSummary`, which `convertToLlm` sends as a user message) in front of its
///   turn;
/// - every other compaction block is dropped (an opaque one cannot be read by another provider;
///   one without content is a no-op); an assistant message left without blocks is dropped.
///
/// Returns `messages` itself (same messages) when it holds no compaction block.
pub fn compaction_send_view(messages: &Transcript, target: CompactionTarget<'_>) -> Transcript {
    view(messages, target, false)
}

/// [`compaction_send_view`] for the other providers' blocks only: the target's own blocks stay
/// where they are, and no history is left out for them (the payload writers do that when they
/// send them). What the hygiene passes run, so a history sanitized for a provider holds no block
/// it cannot take, and the request built from it is the one built from the history itself.
pub fn drop_foreign_compaction_blocks(
    messages: &Transcript,
    target: CompactionTarget<'_>,
) -> Transcript {
    view(messages, target, true)
}

fn view(messages: &Transcript, target: CompactionTarget<'_>, keep_own: bool) -> Transcript {
    if !has_compaction_blocks(messages) {
        return messages.clone();
    }
    let own_block = |i: usize, b: usize| -> bool {
        let Ok(value) = messages.messages()[i].to_value() else {
            return false;
        };
        is_own(&value["content"][b], &value, target)
    };
    let boundary = compaction_boundary(messages, Some(target))
        .filter(|&(i, b)| !(keep_own && own_block(i, b)));
    let start = boundary.map_or(0, |(i, _)| i);
    let mut changed = start > 0;
    let mut out: Vec<Value> = Vec::new();
    let mut kept: Vec<Option<Message>> = Vec::new();
    for (i, message) in messages.messages().iter().enumerate().skip(start) {
        let Some((mut value, at)) = blocks_of(message) else {
            kept.push(Some(message.clone()));
            out.push(Value::Null);
            continue;
        };
        let Some(blocks) = value.get_mut("content").and_then(Value::as_array_mut) else {
            continue;
        };
        let message_value = message.to_value().unwrap_or(Value::Null);
        let taken = std::mem::take(blocks);
        let count = taken.len();
        let mut first: Option<Value> = None;
        let mut summary_message: Option<Value> = None;
        let mut rest = Vec::with_capacity(taken.len());
        for (b, block) in taken.into_iter().enumerate() {
            if !at.contains(&b) || (keep_own && is_own(&block, &message_value, target)) {
                rest.push(block);
                continue;
            }
            changed = true;
            if boundary == Some((i, b)) {
                if is_own(&block, &message_value, target) {
                    first = Some(block);
                } else if let Some(summary) = compaction_summary(&block) {
                    let mut m = Map::new();
                    m.insert("role".into(), json!("compactionSummary"));
                    m.insert("summary".into(), json!(summary));
                    m.insert("tokensBefore".into(), json!(0));
                    if let Some(ts) = message_value.get("timestamp") {
                        m.insert("timestamp".into(), ts.clone());
                    }
                    summary_message = Some(Value::Object(m));
                }
            }
        }
        if first.is_none() && summary_message.is_none() && rest.len() == count {
            kept.push(Some(message.clone()));
            out.push(Value::Null);
            continue;
        }
        if let Some(summary) = summary_message {
            kept.push(None);
            out.push(summary);
        }
        let mut blocks = Vec::with_capacity(rest.len() + 1);
        blocks.extend(first);
        blocks.extend(rest);
        if blocks.is_empty() {
            continue;
        }
        value["content"] = Value::Array(blocks);
        kept.push(None);
        out.push(value);
    }
    if !changed {
        return messages.clone();
    }
    let messages = kept
        .into_iter()
        .zip(out)
        .map(|(kept, value)| match kept {
            Some(m) => m,
            None => Message::new(crate::base::JsonText::owned(crate::base::to_js_string(
                &value,
            ))),
        })
        .collect();
    Transcript::from_messages(messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anthropic_block(content: Option<&str>) -> Value {
        json!({"type": "compaction", "api": "anthropic-messages", "content": content,
               "raw": {"type": "compaction", "content": content, "encrypted_content": "E",
                       "signature": "S"}})
    }

    fn assistant(provider: &str, api: &str, blocks: Vec<Value>) -> Value {
        json!({"role": "assistant", "content": blocks, "provider": provider, "api": api,
               "model": "m", "stopReason": "stop", "timestamp": 5})
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": text, "timestamp": 1})
    }

    fn roles(t: &Transcript) -> Vec<Value> {
        t.messages().iter().map(|m| m.to_value().unwrap()).collect()
    }

    const ANTHROPIC: CompactionTarget<'static> = CompactionTarget {
        provider: Some("anthropic"),
        api: Some("anthropic-messages"),
    };

    #[test]
    fn own_provider_starts_at_the_latest_block_with_content() {
        let text = json!({"type": "text", "text": "after"});
        let t = Transcript::from_values(&[
            user("a"),
            assistant(
                "anthropic",
                "anthropic-messages",
                vec![anthropic_block(Some("old"))],
            ),
            user("b"),
            assistant(
                "anthropic",
                "anthropic-messages",
                vec![
                    text.clone(),
                    anthropic_block(Some("new")),
                    anthropic_block(None),
                ],
            ),
            user("c"),
        ]);
        assert_eq!(compaction_boundary(&t, Some(ANTHROPIC)), Some((3, 1)));
        let view = roles(&compaction_send_view(&t, ANTHROPIC));
        assert_eq!(view.len(), 2);
        assert_eq!(view[0]["content"][0]["content"], json!("new"));
        assert_eq!(view[0]["content"][1], text);
        assert_eq!(view[0]["content"].as_array().unwrap().len(), 2);
        assert_eq!(view[1]["content"], json!("c"));
    }

    #[test]
    fn other_providers_get_the_summary_or_nothing() {
        let t = Transcript::from_values(&[
            user("a"),
            assistant(
                "anthropic",
                "anthropic-messages",
                vec![
                    anthropic_block(Some("sum")),
                    json!({"type": "text", "text": "t"}),
                ],
            ),
            user("b"),
        ]);
        let google = CompactionTarget {
            provider: Some("google"),
            api: Some("google-generative-ai"),
        };
        let view = roles(&compaction_send_view(&t, google));
        assert_eq!(view[0]["role"], json!("compactionSummary"));
        assert_eq!(view[0]["summary"], json!("sum"));
        assert_eq!(view[1]["content"], json!([{"type": "text", "text": "t"}]));
        assert_eq!(view.len(), 3);
        // An opaque Responses item is no boundary elsewhere: dropped, history kept.
        let item = json!({"type": "compaction", "api": "openai-responses", "content": null,
                          "raw": {"type": "compaction", "id": "cmp_1", "encrypted_content": "X"}});
        let t = Transcript::from_values(&[
            user("a"),
            assistant("openai", "openai-responses", vec![item.clone()]),
            user("b"),
        ]);
        let view = roles(&compaction_send_view(&t, ANTHROPIC));
        assert_eq!(view, vec![user("a"), user("b")]);
        // ... and for its own API it starts the input.
        let own = CompactionTarget {
            provider: Some("openai"),
            api: Some("openai-responses"),
        };
        let view = roles(&compaction_send_view(&t, own));
        assert_eq!(view[0]["content"], json!([item]));
        assert_eq!(view.len(), 2);
    }

    #[test]
    fn hygiene_keeps_own_blocks_in_place() {
        let own = anthropic_block(Some("mine"));
        let item = json!({"type": "compaction", "api": "openai-responses", "content": null,
                          "raw": {"type": "compaction", "id": "cmp_1", "encrypted_content": "X"}});
        let t = Transcript::from_values(&[
            user("a"),
            assistant(
                "openai",
                "openai-responses",
                vec![item, json!({"type": "text", "text": "t"})],
            ),
            assistant("anthropic", "anthropic-messages", vec![own.clone()]),
            user("b"),
        ]);
        let cleaned = drop_foreign_compaction_blocks(&t, ANTHROPIC);
        let values = roles(&cleaned);
        assert_eq!(values.len(), 4);
        assert_eq!(values[1]["content"], json!([{"type": "text", "text": "t"}]));
        assert_eq!(values[2]["content"], json!([own]));
        assert!(cleaned.messages()[2].is_same(&t.messages()[2]));
        // The request built from it is the one built from the history itself.
        assert_eq!(
            roles(&compaction_send_view(&cleaned, ANTHROPIC)),
            roles(&compaction_send_view(&t, ANTHROPIC))
        );
        // Nothing foreign: the same transcript.
        let mine = Transcript::from_values(&[user("a"), values[2].clone()]);
        assert!(
            drop_foreign_compaction_blocks(&mine, ANTHROPIC).messages()[1]
                .is_same(&mine.messages()[1])
        );
    }

    #[test]
    fn an_escaped_type_is_found() {
        let line = r#"{"role":"assistant","content":[{"type":"compa\u0063tion","api":"anthropic-messages","content":"s","raw":{"type":"compaction","content":"s"}}],"provider":"anthropic","api":"anthropic-messages","stopReason":"stop"}"#;
        let t = Transcript::new(vec![
            crate::base::JsonText::owned(r#"{"role":"user","content":"a"}"#.to_owned()),
            crate::base::JsonText::owned(line.to_owned()),
        ]);
        assert!(has_compaction_blocks(&t));
        assert_eq!(compaction_boundary(&t, Some(ANTHROPIC)), Some((1, 0)));
    }

    #[test]
    fn without_blocks_the_same_messages_come_back() {
        let t = Transcript::from_values(&[user("compaction"), user("b")]);
        let view = compaction_send_view(&t, ANTHROPIC);
        assert!(view.messages()[0].is_same(&t.messages()[0]));
    }
}
