"""The prompt cache of a recorded session, turn by turn: :func:`cache_report`.

Each assistant turn's request is rebuilt from the session (the context at the turn's parent
entry, ``Session.context_messages``, sent through :func:`clawctx.wire.build_request_payload`
for the model recorded on the turn), consecutive requests are compared with
:func:`clawctx.wire.cache_diff`, and the recorded usage (``usage.cacheRead``,
``usage.cacheWrite``, ``usage.input``, ``usage.cost``) gives each turn's hit rate and prices.

Layer: ``clawctx.engine`` (it reads sessions and builds requests).
"""

from __future__ import annotations

import dataclasses
import os
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from clawctx import _compat
from clawctx._core import Session, _CacheDiffChain
from clawctx.wire.cache import CacheBreak, _break_from_tuple
from clawctx.wire.payload import (
    SUPPORTED_APIS,
    PayloadError,
    build_request_payload,
)

__all__ = ["CacheReport", "CacheTurn", "cache_report"]

#: The clock stamped on synthetic tool results of rebuilt requests: a fixed one, so two
#: rebuilds of the same context give the same bytes.
_NOW_MS = 0


@dataclass(frozen=True, slots=True)
class CacheTurn:
    """One assistant turn of a session and what its request did to the prompt cache.

    ``index`` counts the assistant turns from 0; ``entry_id`` is the turn's entry; ``api``,
    ``provider`` and ``model`` are recorded on it. ``input_tokens``, ``cache_read_tokens``,
    ``cache_write_tokens`` are its recorded ``usage`` (``input`` excludes what was read from or
    written to the cache, as pi records it); ``hit_rate`` is ``cacheRead / (input + cacheRead
    + cacheWrite)`` (``None`` when all are zero). ``cache_write_cost`` is the recorded
    ``usage.cost.cacheWrite``. ``cache_break`` is where the rebuilt request stops extending the
    previous turn's (``None`` for the first turn, a turn whose API has no request builder, or
    a request that extends the previous one, or the turn after one whose request could not be
    rebuilt: ``rebuild_error`` then says why, e.g. where pi-ai itself throws for the recorded
    messages); its cause is ``"compaction"`` where the bodies show a rewritten history and the
    session records a compaction or reset on the turn's path since the previous turn (a later
    compaction that kept the summary text); ``break_cost`` prices its ``rewrite_tokens``
    at what a cache write costs over a cache read for this model (from the recorded costs of
    the session's turns of the model; ``None`` when the session records none).
    """

    index: int
    entry_id: str
    api: str | None
    provider: str | None
    model: str | None
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    hit_rate: float | None
    cache_write_cost: float
    cache_break: CacheBreak | None = None
    break_cost: float | None = None
    rebuild_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The turn as JSON-ready data (``cache_break`` as a dict or ``None``)."""
        brk = self.cache_break
        return {
            "index": self.index,
            "entryId": self.entry_id,
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "input": self.input_tokens,
            "cacheRead": self.cache_read_tokens,
            "cacheWrite": self.cache_write_tokens,
            "hitRate": self.hit_rate,
            "cacheWriteCost": self.cache_write_cost,
            "rebuildError": self.rebuild_error,
            "break": None
            if brk is None
            else {
                "path": brk.path,
                "previousOffset": brk.previous_offset,
                "nextOffset": brk.next_offset,
                "cause": brk.cause,
                "rewriteTokens": brk.rewrite_tokens,
                "cost": self.break_cost,
            },
        }


@dataclass(frozen=True, slots=True)
class CacheReport:
    """The prompt cache of a session: every assistant turn (:class:`CacheTurn`) and totals.

    ``hit_rate`` is the session's ``cacheRead / (input + cacheRead + cacheWrite)`` over every
    turn; ``breaks`` the turns whose request broke the cache; ``break_cost`` the sum of their
    priced costs; ``cache_write_cost`` the recorded cost of every cache write.
    """

    path: str
    turns: tuple[CacheTurn, ...] = field(default_factory=tuple)

    @property
    def breaks(self) -> tuple[CacheTurn, ...]:
        """The turns whose rebuilt request did not extend the previous one."""
        return tuple(t for t in self.turns if t.cache_break is not None)

    @property
    def hit_rate(self) -> float | None:
        """Tokens read from the cache over all input tokens of the session's turns."""
        read = sum(t.cache_read_tokens for t in self.turns)
        total = read + sum(t.input_tokens + t.cache_write_tokens for t in self.turns)
        return read / total if total else None

    @property
    def break_cost(self) -> float:
        """The priced cost of every break (breaks without a price count 0)."""
        return sum(t.break_cost or 0.0 for t in self.turns)

    @property
    def cache_write_cost(self) -> float:
        """The recorded ``usage.cost.cacheWrite`` of every turn."""
        return sum(t.cache_write_cost for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "path": self.path,
            "turns": [t.to_dict() for t in self.turns],
            "hitRate": self.hit_rate,
            "breaks": len(self.breaks),
            "breakCost": self.break_cost,
            "cacheWriteCost": self.cache_write_cost,
        }


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _model(message: Mapping[str, Any]) -> dict[str, Any]:
    model = str(message.get("model") or "")
    return {
        "id": model,
        "name": model,
        "api": message.get("api"),
        "provider": message.get("provider") or "",
        "baseUrl": "",
        "reasoning": False,
        "input": ["text", "image"],
        "maxTokens": 32000,
    }


def _write_premiums(messages: Sequence[Mapping[str, Any]]) -> dict[tuple[Any, Any], float]:
    """Per (provider, model): what one token written to the cache costs over one read from
    it, from the recorded ``usage.cost`` of the session's turns."""
    sums: dict[tuple[Any, Any], list[float]] = {}
    for m in messages:
        usage = m.get("usage")
        if not isinstance(usage, Mapping):
            continue
        cost = usage.get("cost")
        if not isinstance(cost, Mapping):
            cost = {}
        s = sums.setdefault((m.get("provider"), m.get("model")), [0.0, 0.0, 0.0, 0.0])
        s[0] += _number(cost.get("cacheWrite"))
        s[1] += _number(usage.get("cacheWrite"))
        s[2] += _number(cost.get("cacheRead"))
        s[3] += _number(usage.get("cacheRead"))
    out: dict[tuple[Any, Any], float] = {}
    for key, (write_cost, write_tokens, read_cost, read_tokens) in sums.items():
        if write_tokens > 0:
            read_price = read_cost / read_tokens if read_tokens > 0 else 0.0
            out[key] = max(write_cost / write_tokens - read_price, 0.0)
    return out


#: Threads that build the rebuilt requests (native work without the GIL).
_REBUILD_WORKERS = max(1, min(os.cpu_count() or 1, 8))
#: Turns in flight at once (their requests held in memory): a few per thread.
_WINDOW = 4 * _REBUILD_WORKERS


def _rebuild(
    job: tuple[Mapping[str, Any], Any],
    system_prompt: str | None,
    tools: Sequence[Mapping[str, Any]] | None,
    safe: bool,
) -> bytes | str | None:
    """The turn's request body, the reason it cannot be built, or ``None`` (not rebuilt)."""
    message, context = job
    if context is None:
        return None
    try:
        return build_request_payload(
            _model(message),
            {"system_prompt": system_prompt, "messages": context, "tools": tools},
            now_ms=_NOW_MS,
            safe=safe,
        ).to_json()
    except PayloadError as err:
        # pi-ai throws for these messages (a runtime would have failed the same way): no
        # request to compare, and none for the next turn to compare with.
        return str(err)


#: A turn whose request is being built: its entry, message, the build, and whether the
#: session records a compaction or reset since the previous turn.
_Pending = tuple[Mapping[str, Any], Mapping[str, Any], "Future[bytes | str | None]", bool]


class _Boundaries:
    """Whether a compaction or a reset lies on a turn's path since the previous turn."""

    def __init__(self, entries: Sequence[Mapping[str, Any]]) -> None:
        self._by_id = {e.get("id"): e for e in entries}
        self._order = {e.get("id"): i for i, e in enumerate(entries)}

    def between(self, previous_id: str | None, entry: Mapping[str, Any]) -> bool:
        # Parents come before their children in the file: the walk back from the turn stops
        # at the previous turn or at any entry written before it (another branch), and at a
        # parent written after its child, so a parent cycle ends it.
        stop = -1 if previous_id is None else self._order.get(previous_id, -1)
        below = self._order.get(entry.get("id"), len(self._order))
        current = self._by_id.get(entry.get("parentId"))
        while current is not None and stop < (at := self._order.get(current.get("id"), -1)) < below:
            if current.get("type") in ("compaction", "reset"):
                return True
            below = at
            current = self._by_id.get(current.get("parentId"))
        return False


def _collect(
    pending: deque[_Pending],
    chain: _CacheDiffChain,
    turns: list[CacheTurn],
    premiums: Mapping[tuple[Any, Any], float],
) -> None:
    """The oldest pending turn, once its request is built, compared with the previous turn's
    (``None`` when either could not be built) and appended to ``turns``."""
    entry, message, body, compacted = pending.popleft()
    built = body.result()
    brk: CacheBreak | None = None
    if isinstance(built, bytes):
        brk = _break_from_tuple(chain.push(built))
        if brk is not None and compacted and brk.cause == "history_rewritten":
            # The bodies alone show a rewritten history when a later compaction kept the
            # summary text; the session says what rewrote it.
            brk = dataclasses.replace(brk, cause="compaction")
    else:
        chain.reset()
    failed = built if isinstance(built, str) else None
    turns.append(_turn(len(turns), entry, message, premiums, brk, failed))


def _turn(
    index: int,
    entry: Mapping[str, Any],
    message: Mapping[str, Any],
    premiums: Mapping[tuple[Any, Any], float],
    brk: CacheBreak | None,
    failed: str | None,
) -> CacheTurn:
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        usage = {}
    cost = usage.get("cost")
    if not isinstance(cost, Mapping):
        cost = {}
    read = int(_number(usage.get("cacheRead")))
    write = int(_number(usage.get("cacheWrite")))
    fresh = int(_number(usage.get("input")))
    total = read + write + fresh
    premium = premiums.get((message.get("provider"), message.get("model")))
    return CacheTurn(
        index=index,
        entry_id=str(entry.get("id")),
        api=message.get("api"),
        provider=message.get("provider"),
        model=message.get("model"),
        input_tokens=fresh,
        cache_read_tokens=read,
        cache_write_tokens=write,
        hit_rate=read / total if total else None,
        cache_write_cost=_number(cost.get("cacheWrite")),
        cache_break=brk,
        break_cost=None if brk is None or premium is None else brk.rewrite_tokens * premium,
        rebuild_error=failed,
    )


def cache_report(
    path: str | os.PathLike[str] | Session,
    *,
    system_prompt: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    rebuild: bool = True,
) -> CacheReport:
    """The prompt cache of the session file at ``path`` (or of an open :class:`Session`), turn
    by turn (see :class:`CacheTurn`).

    Each assistant turn's request is rebuilt as the runtime sends it: the context at the turn's
    parent entry (compactions and branches applied, as ``Session.context_messages``), the
    ``system_prompt`` and ``tools`` given here (sessions do not record them; give the ones the
    agent ran with to see their effect, e.g. ``clawctx assemble``'s), through
    :func:`~clawctx.wire.build_request_payload` for the API, provider and model recorded on the
    turn. Consecutive rebuilt requests are compared with :func:`~clawctx.wire.cache_diff`. The
    file is only read. The requests are built on a pool of threads (as many as CPUs, at most
    8) and compared in order, each with the one before, reading only what it adds: a 100 MB
    session takes about 7 s. ``rebuild=False`` reads only the recorded usage (hit rates and
    costs, no breaks): quick on any size.
    """
    session = path if isinstance(path, Session) else Session.open(path, read_only=True)
    every_entry = session.entries()
    assistants = [
        e
        for e in every_entry
        if e.get("type") == "message"
        and isinstance(e.get("message"), Mapping)
        and e["message"].get("role") == "assistant"
    ]
    boundaries = _Boundaries(every_entry)
    premiums = _write_premiums([e["message"] for e in assistants])
    # The request guard follows the caller's compat release; the worker threads do not see
    # the caller's context variables, so it is resolved here.
    safe = _compat.resolve_safe(None)
    turns: list[CacheTurn] = []
    # Requests are built on a thread pool (the build releases the GIL, and each turn's request
    # depends only on its context) while this thread reads the contexts in order (the session
    # extends the previous turn's context to the next). Each built request is then compared
    # with the one before in order, by a chain that keeps the previous request's layout and
    # so reads only what the next one adds.
    chain = _CacheDiffChain()
    pending: deque[_Pending] = deque()
    with ThreadPoolExecutor(max_workers=_REBUILD_WORKERS) as pool:
        previous_id: str | None = None
        for entry in assistants:
            message = entry["message"]
            context: Any = None
            if rebuild and message.get("api") in SUPPORTED_APIS:
                parent = entry.get("parentId")
                context = [] if parent is None else session.context_messages(parent)
            body = pool.submit(_rebuild, (message, context), system_prompt, tools, safe)
            compacted = boundaries.between(previous_id, entry)
            pending.append((entry, message, body, compacted))
            previous_id = entry.get("id")
            while len(pending) > _WINDOW:
                _collect(pending, chain, turns, premiums)
        while pending:
            _collect(pending, chain, turns, premiums)
    where = session.path if isinstance(path, Session) else path
    return CacheReport(path=os.fspath(where or ""), turns=tuple(turns))
