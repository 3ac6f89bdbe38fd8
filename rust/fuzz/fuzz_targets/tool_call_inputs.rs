//! Tool-call input sanitation: `repairToolCallInputs` (with and without an allowlist), tool-call
//! id sanitation in both id modes and the id de-duplication, on a transcript built around the
//! fuzzed assistant content. Nothing may panic; every pass is idempotent (a second run returns
//! the same transcript), and sanitized ids are valid for their mode.
#![no_main]

use std::collections::HashSet;

use clawctx_core::hygiene::{
    dedupe_tool_call_ids, is_valid_tool_call_id, sanitize_tool_call_ids, ToolCallIdMode,
};
use clawctx_core::transcript::{repair_tool_call_inputs, Transcript};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Either a whole transcript, or a value used as an assistant's content (the blocks).
    let transcript = match Transcript::from_json(text) {
        Ok(t) => t,
        Err(_) => match serde_json::from_str::<Value>(text) {
            Ok(content) => Transcript::from_values(&[
                serde_json::json!({"role": "assistant", "content": content, "stopReason": "toolUse"}),
                serde_json::json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "read", "content": []}),
            ]),
            Err(_) => return,
        },
    };
    let names: HashSet<String> = ["read", "exec", "write"].map(String::from).into();
    for allowed in [None, Some(&names)] {
        let once = repair_tool_call_inputs(&transcript, allowed).messages;
        let twice = repair_tool_call_inputs(&once, allowed).messages;
        assert_eq!(
            once.to_json(),
            twice.to_json(),
            "repairToolCallInputs is not idempotent"
        );
    }
    for mode in [ToolCallIdMode::Strict, ToolCallIdMode::Strict9] {
        let once = sanitize_tool_call_ids(&transcript, mode, 0);
        let twice = sanitize_tool_call_ids(&once, mode, 0);
        assert_eq!(
            once.to_json(),
            twice.to_json(),
            "sanitize_tool_call_ids is not idempotent"
        );
        for message in once.messages() {
            for call in &message.facts().tool_calls {
                assert!(
                    is_valid_tool_call_id(&call.id, mode),
                    "invalid id {:?}",
                    call.id
                );
            }
        }
        let deduped = dedupe_tool_call_ids(&once, Some(mode));
        let again = dedupe_tool_call_ids(&deduped, Some(mode));
        assert_eq!(
            deduped.to_json(),
            again.to_json(),
            "dedupe is not idempotent"
        );
    }
});
