//! Per-transcript chars/4 token estimates from the cached [`MessageFacts`](super::MessageFacts):
//! pi-mono 0.58.3 `packages/coding-agent/src/core/compaction/compaction.ts`
//! (`estimateContextTokens`) and OpenClaw 2026.3.13 `estimateMessagesTokens`.

use super::estimate::{estimate_tokens_weighted, CharWeighting};
use super::list::Transcript;

/// Per-message estimates of a transcript (the UTF-16 rule from the cached facts; the CJK rule
/// needs each message's strings and parses them).
pub fn token_counts(messages: &Transcript, weighting: CharWeighting) -> Vec<u64> {
    if weighting == CharWeighting::Utf16 {
        messages.compute_facts();
    }
    messages
        .messages()
        .iter()
        .map(|m| match weighting {
            CharWeighting::Utf16 => m.facts().pi_tokens(),
            CharWeighting::Cjk => m
                .to_value()
                .map_or(0, |v| estimate_tokens_weighted(&v, weighting)),
        })
        .collect()
}

crate::base::python_class! {
    (name = "ContextTokens", module = "clawctx._core.transcript", get_all)
    /// Result of `estimate_context_tokens`.
    // What [`estimate_context_tokens`] returns (compaction.ts, `estimateContextTokens`). Its
    // Python methods are in `context_tokens_py.rs`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ContextTokens {
        /// `usage_tokens + trailing_tokens`: the context's estimated size.
        pub tokens: u64,
        /// The total tokens of the last usable assistant `usage`, or 0.
        pub usage_tokens: u64,
        /// The chars/4 estimate of the messages after that assistant.
        pub trailing_tokens: u64,
        /// The index of that assistant, or `None` when no usage was recorded.
        pub last_usage_index: Option<usize>,
    }
}

/// `estimateContextTokens`: the usage of the last assistant whose usage counts (not aborted or
/// errored) plus the chars/4 estimate of everything after it; without usage, the estimate of
/// everything.
pub fn estimate_context_tokens(messages: &Transcript) -> ContextTokens {
    let all = messages.messages();
    let last_usage = all.iter().enumerate().rev().find_map(|(i, m)| {
        let f = m.facts();
        let usable = f.is_role("assistant")
            && !matches!(f.stop_reason.as_deref(), Some("aborted" | "error"));
        f.usage_tokens.filter(|_| usable).map(|tokens| (i, tokens))
    });
    let (start, usage, index) = match last_usage {
        Some((i, tokens)) => (i + 1, tokens, Some(i)),
        None => (0, 0, None),
    };
    let trailing: u64 = all[start..].iter().map(|m| m.facts().pi_tokens()).sum();
    ContextTokens {
        tokens: usage + trailing,
        usage_tokens: usage,
        trailing_tokens: trailing,
        last_usage_index: index,
    }
}

/// OpenClaw's `estimateMessagesTokens` (`src/agents/compaction.ts`): pi's estimate after
/// removing `details` from
/// tool results (which pi's rules never count, so the sum is the same).
pub fn estimate_messages_tokens(messages: &Transcript) -> u64 {
    token_counts(messages, CharWeighting::Utf16).iter().sum()
}
