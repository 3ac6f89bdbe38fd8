//! History truncation (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/history.ts`):
//! `limitHistoryTurns` and the per-channel history limit of
//! a session key.

use serde_json::Value;

use super::list::Transcript;

/// `limitHistoryTurns` (history.ts; with `keep_prelude`, leading summaries are kept as later
/// OpenClaw does, not 2026.3.13).
///
/// Keeps the messages from the `limit`-th last `user` message on. A limit that is absent,
/// zero, negative or not a number, an empty transcript, or one with at most `limit` user turns
/// comes back as the input itself. With `keep_prelude`, leading messages that are neither user
/// nor assistant (compaction and branch summaries, custom messages) stay in front.
pub fn limit_history_turns(
    input: &Transcript,
    limit: Option<f64>,
    keep_prelude: bool,
) -> Transcript {
    let Some(limit) = limit.filter(|l| *l > 0.0) else {
        return input.clone();
    };
    let messages = input.messages();
    if messages.is_empty() {
        return input.clone();
    }
    let roles: Vec<Option<&str>> = messages.iter().map(|m| m.facts().role.as_deref()).collect();
    let prelude = if keep_prelude {
        roles
            .iter()
            .take_while(|r| !matches!(r.as_deref(), Some("user" | "assistant")))
            .count()
    } else {
        0
    };
    let mut user_count = 0.0;
    // Upstream starts `lastUserIndex` at `messages.length`: a limit below 1 (0.5) is exceeded
    // by the very last user turn and keeps nothing after the prelude.
    let mut last_user = messages.len();
    for i in (prelude..messages.len()).rev() {
        if roles[i] == Some("user") {
            user_count += 1.0;
            if user_count > limit {
                let mut kept = messages[..prelude].to_vec();
                kept.extend_from_slice(&messages[last_user..]);
                return Transcript::from_messages(kept);
            }
            last_user = i;
        }
    }
    input.clone()
}

/// `getHistoryLimitFromSessionKey` (history.ts, as in 2026.3.13: no account-scoped keys): the
/// `historyLimit` that applies to a
/// session key like `agent:main:telegram:dm:123` under `config = {"channels": {...}}`.
pub fn history_limit_for_session_key(
    session_key: Option<&str>,
    config: Option<&Value>,
) -> Option<Value> {
    let (key, config) = (session_key?, config?);
    let mut parts: Vec<&str> = key.split(':').filter(|p| !p.is_empty()).collect();
    if parts.len() >= 3 && parts[0] == "agent" {
        parts.drain(..2);
    }
    if parts.len() < 2 {
        return None;
    }
    let provider = parts[0].to_lowercase();
    let kind = parts[1].to_lowercase();
    let user_id = strip_thread_suffix(&parts[2..].join(":"));
    let provider_config = config.get("channels")?.get(&provider)?;
    if !provider_config.is_object() {
        return None;
    }
    match kind.as_str() {
        // A per-DM `historyLimit` that is present wins even when it is null (upstream tests
        // `!== undefined`); the channel-wide values apply only when set.
        "dm" | "direct" => {
            let per_dm = provider_config
                .get("dms")
                .and_then(|dms| dms.get(&user_id))
                .and_then(|dm| dm.get("historyLimit"));
            per_dm.cloned().or_else(|| {
                provider_config
                    .get("dmHistoryLimit")
                    .filter(|v| !v.is_null())
                    .cloned()
            })
        }
        "channel" | "group" => provider_config
            .get("historyLimit")
            .filter(|v| !v.is_null())
            .cloned(),
        _ => None,
    }
}

/// Removes a trailing `:thread:<digits>` or `:topic:<digits>` (case-insensitive).
fn strip_thread_suffix(user_id: &str) -> String {
    let lower = user_id.to_ascii_lowercase();
    for marker in [":thread:", ":topic:"] {
        if let Some(pos) = lower.rfind(marker) {
            let digits = &user_id[pos + marker.len()..];
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                return user_id[..pos].to_owned();
            }
        }
    }
    user_id.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn thread_suffixes() {
        assert_eq!(strip_thread_suffix("123:thread:999"), "123");
        assert_eq!(strip_thread_suffix("123:TOPIC:5"), "123");
        assert_eq!(strip_thread_suffix("user:thread:abc"), "user:thread:abc");
        assert_eq!(strip_thread_suffix("123"), "123");
    }

    #[test]
    fn limits_by_kind() {
        let config = json!({"channels": {"telegram": {"dmHistoryLimit": 15, "historyLimit": 3, "dms": {"123": {"historyLimit": 7}}}}});
        let get = |k: &str| history_limit_for_session_key(Some(k), Some(&config));
        assert_eq!(get("telegram:dm:123"), Some(json!(7)));
        assert_eq!(get("agent:main:telegram:direct:456"), Some(json!(15)));
        assert_eq!(get("telegram:group:1"), Some(json!(3)));
        assert_eq!(get("telegram:slash:1"), None);
        assert_eq!(get("unknown:dm:1"), None);
    }
}
