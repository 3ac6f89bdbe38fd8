"""Heartbeat hygiene (OpenClaw 2026.3.13 `src/auto-reply/heartbeat.ts`, ``stripHeartbeatToken``;
`src/infra/heartbeat-runner.ts`, ``pruneHeartbeatTranscript``; the context filter is later
OpenClaw `src/auto-reply/heartbeat-filter.ts`, ``filterHeartbeatPairs``, not in 2026.3.13).

A heartbeat is a periodic agent turn: the runtime sends the heartbeat prompt as a user message,
and a model with nothing to report replies ``HEARTBEAT_OK``. Such exchanges carry no
information, so OpenClaw keeps them out of the context (:func:`filter_heartbeat_pairs`) and out
of the session file (:class:`HeartbeatTranscriptGuard`).

Upstream truncates the file back to the size it had before the run. The guard does that only
when the heartbeat exchange is all that was written meanwhile; lines other writers appended are
kept byte for byte (the exchange's lines are then cut out by an atomic rewrite), and when
removing the exchange could damage the file the guard leaves it alone and says why.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any, Final

from clawctx import _core
from clawctx._core import (
    HeartbeatMark,
    HeartbeatPruneReport,
    StripResult,
    filter_heartbeat_pairs,
    mark_heartbeat_transcript,
    prune_heartbeat_transcript,
    strip_heartbeat_token,
)
from clawctx.history.session import Session

__all__ = [
    "DEFAULT_HEARTBEAT_ACK_MAX_CHARS",
    "DEFAULT_HEARTBEAT_PROMPT",
    "HEARTBEAT_TASK_PROMPT_ACK",
    "HEARTBEAT_TASK_PROMPT_PREFIX",
    "HEARTBEAT_TOKEN",
    "HEARTBEAT_TRANSCRIPT_PROMPT",
    "HeartbeatMark",
    "HeartbeatPruneReport",
    "HeartbeatTranscriptGuard",
    "StripResult",
    "filter_heartbeat_pairs",
    "mark_heartbeat_transcript",
    "prune_heartbeat_transcript",
    "strip_heartbeat_token",
]

#: The acknowledgement token (src/auto-reply/tokens.ts, HEARTBEAT_TOKEN).
HEARTBEAT_TOKEN: Final = "HEARTBEAT_OK"
#: How much text (UTF-16 units) may accompany the token in a heartbeat acknowledgement.
DEFAULT_HEARTBEAT_ACK_MAX_CHARS: Final = 300
#: The default heartbeat prompt, sent as the user message of a heartbeat run.
DEFAULT_HEARTBEAT_PROMPT: Final = (
    "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or "
    "repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK."
)
#: The first line of a heartbeat prompt built from periodic tasks.
HEARTBEAT_TASK_PROMPT_PREFIX: Final = (
    "Run the following periodic tasks (only those due based on their intervals):"
)
#: The closing instruction of a task heartbeat prompt.
HEARTBEAT_TASK_PROMPT_ACK: Final = "After completing all due tasks, reply HEARTBEAT_OK."
#: [L] The user text later OpenClaw versions store in the transcript for a heartbeat poll.
HEARTBEAT_TRANSCRIPT_PROMPT: Final = "[OpenClaw heartbeat poll]"


class HeartbeatTranscriptGuard:
    """Removes an acknowledged heartbeat exchange from the session file (heartbeat-runner.ts,
    ``pruneHeartbeatTranscript``).

    ``begin()`` records the file's byte size under the session's exclusive lock; after the
    run, ``finish(acknowledged)`` removes the exchange when the run was acknowledged and leaves
    the file untouched otherwise. As a context manager, ``begin()`` runs on entry and
    ``finish(guard.acknowledged)`` on a normal exit (an exception finishes unacknowledged)::

        with HeartbeatTranscriptGuard(session) as guard:
            reply = run_heartbeat(session)
            guard.acknowledge(reply)

    Which lines after the recorded size belong to the heartbeat exchange:

    - given a :class:`~clawctx.Session`: exactly the entries appended through that handle
      between ``begin()`` and ``finish()`` (matched by ``id`` and by content); all of them
      must be found, or nothing is removed;
    - given a path: by content, the first heartbeat-prompt user message (``filterHeartbeatPairs``'s
      test with ``heartbeat_prompt`` / ``transcript_prompt``) and its descendants through
      ``parentId`` (one child each, no user message) up to and including the first acknowledging
      assistant message.

    Every other line is kept byte for byte. If the exchange is all that follows the recorded
    size the file is truncated back to it; if other lines are interleaved the file is replaced
    atomically by the bytes before the recorded size plus the kept lines (writers that take the
    session lock wait, then append to the new file). Nothing is changed, and
    :attr:`report` says why, when the recorded size is not at a line boundary, the file
    shrank, was replaced or changed before the recorded size, or a kept line's ``parentId``
    names a removed entry. Nothing else (such as OpenClaw's session-store ``updatedAt``) is
    restored. A lock that cannot be taken in time (``lock_timeout`` seconds; ``fsync`` and
    ``lock_timeout`` are the guard's own, not the Session's) raises
    :class:`~clawctx.SessionLockError`.

    A Session handle keeps the removed entries in memory: after a removal the guard moves its
    leaf back to where it was at ``begin()``, so its next append continues from the pre-run
    history, but ``entries()`` and ``len()`` still list the removed entries. Call
    :meth:`reopen` (or ``Session.open``) for a handle that matches the file again.
    """

    def __init__(
        self,
        session_or_path: _core.Session | str | os.PathLike[str],
        *,
        heartbeat_prompt: str | None = DEFAULT_HEARTBEAT_PROMPT,
        transcript_prompt: bool = True,
        max_ack_chars: float | str | None = DEFAULT_HEARTBEAT_ACK_MAX_CHARS,
        lock_timeout: float = 10.0,
        fsync: bool = True,
    ) -> None:
        if isinstance(session_or_path, _core.Session):
            self.session: _core.Session | None = session_or_path
            path = session_or_path.path
            if path is None:
                raise ValueError("the session is in memory: there is no file to guard")
            self.path: str | os.PathLike[str] = path
        else:
            self.session = None
            self.path = session_or_path
        self.heartbeat_prompt = heartbeat_prompt
        self.transcript_prompt = transcript_prompt
        self.max_ack_chars = max_ack_chars
        self.lock_timeout = lock_timeout
        self.fsync = fsync
        #: Set by :meth:`acknowledge` (or directly); used by the context manager's exit.
        self.acknowledged = False
        #: What ``begin()`` recorded (``None`` before it, or when the file did not exist).
        self.mark: HeartbeatMark | None = None
        #: What the last ``finish()`` did (``None`` when it did not try: not acknowledged,
        #: or no file at ``begin()``).
        self.report: HeartbeatPruneReport | None = None
        self._active = False
        self._entry_count = 0
        self._leaf_id: str | None = None

    def begin(self) -> HeartbeatMark | None:
        """Records the file size before the heartbeat run (``None`` if the file does not
        exist: then nothing will be pruned)."""
        if self._active:
            raise RuntimeError("begin() was already called; call finish() first")
        if self.session is not None:
            self._entry_count = len(self.session)
            self._leaf_id = self.session.leaf_id
        try:
            self.mark = mark_heartbeat_transcript(self.path, lock_timeout=self.lock_timeout)
        except FileNotFoundError:
            self.mark = None
        self.acknowledged = False
        self.report = None
        self._active = True
        return self.mark

    def acknowledge(self, reply: str | None = None) -> bool:
        """Sets :attr:`acknowledged` from the run's reply text: whether it is a heartbeat
        acknowledgement (``strip_heartbeat_token(reply, mode="heartbeat").should_skip``; an
        empty reply counts, as upstream)."""
        self.acknowledged = strip_heartbeat_token(
            reply, mode="heartbeat", max_ack_chars=self.max_ack_chars
        ).should_skip
        return self.acknowledged

    def finish(self, acknowledged: bool) -> HeartbeatPruneReport | None:
        """Removes the heartbeat exchange if ``acknowledged`` (see the class docs). Returns the
        report, or ``None`` when nothing was attempted. If it raises (a lock timeout), the
        guard stays active and ``finish()`` can be called again."""
        if not self._active:
            raise RuntimeError("finish() without begin()")
        if not acknowledged or self.mark is None:
            self._active = False
            self.report = None
            return None
        if self.session is None:
            report = prune_heartbeat_transcript(
                self.mark,
                heartbeat_prompt=self.heartbeat_prompt,
                transcript_prompt=self.transcript_prompt,
                max_ack_chars=self.max_ack_chars,
                lock_timeout=self.lock_timeout,
                fsync=self.fsync,
            )
        else:
            report = prune_heartbeat_transcript(
                self.mark,
                entries=self._run_entries(self.session),
                lock_timeout=self.lock_timeout,
                fsync=self.fsync,
            )
            if report.pruned:
                if self._leaf_id is None:
                    self.session.reset_leaf()
                else:
                    self.session.branch(self._leaf_id)
        # Only now: after an error (a lock timeout) finish() can be called again.
        self._active = False
        self.report = report
        return report

    def _run_entries(self, session: _core.Session) -> list[dict[str, Any]]:
        """The entries the handle appended since ``begin()``. Usually a chain from the leaf
        back to the pre-run leaf (one dict built per entry); otherwise (the run branched) the
        tail of ``entries()``."""
        added = len(session) - self._entry_count
        if added <= 0:
            return []
        chain: list[dict[str, Any]] = []
        current = session.leaf_id
        while current is not None and current != self._leaf_id and len(chain) < added:
            entry = session.get_entry(current)
            if entry is None:
                break
            chain.append(entry)
            parent = entry.get("parentId")
            current = parent if isinstance(parent, str) else None
        if len(chain) == added and current == self._leaf_id:
            chain.reverse()
            return chain
        return session.entries()[self._entry_count :]

    def reopen(self, **options: Any) -> Session:
        """Opens the session file again (``Session.open(path, **options)``): a handle whose
        entries match the file after pruning."""
        return Session.open(self.path, **options)

    def __enter__(self) -> HeartbeatTranscriptGuard:
        self.begin()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.finish(self.acknowledged and exc_type is None)
