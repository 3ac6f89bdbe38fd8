"""Per-session queue of system events (OpenClaw 2026.3.13 `src/infra/system-events.ts`,
``enqueueSystemEvent`` and ``drainSystemEventEntries``).

Cron jobs, channel adapters, the heartbeat runner and plugins report things the agent should
know about ("Cron job "daily" completed") by enqueueing a short text under a session key. The
next prompt for that session drains the queue and prepends each event as a ``System:`` line
(:func:`clawctx.prompt.prompt_body.prepend_system_events`).

The queue lives in memory only and is never persisted (as upstream). A :class:`SystemEventQueue` is
thread-safe: producers may enqueue from any thread, and an asyncio consumer can await
:meth:`SystemEventQueue.wait_for_events`, which wakes when an event arrives from any thread.

Upstream keeps one process-wide map; here each :class:`SystemEventQueue` instance is one such
map, so tests and embedders can hold independent queues.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from clawctx._js import js_trim as _js_trim

__all__ = [
    "DEFAULT_MAX_SYSTEM_EVENTS",
    "SystemEvent",
    "SystemEventQueue",
    "SystemEventSnapshot",
]

#: system-events.ts, MAX_EVENTS: at most this many events are kept per session; the oldest is
#: dropped beyond it.
DEFAULT_MAX_SYSTEM_EVENTS: Final = 20


@dataclass(frozen=True, slots=True)
class SystemEvent:
    """One queued event (``enqueueSystemEvent``): trimmed ``text``, enqueue time ``ts`` in epoch
    milliseconds, and the normalized (trimmed, lower-cased) ``context_key`` or ``None``."""

    text: str
    ts: int
    context_key: str | None


@dataclass(frozen=True, slots=True)
class SystemEventSnapshot:
    """A copy of one session's queue state (upstream's consume/restore helpers).

    ``last_text`` is the text consecutive duplicates are compared with;
    ``last_context_key`` is the context key of the latest enqueue attempt.
    """

    events: tuple[SystemEvent, ...] = ()
    last_text: str | None = None
    last_context_key: str | None = None


@dataclass(slots=True)
class _SessionState:
    events: list[SystemEvent] = field(default_factory=list)
    last_text: str | None = None
    last_context_key: str | None = None


def _require_session_key(session_key: str | None) -> str:
    """``enqueueSystemEvent``: the key is trimmed; a missing or blank key is an error."""
    key = _js_trim(session_key) if isinstance(session_key, str) else ""
    if not key:
        raise ValueError("system events require a sessionKey")
    return key


def _normalize_context_key(context_key: str | None) -> str | None:
    """``enqueueSystemEvent``'s context key: trimmed and lower-cased; blank → ``None``."""
    if not context_key:
        return None
    trimmed = _js_trim(context_key)
    return trimmed.lower() if trimmed else None


def _default_now_ms() -> int:
    return time.time_ns() // 1_000_000


def _wake(waiter: asyncio.Future[None]) -> None:
    # Runs on the waiter's loop; the waiter may have timed out (cancelled) meanwhile.
    if not waiter.done():
        waiter.set_result(None)


class SystemEventQueue:
    """In-memory system-event queues keyed by session key (system-events.ts).

    * :meth:`enqueue` trims the text and ignores blank text (returns ``False``); it records the
      normalized context key as :meth:`last_context_key` even when the text is then ignored as
      a consecutive duplicate of the previous accepted text ; beyond
      ``max_events`` entries the oldest is dropped.
    * :meth:`drain` returns the events and forgets the session's state, including the
      duplicate memory, so the same text may be enqueued again afterwards.
    * :meth:`snapshot` / :meth:`restore` let a caller consume events for a run and put them
      back if the run does not happen.

    Every method raises ``ValueError("system events require a sessionKey")`` for a blank key,
    as upstream does. All state is guarded by one :class:`threading.Lock`; ``now_ms`` (epoch
    milliseconds) is injectable for tests.
    """

    def __init__(
        self,
        *,
        max_events: int = DEFAULT_MAX_SYSTEM_EVENTS,
        now_ms: Callable[[], int] | None = None,
    ) -> None:
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        self._max_events = max_events
        self._now_ms = now_ms or _default_now_ms
        self._lock = threading.Lock()
        self._sessions: dict[str, _SessionState] = {}
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}

    @property
    def max_events(self) -> int:
        """The per-session cap (``MAX_EVENTS``, 20 by default)."""
        return self._max_events

    def enqueue(self, text: str, *, session_key: str, context_key: str | None = None) -> bool:
        """``enqueueSystemEvent``: queues ``text`` for ``session_key``; returns whether it was
        queued.

        Blank text and a text equal to the previous queued text (since the last drain) are
        ignored. Wakes every :meth:`wait_for_events` waiter of the session.
        """
        key = _require_session_key(session_key)
        cleaned = _js_trim(text)
        if not cleaned:
            return False
        with self._lock:
            state = self._sessions.get(key)
            if state is None:
                state = self._sessions[key] = _SessionState()
            normalized_context_key = _normalize_context_key(context_key)
            state.last_context_key = normalized_context_key
            if state.last_text == cleaned:
                return False
            state.last_text = cleaned
            state.events.append(SystemEvent(cleaned, self._now_ms(), normalized_context_key))
            if len(state.events) > self._max_events:
                del state.events[0]
            waiters = self._waiters.pop(key, [])
        self._notify(waiters)
        return True

    def drain(self, session_key: str) -> list[SystemEvent]:
        """``drainSystemEventEntries``: returns all queued events (oldest first) and resets the
        session's state.

        An empty queue returns ``[]`` and leaves the state as it is, like upstream.
        """
        key = _require_session_key(session_key)
        with self._lock:
            state = self._sessions.get(key)
            if state is None or not state.events:
                return []
            del self._sessions[key]
            return state.events

    def peek(self, session_key: str) -> list[SystemEvent]:
        """``peekSystemEvents``: the queued events without removing them."""
        key = _require_session_key(session_key)
        with self._lock:
            state = self._sessions.get(key)
            return list(state.events) if state is not None else []

    def has(self, session_key: str) -> bool:
        """``hasSystemEvents``: whether the session has queued events."""
        key = _require_session_key(session_key)
        with self._lock:
            state = self._sessions.get(key)
            return state is not None and bool(state.events)

    def last_context_key(self, session_key: str) -> str | None:
        """``enqueueSystemEvent``: the normalized context key of the session's latest non-blank
        enqueue."""
        key = _require_session_key(session_key)
        with self._lock:
            state = self._sessions.get(key)
            return state.last_context_key if state is not None else None

    def is_context_changed(self, session_key: str, context_key: str | None) -> bool:
        """Whether ``context_key`` (normalized as ``enqueueSystemEvent`` does) differs from
        :meth:`last_context_key` (upstream ``isSystemEventContextChanged``)."""
        return _normalize_context_key(context_key) != self.last_context_key(session_key)

    def snapshot(self, session_key: str) -> SystemEventSnapshot:
        """Upstream's snapshot helper: a copy of the session's queue state; the queue is not
        changed."""
        key = _require_session_key(session_key)
        with self._lock:
            state = self._sessions.get(key)
            if state is None:
                return SystemEventSnapshot()
            return SystemEventSnapshot(tuple(state.events), state.last_text, state.last_context_key)

    def restore(self, session_key: str, snapshot: SystemEventSnapshot) -> None:
        """Upstream's restore helper: puts consumed events back (e.g. after :meth:`drain`, when the
        run that consumed them did not happen).

        The snapshot's events go before any events queued since, and the cap keeps the newest
        ``max_events``. When nothing was queued since, the duplicate memory and context key
        are restored from the snapshot too; otherwise the newer values are kept. Wakes waiters
        when the session then has events.
        """
        key = _require_session_key(session_key)
        with self._lock:
            current = self._sessions.get(key)
            if current is None:
                state = _SessionState(
                    list(snapshot.events), snapshot.last_text, snapshot.last_context_key
                )
            else:
                state = current
                state.events[:0] = snapshot.events
            if len(state.events) > self._max_events:
                del state.events[: len(state.events) - self._max_events]
            if state.events or state.last_text is not None or state.last_context_key is not None:
                self._sessions[key] = state
            waiters = self._waiters.pop(key, []) if state.events else []
        self._notify(waiters)

    async def wait_for_events(self, session_key: str, timeout: float | None = None) -> bool:
        """Waits until the session has queued events; returns ``False`` on timeout.

        Returns at once when events are already queued. A wake-up means an event was queued
        (from any thread); another consumer may have drained it before this coroutine runs
        again, so callers should drain and handle an empty result.
        """
        key = _require_session_key(session_key)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        entry = (loop, waiter)
        with self._lock:
            state = self._sessions.get(key)
            if state is not None and state.events:
                return True
            self._waiters.setdefault(key, []).append(entry)
        try:
            await asyncio.wait_for(waiter, timeout)
        except asyncio.TimeoutError:
            return False
        finally:
            with self._lock:
                pending = self._waiters.get(key)
                if pending is not None and entry in pending:
                    pending.remove(entry)
                    if not pending:
                        del self._waiters[key]
        return True

    @staticmethod
    def _notify(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]) -> None:
        for loop, waiter in waiters:
            # A waiter whose loop has closed cannot be woken and no longer waits.
            if not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(_wake, waiter)
                except RuntimeError:
                    continue
