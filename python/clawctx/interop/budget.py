"""``fit_to_budget``: the newest part of a history that fits a token budget, without ever
splitting a tool call from its results.

The history is read into a transcript (any shape of ``clawctx.interop.formats``), tool pairing
is repaired in Rust (``repair_tool_pairing``: results moved next to their call, orphans and
duplicates dropped, missing results added as errors; then ``drop_duplicate_tool_results``), and
the messages are grouped into atomic units: an assistant message with the tool results that
follow it, or one other message. Units are taken from the newest while they fit; the kept part
then starts on a user-side message (so no result is ever first, and Anthropic and Gemini get
the user turn they need first). A history whose pairing needed no repair comes back as the
caller's own elements (same objects); a repaired one is converted back into the caller's shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from clawctx._core import (
    Transcript,
    count_message_tokens,
    drop_duplicate_tool_results,
    estimate_tokens,
    repair_tool_pairing,
)
from clawctx.interop import _common as c
from clawctx.interop.formats import Converted, read

Counter = Literal["estimate", "o200k_base", "cl100k_base"] | Callable[[Any], int]


@dataclass(frozen=True)
class Fit:
    """What ``fit_to_budget`` kept and dropped, both in the caller's shape."""

    messages: Any
    dropped: Any
    tokens: int  # of the kept part, by the counter used
    repaired: bool  # pairing had to be repaired, so ``messages`` was rebuilt
    dropped_orphans: int = 0  # tool results the repair dropped (answering no call)
    added_results: int = 0  # missing tool results the repair added as errors


def _units(roles: Sequence[str | None]) -> list[tuple[int, int]]:
    units: list[tuple[int, int]] = []
    for index, role in enumerate(roles):
        if role == "toolResult" and units and roles[units[-1][0]] == "assistant":
            units[-1] = (units[-1][0], index + 1)
        else:
            units.append((index, index + 1))
    return units


def _message_counts(messages: Transcript, counter: str) -> np.ndarray:
    if counter == "estimate":
        counts: np.ndarray = np.asarray(messages.token_counts(), dtype=np.int64).copy()
        # pi's estimate knows no system role; count such a message like a user message.
        roles = messages.roles()
        for index, role in enumerate(roles):
            if role in c.SYSTEM_ROLES:
                message = messages[index]
                counts[index] = estimate_tokens(
                    {"role": "user", "content": message.get("content", "")}
                )
        return counts
    if counter in ("o200k_base", "cl100k_base"):
        encoding: Literal["o200k_base", "cl100k_base"] = (
            "o200k_base" if counter == "o200k_base" else "cl100k_base"
        )
        exact: np.ndarray = np.asarray(count_message_tokens(messages, encoding), dtype=np.int64)
        return exact
    raise ValueError(
        f"counter must be 'estimate', 'o200k_base', 'cl100k_base' or a callable, not {counter!r}"
    )


def _native_units(
    units: list[tuple[int, int]], origins: Sequence[int]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Units merged so that no source element is split between two of them, with each merged
    unit's range of source elements."""
    merged: list[tuple[int, int]] = []
    spans: list[tuple[int, int]] = []
    for start, end in units:
        low, high = min(origins[start:end]), max(origins[start:end])
        if merged and low <= spans[-1][1] and low >= 0:
            merged[-1] = (merged[-1][0], end)
            spans[-1] = (spans[-1][0], max(spans[-1][1], high))
        else:
            merged.append((start, end))
            spans.append((low, high))
    return merged, spans


def fit_to_budget(
    messages: Any,
    max_tokens: int,
    *,
    counter: Counter = "estimate",
    keep_first: int | Literal["system"] = "system",
    strategy: Literal["last", "first"] = "last",
    start_on: Literal["user", "any"] = "user",
) -> Fit:
    """Keeps the newest (``strategy="last"``) or oldest (``"first"``) messages of ``messages``
    that fit in ``max_tokens``, in the shape they came in.

    ``counter``: ``"estimate"`` (pi's chars/4), ``"o200k_base"``/``"cl100k_base"`` (exact BPE
    counts), or a callable given a part of the history in the caller's shape (one unit: a
    message, or an assistant turn with its results) and returning its tokens.
    ``keep_first``: ``"system"`` keeps the leading system/developer messages (and an Anthropic
    request's ``system``); an int keeps that many leading elements (rounded up to whole units).
    The kept prelude counts against the budget; if it alone is over, ``ValueError``.
    ``start_on="user"`` makes the kept part (after the prelude) start with a user message;
    ``"any"`` only guarantees it does not start with a tool result.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValueError(f"max_tokens must be a non-negative int, not {max_tokens!r}")
    if strategy not in ("last", "first"):
        raise ValueError(f"strategy must be 'last' or 'first', not {strategy!r}")
    if start_on not in ("user", "any"):
        raise ValueError(f"start_on must be 'user' or 'any', not {start_on!r}")
    if not (keep_first == "system" or (isinstance(keep_first, int) and keep_first >= 0)):
        raise ValueError(f"keep_first must be 'system' or a non-negative int, not {keep_first!r}")
    converted = read(messages)
    report = repair_tool_pairing(converted.transcript)
    # Upstream repair keeps a second result inside one span when nothing else there changes
    # (OpenClaw 2026.3.13 `src/agents/session-transcript-repair.ts`); no provider takes it.
    transcript = drop_duplicate_tool_results(report.messages)
    duplicates = len(report.messages) - len(transcript)
    repaired = transcript is not converted.transcript and transcript != converted.transcript
    roles = transcript.roles()
    units = _units(roles)
    spans: list[tuple[int, int]] = []
    if not repaired:
        units, spans = _native_units(units, converted.origins)

    if callable(counter):
        costs = [
            int(counter(_part(converted, transcript, u, spans, i, repaired)))
            for i, u in enumerate(units)
        ]
    else:
        prefix = np.concatenate(([0], np.cumsum(_message_counts(transcript, counter))))
        costs = [int(prefix[end] - prefix[start]) for start, end in units]

    # The prelude: whole units.
    prelude = 0
    if keep_first == "system":
        while prelude < len(units) and all(
            roles[i] in c.SYSTEM_ROLES for i in range(*units[prelude])
        ):
            prelude += 1
    elif keep_first:
        wanted = sum(1 for o in converted.origins if o < keep_first) if repaired else keep_first
        covered = 0
        while prelude < len(units) and covered < wanted:
            covered = (spans[prelude][1] + 1) if not repaired else units[prelude][1]
            prelude += 1
    budget = max_tokens - sum(costs[:prelude])
    if budget < 0:
        needed = sum(costs[:prelude])
        raise ValueError(
            f"the kept prelude alone needs {needed} tokens, over max_tokens={max_tokens}"
        )
    rest = list(range(prelude, len(units)))
    prelude_speaks = any(roles[i] not in c.SYSTEM_ROLES for u in units[:prelude] for i in range(*u))

    def starts_well(unit: int) -> bool:
        first_role = roles[units[unit][0]]
        if start_on == "user" and not prelude_speaks:
            return first_role in c.USER_SIDE_ROLES
        return first_role != "toolResult"

    kept: list[int] = []
    if strategy == "last":
        for unit in reversed(rest):
            if costs[unit] > budget:
                break
            budget -= costs[unit]
            kept.append(unit)
        kept.reverse()
        while kept and not starts_well(kept[0]):
            kept.pop(0)
    else:
        while rest and not starts_well(rest[0]):
            rest.pop(0)
        for unit in rest:
            if costs[unit] > budget:
                break
            budget -= costs[unit]
            kept.append(unit)
    chosen = list(range(prelude)) + kept
    dropped = [u for u in range(len(units)) if u not in set(chosen)]
    tokens = sum(costs[u] for u in chosen)
    return Fit(
        messages=_select(converted, transcript, units, spans, chosen, repaired),
        dropped=_select(converted, transcript, units, spans, dropped, repaired),
        tokens=tokens,
        repaired=repaired,
        dropped_orphans=report.dropped_orphan_count + report.dropped_duplicate_count + duplicates,
        added_results=len(report.added),
    )


def _pi_indices(units: list[tuple[int, int]], chosen: Sequence[int]) -> list[int]:
    return [i for u in chosen for i in range(*units[u])]


def _select(
    converted: Converted,
    transcript: Transcript,
    units: list[tuple[int, int]],
    spans: list[tuple[int, int]],
    chosen: Sequence[int],
    repaired: bool,
) -> Any:
    source = converted.source
    if isinstance(source, Transcript):
        # Slices of the Rust-owned transcript: no dict per message.
        out = transcript[0:0]
        for u in chosen:
            out = out + transcript[units[u][0] : units[u][1]]
        return out
    if repaired:
        return converted.restore([transcript[i] for i in _pi_indices(units, chosen)])
    elements = [e for u in chosen for e in range(spans[u][0], spans[u][1] + 1) if e >= 0]
    if converted.format == "anthropic" and not isinstance(source, list):
        keep_system = any(spans[u][0] < 0 for u in chosen)
        request = {k: v for k, v in source.items() if k != "system" or keep_system}
        request["messages"] = [source["messages"][e] for e in elements]
        return request
    return [source[e] for e in elements]


def _part(
    converted: Converted,
    transcript: Transcript,
    unit: tuple[int, int],
    spans: list[tuple[int, int]],
    index: int,
    repaired: bool,
) -> Any:
    """One unit in the caller's shape, for a callable counter."""
    units = [unit]
    return _select(converted, transcript, units, [spans[index]] if spans else [], [0], repaired)
