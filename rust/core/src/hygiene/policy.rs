//! `resolveTranscriptPolicy` (OpenClaw 2026.3.13 `src/agents/transcript-policy.ts`): which
//! hygiene passes a provider needs.

/// How `sanitizeSessionMessagesImages` treats assistant text (OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/images.ts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SanitizeMode {
    /// Images only.
    ImagesOnly,
    /// Also drop blank text blocks (and emptied assistants).
    Full,
}

/// Tool-call id rewriting (OpenClaw 2026.3.13 `src/agents/tool-call-id.ts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallIdMode {
    /// `[a-zA-Z0-9]+`, up to 40 chars.
    Strict,
    /// Exactly 9 `[a-zA-Z0-9]` (Mistral).
    Strict9,
}

/// Options of `stripThoughtSignatures` (OpenClaw 2026.3.13 `src/agents/pi-embedded-helpers/bootstrap.ts`).
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

/// Model-id hints of the `mistral` provider's capabilities: only consulted for that provider
/// (OpenClaw 2026.3.13 `src/agents/provider-capabilities.ts`).
const MISTRAL_HINTS: [&str; 7] = [
    "mistral",
    "mixtral",
    "codestral",
    "pixtral",
    "devstral",
    "ministral",
    "mistralai",
];

/// `normalizeProviderId` of OpenClaw 2026.3.13 `src/agents/model-selection.ts`: trimmed,
/// lower-cased, with the historical aliases mapped to their canonical id.
fn normalize_provider_id(provider: &str) -> String {
    let normalized = provider.trim().to_lowercase();
    let canonical = match normalized.as_str() {
        "z.ai" | "z-ai" => "zai",
        "opencode-zen" => "opencode",
        "opencode-go-auth" => "opencode-go",
        "qwen" => "qwen-portal",
        "kimi-code" => "kimi-coding",
        "bedrock" | "aws-bedrock" => "amazon-bedrock",
        "bytedance" | "doubao" => "volcengine",
        _ => return normalized,
    };
    canonical.to_string()
}

/// The provider capability rows `resolveTranscriptPolicy` reads (OpenClaw 2026.3.13
/// `src/agents/provider-capabilities.ts`); unlisted providers get the defaults.
struct Capabilities {
    family: Family,
    preserve_anthropic_signatures: bool,
    openai_compat_turn_validation: bool,
    gemini_signature_hints: &'static [&'static str],
    id_mode_strict9: bool,
    id_mode_hints: &'static [&'static str],
    drop_thinking_hints: &'static [&'static str],
}

#[derive(PartialEq, Eq)]
enum Family {
    Default,
    OpenAi,
    Anthropic,
}

fn capabilities(provider: &str) -> Capabilities {
    let mut caps = Capabilities {
        family: Family::Default,
        preserve_anthropic_signatures: true,
        openai_compat_turn_validation: true,
        gemini_signature_hints: &[],
        id_mode_strict9: false,
        id_mode_hints: &[],
        drop_thinking_hints: &[],
    };
    match provider {
        "anthropic" | "amazon-bedrock" => {
            caps.family = Family::Anthropic;
            caps.drop_thinking_hints = &["claude"];
        }
        "kimi-coding" => caps.preserve_anthropic_signatures = false,
        "mistral" => {
            caps.id_mode_strict9 = true;
            caps.id_mode_hints = &MISTRAL_HINTS;
        }
        "openai" | "openai-codex" => caps.family = Family::OpenAi,
        "openrouter" | "opencode" | "opencode-go" => {
            caps.openai_compat_turn_validation = false;
            caps.gemini_signature_hints = &["gemini"];
        }
        "kilocode" => caps.gemini_signature_hints = &["gemini"],
        "github-copilot" => caps.drop_thinking_hints = &["claude"],
        _ => {}
    }
    caps
}

/// `modelIncludesAnyHint`: the lower-cased model id contains one of the hints.
fn model_has_hint(model_id: &str, hints: &[&str]) -> bool {
    let lowered = model_id.to_lowercase();
    !lowered.is_empty() && hints.iter().any(|h| lowered.contains(h))
}

/// `resolveTranscriptPolicy({modelApi, provider, modelId})` of OpenClaw 2026.3.13
/// `src/agents/transcript-policy.ts`. The provider is normalized (`normalizeProviderId`);
/// `model_api` is compared exactly as given; model-id hints are matched case-insensitively.
pub fn resolve_transcript_policy(
    provider: Option<&str>,
    model_api: Option<&str>,
    model_id: Option<&str>,
) -> TranscriptPolicy {
    let provider = normalize_provider_id(provider.unwrap_or(""));
    let model_api = model_api.filter(|a| !a.is_empty());
    let model_id = model_id.unwrap_or("");
    let caps = capabilities(&provider);

    let is_google = matches!(
        model_api,
        Some("google-gemini-cli" | "google-generative-ai")
    );
    let is_anthropic = matches!(
        model_api,
        Some("anthropic-messages" | "bedrock-converse-stream")
    ) || caps.family == Family::Anthropic;
    let is_openai = caps.family == Family::OpenAi
        || (provider.is_empty()
            && matches!(
                model_api,
                Some(
                    "openai" | "openai-completions" | "openai-responses" | "openai-codex-responses"
                )
            ));
    let is_openai_completions = model_api == Some("openai-completions");
    let is_strict_openai_compatible =
        is_openai_completions && !is_openai && caps.openai_compat_turn_validation;
    let is_mistral = caps.id_mode_strict9 || model_has_hint(model_id, caps.id_mode_hints);
    let gemini_signatures = model_has_hint(model_id, caps.gemini_signature_hints);
    let needs_full_sanitize = is_google || is_anthropic || is_mistral || gemini_signatures;
    let sanitize_ids = is_google || is_mistral || is_anthropic || is_openai_completions;

    TranscriptPolicy {
        sanitize_mode: if !is_openai && needs_full_sanitize {
            SanitizeMode::Full
        } else {
            SanitizeMode::ImagesOnly
        },
        sanitize_tool_call_ids: (!is_openai && sanitize_ids) || is_openai_completions,
        tool_call_id_mode: if is_mistral {
            Some(ToolCallIdMode::Strict9)
        } else if sanitize_ids {
            Some(ToolCallIdMode::Strict)
        } else {
            None
        },
        repair_tool_use_result_pairing: true,
        preserve_signatures: is_anthropic && caps.preserve_anthropic_signatures,
        sanitize_thought_signatures: (!is_openai && (gemini_signatures || is_google)).then_some(
            ThoughtSignatureOptions {
                allow_base64_only: true,
                include_camel_case: true,
            },
        ),
        sanitize_thinking_signatures: false,
        drop_thinking_blocks: model_has_hint(model_id, caps.drop_thinking_hints),
        apply_google_turn_ordering: !is_openai && (is_google || is_strict_openai_compatible),
        validate_gemini_turns: !is_openai && (is_google || is_strict_openai_compatible),
        validate_anthropic_turns: !is_openai && (is_anthropic || is_strict_openai_compatible),
        allow_synthetic_tool_results: !is_openai && (is_google || is_anthropic),
    }
}
