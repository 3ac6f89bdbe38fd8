"""System-event queue (OpenClaw 2026.3.13 `src/infra/system-events.ts`: ``enqueueSystemEvent``,
``drainSystemEventEntries``)."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawctx.prompt.system_events import (
    DEFAULT_MAX_SYSTEM_EVENTS,
    SystemEvent,
    SystemEventQueue,
    SystemEventSnapshot,
)

KEY = "agent:main:main"


def _clock(start: int = 1_000) -> tuple[list[int], SystemEventQueue]:
    now = [start]
    return now, SystemEventQueue(now_ms=lambda: now[0])


def _texts(events: list[SystemEvent]) -> list[str]:
    return [event.text for event in events]


# --- derived cases: dedupe, cap of 20, blank text -------------------------------------------


def test_8_6_3_consecutive_duplicates_are_dropped() -> None:
    queue = SystemEventQueue()
    assert queue.enqueue("a", session_key=KEY) is True
    assert queue.enqueue("a", session_key=KEY) is False
    assert queue.enqueue("b", session_key=KEY) is True
    assert _texts(queue.drain(KEY)) == ["a", "b"]


def test_8_6_3_cap_keeps_the_last_20() -> None:
    queue = SystemEventQueue()
    for number in range(25):
        queue.enqueue(f"event {number}", session_key=KEY)
    assert DEFAULT_MAX_SYSTEM_EVENTS == 20
    assert _texts(queue.drain(KEY)) == [f"event {number}" for number in range(5, 25)]


def test_8_6_3_blank_text_is_ignored() -> None:
    queue = SystemEventQueue()
    assert queue.enqueue("  ", session_key=KEY) is False
    assert queue.enqueue("", session_key=KEY) is False
    assert queue.has(KEY) is False
    assert queue.drain(KEY) == []


# --- system-events.ts: enqueueSystemEvent / drain / peek / has ----------------------------


def test_text_is_trimmed_and_timestamped() -> None:
    now, queue = _clock(1_746_109_800_000)
    queue.enqueue("  Cron job done \n", session_key=KEY)
    now[0] += 5
    queue.enqueue("next", session_key=KEY, context_key=" Cron:Daily ")
    assert queue.drain(KEY) == [
        SystemEvent("Cron job done", 1_746_109_800_000, None),
        SystemEvent("next", 1_746_109_800_005, "cron:daily"),
    ]


def test_duplicate_compared_after_trimming() -> None:
    queue = SystemEventQueue()
    queue.enqueue("a", session_key=KEY)
    assert queue.enqueue(" a ", session_key=KEY) is False


def test_non_consecutive_duplicates_are_kept() -> None:
    queue = SystemEventQueue()
    for text in ("a", "b", "a"):
        queue.enqueue(text, session_key=KEY)
    assert _texts(queue.drain(KEY)) == ["a", "b", "a"]


def test_drain_resets_duplicate_memory() -> None:
    queue = SystemEventQueue()
    queue.enqueue("a", session_key=KEY)
    assert _texts(queue.drain(KEY)) == ["a"]
    assert queue.enqueue("a", session_key=KEY) is True
    assert _texts(queue.drain(KEY)) == ["a"]
    assert queue.drain(KEY) == []


@pytest.mark.parametrize("key", ["", "   ", None])
def test_blank_session_key_is_an_error(key: str | None) -> None:
    queue = SystemEventQueue()
    with pytest.raises(ValueError, match=r"^system events require a sessionKey$"):
        queue.enqueue("a", session_key=key)  # type: ignore[arg-type]
    for method in (queue.drain, queue.peek, queue.has, queue.last_context_key, queue.snapshot):
        with pytest.raises(ValueError, match=r"^system events require a sessionKey$"):
            method(key)  # type: ignore[arg-type]


def test_session_key_is_trimmed_and_sessions_are_separate() -> None:
    queue = SystemEventQueue()
    queue.enqueue("a", session_key=f"  {KEY} ")
    queue.enqueue("b", session_key="other")
    assert _texts(queue.drain(KEY)) == ["a"]
    assert _texts(queue.drain("other")) == ["b"]


def test_peek_and_has_do_not_consume() -> None:
    queue = SystemEventQueue()
    assert queue.peek(KEY) == []
    queue.enqueue("a", session_key=KEY)
    assert _texts(queue.peek(KEY)) == ["a"]
    assert queue.has(KEY) is True
    assert _texts(queue.drain(KEY)) == ["a"]
    assert queue.has(KEY) is False


def test_context_key_recorded_even_when_deduped() -> None:
    queue = SystemEventQueue()
    assert queue.last_context_key(KEY) is None
    queue.enqueue("a", session_key=KEY, context_key="First")
    assert queue.last_context_key(KEY) == "first"
    assert queue.enqueue("a", session_key=KEY, context_key=" SECOND ") is False
    assert queue.last_context_key(KEY) == "second"
    assert queue.is_context_changed(KEY, "second") is False
    assert queue.is_context_changed(KEY, "third") is True
    queue.enqueue("b", session_key=KEY, context_key="  ")
    assert queue.last_context_key(KEY) is None
    queue.drain(KEY)
    assert queue.last_context_key(KEY) is None


def test_custom_cap() -> None:
    queue = SystemEventQueue(max_events=2)
    for text in ("a", "b", "c"):
        queue.enqueue(text, session_key=KEY)
    assert _texts(queue.drain(KEY)) == ["b", "c"]
    with pytest.raises(ValueError):
        SystemEventQueue(max_events=0)


def test_snapshot_and_restore_after_drain() -> None:
    queue = SystemEventQueue()
    queue.enqueue("a", session_key=KEY, context_key="ctx")
    queue.enqueue("b", session_key=KEY)
    snapshot = queue.snapshot(KEY)
    assert queue.has(KEY) is True  # snapshot does not consume
    assert _texts(list(snapshot.events)) == ["a", "b"]
    queue.drain(KEY)
    queue.restore(KEY, snapshot)
    assert _texts(queue.peek(KEY)) == ["a", "b"]
    # The duplicate memory came back with the events.
    assert queue.enqueue("b", session_key=KEY) is False
    assert queue.snapshot("empty") == SystemEventSnapshot()


def test_restore_puts_consumed_events_before_newer_ones_and_caps() -> None:
    queue = SystemEventQueue(max_events=3)
    queue.enqueue("a", session_key=KEY)
    queue.enqueue("b", session_key=KEY)
    snapshot = queue.snapshot(KEY)
    queue.drain(KEY)
    queue.enqueue("c", session_key=KEY)
    queue.enqueue("d", session_key=KEY)
    queue.restore(KEY, snapshot)
    assert _texts(queue.peek(KEY)) == ["b", "c", "d"]
    assert queue.enqueue("d", session_key=KEY) is False  # newer duplicate memory kept


def test_restore_of_empty_snapshot_leaves_nothing() -> None:
    queue = SystemEventQueue()
    queue.restore(KEY, SystemEventSnapshot())
    assert queue.has(KEY) is False
    assert queue.drain(KEY) == []


def test_concurrent_enqueue_from_threads() -> None:
    queue = SystemEventQueue(max_events=1000)
    barrier = threading.Barrier(8)

    def produce(worker: int) -> None:
        barrier.wait()
        for number in range(50):
            queue.enqueue(f"w{worker}-{number}", session_key=KEY)

    threads = [threading.Thread(target=produce, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    texts = _texts(queue.drain(KEY))
    assert sorted(texts) == sorted(f"w{w}-{n}" for w in range(8) for n in range(50))
    for worker in range(8):  # per-producer order is kept
        mine = [text for text in texts if text.startswith(f"w{worker}-")]
        assert mine == [f"w{worker}-{n}" for n in range(50)]


@given(st.lists(st.sampled_from(["a", "b", "c", " a", "", "  "]), max_size=60))
def test_property_matches_reference_model(texts: list[str]) -> None:
    queue = SystemEventQueue(max_events=5)
    model: list[str] = []
    last: str | None = None
    for text in texts:
        cleaned = text.strip()
        accepted = queue.enqueue(text, session_key=KEY)
        expected = bool(cleaned) and cleaned != last
        assert accepted is expected
        if expected:
            last = cleaned
            model = [*model, cleaned][-5:]
    drained = _texts(queue.drain(KEY))
    assert drained == model
    assert all(x != y for x, y in itertools.pairwise(drained))


# --- asyncio waiting --------------------------------------------------------------------------


def test_wait_returns_at_once_when_events_are_queued() -> None:
    queue = SystemEventQueue()
    queue.enqueue("a", session_key=KEY)
    assert asyncio.run(queue.wait_for_events(KEY, timeout=0)) is True


def test_wait_times_out_and_cleans_up() -> None:
    queue = SystemEventQueue()

    async def scenario() -> bool:
        return await queue.wait_for_events(KEY, timeout=0.01)

    assert asyncio.run(scenario()) is False
    assert queue._waiters == {}


def test_wait_wakes_on_enqueue_from_another_thread() -> None:
    queue = SystemEventQueue()

    def produce() -> None:
        time.sleep(0.05)
        queue.enqueue("from thread", session_key=KEY)

    async def scenario() -> tuple[bool, float]:
        thread = threading.Thread(target=produce)
        started = time.monotonic()
        thread.start()
        woke = await queue.wait_for_events(KEY, timeout=5)
        elapsed = time.monotonic() - started
        await asyncio.to_thread(thread.join)
        return woke, elapsed

    woke, elapsed = asyncio.run(scenario())
    assert woke is True
    assert elapsed < 2
    assert _texts(queue.drain(KEY)) == ["from thread"]


def test_wait_is_not_woken_by_other_sessions_or_blank_text() -> None:
    queue = SystemEventQueue()

    async def scenario() -> bool:
        waiter = asyncio.ensure_future(queue.wait_for_events(KEY, timeout=0.1))
        await asyncio.sleep(0)
        queue.enqueue("elsewhere", session_key="other")
        queue.enqueue("   ", session_key=KEY)
        return await waiter

    assert asyncio.run(scenario()) is False


def test_wait_woken_by_restore() -> None:
    queue = SystemEventQueue()
    queue.enqueue("a", session_key=KEY)
    snapshot = queue.snapshot(KEY)
    queue.drain(KEY)

    async def scenario() -> bool:
        waiter = asyncio.ensure_future(queue.wait_for_events(KEY, timeout=5))
        await asyncio.sleep(0)
        queue.restore(KEY, snapshot)
        return await waiter

    assert asyncio.run(scenario()) is True


def test_several_waiters_all_wake() -> None:
    queue = SystemEventQueue()

    async def scenario() -> list[bool]:
        waiters = [asyncio.ensure_future(queue.wait_for_events(KEY, timeout=5)) for _ in range(3)]
        await asyncio.sleep(0)
        await asyncio.to_thread(queue.enqueue, "x", session_key=KEY)
        return list(await asyncio.gather(*waiters))

    assert asyncio.run(scenario()) == [True, True, True]
    assert queue._waiters == {}
