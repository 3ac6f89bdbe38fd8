"""Every transcript operation in a row over all messages of the session file (not only the
context), against the time Python needs to merely parse those messages (json.loads, and orjson
for a faster floor), and against the reference's Python versions of the operations it has.

clawctx: ``sanitize_tool_call_inputs``, ``sanitize_tool_use_result_pairing``,
``limit_history_turns(1000)``, ``token_counts()``, ``estimate_context_tokens`` and
``prune_context`` with OpenClaw's default settings, on a transcript built in the untimed setup
(so each message's facts are computed inside the timed chain).
Reference: pairing, history limit, token estimates and pruning in Python on the dicts (parsed
outside the timing, which favours it).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

import clawctx
from benches import reference_pipeline as ref
from benches.conftest import measure
from benches.generate import GeneratedSession

SETTINGS = clawctx.PruningSettings.from_config({"mode": "cache-ttl"})
LIMIT = 1000
WINDOW = 200_000


@pytest.fixture(scope="module")
def message_texts(session: GeneratedSession) -> list[bytes]:
    """The JSON text of every message in the file, in file order."""
    texts = []
    with session.path.open("rb") as f:
        for line in f:
            entry = orjson.loads(line)
            if entry.get("type") == "message":
                texts.append(orjson.dumps(entry["message"]))
    return texts


def clawctx_all_operations(t: clawctx.Transcript) -> Any:
    t = clawctx.sanitize_tool_call_inputs(t)
    t = clawctx.history.sanitize_tool_use_result_pairing(t, now_ms=0)
    t = clawctx.limit_history_turns(t, LIMIT)
    counts = t.token_counts()
    context = clawctx.estimate_context_tokens(t)
    t = clawctx.prune_context(t, SETTINGS, context_window_tokens=WINDOW)
    return t, counts, context


def reference_operations(messages: list[Any]) -> Any:
    messages = ref.repair_tool_pairing(messages, 0)
    messages = ref.limit_history_turns(messages, LIMIT)
    counts = [ref.estimate_tokens(m) for m in messages]
    return ref.prune_context(messages, ref.DEFAULT_PRUNING, WINDOW), counts


def test_clawctx_all_operations(
    benchmark: Any, session: GeneratedSession, message_texts: list[bytes]
) -> None:
    data = b"[" + b",".join(message_texts) + b"]"
    holder: list[clawctx.Transcript] = []

    def fresh() -> None:
        holder[:] = [clawctx.Transcript.from_json(data)]

    t, counts, _ = measure(
        benchmark,
        "transcript ops",
        "clawctx",
        session,
        lambda: clawctx_all_operations(holder[0]),
        nbytes=len(data),
        setup=fresh,
        rounds=10,
    )
    assert len(counts) > 0 and len(t) > 0


def test_reference_operations(
    benchmark: Any, session: GeneratedSession, message_texts: list[bytes]
) -> None:
    messages = [orjson.loads(m) for m in message_texts]
    nbytes = sum(len(m) for m in message_texts) + len(message_texts) + 1
    pruned, counts = measure(
        benchmark,
        "transcript ops",
        "reference",
        session,
        reference_operations,
        messages,
        nbytes=nbytes,
    )
    assert len(counts) > 0 and len(pruned) > 0


def test_floor_json_loads_each_message(
    benchmark: Any, session: GeneratedSession, message_texts: list[bytes]
) -> None:
    nbytes = sum(len(m) for m in message_texts) + len(message_texts) + 1
    out = measure(
        benchmark,
        "transcript ops",
        "json.loads floor",
        session,
        lambda: [json.loads(m) for m in message_texts],
        nbytes=nbytes,
    )
    assert len(out) == len(message_texts)


def test_floor_orjson_loads_each_message(
    benchmark: Any, session: GeneratedSession, message_texts: list[bytes]
) -> None:
    nbytes = sum(len(m) for m in message_texts) + len(message_texts) + 1
    out = measure(
        benchmark,
        "transcript ops",
        "orjson floor",
        session,
        lambda: [orjson.loads(m) for m in message_texts],
        nbytes=nbytes,
    )
    assert len(out) == len(message_texts)
