"""SessionLane: serial turns, steering, follow-ups, collect, interrupt, dedupe, debounce
(OpenClaw 2026.3.13 `src/auto-reply/reply/agent-runner.ts`, ``runReplyAgent``;
`src/auto-reply/reply/queue/drain.ts`, ``scheduleFollowupDrain``; `queue/enqueue.ts`). Real asyncio via asyncio.run; no pytest plugin needed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import pytest

from clawctx.runtime.lane import SessionLane, TurnRequest
from clawctx.runtime.queues import (
    COLLECT_TITLE_ANNOUNCES,
    InboundDedupe,
    MessageRoute,
    QueuedMessage,
    QueueSettings,
)


class Agent:
    """A fake runtime: records turns; a turn blocks while its prompt is in ``hold``."""

    def __init__(self) -> None:
        self.requests: list[TurnRequest] = []
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.steered: list[str] = []
        self.hold: dict[str, asyncio.Event] = {}
        self.running = 0
        self.max_running = 0

    def block(self, prompt: str) -> asyncio.Event:
        event = asyncio.Event()
        self.hold[prompt] = event
        return event

    async def run_turn(self, request: TurnRequest) -> str:
        self.requests.append(request)
        self.started.append(request.prompt)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if request.prompt in self.hold:
                await self.hold[request.prompt].wait()
            for _ in range(3):
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            self.cancelled.append(request.prompt)
            raise
        finally:
            self.running -= 1
        self.finished.append(request.prompt)
        return "done"

    def steer(self, prompt: str) -> bool:
        self.steered.append(prompt)
        return True


async def until(predicate: Callable[[], bool]) -> None:
    for _ in range(1000):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


def run(coro: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(coro(), timeout=5))


def settings(mode: str, **kwargs: int | str) -> QueueSettings:
    return QueueSettings(mode, **{"debounce_ms": 0, **kwargs})  # type: ignore[arg-type]


def test_idle_lane_starts_turn_and_runs_serially() -> None:
    async def scenario() -> None:
        agent = Agent()
        lane = SessionLane(agent.run_turn, settings=settings("followup"))
        assert not lane.is_busy
        results = [await lane.submit(QueuedMessage(p)) for p in ("p1", "p2", "p3")]
        assert results == ["started", "queued", "queued"]
        assert lane.is_busy and lane.pending == 2
        await lane.wait_idle()
        assert agent.finished == ["p1", "p2", "p3"]
        assert agent.max_running == 1
        assert not lane.is_busy and lane.pending == 0
        assert [r.batched for r in agent.requests] == [False, False, False]
        assert agent.requests[1].items == (QueuedMessage("p2"),)

    run(scenario)


def test_steer_injects_into_running_turn() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("steer"), steer=agent.steer)
        assert await lane.submit(QueuedMessage("first")) == "started"
        await until(lambda: agent.started == ["first"])
        assert await lane.submit(QueuedMessage("also this")) == "steered"
        assert agent.steered == ["also this"]
        assert lane.pending == 0
        gate.set()
        await lane.wait_idle()
        assert agent.finished == ["first"]

    run(scenario)


def test_async_steer_callback() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        seen: list[str] = []

        async def steer(prompt: str) -> bool:
            await asyncio.sleep(0)
            seen.append(prompt)
            return True

        lane = SessionLane(agent.run_turn, settings=settings("steer"), steer=steer)
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        assert await lane.submit(QueuedMessage("x")) == "steered"
        assert seen == ["x"]
        gate.set()
        await lane.wait_idle()

    run(scenario)


def test_failed_steer_falls_back_to_followup() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("steer"), steer=lambda _p: False)
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        assert await lane.submit(QueuedMessage("later")) == "queued"
        gate.set()
        await lane.wait_idle()
        assert agent.finished == ["first", "later"]

    run(scenario)


def test_steer_needs_a_running_turn() -> None:
    async def scenario() -> None:
        agent = Agent()
        lane = SessionLane(agent.run_turn, settings=settings("steer"), steer=agent.steer)
        await lane.submit(QueuedMessage("first"))
        # The first turn has not started yet: nothing to steer into, so it queues.
        assert await lane.submit(QueuedMessage("second")) == "queued"
        assert agent.steered == []
        await lane.wait_idle()
        assert agent.finished == ["first", "second"]

    run(scenario)


def test_steer_backlog_steers_and_keeps_a_followup() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("steer-backlog"), steer=agent.steer)
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        assert await lane.submit(QueuedMessage("more")) == "steered"
        assert lane.pending == 1
        gate.set()
        await lane.wait_idle()
        assert agent.steered == ["more"]
        assert agent.finished == ["first", "more"]

    run(scenario)


def test_followup_runs_after_current_turn() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("followup"), steer=agent.steer)
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        assert await lane.submit(QueuedMessage("second")) == "queued"
        await asyncio.sleep(0)
        assert agent.started == ["first"]  # not before the running turn ends
        gate.set()
        await lane.wait_idle()
        assert agent.finished == ["first", "second"]
        assert agent.steered == []  # followup mode never steers

    run(scenario)


def test_collect_batches_queued_messages_into_one_turn() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("collect"))
        await lane.submit(QueuedMessage("first", channel="telegram", to="42"))
        await until(lambda: agent.started == ["first"])
        p2 = QueuedMessage("p2", message_id="2", channel="telegram", to="42", thread_id=9)
        p3 = QueuedMessage("p3", message_id="3")  # no route: it joins the batch
        assert await lane.submit(p2) == "queued"
        assert await lane.submit(p3) == "queued"
        gate.set()
        await lane.wait_idle()
        assert len(agent.requests) == 2
        batch = agent.requests[1]
        assert batch.prompt == (
            "[Queued messages while agent was busy]\n\n---\nQueued #1\np2\n\n---\nQueued #2\np3"
        )
        assert batch.batched and batch.items == (p2, p3)
        assert batch.message == p3
        # The last item's route, with fields it lacks taken from the first item that has them.
        assert batch.route == MessageRoute("telegram", "42", None, 9)

    run(scenario)


def test_collect_falls_back_to_individual_turns_across_channels() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("collect"))
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        await lane.submit(QueuedMessage("tg", channel="telegram", to="1"))
        await lane.submit(QueuedMessage("sl", channel="slack", to="C"))
        gate.set()
        await lane.wait_idle()
        assert agent.finished == ["first", "tg", "sl"]
        assert [r.batched for r in agent.requests] == [False, False, False]
        assert agent.requests[2].route == MessageRoute("slack", "C")

    run(scenario)


def test_collect_batch_includes_overflow_summary() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("collect", cap=2))
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        for prompt in ("x", "p1", "p2"):
            assert await lane.submit(QueuedMessage(prompt)) == "queued"
        gate.set()
        await lane.wait_idle()
        assert agent.requests[1].prompt == (
            "[Queued messages while agent was busy]\n\n"
            "[Queue overflow] Dropped 1 message due to cap.\nSummary:\n- x\n\n"
            "---\nQueued #1\np1\n\n---\nQueued #2\np2"
        )

    run(scenario)


def test_announce_lane_titles() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(
            agent.run_turn,
            settings=settings("collect", cap=1),
            collect_title=COLLECT_TITLE_ANNOUNCES,
            overflow_noun="announce",
        )
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        await lane.submit(QueuedMessage("a1", summary_line="research"))
        await lane.submit(QueuedMessage("a2"))
        gate.set()
        await lane.wait_idle()
        assert agent.requests[1].prompt == (
            "[Queued announce messages while agent was busy]\n\n"
            "[Queue overflow] Dropped 1 announce due to cap.\nSummary:\n- research\n\n"
            "---\nQueued #1\na2"
        )

    run(scenario)


def test_interrupt_cancels_running_turn_and_clears_queue() -> None:
    async def scenario() -> None:
        agent = Agent()
        agent.block("first")  # never released: only the interrupt ends it
        lane = SessionLane(agent.run_turn, settings=settings("followup"))
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        assert await lane.submit(QueuedMessage("stale")) == "queued"
        lane.settings = settings("interrupt")
        assert await lane.submit(QueuedMessage("urgent")) == "interrupted"
        assert lane.pending == 0
        await lane.wait_idle()
        assert agent.cancelled == ["first"]
        assert agent.started == ["first", "urgent"]
        assert agent.finished == ["urgent"]

    run(scenario)


def test_interrupt_when_idle_just_starts() -> None:
    async def scenario() -> None:
        agent = Agent()
        lane = SessionLane(agent.run_turn, settings=settings("interrupt"))
        assert await lane.submit(QueuedMessage("a")) == "started"
        await lane.wait_idle()
        assert agent.finished == ["a"]

    run(scenario)


def test_inbound_dedupe_rejects_redelivery() -> None:
    async def scenario() -> None:
        agent = Agent()
        lane = SessionLane(
            agent.run_turn,
            settings=settings("followup"),
            dedupe=InboundDedupe(),
            session_key="agent:main:main",
        )
        message = QueuedMessage("hi", message_id="m1", channel="telegram", to="42")
        assert await lane.submit(message) == "started"
        await lane.wait_idle()
        assert await lane.submit(message) == "duplicate"
        assert await lane.submit(QueuedMessage("no id", channel="telegram", to="42")) == "started"
        await lane.wait_idle()
        assert agent.finished == ["hi", "no id"]

    run(scenario)


def test_queue_dedupe_rejects_same_message_id() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("followup"))
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        message = QueuedMessage("x", message_id="7", channel="c", to="t")
        assert await lane.submit(message) == "queued"
        assert await lane.submit(message) == "duplicate"
        gate.set()
        await lane.wait_idle()
        assert agent.finished == ["first", "x"]

    run(scenario)


def test_full_queue_with_drop_new_rejects() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("followup", cap=1, drop="new"))
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        assert await lane.submit(QueuedMessage("kept")) == "queued"
        assert await lane.submit(QueuedMessage("lost")) == "rejected"
        gate.set()
        await lane.wait_idle()
        assert agent.finished == ["first", "kept"]

    run(scenario)


def test_overflow_summary_replaces_next_prompt_outside_collect() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("followup", cap=1))
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        await lane.submit(QueuedMessage("a"))
        b = QueuedMessage("b", channel="telegram", to="42")
        await lane.submit(b)
        gate.set()
        await lane.wait_idle()
        summary = "[Queue overflow] Dropped 1 message due to cap.\nSummary:\n- a"
        # Upstream quirk (queue/drain.ts, scheduleFollowupDrain): b's own prompt is replaced by the
        # overflow summary.
        assert agent.started == ["first", summary]
        assert agent.requests[1].items == (b,)
        assert agent.requests[1].route == b.route

    run(scenario)


def test_overflow_summary_as_separate_turn() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(
            agent.run_turn,
            settings=settings("followup", cap=1),
            overflow_summary_delivery="separate-turn",
        )
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        await lane.submit(QueuedMessage("a"))
        await lane.submit(QueuedMessage("b", channel="slack", to="C"))
        gate.set()
        await lane.wait_idle()
        summary = "[Queue overflow] Dropped 1 message due to cap.\nSummary:\n- a"
        assert agent.started == ["first", summary, "b"]
        assert agent.requests[1].items == ()
        assert agent.requests[1].route == MessageRoute("slack", "C")

    run(scenario)


class ManualTime:
    """An injected clock (seconds) with a sleep that advances it instead of waiting."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds
        await asyncio.sleep(0)


def test_debounce_waits_since_last_enqueue() -> None:
    async def scenario() -> None:
        agent = Agent()
        time_ = ManualTime()
        gate = agent.block("first")
        start_times: dict[str, float] = {}

        async def run_turn(request: TurnRequest) -> str:
            start_times[request.prompt] = time_.now
            return await agent.run_turn(request)

        lane = SessionLane(
            run_turn,
            settings=settings("followup", debounce_ms=1000),
            clock=time_.clock,
            sleep=time_.sleep,
        )
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        await lane.submit(QueuedMessage("b"))
        time_.now += 0.3
        await lane.submit(QueuedMessage("c"))  # the window restarts at 100.3
        gate.set()
        await lane.wait_idle()
        assert agent.finished == ["first", "b", "c"]
        assert time_.sleeps == [1.0]
        assert start_times["first"] == 100.0
        assert start_times["b"] == pytest.approx(101.3)
        assert start_times["c"] == pytest.approx(101.3)  # already quiet long enough

    run(scenario)


def test_debounce_zero_never_sleeps() -> None:
    async def scenario() -> None:
        agent = Agent()
        time_ = ManualTime()
        gate = agent.block("first")
        lane = SessionLane(
            agent.run_turn, settings=settings("collect"), clock=time_.clock, sleep=time_.sleep
        )
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        await lane.submit(QueuedMessage("x"))
        gate.set()
        await lane.wait_idle()
        assert time_.sleeps == []

    run(scenario)


def test_interrupt_ends_debounce_wait() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("followup", debounce_ms=60_000))
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        await lane.submit(QueuedMessage("waiting"))
        gate.set()
        await until(lambda: agent.finished == ["first"])
        await asyncio.sleep(0)  # the lane now sleeps out a 60 s debounce
        lane.settings = settings("interrupt", debounce_ms=60_000)
        assert await lane.submit(QueuedMessage("now")) == "interrupted"
        await lane.wait_idle()
        assert agent.finished == ["first", "now"]

    run(scenario)


def test_failing_turn_is_isolated(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        agent = Agent()

        async def run_turn(request: TurnRequest) -> str:
            if request.prompt == "bad":
                raise RuntimeError("model exploded")
            return await agent.run_turn(request)

        lane = SessionLane(run_turn, settings=settings("followup"))
        await lane.submit(QueuedMessage("bad"))
        await lane.submit(QueuedMessage("good"))
        await lane.wait_idle()
        assert agent.finished == ["good"]

    with caplog.at_level(logging.ERROR, logger="clawctx.lane"):
        run(scenario)
    assert any("turn failed" in record.message for record in caplog.records)
    assert any("model exploded" in str(record.exc_info) for record in caplog.records)


def test_failing_steer_callback_queues(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")

        def steer(_prompt: str) -> bool:
            raise ValueError("no session")

        lane = SessionLane(agent.run_turn, settings=settings("steer"), steer=steer)
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        assert await lane.submit(QueuedMessage("next")) == "queued"
        gate.set()
        await lane.wait_idle()
        assert agent.finished == ["first", "next"]

    with caplog.at_level(logging.ERROR, logger="clawctx.lane"):
        run(scenario)


def test_aclose_cancels_and_rejects() -> None:
    async def scenario() -> None:
        agent = Agent()
        agent.block("first")
        lane = SessionLane(agent.run_turn, settings=settings("followup"))
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        await lane.submit(QueuedMessage("queued"))
        await lane.aclose()
        assert agent.cancelled == ["first"]
        assert not lane.is_busy and lane.pending == 0
        assert await lane.submit(QueuedMessage("late")) == "rejected"
        assert agent.started == ["first"]

    run(scenario)


def test_aclose_drain_finishes_queued_turns() -> None:
    async def scenario() -> None:
        agent = Agent()
        lane = SessionLane(agent.run_turn, settings=settings("collect"))
        await lane.submit(QueuedMessage("a"))
        await lane.submit(QueuedMessage("b"))
        await lane.aclose(drain=True)
        assert agent.finished == [
            "a",
            "[Queued messages while agent was busy]\n\n---\nQueued #1\nb",
        ]
        assert await lane.submit(QueuedMessage("c")) == "rejected"

    run(scenario)


def test_lane_restarts_after_idle() -> None:
    async def scenario() -> None:
        agent = Agent()
        lane = SessionLane(agent.run_turn, settings=settings("collect"))
        assert await lane.submit(QueuedMessage("a")) == "started"
        await lane.wait_idle()
        assert await lane.submit(QueuedMessage("b")) == "started"
        await lane.wait_idle()
        assert agent.finished == ["a", "b"]

    run(scenario)


def test_slow_async_steer_refusal_after_turn_end_still_runs_message() -> None:
    async def scenario() -> None:
        agent = Agent()
        gate = agent.block("first")
        release_steer = asyncio.Event()

        async def steer(_prompt: str) -> bool:
            await release_steer.wait()
            return False

        lane = SessionLane(agent.run_turn, settings=settings("steer"), steer=steer)
        await lane.submit(QueuedMessage("first"))
        await until(lambda: agent.started == ["first"])
        pending = asyncio.ensure_future(lane.submit(QueuedMessage("late")))
        await asyncio.sleep(0)
        gate.set()
        await lane.wait_idle()  # the lane goes idle while the steer call is still out
        release_steer.set()
        assert await pending == "queued"
        await lane.wait_idle()
        assert agent.finished == ["first", "late"]

    run(scenario)
