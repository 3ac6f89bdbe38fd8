//! `resolveTranscriptPolicy` (OpenClaw 2026.3.13 `src/agents/transcript-policy.ts`): which hygiene
//! passes a provider needs.

/// How `sanitizeSessionMessagesImages` treats assistant text
/// (`src/agents/pi-embedded-helpers/images.ts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SanitizeMode {
    /// Images only.
    ImagesOnly,
    /// Also drop blank text blocks (and emptied assistants).
    Full,
}

/// Tool-call id rewriting (`src/agents/tool-call-id.ts`, `sanitizeToolCallId`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallIdMode {
    /// `[a-zA-Z0-9]+`, up to 40 chars.
    Strict,
    /// Exactly 9 `[a-zA-Z0-9]` (Mistral).
    Strict9,
}

/// Options of `stripThoughtSignatures` (`src/agents/pi-embedded-helpers/bootstrap.ts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThoughtSignatureOptions {
    pub allow_base64_only: bool,
    pub include_camel_case: bool,
}

/// The policy table's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptPolicy {
    pub sanitize_mode: SanitizeMode,
    pub sanitize_tool_call_ids: bool,
    pub tool_call_id_mode: Option<ToolCallIdMode>,
    pub repair_tool_use_result_pairing: bool,
    pub preserve_signatures: bool,
    pub sanitize_thought_signatures: Option<ThoughtSignatureOptions>,
    pub sanitize_thinking_signatures: bool,
    pub drop_thinking_blocks: bool,
    pub apply_google_turn_ordering: bool,
    pub validate_gemini_turns: bool,
    pub validate_anthropic_turns: bool,
    pub allow_synthetic_tool_results: bool,
}

const MISTRAL_HINTS: [&str; 7] = [
    "mistral",
    "mixtral",
    "codestral",
    "pixtral",
    "devstral",
    "ministral",
    "mistralai",
];

/// `resolveTranscriptPolicy({modelApi, provider, modelId})` [B at 006d4ac1].
pub fn resolve_transcript_policy(
    provider: Option<&str>,
    model_api: Option<&str>,
    model_id: Option<&str>,
) -> TranscriptPolicy {
    let provider = provider
        .map(|p| p.trim().to_lowercase())
        .filter(|p| !p.is_empty());
    let provider = provider.as_deref();
    let model_api = model_api.map(str::trim).filter(|a| !a.is_empty());
    let model_id = model_id
        .map(|m| m.trim().to_lowercase())
        .unwrap_or_default();

    let is_google = matches!(
        model_api,
        Some("google-gemini-cli" | "google-generative-ai")
    );
    let is_anthropic = matches!(
        model_api,
        Some("anthropic-messages" | "bedrock-converse-stream")
    ) || matches!(provider, Some("anthropic" | "amazon-bedrock"));
    let is_openai = matches!(provider, Some("openai" | "openai-codex"))
        || (provider.is_none()
            && matches!(
                model_api,
                Some(
                    "openai" | "openai-completions" | "openai-responses" | "openai-codex-responses"
                )
            ));
    let is_strict_openai_compatible = model_api == Some("openai-completions")
        && !is_openai
        && !matches!(provider, Some("openrouter" | "opencode"));
    let is_mistral =
        provider == Some("mistral") || MISTRAL_HINTS.iter().any(|h| model_id.contains(h));
    let is_minimax =
        matches!(provider, Some("minimax" | "minimax-cn")) || model_id.contains("minimax");
    let is_openrouter_gemini = matches!(provider, Some("openrouter" | "opencode" | "kilocode"))
        && model_id.contains("gemini");
    let is_copilot_claude = provider == Some("github-copilot") && model_id.contains("claude");

    let sanitize_mode = if is_openai {
        SanitizeMode::ImagesOnly
    } else if is_google || is_anthropic || is_mistral || is_openrouter_gemini {
        SanitizeMode::Full
    } else {
        SanitizeMode::ImagesOnly
    };
    let id_family = is_google || is_mistral || is_anthropic || is_minimax;
    TranscriptPolicy {
        sanitize_mode,
        sanitize_tool_call_ids: !is_openai && id_family,
        tool_call_id_mode: if is_mistral {
            Some(ToolCallIdMode::Strict9)
        } else if id_family {
            Some(ToolCallIdMode::Strict)
        } else {
            None
        },
        repair_tool_use_result_pairing: true,
        preserve_signatures: false,
        sanitize_thought_signatures: (!is_openai && (is_openrouter_gemini || is_google)).then_some(
            ThoughtSignatureOptions {
                allow_base64_only: true,
                include_camel_case: true,
            },
        ),
        sanitize_thinking_signatures: false,
        drop_thinking_blocks: is_copilot_claude,
        apply_google_turn_ordering: !is_openai && is_google,
        validate_gemini_turns: !is_openai && is_google,
        validate_anthropic_turns: !is_openai && (is_anthropic || is_strict_openai_compatible),
        allow_synthetic_tool_results: !is_openai && (is_google || is_anthropic),
    }
}
