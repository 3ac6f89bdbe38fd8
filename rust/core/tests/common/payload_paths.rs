//! The `payload_paths` fuzz target's check, shared with its stable replay
//! (`tests/payload_paths.rs`): every payload writer has two paths — one writes the request body
//! from the stored message bytes, the other builds value trees — and they must give the same
//! bytes for every transcript, or the same error. The transcripts are those of the
//! `transcript_structured` target (damaged message lists from decision bytes), so the bytes
//! path meets stored text in shapes `JSON.stringify` would not write.

use clawctx_core::payload::{
    build_payload, build_payload_from_values, without_request_id, PayloadRequest,
};
use clawctx_core::Transcript;
use serde_json::{json, Value};

/// The payload targets: (provider, api, model id). Every builder, and the provider variants
/// that change what a builder writes.
pub const MODELS: [(&str, &str, &str); 9] = [
    ("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
    ("openai", "openai-responses", "gpt-5"),
    ("openai", "openai-completions", "gpt-4o"),
    ("google", "google-generative-ai", "gemini-2.5-pro"),
    ("mistral", "mistral-conversations", "mistral-large-latest"),
    ("openai-codex", "openai-codex-responses", "gpt-5.2-codex"),
    ("azure-openai-responses", "azure-openai-responses", "gpt-5"),
    ("google-vertex", "google-vertex", "gemini-2.5-flash"),
    (
        "openrouter",
        "openai-completions",
        "anthropic/claude-sonnet-4.5",
    ),
];

/// The request settings a selector byte picks: the model (an index into [`MODELS`]), whether
/// the request guard runs first, and whether pi-ai's simple-options mapping is used.
pub fn selected(selector: u8) -> (usize, bool, bool) {
    let selector = usize::from(selector);
    let model = selector % MODELS.len();
    let rest = selector / MODELS.len();
    (model, rest & 1 == 1, rest & 2 == 2)
}

/// Both paths over the transcript `text` holds, for the settings `selector` picks: the same
/// body (a Google `requestId`'s random tail aside) or the same error, and a second build from
/// the layouts the first cached gives the same again. Returns whether the text parsed.
pub fn check(text: &str, selector: u8) -> bool {
    let Ok(transcript) = Transcript::from_json(text) else {
        return false;
    };
    let (model, guard, simple) = selected(selector);
    let _ = check_transcript(&transcript, model, guard, simple);
    true
}

/// [`check`] on a parsed transcript; returns whether the bytes path wrote the body.
pub fn check_transcript(transcript: &Transcript, model: usize, guard: bool, simple: bool) -> bool {
    let (provider, api, id) = MODELS[model];
    let request = PayloadRequest {
        model: json!({"id": id, "name": id, "api": api, "provider": provider,
                      "baseUrl": "https://example.invalid", "reasoning": true,
                      "input": ["text", "image"], "maxTokens": 32000}),
        system_prompt: Some("You are a helpful agent.".into()),
        tools: Some(json!([{"name": "read", "description": "Read a file",
                            "parameters": {"type": "object", "properties": {}}}])),
        options: serde_json::Map::new(),
        simple,
        now_ms: 1_700_000_000_000,
        guard,
    };
    let fast = build_payload(&request, transcript);
    let from_bytes = fast.as_ref().is_ok_and(|p| p.written_from_bytes());
    let again = build_payload(&request, transcript);
    let slow = build_payload_from_values(&request, transcript);
    let body = |built: &Result<clawctx_core::payload::Payload, _>| match built {
        Ok(payload) => Ok(without_request_id(&payload.to_json())),
        Err(error) => Err(format!("{error}")),
    };
    let (fast, again, slow) = (body(&fast), body(&again), body(&slow));
    assert_eq!(
        fast, again,
        "{api}: a second build from the cached layouts differs"
    );
    assert_eq!(
        fast, slow,
        "{api}: the bytes path and the value path differ"
    );
    if let Ok(text) = &fast {
        assert!(
            serde_json::from_str::<Value>(text).is_ok(),
            "{api}: the body is not JSON"
        );
    }
    from_bytes
}
