"""Provider compaction blocks (issue 31, item 2) in the history stage: counted by the token
estimators, a boundary for local compaction, pruning and ``fit_to_budget``, and handled by the
provider hygiene (kept for their own provider, dropped or turned into their summary for
others)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import clawctx
from clawctx.history import (
    Session,
    Transcript,
    compaction_boundary,
    compaction_send_view,
    count_message_tokens,
    drop_foreign_compaction_blocks,
    sanitize_session_history,
    validate_for_provider,
)
from clawctx.interop import fit_to_budget

RAW = {
    "type": "compaction",
    "content": "Summary so far: the notes say ship on Friday.",
    "encrypted_content": "ENC" * 40,
    "signature": "sig",
}
BLOCK = {"type": "compaction", "api": "anthropic-messages", "content": RAW["content"], "raw": RAW}
ITEM = {
    "type": "compaction",
    "api": "openai-responses",
    "content": None,
    "raw": {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA" * 30},
}


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts}


def assistant(
    blocks: list[dict[str, Any]],
    *,
    provider: str = "anthropic",
    api: str = "anthropic-messages",
    stop: str = "stop",
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": blocks,
        "provider": provider,
        "api": api,
        "model": "claude-sonnet-4-5",
        "stopReason": stop,
        "usage": {"input": 10, "output": 10, "totalTokens": 20},
        "timestamp": 2,
    }


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "a"}}


def result(call_id: str, body: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [text(body)],
        "isError": False,
        "timestamp": 3,
    }


def test_estimators_count_the_block() -> None:
    with_block = assistant([BLOCK, text("ok")])
    without = assistant([text("ok")])
    for estimator in ("exact", "calibrated"):
        more = count_message_tokens([with_block], estimator=estimator)[0]
        less = count_message_tokens([without], estimator=estimator)[0]
        assert more > less + 20, estimator
    assert count_message_tokens([assistant([ITEM])])[0] > 10


def test_boundary_is_the_latest_block_that_carries_context() -> None:
    failed = {**BLOCK, "content": None, "raw": {**RAW, "content": None}}
    messages = [user("a"), assistant([BLOCK]), user("b"), assistant([failed, text("x")])]
    assert compaction_boundary(messages) == 1
    errored = [user("a"), assistant([BLOCK], stop="error"), user("b")]
    assert compaction_boundary(errored) is None
    assert compaction_boundary([user("compaction")]) is None
    view = compaction_send_view(
        messages + [user("c")], provider="anthropic", model_api="anthropic-messages"
    ).to_list()
    assert view[0]["content"][0] == BLOCK and len(view[0]["content"]) == 1
    assert [m["role"] for m in view] == ["assistant", "user", "assistant", "user"]
    assert view[2]["content"] == [text("x")]


def test_pruning_leaves_what_comes_before_the_boundary() -> None:
    big = "tool output line\n" * 400
    before = [user("go"), assistant([call("c1")]), result("c1", big)]
    after = [assistant([BLOCK, text("done")]), user("next"), assistant([text("fine")])]
    settings: dict[str, Any] = {
        "mode": "cache-ttl",
        "ttlMs": 300_000,
        "tools": {},
        "keepLastAssistants": 0,
        "softTrimRatio": 0.0,
        "hardClearRatio": 0.0,
        "minPrunableToolChars": 0,
        "hardClear": {"enabled": True, "placeholder": "[cleared]"},
        "softTrim": {"maxChars": 10, "headChars": 3, "tailChars": 3},
    }
    plain = [*before, assistant([text("done")]), *after[1:]]
    pruned = clawctx.prune_context(plain, settings, context_window_tokens=1000).to_list()
    assert pruned[2]["content"] != [text(big)]  # without a boundary the result is pruned
    kept = clawctx.prune_context(
        Transcript([*before, *after]), settings, context_window_tokens=1000
    ).to_list()
    assert kept[2]["content"] == [text(big)]
    assert kept[3]["content"][0] == BLOCK


def _session(tmp_path: Path, messages: list[dict[str, Any]]) -> Session:
    session = Session.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    for message in messages:
        session.append_message(message)
    return session


def test_local_compaction_starts_at_a_readable_boundary(tmp_path: Path) -> None:
    long = "x" * 4000
    messages = [
        user("first " + long),
        assistant([text("a " + long)]),
        user("second"),
        assistant([BLOCK, text("after compaction")]),
        user("third " + long),
        assistant([text("b " + long)]),
        user("fourth"),
        assistant([text("c")]),
    ]
    settings = clawctx.CompactionSettings(keep_recent_tokens=50)
    prep = clawctx.prepare_compaction(_session(tmp_path / "a", messages), settings)
    assert prep is not None
    summarized = prep.messages_to_summarize.to_list()
    assert summarized[0]["content"][0] == BLOCK  # nothing before the block is summarized again
    assert prep.previous_summary == RAW["content"]
    # Without the block, the history from the start is summarized.
    plain = [m if i != 3 else assistant([text("after compaction")]) for i, m in enumerate(messages)]
    prep = clawctx.prepare_compaction(_session(tmp_path / "b", plain), settings)
    assert prep is not None
    assert prep.messages_to_summarize.to_list()[0]["content"].startswith("first")
    assert prep.previous_summary is None
    # An opaque item is no boundary here: a local summary past it must cover that history.
    opaque = [m if i != 3 else assistant([ITEM, text("t")]) for i, m in enumerate(messages)]
    prep = clawctx.prepare_compaction(_session(tmp_path / "c", opaque), settings)
    assert prep is not None
    assert prep.messages_to_summarize.to_list()[0]["content"].startswith("first")


def test_fit_to_budget_keeps_nothing_before_the_boundary() -> None:
    messages = [
        user("old " * 50),
        assistant([text("old answer")]),
        user("question"),
        assistant([BLOCK, text("answer")]),
        user("next"),
    ]
    fit = fit_to_budget(messages, 100_000)
    assert fit.messages == messages[3:]
    assert fit.dropped == messages[:3]
    # Without the block everything fits and is kept.
    plain = [*messages[:3], assistant([text("answer")]), messages[4]]
    assert fit_to_budget(plain, 100_000).messages == plain
    # "first": the kept part starts at the boundary as well.
    assert fit_to_budget(messages, 100_000, strategy="first").messages == messages[3:]


def test_hygiene_keeps_own_blocks_and_converts_others() -> None:
    messages = [user("old"), assistant([BLOCK, text("answer")]), user("next")]
    own = sanitize_session_history(messages, provider="anthropic", model_api="anthropic-messages")
    assert own.to_list()[1]["content"][0] == BLOCK
    assert validate_for_provider(own, provider="anthropic", model_api="anthropic-messages") == []
    google = sanitize_session_history(
        messages, provider="google", model_api="google-generative-ai"
    ).to_list()
    assert "compaction" not in str([m.get("content") for m in google if m["role"] == "assistant"])
    # pi's compaction summary message (convertToLlm sends it as a user message).
    assert google[0] == {
        "role": "compactionSummary",
        "summary": RAW["content"],
        "tokensBefore": 0,
        "timestamp": 2,
    }
    assert "old" not in [m.get("content") for m in google]
    assert validate_for_provider(google, provider="google", model_api="google-generative-ai") == []
    # An opaque Responses item: kept for OpenAI, dropped (history kept) for Anthropic.
    items = [user("old"), assistant([ITEM, text("t")], provider="openai", api="openai-responses")]
    items.append(user("next"))
    kept = drop_foreign_compaction_blocks(items, provider="openai", model_api="openai-responses")
    assert kept.to_list() == items
    dropped = drop_foreign_compaction_blocks(
        items, provider="anthropic", model_api="anthropic-messages"
    ).to_list()
    assert dropped[0] == items[0] and dropped[1]["content"] == [text("t")]
