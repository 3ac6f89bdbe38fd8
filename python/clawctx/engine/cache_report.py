"""The prompt cache of a recorded session, turn by turn: :func:`cache_report`.

Each assistant turn's request is rebuilt from the session (the context at the turn's parent
entry, ``Session.context_messages``, sent through :func:`clawctx.wire.build_request_payload`
for the model recorded on the turn), consecutive requests are compared with
:func:`clawctx.wire.cache_diff`, and the recorded usage (``usage.cacheRead``,
``usage.cacheWrite``, ``usage.input``, ``usage.cost``) gives each turn's hit rate and prices.

Layer: ``clawctx.engine`` (it reads sessions and builds requests).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawctx._core import Session
from clawctx.wire.cache import CacheBreak, cache_diff
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
    messages); ``break_cost`` prices its ``rewrite_tokens``
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
    file is only read. ``rebuild=False`` reads only the recorded usage (hit rates and costs,
    no breaks): quick on any size.
    """
    session = path if isinstance(path, Session) else Session.open(path, read_only=True)
    entries = [e for e in session.entries() if e.get("type") == "message"]
    assistants = [
        e
        for e in entries
        if isinstance(e.get("message"), Mapping) and e["message"].get("role") == "assistant"
    ]
    premiums = _write_premiums([e["message"] for e in assistants])
    turns: list[CacheTurn] = []
    previous: bytes | None = None
    for index, entry in enumerate(assistants):
        message = entry["message"]
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
        brk: CacheBreak | None = None
        body: bytes | None = None
        failed: str | None = None
        if rebuild and message.get("api") in SUPPORTED_APIS:
            parent = entry.get("parentId")
            context: Any = [] if parent is None else session.context_messages(parent)
            try:
                # Written once: compared as the next body here and as the previous one next.
                body = build_request_payload(
                    _model(message),
                    {"system_prompt": system_prompt, "messages": context, "tools": tools},
                    now_ms=_NOW_MS,
                ).to_json()
            except PayloadError as err:
                # pi-ai throws for these messages (a runtime would have failed the same way):
                # no request to compare, and none for the next turn to compare with.
                failed = str(err)
            if body is not None and previous is not None:
                brk = cache_diff(previous, body)
        premium = premiums.get((message.get("provider"), message.get("model")))
        turns.append(
            CacheTurn(
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
        )
        previous = body
    where = session.path if isinstance(path, Session) else path
    return CacheReport(path=os.fspath(where or ""), turns=tuple(turns))
