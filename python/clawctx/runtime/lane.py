"""A per-session asyncio lane that runs agent turns one at a time (OpenClaw
2026.3.13 `src/auto-reply/reply/agent-runner.ts`, ``runReplyAgent``, and
`src/auto-reply/reply/queue/drain.ts`, ``scheduleFollowupDrain``).

A runtime creates one :class:`SessionLane` per session and hands it every inbound message with
:meth:`SessionLane.submit`. An idle lane starts a turn at once. A message that arrives while
the lane is busy is routed by the session's queue mode: ``interrupt`` cancels the running turn
and drops the queue, ``steer``/``steer-backlog`` inject it into the running turn through the
``steer`` callback, and everything else (including failed steers) waits in a
:class:`~clawctx.runtime.queues.FollowupQueue`. When a turn ends the lane drains the queue after
the debounce window: ``collect`` mode runs one turn over the whole batch
(:func:`~clawctx.runtime.queues.build_collect_prompt`), the other modes run queued messages one
by one.

Example::

    async def run_turn(request: TurnRequest) -> None:
        await agent.prompt(request.prompt)          # the runtime's own turn

    lane = SessionLane(run_turn, settings=QueueSettings("collect"), steer=agent.steer)
    await lane.submit(QueuedMessage("hello", message_id="m1", channel="telegram", to="42"))
    ...
    await lane.aclose(drain=True)
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from clawctx.runtime.queues import (
    COLLECT_TITLE_MESSAGES,
    FollowupQueue,
    InboundDedupe,
    MessageRoute,
    QueueDedupeMode,
    QueuedMessage,
    QueueSettings,
    build_collect_prompt,
)

__all__ = [
    "OverflowSummaryDelivery",
    "SessionLane",
    "SubmitResult",
    "TurnOutcome",
    "TurnRequest",
]

_log: Final = logging.getLogger("clawctx.lane")

#: What :meth:`SessionLane.submit` did with a message.
SubmitResult = Literal["started", "steered", "queued", "interrupted", "duplicate", "rejected"]
#: How a pending overflow summary reaches the model outside collect mode (drain.ts,
#: scheduleFollowupDrain).
OverflowSummaryDelivery = Literal["replace-next", "separate-turn"]
#: Whatever the runtime's ``run_turn`` returns; the lane does not look at it.
TurnOutcome = object


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """One turn for the runtime to run (``scheduleFollowupDrain``, ``buildCollectPrompt``).

    ``prompt`` is the user message; ``items`` are the queued messages it answers (one for a
    plain turn, the batch for a collect turn, none for a turn that only carries an overflow
    summary); ``batched`` marks a collect turn. ``route`` is where the reply goes: the item's
    own, or for a batch the **last** item's route with missing fields taken from the first item
    that has them (as ``scheduleFollowupDrain``).
    """

    prompt: str
    items: tuple[QueuedMessage, ...]
    batched: bool = False
    route: MessageRoute = field(default_factory=MessageRoute)

    @property
    def message(self) -> QueuedMessage | None:
        """The item whose run parameters the turn uses: the last one (as
        ``scheduleFollowupDrain``)."""
        return self.items[-1] if self.items else None


def _batch_route(items: Sequence[QueuedMessage]) -> MessageRoute:
    def pick(values: list[object]) -> object:
        last = values[-1]
        if last is not None and last != "":
            return last
        return next((v for v in values if v is not None and v != ""), None)

    channel = pick([i.channel for i in items])
    to = pick([i.to for i in items])
    account = pick([i.account_id for i in items])
    thread = pick([i.thread_id for i in items])
    return MessageRoute(
        channel if isinstance(channel, str) else None,
        to if isinstance(to, str) else None,
        account if isinstance(account, str) else None,
        thread if isinstance(thread, (str, int)) else None,
    )


class SessionLane:
    """Runs a session's turns serially and routes messages that arrive mid-turn (``runReplyAgent``,
    ``scheduleFollowupDrain``).

    ``run_turn(request)`` runs one agent turn; it is run as its own task so an interrupt can
    cancel it. ``steer(prompt)`` (sync or async) injects text into the running turn and returns
    whether it did. ``dedupe`` drops redelivered messages before anything else (inbound-dedupe.ts;
    its key uses ``session_key``). ``clock`` (seconds) and ``sleep`` drive the debounce wait and can
    be replaced in tests. ``queue_dedupe``, ``collect_title`` and ``overflow_noun`` configure the
    follow-up queue (``COLLECT_TITLE_ANNOUNCES`` and ``"announce"`` make an announce queue).

    Outside collect mode a pending overflow summary replaces the prompt of the next queued item
    (``overflow_summary_delivery="replace-next"``, the upstream quirk of ``scheduleFollowupDrain``);
    ``"separate-turn"`` sends it as a turn of its own, as OpenClaw's user follow-up drain does.

    A failing turn is logged and the lane goes on with the next one.
    """

    def __init__(
        self,
        run_turn: Callable[[TurnRequest], Awaitable[TurnOutcome]],
        *,
        settings: QueueSettings,
        steer: Callable[[str], Awaitable[bool] | bool] | None = None,
        dedupe: InboundDedupe | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        session_key: str | None = None,
        queue_dedupe: QueueDedupeMode = "message-id",
        collect_title: str = COLLECT_TITLE_MESSAGES,
        overflow_noun: str = "message",
        overflow_summary_delivery: OverflowSummaryDelivery = "replace-next",
    ) -> None:
        self._run_turn = run_turn
        self._settings = settings
        self._steer = steer
        self._dedupe = dedupe
        self._clock = clock
        self._sleep = sleep
        self.session_key = session_key
        self._collect_title = collect_title
        self._summary_delivery: OverflowSummaryDelivery = overflow_summary_delivery
        self._queue = FollowupQueue(
            settings,
            dedupe=queue_dedupe,
            now_ms=lambda: self._clock() * 1000,
            queue_key=session_key or "",
            noun=overflow_noun,
        )
        # Turns that start before the queue is drained: the first message of an idle lane and
        # the message that interrupted a turn.
        self._direct: deque[TurnRequest] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._current_turn: asyncio.Future[TurnOutcome] | None = None
        self._sleeper: asyncio.Future[object] | None = None
        self._closed = False

    @property
    def settings(self) -> QueueSettings:
        """The queue settings in force; assigning takes effect for the next message or drain
        step (e.g. after a ``/queue`` directive)."""
        return self._settings

    @settings.setter
    def settings(self, settings: QueueSettings) -> None:
        self._settings = settings
        self._queue.settings = settings

    @property
    def queue(self) -> FollowupQueue:
        """The follow-up queue (for inspection)."""
        return self._queue

    @property
    def is_busy(self) -> bool:
        """Whether a turn is running or queued messages are waiting for theirs."""
        return self._worker is not None

    @property
    def pending(self) -> int:
        """How many messages wait in the follow-up queue."""
        return len(self._queue)

    async def submit(self, message: QueuedMessage) -> SubmitResult:
        """Hands the lane one inbound message (``runReplyAgent``: steer or follow up); returns at
        once.

        ``duplicate``: ``dedupe`` saw it already, or the same message is queued
        (``enqueueFollowupRun``). ``started``: the lane was idle and a turn for it began. When busy,
        by mode: ``interrupt`` → ``interrupted`` (the running turn is cancelled, queued messages
        dropped, this one runs next); ``steer``/``steer-backlog`` with a running turn →
        ``steered`` when ``steer`` accepted it (``steer-backlog`` also queues it for a follow-up
        turn); otherwise it is queued → ``queued``, or ``rejected`` when the queue is full under
        ``drop="new"``. A closed lane rejects everything.
        """
        if self._closed:
            return "rejected"
        if self._dedupe is not None:
            key = InboundDedupe.build_key(
                originating_channel=message.channel,
                message_sid=message.message_id,
                originating_to=message.to,
                session_key=self.session_key,
                account_id=message.account_id,
                thread_id=message.thread_id,
            )
            if not self._dedupe.check_and_remember(key):
                return "duplicate"
        if not self.is_busy:
            self._direct.append(TurnRequest(message.prompt, (message,), False, message.route))
            self._worker = asyncio.ensure_future(self._drive())
            return "started"
        mode = self._settings.mode
        if mode == "interrupt":
            self._interrupt(message)
            return "interrupted"
        steered = mode in ("steer", "steer-backlog") and await self._try_steer(message.prompt)
        if self._closed:
            return "rejected"
        if steered:
            if mode == "steer-backlog":
                self._queue.offer(message)
                self._kick()
            return "steered"
        outcome = self._queue.offer(message)
        self._kick()
        if outcome == "queued":
            return "queued"
        return "duplicate" if outcome == "duplicate" else "rejected"

    def _kick(self) -> None:
        # An async steer callback may return after the lane went idle; the queued message
        # must still get a drain.
        if self._worker is None and (self._queue or self._queue.has_overflow):
            self._worker = asyncio.ensure_future(self._drive())

    async def _try_steer(self, prompt: str) -> bool:
        # Only a turn that is actually running can take injected text.
        if self._steer is None or self._current_turn is None or self._current_turn.done():
            return False
        try:
            result = self._steer(prompt)
            if inspect.isawaitable(result):
                result = await result
        except Exception:
            _log.exception("steer callback failed; queueing the message instead")
            return False
        return bool(result)

    def _interrupt(self, message: QueuedMessage) -> None:
        self._queue.clear()
        self._direct.clear()
        self._direct.append(TurnRequest(message.prompt, (message,), False, message.route))
        if self._current_turn is not None:
            self._current_turn.cancel()
        if self._sleeper is not None:
            self._sleeper.cancel()

    async def wait_idle(self) -> None:
        """Waits until no turn runs and nothing is queued."""
        while self._worker is not None:
            await asyncio.wait((self._worker,))

    async def aclose(self, *, drain: bool = False) -> None:
        """Stops the lane: later submits are rejected, queued messages are dropped and the
        running turn is cancelled. ``drain=True`` first lets queued turns finish."""
        if drain:
            await self.wait_idle()
        self._closed = True
        self._queue.clear()
        self._direct.clear()
        worker = self._worker
        if self._current_turn is not None:
            self._current_turn.cancel()
        if self._sleeper is not None:
            self._sleeper.cancel()
        if worker is not None:
            worker.cancel()
            await asyncio.wait((worker,))

    async def _drive(self) -> None:
        force_individual = False
        try:
            while True:
                if self._direct:
                    await self._run(self._direct.popleft())
                    continue
                if not self._queue and not self._queue.has_overflow:
                    # Nothing awaits between this check and clearing the worker in `finally`,
                    # so a message submitted meanwhile cannot be stranded.
                    return
                await self._wait_debounce()
                if self._direct:
                    continue
                request, force_individual = self._next_queued_turn(force_individual)
                if request is not None:
                    await self._run(request)
                if not self._queue:
                    force_individual = False
        finally:
            if self._worker is asyncio.current_task():
                self._worker = None

    async def _wait_debounce(self) -> None:
        """Waits until ``debounce_ms`` has passed since the last enqueue
        (``scheduleFollowupDrain``); an interrupt ends the wait early."""
        while True:
            debounce_ms = max(0, self._settings.debounce_ms)
            elapsed_ms = self._clock() * 1000 - self._queue.last_enqueued_at_ms
            if debounce_ms <= 0 or elapsed_ms >= debounce_ms:
                return
            sleeper = asyncio.ensure_future(self._sleep((debounce_ms - elapsed_ms) / 1000))
            self._sleeper = sleeper
            try:
                await asyncio.wait((sleeper,))
            finally:
                self._sleeper = None
                if not sleeper.done():
                    sleeper.cancel()
            if sleeper.cancelled() or self._direct:
                return
            if sleeper.exception() is not None:
                _log.error("debounce sleep failed", exc_info=sleeper.exception())
                return

    def _next_queued_turn(self, force_individual: bool) -> tuple[TurnRequest | None, bool]:
        """The next turn from the queue (``scheduleFollowupDrain``) and the updated force-individual
        flag."""
        queue = self._queue
        if self._settings.mode == "collect":
            if not force_individual and not queue.can_collect():
                # Mixed destinations: deliver one by one for the rest of this drain
                # (``hasCrossChannelItems``).
                force_individual = True
            if force_individual:
                item = queue.pop_next()
                if item is not None:
                    return TurnRequest(item.prompt, (item,), False, item.route), True
                summary = queue.take_overflow_summary()
                if summary is None:
                    return None, True
                prompt = build_collect_prompt(
                    [], title=self._collect_title, overflow_summary=summary
                )
                return self._summary_turn(prompt, batched=True), True
            batch = queue.drain_batch()
            summary = queue.take_overflow_summary()
            prompt = build_collect_prompt(
                [item.prompt for item in batch],
                title=self._collect_title,
                overflow_summary=summary,
            )
            if not batch:
                return self._summary_turn(prompt, batched=True), False
            return TurnRequest(prompt, tuple(batch), True, _batch_route(batch)), False
        summary = queue.take_overflow_summary()
        if summary is not None:
            if self._summary_delivery == "replace-next":
                item = queue.pop_next()
                if item is not None:
                    # Upstream quirk (scheduleFollowupDrain): the summary is sent in place of this
                    # item's own prompt.
                    return TurnRequest(summary, (item,), False, item.route), force_individual
            return self._summary_turn(summary, batched=False), force_individual
        item = queue.pop_next()
        if item is None:
            return None, force_individual
        return TurnRequest(item.prompt, (item,), False, item.route), force_individual

    def _summary_turn(self, prompt: str, *, batched: bool) -> TurnRequest:
        # A turn with no item of its own answers on the last queued message's route.
        last = self._queue.last_item
        return TurnRequest(prompt, (), batched, last.route if last is not None else MessageRoute())

    async def _run(self, request: TurnRequest) -> None:
        turn = asyncio.ensure_future(self._run_turn(request))
        self._current_turn = turn
        try:
            await asyncio.wait((turn,))
        finally:
            self._current_turn = None
            if not turn.done():
                # The lane itself is being cancelled (aclose): let the turn unwind too.
                turn.cancel()
                await asyncio.wait((turn,))
        if turn.cancelled():
            _log.info("turn interrupted: %.80r", request.prompt)
            return
        error = turn.exception()
        if error is not None:
            _log.error("turn failed; continuing with the next one", exc_info=error)
