"""``fit_to_budget``: the newest part of a history that fits a token budget, without ever
splitting a tool call from its results.

The history is read into a transcript (any shape of ``clawctx.interop._formats``), tool pairing
is repaired in Rust (``repair_tool_pairing``: results moved next to their call, orphans and
duplicates dropped, missing results added as errors; then ``drop_duplicate_tool_results``), and
the messages are grouped into atomic units: an assistant message with the tool results that
follow it, or one other message. Units are taken from the newest while they fit; the kept part
then starts on a user-side message (so no result is ever first, and Anthropic and Gemini get
the user turn they need first). A history whose pairing needed no repair comes back as the
caller's own elements (same objects); a repaired one is converted back into the caller's shape.

Blocks pi has no type for (documents, files, audio, server-tool turns: ``_carried``) count by
``_carried.charge_text`` with the counter in use (a text document by its text, anything else by
its JSON, base64 included), so a large PDF is never free.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np

from clawctx._compat import resolve_safe
from clawctx._core import (
    Transcript,
    _budget_units,
    compaction_boundary,
    count_message_tokens,
    drop_duplicate_tool_results,
    estimate_tokens,
    guard_request,
    repair_tool_pairing,
)
from clawctx.interop import _carried
from clawctx.interop import _common as c
from clawctx.interop._formats import FORMAT_APIS, Converted, read

log = logging.getLogger("clawctx")

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
    #: Why nothing but the prelude was kept although the history had more (``None`` when
    #: something was kept): an empty result is never silent.
    warning: str | None = None


# Unit start kinds of `_budget_units` (rust/core/src/transcript/budget.rs, `UnitStart`).
# Unit kinds of ``_budget_units`` (5, a blank user message no writer sends, is no start).
_USER, _TOOL_RESULT, _SYSTEM, _BLANK_USER = 0, 2, 3, 5


def _message_counts(messages: Transcript, counter: str) -> np.ndarray:
    import numpy as np  # imported on use: `import clawctx` stays light

    if counter == "estimate":
        counts: np.ndarray = np.asarray(messages.token_counts(), dtype=np.int64).copy()
        return counts
    if counter in ("o200k_base", "cl100k_base"):
        encoding: Literal["o200k_base", "cl100k_base"] = (
            "o200k_base" if counter == "o200k_base" else "cl100k_base"
        )
        exact: np.ndarray = np.array(count_message_tokens(messages, encoding), dtype=np.int64)
        return exact
    raise ValueError(
        f"counter must be 'estimate', 'o200k_base', 'cl100k_base' or a callable, not {counter!r}"
    )


def _charge_carried(
    messages: Transcript, counts: np.ndarray, counter: str, looked: bool | None
) -> None:
    """Adds the charge of carried blocks, which the Rust counts give nothing."""
    if looked is False or (looked is None and b'"foreign"' not in messages.to_json()):
        return
    for index, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        texts = [
            c.text_block(_carried.charge_text(b))
            for b in content
            if isinstance(b, dict) and _carried.is_carried(b)
        ]
        if not texts:
            continue
        proxy = {"role": "user", "content": texts}
        if counter == "estimate":
            counts[index] += estimate_tokens(proxy)
        else:
            encoding: Literal["o200k_base", "cl100k_base"] = (
                "o200k_base" if counter == "o200k_base" else "cl100k_base"
            )
            counts[index] += int(count_message_tokens(Transcript([proxy]), encoding)[0])


def _system_estimates(messages: Transcript, counts: np.ndarray, units: np.ndarray) -> None:
    """pi's estimate knows no system role: such a message is counted like a user message."""
    for index in units:
        message = messages[int(index)]
        counts[index] = estimate_tokens({"role": "user", "content": message.get("content", "")})


class _Units:
    """Units as ranges: ``bounds[u]:bounds[u + 1]`` are unit u's transcript messages, and, for
    a caller's list kept as it is, ``spans[u]`` the source elements it covers."""

    def __init__(self, transcript: Transcript, converted: Converted, merge: bool) -> None:
        import numpy as np

        starts, kinds = _budget_units(transcript)
        self.count = len(starts)
        self.bounds = np.append(np.asarray(starts, dtype=np.int64), len(transcript))
        self.kinds = np.asarray(kinds, dtype=np.int8)
        self.spans: list[tuple[int, int]] | None = None
        if merge:
            self._merge(converted.origins)

    def _merge(self, origins: Sequence[int]) -> None:
        """Joins units that share a source element (an Anthropic user message holding results
        and text, a Responses turn of several items), so each keeps whole elements."""
        import numpy as np

        keep: list[int] = []
        spans: list[tuple[int, int]] = []
        for unit in range(self.count):
            part = origins[int(self.bounds[unit]) : int(self.bounds[unit + 1])]
            low, high = min(part), max(part)
            if spans and 0 <= low <= spans[-1][1]:
                spans[-1] = (spans[-1][0], max(spans[-1][1], high))
            else:
                keep.append(unit)
                spans.append((low, high))
        self.bounds = np.append(self.bounds[keep], self.bounds[-1])
        self.kinds = self.kinds[keep]
        self.count = len(keep)
        self.spans = spans

    def messages(self, first: int, last: int) -> tuple[int, int]:
        return int(self.bounds[first]), int(self.bounds[last])


def fit_to_budget(
    messages: Any,
    max_tokens: int,
    *,
    counter: Counter = "estimate",
    keep_first: int | Literal["system"] = "system",
    strategy: Literal["last", "first"] = "last",
    start_on: Literal["user", "any"] = "user",
    safe: bool | None = None,
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
    ``"any"`` only guarantees it does not start with a tool result. An agent run (one user
    prompt, then dozens of tool turns) that does not fit whole keeps its prompt and the newest
    complete exchanges that fit after it (``strategy="last"``); in an agent loop, pass
    ``keep_first=1`` to keep the task prompt as the prelude instead. When nothing after the
    prelude fits, ``Fit.warning`` says why (and the ``clawctx`` logger warns).
    ``safe`` (default: unless :func:`clawctx.compat` is in force): the history first passes the
    request guard for the API its format is sent to, so what is kept is a valid request
    (repeated ids made unique, late results moved up, aborted turns left out).
    """
    import numpy as np

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
    if resolve_safe(safe):
        transcript, _changes = guard_request(
            transcript,
            model_api=FORMAT_APIS.get(converted.format),
            verbatim_ids=True,
            # The newest turn's calls may be in flight: their results come next.
            followed_by_user=True,
        )
    repaired = transcript is not converted.transcript and transcript != converted.transcript
    as_is = not repaired and not isinstance(converted.source, Transcript)
    units = _Units(transcript, converted, merge=as_is)

    if callable(counter):
        costs = np.array(
            [
                int(counter(_part(converted, transcript, units, u, as_is)))
                for u in range(units.count)
            ],
            dtype=np.int64,
        )
    else:
        counts = _message_counts(transcript, counter)
        if counter == "estimate" and (units.kinds == _SYSTEM).any():
            _system_estimates(transcript, counts, units.bounds[:-1][units.kinds == _SYSTEM])
        _charge_carried(transcript, counts, counter, converted.carried)
        costs = np.add.reduceat(counts, units.bounds[:-1]) if units.count else counts[:0]

    # The prelude: whole units.
    if keep_first == "system":
        not_system = np.flatnonzero(units.kinds != _SYSTEM)
        prelude = int(not_system[0]) if len(not_system) else units.count
    elif keep_first == 0:
        prelude = 0
    elif units.spans is not None:
        ends = np.array([high for _, high in units.spans], dtype=np.int64)
        prelude = int(np.searchsorted(ends, keep_first - 1, side="left")) + 1
    else:
        wanted = (
            sum(1 for o in converted.origins if o < keep_first) if repaired else int(keep_first)
        )
        prelude = int(np.searchsorted(units.bounds[1:], wanted, side="left")) + 1
    prelude = min(prelude, units.count)
    needed = int(costs[:prelude].sum())
    if needed > max_tokens:
        raise ValueError(
            f"the kept prelude alone needs {needed} tokens, over max_tokens={max_tokens}"
        )
    budget = max_tokens - needed
    speaks = bool((units.kinds[:prelude] != _SYSTEM).any())
    if start_on == "user" and not speaks:
        good = units.kinds == _USER
    else:
        good = (units.kinds != _TOOL_RESULT) & (units.kinds != _BLANK_USER)
    # A provider compaction block (issue 31) is a boundary: nothing before its turn needs to
    # be kept, and the kept part may start at that (assistant) turn.
    floor = prelude
    boundary = compaction_boundary(transcript)
    if boundary is not None:
        unit = int(np.searchsorted(units.bounds, boundary, side="right")) - 1
        if unit > prelude:
            floor = unit
            good = good.copy()
            good[unit] = True
    rest = costs[floor:]
    if strategy == "last":
        # The longest newest run that fits, then moved forward to a unit it may start with.
        from_end = np.cumsum(rest[::-1])
        first = max(floor, units.count - int(np.searchsorted(from_end, budget, side="right")))
        starts = np.flatnonzero(good[first:])
        first = first + int(starts[0]) if len(starts) else units.count
        last = units.count
    else:
        starts = np.flatnonzero(good[floor:])
        first = floor + int(starts[0]) if len(starts) else units.count
        last = first + int(np.searchsorted(np.cumsum(costs[first:]), budget, side="right"))
    kept = [(0, prelude), (first, last)]
    dropped = [(prelude, first), (last, units.count)]
    tokens = needed + int(costs[first:last].sum())
    users = np.flatnonzero(units.kinds[floor:] == _USER) + floor
    if strategy == "last" and first == units.count and len(users):
        # An agent run (one prompt, then many tool turns) fits only without its start: keep
        # the newest user turn and the newest complete exchanges after it that fit.
        anchor = int(users[-1])
        if costs[anchor] <= budget:
            after = costs[anchor + 1 :]
            room = budget - int(costs[anchor])
            tail = units.count - int(np.searchsorted(np.cumsum(after[::-1]), room, side="right"))
            sendable = np.flatnonzero(units.kinds[tail:] != _TOOL_RESULT)
            tail = tail + int(sendable[0]) if len(sendable) else units.count
            kept = [(0, prelude), (anchor, anchor + 1), (tail, units.count)]
            dropped = [(prelude, anchor), (anchor + 1, tail)]
            tokens = needed + int(costs[anchor]) + int(costs[tail:].sum())
    warning = None
    if all(low >= high for low, high in kept[1:]) and units.count > prelude:
        warning = (
            f"nothing after the prelude fits in max_tokens={max_tokens}: the newest user turn "
            f"alone needs more ({int(costs[int(users[-1])]) if len(users) else 0} tokens)"
            if len(users)
            else f"nothing after the prelude fits in max_tokens={max_tokens}"
        )
        log.warning("fit_to_budget: %s", warning)
    return Fit(
        messages=_select(converted, transcript, units, kept, as_is),
        dropped=_select(converted, transcript, units, dropped, as_is),
        tokens=tokens,
        warning=warning,
        repaired=repaired,
        dropped_orphans=report.dropped_orphan_count + report.dropped_duplicate_count + duplicates,
        added_results=len(report.added),
    )


def _select(
    converted: Converted,
    transcript: Transcript,
    units: _Units,
    ranges: Sequence[tuple[int, int]],
    as_is: bool,
) -> Any:
    """The units in ``ranges`` in the caller's shape."""
    ranges = [(a, b) for a, b in ranges if a < b]
    source = converted.source
    if isinstance(source, Transcript) or not as_is:
        # Slices of the Rust-owned transcript: no dict per message for a Transcript.
        out = transcript[0:0]
        for a, b in ranges:
            low, high = units.messages(a, b)
            out = out + transcript[low:high]
        return out if isinstance(source, Transcript) else converted.restore(out.to_list())
    assert units.spans is not None
    elements = [
        e for a, b in ranges for e in range(units.spans[a][0], units.spans[b - 1][1] + 1) if e >= 0
    ]
    if converted.format == "anthropic" and isinstance(source, Mapping):
        keep_system = any(units.spans[a][0] < 0 for a, _ in ranges)
        request = {k: v for k, v in source.items() if k != "system" or keep_system}
        request["messages"] = [source["messages"][e] for e in elements]
        return request
    return [source[e] for e in elements]


def _part(
    converted: Converted, transcript: Transcript, units: _Units, unit: int, as_is: bool
) -> Any:
    """One unit in the caller's shape, for a callable counter."""
    return _select(converted, transcript, units, [(unit, unit + 1)], as_is)
