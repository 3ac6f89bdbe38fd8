"""Compaction (pi-mono 0.58.3 `packages/coding-agent/src/core/compaction/compaction.ts`,
``prepareCompaction`` and ``compact``): pi's planning in Rust, the summarizer supplied by the
caller.

The cut point, the preparation, the prompts and the final summary come from ``clawctx._core``
and follow pi-coding-agent exactly. Summarizing needs a model, and clawctx has no LLM client:
:func:`compact_session` (also ``Session.compact``) hands each :class:`SummaryRequest` to a
caller-supplied ``summarize`` function and appends the compaction entry pi would append.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, overload

from clawctx import _core
from clawctx._core import (
    CompactionPreparation,
    CompactionSettings,
    CutPoint,
    SummaryRequest,
    build_compaction_prompt,
    find_cut_point,
    prepare_compaction,
    serialize_conversation,
    should_compact,
)

__all__ = [
    "DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR",
    "NO_PRIOR_HISTORY",
    "SUMMARIZATION_PROMPT",
    "SUMMARIZATION_SYSTEM_PROMPT",
    "TURN_PREFIX_SUMMARIZATION_PROMPT",
    "UPDATE_SUMMARIZATION_PROMPT",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "CutPoint",
    "Summarizer",
    "SummaryRequest",
    "build_compaction_prompt",
    "compact_session",
    "find_cut_point",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
]

_TEXTS: Final = _core._compaction_texts()

#: The system prompt of every summary request (pi's ``SUMMARIZATION_SYSTEM_PROMPT``).
SUMMARIZATION_SYSTEM_PROMPT: Final[str] = _TEXTS["SUMMARIZATION_SYSTEM_PROMPT"]
#: The instructions of a first summary (pi's ``SUMMARIZATION_PROMPT``).
SUMMARIZATION_PROMPT: Final[str] = _TEXTS["SUMMARIZATION_PROMPT"]
#: The instructions that merge new messages into a previous summary.
UPDATE_SUMMARIZATION_PROMPT: Final[str] = _TEXTS["UPDATE_SUMMARIZATION_PROMPT"]
#: The instructions for the prefix of a split turn.
TURN_PREFIX_SUMMARIZATION_PROMPT: Final[str] = _TEXTS["TURN_PREFIX_SUMMARIZATION_PROMPT"]
#: The history summary of a split turn that has no history before it.
NO_PRIOR_HISTORY: Final[str] = _TEXTS["NO_PRIOR_HISTORY"]
#: OpenClaw's ``DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR``.
DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR: Final[int] = (
    CompactionSettings.DEFAULT_RESERVE_TOKENS_FLOOR
)

#: A summarizer: takes a :class:`SummaryRequest`, returns the summary text or an awaitable of it.
Summarizer = Callable[[SummaryRequest], str | Awaitable[str]]


@dataclass(frozen=True)
class CompactionResult:
    """What :func:`compact_session` appended (pi's ``CompactionResult`` plus the entry id)."""

    #: Id of the new ``compaction`` entry (the session's new leaf).
    entry_id: str
    #: The stored summary: the summarizer's text(s), composed as pi's ``compact`` does
    #: (a split turn's prefix summary, then the read/modified file lists).
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    #: ``{"readFiles": [...], "modifiedFiles": [...]}``, as stored in the entry.
    details: dict[str, Any]
    preparation: CompactionPreparation


@overload
def compact_session(
    session: _core.Session,
    summarize: Callable[[SummaryRequest], Awaitable[str]],
    settings: CompactionSettings | Mapping[str, Any] | None = None,
    custom_instructions: str | None = None,
) -> Coroutine[Any, Any, CompactionResult | None]: ...
@overload
def compact_session(
    session: _core.Session,
    summarize: Callable[[SummaryRequest], str],
    settings: CompactionSettings | Mapping[str, Any] | None = None,
    custom_instructions: str | None = None,
) -> CompactionResult | None: ...
@overload
def compact_session(
    session: _core.Session,
    summarize: Callable[[SummaryRequest], str | Awaitable[str]],
    settings: CompactionSettings | Mapping[str, Any] | None = None,
    custom_instructions: str | None = None,
) -> CompactionResult | Coroutine[Any, Any, CompactionResult | None] | None: ...
def compact_session(
    session: _core.Session,
    summarize: Callable[[SummaryRequest], str | Awaitable[str]],
    settings: CompactionSettings | Mapping[str, Any] | None = None,
    custom_instructions: str | None = None,
) -> CompactionResult | Coroutine[Any, Any, CompactionResult | None] | None:
    """Compact the session's current branch the way pi's ``compact()`` does
    (compaction.ts).

    ``prepare_compaction`` plans the cut on the branch path; ``summarize`` is called once per
    :meth:`CompactionPreparation.summary_requests` item (a ``"history"`` request, and for a
    split turn a ``"turn_prefix"`` request, which pi runs in parallel) and returns the summary
    text. The texts are composed into the final summary (split-turn joining, file lists) and a
    ``compaction`` entry ``{summary, firstKeptEntryId, tokensBefore, details: {readFiles,
    modifiedFiles}, fromHook: false}`` is appended through ``Session.append_compaction``, so
    ``session.context()`` then starts with the summary followed by the kept messages.
    ``settings.enabled`` is not consulted (it gates automatic compaction, as in pi).

    If any call returns an awaitable (an ``async def`` summarizer), this returns a coroutine to
    await; the awaitables are awaited together (``asyncio.gather`` under asyncio). Otherwise it
    returns the :class:`CompactionResult` directly. Nothing is appended when a summarizer call
    fails. Returns ``None`` (or a coroutine resolving to ``None`` when ``summarize`` is a
    coroutine function) when there is nothing to compact: the leaf is already a compaction, the
    branch is empty, or the first kept entry has no id.

    Raises ``TypeError`` when a summarizer returns something else than a string, and
    ``ClawctxError`` when the session's leaf moved while summarizing (the plan no longer fits).
    """
    preparation = _core.prepare_compaction(session, settings)
    if preparation is None:
        return _nothing() if _is_async_callable(summarize) else None
    requests = preparation.summary_requests(custom_instructions)
    answers: list[str | Awaitable[str]] = []
    try:
        for request in requests:
            answers.append(summarize(request))
    except BaseException:
        _discard(answers)
        raise
    if any(inspect.isawaitable(answer) for answer in answers):
        return _finish_async(session, preparation, requests, answers)
    return _finish(session, preparation, requests, answers)


def _is_async_callable(function: Callable[..., object]) -> bool:
    """An ``async def`` function, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        type(function).__call__
    )


async def _nothing() -> None:
    return None


def _discard(answers: Sequence[object]) -> None:
    """Closes coroutines that will never be awaited (no "never awaited" warnings)."""
    for answer in answers:
        if inspect.iscoroutine(answer):
            answer.close()


async def _resolve(answers: list[str | Awaitable[str]]) -> list[object]:
    pending = [answer for answer in answers if inspect.isawaitable(answer)]
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio, ...): one after the other
        done: list[object] = []
        for i, answer in enumerate(pending):
            try:
                done.append(await answer)
            except BaseException:
                _discard(pending[i + 1 :])
                raise
    else:
        done = list(await asyncio.gather(*pending, return_exceptions=True))
        for outcome in done:
            if isinstance(outcome, BaseException):
                raise outcome
    results = iter(done)
    return [next(results) if inspect.isawaitable(answer) else answer for answer in answers]


async def _finish_async(
    session: _core.Session,
    preparation: CompactionPreparation,
    requests: Sequence[SummaryRequest],
    answers: list[str | Awaitable[str]],
) -> CompactionResult | None:
    return _finish(session, preparation, requests, await _resolve(answers))


def _finish(
    session: _core.Session,
    preparation: CompactionPreparation,
    requests: Sequence[SummaryRequest],
    answers: Sequence[object],
) -> CompactionResult:
    texts: dict[str, str] = {}
    for request, answer in zip(requests, answers, strict=True):
        if not isinstance(answer, str):
            raise TypeError(
                f"the summarizer must return a str (or an awaitable of one) for a "
                f"{request.kind!r} request, not {type(answer).__name__}"
            )
        texts[request.kind] = answer
    summary = preparation.compose_summary(texts.get("history"), texts.get("turn_prefix"))
    if session.leaf_id != preparation.leaf_id:
        raise _core.ClawctxError(
            f"the session's leaf moved from {preparation.leaf_id!r} to {session.leaf_id!r} "
            "while the summary was generated; prepare and compact again"
        )
    details = preparation.details
    entry_id = session.append_compaction(
        summary, preparation.first_kept_entry_id, preparation.tokens_before, details, False
    )
    return CompactionResult(
        entry_id=entry_id,
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details=details,
        preparation=preparation,
    )
