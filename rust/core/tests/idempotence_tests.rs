//! A second pass of the pairing repair and the hygiene passes changes nothing (issue 17,
//! finding 15), with the first pass still upstream's where upstream is not a fixed point.

use clawctx_core::hygiene::{
    annotate_inter_session_messages, sanitize_google_turn_ordering, validate_anthropic_turns,
    validate_gemini_turns,
};
use clawctx_core::transcript::{repair_tool_pairing, PairingOptions, Transcript};
use serde_json::{json, Value};

fn t(value: Value) -> Transcript {
    Transcript::from_json(&value.to_string()).unwrap()
}

fn list(transcript: &Transcript) -> Value {
    serde_json::from_str(&transcript.to_json()).unwrap()
}

#[test]
fn synthetic_result_for_a_blank_or_untrimmed_call_name_is_stable() {
    for (name, first) in [("", ""), (" exec ", " exec ")] {
        let input = t(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": name, "arguments": {}}], "stopReason": "toolUse"},
        ]));
        let once = repair_tool_pairing(&input, &PairingOptions::default());
        assert_eq!(list(&once.messages)[2]["toolName"], json!(first));
        let twice = repair_tool_pairing(&once.messages, &PairingOptions::default());
        assert!(!twice.moved);
        assert_eq!(list(&twice.messages), list(&once.messages));
    }
}

#[test]
fn a_real_result_is_still_renamed() {
    let input = t(json!([
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "", "arguments": {}}], "stopReason": "toolUse"},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "", "content": [{"type": "text", "text": "out"}], "isError": true},
    ]));
    let out = repair_tool_pairing(&input, &PairingOptions::default());
    assert_eq!(list(&out.messages)[1]["toolName"], json!("unknown"));
}

#[test]
fn merged_users_keep_string_content_and_skip_role_less_messages() {
    let input = t(json!([
        {"role": "user", "content": "hi"},
        {"content": "no role"},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
    ]));
    let once = validate_anthropic_turns(&input);
    assert_eq!(
        list(&once),
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "again"}]},
            {"content": "no role"},
        ])
    );
    assert_eq!(list(&validate_anthropic_turns(&once)), list(&once));
}

#[test]
fn anthropic_strip_keeps_a_string_assistant_content() {
    let input = t(json!([
        {"role": "assistant", "content": "said"},
        {"role": "user", "content": "hi"},
    ]));
    assert_eq!(list(&validate_anthropic_turns(&input)), list(&input));
}

#[test]
fn merged_assistants_keep_string_content_or_their_own_non_array_content() {
    let input = t(json!([
        {"role": "assistant", "content": "one"},
        {"role": "assistant", "content": [{"type": "text", "text": "two"}]},
    ]));
    assert_eq!(
        list(&validate_gemini_turns(&input))[0]["content"],
        json!([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}])
    );
    let blank = t(json!([
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": null},
    ]));
    assert_eq!(
        list(&validate_gemini_turns(&blank)),
        json!([{"role": "assistant", "content": null}])
    );
}

#[test]
fn annotation_is_not_repeated_in_a_merged_turn() {
    let merged = t(json!([{
        "role": "user",
        "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "[Inter-session message] sourceTool=t\nx"}],
        "provenance": {"kind": "inter_session", "sourceTool": "t"},
    }]));
    assert_eq!(
        list(&annotate_inter_session_messages(&merged)),
        list(&merged)
    );
}

#[test]
fn bootstrap_looks_past_messages_that_are_never_sent() {
    let input = t(json!([{"content": "no role"}, {"role": "assistant", "content": "hi"}]));
    let out = list(&sanitize_google_turn_ordering(&input, 0));
    assert_eq!(out[0]["content"], json!("(session bootstrap)"));
    assert_eq!(out.as_array().unwrap().len(), 3);
}
