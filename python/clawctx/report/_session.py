"""The numbers of a one-session report, gathered as arrays and bounded lists.

Everything the page shows is computed here, before any chart or HTML exists, so tests can
check the numbers against the session and the renderer only formats them.

The entries are read once through ``Session.entries()`` (one dict per entry: about 3 s of CPU
for a 100 MB session); every later step works on numpy arrays indexed by entry. The columnar
per-message statistics of the scan work (``message_columns``) take a ``Transcript``; once a
session exposes its entry tree and all its messages that way, ``session_stats`` fills the same
arrays from it and nothing else changes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from clawctx import _core
from clawctx.history import SessionFormatError, detect_transcript_format, read_transcript
from clawctx.history.session import Session

if TYPE_CHECKING:
    from clawctx.engine.cache_report import CacheReport

#: OpenClaw's default context window (``DEFAULT_CONTEXT_TOKENS``, OpenClaw 2026.3.13
#: `src/agents/defaults.ts`): the line the context chart is drawn against unless the caller
#: knows the model's window.
DEFAULT_CONTEXT_WINDOW = 200_000

#: Block types that carry a tool call in assistant content (pi's ``toolCall`` and the
#: provider-shaped variants real OpenClaw files contain), as the Rust core defines them.
_TOOL_CALL_BLOCKS = _core._TOOL_CALL_TYPES

#: Assistant stop reasons whose ``usage`` does not describe a context the model read in full:
#: pi skips them when it looks for the last usage (pi-mono 0.58.3
#: `packages/coding-agent/src/core/compaction/compaction.ts`, ``getAssistantUsage``).
_UNUSABLE_STOP_REASONS = frozenset({"aborted", "error"})

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ContextSeries:
    """The context size at each assistant turn on the leaf path (the conversation as it stands).

    ``turns`` numbers the assistant messages on the path 1..N. ``estimated`` is the chars/4
    estimate of the context the model saw at that turn (the compaction summary and kept
    messages after a compaction, as pi builds it); ``recorded`` is the provider's ``usage``
    (``totalTokens``, or input + output + cache) where the message has a usable one, NaN
    elsewhere. ``compactions`` and ``branch_points`` are turn positions (``k + 0.5`` is between
    turns ``k`` and ``k + 1``).
    """

    turns: IntArray
    estimated: IntArray
    recorded: FloatArray
    compactions: FloatArray
    branch_points: FloatArray
    #: How many turns the series had before :meth:`downsampled` (equal to ``len(turns)`` when
    #: nothing was dropped).
    total_turns: int

    @property
    def recorded_turns(self) -> int:
        """Turns with a recorded ``usage``."""
        return int(np.count_nonzero(~np.isnan(self.recorded)))

    @property
    def peak(self) -> int:
        """The largest context size (recorded where present, else estimated)."""
        if not len(self.turns):
            return 0
        best = np.where(np.isnan(self.recorded), self.estimated, self.recorded)
        return int(np.max(best))

    def downsampled(self, max_points: int) -> ContextSeries:
        """At most ``max_points`` turns, keeping the highest and lowest turn of each bucket of
        both series, so peaks near the window and drops after a compaction survive."""
        n = len(self.turns)
        if n <= max_points:
            return self
        buckets = max(1, max_points // 4)
        bucket = (np.arange(n, dtype=np.int64) * buckets) // n
        keep = [np.array([0, n - 1], dtype=np.int64)]
        recorded = self.recorded
        present = ~np.isnan(recorded)
        for values, mask in (
            (self.estimated.astype(np.float64), np.ones(n, dtype=bool)),
            (recorded, present),
        ):
            if not mask.any():
                continue
            for sign in (1.0, -1.0):
                key = np.where(mask, sign * values, -np.inf)
                # Per bucket, the index of the largest key: sort by (bucket, key), take each
                # bucket's last row.
                order = np.lexsort((key, bucket))
                last = np.flatnonzero(np.diff(bucket[order], append=buckets))
                picked = order[last]
                keep.append(picked[mask[picked]])
        index = np.unique(np.concatenate(keep))
        return ContextSeries(
            turns=self.turns[index],
            estimated=self.estimated[index],
            recorded=self.recorded[index],
            compactions=_thin(self.compactions, max_points // 4),
            branch_points=_thin(self.branch_points, max_points // 4),
            total_turns=self.total_turns,
        )


def _thin(positions: FloatArray, limit: int) -> FloatArray:
    """At most ``limit`` evenly spaced positions (markers beyond that would be one smear)."""
    if len(positions) <= limit:
        return positions
    index = np.linspace(0, len(positions) - 1, num=max(limit, 1)).round().astype(np.int64)
    thinned: FloatArray = positions[np.unique(index)]
    return thinned


@dataclass(frozen=True)
class ToolUsage:
    """One tool's results: how many, and their estimated tokens."""

    name: str
    results: int
    tokens: int


@dataclass(frozen=True)
class ToolResult:
    """One tool result (a row of the largest-results table)."""

    tool: str
    tokens: int
    entry_id: str | None
    timestamp: str | None
    is_error: bool
    on_leaf_path: bool
    preview: str


@dataclass(frozen=True)
class Compaction:
    """A compaction entry."""

    entry_id: str | None
    timestamp: str | None
    tokens_before: int | None
    summary_tokens: int
    #: Its position on the leaf path in turns (``None``: on an abandoned branch).
    turn: float | None


@dataclass(frozen=True)
class Reset:
    """An OpenClaw ``reset`` entry (``/new``, ``/reset``, an idle or daily reset): a context
    boundary like a compaction, without a summary."""

    entry_id: str | None
    timestamp: str | None
    #: ``new``, ``reset``, ``idle``, ``daily`` or ``cron-stale`` as OpenClaw writes it.
    reason: str | None
    #: The entry the context keeps from (``None``: only what follows the reset).
    first_kept_entry_id: str | None
    #: Its position on the leaf path in turns (``None``: on an abandoned branch).
    turn: float | None


@dataclass(frozen=True)
class BranchPoint:
    """An entry with more than one child: the conversation was rewound to it."""

    entry_id: str | None
    timestamp: str | None
    children: int
    turn: float | None


@dataclass(frozen=True)
class UnpairedCall:
    """A tool call with no result anywhere in the file, or a result with no call."""

    tool_call_id: str
    tool: str | None
    entry_id: str | None
    timestamp: str | None


@dataclass(frozen=True)
class DamagedLine:
    """A line the loader could not take as it was (what ``clawctx repair`` fixes)."""

    line: int
    action: str
    reason: str
    records: int


@dataclass(frozen=True)
class SessionStats:
    """Everything a session report shows, gathered by :func:`session_stats`."""

    path: Path
    size_bytes: int
    entries: int
    messages: int
    session_id: str | None
    name: str | None
    context_window: int
    #: ``provider/model`` → assistant messages that name it.
    models: Mapping[str, int]
    first_activity: str | None
    last_activity: str | None
    series: ContextSeries
    #: Estimated tokens (chars/4) and message counts by role, every message in the file.
    tokens_by_role: Mapping[str, int]
    messages_by_role: Mapping[str, int]
    #: The leaf context now (what the next request would carry before pruning).
    leaf_context_tokens: int
    tool_calls: int
    tool_results: int
    #: By estimated tokens, largest first.
    tokens_by_tool: Sequence[ToolUsage]
    #: The largest tool results, largest first (at most ``top`` of them).
    largest_tool_results: Sequence[ToolResult]
    compactions: Sequence[Compaction]
    branch_points: Sequence[BranchPoint]
    #: Entries on no path to the leaf (abandoned side branches).
    abandoned_entries: int
    damaged_lines: Sequence[DamagedLine]
    unpaired_calls: Sequence[UnpairedCall]
    unpaired_results: Sequence[UnpairedCall]
    #: What the report was built from (shown in the page footer).
    notes: Sequence[str] = field(default_factory=tuple)
    #: OpenClaw ``reset`` entries, in file order.
    resets: Sequence[Reset] = field(default_factory=tuple)
    #: The prompt cache turn by turn (``clawctx.engine.cache_report``): hit rates from the
    #: recorded usage, and the breaks when ``session_stats(cache_breaks=True)``; ``None`` for a
    #: file that is not a pi session (Claude Code, Codex).
    cache: CacheReport | None = None
    #: Whether ``cache`` holds the breaks (each turn's request rebuilt).
    cache_breaks: bool = False

    @property
    def estimated_tokens(self) -> int:
        return sum(self.tokens_by_role.values())


def _text_preview(message: Mapping[str, Any], width: int = 160) -> str:
    content = message.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                else:
                    parts.append(f"[{block.get('type')}]")
            if sum(map(len, parts)) > width:
                break
    text = " ".join(" ".join(parts).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _open_any_format(path: Path) -> Session:
    """The pi session at ``path``, or a Claude Code session / Codex rollout's main thread as an
    in-memory pi session (one message entry per message, in order; no branches or compaction
    entries, which those formats do not carry in pi's shape). Nothing is written."""
    try:
        return Session.open(path, read_only=True)
    except SessionFormatError:
        try:
            fmt = detect_transcript_format(path)
        except (OSError, ValueError):
            fmt = "pi"
        if fmt == "pi":
            raise
    imported = read_transcript(path)
    session = Session.in_memory(cwd=imported.cwd, session_id=imported.session_id)
    for message in imported.messages:
        session.append_message(message)
    return session


def session_stats(
    path: str | os.PathLike[str],
    *,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    top: int = 20,
    cache_breaks: bool = False,
) -> SessionStats:
    """Reads ``path`` read-only and gathers the numbers of its report.

    ``path`` may also be a Claude Code session or a Codex rollout: its main thread is reported
    as a linear session (those formats have no pi compaction or branch entries).
    Raises what :meth:`Session.open` raises for a file that is none of these (``OSError``,
    :class:`~clawctx.history.SessionFormatError`).

    ``cache_breaks=True`` also rebuilds each assistant turn's request to find where the prompt
    cache broke (:func:`clawctx.engine.cache_report`; about a second per 1,000 turns); the
    per-turn hit rates are always read from the recorded usage.
    """
    if context_window <= 0:
        raise ValueError(
            f"context_window must be a positive number of tokens, got {context_window}"
        )
    if top <= 0:
        raise ValueError(f"top must be positive, got {top}")
    path = Path(path)
    session = _open_any_format(path)
    entries = session.entries()
    n = len(entries)

    ids: list[str | None] = [None] * n
    parents: list[str | None] = [None] * n
    stamps: list[str | None] = [None] * n
    message_rows: list[int] = []
    messages: list[Mapping[str, Any]] = []
    # Compaction / branch summary / custom message entries become messages in the context pi
    # builds; their tokens count where they sit on the path.
    summary_tokens = np.zeros(n, dtype=np.int64)
    for i, entry in enumerate(entries):
        ids[i] = _str(entry.get("id"))
        parents[i] = _str(entry.get("parentId"))
        stamps[i] = _str(entry.get("timestamp"))
        kind = entry.get("type")
        if kind == "message" and isinstance(entry.get("message"), Mapping):
            message_rows.append(i)
            messages.append(entry["message"])
        elif kind in ("compaction", "branch_summary"):
            role = "compactionSummary" if kind == "compaction" else "branchSummary"
            summary = entry.get("summary")
            summary_tokens[i] = _core.estimate_tokens(
                {"role": role, "summary": summary if isinstance(summary, str) else ""}
            )
        elif kind == "custom_message":
            summary_tokens[i] = _core.estimate_tokens(
                {"role": "custom", "content": entry.get("content", "")}
            )

    transcript = _core.Transcript.from_list(messages)
    message_tokens = np.asarray(transcript.token_counts(), dtype=np.int64)
    roles = [r if r is not None else "(no role)" for r in transcript.roles()]
    entry_tokens = summary_tokens.copy()
    rows = np.asarray(message_rows, dtype=np.int64)
    if len(rows):
        entry_tokens[rows] = message_tokens
    # Compaction entries enter the context through the summary, not at their own position.
    is_compaction = np.array([e.get("type") == "compaction" for e in entries], dtype=bool)
    entry_tokens[is_compaction] = 0

    role_array = np.array(roles, dtype=object)
    tokens_by_role: dict[str, int] = {}
    messages_by_role: dict[str, int] = {}
    for role in sorted(set(roles)):
        mask = role_array == role
        tokens_by_role[role] = int(message_tokens[mask].sum())
        messages_by_role[role] = int(mask.sum())

    # The tree: parent index of each entry, children counts, the leaf path.
    index_of = {entry_id: i for i, entry_id in enumerate(ids) if entry_id is not None}
    parent_index = np.array(
        [index_of.get(p, -1) if p is not None else -1 for p in parents], dtype=np.int64
    )
    children = np.bincount(parent_index[parent_index >= 0], minlength=n)
    leaf = index_of.get(session.leaf_id) if session.leaf_id is not None else None
    path_rows: list[int] = []
    seen: set[int] = set()
    node = leaf if leaf is not None else -1
    while node >= 0 and node not in seen:
        seen.add(node)
        path_rows.append(node)
        node = int(parent_index[node])
    path_index = np.asarray(path_rows[::-1], dtype=np.int64)
    on_path = np.zeros(n, dtype=bool)
    on_path[path_index] = True

    # Per message: usage, stop reason, tool calls.
    usage = np.full(n, np.nan, dtype=np.float64)
    is_assistant = np.zeros(n, dtype=bool)
    call_rows: dict[str, tuple[int, str | None]] = {}
    result_rows: dict[str, int] = {}
    result_tool: list[tuple[int, str]] = []
    models: dict[str, int] = {}
    for row, message in zip(message_rows, messages, strict=True):
        kind = message.get("role")
        if kind == "assistant":
            is_assistant[row] = True
            model = f"{message.get('provider') or '?'}/{message.get('model') or '?'}"
            models[model] = models.get(model, 0) + 1
            recorded = message.get("usage")
            if (
                isinstance(recorded, Mapping)
                and message.get("stopReason") not in _UNUSABLE_STOP_REASONS
            ):
                total = _core.usage_tokens(recorded)
                if total > 0:
                    usage[row] = float(total)
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, Mapping) and block.get("type") in _TOOL_CALL_BLOCKS:
                        call_id = _str(block.get("id"))
                        if call_id is not None:
                            call_rows.setdefault(call_id, (row, _str(block.get("name"))))
        elif kind == "toolResult":
            name = _str(message.get("toolName")) or "(unnamed)"
            result_tool.append((row, name))
            call_id = _str(message.get("toolCallId")) or _str(message.get("toolUseId"))
            if call_id is not None:
                result_rows.setdefault(call_id, row)

    series = _context_series(
        entries, ids, path_index, entry_tokens, summary_tokens, usage, is_assistant, children
    )

    # Tools: tokens by tool name, the largest results.
    result_index = np.asarray([r for r, _ in result_tool], dtype=np.int64)
    result_names = np.array([name for _, name in result_tool], dtype=object)
    result_tokens = entry_tokens[result_index] if len(result_index) else np.zeros(0, np.int64)
    by_tool: list[ToolUsage] = []
    for name in set(result_names.tolist()):
        mask = result_names == name
        by_tool.append(ToolUsage(name, int(mask.sum()), int(result_tokens[mask].sum())))
    by_tool.sort(key=lambda t: (-t.tokens, t.name))
    largest: list[ToolResult] = []
    if len(result_index):
        k = min(top, len(result_index))
        biggest = np.argpartition(-result_tokens, k - 1)[:k]
        biggest = biggest[np.lexsort((biggest, -result_tokens[biggest]))]
        for i in biggest.tolist():
            row = int(result_index[i])
            message = entries[row]["message"]
            largest.append(
                ToolResult(
                    tool=str(result_names[i]),
                    tokens=int(result_tokens[i]),
                    entry_id=ids[row],
                    timestamp=stamps[row],
                    is_error=message.get("isError") is True,
                    on_leaf_path=bool(on_path[row]),
                    preview=_text_preview(message),
                )
            )

    turn_of = _turn_positions(path_index, is_assistant, n)
    compactions = [
        Compaction(
            entry_id=ids[i],
            timestamp=stamps[i],
            tokens_before=entries[i].get("tokensBefore")
            if isinstance(entries[i].get("tokensBefore"), int)
            else None,
            summary_tokens=int(summary_tokens[i]),
            turn=_turn(turn_of, i),
        )
        for i in np.flatnonzero(is_compaction).tolist()
    ]
    resets = [
        Reset(
            entry_id=ids[i],
            timestamp=stamps[i],
            reason=_str(entries[i].get("reason")),
            first_kept_entry_id=_str(entries[i].get("firstKeptEntryId")),
            turn=_turn(turn_of, i),
        )
        for i, entry in enumerate(entries)
        if entry.get("type") == "reset"
    ]
    branch_points = [
        BranchPoint(
            entry_id=ids[i],
            timestamp=stamps[i],
            children=int(children[i]),
            turn=_turn(turn_of, i),
        )
        for i in np.flatnonzero(children > 1).tolist()
    ]
    unpaired_calls = [
        UnpairedCall(call_id, tool, ids[row], stamps[row])
        for call_id, (row, tool) in call_rows.items()
        if call_id not in result_rows
    ]
    unpaired_results = [
        UnpairedCall(call_id, _str(entries[row]["message"].get("toolName")), ids[row], stamps[row])
        for call_id, row in result_rows.items()
        if call_id not in call_rows
    ]
    valid_stamps = [s for s in stamps if s is not None]
    context = session.context()
    return SessionStats(
        path=path,
        size_bytes=path.stat().st_size,
        entries=n,
        messages=len(messages),
        session_id=session.session_id,
        name=session.name,
        context_window=context_window,
        models=dict(sorted(models.items(), key=lambda kv: (-kv[1], kv[0]))),
        first_activity=min(valid_stamps) if valid_stamps else None,
        last_activity=max(valid_stamps) if valid_stamps else None,
        series=series,
        tokens_by_role=tokens_by_role,
        messages_by_role=messages_by_role,
        leaf_context_tokens=int(np.asarray(context.messages.token_counts()).sum()),
        tool_calls=len(call_rows),
        tool_results=len(result_tool),
        tokens_by_tool=by_tool,
        largest_tool_results=largest,
        compactions=compactions,
        branch_points=branch_points,
        abandoned_entries=int(n - len(path_index)),
        damaged_lines=[
            DamagedLine(s.line, s.action, s.reason, s.records) for s in session.skipped_lines
        ],
        unpaired_calls=unpaired_calls,
        unpaired_results=unpaired_results,
        resets=resets,
        cache=_cache(session, cache_breaks),
        cache_breaks=cache_breaks,
    )


def _cache(session: Session, breaks: bool) -> CacheReport | None:
    # Imported here: the engine's request assembly only when a page is built.
    from clawctx.engine.cache_report import cache_report

    if session.path is None:  # a Claude Code or Codex thread read into memory
        return None
    return cache_report(session, rebuild=breaks)


def _turn_positions(
    path_index: IntArray, is_assistant: npt.NDArray[np.bool_], n: int
) -> FloatArray:
    """For each entry on the leaf path, its position in turns: the number of assistant turns
    before it, plus 0.5 (an entry sits between two turns); NaN off the path."""
    position = np.full(n, np.nan, dtype=np.float64)
    if len(path_index):
        on_path_assistant = is_assistant[path_index]
        before: IntArray = np.cumsum(on_path_assistant) - on_path_assistant
        position[path_index] = before + 0.5
    return position


def _turn(turn_of: FloatArray, row: int) -> float | None:
    value = float(turn_of[row])
    return None if np.isnan(value) else value


def _context_series(
    entries: Sequence[Mapping[str, Any]],
    ids: Sequence[str | None],
    path_index: IntArray,
    entry_tokens: IntArray,
    summary_tokens: IntArray,
    usage: FloatArray,
    is_assistant: npt.NDArray[np.bool_],
    children: IntArray,
) -> ContextSeries:
    """The context at each assistant turn on the leaf path, as pi-mono 0.58.3
    `packages/coding-agent/src/core/session-manager.ts` (``buildSessionContext``) would build
    it: after a compaction, its summary plus the entries from ``firstKeptEntryId`` on. An
    OpenClaw ``reset`` entry is the same boundary without a summary (the latest of the two
    wins; OpenClaw `docs/reference/session-management-compaction.md`)."""
    m = len(path_index)
    tokens = entry_tokens[path_index] if m else np.zeros(0, np.int64)
    cumulative = np.concatenate(([0], np.cumsum(tokens)))
    # start[p]: the path position the context starts at; base[p]: the summary tokens before it.
    start = np.zeros(m, dtype=np.int64)
    base = np.zeros(m, dtype=np.int64)
    marked = np.full(m, -1, dtype=np.int64)
    position_of = {ids[row]: p for p, row in enumerate(path_index.tolist()) if ids[row] is not None}
    compaction_at: list[int] = []
    for p, row in enumerate(path_index.tolist()):
        entry = entries[row]
        kind = entry.get("type")
        if kind not in ("compaction", "reset"):
            continue
        if kind == "compaction":
            compaction_at.append(p)
        kept_id = _str(entry.get("firstKeptEntryId"))
        kept = position_of.get(kept_id) if kept_id is not None else None
        start[p] = kept if kept is not None and kept <= p else p
        base[p] = summary_tokens[row]
        marked[p] = p
    # Forward-fill the latest compaction's start and summary along the path.
    latest = np.maximum.accumulate(marked) if m else marked
    has = latest >= 0
    start = np.where(has, start[np.maximum(latest, 0)], 0)
    base = np.where(has, base[np.maximum(latest, 0)], 0)
    estimate = base + cumulative[1:] - cumulative[start]
    assistant_positions = np.flatnonzero(is_assistant[path_index]) if m else np.zeros(0, np.int64)
    rows = path_index[assistant_positions]
    turn_before = (
        np.cumsum(is_assistant[path_index]) - is_assistant[path_index]
        if m
        else np.zeros(0, np.int64)
    )
    branch_positions = np.flatnonzero(children[path_index] > 1) if m else np.zeros(0, np.int64)
    return ContextSeries(
        turns=np.arange(1, len(rows) + 1, dtype=np.int64),
        estimated=estimate[assistant_positions].astype(np.int64),
        recorded=usage[rows],
        compactions=turn_before[np.asarray(compaction_at, dtype=np.int64)].astype(np.float64) + 0.5,
        branch_points=turn_before[branch_positions].astype(np.float64) + 0.5,
        total_turns=len(rows),
    )
