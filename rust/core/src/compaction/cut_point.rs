//! Where a compaction cuts the history (pi-mono 0.58.3
//! `packages/coding-agent/src/core/compaction/compaction.ts`: `findCutPoint`,
//! `findValidCutPoints`, `findTurnStartIndex`).

use crate::session::{types, Entry};

crate::base::python_class! {
    (name = "CutPoint", module = "clawctx._core.compaction")
    /// Where `find_cut_point` cuts (pi's `CutPointResult`).
    // Its Python attributes are the getters in `cut_point_py.rs` (`turn_start_index` is pi's
    // number there, -1 when the turn is not split).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct CutPoint {
        /// Index of the first entry kept verbatim.
        pub first_kept_entry_index: usize,
        /// The entry that starts the turn being split (`None` = JavaScript's −1).
        pub turn_start_index: Option<usize>,
        /// Whether the cut lands inside a turn (the cut entry is not a user message).
        pub is_split_turn: bool,
    }
}

pub(super) fn message_role(entry: &Entry) -> Option<&str> {
    if !entry.is_type(types::MESSAGE) {
        return None;
    }
    entry.message().and_then(|m| m.role.as_deref())
}

/// `findValidCutPoints`: messages of the roles that may open the kept part (never a tool
/// result, which must follow its call), plus `branch_summary` and `custom_message` entries.
fn is_valid_cut_point(entry: &Entry) -> bool {
    matches!(
        message_role(entry),
        Some(
            "bashExecution"
                | "custom"
                | "branchSummary"
                | "compactionSummary"
                | "user"
                | "assistant"
        )
    ) || entry.is_type(types::BRANCH_SUMMARY)
        || entry.is_type(types::CUSTOM_MESSAGE)
}

/// `findTurnStartIndex`'s test: user-role entries start a turn.
fn is_turn_start(entry: &Entry) -> bool {
    matches!(message_role(entry), Some("user" | "bashExecution"))
        || entry.is_type(types::BRANCH_SUMMARY)
        || entry.is_type(types::CUSTOM_MESSAGE)
}

/// pi's `estimateTokens` of a `message` entry's message (0 when it has none).
fn entry_message_tokens(entry: &Entry) -> u64 {
    entry.message().map_or(0, |m| m.json.facts().pi_tokens())
}

/// `findCutPoint(entries, start, end, keepRecentTokens)`, over `entries[start..end]`
/// (`end` is clamped to the length).
pub fn find_cut_point(
    entries: &[&Entry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    find_cut_point_by(entries, start, end, keep_recent_tokens, |i| {
        entry_message_tokens(entries[i])
    })
}

/// [`find_cut_point`] with the token estimate of the `message` entry at an index supplied by
/// the caller (the preparation reuses the messages it derived, facts cached).
pub(super) fn find_cut_point_by(
    entries: &[&Entry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
    tokens: impl Fn(usize) -> u64,
) -> CutPoint {
    let end = end.min(entries.len());
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| is_valid_cut_point(entries[i]))
        .collect();
    let Some(&first) = cut_points.first() else {
        return CutPoint {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };
    // Walk back from the newest entry, summing message entries only; at the first index where
    // the sum reaches the budget, cut at the first cut point at or after it. Quirk: with no
    // such cut point (or when the budget is never reached) the cut stays at the first one.
    let mut cut = first;
    let mut accumulated = 0u64;
    for i in (start..end).rev() {
        if !entries[i].is_type(types::MESSAGE) {
            continue;
        }
        accumulated += tokens(i);
        if accumulated >= keep_recent_tokens {
            if let Some(&c) = cut_points.get(cut_points.partition_point(|&c| c < i)) {
                cut = c;
            }
            break;
        }
    }
    // Take in the non-message entries (settings changes, labels, custom_message, ...) right
    // before the cut, up to a message, a compaction or the start. OpenClaw's cut-point code
    // treats a `reset` as the hard boundary a compaction is.
    while cut > start {
        let previous = entries[cut - 1];
        if previous.is_boundary() || previous.is_type(types::MESSAGE) {
            break;
        }
        cut -= 1;
    }
    let turn_start = if message_role(entries[cut]) == Some("user") {
        None
    } else {
        (start..=cut).rev().find(|&i| is_turn_start(entries[i]))
    };
    CutPoint {
        first_kept_entry_index: cut,
        turn_start_index: turn_start,
        is_split_turn: turn_start.is_some(),
    }
}
