//! Transcript JSON: parse an arbitrary JSON text as a transcript and run every transcript and
//! hygiene pass on it (the order of `sanitize_session_history`, without the Python-side image
//! pass), for every provider policy. Nothing may panic, and a parsed transcript serializes to
//! JSON that parses back to the same messages.
#![no_main]

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
use libfuzzer_sys::fuzz_target;

const PROVIDERS: [(&str, &str); 5] = [
    ("anthropic", "anthropic-messages"),
    ("openai", "openai-responses"),
    ("google", "google-generative-ai"),
    ("mistral", "openai-completions"),
    ("openrouter", "openai-completions"),
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(transcript) = Transcript::from_json(text) else {
        return;
    };
    let json = transcript.to_json();
    let again = Transcript::from_json(&json).expect("serialized transcript parses");
    assert_eq!(
        again.to_json(),
        json,
        "JSON round trip changed the transcript"
    );

    let _ = convert_to_llm(&transcript);
    let _ = estimate_context_tokens(&transcript);
    let _ = limit_history_turns(&transcript, Some(2.0), true);
    let _ = prune_context(&transcript, &PruningSettings::default(), Some(1000.0));
    for policy in [
        ErroredAssistantPolicy::Baseline,
        ErroredAssistantPolicy::Preserve,
        ErroredAssistantPolicy::Drop,
    ] {
        let options = PairingOptions {
            errored_assistant_policy: policy,
            ..PairingOptions::default()
        };
        let _ = repair_tool_pairing(&transcript, &options);
    }

    for (provider, api) in PROVIDERS {
        let policy = resolve_transcript_policy(Some(provider), Some(api), None);
        let mut t = annotate_inter_session_messages(&transcript);
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
        t = repair_tool_call_inputs(&t, None).messages;
        t = repair_tool_pairing(&t, &PairingOptions::default()).messages;
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
});
