//! The transcript fuzz targets' checks (`transcript_json`, `transcript_structured`) and the
//! structure-aware transcript generator, shared with the stable replay of their regressions
//! (`tests/fuzz_regressions.rs`) the way `guard_input.rs` is shared with `request_guard`.
//!
//! Byte-mutated JSON rarely parses as a transcript (about 3% of `transcript_json`'s inputs), so
//! `structured` reads the bytes as decisions instead: roles, content block types, tool-call ids
//! from a pool of hard ones, wrong types in fields, missing fields, nesting, duplicated and
//! reordered messages. Every input becomes JSON text of a message list shaped like a real,
//! damaged session, and most of them reach the transcript operations.

use clawctx_core::hygiene::{
    annotate_inter_session_messages, dedupe_tool_call_ids, downgrade_openai_function_call_pairs,
    downgrade_openai_reasoning, drop_delivery_mirror_messages, drop_duplicate_tool_results,
    drop_thinking_blocks, normalize_usage, resolve_transcript_policy,
    sanitize_google_turn_ordering, sanitize_message_blocks, sanitize_tool_call_ids,
    strip_dangling_tool_calls, strip_tool_result_details, validate_anthropic_turns,
    validate_for_provider, validate_gemini_turns, zero_stale_usage, ProviderFamily,
};
use clawctx_core::transcript::{
    convert_to_llm, estimate_context_tokens, limit_history_turns, prune_context,
    repair_tool_call_inputs, repair_tool_pairing, ErroredAssistantPolicy, PairingOptions,
    PruningSettings, Transcript,
};
use serde_json::{json, Value};

const PROVIDERS: [(&str, &str); 5] = [
    ("anthropic", "anthropic-messages"),
    ("openai", "openai-responses"),
    ("google", "google-generative-ai"),
    ("mistral", "openai-completions"),
    ("openrouter", "openai-completions"),
];

/// Parse `text` as a transcript and run every transcript and hygiene pass on it (the order of
/// `sanitize_session_history`, without the Python-side image pass) for five provider policies.
/// Nothing may panic, and a parsed transcript serializes to JSON that parses back to the same
/// messages. Returns whether the text parsed (text that does not parse has nothing to check).
pub fn check_json(text: &str) -> bool {
    let Some(transcript) = parse_round_trip(text) else {
        return false;
    };
    check_transcript_passes(&transcript);
    for (provider, api) in PROVIDERS {
        check_provider_passes(&transcript, provider, api);
    }
    true
}

/// [`check_json`] for one of its six groups: the transcript passes or one provider's hygiene
/// passes, chosen by `selector`. The fuzz target runs this to spend an execution on one group
/// (a sixth of the work) while the fuzzer still reaches all of them.
pub fn check_json_selected(text: &str, selector: u8) -> bool {
    let Some(transcript) = parse_round_trip(text) else {
        return false;
    };
    match PROVIDERS.get(usize::from(selector) % (PROVIDERS.len() + 1)) {
        Some((provider, api)) => check_provider_passes(&transcript, provider, api),
        None => check_transcript_passes(&transcript),
    }
    true
}

/// The parsed transcript, checked to serialize to JSON that parses back to the same messages.
fn parse_round_trip(text: &str) -> Option<Transcript> {
    let transcript = Transcript::from_json(text).ok()?;
    let json = transcript.to_json();
    let again = Transcript::from_json(&json).expect("serialized transcript parses");
    assert_eq!(
        again.to_json(),
        json,
        "JSON round trip changed the transcript"
    );
    Some(transcript)
}

/// The provider-independent passes: conversion, estimates, history limit, pruning, pairing
/// under every errored-assistant policy.
fn check_transcript_passes(transcript: &Transcript) {
    let _ = convert_to_llm(transcript);
    let _ = estimate_context_tokens(transcript);
    let _ = limit_history_turns(transcript, Some(2.0), true);
    let _ = prune_context(transcript, &PruningSettings::default(), Some(1000.0));
    for policy in [
        ErroredAssistantPolicy::Baseline,
        ErroredAssistantPolicy::Preserve,
        ErroredAssistantPolicy::Drop,
    ] {
        let options = PairingOptions {
            errored_assistant_policy: policy,
            ..PairingOptions::default()
        };
        let _ = repair_tool_pairing(transcript, &options);
    }
}

/// One provider's hygiene passes, in the order of `sanitize_session_history`, then validation.
fn check_provider_passes(transcript: &Transcript, provider: &str, api: &str) {
    let policy = resolve_transcript_policy(Some(provider), Some(api), None);
    let mut t = annotate_inter_session_messages(transcript);
    t = drop_delivery_mirror_messages(&t);
    let mode = policy
        .sanitize_tool_call_ids
        .then_some(policy.tool_call_id_mode)
        .flatten();
    if let Some(mode) = mode {
        t = sanitize_tool_call_ids(&t, mode, 0);
    }
    t = dedupe_tool_call_ids(&t, mode);
    t = sanitize_message_blocks(
        &t,
        policy.sanitize_mode,
        policy.preserve_signatures,
        policy.sanitize_thought_signatures,
    );
    if policy.drop_thinking_blocks {
        t = drop_thinking_blocks(&t);
    }
    t = repair_tool_call_inputs(&t, None).messages.into_transcript();
    t = repair_tool_pairing(&t, &PairingOptions::default())
        .messages
        .into_transcript();
    t = drop_duplicate_tool_results(&t);
    t = strip_tool_result_details(&t);
    t = normalize_usage(&zero_stale_usage(&t));
    t = downgrade_openai_function_call_pairs(&downgrade_openai_reasoning(&t));
    t = sanitize_google_turn_ordering(&t, 0);
    t = validate_gemini_turns(&t);
    t = strip_dangling_tool_calls(&t);
    t = validate_anthropic_turns(&t);
    let _ = validate_for_provider(&t, ProviderFamily::resolve(Some(provider), Some(api)));
}

/// The JSON text `structured` builds from the bytes, through every group of `check_json`.
/// Returns whether it parsed.
pub fn check_structured(data: &[u8]) -> bool {
    check_json(&structured(data))
}

/// The `transcript_structured` target: the JSON text `structured` builds from the bytes, through
/// the group of `check_json` the last byte selects (that byte is also one of the text's
/// decisions). Returns whether it parsed.
pub fn check_structured_selected(data: &[u8]) -> bool {
    check_json_selected(&structured(data), data.last().copied().unwrap_or(0))
}

const IDS: [&str; 14] = [
    "call_1",
    "call_1",
    "call_1|fc_1",
    "call_2|fc_1",
    "toolu_01",
    "",
    " ",
    "a.b",
    "a_b",
    "id with space",
    "tool:1/ü",
    "call_1\n",
    "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
    "fc_abc",
];
const ROLES: [&str; 11] = [
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
    "system",
    "developer",
    "",
    "User",
];
const STOPS: [&str; 7] = [
    "toolUse", "stop", "error", "aborted", "length", "", "tool_use",
];
const MODELS: [(&str, &str, &str); 5] = [
    ("anthropic", "anthropic-messages", "claude-x"),
    ("openai", "openai-responses", "gpt-5"),
    ("openai", "openai-completions", "gpt-4o"),
    ("google", "google-generative-ai", "gemini-x"),
    ("mistral", "mistral-conversations", "mistral-large"),
];
const TEXTS: [&str; 8] = [
    "hi",
    "",
    "  ",
    "[Inter-session message] from agent",
    "line\r\nline\u{0}",
    "😀 ünïcödé \u{202e}",
    "<tool_call>{\"name\":\"x\"}</tool_call>",
    "{\"json\": [1, 2, 3]}",
];
const KEYS: [&str; 12] = [
    "content",
    "role",
    "toolCallId",
    "id",
    "arguments",
    "stopReason",
    "usage",
    "type",
    "timestamp",
    "name",
    "toolName",
    "api",
];

/// A decision reader: each decision takes one byte. When the bytes run out every choice is the
/// first one and every `chance` is false, so short inputs still build complete, plain
/// transcripts.
struct Decisions<'a>(&'a [u8]);

impl Decisions<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte().unwrap_or(0)) % n
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    /// True with probability about `k` in 256 (false once the bytes run out).
    fn chance(&mut self, k: u8) -> bool {
        self.byte().is_some_and(|b| b < k)
    }
    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

/// A value of a type a field does not expect (or, rarely, a plausible one).
fn odd_value(d: &mut Decisions) -> Value {
    match d.below(10) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(1.5e300),
        4 => json!(d.pick(&TEXTS)),
        5 => json!([]),
        6 => json!({}),
        7 => json!([{"type": "text", "text": d.pick(&TEXTS)}]),
        8 => json!(u64::MAX),
        _ => json!({"nested": {"content": [{"type": "text"}]}}),
    }
}

fn usage(d: &mut Decisions) -> Value {
    if d.chance(40) {
        return odd_value(d);
    }
    let n = |d: &mut Decisions| json!(d.below(256) * 97);
    json!({"input": n(d), "output": n(d), "cacheRead": n(d), "cacheWrite": n(d),
           "totalTokens": n(d),
           "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}})
}

fn block(d: &mut Decisions) -> Value {
    let mut b = match d.below(7) {
        0 | 1 => json!({"type": "text", "text": d.pick(&TEXTS)}),
        2 => {
            let mut t = json!({"type": "thinking", "thinking": d.pick(&TEXTS)});
            if d.chance(128) {
                t["thinkingSignature"] = json!(d.pick(&["sig", "", "{\"id\":\"rs_1\"}"]));
            }
            if d.chance(30) {
                t["redacted"] = json!(true);
            }
            t
        }
        3 | 4 => {
            let arguments = match d.below(6) {
                0 => json!({"path": "a.txt"}),
                1 => json!("{\"path\": \"a.txt\""),
                2 => json!("{\"path\": \"a.txt\"}"),
                3 => odd_value(d),
                4 => json!({"deep": [[[{"x": [1, {"y": null}]}]]]}),
                _ => json!({}),
            };
            let mut c = json!({"type": "toolCall", "id": d.pick(&IDS),
                               "name": d.pick(&["read", "", "bash", "functions.read", "a b"]),
                               "arguments": arguments});
            if d.chance(40) {
                c["thoughtSignature"] = json!("sig");
            }
            if d.chance(30) {
                c["partialJson"] = json!("{\"pa");
            }
            c
        }
        5 => json!({"type": "image", "data": d.pick(&["iVBORw0KGgo=", "", "!!"]),
                    "mimeType": d.pick(&["image/png", "image/jpeg", "text/plain", ""])}),
        _ => json!({"type": d.pick(&["redacted_thinking", "unknown", "", "tool_use"]),
                    "text": "x"}),
    };
    damage(d, &mut b);
    b
}

fn content(d: &mut Decisions, depth: u32) -> Value {
    match d.below(8) {
        0 => json!(d.pick(&TEXTS)),
        1 if depth < 3 => json!([message(d, depth + 1)]),
        2 => odd_value(d),
        _ => {
            let n = d.below(5);
            Value::Array((0..n).map(|_| block(d)).collect())
        }
    }
}

/// Drop a field, give a field a wrong type, or add an unknown field (it must round-trip).
fn damage(d: &mut Decisions, value: &mut Value) {
    if !d.chance(48) {
        return;
    }
    let Some(object) = value.as_object_mut() else {
        return;
    };
    let key = d.pick(&KEYS);
    match d.below(3) {
        0 => {
            object.remove(key);
        }
        1 => {
            let v = odd_value(d);
            object.insert(key.to_owned(), v);
        }
        _ => {
            object.insert("x-unknown".to_owned(), json!({"kept": [1, "two"]}));
        }
    }
}

fn message(d: &mut Decisions, depth: u32) -> Value {
    let role = d.pick(&ROLES);
    let timestamp = json!(d.below(256) * 1_000_003);
    let mut m = match role {
        "assistant" => {
            let (provider, api, model) = d.pick(&MODELS);
            let mut a = json!({"role": role, "content": content(d, depth), "api": api,
                               "provider": provider, "model": model, "usage": usage(d),
                               "stopReason": d.pick(&STOPS), "timestamp": timestamp});
            if d.chance(40) {
                a["errorMessage"] = json!(d.pick(&TEXTS));
            }
            a
        }
        "toolResult" => {
            let mut r = json!({"role": role, "toolCallId": d.pick(&IDS),
                               "toolName": d.pick(&["read", "", "bash"]),
                               "content": content(d, depth),
                               "isError": d.chance(60), "timestamp": timestamp});
            if d.chance(60) {
                r["details"] = json!({"diff": "@@", "big": [d.pick(&TEXTS)]});
            }
            r
        }
        "bashExecution" => json!({"role": role, "command": d.pick(&["ls", "", "rm -rf /"]),
                                  "output": d.pick(&TEXTS), "exitCode": odd_value(d),
                                  "cancelled": d.chance(40), "truncated": d.chance(40),
                                  "excludeFromContext": d.chance(40), "timestamp": timestamp}),
        "custom" => json!({"role": role, "customType": d.pick(&["note", "", "delivery-mirror"]),
                           "content": content(d, depth), "display": d.chance(128),
                           "timestamp": timestamp}),
        "branchSummary" => json!({"role": role, "summary": d.pick(&TEXTS), "fromId": "e1",
                                  "timestamp": timestamp}),
        "compactionSummary" => json!({"role": role, "summary": d.pick(&TEXTS),
                                      "tokensBefore": odd_value(d), "timestamp": timestamp}),
        _ => json!({"role": role, "content": content(d, depth), "timestamp": timestamp}),
    };
    if d.chance(20) {
        m["provenance"] = json!({"kind": "inter_session", "sourceSessionKey": "k"});
    }
    damage(d, &mut m);
    m
}

/// The JSON text of the message list the bytes describe: at most 48 messages, copied, swapped
/// and removed as the bytes decide; rarely wrapped in a value that is not a list or cut short.
pub fn structured(data: &[u8]) -> String {
    let mut d = Decisions(data);
    // The outer shape comes first, so that it does not depend on where the messages end.
    let shape = d.below(32);
    let torn = d.chance(8).then(|| d.below(256));
    let mut messages: Vec<Value> = Vec::new();
    while messages.len() < 48 && !d.done() {
        match d.below(16) {
            // Copy an earlier message (duplicate ids, a result twice, a repeated turn).
            0 if !messages.is_empty() => {
                let i = d.below(messages.len());
                messages.push(messages[i].clone());
            }
            // Move a message (results before calls, a user turn between call and result).
            1 if messages.len() > 1 => {
                let i = d.below(messages.len());
                let j = d.below(messages.len());
                messages.swap(i, j);
            }
            2 if !messages.is_empty() => {
                let i = d.below(messages.len());
                messages.remove(i);
            }
            _ => {
                let m = message(&mut d, 0);
                messages.push(m);
            }
        }
    }
    let list = Value::Array(messages);
    let value = match shape {
        30 => json!({"messages": list}),
        31 => json!([list]),
        _ => list,
    };
    let mut text = serde_json::to_string(&value).expect("a JSON value serializes");
    if let Some(at) = torn {
        // A torn write: the text cut short.
        let cut = text.len() * at / 256;
        let cut = (0..=cut)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
    }
    text
}
