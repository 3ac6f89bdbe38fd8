//! Atomic units for token budgets (clawctx's `fit_to_budget`, no upstream counterpart): an
//! assistant message and the tool results right after it form one unit, every other message is
//! a unit of its own, so a cut between units never separates a call from its results.

use super::list::Transcript;

/// What a unit starts with, as far as where a kept history may begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum UnitStart {
    /// A message convertToLlm sends on the user side (user, bash execution, custom, summaries).
    User = 0,
    Assistant = 1,
    /// A tool result with no assistant message before it in the unit (an orphan).
    ToolResult = 2,
    /// Instructions kept among the messages by other runtimes (`system`, `developer`).
    System = 3,
    Other = 4,
    /// A user-side message of blank text only: the payload writers leave it out, so a kept
    /// history starting there starts with whatever comes next.
    BlankUser = 5,
}

fn start_kind(role: Option<&str>) -> UnitStart {
    match role {
        Some("user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary") => {
            UnitStart::User
        }
        Some("assistant") => UnitStart::Assistant,
        Some("toolResult") => UnitStart::ToolResult,
        Some("system" | "developer") => UnitStart::System,
        _ => UnitStart::Other,
    }
}

/// The first message index and the start kind of every unit, in order.
pub fn budget_units(messages: &Transcript) -> Vec<(usize, UnitStart)> {
    messages.compute_facts();
    let mut units: Vec<(usize, UnitStart)> = Vec::new();
    for (index, message) in messages.messages().iter().enumerate() {
        let facts = message.facts();
        let joins = facts.is_role("toolResult")
            && units
                .last()
                .is_some_and(|(_, kind)| *kind == UnitStart::Assistant);
        if !joins {
            let mut kind = start_kind(facts.role.as_deref());
            if kind == UnitStart::User && !message.send_shape().user_turn_is_sent() {
                kind = UnitStart::BlankUser;
            }
            units.push((index, kind));
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transcript(roles: &[&str]) -> Transcript {
        let values: Vec<_> = roles
            .iter()
            .map(|r| json!({"role": r, "content": "x"}))
            .collect();
        Transcript::from_values(&values)
    }

    #[test]
    fn a_blank_user_message_is_no_place_to_start() {
        let t = Transcript::from_values(&[
            json!({"role": "user", "content": " "}),
            json!({"role": "user", "content": [{"type": "text", "text": ""}]}),
            json!({"role": "user", "content": "hi"}),
            json!({"role": "compactionSummary", "summary": "s"}),
        ]);
        let kinds: Vec<_> = budget_units(&t).into_iter().map(|(_, k)| k).collect();
        assert_eq!(
            kinds,
            [
                UnitStart::BlankUser,
                UnitStart::BlankUser,
                UnitStart::User,
                UnitStart::User
            ]
        );
    }

    #[test]
    fn an_assistant_takes_the_results_after_it() {
        let t = transcript(&[
            "system",
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "user",
        ]);
        assert_eq!(
            budget_units(&t),
            vec![
                (0, UnitStart::System),
                (1, UnitStart::User),
                (2, UnitStart::Assistant),
                (5, UnitStart::User)
            ]
        );
    }

    #[test]
    fn a_result_without_an_assistant_before_it_stands_alone() {
        let t = transcript(&["toolResult", "user", "toolResult", "custom"]);
        assert_eq!(
            budget_units(&t),
            vec![
                (0, UnitStart::ToolResult),
                (1, UnitStart::User),
                (2, UnitStart::ToolResult),
                (3, UnitStart::User)
            ]
        );
    }

    #[test]
    fn empty_gives_no_units() {
        assert!(budget_units(&transcript(&[])).is_empty());
    }
}
