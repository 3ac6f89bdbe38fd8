//! The `request_guard` fuzz target's input decoder and checks, shared with the stable replay
//! of its regressions (`tests/fuzz_regressions.rs`, `tests/guard_properties.rs`).
//!
//! Structure-aware: the bytes are read as a sequence of decisions (message kind, which id from a
//! pool of hard ids, stop reason, blank text, model), so every input is a transcript of the
//! shapes real runtimes leave behind — repeated, empty and pipe-joined ids, late, orphaned and
//! second results, aborted and errored turns, user messages between a call and its result —
//! instead of mostly unparsable text.

use clawctx_core::hygiene::{guard_request, request_issues, GuardTarget};
use clawctx_core::payload::{build_payload, PayloadRequest};
use clawctx_core::Transcript;
use serde_json::{json, Value};

const IDS: [&str; 10] = [
    "call_1",
    "call_1|fc_1",
    "call_2|fc_1",
    "toolu_01",
    "",
    "a.b",
    "a_b",
    "id with space",
    "c2",
    "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
];
const STOPS: [&str; 5] = ["toolUse", "stop", "error", "aborted", "length"];
const MODELS: [(&str, &str, &str); 3] = [
    ("anthropic", "anthropic-messages", "claude-x"),
    ("openai", "openai-responses", "gpt-5"),
    ("google", "google-generative-ai", "gemini-x"),
];
/// Payload targets: (provider, api, model id).
pub const TARGETS: [(&str, &str, &str); 6] = [
    ("anthropic", "anthropic-messages", "claude-x"),
    ("openai", "openai-responses", "gpt-5"),
    ("openai", "openai-completions", "gpt-4o"),
    ("google", "google-generative-ai", "gemini-x"),
    ("mistral", "mistral-conversations", "mistral-large"),
    ("openai", "openai-codex-responses", "gpt-5-codex"),
];

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn pick<'s, T>(&mut self, items: &'s [T]) -> Option<&'s T> {
        let b = self.next()?;
        items.get(usize::from(b) % items.len())
    }
}

/// The transcript the bytes describe (at most 64 messages).
pub fn decode(data: &[u8]) -> Transcript {
    let mut bytes = Bytes(data);
    let mut messages: Vec<Value> = Vec::new();
    while messages.len() < 64 {
        let Some(kind) = bytes.next() else { break };
        let message = match kind % 6 {
            0 => json!({"role": "user", "content": if kind & 8 == 0 { "hi" } else { "  " }}),
            1 | 2 => {
                let calls = usize::from(kind >> 5) % 4;
                let mut content = Vec::new();
                if kind & 16 != 0 {
                    content.push(
                        json!({"type": "text", "text": if kind & 8 == 0 { "ok" } else { " " }}),
                    );
                }
                for _ in 0..calls {
                    let id = *bytes.pick(&IDS).unwrap_or(&"call_1");
                    content.push(
                        json!({"type": "toolCall", "id": id, "name": "read", "arguments": {}}),
                    );
                }
                let stop = *bytes.pick(&STOPS).unwrap_or(&"stop");
                let (provider, api, model) = *bytes.pick(&MODELS).unwrap_or(&MODELS[0]);
                json!({"role": "assistant", "content": content, "stopReason": stop,
                       "provider": provider, "api": api, "model": model, "timestamp": 1})
            }
            3 | 4 => {
                let id = *bytes.pick(&IDS).unwrap_or(&"call_1");
                json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
                       "content": [{"type": "text", "text": "out"}], "isError": false, "timestamp": 1})
            }
            _ => json!({"role": "custom", "customType": "note", "content": "ctx", "display": true}),
        };
        messages.push(message);
    }
    Transcript::from_values(&messages)
}

/// What must hold for every target: the guard's output has no issue, a second guard changes
/// nothing, and the payload builds from it.
pub fn check(data: &[u8]) {
    let transcript = decode(data);
    for target in 0..TARGETS.len() {
        for followed_by_user in [false, true] {
            check_guard(&transcript, target, followed_by_user);
        }
        check_payload(&transcript, target);
    }
}

/// The fuzz target's check: the same as [`check`] for one payload API and one prompt setting,
/// chosen by the last byte (which also stays a decision of the transcript), so an execution
/// costs a twelfth of [`check`]'s and the fuzzer still reaches every combination.
pub fn check_selected(data: &[u8]) {
    let transcript = decode(data);
    let (target, followed_by_user) = selected_target(data.last().copied().unwrap_or(0));
    check_guard(&transcript, target, followed_by_user);
    check_payload(&transcript, target);
}

/// The payload API (an index into [`TARGETS`]) and prompt setting a selector byte picks.
pub fn selected_target(selector: u8) -> (usize, bool) {
    let selector = usize::from(selector);
    (selector % TARGETS.len(), selector / TARGETS.len() % 2 == 1)
}

fn check_guard(transcript: &Transcript, target: usize, followed_by_user: bool) {
    let (provider, api, model) = TARGETS[target];
    let target = GuardTarget {
        provider: Some(provider),
        api: Some(api),
        model_id: Some(model),
        verbatim_ids: false,
    };
    let (out, _) = guard_request(transcript, target, followed_by_user, 7);
    let issues = request_issues(&out, target, followed_by_user);
    assert!(
        issues.is_empty(),
        "{api}: issues after the guard: {issues:?}"
    );
    let (again, report) = guard_request(&out, target, followed_by_user, 7);
    assert!(
        !report.changed(),
        "{api}: a second guard changed {report:?}"
    );
    assert_eq!(again.to_json(), out.to_json());
}

fn check_payload(transcript: &Transcript, target: usize) {
    let (provider, api, model) = TARGETS[target];
    let request = PayloadRequest {
        model: json!({"id": model, "name": model, "api": api, "provider": provider,
                      "baseUrl": "", "reasoning": false, "input": ["text"], "maxTokens": 1000}),
        system_prompt: Some("sys".into()),
        tools: None,
        options: serde_json::Map::new(),
        simple: false,
        now_ms: 7,
        guard: true,
    };
    let _ = build_payload(&request, transcript);
}
