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

use crate::transcript::MessageFacts;
use crate::transcript::Transcript;

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
            Some("google-gemini-cli" | "google-generative-ai") => ProviderFamily::Gemini,
            Some(
                "openai"
                | "openai-completions"
                | "openai-responses"
                | "openai-codex-responses"
                | "azure-openai-responses",
            ) => ProviderFamily::OpenAi,
            _ => match provider.as_str() {
                "anthropic" | "amazon-bedrock" => ProviderFamily::Anthropic,
                "google" | "google-gemini-cli" => ProviderFamily::Gemini,
                "openai" | "openai-codex" => ProviderFamily::OpenAi,
                _ => ProviderFamily::Other,
            },
        }
    }
}

/// One broken rule: where (message index in the input transcript) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub index: usize,
    pub rule: &'static str,
    pub detail: String,
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
        let facts = message.facts();
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
