"""History truncation (OpenClaw 2026.3.13 `src/agents/pi-embedded-runner/history.ts`), token estimation
(pi-mono 0.58.3 `packages/coding-agent/src/core/compaction/compaction.ts`, ``estimateTokens``) and
context pruning (OpenClaw 2026.3.13 `src/agents/pi-extensions/context-pruning/`).

Covers the cases of upstream's limit-history, history-limit-from-session-key, pi compaction and
context-pruning tests plus the rules they rest on. Pinned choices: ``limit_history_turns`` is
the baseline (2026.3.13 ``limitHistoryTurns``) and ``keep_prelude=True`` is a later revision
that always keeps leading summaries; the later hysteresis is not implemented, so it is not
tested as behaviour. Session-key parsing is the baseline (empty segments removed, exact provider
key). Pruning is the baseline: a tool result holding any image block is skipped entirely. Soft
trim cuts by UTF-16 units but keeps a surrogate pair that straddles a cut whole.

Unless a test says otherwise the context window is 1000 tokens, i.e. 4000 pruner chars.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import clawctx

Message = dict[str, Any]

# ---- message builders -----------------------------------------------------------------------

USAGE_STUB = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}


def user(text: str) -> Message:
    return {"role": "user", "content": text, "timestamp": 1}


def assistant(text: str, **extra: Any) -> Message:
    message: Message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-responses",
        "provider": "openai",
        "model": "fake",
        "usage": dict(USAGE_STUB),
        "stopReason": "stop",
        "timestamp": 2,
    }
    message.update(extra)
    return message


def assistant_blocks(blocks: list[Any], **extra: Any) -> Message:
    message = assistant("", **extra)
    message["content"] = blocks
    return message


def tool_call(call_id: str, name: str, arguments: Any) -> Message:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def tool_result(call_id: str, name: str, text: str) -> Message:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }


def image_tool_result(call_id: str, name: str, text: str) -> Message:
    message = tool_result(call_id, name, text)
    message["content"] = [
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
        {"type": "text", "text": text},
    ]
    return message


def find_tool_result(messages: Any, call_id: str) -> Message:
    for message in messages:
        if message.get("role") == "toolResult" and message.get("toolCallId") == call_id:
            return dict(message)
    raise AssertionError(f"missing toolResult {call_id}")


def tool_text(messages: Any, call_id: str) -> str:
    """The first text block of a tool result (as upstream's ``toolText`` helper reads it)."""
    for block in find_tool_result(messages, call_id)["content"]:
        if block.get("type") == "text":
            return str(block["text"])
    return ""


# ---- settings builders ----------------------------------------------------------------------

DEFAULT_EFFECTIVE: dict[str, Any] = {
    "mode": "cache-ttl",
    "ttlMs": 300_000,
    "keepLastAssistants": 3,
    "softTrimRatio": 0.3,
    "hardClearRatio": 0.5,
    "minPrunableToolChars": 50_000,
    "tools": {},
    "softTrim": {"maxChars": 4000, "headChars": 1500, "tailChars": 1500},
    "hardClear": {"enabled": True, "placeholder": "[Old tool result content cleared]"},
}


def effective(**overrides: Any) -> dict[str, Any]:
    """The default effective settings with top-level keys replaced (like `{...DEFAULTS, ...}`)."""
    settings = copy.deepcopy(DEFAULT_EFFECTIVE)
    settings.update(overrides)
    return settings


def aggressive(**overrides: Any) -> dict[str, Any]:
    """The settings most upstream pruning tests use: prune everything eligible."""
    base: dict[str, Any] = {
        "keepLastAssistants": 0,
        "softTrimRatio": 0.0,
        "hardClearRatio": 0.0,
        "minPrunableToolChars": 0,
        "hardClear": {"enabled": True, "placeholder": "[cleared]"},
        "softTrim": {"maxChars": 10, "headChars": 3, "tailChars": 3},
    }
    base.update(overrides)
    return effective(**base)


def prune(messages: Any, settings: Any, window: float | None = 1000) -> clawctx.Transcript:
    return clawctx.prune_context(messages, settings, context_window_tokens=window)


# =============================================================================================
# limitHistoryTurns (OpenClaw src/agents/pi-embedded-runner/history.ts)
# =============================================================================================


def numbered_turns(n_turns: int) -> list[Message]:
    """U0 A1 U2 A3 ... with content "message <i>"."""
    messages: list[Message] = []
    for turn in range(n_turns):
        messages.append(user(f"message {2 * turn}"))
        messages.append(assistant(f"message {2 * turn + 1}"))
    return messages


@pytest.mark.parametrize("limit", [None, 0, -1])
def test_limit_absent_zero_or_negative_returns_same_object(limit: int | None) -> None:
    t = clawctx.Transcript(numbered_turns(3))
    assert clawctx.limit_history_turns(t, limit) is t


def test_limit_on_empty_input() -> None:
    assert len(clawctx.limit_history_turns([], 5)) == 0
    empty = clawctx.Transcript([])
    assert clawctx.limit_history_turns(empty, 5) is empty


def test_fewer_turns_than_limit_returns_same_object() -> None:
    t = clawctx.Transcript(numbered_turns(2))
    assert clawctx.limit_history_turns(t, 10) is t
    exactly = clawctx.Transcript(numbered_turns(3))
    assert clawctx.limit_history_turns(exactly, 3) is exactly


def test_list_input_under_limit_comes_back_equal() -> None:
    messages = numbered_turns(2)
    out = clawctx.limit_history_turns(messages, 10)
    assert isinstance(out, clawctx.Transcript)
    assert out.to_list() == messages


def test_limit_two_keeps_last_two_turns() -> None:
    messages = numbered_turns(3)
    out = clawctx.limit_history_turns(messages, 2).to_list()
    assert len(out) == 4
    assert out[0]["content"] == "message 2"
    assert out == messages[2:]


def test_limit_one_keeps_last_turn() -> None:
    messages = numbered_turns(3)
    out = clawctx.limit_history_turns(messages, 1).to_list()
    assert out == messages[4:]
    assert out[0]["content"] == "message 4"
    assert out[1]["content"] == [{"type": "text", "text": "message 5"}]


@pytest.mark.parametrize(("limit", "kept_turns"), [(1.5, 1), (2.9, 2), (0.5, 0), (0.01, 0)])
def test_fractional_limit_is_floored(limit: float, kept_turns: int) -> None:
    # OpenClaw 2026.3.13 counts user turns until the count exceeds the limit: a fractional
    # limit acts as its floor, and one below 1 keeps nothing (it used to panic).
    messages = numbered_turns(3)
    out = clawctx.limit_history_turns(messages, limit).to_list()
    assert out == (messages[len(messages) - 2 * kept_turns :] if kept_turns else [])


def test_limit_one_with_consecutive_assistants() -> None:
    # U A A U A, limit 1 => [U, A]
    messages = [user("u1"), assistant("a1"), assistant("a2"), user("u2"), assistant("a3")]
    out = clawctx.limit_history_turns(messages, 1).to_list()
    assert out == [user("u2"), assistant("a3")]


def test_limit_one_drops_earlier_tool_call_turn() -> None:
    messages = [
        user("first"),
        assistant_blocks([tool_call("1", "read", {"path": "a"})]),
        user("second"),
        assistant("response"),
    ]
    out = clawctx.limit_history_turns(messages, 1).to_list()
    assert out == [user("second"), assistant("response")]


def test_only_exact_user_role_counts_as_a_turn() -> None:
    messages = [
        user("u1"),
        assistant("a1"),
        tool_result("t1", "exec", "out"),
        {"role": "custom", "customType": "note", "content": "c", "display": True},
        {"role": "bashExecution", "command": "ls", "output": "x", "exitCode": 0},
        {"role": "branchSummary", "summary": "s", "fromId": "x"},
        {"role": "User", "content": "not a user role"},
        user("u2"),
        assistant("a2"),
    ]
    t = clawctx.Transcript(messages)
    assert clawctx.limit_history_turns(t, 2) is t
    assert clawctx.limit_history_turns(t, 1).to_list() == messages[7:]


def test_baseline_drops_leading_compaction_summary() -> None:
    summary = {"role": "compactionSummary", "summary": "earlier", "tokensBefore": 10}
    messages = [summary, user("u1"), assistant("a1"), user("u2"), assistant("a2")]
    assert clawctx.limit_history_turns(messages, 1).to_list() == messages[3:]


def test_compaction_summary_only_transcript_is_returned_as_is() -> None:
    t = clawctx.Transcript([{"role": "compactionSummary", "summary": "s", "tokensBefore": 1}])
    assert clawctx.limit_history_turns(t, 2) is t
    assert clawctx.limit_history_turns(t, 2, keep_prelude=True) is t


def test_keep_prelude_keeps_leading_summaries_in_front() -> None:
    prelude = [
        {"role": "compactionSummary", "summary": "earlier", "tokensBefore": 10},
        {"role": "branchSummary", "summary": "branch", "fromId": "x"},
        {"role": "custom", "customType": "ctx", "content": "c", "display": False},
    ]
    body = numbered_turns(3)
    out = clawctx.limit_history_turns(prelude + body, 1, keep_prelude=True).to_list()
    assert out == prelude + body[4:]
    # Without the flag the baseline drops them.
    assert clawctx.limit_history_turns(prelude + body, 1).to_list() == body[4:]


def test_keep_prelude_only_covers_messages_before_the_first_user_or_assistant() -> None:
    summary = {"role": "compactionSummary", "summary": "late", "tokensBefore": 10}
    messages = [assistant("a0"), summary, user("u1"), assistant("a1"), user("u2"), assistant("a2")]
    out = clawctx.limit_history_turns(messages, 1, keep_prelude=True).to_list()
    assert out == messages[4:]


def test_keep_prelude_under_limit_returns_same_object() -> None:
    t = clawctx.Transcript(
        [{"role": "compactionSummary", "summary": "s", "tokensBefore": 1}, *numbered_turns(2)]
    )
    assert clawctx.limit_history_turns(t, 2, keep_prelude=True) is t


def test_six_turns_limit_four_is_baseline_not_hysteresis() -> None:
    # [L] would keep all 6 turns (max = ceil(4 * 1.5) = 6); the pinned baseline keeps 4.
    messages = numbered_turns(6)
    out = clawctx.limit_history_turns(messages, 4).to_list()
    assert out == messages[4:]


def test_fractional_limit_cuts_when_the_count_exceeds_it() -> None:
    messages = numbered_turns(4)
    assert clawctx.limit_history_turns(messages, 1.5).to_list() == messages[6:]


def test_limit_history_does_not_mutate_input_and_keeps_bytes() -> None:
    raw = (
        b'[{"role": "user", "content": "u1"},{"role":"assistant","content":[]},'
        b'{"content":"u2",  "role":"user", "x": 1.50},{"role":"assistant", "content": []}]'
    )
    t = clawctx.Transcript.from_json(raw)
    out = clawctx.limit_history_turns(t, 1)
    assert out.to_json() == (
        b'[{"content":"u2",  "role":"user", "x": 1.50},{"role":"assistant", "content": []}]'
    )
    assert t.to_json() == raw
    messages = numbered_turns(3)
    before = copy.deepcopy(messages)
    clawctx.limit_history_turns(messages, 1)
    assert messages == before


def test_truncation_then_pairing_repair_leaves_no_tool_results() -> None:
    messages = [
        user("turn 1"),
        assistant_blocks([tool_call("c1", "read", {"path": "a"})], stopReason="toolUse"),
        tool_result("c1", "read", "A"),
        user("turn 2"),
        assistant_blocks([tool_call("c2", "exec", {"cmd": "ls"})], stopReason="toolUse"),
        tool_result("c2", "exec", "B"),
        user("turn 3"),
        assistant("done"),
    ]
    limited = clawctx.limit_history_turns(messages, 1)
    repaired = clawctx.history.sanitize_tool_use_result_pairing(limited, now_ms=0)
    assert repaired.roles() == ["user", "assistant"]
    assert all(m["role"] != "toolResult" for m in repaired)
    assert repaired.to_list() == [user("turn 3"), assistant("done")]


HISTORY_ROLES = st.lists(st.sampled_from(["user", "assistant", "toolResult"]), max_size=40)


def role_message(role: str, i: int) -> Message:
    if role == "toolResult":
        return tool_result(f"t{i}", "exec", f"m{i}")
    if role == "assistant":
        return assistant(f"m{i}")
    return user(f"m{i}")


@given(roles=HISTORY_ROLES, limit=st.integers(min_value=1, max_value=6))
def test_property_limit_keeps_exactly_the_last_user_turns(roles: list[str], limit: int) -> None:
    messages = [role_message(role, i) for i, role in enumerate(roles)]
    t = clawctx.Transcript(messages)
    out = clawctx.limit_history_turns(t, limit)
    user_indexes = [i for i, role in enumerate(roles) if role == "user"]
    if len(user_indexes) <= limit:
        assert out is t
        return
    kept = out.to_list()
    start = len(messages) - len(kept)
    assert kept == messages[start:]
    assert kept[0]["role"] == "user"
    assert sum(1 for m in kept if m["role"] == "user") == min(limit, len(user_indexes))
    assert start == user_indexes[-limit]


PRELUDE_ROLES = st.lists(
    st.sampled_from(["user", "assistant", "toolResult", "compactionSummary", "custom"]),
    max_size=40,
)


def any_role_message(role: str, i: int) -> Message:
    if role == "compactionSummary":
        return {"role": role, "summary": f"m{i}", "tokensBefore": i}
    if role == "custom":
        return {"role": role, "customType": "c", "content": f"m{i}", "display": True}
    return role_message(role, i)


@given(roles=PRELUDE_ROLES, limit=st.integers(min_value=1, max_value=6))
def test_property_keep_prelude_keeps_leading_prelude_and_last_turns(
    roles: list[str], limit: int
) -> None:
    messages = [any_role_message(role, i) for i, role in enumerate(roles)]
    t = clawctx.Transcript(messages)
    out = clawctx.limit_history_turns(t, limit, keep_prelude=True)
    prelude = 0
    while prelude < len(roles) and roles[prelude] not in ("user", "assistant"):
        prelude += 1
    user_indexes = [i for i, role in enumerate(roles) if role == "user"]
    if len(user_indexes) <= limit:
        assert out is t
        return
    assert out.to_list() == messages[:prelude] + messages[user_indexes[-limit] :]


# =============================================================================================
# getHistoryLimitFromSessionKey (OpenClaw src/agents/pi-embedded-runner/history.ts)
# =============================================================================================

limit_for = clawctx.history_limit_for_session_key


def test_history_limit_missing_key_or_config() -> None:
    config = {"channels": {"telegram": {"dmHistoryLimit": 15}}}
    assert limit_for(None, config) is None
    assert limit_for("telegram:dm:123", None) is None


def test_history_limit_dm_defaults() -> None:
    assert limit_for("telegram:dm:123", {"channels": {"telegram": {"dmHistoryLimit": 15}}}) == 15
    assert limit_for("whatsapp:dm:123", {"channels": {"whatsapp": {"dmHistoryLimit": 20}}}) == 20
    assert (
        limit_for("agent:main:telegram:dm:123", {"channels": {"telegram": {"dmHistoryLimit": 10}}})
        == 10
    )


@pytest.mark.parametrize(
    "key",
    [
        "agent:main:telegram:dm:123:thread:999",
        "agent:main:telegram:dm:123:topic:555",
        "telegram:dm:123:thread:999",
        "telegram:dm:123:THREAD:999",
        "telegram:dm:123",
    ],
)
def test_history_limit_per_dm_override_strips_thread_suffix(key: str) -> None:
    config = {"channels": {"telegram": {"dmHistoryLimit": 15, "dms": {"123": {"historyLimit": 7}}}}}
    assert limit_for(key, config) == 7


def test_history_limit_non_numeric_thread_marker_is_kept() -> None:
    config = {
        "channels": {
            "telegram": {"dmHistoryLimit": 15, "dms": {"user:thread:abc": {"historyLimit": 9}}}
        }
    }
    assert limit_for("agent:main:telegram:dm:user:thread:abc", config) == 9


def test_history_limit_channel_kind_uses_history_limit() -> None:
    config = {
        "channels": {
            "slack": {"historyLimit": 10, "dmHistoryLimit": 15},
            "discord": {"historyLimit": 8},
        }
    }
    assert limit_for("agent:beta:slack:channel:c1", config) == 10
    assert limit_for("discord:channel:123456", config) == 8


def test_history_limit_unknown_kind_provider_or_empty_provider_config() -> None:
    config = {"channels": {"telegram": {"dmHistoryLimit": 15, "historyLimit": 3}}}
    assert limit_for("telegram:slash:123", config) is None
    assert limit_for("unknown:dm:123", config) is None
    assert limit_for("telegram:dm:123", {"channels": {"telegram": {}}}) is None


@pytest.mark.parametrize(
    "provider",
    ["telegram", "whatsapp", "discord", "slack", "signal", "imessage", "msteams", "nextcloud-talk"],
)
def test_history_limit_for_every_provider(provider: str) -> None:
    config = {
        "channels": {
            provider: {
                "dmHistoryLimit": 20,
                "historyLimit": 12,
                "dms": {"user123": {"historyLimit": 7}},
            }
        }
    }
    assert limit_for(f"{provider}:dm:user123", config) == 7
    assert limit_for(f"{provider}:dm:otheruser", config) == 20
    assert limit_for(f"agent:main:{provider}:dm:otheruser", config) == 20
    assert limit_for(f"agent:main:{provider}:dm:user123", config) == 7
    assert limit_for(f"{provider}:channel:room1", config) == 12


def test_history_limit_group_kind() -> None:
    assert limit_for("discord:group:123", {"channels": {"discord": {"historyLimit": 15}}}) == 15
    assert (
        limit_for("agent:main:slack:group:abc", {"channels": {"slack": {"historyLimit": 10}}}) == 10
    )
    assert (
        limit_for("telegram:channel:1", {"channels": {"telegram": {"dmHistoryLimit": 5}}}) is None
    )


def test_history_limit_per_dm_needs_an_exact_user_match() -> None:
    config = {"channels": {"telegram": {"dmHistoryLimit": 15, "dms": {"456": {"historyLimit": 5}}}}}
    assert limit_for("telegram:dm:123", config) == 15
    teams = {
        "channels": {
            "msteams": {"dmHistoryLimit": 20, "dms": {"user@example.com": {"historyLimit": 7}}}
        }
    }
    assert limit_for("msteams:dm:user@example.com", teams) == 7


def test_history_limit_dm_and_direct_are_the_same_kind() -> None:
    config = {"channels": {"telegram": {"dmHistoryLimit": 15, "historyLimit": 3}}}
    assert limit_for("telegram:dm:123", config) == 15
    assert limit_for("telegram:direct:123", config) == 15
    assert limit_for("agent:main:telegram:direct:123", config) == 15


def test_history_limit_baseline_parsing_details() -> None:
    config = {"channels": {"telegram": {"dmHistoryLimit": 15, "dms": {"a:b": {"historyLimit": 4}}}}}
    # [B] empty segments are removed.
    assert limit_for("telegram::dm::123", config) == 15
    assert limit_for("agent:main::telegram:dm:123", config) == 15
    # Provider and kind are lowercased; the user id is re-joined with ":".
    assert limit_for("Telegram:DM:123", config) == 15
    assert limit_for("telegram:dm:a:b", config) == 4
    # [B] exact provider key: no alias normalisation, a capitalised config key does not match.
    assert limit_for("telegram:dm:1", {"channels": {"Telegram": {"dmHistoryLimit": 15}}}) is None
    # The provider config must be a non-array object.
    assert limit_for("telegram:dm:1", {"channels": {"telegram": [15]}}) is None


# =============================================================================================
# token estimation (pi compaction.ts estimateTokens; OpenClaw src/agents/compaction.ts)
# =============================================================================================


def test_calculate_context_tokens() -> None:
    usage = {"input": 1000, "output": 500, "cacheRead": 200, "cacheWrite": 100, "totalTokens": 1800}
    assert clawctx.history.usage_tokens(usage) == 1800
    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    assert clawctx.history.usage_tokens(zero) == 0
    # totalTokens falsy => the sum of the components.
    parts = {"input": 10, "output": 20, "cacheRead": 30, "cacheWrite": 40, "totalTokens": 0}
    assert clawctx.history.usage_tokens(parts) == 100
    # totalTokens truthy wins even when it disagrees with the components.
    assert clawctx.history.usage_tokens({**parts, "totalTokens": 7}) == 7


def usage_of(input_tokens: int) -> dict[str, int]:
    return {
        "input": input_tokens,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": input_tokens,
    }


def test_last_assistant_usage_is_the_last_normal_assistant() -> None:
    messages = [
        user("hi"),
        assistant("a", usage=usage_of(100)),
        user("again"),
        assistant("b", usage=usage_of(200)),
    ]
    r = clawctx.estimate_context_tokens(messages)
    assert r.last_usage_index == 3
    assert r.usage_tokens == 200
    assert r.trailing_tokens == 0
    assert r.tokens == 200


@pytest.mark.parametrize("stop_reason", ["aborted", "error"])
def test_last_assistant_usage_skips_aborted_and_errored(stop_reason: str) -> None:
    messages = [
        user("hi"),
        assistant("a", usage=usage_of(100)),
        user("abcd"),
        assistant("abcdefgh", usage=usage_of(200), stopReason=stop_reason),
    ]
    r = clawctx.estimate_context_tokens(messages)
    assert r.last_usage_index == 1
    assert r.usage_tokens == 100
    # The skipped assistant is estimated like any trailing message: 1 + 2 tokens.
    assert r.trailing_tokens == 3
    assert r.tokens == 103


def test_last_assistant_usage_none_without_assistants() -> None:
    messages = [user("hello"), user("abcdefgh")]
    r = clawctx.estimate_context_tokens(messages)
    assert r.last_usage_index is None
    assert r.usage_tokens == 0
    assert r.trailing_tokens == 4
    assert r.tokens == 4


@pytest.mark.parametrize(
    "block",
    [
        {"type": "toolCall", "id": "a", "name": "read"},  # no arguments
        {"type": "toolCall", "id": "a", "arguments": {}},  # no name
        {"type": "text"},
        {"type": "thinking", "thinking": None},
    ],
)
def test_estimate_tokens_rejects_blocks_pi_cannot_read(block: dict[str, Any]) -> None:
    # pi-mono 0.58.3 estimateTokens throws a TypeError on these (conformance case
    # pi_estimate_tokens-127); clawctx raises ValueError instead of guessing.
    with pytest.raises(ValueError, match="cannot estimate tokens"):
        clawctx.estimate_tokens({"role": "assistant", "content": [block]})


def test_estimate_context_tokens_usage_plus_trailing_estimate() -> None:
    messages = [
        user("x" * 4000),  # before the usage: not counted
        assistant("a", usage={"input": 900, "output": 100, "totalTokens": 1000}),
        user("abcdefgh"),  # 2
        tool_result("t1", "read", "abcd"),  # 1
        assistant_blocks([{"type": "text", "text": "abcde"}]),  # usage-less (stripped): 2
    ]
    messages[4].pop("usage")
    r = clawctx.estimate_context_tokens(messages)
    assert (r.tokens, r.usage_tokens, r.trailing_tokens, r.last_usage_index) == (1005, 1000, 5, 1)


def test_estimate_context_tokens_without_any_usage_sums_everything() -> None:
    a = assistant("abcd")
    a.pop("usage")
    messages = [user("hello"), a, tool_result("t", "x", "abcdefghi")]
    r = clawctx.estimate_context_tokens(messages)
    assert (r.tokens, r.usage_tokens, r.trailing_tokens, r.last_usage_index) == (
        2 + 1 + 3,
        0,
        6,
        None,
    )


def test_estimate_context_tokens_only_aborted_usage_counts_as_none() -> None:
    messages = [
        user("hello"),
        assistant("abcd", usage=usage_of(500), stopReason="aborted"),
        assistant("abcd", usage=usage_of(600), stopReason="error"),
    ]
    r = clawctx.estimate_context_tokens(messages)
    assert r.last_usage_index is None
    assert r.usage_tokens == 0
    assert r.tokens == 2 + 1 + 1


def test_estimate_context_tokens_uses_component_sum_when_total_is_zero() -> None:
    usage = {"input": 10, "output": 20, "cacheRead": 30, "cacheWrite": 40, "totalTokens": 0}
    messages = [user("hi"), assistant("a", usage=usage), user("abcd")]
    r = clawctx.estimate_context_tokens(messages)
    assert (r.tokens, r.usage_tokens, r.last_usage_index) == (101, 100, 1)


def test_usage_on_non_assistant_messages_is_ignored() -> None:
    u = user("abcd")
    u["usage"] = usage_of(999)
    r = clawctx.estimate_context_tokens([u])
    assert r.last_usage_index is None
    assert r.tokens == 1


# CJK-weighted chars (later OpenClaw src/utils/cjk-chars.ts, estimateStringChars) -----------

CJK_VECTORS = [
    ("hello", 5),
    ("你好世", 12),
    ("hi你好", 10),
    ("こんにちは", 20),
    ("안녕", 8),
    ("", 0),
    ("\U00020000", 4),
    ("你\U00020000", 8),
    ("hi\U00020000", 6),
]


@pytest.mark.parametrize(("text", "chars"), CJK_VECTORS)
def test_estimate_string_chars_upstream_vectors(text: str, chars: int) -> None:
    assert clawctx.history.estimate_string_chars(text) == chars


@pytest.mark.parametrize(
    ("text", "chars"),
    [
        ("\u2e7f", 1),
        ("\u2e80", 4),
        ("\u9fff", 4),
        ("\ua000", 4),
        ("\ua4ff", 4),
        ("\ua500", 1),
        ("\uac00", 4),
        ("\ud7af", 4),
        ("\ud7b0", 1),
        ("\uf8ff", 1),
        ("\uf900", 4),
        ("\ufaff", 4),
        ("\ufb00", 1),
        ("\U0001ffff", 2),
        ("\U0002fa1f", 4),
        ("\U0002fa20", 2),
        # Non-CJK text keeps its UTF-16 length, also next to CJK characters.
        ("😀", 2),
        ("😀你", 6),
        ("é你", 5),
    ],
)
def test_estimate_string_chars_range_edges(text: str, chars: int) -> None:
    assert clawctx.history.estimate_string_chars(text) == chars


def test_estimate_tokens_cjk_weighting_is_opt_in() -> None:
    m = user("你好世")
    assert clawctx.estimate_tokens(m) == 1  # 3 UTF-16 units
    assert clawctx.estimate_tokens(m, cjk=True) == 3  # 12 weighted chars
    tr = tool_result("t", "x", "こんにちは")
    assert clawctx.estimate_tokens(tr) == 2
    assert clawctx.estimate_tokens(tr, cjk=True) == 5


# pi estimateTokens (packages/coding-agent/src/core/compaction/compaction.ts) ----------------


def test_estimate_tokens_derived_vectors() -> None:
    assert clawctx.estimate_tokens(user("hello")) == 2
    assert clawctx.estimate_tokens(assistant_blocks([tool_call("c", "read", {})])) == 2
    image_only = tool_result("t", "x", "")
    image_only["content"] = [{"type": "image", "data": "AA==", "mimeType": "image/png"}]
    assert clawctx.estimate_tokens(image_only) == 1200


@pytest.mark.parametrize(
    ("message", "tokens"),
    [
        # user: string length; array => text blocks only, images count 0.
        (user("abcdefghi"), 3),
        (
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "abcd"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                ],
            },
            1,
        ),
        # UTF-16 code units: three emoji are six units.
        (user("😀😀😀"), 2),
        # assistant: text + thinking + toolCall name + JSON.stringify(arguments).
        (
            assistant_blocks(
                [
                    {"type": "text", "text": "abc"},
                    {"type": "thinking", "thinking": "defg"},
                    tool_call("c", "read", {"path": "a.txt"}),
                ]
            ),
            7,  # 3 + 4 + 4 + len('{"path":"a.txt"}') = 27
        ),
        # JSON.stringify leaves non-ASCII unescaped: 1 + len('{"q":"é"}') = 10.
        (assistant_blocks([tool_call("c", "x", {"q": "é"})]), 3),
        # toolResult / custom: string length, or text + 4800 per image.
        (
            {
                "role": "toolResult",
                "toolCallId": "t",
                "toolName": "x",
                "content": [
                    {"type": "text", "text": "abcd"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                ],
            },
            2401,
        ),
        ({"role": "toolResult", "toolCallId": "t", "toolName": "x", "content": "abcdefgh"}, 2),
        ({"role": "custom", "customType": "c", "content": "abcde", "display": True}, 2),
        (
            {
                "role": "custom",
                "customType": "c",
                "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}],
                "display": True,
            },
            1200,
        ),
        # bashExecution: command + output, even when excluded from context.
        (
            {
                "role": "bashExecution",
                "command": "ls",
                "output": "abc",
                "exitCode": 0,
                "excludeFromContext": True,
            },
            2,
        ),
        ({"role": "branchSummary", "summary": "x" * 9, "fromId": "a"}, 3),
        ({"role": "compactionSummary", "summary": "😀😀😀", "tokensBefore": 1}, 2),
        # Any other role counts nothing.
        ({"role": "system", "content": "x" * 100}, 0),
    ],
)
def test_estimate_tokens_per_role_rules(message: Message, tokens: int) -> None:
    assert clawctx.estimate_tokens(message) == tokens


def test_estimate_messages_tokens_sums_and_ignores_tool_result_details() -> None:
    with_details = tool_result("t", "exec", "abcdefgh")
    with_details["details"] = {"stdout": "x" * 10_000}
    messages = [user("hello"), assistant("abcd"), with_details]
    expected = sum(clawctx.estimate_tokens(m) for m in messages)
    assert expected == 2 + 1 + 2
    assert clawctx.history.estimate_messages_tokens(messages) == expected
    assert clawctx.history.estimate_messages_tokens(clawctx.Transcript(messages)) == expected


def test_token_counts_is_an_int64_array_of_per_message_estimates() -> None:
    messages = [
        user("hello"),
        user("你好世"),
        assistant_blocks([tool_call("c", "read", {})]),
        image_tool_result("t", "x", "abcd"),
        {"role": "bashExecution", "command": "ls", "output": "abc", "exitCode": 0},
        {"role": "system", "content": "zzz"},
    ]
    t = clawctx.Transcript(messages)
    counts = t.token_counts()
    assert isinstance(counts, np.ndarray)
    assert counts.dtype == np.dtype(np.int64)
    assert counts.shape == (len(messages),)
    assert counts.tolist() == [clawctx.estimate_tokens(m) for m in messages]
    assert counts.tolist() == [2, 1, 2, 1201, 2, 0]
    cjk = t.token_counts(cjk=True)
    assert cjk.dtype == np.dtype(np.int64)
    assert cjk.tolist() == [clawctx.estimate_tokens(m, cjk=True) for m in messages]
    assert cjk[1] == 3
    empty = clawctx.Transcript([]).token_counts()
    assert empty.dtype == np.dtype(np.int64)
    assert empty.shape == (0,)


# =============================================================================================
# computeEffectiveSettings (OpenClaw src/agents/pi-extensions/context-pruning/settings.ts)
# =============================================================================================


@pytest.mark.parametrize(
    "raw",
    [{"mode": "off"}, {}, None, "cache-ttl", [], {"mode": "CACHE-TTL"}, {"ttl": "5m"}],
)
def test_settings_disabled_unless_mode_cache_ttl(raw: Any) -> None:
    assert clawctx.PruningSettings.from_config(raw) is None


def test_settings_defaults() -> None:
    s = clawctx.PruningSettings.from_config({"mode": "cache-ttl"})
    assert s is not None
    assert s.ttl_ms == 300_000
    assert s.keep_last_assistants == 3
    assert s.soft_trim_ratio == 0.3
    assert s.hard_clear_ratio == 0.5
    assert s.min_prunable_tool_chars == 50_000
    assert s.to_dict() == DEFAULT_EFFECTIVE


@pytest.mark.parametrize(
    ("ttl", "ttl_ms"),
    [
        ("30s", 30_000),
        ("1h", 3_600_000),
        ("2", 120_000),  # default unit: minutes
        ("2m", 120_000),
        ("250ms", 250),
        ("2d", 172_800_000),
        ("1.5h", 5_400_000),
        ("0.5s", 500),
        (" 10M ", 600_000),  # trimmed and lowercased
        ("0", 0),
        ("bad", 300_000),  # invalid => default kept
        ("5 m", 300_000),
        ("-5", 300_000),
        ("", 300_000),
        (".5", 300_000),
        ("5.", 300_000),
        ("1e3", 300_000),
        ("5w", 300_000),
        (10, 300_000),  # only strings are parsed
        # gap-free composites of unit-bearing tokens (OpenClaw 2026.3.13 parseDurationMs)
        ("1h30m", 5_400_000),
        ("1m1m", 120_000),
        ("1d2h", 93_600_000),
        ("2m500ms", 120_500),
        ("0.0001s", 0),  # rounded
        ("1h 30m", 300_000),
        ("1h30", 300_000),
        ("15 minutes", 300_000),
    ],
)
def test_settings_ttl_parsing(ttl: Any, ttl_ms: int) -> None:
    s = clawctx.PruningSettings.from_config({"mode": "cache-ttl", "ttl": ttl})
    assert s is not None
    assert s.ttl_ms == ttl_ms


def test_settings_counts_are_floored_and_clamped_at_zero() -> None:
    s = clawctx.PruningSettings.from_config(
        {
            "mode": "cache-ttl",
            "keepLastAssistants": 2.7,
            "minPrunableToolChars": 123.9,
            "softTrim": {"maxChars": 10.9, "headChars": -1, "tailChars": "7"},
        }
    )
    assert s is not None
    assert s.keep_last_assistants == 2
    assert s.min_prunable_tool_chars == 123
    assert s.to_dict()["softTrim"] == {"maxChars": 10, "headChars": 0, "tailChars": 1500}
    negative = clawctx.PruningSettings.from_config(
        {"mode": "cache-ttl", "keepLastAssistants": -3, "minPrunableToolChars": -1}
    )
    assert negative is not None
    assert negative.keep_last_assistants == 0
    assert negative.min_prunable_tool_chars == 0


@pytest.mark.parametrize("bad", ["5", True, None, float("nan"), float("inf"), [1]])
def test_settings_non_finite_or_non_number_values_keep_defaults(bad: Any) -> None:
    s = clawctx.PruningSettings.from_config(
        {
            "mode": "cache-ttl",
            "keepLastAssistants": bad,
            "softTrimRatio": bad,
            "hardClearRatio": bad,
            "minPrunableToolChars": bad,
        }
    )
    assert s is not None
    assert s.keep_last_assistants == 3
    assert s.soft_trim_ratio == 0.3
    assert s.hard_clear_ratio == 0.5
    assert s.min_prunable_tool_chars == 50_000


@pytest.mark.parametrize(
    ("value", "clamped"), [(1.7, 1.0), (-0.2, 0.0), (0.45, 0.45), (0, 0.0), (1, 1.0)]
)
def test_settings_ratios_are_clamped(value: float, clamped: float) -> None:
    s = clawctx.PruningSettings.from_config(
        {"mode": "cache-ttl", "softTrimRatio": value, "hardClearRatio": value}
    )
    assert s is not None
    assert s.soft_trim_ratio == clamped
    assert s.hard_clear_ratio == clamped


@pytest.mark.parametrize(
    ("hard_clear", "expected"),
    [
        (
            {"enabled": False},
            {"enabled": False, "placeholder": "[Old tool result content cleared]"},
        ),
        (
            {"enabled": "false"},
            {"enabled": True, "placeholder": "[Old tool result content cleared]"},
        ),
        ({"placeholder": "  [gone]  "}, {"enabled": True, "placeholder": "[gone]"}),
        (
            {"placeholder": "   "},
            {"enabled": True, "placeholder": "[Old tool result content cleared]"},
        ),
        (
            {"placeholder": ""},
            {"enabled": True, "placeholder": "[Old tool result content cleared]"},
        ),
        ({"placeholder": 5}, {"enabled": True, "placeholder": "[Old tool result content cleared]"}),
    ],
)
def test_settings_hard_clear(hard_clear: dict[str, Any], expected: dict[str, Any]) -> None:
    s = clawctx.PruningSettings.from_config({"mode": "cache-ttl", "hardClear": hard_clear})
    assert s is not None
    assert s.to_dict()["hardClear"] == expected


def test_settings_tools_are_copied_as_given() -> None:
    tools = {"allow": ["ex*", "Read"], "deny": [" exec "]}
    s = clawctx.PruningSettings.from_config({"mode": "cache-ttl", "tools": tools})
    assert s is not None
    assert s.to_dict()["tools"] == tools


def test_settings_to_dict_from_dict_round_trip() -> None:
    raw = {
        "mode": "cache-ttl",
        "ttl": "90s",
        "keepLastAssistants": 5,
        "softTrimRatio": 0.25,
        "hardClearRatio": 0.75,
        "minPrunableToolChars": 1234,
        "tools": {"allow": ["read*"], "deny": ["exec"]},
        "softTrim": {"maxChars": 100, "headChars": 20, "tailChars": 30},
        "hardClear": {"enabled": False, "placeholder": "[x]"},
    }
    s = clawctx.PruningSettings.from_config(raw)
    assert s is not None
    d = s.to_dict()
    assert d == {
        "mode": "cache-ttl",
        "ttlMs": 90_000,
        "keepLastAssistants": 5,
        "softTrimRatio": 0.25,
        "hardClearRatio": 0.75,
        "minPrunableToolChars": 1234,
        "tools": {"allow": ["read*"], "deny": ["exec"]},
        "softTrim": {"maxChars": 100, "headChars": 20, "tailChars": 30},
        "hardClear": {"enabled": False, "placeholder": "[x]"},
    }
    back = clawctx.PruningSettings.from_dict(d)
    assert back == s
    assert back.to_dict() == d
    defaults = clawctx.PruningSettings.from_config({"mode": "cache-ttl"})
    assert defaults is not None
    assert back != defaults
    assert clawctx.PruningSettings.from_dict(defaults.to_dict()) == defaults


def test_settings_from_dict_keeps_effective_values_unclamped() -> None:
    # Upstream tests hand the pruner effective settings with ratios like 10.
    s = clawctx.PruningSettings.from_dict(effective(softTrimRatio=10.0, hardClearRatio=10.0))
    assert s.soft_trim_ratio == 10.0
    assert s.hard_clear_ratio == 10.0


# =============================================================================================
# tool matching (OpenClaw context-pruning/tools.ts, makeToolPrunablePredicate)
# =============================================================================================


@pytest.mark.parametrize(
    ("tools", "name", "prunable"),
    [
        (None, "anything", True),
        ({}, "anything", True),
        ({"allow": [], "deny": []}, "exec", True),
        # deny wins; non-empty allow must match (upstream case).
        ({"allow": ["ex*"], "deny": ["exec"]}, "Exec", False),
        ({"allow": ["ex*"], "deny": ["exec"]}, "Browser", False),
        ({"allow": ["ex*"], "deny": ["exec"]}, "exa", True),
        ({"allow": ["*"], "deny": ["*"]}, "read", False),
        ({"deny": ["*"]}, "read", False),
        ({"allow": ["*"]}, "read", True),
        # trimmed and lowercased on both sides
        ({"allow": [" READ "]}, "read", True),
        ({"allow": ["read"]}, "  Read ", True),
        # no star => exact match
        ({"allow": ["exec"]}, "exec2", False),
        ({"allow": ["exec"]}, "exec", True),
        # anchored globs
        ({"allow": ["*read"]}, "fileread", True),
        ({"allow": ["*read"]}, "reader", False),
        ({"allow": ["read*"]}, "xread", False),
        ({"allow": ["a*c*e"]}, "abcde", True),
        ({"allow": ["a*c*e"]}, "abde", False),
        ({"allow": ["ab*ba"]}, "aba", False),  # prefix and suffix may not overlap
        ({"allow": ["ab*ba"]}, "abba", True),
        # other characters are literal, not regex syntax
        ({"allow": ["file.read*"]}, "file.read_all", True),
        ({"allow": ["file.read*"]}, "fileXread_all", False),
        ({"allow": ["a+b*"]}, "a+bc", True),
        ({"allow": ["a+b*"]}, "aab", False),
        ({"allow": ["(x)|y*"]}, "(x)|yz", True),
        ({"allow": ["(x)|y*"]}, "x", False),
        # empty patterns are ignored: an allow list of blanks allows everything
        ({"allow": ["", "   "]}, "anything", True),
        ({"deny": [""]}, "anything", True),
    ],
)
def test_is_tool_prunable(tools: dict[str, Any] | None, name: str, prunable: bool) -> None:
    assert clawctx.history.is_tool_prunable(name, tools) is prunable


def test_glob_star_is_a_js_dot_star_that_stops_at_line_breaks() -> None:
    # Upstream compiles "a*b" to /^a.*b$/ (no "s" flag): "." does not match a line terminator,
    # so a name with an inner newline does not match although "*" alone ("all") would.
    assert clawctx.history.is_tool_prunable("a\nb", {"allow": ["a*b"]}) is False
    assert clawctx.history.is_tool_prunable("a\nb", {"deny": ["a*b"]}) is True
    assert clawctx.history.is_tool_prunable("a\nb", {"deny": ["*"]}) is False


# =============================================================================================
# pruner char estimate (OpenClaw context-pruning/pruner.ts, estimateMessageChars)
# =============================================================================================

IMAGE_BLOCK = {"type": "image", "data": "AA==", "mimeType": "image/png"}


@pytest.mark.parametrize(
    ("message", "chars"),
    [
        (user("hello"), 5),
        (user("😀"), 2),
        (
            {
                "role": "user",
                "content": [{"type": "text", "text": "abcd"}, IMAGE_BLOCK, IMAGE_BLOCK],
            },
            16_004,
        ),
        (
            assistant_blocks(
                [
                    {"type": "text", "text": "ab"},
                    {"type": "thinking", "thinking": "cde"},
                    tool_call("c", "read", {"path": "a"}),  # name not counted
                ]
            ),
            2 + 3 + len('{"path":"a"}'),
        ),
        (assistant_blocks([{"type": "toolCall", "id": "c", "name": "read"}]), 2),  # {} when absent
        (assistant_blocks([tool_call("c", "read", None)]), 2),  # null ?? {}
        (assistant_blocks([tool_call("c", "read", {"n": 1.0})]), len('{"n":1}')),
        (assistant_blocks([tool_call("c", "read", {"q": "é"})]), len('{"q":"é"}')),
        (
            {
                "role": "toolResult",
                "toolCallId": "t",
                "toolName": "x",
                "content": [{"type": "text", "text": "abc"}, IMAGE_BLOCK],
            },
            8003,
        ),
        # any other role => 256, whatever its size
        ({"role": "custom", "customType": "c", "content": "x" * 1000, "display": True}, 256),
        ({"role": "bashExecution", "command": "ls", "output": "x" * 1000, "exitCode": 0}, 256),
        ({"role": "compactionSummary", "summary": "x" * 1000, "tokensBefore": 1}, 256),
        ({"role": "branchSummary", "summary": "", "fromId": "a"}, 256),
        ({"role": "system", "content": ""}, 256),
        ({"content": "no role"}, 256),
    ],
)
def test_estimate_pruning_chars(message: Message, chars: int) -> None:
    assert clawctx.history.estimate_pruning_chars(message) == chars


def test_estimate_pruning_chars_string_content_outside_user_messages_counts_nothing() -> None:
    # The pruner's estimateMessageChars counts the *blocks* of assistant and toolResult content;
    # only user content has a
    # string rule. Upstream iterates a string content character by character and no character
    # is a typed block, so the estimate is 0.
    assert clawctx.history.estimate_pruning_chars({"role": "assistant", "content": "hello"}) == 0
    assert (
        clawctx.history.estimate_pruning_chars(
            {"role": "toolResult", "toolCallId": "t", "toolName": "x", "content": "hello"}
        )
        == 0
    )


def test_estimate_pruning_chars_skips_malformed_blocks() -> None:
    message = assistant_blocks(
        [
            None,
            "loose string",
            5,
            {"type": "thinking"},
            {"type": "text"},
            {"type": "text", "text": None},
            {"type": "text", "text": "ok"},
        ]
    )
    assert clawctx.history.estimate_pruning_chars(message) == 2


@pytest.mark.parametrize(
    "blocks",
    [
        [{"type": "thinking"}, {"type": "text", "text": "ok"}],
        [None, {"type": "text", "text": "world"}],
        [{"type": "text"}, {"type": "thinking", "thinking": "still fine"}],
        [{"type": "thinking", "thinking": "let me think"}, {"type": "text", "text": "here"}],
    ],
)
def test_pruner_does_not_throw_on_malformed_assistant_blocks(blocks: list[Any]) -> None:
    messages = clawctx.Transcript([user("hello"), assistant_blocks(blocks)])
    settings = clawctx.PruningSettings.from_config({"mode": "cache-ttl"})
    out = prune(messages, settings, window=1_000_000)
    assert len(out) == 2
    assert out is messages


# =============================================================================================
# pruneContextMessages (OpenClaw src/agents/pi-extensions/context-pruning/pruner.ts)
# =============================================================================================


def test_upstream_keeps_tool_results_after_the_last_n_assistants() -> None:
    messages = [
        user("u1"),
        assistant("a1"),
        tool_result("t1", "exec", "x" * 20_000),
        user("u2"),
        assistant("a2"),
        tool_result("t2", "exec", "y" * 20_000),
        user("u3"),
        assistant("a3"),
        tool_result("t3", "exec", "z" * 20_000),
        user("u4"),
        assistant("a4"),
        tool_result("t4", "exec", "w" * 20_000),
    ]
    settings = aggressive(keepLastAssistants=3)
    out = prune(messages, settings)
    assert tool_text(out, "t1") == "[cleared]"
    assert tool_text(out, "t2") == "y" * 20_000
    assert tool_text(out, "t3") == "z" * 20_000
    assert tool_text(out, "t4") == "w" * 20_000
    # Everything except t1 is untouched.
    out_list = out.to_list()
    assert out_list[:2] == messages[:2]
    assert out_list[3:] == messages[3:]
    assert out_list[2] == {**messages[2], "content": [{"type": "text", "text": "[cleared]"}]}


def test_upstream_never_prunes_before_the_first_user_message() -> None:
    messages = [
        assistant("bootstrap tool calls"),
        tool_result("t0", "read", "x" * 20_000),
        assistant("greeting"),
        user("u1"),
        tool_result("t1", "exec", "y" * 20_000),
    ]
    out = prune(messages, aggressive(keepLastAssistants=0))
    assert tool_text(out, "t0") == "x" * 20_000
    assert tool_text(out, "t1") == "[cleared]"


def test_upstream_hard_clear_before_cutoff() -> None:
    messages = [
        user("u1"),
        assistant("a1"),
        tool_result("t1", "exec", "x" * 20_000),
        tool_result("t2", "exec", "y" * 20_000),
        user("u2"),
        assistant("a2"),
        tool_result("t3", "exec", "z" * 20_000),
    ]
    settings = effective(
        keepLastAssistants=1,
        softTrimRatio=10.0,
        hardClearRatio=0.0,
        minPrunableToolChars=0,
        hardClear={"enabled": True, "placeholder": "[cleared]"},
    )
    out = prune(messages, settings)
    assert tool_text(out, "t1") == "[cleared]"
    assert tool_text(out, "t2") == "[cleared]"
    assert tool_text(out, "t3") == "z" * 20_000


def test_upstream_context_window_override() -> None:
    messages = [
        user("u1"),
        assistant("a1"),
        tool_result("t1", "exec", "x" * 20_000),
        assistant("a2"),
    ]
    out = prune(messages, aggressive(), window=1000)
    assert tool_text(out, "t1") == "[cleared]"


@pytest.mark.parametrize("window", [None, 0, -5, float("nan"), float("inf")])
def test_no_usable_context_window_returns_input(window: float | None) -> None:
    t = clawctx.Transcript([user("u1"), assistant("a1"), tool_result("t1", "exec", "x" * 20_000)])
    assert prune(t, aggressive(), window=window) is t


def test_upstream_tools_allow_deny() -> None:
    messages = clawctx.Transcript(
        [
            user("u1"),
            tool_result("t1", "Exec", "x" * 20_000),
            tool_result("t2", "Browser", "y" * 20_000),
        ]
    )
    out = prune(messages, aggressive(tools={"allow": ["ex*"], "deny": ["exec"]}))
    assert tool_text(out, "t1") == "x" * 20_000
    assert tool_text(out, "t2") == "y" * 20_000
    assert out is messages


IMAGE_MARKER = "[image removed during context pruning]"


def test_upstream_image_tool_result_is_pruned_too() -> None:
    # OpenClaw 2026.3.13 prunes results with images like any other (conformance cases
    # prune_context_messages-043..045): here the hard clear replaces it.
    messages = clawctx.Transcript([user("u1"), image_tool_result("t1", "exec", "x" * 20_000)])
    out = prune(messages, aggressive())
    tool = find_tool_result(out, "t1")
    assert not any(b["type"] == "image" for b in tool["content"])
    assert tool_text(out, "t1") == "[cleared]"
    assert out is not messages


def test_baseline_prunes_every_image_result() -> None:
    # OpenClaw 2026.3.13 treats image results like any other prunable result (conformance
    # cases prune_context_messages-043..045): all five are cleared here.
    messages = [user("u1")]
    for i in range(5):
        messages.append(assistant(f"a{i}"))
        messages.append(image_tool_result(f"t{i}", "exec", "x" * 20_000))
    t = clawctx.Transcript(messages)
    out = prune(t, aggressive())
    assert out is not t
    assert [tool_text(out, f"t{i}") for i in range(5)] == ["[cleared]"] * 5


def test_short_image_result_is_rewritten_in_the_soft_pass() -> None:
    # total = 2 + (8000 + 4) + 1000 = 9006 chars of a 40000-char window: ratio 0.225. The
    # soft pass rewrites the image result even though it is short (OpenClaw 2026.3.13,
    # conformance case prune_context_messages-045): the image becomes a marker joined to the
    # text with "\n", its 8000 chars drop to 44 and the ratio falls below hardClearRatio.
    messages = [
        user("u1"),
        image_tool_result("img", "exec", "abcd"),
        tool_result("t1", "exec", "x" * 1000),
    ]
    settings = aggressive(
        softTrimRatio=0.2,
        hardClearRatio=0.2,
        softTrim={"maxChars": 100_000, "headChars": 10, "tailChars": 10},
        minPrunableToolChars=1000,  # only t1's 1000 chars are prunable
    )
    rewritten = dict(messages[1], content=[{"type": "text", "text": IMAGE_MARKER + "\nabcd"}])
    out = prune(messages, settings, window=10_000)
    assert tool_text(out, "t1") == "x" * 1000
    assert find_tool_result(out, "img") == rewritten
    settings["minPrunableToolChars"] = 1001
    t = clawctx.Transcript(messages)
    out = prune(t, settings, window=10_000)
    assert out is not t
    assert find_tool_result(out, "img") == rewritten


def test_upstream_soft_trim_across_block_boundaries() -> None:
    tr = tool_result("t1", "exec", "")
    tr["content"] = [{"type": "text", "text": "AAAAA"}, {"type": "text", "text": "BBBBB"}]
    messages = [user("u1"), tr]
    settings = effective(
        keepLastAssistants=0,
        softTrimRatio=0.0,
        hardClearRatio=10.0,
        softTrim={"maxChars": 5, "headChars": 7, "tailChars": 3},
    )
    out = prune(messages, settings)
    assert tool_text(out, "t1") == (
        "AAAAA\nB\n...\nBBB\n\n[Tool result trimmed: kept first 7 chars and last 3 chars of 11 chars.]"
    )
    # Only the content changes: a single text block, the other fields kept.
    trimmed = find_tool_result(out, "t1")
    assert len(trimmed["content"]) == 1
    assert {k: v for k, v in trimmed.items() if k != "content"} == {
        k: v for k, v in tr.items() if k != "content"
    }


def test_upstream_soft_trim_head_tail_and_note() -> None:
    messages = [user("u1"), tool_result("t1", "exec", "abcdefghij" * 1000)]
    settings = aggressive(
        hardClearRatio=10.0, softTrim={"maxChars": 10, "headChars": 6, "tailChars": 6}
    )
    out = prune(messages, settings)
    assert tool_text(out, "t1") == (
        "abcdef\n...\nefghij\n\n[Tool result trimmed: kept first 6 chars and last 6 chars of 10000 chars.]"
    )


def test_soft_trim_tail_spans_a_block_separator() -> None:
    tr = tool_result("t1", "exec", "")
    tr["content"] = [{"type": "text", "text": "AAAAA"}, {"type": "text", "text": "BBBBB"}]
    settings = aggressive(
        hardClearRatio=10.0, softTrim={"maxChars": 5, "headChars": 3, "tailChars": 7}
    )
    out = prune([user("u1"), tr], settings)
    assert tool_text(out, "t1") == (
        "AAA\n...\nA\nBBBBB\n\n[Tool result trimmed: kept first 3 chars and last 7 chars of 11 chars.]"
    )


@pytest.mark.parametrize(
    ("head", "tail", "kept_head", "kept_tail"),
    [
        # a cut inside a surrogate pair keeps the whole pair
        (3, 3, "ab😀", "😀yz"),
        # cuts on pair boundaries
        (2, 2, "ab", "yz"),
        (4, 4, "ab😀", "😀yz"),
        (5, 5, "ab😀m", "m😀yz"),
    ],
)
def test_soft_trim_never_splits_a_surrogate_pair(
    head: int, tail: int, kept_head: str, kept_tail: str
) -> None:
    text = "ab😀" + "m" * 20 + "😀yz"  # 28 UTF-16 units
    settings = aggressive(
        hardClearRatio=10.0, softTrim={"maxChars": 5, "headChars": head, "tailChars": tail}
    )
    out = prune([user("u1"), tool_result("t1", "exec", text)], settings)
    trimmed = tool_text(out, "t1")
    assert trimmed == (
        f"{kept_head}\n...\n{kept_tail}\n\n[Tool result trimmed: kept first {head} chars and "
        f"last {tail} chars of 28 chars.]"
    )
    # No lone surrogate: the result encodes as UTF-8.
    trimmed.encode("utf-8")


def test_soft_trim_measures_utf16_units() -> None:
    # 10 emoji = 20 UTF-16 units > maxChars 15, although only 10 code points.
    text = "😀" * 10
    settings = aggressive(
        hardClearRatio=10.0, softTrim={"maxChars": 15, "headChars": 4, "tailChars": 4}
    )
    out = prune([user("u1"), tool_result("t1", "exec", text)], settings)
    assert tool_text(out, "t1") == (
        "😀😀\n...\n😀😀\n\n[Tool result trimmed: kept first 4 chars and last 4 chars of 20 chars.]"
    )


@pytest.mark.parametrize(
    "soft_trim",
    [
        {"maxChars": 11, "headChars": 3, "tailChars": 3},  # rawLen 11 <= maxChars
        {"maxChars": 5, "headChars": 6, "tailChars": 5},  # head + tail >= rawLen
        {"maxChars": 5, "headChars": 8, "tailChars": 8},
    ],
)
def test_soft_trim_not_eligible_returns_input(soft_trim: dict[str, int]) -> None:
    tr = tool_result("t1", "exec", "")
    tr["content"] = [{"type": "text", "text": "AAAAA"}, {"type": "text", "text": "BBBBB"}]
    t = clawctx.Transcript([user("u1"), tr])
    assert prune(t, aggressive(hardClearRatio=10.0, softTrim=soft_trim)) is t


def test_soft_trim_adjusts_the_total_before_the_hard_clear_check() -> None:
    # 30001 chars of a 40000-char window (ratio 0.75); after the default soft trim only
    # ~3100 chars remain (ratio < 0.5), so nothing is hard-cleared.
    messages = [user("u"), tool_result("t1", "exec", "q" * 30_000)]
    settings = effective(keepLastAssistants=0, minPrunableToolChars=0)
    out = prune(messages, settings, window=10_000)
    text = tool_text(out, "t1")
    assert text == (
        "q" * 1500
        + "\n...\n"
        + "q" * 1500
        + "\n\n[Tool result trimmed: kept first 1500 chars and last 1500 chars of 30000 chars.]"
    )


def test_under_soft_trim_ratio_returns_input() -> None:
    # 2 + 2 + 1000 chars of 4000: ratio 0.251 < 0.3
    t = clawctx.Transcript([user("u1"), assistant("a1"), tool_result("t1", "exec", "x" * 1000)])
    settings = effective(keepLastAssistants=0, minPrunableToolChars=0)
    assert prune(t, settings) is t
    # Just above the soft-trim ratio: the result is too short to trim (<= maxChars 4000) and
    # the ratio is under hardClearRatio => still the input.
    assert prune(t, effective(keepLastAssistants=0, softTrimRatio=0.25)) is t


def test_fewer_assistants_than_keep_last_means_no_pruning() -> None:
    t = clawctx.Transcript(
        [user("u1"), assistant("a1"), tool_result("t1", "exec", "x" * 20_000), assistant("a2")]
    )
    assert prune(t, aggressive(keepLastAssistants=3)) is t
    # keepLast 2: the cutoff is a1, so t1 is in the protected tail.
    assert prune(t, aggressive(keepLastAssistants=2)) is t
    out = prune(t, aggressive(keepLastAssistants=1))
    assert tool_text(out, "t1") == "[cleared]"


def test_no_user_message_means_nothing_is_prunable() -> None:
    t = clawctx.Transcript(
        [assistant("a1"), tool_result("t1", "exec", "x" * 20_000), assistant("a2")]
    )
    assert prune(t, aggressive()) is t


def test_tool_result_right_after_the_cutoff_assistant_is_protected() -> None:
    messages = [
        user("u1"),
        assistant("a1"),
        tool_result("t1", "exec", "x" * 20_000),
        assistant("a2"),
        tool_result("t2", "exec", "y" * 20_000),
    ]
    out = prune(messages, aggressive(keepLastAssistants=1))
    assert tool_text(out, "t1") == "[cleared]"
    assert tool_text(out, "t2") == "y" * 20_000


def test_hard_clear_goes_oldest_first_and_stops_under_the_ratio() -> None:
    # Window 10000 tokens = 40000 chars. Total 2 + 2 + 3 * 10000 + 2 = 30006 (ratio 0.75).
    # Clearing t1 leaves 20015 (0.500375 >= 0.5), clearing t2 leaves 10024 (< 0.5): stop.
    messages = [
        user("u1"),
        assistant("a1"),
        tool_result("t1", "exec", "x" * 10_000),
        tool_result("t2", "exec", "y" * 10_000),
        tool_result("t3", "exec", "z" * 10_000),
        assistant("a2"),
    ]
    settings = aggressive(
        keepLastAssistants=1,
        softTrimRatio=0.0,
        hardClearRatio=0.5,
        softTrim={"maxChars": 100_000, "headChars": 10, "tailChars": 10},
    )
    out = prune(messages, settings, window=10_000)
    assert tool_text(out, "t1") == "[cleared]"
    assert tool_text(out, "t2") == "[cleared]"
    assert tool_text(out, "t3") == "z" * 10_000


def test_hard_clear_skips_denied_tools_but_clears_the_rest() -> None:
    messages = [
        user("u1"),
        tool_result("t1", "read", "x" * 20_000),
        tool_result("t2", "exec", "y" * 20_000),
    ]
    out = prune(messages, aggressive(tools={"deny": ["read"]}))
    assert tool_text(out, "t1") == "x" * 20_000
    assert tool_text(out, "t2") == "[cleared]"


@pytest.mark.parametrize(("minimum", "cleared"), [(30_000, True), (30_001, False)])
def test_min_prunable_tool_chars(minimum: int, cleared: bool) -> None:
    messages = clawctx.Transcript(
        [
            user("u1"),
            assistant("a1"),
            tool_result("t1", "exec", "x" * 10_000),
            tool_result("t2", "exec", "y" * 10_000),
            tool_result("t3", "exec", "z" * 10_000),
            assistant("a2"),
        ]
    )
    settings = aggressive(
        keepLastAssistants=1,
        hardClearRatio=0.5,
        minPrunableToolChars=minimum,
        softTrim={"maxChars": 100_000, "headChars": 10, "tailChars": 10},
    )
    out = prune(messages, settings, window=10_000)
    if cleared:
        assert tool_text(out, "t1") == "[cleared]"
    else:
        assert out is messages


def test_min_prunable_tool_chars_counts_chars_after_soft_trim() -> None:
    # t1 is soft-trimmed to 3 + 5 + 3 + note chars, far below the 1000 minimum: the
    # soft-trimmed result comes back without a hard clear although the ratio is still high.
    messages = [
        user("u1"),
        tool_result("t1", "exec", "x" * 20_000),
        {"role": "custom", "customType": "c", "content": "", "display": True},  # 256 chars
    ]
    settings = aggressive(minPrunableToolChars=1000, hardClearRatio=0.0)
    out = prune(messages, settings, window=10)  # 40-char window: ratio far above 0
    assert tool_text(out, "t1") == (
        "xxx\n...\nxxx\n\n[Tool result trimmed: kept first 3 chars and last 3 chars of 20000 chars.]"
    )


def test_hard_clear_disabled_only_soft_trims() -> None:
    messages = [user("u1"), tool_result("t1", "exec", "x" * 20_000)]
    settings = aggressive(hardClear={"enabled": False, "placeholder": "[cleared]"})
    out = prune(messages, settings)
    assert tool_text(out, "t1") == (
        "xxx\n...\nxxx\n\n[Tool result trimmed: kept first 3 chars and last 3 chars of 20000 chars.]"
    )
    # Nothing soft-trimmable and hard clear disabled => the input itself.
    t = clawctx.Transcript(messages)
    no_trim = aggressive(
        hardClear={"enabled": False, "placeholder": "[cleared]"},
        softTrim={"maxChars": 100_000, "headChars": 3, "tailChars": 3},
    )
    assert prune(t, no_trim) is t


def test_default_placeholder_is_used() -> None:
    messages = [user("u1"), tool_result("t1", "exec", "x" * 20_000)]
    settings = aggressive(
        hardClear={"enabled": True, "placeholder": "[Old tool result content cleared]"}
    )
    assert tool_text(prune(messages, settings), "t1") == "[Old tool result content cleared]"
    configured = clawctx.PruningSettings.from_config(
        {
            "mode": "cache-ttl",
            "keepLastAssistants": 0,
            "softTrimRatio": 0,
            "hardClearRatio": 0,
            "minPrunableToolChars": 0,
        }
    )
    assert tool_text(prune(messages, configured), "t1") == "[Old tool result content cleared]"


def test_user_and_assistant_messages_are_never_modified() -> None:
    t = clawctx.Transcript(
        [
            user("u" * 50_000),
            assistant_blocks(
                [
                    {"type": "thinking", "thinking": "t" * 50_000},
                    {"type": "text", "text": "a" * 50_000},
                ]
            ),
            user("again"),
            assistant("done"),
        ]
    )
    assert prune(t, aggressive()) is t


def test_prune_accepts_settings_object_or_effective_dict() -> None:
    messages = [user("u1"), tool_result("t1", "exec", "x" * 20_000)]
    as_dict = aggressive()
    as_object = clawctx.PruningSettings.from_dict(as_dict)
    assert prune(messages, as_dict) == prune(messages, as_object)
    assert tool_text(prune(messages, as_object), "t1") == "[cleared]"


def test_prune_does_not_mutate_and_keeps_untouched_bytes() -> None:
    big = "x" * 20_000
    raw = (
        b'[{"role": "user",  "content": "u1", "z": 1.50},'
        b'{"role":"toolResult","toolCallId":"t1","toolName":"exec","content":[{"type":"text","text":"'
        + big.encode()
        + b'"}],"isError":false},'
        b'{"b": 1, "role": "assistant", "content": [ ]}]'
    )
    t = clawctx.Transcript.from_json(raw)
    out = prune(t, aggressive())
    assert out is not t
    assert out.to_json() == (
        b'[{"role": "user",  "content": "u1", "z": 1.50},'
        b'{"role":"toolResult","toolCallId":"t1","toolName":"exec",'
        b'"content":[{"type":"text","text":"[cleared]"}],"isError":false},'
        b'{"b": 1, "role": "assistant", "content": [ ]}]'
    )
    assert t.to_json() == raw
    messages = [user("u1"), tool_result("t1", "exec", big)]
    before = copy.deepcopy(messages)
    prune(messages, aggressive())
    assert messages == before


def test_list_input_with_nothing_to_prune_comes_back_equal() -> None:
    messages = [user("u1"), assistant("a1")]
    out = prune(messages, aggressive())
    assert isinstance(out, clawctx.Transcript)
    assert out.to_list() == messages


# =============================================================================================
# the cache-ttl gate (CacheTtlPruner; OpenClaw context-pruning/extension.ts)
# =============================================================================================

NOW = 1_767_225_600_000
TTL = 300_000


class FakeClock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def cache_ttl_messages() -> list[Message]:
    return [user("u1"), assistant("a1"), tool_result("t1", "exec", "x" * 20_000)]


def test_upstream_cache_ttl_prunes_once_and_resets_the_window() -> None:
    clock = FakeClock(NOW)
    last_touch = NOW - TTL - 1000
    pruner = clawctx.CacheTtlPruner(
        clawctx.PruningSettings.from_dict(aggressive()),
        context_window_tokens=1000,
        last_cache_touch_at=last_touch,
        now_ms=clock,
    )
    messages = clawctx.Transcript(cache_ttl_messages())
    first = pruner(messages)
    assert first is not None
    assert tool_text(first, "t1") == "[cleared]"
    assert pruner.last_cache_touch_at is not None
    assert pruner.last_cache_touch_at > last_touch
    assert pruner.last_cache_touch_at == NOW
    clock.now += 1000
    assert pruner(messages) is None
    # The input transcript itself is never changed.
    assert tool_text(messages, "t1") == "x" * 20_000


def test_upstream_runtime_settings_prune_with_trailing_assistant() -> None:
    pruner = clawctx.CacheTtlPruner(
        clawctx.PruningSettings.from_dict(aggressive()),
        context_window_tokens=1000,
        last_cache_touch_at=NOW - TTL - 1000,
        now_ms=FakeClock(NOW),
    )
    result = pruner([*cache_ttl_messages(), assistant("a2")])
    assert result is not None
    assert tool_text(result, "t1") == "[cleared]"


def test_cache_ttl_gate() -> None:
    settings = clawctx.PruningSettings.from_dict(aggressive())
    clock = FakeClock(NOW)
    pruner = clawctx.CacheTtlPruner(settings, context_window_tokens=1000, now_ms=clock)
    assert not pruner.is_due()  # no touch known
    assert pruner(cache_ttl_messages()) is None
    pruner.touch()
    assert pruner.last_cache_touch_at == NOW
    assert not pruner.is_due(NOW + TTL - 1)
    assert pruner.is_due(NOW + TTL)  # >= ttl
    clock.now = NOW + TTL - 1
    assert pruner(cache_ttl_messages()) is None
    assert pruner.last_cache_touch_at == NOW
    clock.now = NOW + TTL
    assert pruner(cache_ttl_messages()) is not None
    assert pruner.last_cache_touch_at == NOW + TTL
    pruner.touch(at_ms=5)
    assert pruner.last_cache_touch_at == 5


def test_cache_ttl_zero_ttl_never_prunes() -> None:
    settings = clawctx.PruningSettings.from_dict(aggressive(ttlMs=0))
    pruner = clawctx.CacheTtlPruner(
        settings, context_window_tokens=1000, last_cache_touch_at=1, now_ms=FakeClock(NOW)
    )
    assert not pruner.is_due()
    assert pruner(cache_ttl_messages()) is None


def test_cache_ttl_due_but_nothing_pruned_keeps_the_touch() -> None:
    last_touch = NOW - TTL - 1
    pruner = clawctx.CacheTtlPruner(
        clawctx.PruningSettings.from_dict(aggressive()),
        context_window_tokens=1000,
        last_cache_touch_at=last_touch,
        now_ms=FakeClock(NOW),
    )
    assert pruner([user("u1"), assistant("a1")]) is None
    assert pruner.last_cache_touch_at == last_touch


def make_session(ids: Callable[[], str], clock: Callable[[], int]) -> clawctx.Session:
    return clawctx.Session.in_memory(now_ms=clock, id_factory=ids)


def pruner_from(session: clawctx.Session) -> clawctx.CacheTtlPruner:
    return clawctx.CacheTtlPruner.from_session(
        session,
        clawctx.PruningSettings.from_dict(aggressive()),
        context_window_tokens=1000,
        now_ms=FakeClock(NOW),
    )


def test_from_session_seeds_from_the_newest_cache_ttl_entry(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    session = make_session(ids, clock)
    session.append_custom_entry("openclaw.cache-ttl", {"timestamp": 100})
    session.append_message(user("u1"))
    session.append_custom_entry(
        "openclaw.cache-ttl", {"timestamp": 200, "provider": "anthropic", "modelId": "m"}
    )
    session.append_custom_entry("something-else", {"timestamp": 999})
    session.append_custom_message("openclaw.cache-ttl", "not a custom entry", True)
    pruner = pruner_from(session)
    assert pruner.last_cache_touch_at == 200
    assert pruner.context_window_tokens == 1000


def test_from_session_reads_the_legacy_custom_type(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    session = make_session(ids, clock)
    session.append_custom_entry("dna.cache-ttl", {"timestamp": 123})
    assert pruner_from(session).last_cache_touch_at == 123
    session.append_custom_entry("openclaw.cache-ttl", {"timestamp": 456})
    assert pruner_from(session).last_cache_touch_at == 456


def test_from_session_without_entries_has_no_touch(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    session = make_session(ids, clock)
    session.append_message(user("u1"))
    session.append_custom_entry("other", {"timestamp": 5})
    pruner = pruner_from(session)
    assert pruner.last_cache_touch_at is None
    assert pruner(cache_ttl_messages()) is None


def test_from_session_skips_entries_without_a_numeric_timestamp(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    # Seeded from the newest entry *with a numeric data.timestamp* (OpenClaw
    # src/agents/pi-embedded-runner/cache-ttl.ts, readLastCacheTtlTimestamp; upstream
    # readLastCacheTtlTimestamp walks back past entries whose timestamp is not a number).
    session = make_session(ids, clock)
    session.append_custom_entry("openclaw.cache-ttl", {"timestamp": 100})
    session.append_custom_entry("openclaw.cache-ttl", {"timestamp": "2026-01-01"})
    session.append_custom_entry("openclaw.cache-ttl", {"timestamp": True})
    session.append_custom_entry("openclaw.cache-ttl", None)
    assert pruner_from(session).last_cache_touch_at == 100


def test_from_session_then_prune_when_the_ttl_has_passed(
    ids: Callable[[], str], clock: Callable[[], int]
) -> None:
    session = make_session(ids, clock)
    session.append_custom_entry("openclaw.cache-ttl", {"timestamp": NOW - TTL - 1000})
    pruner = pruner_from(session)
    result = pruner(cache_ttl_messages())
    assert result is not None
    assert tool_text(result, "t1") == "[cleared]"
    assert pruner.last_cache_touch_at == NOW
    assert pruner(cache_ttl_messages()) is None
