"""The interop writers send pi's AgentMessages (compaction and branch summaries, bash
executions, custom messages) as pi's ``convertToLlm`` does: as user text, never dropped or
refused. ``to_openai_responses`` raised ``TypeError`` on a compaction summary (its text is in
``summary``, not ``content``) and the other writers sent it as an empty user turn."""

from __future__ import annotations

from typing import Any

import pytest

from clawctx import convert_to_llm, interop

SUMMARY = {
    "role": "compactionSummary",
    "summary": "We fixed the cache key.",
    "tokensBefore": 1200,
    "timestamp": 1,
}
HISTORY: list[dict[str, Any]] = [
    SUMMARY,
    {"role": "user", "content": "and now?", "timestamp": 2},
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Next, the tests."}],
        "provider": "anthropic",
        "api": "anthropic-messages",
        "model": "claude-x",
        "stopReason": "stop",
        "timestamp": 3,
    },
]
SUMMARY_TEXT = convert_to_llm([SUMMARY]).to_list()[0]["content"][0]["text"]


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


@pytest.mark.parametrize("safe", [True, False])
@pytest.mark.parametrize(
    "write",
    [
        lambda m, safe: interop.to_openai_responses(m, safe=safe),
        lambda m, safe: interop.to_openai_chat(m, safe=safe),
        lambda m, safe: interop.to_anthropic(m, safe=safe)[1],
        lambda m, safe: interop.to_gemini(m, safe=safe)[1],
    ],
    ids=["responses", "chat", "anthropic", "gemini"],
)
def test_a_compaction_summary_is_sent_as_pi_sends_it(write: Any, safe: bool) -> None:
    assert "We fixed the cache key." in SUMMARY_TEXT
    out = write(HISTORY, safe)
    assert SUMMARY_TEXT in _texts(out)
    first = out[0]
    assert first.get("role") == "user"


def test_blank_text_is_left_out_for_anthropic_as_pi_ai_leaves_it_out() -> None:
    from clawctx.wire import validate_request_body

    history: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": ""}]},
        {"role": "assistant", "content": [{"type": "text", "text": " "}]},
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": ""}]},
    ]
    _, written = interop.to_anthropic(history)
    assert validate_request_body({"messages": written}, "anthropic-messages") == []
    assert written == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    # As stored, with safe=False: Anthropic would refuse the empty blocks.
    _, verbatim = interop.to_anthropic(history, safe=False)
    assert validate_request_body({"messages": verbatim}, "anthropic-messages") != []
