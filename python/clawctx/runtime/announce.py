"""Sub-agent completion announces (OpenClaw 2026.3.13 `src/agents/subagent-announce.ts`,
``runSubagentAnnounceFlow``).

When a sub-agent (or an isolated cron job) finishes, OpenClaw writes a ``[System Message]``
into the requester's session that quotes the child's last reply, a stats line and an
instruction telling the requester how to pass the result on. :func:`build_subagent_announce_message`
builds that text byte for byte (the ``[System Message]`` layout; 2026.3.13 already sends it as
an internal event); the smaller helpers build its parts.
:func:`choose_announce_delivery` is the delivery decision of ``maybeQueueSubagentAnnounce`` (steer
into the running turn, queue behind it, or send directly).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Final, Literal

from clawctx.prompt.untrusted import neutralize_untrusted_text
from clawctx.runtime.queues import QueueMode
from clawctx.runtime.replies import SILENT_REPLY_TOKEN

__all__ = [
    "ANNOUNCE_NO_OUTPUT",
    "AnnounceDelivery",
    "SubagentOutcome",
    "build_announce_reply_instruction",
    "build_stats_line",
    "build_status_label",
    "build_subagent_announce_message",
    "choose_announce_delivery",
    "format_duration_short",
    "format_token_count",
    "resolve_announce_task_label",
]

#: runSubagentAnnounceFlow (statusLabel): how a child run ended.
SubagentOutcome = Literal["ok", "timeout", "error", "unknown"]
#: maybeQueueSubagentAnnounce: where an announce went.
AnnounceDelivery = Literal["steered", "queued", "direct"]

#: runSubagentAnnounceFlow: the findings shown when the child produced no reply.
ANNOUNCE_NO_OUTPUT: Final = "(no output)"

_PRIVACY_NOTE: Final = (
    "Keep this internal context private (don't mention system/log/stats/session details or "
    "announce type)"
)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _js_round(value: float) -> int:
    # JavaScript Math.round: halves go up (towards +inf), unlike Python's round().
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def _js_to_fixed_1(value: float) -> str:
    # Number.prototype.toFixed(1) rounds the exact binary value half up; Python's format()
    # rounds half to even (1.25 -> "1.3" in JS, "1.2" in Python).
    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def format_duration_short(ms: float | None) -> str:
    """A run time for the stats line (`src/shared/subagents-format.ts`,
    ``formatDurationCompact``).

    Unknown, zero, negative or non-finite → ``n/a``; else seconds rounded half up, shown as
    ``<h>h<m>m`` from one hour, ``<m>m<s>s`` from one minute, otherwise ``<s>s``.
    """
    if not _is_number(ms) or ms is None or not math.isfinite(ms) or ms <= 0:
        return "n/a"
    total_seconds = _js_round(ms / 1000)
    hours, rest = divmod(total_seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours > 0:
        return f"{hours}h{minutes}m"
    if minutes > 0:
        return f"{minutes}m{seconds}s"
    return f"{seconds}s"


def format_token_count(n: float | None, *, promote_rounded_thousands: bool = False) -> str:
    """A token count for the stats line (subagents-format.ts, ``formatTokenCount``).

    Not a number, zero or negative → ``0``; from one million one decimal and ``m``; from one
    thousand one decimal and ``k``; otherwise the integer rounded half up. Decimals round like
    JavaScript's ``toFixed(1)`` (``1250`` → ``1.3k``). Baseline keeps ``999999`` as
    ``1000.0k``; ``promote_rounded_thousands=True`` gives the **[later]** ``1.0m``.
    """
    if not _is_number(n) or n is None or not math.isfinite(n) or n <= 0:
        return "0"
    if n >= 1_000_000:
        return f"{_js_to_fixed_1(n / 1_000_000)}m"
    if n >= 1_000:
        thousands = _js_to_fixed_1(n / 1_000)
        if promote_rounded_thousands and float(thousands) >= 1_000:
            return f"{_js_to_fixed_1(n / 1_000_000)}m"
        return f"{thousands}k"
    return str(_js_round(n))


def build_stats_line(
    *,
    runtime_ms: float | None,
    input_tokens: float | None,
    output_tokens: float | None,
    total_tokens: float | None = None,
) -> str:
    """The announce's ``Stats:`` line (``buildCompactAnnounceStatsLine``).

    Parts joined with `` • ``: ``runtime <dur>``, ``tokens <in+out> (in <in> / out <out>)``,
    and ``prompt/cache <total>`` only when the session's total exceeds in+out. Missing token
    counts are 0, as upstream reads them from the child's session entry.
    """
    input_count = input_tokens if _is_number(input_tokens) and input_tokens is not None else 0
    output_count = output_tokens if _is_number(output_tokens) and output_tokens is not None else 0
    io_total = input_count + output_count
    parts = [
        f"runtime {format_duration_short(runtime_ms)}",
        f"tokens {format_token_count(io_total)} "
        f"(in {format_token_count(input_count)} / out {format_token_count(output_count)})",
    ]
    if _is_number(total_tokens) and total_tokens is not None and total_tokens > io_total:
        parts.append(f"prompt/cache {format_token_count(total_tokens)}")
    return "Stats: " + " \u2022 ".join(parts)


def build_status_label(outcome: SubagentOutcome | str, error: str | None = None) -> str:
    """How the announce header says the run ended (``runSubagentAnnounceFlow``'s
    ``statusLabel``).

    ``ok`` → ``completed successfully``; ``timeout`` → ``timed out``; ``error`` →
    ``failed: <error>`` (``unknown error`` when the error is empty); anything else →
    ``finished with unknown status``.
    """
    if outcome == "ok":
        return "completed successfully"
    if outcome == "timeout":
        return "timed out"
    if outcome == "error":
        return f"failed: {error or 'unknown error'}"
    return "finished with unknown status"


def resolve_announce_task_label(*, label: str | None = None, task: str | None = None) -> str:
    """The quoted task name of the announce header (``runSubagentAnnounceFlow``): the spawn label,
    else the task text, else ``task`` (empty strings fall through). Upstream also uses it as the
    announce's queue summary line (``QueuedMessage.summary_line``)."""
    return label or task or "task"


def build_announce_reply_instruction(
    *,
    announce_type: str = "subagent task",
    active_descendant_runs: int = 0,
    requester_is_subagent: bool = False,
    short_user_delivery: bool = False,
) -> str:
    """The last paragraph of an announce: what the requester should do with it
    (``buildAnnounceReplyInstruction``).

    In order: other sub-agent runs of the requester still active → wait-or-answer note
    (``run``/``runs``); the requester is itself a sub-agent → write an internal update or reply
    ``NO_REPLY``; otherwise → rewrite the result for the user. ``short_user_delivery=True``
    returns the **[earlier]** user-delivery text (it ends after "…or announce type)."), which
    upstream also uses for completion-mode announces; it takes precedence like there.
    """
    if short_user_delivery:
        return (
            f"A completed {announce_type} is ready for user delivery. Convert the result above "
            f"into your normal assistant voice and send that user-facing update now. "
            f"{_PRIVACY_NOTE}."
        )
    if active_descendant_runs > 0:
        runs = "run" if active_descendant_runs == 1 else "runs"
        return (
            f"There are still {active_descendant_runs} active subagent {runs} for this session. "
            "If they are part of the same workflow, wait for the remaining results before "
            "sending a user update. If they are unrelated, respond normally using only the "
            "result above."
        )
    if requester_is_subagent:
        return (
            "Convert this completion into a concise internal orchestration update for your "
            f"parent agent in your own words. {_PRIVACY_NOTE}. If this result is duplicate or "
            f"no update is needed, reply ONLY: {SILENT_REPLY_TOKEN}."
        )
    return (
        f"A completed {announce_type} is ready for user delivery. Convert the result above into "
        "your normal assistant voice and send that user-facing update now. "
        f"{_PRIVACY_NOTE}, and do not copy the system message verbatim. Reply ONLY: "
        f"{SILENT_REPLY_TOKEN} if this exact result was already delivered to the user in this "
        "same turn."
    )


def build_subagent_announce_message(
    *,
    child_session_id: str | None,
    outcome: SubagentOutcome | str,
    error: str | None = None,
    task: str | None = None,
    label: str | None = None,
    findings: str | None = None,
    announce_type: str = "subagent task",
    stats_line: str | None = None,
    active_descendant_runs: int = 0,
    requester_is_subagent: bool = False,
    short_user_delivery: bool = False,
    neutralize_findings: bool = False,
) -> str:
    """The announce trigger message sent to the requester session (``runSubagentAnnounceFlow``,
    baseline ``[System Message]`` text).

    Lines joined with ``\\n``::

        [System Message] [sessionId: <id>] A <announce_type> "<task label>" just <status>.

        Result:
        <findings>

        <stats line>

        <reply instruction>

    ``<id>`` is ``unknown`` without a child session id; the task label is
    :func:`resolve_announce_task_label`; findings default to ``(no output)``. Without
    ``stats_line`` the line reads as upstream's does when the child recorded no usage:
    ``Stats: runtime n/a • tokens 0 (in 0 / out 0)``. ``neutralize_findings=True`` passes the
    child's reply through :func:`~clawctx.prompt.untrusted.neutralize_untrusted_text` first (not
    baseline: upstream quotes it as is).
    """
    session_id = child_session_id or "unknown"
    task_label = resolve_announce_task_label(label=label, task=task)
    status = build_status_label(outcome, error)
    result = findings or ANNOUNCE_NO_OUTPUT
    if neutralize_findings:
        result = neutralize_untrusted_text(result)
    stats = (
        stats_line
        if stats_line is not None
        else build_stats_line(runtime_ms=None, input_tokens=None, output_tokens=None)
    )
    instruction = build_announce_reply_instruction(
        announce_type=announce_type,
        active_descendant_runs=active_descendant_runs,
        requester_is_subagent=requester_is_subagent,
        short_user_delivery=short_user_delivery,
    )
    header = (
        f'[System Message] [sessionId: {session_id}] A {announce_type} "{task_label}" '
        f"just {status}."
    )
    return "\n".join([header, "", "Result:", result, "", stats, "", instruction])


def choose_announce_delivery(
    mode: QueueMode,
    *,
    requester_run_active: bool,
    try_steer: Callable[[], bool] | None = None,
) -> AnnounceDelivery:
    """Where an announce goes, given the requester's queue mode (``maybeQueueSubagentAnnounce``).

    ``steer``/``steer-backlog``: ``try_steer()`` injects the message into the running turn;
    when it returns True the result is ``steered``. Otherwise, if the requester's run is active
    (every mode queues then, ``steer`` included) → ``queued`` (enqueue it in the announce
    queue, e.g. a :class:`~clawctx.runtime.lane.SessionLane` with announce titles). Otherwise
    ``direct``: start a requester turn with the message (``deliver`` unless the requester is a
    sub-agent).
    """
    if mode in ("steer", "steer-backlog") and try_steer is not None and try_steer():
        return "steered"
    if requester_run_active:
        return "queued"
    return "direct"
