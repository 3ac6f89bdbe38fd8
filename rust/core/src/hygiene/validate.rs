//! `validate_for_provider`: the structural rules each provider family enforces on a replayed
//! transcript, checked the way the request would actually be sent.
//!
//! The model of sending (pi-ai): assistant turns that ended in `error` or `aborted` are skipped;
//! the rest goes through `convertToLlm` (pi-mono 0.58.3
//! `packages/coding-agent/src/core/messages.ts`); tool results become user-side content;
//! consecutive messages of the same API role form one turn (Anthropic and Gemini combine them).
//! A result that answers a skipped turn therefore reaches the provider as an orphan — the real
//! OpenClaw failure "unexpected tool_use_id found in tool_result blocks".

use std::collections::HashSet;

use crate::base::Error;
use crate::transcript::MessageFacts;
use crate::transcript::Transcript;

/// The model APIs `validate_for_provider` accepts: pi-ai's API names (pi-mono 0.58.3
/// `packages/ai/src/types.ts`, `KnownApi`) plus the legacy `"openai"` spelling that
/// `resolveTranscriptPolicy` (OpenClaw 2026.3.13 `src/agents/transcript-policy.ts`) treats as
/// OpenAI.
pub const KNOWN_MODEL_APIS: &[&str] = &[
    "anthropic-messages",
    "azure-openai-responses",
    "bedrock-converse-stream",
    "google-gemini-cli",
    "google-generative-ai",
    "google-vertex",
    "mistral-conversations",
    "openai",
    "openai-codex-responses",
    "openai-completions",
    "openai-responses",
];

/// The provider ids `validate_for_provider` accepts when no known model API is given: every id
/// `resolveTranscriptPolicy` has a capability row or alias for (OpenClaw 2026.3.13
/// `src/agents/provider-capabilities.ts`, `src/agents/model-selection.ts`) and the providers
/// OpenClaw ships configurations for. A misspelt provider (`"antropic"`) used to fall back
/// silently to "no rules"; with this list it is an error. Custom OpenAI-compatible providers
/// stay usable: any provider id is accepted together with a known model API.
pub const KNOWN_PROVIDERS: &[&str] = &[
    "amazon-bedrock",
    "anthropic",
    "aws-bedrock",
    "azure-openai-responses",
    "bedrock",
    "byteplus",
    "bytedance",
    "cerebras",
    "chutes",
    "cloudflare-ai-gateway",
    "deepinfra",
    "deepseek",
    "doubao",
    "fireworks",
    "github-copilot",
    "google",
    "google-antigravity",
    "google-gemini-cli",
    "google-vertex",
    "groq",
    "huggingface",
    "kilocode",
    "kimi-code",
    "kimi-coding",
    "litellm",
    "lmstudio",
    "minimax",
    "minimax-cn",
    "mistral",
    "moonshot",
    "nvidia",
    "ollama",
    "openai",
    "openai-codex",
    "opencode",
    "opencode-go",
    "opencode-go-auth",
    "opencode-zen",
    "openrouter",
    "perplexity",
    "qwen",
    "qwen-portal",
    "sglang",
    "synthetic",
    "together",
    "venice",
    "vercel-ai-gateway",
    "vllm",
    "volcengine",
    "xai",
    "xiaomi",
    "z-ai",
    "z.ai",
    "zai",
];

/// Provider families with different replay rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderFamily {
    Anthropic,
    OpenAi,
    Gemini,
    /// No structural rules beyond tool pairing.
    Other,
}

impl ProviderFamily {
    pub fn name(self) -> &'static str {
        match self {
            ProviderFamily::Anthropic => "anthropic",
            ProviderFamily::OpenAi => "openai",
            ProviderFamily::Gemini => "gemini",
            ProviderFamily::Other => "other",
        }
    }

    /// The family of a provider / model API (same inputs as `resolveTranscriptPolicy`).
    pub fn resolve(provider: Option<&str>, model_api: Option<&str>) -> ProviderFamily {
        let provider = provider
            .map(|p| p.trim().to_lowercase())
            .unwrap_or_default();
        match model_api.map(str::trim) {
            Some("anthropic-messages" | "bedrock-converse-stream") => ProviderFamily::Anthropic,
            Some("google-gemini-cli" | "google-generative-ai" | "google-vertex") => {
                ProviderFamily::Gemini
            }
            Some(
                "openai"
                | "openai-completions"
                | "openai-responses"
                | "openai-codex-responses"
                | "azure-openai-responses",
            ) => ProviderFamily::OpenAi,
            // Without an API: the one API pi-ai 0.58.3's model table serves the provider with
            // (pi-mono `packages/ai/src/models.generated.ts`), where it has only one.
            _ => match provider.as_str() {
                "anthropic" | "amazon-bedrock" | "minimax" | "minimax-cn" | "kimi-coding" => {
                    ProviderFamily::Anthropic
                }
                "google" | "google-gemini-cli" | "google-antigravity" | "google-vertex" => {
                    ProviderFamily::Gemini
                }
                "openai" | "openai-codex" | "azure-openai-responses" => ProviderFamily::OpenAi,
                _ => ProviderFamily::Other,
            },
        }
    }
}

impl ProviderFamily {
    /// [`ProviderFamily::resolve`] for a caller-supplied provider / model API, refusing names
    /// it does not know instead of falling back to [`ProviderFamily::Other`] (no rules).
    ///
    /// The rule: a `model_api` that is given must be one of [`KNOWN_MODEL_APIS`]; a known
    /// model API accepts any provider (a custom OpenAI-compatible provider names its own id);
    /// without a model API, a given `provider` must be one of [`KNOWN_PROVIDERS`] (trimmed,
    /// case-insensitive). Neither given means no family rules, as before.
    pub fn resolve_checked(
        provider: Option<&str>,
        model_api: Option<&str>,
    ) -> Result<ProviderFamily, Error> {
        if let Some(api) = model_api {
            if !KNOWN_MODEL_APIS.contains(&api.trim()) {
                return Err(Error::InvalidArgument(format!(
                    "unknown model_api {api:?}; known model APIs: {}",
                    KNOWN_MODEL_APIS.join(", ")
                )));
            }
        } else if let Some(name) = provider {
            let normalized = name.trim().to_lowercase();
            if !KNOWN_PROVIDERS.contains(&normalized.as_str()) {
                return Err(Error::InvalidArgument(format!(
                    "unknown provider {name:?} (give a known model_api to use a custom \
                     OpenAI-compatible provider); known providers: {}",
                    KNOWN_PROVIDERS.join(", ")
                )));
            }
        }
        Ok(ProviderFamily::resolve(provider, model_api))
    }
}

crate::base::python_class! {
    (name = "Violation", module = "clawctx._core.hygiene", get_all)
    /// One broken provider rule found by `validate_for_provider`.
    // Also what `cache_breakpoint_issues` and `request_issues` report. Its Python methods are in
    // `validate_py.rs`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Violation {
        /// Index of the offending message in the input transcript.
        pub index: usize,
        /// Rule name: first-turn-not-user, call-without-result, result-without-call,
        /// duplicate-call-id, duplicate-result, invalid-call-id, result-without-id,
        /// function-call-first.
        pub rule: &'static str,
        pub detail: String,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    User,
    Assistant,
}

/// A turn as sent: its side, the input indices it came from, calls made and results given.
struct Turn {
    side: Side,
    first_index: usize,
    calls: Vec<(usize, String)>,
    results: Vec<(usize, String)>,
}

fn is_valid_anthropic_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks `messages` (AgentMessages, before `convertToLlm`) against `family`'s rules.
pub fn validate_for_provider(messages: &Transcript, family: ProviderFamily) -> Vec<Violation> {
    messages.compute_facts();
    // Which input messages are sent, in order, with their facts.
    let mut sent: Vec<(usize, &MessageFacts)> = Vec::new();
    for (i, message) in messages.messages().iter().enumerate() {
        let facts = message.request_facts();
        if facts.is_role("assistant")
            && matches!(facts.stop_reason.as_deref(), Some("error" | "aborted"))
        {
            continue;
        }
        sent.push((i, facts));
    }
    // Roles after convertToLlm (messages.ts): user, assistant and toolResult pass; bashExecution,
    // custom and the summaries become user messages; other roles are dropped.
    let kept_roles: HashSet<&str> = ["user", "toolResult"].into();

    let mut turns: Vec<Turn> = Vec::new();
    let mut violations = Vec::new();
    for (i, facts) in sent {
        let role = facts.role.as_deref().unwrap_or("");
        let side = match role {
            "assistant" => Side::Assistant,
            r if kept_roles.contains(r) => Side::User,
            "bashExecution" | "custom" | "branchSummary" | "compactionSummary" => Side::User,
            _ => continue,
        };
        if turns.last().is_none_or(|t| t.side != side) {
            turns.push(Turn {
                side,
                first_index: i,
                calls: Vec::new(),
                results: Vec::new(),
            });
        }
        let turn = turns.last_mut().expect("pushed above");
        if side == Side::Assistant {
            turn.calls
                .extend(facts.tool_calls.iter().map(|c| (i, c.id.clone())));
        } else if role == "toolResult" {
            match &facts.tool_result_id {
                Some(id) => turn.results.push((i, id.clone())),
                None => violations.push(Violation {
                    index: i,
                    rule: "result-without-id",
                    detail: "tool result has no toolCallId".into(),
                }),
            }
        }
    }

    if family == ProviderFamily::Anthropic || family == ProviderFamily::Gemini {
        if let Some(first) = turns.first().filter(|t| t.side != Side::User) {
            violations.push(Violation {
                index: first.first_index,
                rule: "first-turn-not-user",
                detail: "the first turn sent must be a user turn".into(),
            });
        }
    }

    let mut seen_call_ids: HashSet<String> = HashSet::new();
    for (t, turn) in turns.iter().enumerate() {
        match turn.side {
            Side::Assistant => {
                let next_results: HashSet<&str> = turns
                    .get(t + 1)
                    .map(|n| n.results.iter().map(|(_, id)| id.as_str()).collect())
                    .unwrap_or_default();
                for (i, id) in &turn.calls {
                    if !next_results.contains(id.as_str()) {
                        violations.push(Violation {
                            index: *i,
                            rule: "call-without-result",
                            detail: format!("tool call {id} is not answered in the next turn"),
                        });
                    }
                    if !seen_call_ids.insert(id.clone()) && family != ProviderFamily::Other {
                        violations.push(Violation {
                            index: *i,
                            rule: "duplicate-call-id",
                            detail: format!("tool call id {id} is used twice"),
                        });
                    }
                    if family == ProviderFamily::Anthropic && !is_valid_anthropic_id(id) {
                        violations.push(Violation {
                            index: *i,
                            rule: "invalid-call-id",
                            detail: format!(
                                "tool call id {id:?} has characters outside [a-zA-Z0-9_-]"
                            ),
                        });
                    }
                }
            }
            Side::User => {
                let previous_calls: HashSet<&str> = t
                    .checked_sub(1)
                    .and_then(|p| turns.get(p))
                    .map(|p| p.calls.iter().map(|(_, id)| id.as_str()).collect())
                    .unwrap_or_default();
                let mut answered: HashSet<&str> = HashSet::new();
                for (i, id) in &turn.results {
                    if !previous_calls.contains(id.as_str()) {
                        violations.push(Violation {
                            index: *i,
                            rule: "result-without-call",
                            detail: format!(
                                "tool result {id} answers no call of the previous assistant turn"
                            ),
                        });
                    } else if !answered.insert(id.as_str()) {
                        violations.push(Violation {
                            index: *i,
                            rule: "duplicate-result",
                            detail: format!("tool call {id} is answered twice"),
                        });
                    }
                }
            }
        }
    }
    if family == ProviderFamily::Gemini {
        // A model turn with function calls must follow a user turn or a function-response turn;
        // merging makes every model turn follow a user-side turn except the first.
        if let Some(first) = turns
            .first()
            .filter(|t| t.side == Side::Assistant && !t.calls.is_empty())
        {
            violations.push(Violation {
                index: first.first_index,
                rule: "function-call-first",
                detail: "a function call turn must come after a user or function response turn"
                    .into(),
            });
        }
    }
    violations.sort_by_key(|v| v.index);
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_checked_refuses_unknown_names() {
        let err = ProviderFamily::resolve_checked(Some("antropic"), None).unwrap_err();
        assert!(err.to_string().contains("anthropic"), "{err}");
        let err = ProviderFamily::resolve_checked(None, Some("anthropic-msgs")).unwrap_err();
        assert!(err.to_string().contains("anthropic-messages"), "{err}");
        // An unknown model API is refused even beside a known provider.
        assert!(ProviderFamily::resolve_checked(Some("anthropic"), Some("x")).is_err());
    }

    #[test]
    fn resolve_checked_accepts_known_and_custom_with_api() {
        assert_eq!(
            ProviderFamily::resolve_checked(Some(" Anthropic "), None).unwrap(),
            ProviderFamily::Anthropic
        );
        assert_eq!(
            ProviderFamily::resolve_checked(Some("my-proxy"), Some("openai-completions")).unwrap(),
            ProviderFamily::OpenAi
        );
        assert_eq!(
            ProviderFamily::resolve_checked(None, None).unwrap(),
            ProviderFamily::Other
        );
        for api in KNOWN_MODEL_APIS {
            assert!(ProviderFamily::resolve_checked(None, Some(api)).is_ok());
        }
    }

    #[test]
    fn a_provider_pi_ai_serves_with_one_api_has_that_apis_family() {
        for (provider, family) in [
            ("minimax", ProviderFamily::Anthropic),
            ("MiniMax-CN", ProviderFamily::Anthropic),
            ("kimi-coding", ProviderFamily::Anthropic),
            ("google-vertex", ProviderFamily::Gemini),
            ("google-antigravity", ProviderFamily::Gemini),
            ("azure-openai-responses", ProviderFamily::OpenAi),
            ("openrouter", ProviderFamily::Other),
        ] {
            assert_eq!(
                ProviderFamily::resolve(Some(provider), None),
                family,
                "{provider}"
            );
        }
        assert_eq!(
            ProviderFamily::resolve(None, Some("google-vertex")),
            ProviderFamily::Gemini
        );
    }
}
