"""``cache_diff`` of two consecutive 1 MB request bodies (issue 31 target: under 5 ms).

Two Anthropic bodies of about 1 MB each (``build_request_payload`` over the coding-agent turns
of ``test_payload.make_messages``, written with ``to_json()`` outside the timing): the next one
extends the previous one by a turn (no break: the whole of both is walked), rewrites the
message in the middle (half walked, half estimated), or changes the system prompt (the whole
next body estimated with the calibrated estimator).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from benches.test_payload import MODEL, SYSTEM, make_messages
from clawctx.wire import build_request_payload, cache_diff

TARGET_BYTES = 1_000_000
NOW = 1_700_000_000_000


def _body(messages: list[dict[str, Any]], system: str = SYSTEM) -> bytes:
    context = {"system_prompt": system, "messages": messages}
    return build_request_payload(MODEL, context, now_ms=NOW).to_json()


def _messages_of_size(size: int) -> list[dict[str, Any]]:
    n = 300
    while True:
        messages = make_messages(n)
        if len(_body(messages)) >= size:
            return messages
        n = int(n * 1.5)


_MESSAGES = _messages_of_size(TARGET_BYTES)
# The previous request ends on a tool result, the next one adds the assistant's answer and the
# user's next prompt.
_PREVIOUS = _body(_MESSAGES)
_EXTENDED = _body(
    [
        *_MESSAGES,
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Done."}],
            "api": MODEL["api"],
            "provider": MODEL["provider"],
            "model": MODEL["id"],
            "stopReason": "stop",
            "timestamp": 1,
        },
        {"role": "user", "content": "Next step.", "timestamp": 2},
    ]
)
_rewritten = copy.deepcopy(_MESSAGES)
_middle = len(_rewritten) // 2
while _rewritten[_middle]["role"] != "user":
    _middle += 1
_rewritten[_middle]["content"] = "A rewritten prompt."
_REWRITTEN = _body(_rewritten)
_NEW_SYSTEM = _body(_MESSAGES, system=SYSTEM + " Today is Monday.")

CASES = {
    "extends": (_EXTENDED, None),
    "history-middle": (_REWRITTEN, "history_rewritten"),
    "system-prompt": (_NEW_SYSTEM, "system_prompt"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_cache_diff_1mb(benchmark: Any, case: str) -> None:
    following, cause = CASES[case]
    assert len(_PREVIOUS) >= TARGET_BYTES and len(following) >= TARGET_BYTES
    found = benchmark(cache_diff, _PREVIOUS, following)
    if cause is None:
        assert found is None
    else:
        assert found is not None and found.cause == cause
        assert found.rewrite_tokens > 0
