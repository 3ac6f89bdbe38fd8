//! What the payload builders' tests share: transcripts from stored lines, requests, the
//! benchmark transcript, and the check that the bytes path writes what the value-tree path
//! writes.

use serde_json::{json, Map, Value};

pub(super) use super::without_request_id;
use super::{build_payload_with, Payload, PayloadRequest};
use crate::base::JsonText;
use crate::transcript::Transcript;

/// A transcript of stored JSON lines, kept as written.
pub(super) fn transcript(lines: &[&str]) -> Transcript {
    Transcript::new(
        lines
            .iter()
            .map(|l| JsonText::owned((*l).to_owned()))
            .collect(),
    )
}

/// A request for `model` without tools, guard or clock (`now_ms` 7).
pub(super) fn request(
    model: &Value,
    system: Option<&str>,
    options: Map<String, Value>,
    simple: bool,
) -> PayloadRequest {
    PayloadRequest {
        guard: false,
        model: model.clone(),
        system_prompt: system.map(str::to_owned),
        tools: None,
        options,
        simple,
        now_ms: 7,
    }
}

/// Builds `request` over `messages` on both paths and checks that they agree: the same body
/// (compared as `text` shows it) or the same error. The bytes path's payload (its
/// `written_from_bytes` says whether that path was taken); `None` when both failed.
pub(super) fn paths_agree(
    request: &PayloadRequest,
    messages: &Transcript,
    text: fn(&[u8]) -> String,
) -> Option<Payload> {
    let fast = build_payload_with(request, messages, true);
    let slow = build_payload_with(request, messages, false);
    match (fast, slow) {
        (Ok(fast), Ok(slow)) => {
            assert!(!slow.written_from_bytes());
            assert_eq!(
                text(&fast.to_json()),
                text(&slow.to_json()),
                "model {}, {} messages",
                request.model,
                messages.messages().len()
            );
            Some(fast)
        }
        (Err(fast), Err(slow)) => {
            assert_eq!(fast.to_string(), slow.to_string());
            None
        }
        (fast, slow) => panic!("paths disagree: {:?} / {:?}", fast.is_ok(), slow.is_ok()),
    }
}

/// [`paths_agree`] on every prefix of `lines` (the empty one first), for `model` without
/// options: per prefix, whether the bytes path was taken (`None`: both failed).
pub(super) fn prefixes_agree(
    model: &Value,
    lines: &[&str],
    system: Option<&str>,
) -> Vec<Option<bool>> {
    let request = request(model, system, Map::new(), false);
    (0..=lines.len())
        .map(|n| {
            paths_agree(&request, &transcript(&lines[..n]), lossy).map(|p| p.written_from_bytes())
        })
        .collect()
}

/// [`prefixes_agree`] as one flag per prefix: whether the bytes path was taken (`false` also
/// when both paths failed).
pub(super) fn bytes_path_taken(model: &Value, lines: &[&str], system: Option<&str>) -> Vec<bool> {
    prefixes_agree(model, lines, system)
        .into_iter()
        .map(|taken| taken.unwrap_or(false))
        .collect()
}

/// A body's text as it is.
pub(super) fn lossy(body: &[u8]) -> String {
    String::from_utf8_lossy(body).into_owned()
}

/// `benches/test_payload.py`'s `make_messages(n)`: user, assistant (thinking, text and a call,
/// from OpenAI Responses `gpt-5`), tool result.
pub(super) fn bench_transcript(n: usize) -> Transcript {
    let mut lines = Vec::with_capacity(n);
    let mut i = 0;
    while lines.len() < n {
        let id = format!("call_{i}|fc_{i:08x}+/=");
        lines.push(json!({"role": "user", "content": format!("Step {i}: run the tests in pkg{i}."), "timestamp": i}));
        lines.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": format!("I should run pytest for pkg{i}.")},
            {"type": "text", "text": format!("Running the tests of pkg{i} now.")},
            {"type": "toolCall", "id": id, "name": "bash",
                "arguments": {"command": format!("pytest pkg{i} -q"), "timeout": 120}}],
            "api": "openai-responses", "provider": "openai", "model": "gpt-5",
            "stopReason": "toolUse", "timestamp": i}));
        lines.push(json!({"role": "toolResult", "toolCallId": id, "toolName": "bash",
            "content": [{"type": "text", "text": format!("{i} passed in 0.{}s\n", i % 10).repeat(4)}],
            "isError": false, "timestamp": i}));
        i += 1;
    }
    lines.truncate(n);
    Transcript::from_values(&lines)
}
